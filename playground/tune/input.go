package tune

import (
	"fmt"
	"math"

	"github.com/distributed-nav/distributed-nav/playground/topo"
)

// Pattern is a graph pattern, numbered as NCCL_TOPO_PATTERN_*
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/include/graph.h#L160-L169).
type Pattern int

// Graph patterns.
const (
	PatternNone          Pattern = 0 // not searched
	PatternBalancedTree  Pattern = 1
	PatternSplitTree     Pattern = 2
	PatternTree          Pattern = 3
	PatternRing          Pattern = 4
	PatternNVLS          Pattern = 5
	PatternCollNetDirect Pattern = 6
)

// Graph is what the model reads from one searched graph (struct
// ncclTopoGraph, https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/include/graph.h#L170-L189),
// after the cross-rank reduction of
// https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/init.cc#L1435-L1451
// (minimum channels and bandwidths, maximum path types). The zero value is
// a graph that was not searched, which is what NCCL's memset leaves behind.
type Graph struct {
	Pattern      Pattern
	NChannels    int
	BwIntra      float64 // GB/s per channel inside a node
	BwInter      float64 // GB/s per channel to the network
	TypeIntra    topo.PathType
	TypeInter    topo.PathType
	LatencyInter float64 // µs, latency of the chosen NET (search.cc:745)
	SameChannels bool
	CrossNic     bool
}

// Graphs holds the five searched graphs of a communicator. The model maps
// its seven algorithms onto them as NCCL does: NVLSTree uses NVLS and PAT
// uses Tree (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/init.cc#L980-L981).
type Graphs struct {
	Ring, Tree, CollNetDirect, CollNetChain, NVLS Graph
}

// For returns the graph algorithm a runs on.
func (g Graphs) For(a Algorithm) Graph {
	switch a {
	case Tree, PAT:
		return g.Tree
	case Ring:
		return g.Ring
	case CollNetDirect:
		return g.CollNetDirect
	case CollNetChain:
		return g.CollNetChain
	case NVLS, NVLSTree:
		return g.NVLS
	}
	return Graph{}
}

// CPUArch is the CPU architecture (NCCL_TOPO_CPU_ARCH_*,
// https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/include/graph.h#L78-L81).
type CPUArch int

// CPU architectures.
const (
	ArchUnknown CPUArch = 0
	ArchX86     CPUArch = 1
	ArchPower   CPUArch = 2
	ArchARM     CPUArch = 3
	ArchMixed   CPUArch = 4
)

// CPUVendor is the x86 CPU vendor (NCCL_TOPO_CPU_VENDOR_*, graph.h:82-85).
type CPUVendor int

// CPU vendors.
const (
	VendorUnknown CPUVendor = 0
	VendorIntel   CPUVendor = 1
	VendorAMD     CPUVendor = 2
	VendorZhaoxin CPUVendor = 3
	VendorMixed   CPUVendor = 4
)

// NetDevice is the network device type (ncclNetDeviceType,
// https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/include/nccl_device/net_device.h#L18-L24).
type NetDevice int

// Network device types.
const (
	NetDeviceHost   NetDevice = 0
	NetDeviceUnpack NetDevice = 1
)

// System describes the communicator around the graphs: the scalars
// ncclTopoTuneModel and the enqueue-time selection read from struct ncclComm.
type System struct {
	NRanks, NNodes         int
	MinCompCap, MaxCompCap int // e.g. 90 for Hopper
	CPUArch                CPUArch
	CPUVendor              CPUVendor
	// NVSCount is the number of NVSwitch nodes in the topology
	// (ncclTopoGetNvsCount); CollNetDirect needs at least one.
	NVSCount int
	// LocalRanks lists the ranks on each node (nodeRanks[].localRanks). When
	// nil every node holds NRanks/NNodes ranks.
	LocalRanks    []int
	NetDeviceType NetDevice
	// MinNetBw is the slowest NIC bandwidth in GB/s (comm->minNetBw); only
	// the Blackwell multi-node NVLS channel tuning reads it.
	MinNetBw float64

	// NVLSSupport is comm->nvlsSupport before the NVLS graph check: the
	// GPUs can use NVLink SHARP (NVSwitch, sm90+, NCCL_NVLS_ENABLE).
	NVLSSupport bool
	// CollNetEnable is config.collnetEnable (NCCL_COLLNET_ENABLE and a
	// CollNet plugin). CollNetChainSupport, CollNetHeadsNum and the two
	// plugin capabilities refine it.
	CollNetEnable        bool
	CollNetChainSupport  bool
	CollNetHeadsNum      int
	CollNetAllGather     bool // the CollNet plugin implements iallgather
	CollNetReduceScatter bool // the CollNet plugin implements ireducescatter

	// MaxTreePattern is the largest tree pattern over all ranks
	// (init.cc:1447); zero means "the tree graph's pattern".
	MaxTreePattern Pattern
	// CUDARTVersion is the CUDA runtime NCCL was built with (e.g. 12080); it
	// matters only for one LL128 exception on CUDA 11.8 (tuning.cc:534-535).
	CUDARTVersion int
}

// localRanks returns the ranks of each node.
func (s System) localRanks() []int {
	if len(s.LocalRanks) > 0 {
		return s.LocalRanks
	}
	out := make([]int, s.NNodes)
	for i := range out {
		out[i] = s.NRanks / s.NNodes
	}
	return out
}

// maxLocalRanks returns the most ranks on any node (comm->maxLocalRanks).
func (s System) maxLocalRanks() int {
	m := 0
	for _, l := range s.localRanks() {
		m = max(m, l)
	}
	return m
}

// minLocalRanks returns the fewest ranks on any node (comm->minLocalRanks).
func (s System) minLocalRanks() int {
	m := math.MaxInt
	for _, l := range s.localRanks() {
		m = min(m, l)
	}
	return m
}

// validate rejects inputs the model cannot describe.
func (s System) validate() error {
	switch {
	case s.NRanks < 1:
		return fmt.Errorf("system: nRanks %d < 1", s.NRanks)
	case s.NNodes < 1 || s.NNodes > s.NRanks:
		return fmt.Errorf("system: nNodes %d outside [1, nRanks=%d]", s.NNodes, s.NRanks)
	case s.MinCompCap <= 0 || s.MaxCompCap < s.MinCompCap:
		return fmt.Errorf("system: compute capability range [%d, %d] invalid", s.MinCompCap, s.MaxCompCap)
	case len(s.LocalRanks) > 0 && len(s.LocalRanks) != s.NNodes:
		return fmt.Errorf("system: %d localRanks entries for %d nodes", len(s.LocalRanks), s.NNodes)
	case s.CollNetHeadsNum < 0 || s.NVSCount < 0:
		return fmt.Errorf("system: negative counts")
	case math.IsNaN(s.MinNetBw) || math.IsInf(s.MinNetBw, 0) || s.MinNetBw < 0:
		return fmt.Errorf("system: minNetBw %v invalid", s.MinNetBw)
	}
	if len(s.LocalRanks) > 0 {
		sum := 0
		for i, l := range s.LocalRanks {
			if l < 1 {
				return fmt.Errorf("system: node %d has %d ranks", i, l)
			}
			sum += l
		}
		if sum != s.NRanks {
			return fmt.Errorf("system: localRanks sum to %d, not nRanks %d", sum, s.NRanks)
		}
	}
	return nil
}

func (g Graph) validate(name string) error {
	for _, v := range []float64{g.BwIntra, g.BwInter, g.LatencyInter} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > 1e9 {
			return fmt.Errorf("%s graph: bandwidth/latency %v invalid", name, v)
		}
	}
	if g.NChannels < 0 || g.NChannels > MaxChannels {
		return fmt.Errorf("%s graph: %d channels outside [0, %d]", name, g.NChannels, MaxChannels)
	}
	if g.TypeIntra < topo.PathLOC || g.TypeIntra > topo.PathDIS || g.TypeInter < topo.PathLOC || g.TypeInter > topo.PathDIS {
		return fmt.Errorf("%s graph: path types %v/%v invalid", name, g.TypeIntra, g.TypeInter)
	}
	return nil
}
