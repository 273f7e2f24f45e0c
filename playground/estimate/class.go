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
	ClassNVLink       Class = "nvlink"        // CUDA P2P over NVLink through NVSwitches
	ClassNVLinkDirect Class = "nvlink-direct" // CUDA P2P over NVLink links that join two GPUs directly (a bridge, or an all-to-all board without NVSwitch)
	ClassPCIe         Class = "pcie"          // CUDA P2P over PCIe within one CPU socket
	ClassPCIeXSocket  Class = "pcie-xsocket"  // CUDA P2P over PCIe across CPU sockets (path SYS)
	ClassNetRDMA      Class = "net-rdma"      // the network through RDMA verbs: InfiniBand or RoCE
	ClassNetHost      Class = "net-host"      // RDMA verbs with the GPU-NIC traffic through a CPU: no GPUDirect RDMA, or GPUDirect RDMA across a host bridge or the sockets
	ClassNetTCP       Class = "net-tcp"       // the network through sockets (TCP, GPUDirect-TCPX/TCPXO)
	ClassSHM          Class = "shm"           // staging through host memory within one CPU socket
	ClassSHMXSocket   Class = "shm-xsocket"   // staging through host memory across CPU sockets
)

// Classes lists every class in the order above.
func Classes() []Class {
	return []Class{ClassNVLink, ClassNVLinkDirect, ClassPCIe, ClassPCIeXSocket, ClassNetRDMA, ClassNetHost, ClassNetTCP, ClassSHM, ClassSHMXSocket}
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
		return "NVLink P2P through NVSwitches"
	case ClassNVLinkDirect:
		return "NVLink P2P over direct links (bridge or all-to-all board, no NVSwitch)"
	case ClassPCIe:
		return "PCIe P2P"
	case ClassPCIeXSocket:
		return "PCIe P2P across sockets"
	case ClassNetRDMA:
		return "network, RDMA (InfiniBand/RoCE)"
	case ClassNetHost:
		return "network, RDMA with the GPU-NIC traffic through a CPU (no GPUDirect RDMA, or across the host bridge or sockets)"
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
	// Hops lists, per algorithm on a single node, the distinct hops of
	// the algorithm's graph with the physical quantities that bound them;
	// GraphBw is NCCL's search bandwidth of that graph (channels ×
	// per-channel bandwidth, GB/s). The calibrated plateau of a cell is
	// the slowest hop's physical bandwidth times the cell's share of the
	// graph bandwidth in NCCL's model (protocol and algorithm factors), so
	// that NCCL decides algorithm, protocol and channels while the
	// hardware sets the level. Empty for multi-node jobs, whose plateau is
	// the class efficiency times NCCL's own bandwidth, and for NVLS, whose
	// plateau in one node is NCCL's own NVLS bandwidth (switchReduced).
	Hops    [tune.NumAlgorithms][]Hop
	GraphBw [tune.NumAlgorithms]float64
}

// Hop is one kind of connection between consecutive GPUs of a graph.
type Hop struct {
	Class Class
	// PathBw is NCCL's bandwidth of the path (GB/s): for P2P over NVLink
	// the links × per-link bandwidth, for P2P over PCIe the narrowest PCIe
	// link between the GPUs (switch or root complex), for SHM the
	// narrowest link of the path through the CPU(s), which for a
	// cross-socket pair includes the inter-socket link.
	PathBw float64
	// PCIeBw is the narrower of the two GPUs' own PCIe links to their CPU
	// (GB/s, generation × width as NCCL's topology reads it), the links
	// SHM traffic crosses twice (device to host, host to device).
	PCIeBw float64
	// CrossSocket is set when the path crosses the inter-socket link
	// (path type SYS).
	CrossSocket bool
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
	pairs, err := res.Analysis.LocalPaths.GPUPairs()
	if err != nil {
		return Routing{}, fmt.Errorf("route: %w", err)
	}
	n := res.Analysis.Local.Count(topo.GPU)
	pc := make([]Class, n*n)
	hops := make([]Hop, n*n)
	lp := res.Analysis.LocalPaths
	cpuBw := func(g int) float64 {
		if c := lp.LocalCPU(g); c >= 0 {
			if pa := lp.Get(topo.NodeRef{Type: topo.GPU, Index: g}, topo.CPU, c); pa != nil {
				return float64(pa.Bw)
			}
		}
		return 0
	}
	// Without an NVSwitch every NVLink connects one pair of GPUs, so a
	// channel's hop to a peer uses only the links to that peer; with one,
	// every peer is reached over all of the GPU's links (NCCL keeps a
	// single NVS node, src/graph/topo.cc). The two are different paths
	// (a crossbar that serves every peer at the GPU's full link count,
	// against links owned by one pair) and are calibrated apart.
	direct := res.Analysis.Local.Count(topo.NVS) == 0
	for _, p := range pairs {
		c := pairClass(p, fabric)
		if c == ClassNVLink && direct {
			c = ClassNVLinkDirect
		}
		pc[p.From*n+p.To] = c
		hops[p.From*n+p.To] = Hop{Class: c, PathBw: float64(p.Bw), PCIeBw: math.Min(cpuBw(p.From), cpuBw(p.To)), CrossSocket: p.Type >= topo.PathSYS}
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
	netClass := fabric.class()
	if nodes > 1 && netClass == ClassNetRDMA && netThroughHost(res, lp) {
		netClass = ClassNetHost
	}
	for a := tune.Algorithm(0); a < tune.NumAlgorithms; a++ {
		if nodes > 1 {
			rt.Algo[a] = netClass
			continue
		}
		var c Class
		switch a {
		case tune.Tree, tune.PAT:
			c = graphClass(res.Search.Tree, pc, n, false)
			rt.Hops[a], rt.GraphBw[a] = graphHops(res.Search.Tree, hops, n, false, direct)
		case tune.NVLS, tune.NVLSTree:
			c = ClassNVLink
		case tune.Ring:
			c = ringIntra
			rt.Hops[a], rt.GraphBw[a] = graphHops(res.Search.Ring, hops, n, true, direct)
		default:
			c = ringIntra
		}
		if c == "" {
			c = ringIntra
		}
		rt.Algo[a] = c
	}
	return rt, nil
}

// netThroughHost reports whether a ring channel of a multi-node job moves
// its network traffic through a CPU: a GPU receiving from the network
// (NetIn) without GPUDirect RDMA, a GPU sending to it (NetOut) without
// GPUDirect RDMA reads, or a GPU-NIC path that crosses a PCIe host bridge
// or the inter-socket link (type PHB or SYS). Without GPUDirect RDMA the
// proxy stages every transfer in host memory (src/transport/net.cc: the
// buffers are cudaHostAlloc'ed unless GDR is on); with it across a host
// bridge the NIC's DMA crosses the root complex. Either way the bandwidth
// is set by the host, not by the NIC's line rate that NCCL's search
// assumes (ncclTopoCheckGdr,
// https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/paths.cc#L468-L549).
func netThroughHost(res *model.Result, lp *topo.Paths) bool {
	if res.Search == nil || res.Search.Ring == nil || lp == nil {
		return false
	}
	through := func(g, n int, read bool) bool {
		if g < 0 || n < 0 {
			return false
		}
		if lp.CheckGdr(g, n, read) == topo.GdrDisabled {
			return true
		}
		q := lp.NetPath(g, n)
		return q != nil && q.Type >= topo.PathPHB
	}
	for _, ch := range res.Search.Ring.Channels {
		if len(ch.GPUs) == 0 {
			continue
		}
		if through(ch.GPUs[0], ch.NetIn, false) || through(ch.GPUs[len(ch.GPUs)-1], ch.NetOut, true) {
			return true
		}
	}
	return false
}

// pairClass is the class of the transport NCCL uses between two GPUs of a
// host.
func pairClass(p topo.GPUPair, fabric Fabric) Class {
	switch p.Transport {
	case topo.TransportP2P:
		if p.Via == "NVLink" {
			return ClassNVLink
		}
		if p.Type >= topo.PathSYS {
			return ClassPCIeXSocket
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

// graphHops lists the distinct hops between consecutive GPUs of g's
// channels (wrap adds the hop from the last GPU back to the first) and
// NCCL's bandwidth of the graph, channels × per-channel bandwidth.
//
// With direct NVLink (no NVSwitch: direct is set) the links between two
// GPUs carry only the channels that step from one to the other. Every
// channel moves the same share of the traffic, so a pair used by k of the
// graph's C channels limits the whole graph to its links' bandwidth × C/k:
// the hop's bandwidth is scaled by that factor. A 4-GPU board with 6
// links per pair whose rings alternate over all three peers thus reaches
// about three pairs' worth, as the GPU's 18 links allow; a bridged pair
// (every channel on the same peer) keeps the pair's links.
func graphHops(g *graph.Graph, hops []Hop, n int, wrap, direct bool) ([]Hop, float64) {
	if g == nil || g.NChannels <= 0 || g.BwIntra <= 0 {
		return nil, 0
	}
	var edges [][2]int
	for _, ch := range g.Channels {
		for i := 1; i < len(ch.GPUs); i++ {
			edges = append(edges, [2]int{ch.GPUs[i-1], ch.GPUs[i]})
		}
		if wrap && len(ch.GPUs) > 1 {
			edges = append(edges, [2]int{ch.GPUs[len(ch.GPUs)-1], ch.GPUs[0]})
		}
	}
	uses := map[[2]int]int{}
	for _, e := range edges {
		uses[e]++
	}
	var out []Hop
	seen := map[Hop]bool{}
	for _, e := range edges {
		a, b := e[0], e[1]
		if a == b || a < 0 || b < 0 || a >= n || b >= n {
			continue
		}
		h := hops[a*n+b]
		if h.Class == "" {
			continue
		}
		if direct && h.Class == ClassNVLinkDirect && len(g.Channels) > 0 {
			h.PathBw *= float64(len(g.Channels)) / float64(uses[e])
		}
		if seen[h] {
			continue
		}
		seen[h] = true
		out = append(out, h)
	}
	return out, float64(g.NChannels) * float64(g.BwIntra)
}
