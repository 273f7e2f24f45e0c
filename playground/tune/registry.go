package tune

import (
	"fmt"
	"strings"
)

// Func is a collective function the tuning model covers, numbered as in
// ncclFunc_t (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/include/nccl_common.h#L72-L78).
type Func int

// Collective functions in NCCL's order.
const (
	Broadcast Func = iota
	Reduce
	AllGather
	ReduceScatter
	AllReduce
	NumFuncs = 5
)

// Algorithm is a collective algorithm, numbered as NCCL_ALGO_*
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/include/plugin/nccl_tuner.h#L28-L34).
type Algorithm int

// Algorithms in NCCL's order; ties in the selection go to the lower index.
const (
	Tree Algorithm = iota
	Ring
	CollNetDirect
	CollNetChain
	NVLS
	NVLSTree
	PAT
	NumAlgorithms = 7
)

// Protocol is a wire protocol, numbered as NCCL_PROTO_*
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/include/plugin/nccl_tuner.h#L38-L40).
type Protocol int

// Protocols in NCCL's order.
const (
	LL Protocol = iota
	LL128
	Simple
	NumProtocols = 3
)

// FuncInfo describes one collective function.
type FuncInfo struct {
	Func    Func
	Name    string   // NCCL's spelling (ncclFuncStr)
	Aliases []string // other accepted spellings (nccl-tests, PyTorch)
	// Algorithms lists the algorithms the model computes for this function
	// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/tuning.cc#L293-L298).
	Algorithms []Algorithm
}

// AlgorithmInfo describes one algorithm.
type AlgorithmInfo struct {
	Algo Algorithm
	Name string // NCCL's spelling (ncclAlgoStr)
	// Graph is the algorithm whose searched graph this one uses: NVLSTree
	// runs on the NVLS graph and PAT on the tree graph
	// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/init.cc#L980-L981).
	Graph Algorithm
	// Protocols lists the protocols the model computes for it
	// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/tuning.cc#L300-L304).
	Protocols []Protocol
	Summary   string
}

// ProtocolInfo describes one protocol.
type ProtocolInfo struct {
	Proto   Protocol
	Name    string // NCCL's spelling (ncclProtoStr)
	Summary string
}

var funcTable = [NumFuncs]FuncInfo{
	{Broadcast, "Broadcast", []string{"bcast"}, []Algorithm{Ring}},
	{Reduce, "Reduce", nil, []Algorithm{Ring}},
	{AllGather, "AllGather", []string{"all_gather", "all-gather"}, []Algorithm{Ring, CollNetDirect, NVLS, PAT}},
	{ReduceScatter, "ReduceScatter", []string{"reduce_scatter", "reduce-scatter"}, []Algorithm{Ring, CollNetDirect, NVLS, PAT}},
	{AllReduce, "AllReduce", []string{"all_reduce", "all-reduce"}, []Algorithm{Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree}},
}

var allProtos = []Protocol{LL, LL128, Simple}

var algoTable = [NumAlgorithms]AlgorithmInfo{
	{Tree, "Tree", Tree, allProtos, "double binary tree across nodes, chains inside a node"},
	{Ring, "Ring", Ring, allProtos, "ring through every rank"},
	{CollNetDirect, "CollNetDirect", CollNetDirect, allProtos, "in-network reduction (SHARP) with every GPU talking to the NICs directly"},
	{CollNetChain, "CollNetChain", CollNetChain, allProtos, "in-network reduction (SHARP) behind an intra-node chain"},
	{NVLS, "NVLS", NVLS, []Protocol{Simple}, "NVLink SHARP: reductions inside the NVSwitch"},
	{NVLSTree, "NVLSTree", NVLS, []Protocol{Simple}, "NVLink SHARP inside a node, trees between nodes"},
	{PAT, "PAT", Tree, []Protocol{Simple}, "parallel aggregated trees (AllGather/ReduceScatter, one GPU per node)"},
}

var protoTable = [NumProtocols]ProtocolInfo{
	{LL, "LL", "8-byte stores: 4 bytes of data, 4 of flag; lowest latency, half the bandwidth"},
	{LL128, "LL128", "128-byte lines with 120 bytes of data; needs NVLink-ordered stores"},
	{Simple, "Simple", "large chunks with separate flags; highest bandwidth, highest latency"},
}

// Funcs returns the registry of collective functions in index order.
func Funcs() []FuncInfo { return append([]FuncInfo(nil), funcTable[:]...) }

// Algorithms returns the registry of algorithms in index order.
func Algorithms() []AlgorithmInfo { return append([]AlgorithmInfo(nil), algoTable[:]...) }

// Protocols returns the registry of protocols in index order.
func Protocols() []ProtocolInfo { return append([]ProtocolInfo(nil), protoTable[:]...) }

// String returns NCCL's name of the function.
func (f Func) String() string {
	if f >= 0 && f < NumFuncs {
		return funcTable[f].Name
	}
	return fmt.Sprintf("Func(%d)", int(f))
}

// Valid reports whether f is one of the tuned functions.
func (f Func) Valid() bool { return f >= 0 && f < NumFuncs }

// String returns NCCL's name of the algorithm.
func (a Algorithm) String() string {
	if a >= 0 && a < NumAlgorithms {
		return algoTable[a].Name
	}
	return fmt.Sprintf("Algorithm(%d)", int(a))
}

// Valid reports whether a is a known algorithm.
func (a Algorithm) Valid() bool { return a >= 0 && a < NumAlgorithms }

// String returns NCCL's name of the protocol.
func (p Protocol) String() string {
	if p >= 0 && p < NumProtocols {
		return protoTable[p].Name
	}
	return fmt.Sprintf("Protocol(%d)", int(p))
}

// Valid reports whether p is a known protocol.
func (p Protocol) Valid() bool { return p >= 0 && p < NumProtocols }

// normalize folds case and drops '_', '-' and spaces so that "all_reduce",
// "All-Reduce" and "AllReduce" compare equal.
func normalize(s string) string {
	return strings.NewReplacer("_", "", "-", "", " ", "").Replace(strings.ToLower(strings.TrimSpace(s)))
}

// LookupFunc finds a function by NCCL's name or an alias, ignoring case,
// '_' and '-'.
func LookupFunc(name string) (Func, error) {
	n := normalize(name)
	for _, fi := range funcTable {
		if normalize(fi.Name) == n {
			return fi.Func, nil
		}
		for _, a := range fi.Aliases {
			if normalize(a) == n {
				return fi.Func, nil
			}
		}
	}
	return 0, fmt.Errorf("unknown collective %q (want one of broadcast, reduce, allgather, reducescatter, allreduce)", name)
}

// LookupAlgorithm finds an algorithm by NCCL's name, ignoring case.
func LookupAlgorithm(name string) (Algorithm, error) {
	for _, ai := range algoTable {
		if strings.EqualFold(ai.Name, strings.TrimSpace(name)) {
			return ai.Algo, nil
		}
	}
	return 0, fmt.Errorf("unknown algorithm %q (want one of %s)", name, strings.Join(algoNames(), ", "))
}

// LookupProtocol finds a protocol by NCCL's name, ignoring case.
func LookupProtocol(name string) (Protocol, error) {
	for _, pi := range protoTable {
		if strings.EqualFold(pi.Name, strings.TrimSpace(name)) {
			return pi.Proto, nil
		}
	}
	return 0, fmt.Errorf("unknown protocol %q (want one of LL, LL128, Simple)", name)
}

func funcNames() []string {
	out := make([]string, NumFuncs)
	for i, f := range funcTable {
		out[i] = f.Name
	}
	return out
}

func algoNames() []string {
	out := make([]string, NumAlgorithms)
	for i, a := range algoTable {
		out[i] = a.Name
	}
	return out
}

func protoNames() []string {
	out := make([]string, NumProtocols)
	for i, p := range protoTable {
		out[i] = p.Name
	}
	return out
}

// computed reports whether ncclTopoTuneModel fills the (f, a, p) cell at all
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/tuning.cc#L293-L304);
// PAT additionally needs ncclPatEnable, checked by the caller.
func computed(f Func, a Algorithm, p Protocol) bool {
	ok := false
	for _, x := range funcTable[f].Algorithms {
		if x == a {
			ok = true
		}
	}
	if !ok {
		return false
	}
	for _, x := range algoTable[a].Protocols {
		if x == p {
			return true
		}
	}
	return false
}
