package topo

import (
	"fmt"

	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
)

// Path is the best route from one node to another (ncclTopoLinkList).
type Path struct {
	Type PathType
	Bw   float32 // bottleneck bandwidth, GB/s
	// Links are indices into System.Links from the source to the destination.
	Links []int32
}

// Count is the number of hops.
func (p *Path) Count() int { return len(p.Links) }

// GdrMode is the GPUDirect RDMA decision for a GPU-NIC pair (ncclTopoGdrMode).
type GdrMode int

// GPUDirect RDMA modes.
const (
	GdrDisabled GdrMode = iota
	GdrDefault
	GdrPCI // forced PCIe mapping on C2C platforms
)

// String names the mode as NCCL's ncclTopoGdrModeStr does.
func (m GdrMode) String() string {
	switch m {
	case GdrDefault:
		return "Default"
	case GdrPCI:
		return "PCI"
	}
	return "Disabled"
}

// Paths holds the best paths between nodes of one System after NCCL's
// adjustments (P2P rerouting, PXN, GDR), computed by ComputePaths. It is
// read-only for its users.
type Paths struct {
	sys *System
	cfg Config
	// to[dst type][src type][src index] is the row of paths from that source
	// to every node of dst type; nil when the source was never reached.
	to [NumNodeTypes][NumNodeTypes][][]Path
	// pxnPeer[g][n] is the GPU relaying GPU g's traffic to NET n, or -1.
	pxnPeer [][]int
	// localGPU[n] is ncclTopoGetLocalGpu for NET n.
	localGPU []int
	// direct[q][g] is the GPU q -> GPU g path type before NCCL's P2P
	// rerouting and firstCheck[q][g] the P2P decision that drove it.
	direct     [][]PathType
	firstCheck [][]P2PCheck
	// linkArena and pathArena hand out the many small slices path
	// computation needs from a few large allocations.
	linkArena []int32
	pathArena []Path
}

// allocLinks returns a slice of n link indices whose capacity is exactly n,
// so appending to it never overwrites its neighbours.
func (p *Paths) allocLinks(n int) []int32 {
	if cap(p.linkArena)-len(p.linkArena) < n {
		p.linkArena = make([]int32, 0, max(8192, n))
	}
	l := len(p.linkArena)
	p.linkArena = p.linkArena[:l+n]
	return p.linkArena[l : l+n : l+n]
}

// allocRow returns n paths, all DIS, from the path arena.
func (p *Paths) allocRow(n int) []Path {
	if cap(p.pathArena)-len(p.pathArena) < n {
		p.pathArena = make([]Path, 0, max(2048, n))
	}
	l := len(p.pathArena)
	p.pathArena = p.pathArena[:l+n]
	row := p.pathArena[l : l+n : l+n]
	for i := range row {
		row[i] = Path{Type: PathDIS}
	}
	return row
}

// System returns the graph the paths were computed on.
func (p *Paths) System() *System { return p.sys }

// Config returns the environment settings the paths were computed with.
func (p *Paths) Config() Config { return p.cfg }

// Get returns the path from src to node di of type dt, or nil when none was
// computed (the destination type is not one NCCL computes paths to, or src was
// never reached).
func (p *Paths) Get(src NodeRef, dt NodeType, di int) *Path {
	row := p.row(src, dt)
	if row == nil || di < 0 || di >= len(row) {
		return nil
	}
	return &row[di]
}

func (p *Paths) row(src NodeRef, dt NodeType) []Path {
	rows := p.to[dt][src.Type]
	if rows == nil || src.Index < 0 || src.Index >= len(rows) {
		return nil
	}
	return rows[src.Index]
}

// GPUPath returns the path between GPU indices a and b.
func (p *Paths) GPUPath(a, b int) *Path { return p.Get(NodeRef{GPU, a}, GPU, b) }

// NetPath returns the path from GPU g to NET n.
func (p *Paths) NetPath(g, n int) *Path { return p.Get(NodeRef{GPU, g}, NET, n) }

// LocalGPU returns the GPU closest to NET n that picks it for channel 0 or a
// later channel (ncclTopoGetLocalGpu), or -1.
func (p *Paths) LocalGPU(n int) int {
	if n < 0 || n >= len(p.localGPU) {
		return -1
	}
	return p.localGPU[n]
}

// PXNPeer returns the GPU that relays GPU g's traffic to NET n when the path
// is of type PXN, or -1.
func (p *Paths) PXNPeer(g, n int) int {
	if g < 0 || g >= len(p.pxnPeer) || n < 0 || n >= len(p.pxnPeer[g]) {
		return -1
	}
	return p.pxnPeer[g][n]
}

func (p *Paths) ensure(bt NodeType, r NodeRef) []Path {
	if p.to[bt][r.Type] == nil {
		p.to[bt][r.Type] = make([][]Path, len(p.sys.Nodes[r.Type]))
	}
	row := p.to[bt][r.Type][r.Index]
	if row == nil {
		row = p.allocRow(len(p.sys.Nodes[bt]))
		p.to[bt][r.Type][r.Index] = row
	}
	return row
}

// setPaths runs the breadth-first search from base and stores, at every
// reached node, its best path to base (ncclTopoSetPaths,
// https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/paths.cc#L38-L130).
// A path's bandwidth is the minimum over its links and its type the worst
// hop, with PCI-PCI hops counting as PXB, hops through a CPU as PHB, and one
// NVLink relay through another GPU as NVB. A GPU (DEV) node is crossed only as
// the last hop to its rank node or as a single NVLink relay.
func (p *Paths) setPaths(base NodeRef) error {
	sys := p.sys
	bt, bi := base.Type, base.Index
	baseRow := p.ensure(bt, base)
	baseRow[bi] = Path{Type: PathLOC, Bw: LocBw}
	maxLen := 1
	baseDev := base
	if bt == GPU {
		maxLen = 2
		baseDev = NodeRef{DEV, sys.Node(base).GPU.Peer}
	}
	list := []NodeRef{base}
	var next []NodeRef
	for len(list) > 0 {
		next = next[:0]
		for _, node := range list {
			path := &p.to[bt][node.Type][node.Index][bi]
			for _, li := range sys.Node(node).Links {
				link := &sys.Links[li]
				rem := link.To
				remRow := p.ensure(bt, rem)
				remPath := &remRow[bi]
				bw := min(path.Bw, link.Bw)
				if node != baseDev && node.Type == DEV && (link.Type != LinkLOC || rem.Type != GPU) &&
					(p.cfg.NVBDisable || link.Type != LinkNVL || rem.Type != DEV || len(path.Links) > maxLen) {
					continue
				}
				newType := PathType(link.Type)
				if link.Type == LinkNET {
					newType = PathLOC
				}
				if node.Type == PCI && rem.Type == PCI {
					newType = PathPXB
				}
				if link.Type == LinkPCI && (node.Type == CPU || rem.Type == CPU) {
					newType = PathPHB
				}
				if node.Type == DEV && path.Type == PathNVL && newType == PathNVL && len(path.Links) == maxLen {
					newType = PathNVB
				}
				newType = max(path.Type, newType)
				if newType < remPath.Type || (newType == remPath.Type && remPath.Bw < bw) ||
					(newType == remPath.Type && remPath.Bw == bw && len(remPath.Links) > len(path.Links)+1) {
					if link.Rev < 0 {
						return fmt.Errorf("no reverse link from %s to %s (a one-sided <nvlink> or <pcilink>); NCCL fails with \"Failed to find reverse path\"",
							sys.Label(rem), sys.Label(node))
					}
					links := remPath.Links
					if cap(links) < len(path.Links)+1 {
						links = p.allocLinks(len(path.Links) + 1)
					}
					links = links[:len(path.Links)+1]
					links[0] = link.Rev
					copy(links[1:], path.Links)
					remPath.Links, remPath.Bw, remPath.Type = links, bw, newType
					found := false
					for _, n := range next {
						if n == rem {
							found = true
							break
						}
					}
					if !found {
						next = append(next, rem)
					}
				}
			}
		}
		list, next = next, list
	}
	return nil
}

// mergePathType combines the two halves of a rerouted path (paths.cc:203-208).
func mergePathType(a, b PathType) PathType {
	hi, lo := max(a, b), min(a, b)
	if hi == PathPHB && lo == PathC2C {
		return PathP2C
	}
	return hi
}

// addInterStep replaces the path src->dst with src->via->dst (addInterStep,
// paths.cc:210-228). Going through a GPU makes it a PXN path.
func (p *Paths) addInterStep(via, src NodeRef, dt NodeType, di int) {
	first := p.Get(src, via.Type, via.Index)
	second := p.Get(via, dt, di)
	out := p.Get(src, dt, di)
	if first == nil || second == nil || out == nil {
		return
	}
	links := p.allocLinks(len(first.Links) + len(second.Links))
	copy(links, first.Links)
	copy(links[len(first.Links):], second.Links)
	t := mergePathType(first.Type, second.Type)
	if via.Type == GPU {
		t = PathPXN
	}
	*out = Path{Type: t, Bw: min(first.Bw, second.Bw), Links: links}
}

// Local returns the nodes of type rt with the best (highest bandwidth,
// then lowest type) path from src (ncclTopoGetLocal,
// https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/topo.cc#L1943-L1972).
func (p *Paths) Local(src NodeRef, rt NodeType) ([]int, PathType) {
	row := p.row(src, rt)
	var locals []int
	minType, maxBw, pathType := PathDIS, float32(0), PathDIS
	for i := range row {
		if row[i].Bw > maxBw || (row[i].Bw == maxBw && row[i].Type < minType) {
			maxBw, minType = row[i].Bw, row[i].Type
			pathType = minType
			locals = locals[:0]
		}
		if row[i].Bw == maxBw && row[i].Type == minType {
			locals = append(locals, i)
		}
	}
	return locals, pathType
}

// LocalCPU returns the CPU closest to GPU g (ncclGetLocalCpu, paths.cc:188-201).
func (p *Paths) LocalCPU(g int) int {
	cpus, _ := p.Local(NodeRef{GPU, g}, CPU)
	if len(cpus) == 0 {
		return -1
	}
	row := p.row(NodeRef{GPU, g}, CPU)
	best := cpus[0]
	for _, c := range cpus[1:] {
		if len(row[c].Links) < len(row[best].Links) {
			best = c
		}
	}
	return best
}

func isPow2(v int) bool { return v&(v-1) == 0 }

func mirrorBits(v, pow2 int) int {
	m := 0
	for b, mb := 1, pow2>>1; b < pow2; b, mb = b<<1, mb>>1 {
		if v&b != 0 {
			m |= mb
		}
	}
	return m
}

// LocalNet returns the NET index GPU g uses for the given channel
// (ncclTopoGetLocalNetType,
// https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/topo.cc#L2039-L2076),
// or -1 when there is no NET. GPUs sharing their closest NICs are spread over
// them by NVML index (bit-mirrored when the NIC count is a power of two) and
// each GPU rotates over netsPerGpu NICs by channel.
func (p *Paths) LocalNet(g, channel int) int {
	nets, base, perGPU := p.localNets(g)
	if len(nets) == 0 {
		return -1
	}
	return nets[(base+channel%perGPU)%len(nets)]
}

// localNets returns GPU g's closest NICs and how LocalNet indexes them.
func (p *Paths) localNets(g int) (nets []int, base, perGPU int) {
	if len(p.sys.Nodes[NET]) == 0 {
		return nil, 0, 1
	}
	nets, _ = p.Local(NodeRef{GPU, g}, NET)
	if len(nets) == 0 {
		return nil, 0, 1
	}
	gpus, _ := p.Local(NodeRef{NET, nets[0]}, GPU)
	if len(gpus) == 0 {
		return nil, 0, 1
	}
	switch p.cfg.NetDevsPolicy {
	case NetDevsAll:
		perGPU = len(nets)
	case NetDevsMax:
		perGPU = min(p.cfg.NetDevsMax, len(nets))
	default:
		perGPU = (len(nets) + len(gpus) - 1) / len(gpus)
	}
	base = p.sys.Nodes[GPU][g].GPU.Dev % len(gpus)
	if base < 0 {
		base += len(gpus)
	}
	if isPow2(len(nets)) {
		base = mirrorBits(base, len(nets))
	}
	return nets, base, max(perGPU, 1)
}

// LocalNets lists the NICs GPU g uses channel after channel, in the order
// of the channels, until the first one repeats (the loop of
// ncclTopoPrefNetsChannelFirst, search.cc:507-529).
func (p *Paths) LocalNets(g int) []int {
	nets, base, perGPU := p.localNets(g)
	var out []int
	for c := 0; c < maxChannels && len(nets) > 0; c++ {
		n := nets[(base+c%perGPU)%len(nets)]
		if len(out) > 0 && n == out[0] {
			break
		}
		out = append(out, n)
	}
	return out
}

// computeLocalGPU is ncclTopoGetLocalGpu
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/topo.cc#L2110-L2135):
// the first GPU, trying channels in order, whose local NIC is n.
//
// memo, when not nil, holds localNets per GPU for paths that have not
// changed since it was filled (see localNetsMemo).
func (p *Paths) computeLocalGPU(n int, memo *localNetsMemo) int {
	gpus, _ := p.Local(NodeRef{NET, n}, GPU)
	infos := make([]localNetsInfo, len(gpus))
	for i, g := range gpus {
		infos[i] = memo.get(p, g)
	}
	for c := 0; c < maxChannels; c++ {
		for i, g := range gpus {
			in := infos[i]
			if len(in.nets) > 0 && in.nets[(in.base+c%in.perGPU)%len(in.nets)] == n {
				return g
			}
		}
	}
	return -1
}

// localNetsInfo is what localNets returns for one GPU.
type localNetsInfo struct {
	nets         []int
	base, perGPU int
}

// localNetsMemo keeps localNets per GPU while the paths stay as they are:
// ncclTopoGetLocalGpu asks it of every GPU near a NIC, and NCCL calls that
// for every GPU x NIC pair (on 72 GPUs and 252 NICs, 1.3 million localNets
// calls and 3.4 GB of garbage). A nil memo computes every time.
type localNetsMemo struct {
	info []localNetsInfo
	ok   []bool
}

func newLocalNetsMemo(ngpus int) *localNetsMemo {
	return &localNetsMemo{info: make([]localNetsInfo, ngpus), ok: make([]bool, ngpus)}
}

// get returns localNets(g), from the memo when it has it.
func (m *localNetsMemo) get(p *Paths, g int) localNetsInfo {
	if m == nil || g < 0 || g >= len(m.ok) {
		nets, base, perGPU := p.localNets(g)
		return localNetsInfo{nets, base, perGPU}
	}
	if !m.ok[g] {
		nets, base, perGPU := p.localNets(g)
		m.info[g], m.ok[g] = localNetsInfo{nets, base, perGPU}, true
	}
	return m.info[g]
}

// reset forgets every entry: a path has changed.
func (m *localNetsMemo) reset() { clear(m.ok) }

// maxChannels is MAXCHANNELS (device.h:91).
const maxChannels = 64

// nvmlP2POK says whether NVML reports P2P read and write status OK between
// the physical GPUs of GPU indices a and b, according to the system's P2P
// capability.
func (p *Paths) nvmlP2POK(a, b int) bool {
	switch p.sys.P2P {
	case P2PNone:
		return false
	case P2PNVLink:
		return p.nvlinkConnected(a, b)
	}
	return true
}

// nvlinkConnected reports a direct NVLink (or a shared NVSwitch) between the
// physical GPUs of GPU indices a and b.
func (p *Paths) nvlinkConnected(a, b int) bool {
	s := p.sys
	da, db := NodeRef{DEV, s.Nodes[GPU][a].GPU.Peer}, NodeRef{DEV, s.Nodes[GPU][b].GPU.Peer}
	viaNVS := func(d NodeRef) bool {
		for _, li := range s.Node(d).Links {
			if l := s.Links[li]; l.Type == LinkNVL && l.To.Type == NVS {
				return true
			}
		}
		return false
	}
	for _, li := range s.Node(da).Links {
		if l := s.Links[li]; l.Type == LinkNVL && l.To == db {
			return true
		}
	}
	return viaNVS(da) && viaNVS(db)
}

// P2PCheck is the outcome of ncclTopoCheckP2p for one ordered GPU pair.
type P2PCheck struct {
	P2P          bool // within NCCL_P2P_LEVEL and allowed by NVML
	Read         bool // P2P read mode (NVLink between two sm80 GPUs)
	Intermediate int  // GPU relaying an NVB path, or -1
	NVMLBlocked  bool // the level allowed P2P but NVML reported it unsupported
}

// P2PLevel returns the P2P level in force: PXB by default, SYS on AMD x86
// systems with at most two GPUs, or the user's NCCL_P2P_LEVEL/NCCL_P2P_DISABLE.
func (p *Paths) P2PLevel() PathType { return p.p2pLevel() }

// p2pLevel returns the default or user P2P level for this system.
func (p *Paths) p2pLevel() PathType {
	level := PathPXB
	arch, vendor, _ := p.sys.CPUType()
	if arch == ArchX86 && vendor == VendorAMD && len(p.sys.Nodes[DEV]) <= 2 {
		level = PathSYS
	}
	if p.cfg.UserP2PLevel >= 0 {
		level = p.cfg.UserP2PLevel
	}
	return level
}

// CheckP2P follows ncclTopoCheckP2p for two GPUs of the same host
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/paths.cc#L298-L434):
// P2P is used when the path type is at most the P2P level (PXB by default,
// SYS on AMD CPUs with at most two GPUs, or NCCL_P2P_LEVEL/NCCL_P2P_DISABLE)
// and NVML reports P2P OK for every hop. An NVLink-connected pair without
// NVML P2P is an error unless NCCL_IGNORE_DISABLED_P2P is set.
func (p *Paths) CheckP2P(g1, g2 int) (P2PCheck, error) {
	res := P2PCheck{Intermediate: -1}
	path := p.GPUPath(g1, g2)
	if path == nil {
		return res, nil
	}
	if len(path.Links) == 4 {
		// GPU1 - DEV1 - DEV2 - DEV3 - GPU2: the relay is DEV2.
		mid := p.sys.Links[path.Links[1]].To
		if mid.Type == DEV {
			res.Intermediate = p.sys.Nodes[DEV][mid.Index].GPU.Peer
		}
	}
	if path.Type <= p.p2pLevel() {
		res.P2P = true
	}
	checkNVML := p.cfg.IgnoreDisabledP2P != 2 && g1 != g2
	if res.P2P && checkNVML {
		hops := [][2]int{{g1, g2}}
		if res.Intermediate >= 0 {
			hops = [][2]int{{g1, res.Intermediate}, {res.Intermediate, g2}}
		}
		for _, h := range hops {
			if p.nvmlP2POK(h[0], h[1]) {
				continue
			}
			if p.cfg.IgnoreDisabledP2P == 0 && path.Type <= PathNVB {
				return res, fmt.Errorf("P2P is disabled between NVLink-connected GPUs %d and %d (P2P support %q); NCCL fails with ncclUnhandledCudaError unless NCCL_IGNORE_DISABLED_P2P=1",
					h[0], h[1], p.sys.P2P)
			}
			res.P2P = false
			res.NVMLBlocked = true
		}
	}
	if path.Type == PathNVL {
		a, b := p.sys.Nodes[GPU][g1].GPU.SM, p.sys.Nodes[GPU][g2].GPU.SM
		res.Read = a == b && a == 80
	}
	return res, nil
}

// CheckNet says whether going through the network would be faster than the
// GPU-GPU path: both GPUs must reach a NIC at PXB or better with more
// bandwidth than their direct path (ncclTopoCheckNet, paths.cc:602-631).
func (p *Paths) CheckNet(g1, g2 int) bool {
	if p.cfg.NetDisableIntra {
		return false
	}
	path := p.GPUPath(g1, g2)
	if path == nil {
		return false
	}
	speed := path.Bw
	var n1, n2 float32
	for n := range p.sys.Nodes[NET] {
		if q := p.NetPath(g1, n); q != nil && q.Type <= PathPXB && q.Bw > n1 {
			n1 = q.Bw
		}
		if q := p.NetPath(g2, n); q != nil && q.Type <= PathPXB && q.Bw > n2 {
			n2 = q.Bw
		}
	}
	return n1 > speed && n2 > speed
}

// cudaCanAccessPeer models cudaDeviceCanAccessPeer with the system's P2P
// capability (the same driver property NVML reports).
func (p *Paths) cudaCanAccessPeer(a, b int) bool { return p.nvmlP2POK(a, b) }

// canP2P follows p2pCanConnect for two GPUs of the same host
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/transport/p2p.cc#L130-L210),
// assuming working CUDA IPC.
func (p *Paths) canP2P(g1, g2 int) (bool, P2PCheck, error) {
	chk, err := p.CheckP2P(g1, g2)
	if err != nil || !chk.P2P {
		return false, chk, err
	}
	if chk.Intermediate >= 0 {
		return !p.cfg.P2PUseCudaMemcpy, chk, nil
	}
	if p.CheckNet(g1, g2) {
		return false, chk, nil
	}
	return p.cudaCanAccessPeer(g1, g2), chk, nil
}

// canSHM follows shmCanConnect for two GPUs of the same host (shm.cc:61-83).
func (p *Paths) canSHM(g1, g2 int) bool {
	return !p.cfg.SHMDisable && !p.CheckNet(g1, g2)
}

// CheckGdr follows ncclTopoCheckGdr
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/paths.cc#L468-L549):
// both ends must support GDR, reads (sends) need sm80+, an NVLink peer or
// NCCL_NET_GDR_READ, and the path (or, for PXN, the relay's path) must be
// at most P2C (NCCL_NET_GDR_C2C=1) or PXB, unless NCCL_NET_GDR_LEVEL says
// otherwise.
func (p *Paths) CheckGdr(g, n int, read bool) GdrMode {
	s := p.sys
	net, gpu := s.Nodes[NET][n].Net, s.Nodes[GPU][g].GPU
	if !net.GDR || !gpu.GDR {
		return GdrDisabled
	}
	if read {
		if p.cfg.NetGDRRead == 0 {
			return GdrDisabled
		}
		if p.cfg.NetGDRRead < 0 && gpu.SM < 80 {
			nvlink := len(s.Nodes[GPU]) == 1
			for i := range s.Nodes[GPU] {
				if i != g {
					if q := p.GPUPath(g, i); q != nil && q.Type == PathNVL {
						nvlink = true
						break
					}
				}
			}
			if !nvlink {
				return GdrDisabled
			}
		}
	}
	level := PathPXB
	if p.cfg.NetGDRC2C {
		level = PathP2C
	}
	if p.cfg.UserGDRLevel >= 0 {
		level = p.cfg.UserGDRLevel
	}
	q := p.NetPath(g, n)
	if q == nil {
		return GdrDisabled
	}
	distance := q.Type
	if distance == PathPXN {
		if peer := p.PXNPeer(g, n); peer >= 0 {
			g = peer
			distance = p.NetPath(g, n).Type
		}
	}
	if distance > level {
		return GdrDisabled
	}
	if c := p.LocalCPU(g); c >= 0 {
		if cp := p.Get(NodeRef{GPU, g}, CPU, c); cp != nil && cp.Type == PathC2C && distance != PathP2C {
			return GdrPCI
		}
	}
	return GdrDefault
}

// ComputePaths computes every path NCCL needs on sys with the NCCL variables
// in env, following ncclTopoComputePaths
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/paths.cc#L721-L865).
func ComputePaths(sys *System, env ncclenv.Env) (*Paths, error) {
	return computePaths(sys, NewConfig(env))
}

func computePaths(sys *System, cfg Config) (*Paths, error) {
	p := &Paths{sys: sys, cfg: cfg}
	for _, t := range []NodeType{CPU, DEV, GPU, NET, NVS} {
		for i := range sys.Nodes[t] {
			if err := p.setPaths(NodeRef{t, i}); err != nil {
				return nil, fmt.Errorf("paths from %s: %w", sys.Label(NodeRef{t, i}), err)
			}
		}
	}
	nGPU, nNET := len(sys.Nodes[GPU]), len(sys.Nodes[NET])
	p.pxnPeer = make([][]int, nGPU)
	for g := range p.pxnPeer {
		p.pxnPeer[g] = make([]int, nNET)
		for n := range p.pxnPeer[g] {
			p.pxnPeer[g][n] = -1
		}
	}

	p.direct = make([][]PathType, nGPU)
	p.firstCheck = make([][]P2PCheck, nGPU)
	for q := range p.direct {
		p.direct[q] = make([]PathType, nGPU)
		p.firstCheck[q] = make([]P2PCheck, nGPU)
	}
	// Divert GPU-GPU traffic through the destination's CPU when P2P is not
	// possible, and mark pairs that neither P2P nor SHM can join.
	for g := 0; g < nGPU; g++ {
		for q := 0; q < nGPU; q++ {
			chk, err := p.CheckP2P(q, g)
			if err != nil {
				return nil, err
			}
			p.direct[q][g] = p.GPUPath(q, g).Type
			p.firstCheck[q][g] = chk
			if !chk.P2P {
				if cpu := p.LocalCPU(g); cpu >= 0 {
					p.addInterStep(NodeRef{CPU, cpu}, NodeRef{GPU, q}, GPU, g)
				}
			}
		}
		for q := 0; q < nGPU; q++ {
			if q == g {
				continue
			}
			ok, _, err := p.canP2P(q, g)
			if err != nil {
				return nil, err
			}
			if !ok && !p.canSHM(q, g) {
				p.GPUPath(q, g).Type = PathNET
			}
		}
	}

	// GPU->NIC through C2C then PHB becomes P2C when the NIC is the closest.
	for g := 0; g < nGPU; g++ {
		c := p.LocalCPU(g)
		if c < 0 {
			continue
		}
		nets, _ := p.Local(NodeRef{GPU, g}, NET)
		for _, n := range nets {
			gc, nc := p.Get(NodeRef{GPU, g}, CPU, c), p.Get(NodeRef{NET, n}, CPU, c)
			if gc == nil || nc == nil {
				continue
			}
			if mergePathType(gc.Type, nc.Type) == PathP2C {
				gp, np := p.NetPath(g, n), p.Get(NodeRef{NET, n}, GPU, g)
				gp.Type = min(PathP2C, gp.Type)
				np.Type = min(PathP2C, np.Type)
			}
		}
	}

	// PXN and GPU Direct RDMA adjustments for each NIC. NCCL asks for NET
	// n's local GPU once per GPU; the answer reads only paths, so it is
	// computed again only after addInterStep has changed one.
	memo := newLocalNetsMemo(nGPU)
	for n := 0; n < nNET; n++ {
		peer, fresh := -1, false
		for g := 0; g < nGPU; g++ {
			gp := p.NetPath(g, n)
			if gp == nil {
				continue
			}
			if !cfg.PXNDisable {
				if !fresh {
					peer, fresh = p.computeLocalGPU(n, memo), true
				}
				if peer != g && peer != -1 {
					pxnType := PathPXB
					if cfg.PXNC2C {
						pxnType = PathP2C
					}
					pp, pg := p.NetPath(peer, n), p.GPUPath(peer, g)
					if pp != nil && pg != nil && pp.Type <= pxnType && p.CheckGdr(peer, n, true) != GdrDisabled &&
						pg.Type <= PathNVL && (pp.Bw > gp.Bw || gp.Type > PathPXN) {
						p.addInterStep(NodeRef{GPU, peer}, NodeRef{GPU, g}, NET, n)
						p.pxnPeer[g][n] = peer
						fresh = false
						memo.reset()
					}
				}
			}
			if gp.Type < PathPHB && p.CheckGdr(g, n, false) == GdrDisabled {
				if cpu := p.LocalCPU(g); cpu >= 0 {
					p.addInterStep(NodeRef{CPU, cpu}, NodeRef{NET, n}, GPU, g)
					p.addInterStep(NodeRef{CPU, cpu}, NodeRef{GPU, g}, NET, n)
					fresh = false
					memo.reset()
				}
			}
		}
	}
	p.localGPU = make([]int, nNET)
	memo.reset()
	for n := range p.localGPU {
		p.localGPU[n] = p.computeLocalGPU(n, memo)
	}
	return p, nil
}

// MinGPUPath and MaxGPUPath return the best and worst path type from any GPU
// to any node of type t, skipping a GPU's path to itself
// (ncclTopoGetGpuMinPath/MaxPath, paths.cc:1029-1055).
func (p *Paths) MinGPUPath(t NodeType) PathType {
	m := PathSYS
	for g := range p.sys.Nodes[GPU] {
		row := p.row(NodeRef{GPU, g}, t)
		for j := range row {
			if t == GPU && j == g {
				continue
			}
			m = min(m, row[j].Type)
		}
	}
	return m
}

// MaxGPUPath is the counterpart of MinGPUPath.
func (p *Paths) MaxGPUPath(t NodeType) PathType {
	m := PathLOC
	for g := range p.sys.Nodes[GPU] {
		row := p.row(NodeRef{GPU, g}, t)
		for j := range row {
			if t == GPU && j == g {
				continue
			}
			m = max(m, row[j].Type)
		}
	}
	return m
}

// SplitNVLink reports two NVLink domains joined by a slower link
// (ncclTopoSplitNvLink, paths.cc:1076-1107).
func (p *Paths) SplitNVLink() bool {
	n := len(p.sys.Nodes[GPU])
	dom := make([]int, n)
	for g := range dom {
		dom[g] = g
	}
	for g := 0; g < n; g++ {
		for q := g + 1; q < n; q++ {
			if p.GPUPath(g, q).Type == PathNVL {
				dom[q] = dom[g]
			}
		}
	}
	count := make([]int, n)
	for g := range dom {
		count[dom[g]]++
	}
	domains := 0
	for _, c := range count {
		if c > 1 {
			domains++
		}
	}
	return domains == 2
}
