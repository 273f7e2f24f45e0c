package tune

import (
	"fmt"
	"math"

	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
)

// AlgoEnable is NCCL's algoEnable matrix: 1 enabled, 0 disabled, per
// function and algorithm.
type AlgoEnable [NumFuncs][NumAlgorithms]int

// ProtoEnable is NCCL's protoEnable matrix: 1 enabled, 0 disabled and 2
// "decide automatically" (the default for LL128), per function and protocol.
type ProtoEnable [NumFuncs][NumProtocols]int

// DefaultAlgoEnable enables every algorithm for every function
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/tuning.cc#L444-L451).
func DefaultAlgoEnable() AlgoEnable {
	var m AlgoEnable
	for f := range m {
		for a := range m[f] {
			m[f][a] = 1
		}
	}
	return m
}

// DefaultProtoEnable enables LL and Simple and leaves LL128 on "auto" (2).
func DefaultProtoEnable() ProtoEnable {
	var m ProtoEnable
	for f := range m {
		m[f] = [NumProtocols]int{1, 2, 1}
	}
	return m
}

// ParseNCCLAlgo applies an NCCL_ALGO value to the default matrix with the
// release's grammar (see ncclenv.ParseList): for example "^Tree",
// "ring,tree" or "ring;allreduce:tree,ring".
func ParseNCCLAlgo(value string) (AlgoEnable, error) {
	m := DefaultAlgoEnable()
	rows := make([][]int, NumFuncs)
	for f := range rows {
		rows[f] = m[f][:]
	}
	if err := ncclenv.ParseList(value, funcNames(), algoNames(), rows); err != nil {
		return AlgoEnable{}, fmt.Errorf("NCCL_ALGO: %w", err)
	}
	return m, nil
}

// ParseNCCLProto applies an NCCL_PROTO value to the default matrix. Any
// entry that names a function row sets its LL128 cell to 0 or 1, which
// bypasses the LL128 auto rule for that row, as in the release.
func ParseNCCLProto(value string) (ProtoEnable, error) {
	m := DefaultProtoEnable()
	rows := make([][]int, NumFuncs)
	for f := range rows {
		rows[f] = m[f][:]
	}
	if err := ncclenv.ParseList(value, funcNames(), protoNames(), rows); err != nil {
		return ProtoEnable{}, fmt.Errorf("NCCL_PROTO: %w", err)
	}
	return m, nil
}

// Unset marks an integer option the user did not give (NCCL's -2).
const Unset = -2

// Options are the environment settings the model reads. Build them with
// DefaultOptions or OptionsFromEnv.
type Options struct {
	// Algo and Proto are the raw NCCL_ALGO / NCCL_PROTO values; AlgoSet and
	// ProtoSet say whether the variables exist (even empty).
	Algo, Proto       string
	AlgoSet, ProtoSet bool

	NThreads      int64 // NCCL_NTHREADS, Unset by default
	LL128NThreads int64 // NCCL_LL128_NTHREADS, Unset by default
	LL128C2C      int64 // NCCL_LL128_C2C, 1 by default
	PatEnable     int64 // NCCL_PAT_ENABLE, 2 (auto) by default
	NetOverhead   int64 // NCCL_NET_OVERHEAD in ns, Unset by default

	// ThreadThresholds are the six values of NCCL_THREAD_THRESHOLDS (Tree
	// LL/LL128/Simple, Ring LL/LL128/Simple); -2 keeps the default.
	ThreadThresholds    [6]int64
	ThreadThresholdsSet bool

	// MinNChannels and MaxNChannels are ncclMinNchannels() and
	// ncclMaxNchannels(): NCCL_MIN/MAX_NCHANNELS, or the deprecated
	// NCCL_MIN/MAX_NRINGS, clamped.
	MinNChannels, MaxNChannels int
	// MinCTAs and MaxCTAs are config.minCTAs/maxCTAs after NCCL_MIN_CTAS and
	// NCCL_MAX_CTAS (defaults 1 and 64).
	MinCTAs, MaxCTAs int
	// NVLSCTAs is config.nvlsCTAs (NCCL_NVLS_NCHANNELS) when NVLSCTAsSet.
	NVLSCTAs    int
	NVLSCTAsSet bool
	// UnpackDoubleNChannels is NCCL_UNPACK_DOUBLE_NCHANNELS (default 1).
	UnpackDoubleNChannels int64

	// Constants replaces the default tables, as a tuner plugin may; nil
	// means DefaultConstants.
	Constants *Constants
}

// DefaultOptions returns the options of an empty environment.
func DefaultOptions() Options {
	return Options{
		NThreads: Unset, LL128NThreads: Unset, LL128C2C: 1, PatEnable: 2, NetOverhead: Unset,
		ThreadThresholds: [6]int64{-2, -2, -2, -2, -2, -2},
		MinNChannels:     0, MaxNChannels: MaxChannels,
		MinCTAs: 1, MaxCTAs: MaxChannels,
		UnpackDoubleNChannels: 1,
	}
}

// configUndefInt is NCCL_CONFIG_UNDEF_INT (INT_MIN), the default of the
// *_CTAS and NVLS_NCHANNELS parameters.
const configUndefInt = math.MinInt32

// OptionsFromEnv reads the variables the model uses with NCCL's own
// parsing: integers through strtoll (a malformed value becomes what strtoll
// makes of it, as in NCCL; use ncclenv.Validate to report it), NCCL_ALGO and
// NCCL_PROTO through the list grammar (an error, as NCCL fails init with
// ncclInvalidUsage).
func OptionsFromEnv(env ncclenv.Env) (Options, error) {
	o := DefaultOptions()
	if v, ok := env.Lookup("NCCL_ALGO"); ok {
		if _, err := ParseNCCLAlgo(v); err != nil {
			return Options{}, err
		}
		o.Algo, o.AlgoSet = v, true
	}
	if v, ok := env.Lookup("NCCL_PROTO"); ok {
		if _, err := ParseNCCLProto(v); err != nil {
			return Options{}, err
		}
		o.Proto, o.ProtoSet = v, true
	}
	o.NThreads = param(env, "NCCL_NTHREADS", Unset)
	o.LL128NThreads = param(env, "NCCL_LL128_NTHREADS", Unset)
	o.LL128C2C = param(env, "NCCL_LL128_C2C", 1)
	o.PatEnable = param(env, "NCCL_PAT_ENABLE", 2)
	o.NetOverhead = param(env, "NCCL_NET_OVERHEAD", Unset)
	o.UnpackDoubleNChannels = param(env, "NCCL_UNPACK_DOUBLE_NCHANNELS", 1)
	if v, ok := env.Lookup("NCCL_THREAD_THRESHOLDS"); ok {
		o.ThreadThresholds = ncclenv.ParseThresholds(v)
		o.ThreadThresholdsSet = true
	}

	// ncclMinNchannels / ncclMaxNchannels,
	// https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/connect.cc#L334-L359
	minCh := int64(0)
	if v := param(env, "NCCL_MIN_NRINGS", Unset); v != Unset {
		minCh = v
	}
	if v := param(env, "NCCL_MIN_NCHANNELS", Unset); v != Unset {
		minCh = v
	}
	minCh = min(minCh, MaxChannels)
	o.MinNChannels = int(max(minCh, 0))
	maxCh := int64(MaxChannels)
	if v := param(env, "NCCL_MAX_NRINGS", Unset); v != Unset {
		maxCh = v
	}
	if v := param(env, "NCCL_MAX_NCHANNELS", Unset); v != Unset {
		maxCh = v
	}
	maxCh = min(maxCh, MaxChannels)
	o.MaxNChannels = int(max(maxCh, 1))

	// envConfigOverride and the caps after it,
	// https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/init.cc#L2013-L2035 and #L2169-L2194
	if v := int(int32(param(env, "NCCL_MIN_CTAS", configUndefInt))); v != configUndefInt && v > 0 {
		o.MinCTAs = v
	}
	if v := int(int32(param(env, "NCCL_MAX_CTAS", configUndefInt))); v != configUndefInt && v > 0 {
		o.MaxCTAs = v
	}
	if v := int(int32(param(env, "NCCL_NVLS_NCHANNELS", configUndefInt))); v != configUndefInt {
		o.NVLSCTAs, o.NVLSCTAsSet = v, true
	}
	o.MinCTAs = min(o.MinCTAs, MaxChannels)
	o.MaxCTAs = min(o.MaxCTAs, MaxChannels)
	if o.MinCTAs > o.MaxCTAs {
		o.MinCTAs = o.MaxCTAs
	}
	return o, nil
}

// enables parses the Algo/Proto strings of o.
func (o Options) enables() (AlgoEnable, ProtoEnable, error) {
	ae, pe := DefaultAlgoEnable(), DefaultProtoEnable()
	var err error
	if o.AlgoSet {
		if ae, err = ParseNCCLAlgo(o.Algo); err != nil {
			return ae, pe, err
		}
	}
	if o.ProtoSet {
		if pe, err = ParseNCCLProto(o.Proto); err != nil {
			return ae, pe, err
		}
	}
	return ae, pe, nil
}

func (o Options) validate() error {
	switch {
	case o.MaxNChannels < 1 || o.MaxNChannels > MaxChannels:
		return fmt.Errorf("options: max channels %d outside [1, %d]", o.MaxNChannels, MaxChannels)
	case o.MinNChannels < 0 || o.MinNChannels > MaxChannels:
		return fmt.Errorf("options: min channels %d outside [0, %d]", o.MinNChannels, MaxChannels)
	case o.MinCTAs < 1 || o.MaxCTAs < o.MinCTAs || o.MaxCTAs > MaxChannels:
		return fmt.Errorf("options: CTA range [%d, %d] invalid", o.MinCTAs, o.MaxCTAs)
	}
	return nil
}

// param reads an integer parameter with NCCL's strtoll semantics.
func param(env ncclenv.Env, name string, def int64) int64 {
	v, _ := env.Param(name, def)
	return v
}
