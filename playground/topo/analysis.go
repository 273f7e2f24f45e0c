package topo

import (
	"fmt"

	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
)

// Transport is the NCCL transport that joins two ranks.
type Transport int

// Transports in NCCL's selection order (p2p, shm, net; transport.cc:15-18).
const (
	TransportP2P Transport = iota // CUDA P2P over NVLink or PCIe
	TransportSHM                  // staging through host shared memory
	TransportNET                  // the network plugin
)

// String names the transport as NCCL logs it.
func (t Transport) String() string {
	switch t {
	case TransportP2P:
		return "P2P"
	case TransportSHM:
		return "SHM"
	case TransportNET:
		return "NET"
	}
	return fmt.Sprintf("Transport(%d)", int(t))
}

// GPUPair describes how GPU From reaches GPU To on the same host.
type GPUPair struct {
	From, To  int
	Type      PathType // after NCCL's rerouting (PHB/SYS through the CPU when P2P is off)
	Bw        float32
	Transport Transport
	// Via says what carries a P2P connection: "NVLink" or "PCIe".
	Via string
	// Intermediate is the GPU relaying an NVB path, or -1.
	Intermediate int
	Read         bool // P2P read mode
	// NVMLBlocked is set when the P2P level allowed P2P but the driver does
	// not support it, so traffic falls back to SHM.
	NVMLBlocked bool
	// DirectType is the path type before NCCL rerouted the pair through the
	// CPU; Rerouted says whether it did.
	DirectType PathType
	Rerouted   bool
	// Reason explains the transport choice in a few words.
	Reason string
}

// GPUNetPair describes how a GPU reaches a NIC port.
type GPUNetPair struct {
	GPU, Net int
	Type     PathType
	Bw       float32
	GDR      GdrMode // for receives (GPU memory written by the NIC)
	GDRRead  GdrMode // for sends (GPU memory read by the NIC)
	PXNPeer  int     // GPU relaying a PXN path, or -1
}

// GPUPairs returns the path and transport for every ordered pair of distinct
// GPUs of the host, evaluated the way a connection would be set up: P2P if
// p2pCanConnect agrees, else SHM, else NET.
func (p *Paths) GPUPairs() ([]GPUPair, error) {
	n := len(p.sys.Nodes[GPU])
	out := make([]GPUPair, 0, n*(n-1))
	for a := 0; a < n; a++ {
		for b := 0; b < n; b++ {
			if a == b {
				continue
			}
			path := p.GPUPath(a, b)
			ok, chk, err := p.canP2P(a, b)
			if err != nil {
				return nil, err
			}
			first := p.firstCheck[a][b]
			pr := GPUPair{From: a, To: b, Type: path.Type, Bw: path.Bw, Intermediate: chk.Intermediate,
				Read: chk.Read, NVMLBlocked: first.NVMLBlocked || chk.NVMLBlocked,
				DirectType: p.direct[a][b], Rerouted: !first.P2P}
			switch {
			case ok:
				pr.Transport = TransportP2P
				pr.Via = "PCIe"
				if path.Type <= PathNVB {
					pr.Via = "NVLink"
				}
				if chk.Intermediate >= 0 {
					pr.Reason = fmt.Sprintf("through GPU %d", chk.Intermediate)
				}
			case p.canSHM(a, b):
				pr.Transport = TransportSHM
				pr.Reason = p.noP2PReason(a, b, pr)
			default:
				pr.Transport = TransportNET
				pr.Reason = "neither P2P nor SHM"
				if p.cfg.SHMDisable {
					pr.Reason += " (NCCL_SHM_DISABLE=1)"
				}
			}
			out = append(out, pr)
		}
	}
	return out, nil
}

// noP2PReason explains why a same-host pair does not use P2P.
func (p *Paths) noP2PReason(a, b int, pr GPUPair) string {
	switch {
	case pr.NVMLBlocked:
		return "driver reports no P2P (NVML)"
	case pr.Rerouted && pr.DirectType > p.p2pLevel():
		return fmt.Sprintf("%s beyond P2P level %s", pr.DirectType, p.p2pLevel())
	case pr.Type > p.p2pLevel():
		return fmt.Sprintf("%s beyond P2P level %s", pr.Type, p.p2pLevel())
	case p.CheckNet(a, b):
		return "network is faster"
	case !p.cudaCanAccessPeer(a, b):
		return "driver reports no P2P (cudaDeviceCanAccessPeer)"
	}
	return ""
}

// GPUNetPairs returns, for every GPU and NET port, the path NCCL uses and
// whether GPU Direct RDMA is enabled.
func (p *Paths) GPUNetPairs() []GPUNetPair {
	var out []GPUNetPair
	for g := range p.sys.Nodes[GPU] {
		for n := range p.sys.Nodes[NET] {
			q := p.NetPath(g, n)
			if q == nil {
				continue
			}
			out = append(out, GPUNetPair{GPU: g, Net: n, Type: q.Type, Bw: q.Bw,
				GDR: p.CheckGdr(g, n, false), GDRRead: p.CheckGdr(g, n, true), PXNPeer: p.PXNPeer(g, n)})
		}
	}
	return out
}

// Analysis is the state NCCL reaches before its graph search, seen from the
// first rank of the first host: paths on the host's full graph, the graph
// trimmed to the GPUs this rank can reach by P2P or SHM, and the search
// bounds (initTransportsRank,
// https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/init.cc#L1141-L1149).
type Analysis struct {
	// System and Paths describe the whole host as parsed.
	System *System
	Paths  *Paths
	// Local and LocalPaths are the graph after ncclTopoTrimSystem and the
	// recomputed paths; they are System and Paths when nothing was trimmed.
	Local      *System
	LocalPaths *Paths
	// Trimmed lists the GPU indices (of System) removed by the trim.
	Trimmed []int
	// Inter is system->inter: the job spans several hosts, or some GPUs of
	// this host are only reachable through the network.
	Inter bool
	// MaxBw and TotalBw are ncclTopoSearchInit's per-channel bounds.
	MaxBw, TotalBw float32
}

// Analyze runs path computation, trimming and search initialisation.
func Analyze(sys *System, env ncclenv.Env) (*Analysis, error) {
	if len(sys.Nodes[GPU]) == 0 {
		return nil, fmt.Errorf("topology has no GPU with a rank")
	}
	if len(sys.Nodes[CPU]) == 0 {
		return nil, fmt.Errorf("topology has no CPU")
	}
	cfg := NewConfig(env)
	paths, err := computePaths(sys, cfg)
	if err != nil {
		return nil, fmt.Errorf("compute paths: %w", err)
	}
	a := &Analysis{System: sys, Paths: paths, Local: sys, LocalPaths: paths}
	// ncclTopoTrimSystem (paths.cc:867-911): keep the GPUs in the domain of
	// the first GPU, where a domain joins GPUs whose path is better than NET.
	n := len(sys.Nodes[GPU])
	dom := make([]int, n)
	for g := 0; g < n; g++ {
		dom[g] = g
		for q := 0; q < g; q++ {
			if paths.GPUPath(g, q).Type < PathNET {
				dom[g] = min(dom[g], dom[q])
			}
		}
	}
	drop := make([]bool, n)
	for g := range dom {
		if dom[g] != dom[0] {
			drop[g] = true
			a.Trimmed = append(a.Trimmed, g)
		}
	}
	if len(a.Trimmed) > 0 {
		a.Local = sys.withoutGPUs(drop)
		if a.LocalPaths, err = computePaths(a.Local, cfg); err != nil {
			return nil, fmt.Errorf("recompute paths after trim: %w", err)
		}
	}
	a.Inter = len(a.Local.Nodes[GPU]) != sys.NRanks()
	a.MaxBw, a.TotalBw = searchInit(a.LocalPaths, a.Inter)
	return a, nil
}

// searchInit follows ncclTopoSearchInit
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/search.cc#L18-L54):
// maxBw is the best path bandwidth from a GPU to a NIC (multi-host) or to
// another GPU, totalBw the largest sum of a GPU's NVLinks or its PCI link.
func searchInit(p *Paths, inter bool) (maxBw, totalBw float32) {
	s := p.sys
	if !inter && len(s.Nodes[GPU]) == 1 {
		return LocBw, LocBw
	}
	target := DEV
	if inter {
		target = NET
	}
	for d := range s.Nodes[DEV] {
		row := p.row(NodeRef{DEV, d}, target)
		for i := range row {
			if len(row[i].Links) == 0 {
				continue
			}
			maxBw = max(maxBw, row[i].Bw)
		}
		var nvl, pci float32
		for _, li := range s.Nodes[DEV][d].Links {
			l := s.Links[li]
			if l.Type == LinkNVL {
				nvl += l.Bw
			}
			if l.Type == LinkPCI {
				pci = l.Bw
			}
		}
		totalBw = max(totalBw, max(pci, nvl))
	}
	return maxBw, totalBw
}

// withoutGPUs returns a copy of s without the GPU (rank) nodes marked in
// drop; their DEV nodes stay, as with ncclTopoRemoveNode(GPU).
func (s *System) withoutGPUs(drop []bool) *System {
	c := &System{Hosts: s.Hosts, P2P: s.P2P, Description: s.Description, Unknown: s.Unknown}
	newIdx := make([]int, len(s.Nodes[GPU]))
	k := 0
	for g := range s.Nodes[GPU] {
		if drop[g] {
			newIdx[g] = -1
			continue
		}
		newIdx[g] = k
		k++
	}
	remap := func(r NodeRef) (NodeRef, bool) {
		if r.Type != GPU {
			return r, true
		}
		if newIdx[r.Index] < 0 {
			return r, false
		}
		return NodeRef{GPU, newIdx[r.Index]}, true
	}
	for t := range s.Nodes {
		for i, n := range s.Nodes[t] {
			if NodeType(t) == GPU && drop[i] {
				continue
			}
			n.Links = nil
			if NodeType(t) == GPU {
				n.Index = newIdx[i]
			}
			if NodeType(t) == DEV && n.GPU.Peer >= 0 && n.GPU.Peer < len(newIdx) {
				n.GPU.Peer = newIdx[n.GPU.Peer]
			}
			c.Nodes[t] = append(c.Nodes[t], n)
		}
	}
	for t := range s.Nodes {
		for i, n := range s.Nodes[t] {
			from, ok := remap(NodeRef{NodeType(t), i})
			if !ok {
				continue
			}
			for _, li := range n.Links {
				l := s.Links[li]
				to, ok := remap(l.To)
				if !ok {
					continue
				}
				node := c.Node(from)
				node.Links = append(node.Links, int32(len(c.Links)))
				c.Links = append(c.Links, Link{Type: l.Type, Bw: l.Bw, From: from, To: to, Rev: -1})
			}
		}
	}
	c.linkReverse()
	return c
}
