package tune

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
)

// Datatype is an element type; it matters to the selection only through
// NVLS support and the FP8 ring penalty.
type Datatype int

// Datatypes (a subset of ncclDataType_t).
const (
	Float32 Datatype = iota // default
	Float16
	BFloat16
	Float64
	Int8
	Uint8
	Int32
	Uint32
	Int64
	Uint64
	Float8E4M3
	Float8E5M2
)

var dtypeNames = []struct {
	t     Datatype
	names []string
	size  int
}{
	{Float32, []string{"float32", "float", "fp32"}, 4},
	{Float16, []string{"float16", "half", "fp16"}, 2},
	{BFloat16, []string{"bfloat16", "bf16"}, 2},
	{Float64, []string{"float64", "double", "fp64"}, 8},
	{Int8, []string{"int8"}, 1},
	{Uint8, []string{"uint8"}, 1},
	{Int32, []string{"int32", "int"}, 4},
	{Uint32, []string{"uint32"}, 4},
	{Int64, []string{"int64"}, 8},
	{Uint64, []string{"uint64"}, 8},
	{Float8E4M3, []string{"float8e4m3", "fp8e4m3"}, 1},
	{Float8E5M2, []string{"float8e5m2", "fp8e5m2"}, 1},
}

// String returns the datatype's first name.
func (t Datatype) String() string {
	for _, d := range dtypeNames {
		if d.t == t {
			return d.names[0]
		}
	}
	return fmt.Sprintf("Datatype(%d)", int(t))
}

// Size returns the element size in bytes, 0 for an unknown type.
func (t Datatype) Size() int {
	for _, d := range dtypeNames {
		if d.t == t {
			return d.size
		}
	}
	return 0
}

// LookupDatatype finds a datatype by name, ignoring case.
func LookupDatatype(name string) (Datatype, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	for _, d := range dtypeNames {
		for _, x := range d.names {
			if x == n {
				return d.t, nil
			}
		}
	}
	return 0, fmt.Errorf("unknown datatype %q", name)
}

// Op is a reduction operation.
type Op int

// Reduction operations.
const (
	OpSum Op = iota // default
	OpProd
	OpMax
	OpMin
	OpAvg
)

// nvlsSupported is ncclNvlsSupported for op and t
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/include/device.h#L586-L602):
// Sum (and Min/Max on integers and 16-bit floats) on 32/64-bit integers,
// half, bfloat16, float and double. Avg counts as not supported because it
// becomes PreMulSum or SumPostDiv on the device.
func nvlsSupported(op Op, t Datatype) bool {
	switch t {
	case Int32, Uint32, Int64, Uint64, Float16, BFloat16:
		return op == OpSum || op == OpMax || op == OpMin
	case Float32, Float64:
		return op == OpSum
	}
	return false
}

// Request is one collective to place.
type Request struct {
	Func   Func
	NBytes uint64 // NCCL's nBytes (see AlgoTime)
	// NumPipeOps is the number of aggregated operations; 0 means 1.
	NumPipeOps int
	Datatype   Datatype
	Op         Op
}

// Ignore marks a cost-table cell the selection skips (NCCL_ALGO_PROTO_IGNORE).
const Ignore = float32(-1.0)

// CostTable is updateCollCostTable
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/enqueue.cc#L1979-L2026):
// the time of every pair for req, Ignore for pairs the enqueue code skips
// before asking the model, and -1 (or a negative multiple) for unusable ones.
func (m *Model) CostTable(req Request) [NumAlgorithms][NumProtocols]float32 {
	var t [NumAlgorithms][NumProtocols]float32
	for a := range t {
		for p := range t[a] {
			t[a][p] = Ignore
		}
	}
	s := m.Sys
	if s.NRanks == 1 {
		t[Ring][Simple] = 0
		return t
	}
	collNetSupport := m.CollNetEnable
	nvlsSupport := m.NVLSSupport && (nvlsSupported(req.Op, req.Datatype) || req.Func == AllGather)
	maxLocal := s.maxLocalRanks()
	for a := Algorithm(0); a < NumAlgorithms; a++ {
		if (a == CollNetDirect || a == CollNetChain) && !collNetSupport {
			continue
		}
		if (a == CollNetDirect || a == CollNetChain) && maxLocal > MaxDirectArity+1 {
			continue
		}
		if (a == NVLS || a == NVLSTree) && (!nvlsSupport || (req.Func != AllReduce && maxLocal > MaxNVLSArity)) {
			continue
		}
		if a == NVLS && !collNetSupport && s.NNodes > 1 {
			continue
		}
		if a == PAT && req.Func == ReduceScatter && req.Op == OpAvg {
			continue
		}
		for p := Protocol(0); p < NumProtocols; p++ {
			t[a][p] = m.AlgoTime(req.Func, a, p, req.NBytes, req.NumPipeOps)
			if (req.Datatype == Float8E4M3 || req.Datatype == Float8E5M2) && a == Ring && s.NRanks > 8 {
				t[a][p] *= 1024.0
			}
		}
	}
	return t
}

// Choice is the selection for one request.
type Choice struct {
	Func   Func
	NBytes uint64
	Algo   Algorithm
	Proto  Protocol
	// TimeUs is the model's time of the chosen pair.
	TimeUs float32
	// NChannels is the channel count the kernel uses (nMaxChannels) and
	// NThreads the threads per channel (nWarps × 32).
	NChannels int
	NThreads  int
	// Costs is the cost table the choice was made from.
	Costs [NumAlgorithms][NumProtocols]float32
}

// AlgBwGBps returns the model's algorithm bandwidth, bytes / time, in GB/s;
// 0 when the time is zero (a single rank moves nothing, and NCCL's cost is
// zero), so that tables and JSON stay finite.
func (c Choice) AlgBwGBps() float64 {
	if c.TimeUs <= 0 {
		return 0
	}
	return float64(c.NBytes) / float64(c.TimeUs) / 1000
}

// ErrNoAlgorithm is returned (wrapped) when no pair is usable.
var ErrNoAlgorithm = errors.New("no algorithm/protocol available")

// Select is topoGetAlgoInfo
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/enqueue.cc#L2028-L2117):
// the usable pair with the smallest time (ties go to the lower algorithm,
// then protocol index), then the channel and thread counts for it.
func (m *Model) Select(req Request) (Choice, error) {
	if !req.Func.Valid() {
		return Choice{}, fmt.Errorf("select: invalid function %d", int(req.Func))
	}
	costs := m.CostTable(req)
	minTime := float32(math.MaxFloat32)
	algo, proto := Algorithm(-1), Protocol(-1)
	for a := Algorithm(0); a < NumAlgorithms; a++ {
		for p := Protocol(0); p < NumProtocols; p++ {
			v := costs[a][p]
			if v == Ignore {
				continue
			}
			if v >= 0 && v < minTime {
				algo, proto, minTime = a, p, v
			}
		}
	}
	if algo < 0 {
		var set []string
		if m.Opts.AlgoSet {
			set = append(set, "NCCL_ALGO="+m.Opts.Algo)
		}
		if m.Opts.ProtoSet {
			set = append(set, "NCCL_PROTO="+m.Opts.Proto)
		}
		if len(set) > 0 {
			return Choice{}, fmt.Errorf("%s with %s: %w (NCCL returns ncclInvalidUsage)", req.Func, strings.Join(set, ", "), ErrNoAlgorithm)
		}
		return Choice{}, fmt.Errorf("%s: %w (NCCL returns ncclInternalError)", req.Func, ErrNoAlgorithm)
	}
	nc, nt := m.channelsThreads(algo, proto, req.NBytes)
	return Choice{Func: req.Func, NBytes: req.NBytes, Algo: algo, Proto: proto, TimeUs: minTime,
		NChannels: nc, NThreads: nt, Costs: costs}, nil
}

// channelsThreads is the channel and thread tuning of enqueue.cc:2070-2115.
func (m *Model) channelsThreads(a Algorithm, p Protocol, nBytes uint64) (int, int) {
	nc := m.CommNChannels
	nt := m.MaxThreads[a][p]
	thr := int(int32(m.ThreadThresholds[a][p])) // stored in an int
	// below evaluates C's `nBytes < nc * nt * ... ` with the product formed in
	// 32-bit int arithmetic and converted to size_t.
	below := func(factors ...int) bool {
		prod := int32(1)
		for _, f := range factors {
			prod *= int32(f)
		}
		return nBytes < uint64(int64(prod))
	}
	switch a {
	case CollNetDirect:
		nHeads := m.Sys.CollNetHeadsNum
		ncSwitch := 16
		flag := true
		for ncSwitch >= 1 && flag {
			for {
				flag = below(nc, nt, nHeads, thr)
				if !(flag && nc > ncSwitch) {
					break
				}
				if nc == ncSwitch+ncSwitch/2 {
					thr /= 2
				}
				nc--
			}
			ncSwitch /= 2
		}
	case NVLS, NVLSTree:
		if m.Sys.NNodes > 1 && a == NVLS {
			nc = min(m.NVLSChannels, m.CommNChannels)
		} else {
			nc = m.NVLSChannels
		}
	default:
		for below(nc, nt, thr) && nc >= 2 {
			nc--
		}
	}
	if a != NVLS && a != NVLSTree && a != CollNetDirect {
		for below(nc, nt, thr) && nt%128 == 0 {
			nt /= 2
		}
	}
	if p == Simple {
		if a == Ring {
			nt += WarpSize
		}
		if a == Tree {
			nt += 4 * WarpSize
		}
	}
	if nt/WarpSize < 3 {
		nt = 3 * WarpSize
	}
	if a == Tree || a == PAT {
		nt = MaxNThreads
	}
	return nc, nt / WarpSize * WarpSize
}

// Sizes returns lo, 2·lo, 4·lo, ... up to hi inclusive (lo ≥ 1).
func Sizes(lo, hi uint64) []uint64 {
	if lo == 0 {
		lo = 1
	}
	var out []uint64
	for s := lo; s <= hi && s != 0; s *= 2 {
		out = append(out, s)
		if s > math.MaxUint64/2 {
			break
		}
	}
	return out
}

// Sweep selects for every size in sizes, stopping early if ctx is done.
func (m *Model) Sweep(ctx context.Context, f Func, sizes []uint64, tmpl Request) ([]Choice, error) {
	out := make([]Choice, 0, len(sizes))
	tmpl.Func = f
	for _, n := range sizes {
		if err := ctx.Err(); err != nil {
			return out, fmt.Errorf("sweep: %w", err)
		}
		tmpl.NBytes = n
		c, err := m.Select(tmpl)
		if err != nil {
			return out, err
		}
		out = append(out, c)
	}
	return out, nil
}
