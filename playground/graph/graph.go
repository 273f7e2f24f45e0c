package graph

import (
	"fmt"

	"github.com/distributed-nav/distributed-nav/playground/topo"
)

// Pattern is a graph search pattern (NCCL_TOPO_PATTERN_*,
// https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/include/graph.h#L160-L169).
type Pattern int

// Patterns, numbered as in NCCL.
const (
	BalancedTree  Pattern = 1 // NIC traffic spread over two GPUs (tree parent + one child, other child)
	SplitTree     Pattern = 2 // parent on the first GPU, children on the second
	Tree          Pattern = 3 // all NIC traffic on one GPU
	Ring          Pattern = 4
	NVLS          Pattern = 5 // NVLink SHARP
	CollNetDirect Pattern = 6
)

// String names the pattern.
func (p Pattern) String() string {
	switch p {
	case BalancedTree:
		return "BALANCED_TREE"
	case SplitTree:
		return "SPLIT_TREE"
	case Tree:
		return "TREE"
	case Ring:
		return "RING"
	case NVLS:
		return "NVLS"
	case CollNetDirect:
		return "COLLNET_DIRECT"
	}
	return fmt.Sprintf("Pattern(%d)", int(p))
}

// MaxChannels is MAXCHANNELS (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/include/device.h#L91).
const MaxChannels = 64

// Params are the inputs of one search (the fields of ncclTopoGraph that
// init.cc sets before calling ncclTopoCompute).
type Params struct {
	ID          int // 0 ring, 1 tree, 2 collnet chain, 3 nvls, 4 collnet direct
	Pattern     Pattern
	MinChannels int
	MaxChannels int
	CollNet     bool
}

// Channel is one searched channel: the rank order inside the host and, when
// the search is inter-node, the NET ports where it enters and leaves.
type Channel struct {
	Ranks []int // for NVLS only the head rank is meaningful and given
	GPUs  []int // GPU indices matching Ranks
	// NetIn and NetOut are NET indices of the host, -1 when intra-node.
	NetIn, NetOut int
}

// Graph is the result of one search (ncclTopoGraph after ncclTopoCompute).
type Graph struct {
	ID           int
	Pattern      Pattern
	CrossNic     int
	CollNet      bool
	MinChannels  int
	MaxChannels  int
	NChannels    int // channel count used by the tuning model (see package doc)
	BwIntra      float32
	BwInter      float32
	LatencyInter float32
	TypeIntra    topo.PathType
	TypeInter    topo.PathType
	SameChannels int
	NHops        int
	Channels     []Channel
	// SearchChannels is the channel count the search itself produced.
	SearchChannels int
	// Steps counts ncclTopoSearchRecGpu calls, the unit of NCCL's budgets.
	Steps int64
	// Work counts the links of the paths the search followed and the
	// candidate GPUs it listed; WorkCapped is set when it reached
	// MaxSearchWork and the search stopped there.
	Work       int64
	WorkCapped bool
	// Fallback is set when no solution was found and NCCL's simple
	// PCI-order channel was used.
	Fallback bool
}
