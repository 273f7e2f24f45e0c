package estimate

import (
	"fmt"
	"math"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/graph"
	"github.com/distributed-nav/distributed-nav/playground/model"
	"github.com/distributed-nav/distributed-nav/playground/topo"
	"github.com/distributed-nav/distributed-nav/playground/tune"
)

// Class is a path class: the kind of hop that limits a collective. The
// calibration has one set of parameters per class.
type Class string

// String returns the class name as it appears in calibration.yaml.
func (c Class) String() string { return string(c) }

// Path classes, from the fastest kind of hop to the slowest.
const (
	ClassNVLink     Class = "nvlink"      // CUDA P2P over NVLink, through NVSwitches or a bridge
	ClassPCIe       Class = "pcie"        // CUDA P2P over PCIe
	ClassNetRDMA    Class = "net-rdma"    // the network through RDMA verbs: InfiniBand or RoCE
	ClassNetTCP     Class = "net-tcp"     // the network through sockets (TCP, GPUDirect-TCPX/TCPXO)
	ClassSHM        Class = "shm"         // staging through host memory within one CPU socket
	ClassSHMXSocket Class = "shm-xsocket" // staging through host memory across CPU sockets
)

// Classes lists every class in the order above.
func Classes() []Class {
	return []Class{ClassNVLink, ClassPCIe, ClassNetRDMA, ClassNetTCP, ClassSHM, ClassSHMXSocket}
}

// slowness orders the classes for picking the bottleneck of a graph whose
// hops mix classes: a larger value is assumed slower.
func (c Class) slowness() int {
	for i, x := range Classes() {
		if x == c {
			return i
		}
	}
	return -1
}

// Describe is a few words about the class.
func (c Class) Describe() string {
	switch c {
	case ClassNVLink:
		return "NVLink / NVSwitch P2P"
	case ClassPCIe:
		return "PCIe P2P"
	case ClassNetRDMA:
		return "network, RDMA (InfiniBand/RoCE)"
	case ClassNetTCP:
		return "network, TCP sockets or TCPXO"
	case ClassSHM:
		return "host memory (SHM), one socket"
	case ClassSHMXSocket:
		return "host memory (SHM), across sockets"
	}
	return string(c)
}

// ParseClass checks a class name.
func ParseClass(s string) (Class, error) {
	for _, c := range Classes() {
		if string(c) == s {
			return c, nil
		}
	}
	return "", fmt.Errorf("unknown path class %q", s)
}

// Fabric is the kind of network between nodes.
type Fabric string

// Fabrics.
const (
	FabricAuto Fabric = ""     // guess from the NIC names of the topology
	FabricRDMA Fabric = "rdma" // InfiniBand or RoCE verbs
	FabricTCP  Fabric = "tcp"  // sockets, or a TCP-offload plugin such as TCPXO
)

// ParseFabric accepts auto, rdma (or ib, roce) and tcp (or socket, tcpx, tcpxo).
func ParseFabric(s string) (Fabric, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "auto":
		return FabricAuto, nil
	case "rdma", "ib", "infiniband", "roce":
		return FabricRDMA, nil
	case "tcp", "socket", "sockets", "tcpx", "tcpxo":
		return FabricTCP, nil
	}
	return "", fmt.Errorf("unknown fabric %q (want auto, rdma, ib, roce or tcp)", s)
}

// rdmaPrefixes are NIC names of verbs devices (mlx5_0, ibp12s0, bnxt_re0,
// irdma0, efa0, hfi1_0).
var rdmaPrefixes = []string{"mlx", "ib", "bnxt_re", "irdma", "efa", "hfi", "qedr", "erdma"}

// detectFabric guesses the fabric from the first NIC of the host: verbs
// device names mean RDMA, anything else (eth0, enp6s0) sockets.
func detectFabric(sys *topo.System) Fabric {
	for _, n := range sys.NETs() {
		name := strings.ToLower(n.Net.Name)
		for _, p := range rdmaPrefixes {
			if strings.HasPrefix(name, p) {
				return FabricRDMA
			}
		}
		return FabricTCP
	}
	return FabricRDMA
}

func (f Fabric) class() Class {
	if f == FabricTCP {
		return ClassNetTCP
	}
	return ClassNetRDMA
}

// Routing is the path class of every algorithm of one communicator.
type Routing struct {
	// Algo is the bottleneck class of each algorithm's graph; empty when
	// the communicator has a single rank.
	Algo [tune.NumAlgorithms]Class
	// Intra is the slowest intra-node hop class of the ring (for
	// information on multi-node jobs, where Algo is the network class).
	Intra  Class
	Fabric Fabric
	// LinkFactor corrects NCCL's bandwidth of each algorithm for its
	// channel quantisation on a single node: NCCL's search gives every
	// channel a bandwidth from a fixed ladder (20, 18, 15, ... GB/s) and the
	// model multiplies it by the searched channel count, while at run time
	// NCCL opens twice as many channels (ncclTopoPostset), which fill the
	// P2P link whatever the ladder step. The factor is the slowest hop's
	// path bandwidth over channels × per-channel bandwidth when that is
	// above 1 and every hop is P2P (NVLink or PCIe); 1 otherwise (SHM and
	// network throughput are not set by the link). A 2x A40 NVLink bridge
	// (48 GB/s, 2 channels of 20 GB/s) gets 1.2.
	LinkFactor [tune.NumAlgorithms]float64
}

// Route finds the path class of every algorithm of a built communicator.
// Single node: the slowest hop between consecutive ranks of the
// algorithm's channels (ring edges including the wrap-around, tree chain
// edges), from the transport NCCL would use for that pair. Several nodes:
// the network class of the fabric (an intra-node hop slower than the
// network is not taken into account). fabric FabricAuto guesses from the
// NIC names.
func Route(res *model.Result, fabric Fabric) (Routing, error) {
	if res == nil || res.Analysis == nil || res.Search == nil {
		return Routing{}, fmt.Errorf("route: incomplete model result")
	}
	if fabric == FabricAuto {
		fabric = detectFabric(res.Analysis.Local)
	}
	rt := Routing{Fabric: fabric}
	for a := range rt.LinkFactor {
		rt.LinkFactor[a] = 1
	}
	pairs, err := res.Analysis.LocalPaths.GPUPairs()
	if err != nil {
		return Routing{}, fmt.Errorf("route: %w", err)
	}
	n := res.Analysis.Local.Count(topo.GPU)
	pc := make([]Class, n*n)
	pbw := make([]float64, n*n)
	for _, p := range pairs {
		pc[p.From*n+p.To] = pairClass(p, fabric)
		pbw[p.From*n+p.To] = float64(p.Bw)
	}
	nodes := 1
	if res.System != nil {
		nodes = res.System.Hosts
	}
	// On one node the ring closes inside the host; on several the last
	// GPU of a channel leaves through the network instead.
	ringIntra := graphClass(res.Search.Ring, pc, n, nodes == 1)
	rt.Intra = ringIntra
	if res.System != nil && res.System.NRanks() <= 1 {
		return rt, nil
	}
	for a := tune.Algorithm(0); a < tune.NumAlgorithms; a++ {
		if nodes > 1 {
			rt.Algo[a] = fabric.class()
			continue
		}
		var c Class
		switch a {
		case tune.Tree, tune.PAT:
			c = graphClass(res.Search.Tree, pc, n, false)
			rt.LinkFactor[a] = linkFactor(res.Search.Tree, pc, pbw, n, false)
		case tune.NVLS, tune.NVLSTree:
			c = ClassNVLink
		default:
			c = ringIntra
			rt.LinkFactor[a] = linkFactor(res.Search.Ring, pc, pbw, n, true)
		}
		if c == "" {
			c = ringIntra
		}
		rt.Algo[a] = c
	}
	return rt, nil
}

// pairClass is the class of the transport NCCL uses between two GPUs of a
// host.
func pairClass(p topo.GPUPair, fabric Fabric) Class {
	switch p.Transport {
	case topo.TransportP2P:
		if p.Via == "NVLink" {
			return ClassNVLink
		}
		return ClassPCIe
	case topo.TransportSHM:
		if p.Type >= topo.PathSYS {
			return ClassSHMXSocket
		}
		return ClassSHM
	}
	return fabric.class()
}

// graphClass is the slowest class over the hops between consecutive GPUs of
// g's channels; wrap adds the hop from the last GPU back to the first.
func graphClass(g *graph.Graph, pc []Class, n int, wrap bool) Class {
	if g == nil {
		return ""
	}
	var worst Class
	add := func(a, b int) {
		if a == b || a < 0 || b < 0 || a >= n || b >= n {
			return
		}
		c := pc[a*n+b]
		if c != "" && (worst == "" || c.slowness() > worst.slowness()) {
			worst = c
		}
	}
	for _, ch := range g.Channels {
		for i := 1; i < len(ch.GPUs); i++ {
			add(ch.GPUs[i-1], ch.GPUs[i])
		}
		if wrap && len(ch.GPUs) > 1 {
			add(ch.GPUs[len(ch.GPUs)-1], ch.GPUs[0])
		}
	}
	return worst
}

// linkFactor is Routing.LinkFactor for graph g on a single node.
func linkFactor(g *graph.Graph, pc []Class, pbw []float64, n int, wrap bool) float64 {
	if g == nil || g.NChannels <= 0 || g.BwIntra <= 0 {
		return 1
	}
	minBw := math.Inf(1)
	p2p := true
	hop := func(a, b int) {
		if a == b || a < 0 || b < 0 || a >= n || b >= n {
			return
		}
		c := pc[a*n+b]
		if c != ClassNVLink && c != ClassPCIe {
			p2p = false
		}
		minBw = math.Min(minBw, pbw[a*n+b])
	}
	for _, ch := range g.Channels {
		for i := 1; i < len(ch.GPUs); i++ {
			hop(ch.GPUs[i-1], ch.GPUs[i])
		}
		if wrap && len(ch.GPUs) > 1 {
			hop(ch.GPUs[len(ch.GPUs)-1], ch.GPUs[0])
		}
	}
	if !p2p || math.IsInf(minBw, 1) {
		return 1
	}
	return math.Max(1, minBw/(float64(g.NChannels)*float64(g.BwIntra)))
}
