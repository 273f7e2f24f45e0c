package tune

// HW is the hardware class whose latencies a (algorithm, protocol) pair pays
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/include/plugin/nccl_tuner.h#L45-L47).
type HW int

// Hardware classes.
const (
	HWNVLink HW = iota
	HWPCI
	HWNet
	NumHW = 3
)

var hwNames = [NumHW]string{"NVLINK", "PCI", "NET"}

// String names the hardware class.
func (h HW) String() string {
	if h >= 0 && h < NumHW {
		return hwNames[h]
	}
	return "HW(?)"
}

// Compute-capability classes and node-count scales index the per-arch
// bandwidth caps (nccl_tuner.h:50-53 and tuning.cc:263-267).
const (
	CompCapVolta     = 0
	CompCapAmpere    = 1
	CompCapHopper    = 2
	CompCapBlackwell = 3
	NumCompCaps      = 4
	NumScales        = 3 // 1 node, 2 nodes, 3 or more nodes
)

// CompCapIndex maps a minimum compute capability (e.g. 90) to its class
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/tuning.cc#L263-L266).
func CompCapIndex(minCompCap int) int {
	switch {
	case minCompCap >= 100:
		return CompCapBlackwell
	case minCompCap >= 90:
		return CompCapHopper
	case minCompCap >= 80:
		return CompCapAmpere
	}
	return CompCapVolta
}

// ScaleIndex maps a node count to its column of the cap tables
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/tuning.cc#L267).
func ScaleIndex(nNodes int) int {
	if nNodes <= 2 {
		return nNodes - 1
	}
	return 2
}

// Constants are the tables a tuner plugin may edit (ncclTunerConstants_v5_t,
// https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/include/plugin/tuner/tuner_v5.h#L25-L35).
// Latencies are in microseconds, bandwidths in GB/s.
type Constants struct {
	BaseLatencies        [NumAlgorithms][NumProtocols]float64
	HWLatencies          [NumHW][NumAlgorithms][NumProtocols]float64
	LLMaxBws             [NumCompCaps][NumScales]float64
	PerChMaxRingLL128Bws [NumCompCaps][NumScales]float64
	PerChMaxTreeLL128Bws [NumCompCaps][NumScales]float64
	PerChMaxTreeBws      [NumCompCaps][NumScales]float64
	PerChMaxNVLSTreeBws  [NumCompCaps][NumScales]float64
}

// DefaultConstants returns ncclTunerConstantsDefaults
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/tuning.cc#L148-L212).
func DefaultConstants() Constants {
	return Constants{
		BaseLatencies: [NumAlgorithms][NumProtocols]float64{
			{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, // Tree, Ring
			{0, 0, 0}, {0, 0, 0}, // CollNetDirect, CollNetChain
			{0, 0, 0}, {0, 0, 0}, // NVLS, NVLSTree
			{8.0, 8.0, 8.0}, // PAT
		},
		HWLatencies: [NumHW][NumAlgorithms][NumProtocols]float64{
			{ // NVLink
				{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4},
				{0, 0, 3.7}, {0, 0, 2.8},
				{0, 0, 25}, {0, 0, 25},
				{0, 0, 4.0},
			},
			{ // PCI
				{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7},
				{0, 0, 3.7}, {0, 0, 2.8},
				{0, 0, 0}, {0, 0, 0},
				{0, 0, 4.0},
			},
			{ // NET
				{5.0, 8.5, 14}, {2.7, 4.0, 14.0},
				{0, 0, 31}, {0, 0, 30},
				{0, 0, 18}, {0, 0, 20.9},
				{0, 0, 14},
			},
		},
		// Rows: compute class on one node; on several nodes row 0 is an
		// Intel/other CPU and row 1 an AMD CPU (see llMaxBw in NewModel).
		LLMaxBws: [NumCompCaps][NumScales]float64{
			{39.0, 39.0, 20.4},
			{87.7, 22.5, 19.0},
			{141.0, 45.0, 35.0},
			{2 * 141.0, 2 * 45.0, 2 * 35.0},
		},
		PerChMaxRingLL128Bws: [NumCompCaps][NumScales]float64{
			{20.0, 20.0, 20.0},
			{20.0, 20.0, 20.0},
			{36.7, 36.7, 36.7},
			{40.0, 40.0, 40.0},
		},
		PerChMaxTreeLL128Bws: [NumCompCaps][NumScales]float64{
			{20.0, 20.0, 20.0},
			{20.0, 20.0, 20.0},
			{36.7, 36.7, 29.0},
			{55.6, 31.67, 20.0},
		},
		PerChMaxTreeBws: [NumCompCaps][NumScales]float64{
			{26.5, 18.5, 10.0},
			{24.0, 23.6, 17.8},
			{38.7, 41.4, 36.0},
			{70.0, 42.8, 24.0},
		},
		PerChMaxNVLSTreeBws: [NumCompCaps][NumScales]float64{
			{26.5, 18.5, 10.0},
			{24.0, 23.6, 17.8},
			{0.0, 57.7, 45.5},
			{0.0, 96.0, 80.0},
		},
	}
}

// nvlsEfficiency per compute class
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/tuning.cc#L138-L144).
var nvlsEfficiency = [NumCompCaps]float32{0.0, 0.0, 0.85, 0.74}

// treeCorrectionFactor[proto][log2(nBytes/64)] for tree AllReduce
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/tuning.cc#L620-L628).
var treeCorrectionFactor = [NumProtocols][24]float32{
	{1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
	{1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
	{.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9},
}

// TreeCorrectionFactor returns treeCorrectionFactor[p][log2(nBytes/64)],
// the factor tree AllReduce bandwidth is scaled by at that size, and false
// when the size is outside the 24-entry table. (AlgoTime applies it to Tree
// only below index 23 and to NVLSTree up to index 23, as the release does.)
func TreeCorrectionFactor(p Protocol, nBytes uint64) (float32, bool) {
	l := log2i(nBytes >> 6)
	if !p.Valid() || l < 0 || l >= 24 {
		return 1, false
	}
	return treeCorrectionFactor[p][l], true
}

// Limits from https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/include/device.h#L90-L115,
// comm.h#L49-L51 and topo.h.
const (
	WarpSize             = 32
	MaxChannels          = 64  // MAXCHANNELS
	MaxNThreads          = 640 // NCCL_MAX_NTHREADS
	SimpleMaxNThreads    = 512 // NCCL_SIMPLE_MAX_NTHREADS
	LLMaxNThreads        = 512 // NCCL_LL_MAX_NTHREADS
	LL128MaxNThreads     = 640 // NCCL_LL128_MAX_NTHREADS
	LLThreadThreshold    = 8   // NCCL_LL_THREAD_THRESHOLD
	LL128ThreadThreshold = 8   // NCCL_LL128_THREAD_THRESHOLD
	SimpleThreadThresh   = 64  // NCCL_SIMPLE_THREAD_THRESHOLD
	MaxDirectArity       = 7   // NCCL_MAX_DIRECT_ARITY (device.h:199)
	MaxNVLSArity         = 32  // NCCL_MAX_NVLS_ARITY (device.h:213)
	// PCIBw is PCI_BW, a Gen3 x16 link in GB/s (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/topo.h#L25).
	PCIBw = 12.0
	// MaxDevWorkBatchColls is NCCL_MAX_DEV_WORK_BATCH_COLLS: 1024 bytes
	// divided by sizeof(struct ncclDevWorkColl), which is 128 bytes
	// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/include/device.h#L284-L316
	// and #L389-L390).
	MaxDevWorkBatchColls = 1024 / 128
)

// log2i is floor(log2(n)), -1 for 0, as log2i/log2Down
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/include/utils.h#L56-L58).
func log2i(n uint64) int {
	l := -1
	for n != 0 {
		n >>= 1
		l++
	}
	return l
}
