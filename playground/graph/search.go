package graph

import (
	"context"
	"math/bits"
	"runtime"
	"slices"

	"github.com/distributed-nav/distributed-nav/playground/topo"
)

// Budgets of the search, counted in ncclTopoSearchRecGpu calls
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/search.cc#L331-L338).
const (
	searchGlobalTimeout       = 1 << 19
	searchTimeout             = 1 << 14
	searchTimeoutTree         = 1 << 14
	searchTimeoutSameChannels = 1 << 8
	forcedOrderPCI            = 1
	forcedOrderReplay         = 2
	// ctxCheckEvery is how often (in steps) the context is polled.
	ctxCheckEvery = 1 << 12
	// yieldDepth is how many recursion levels (steps) tryGPU goes between
	// two yields that unwind the WebAssembly engine's stack.
	yieldDepth = 64
)

// MaxSearchWork bounds the work of one graph search (ring, tree or NVLS),
// counted in links read: every link a followed path charges, fails on or
// gives back, every GPU of a candidate list, and the comparisons of
// sorting scored candidates. NCCL's budgets count steps
// (ncclTopoSearchRecGpu calls), but the work of a step grows with the GPUs
// and the length of their paths; workPerStep turns each attempt's step
// budget into a budget of work as well. This cap is the backstop for a
// search that walks its whole relaxation ladder without a solution: the
// largest search that ends by itself reads 60 million (72 PCIe GPUs and
// 252 NICs on two hosts, 0.3 s), a preset or real dump at most 3 million;
// a 72-GPU NVLink mesh with 256 NICs on two hosts reaches the cap (it ran
// into ncclsim's 30 s timeout before). A search that reaches the cap stops
// as if NCCL's global budget had run out, with the best graph found so far
// (NCCL's PCI-order fallback when none), and Result.Notes says so.
const MaxSearchWork = 96 << 20

// workPerStep turns NCCL's step budgets into budgets of work: an attempt
// of searchTimeout steps may also read at most searchTimeout x workPerStep
// links. On the presets and real dumps a step reads 4 to 30 links on
// average, so their steps run out first and every searched graph is
// NCCL's (the golden and real-log tests hold it); on a host of 72 PCIe
// GPUs a step reads 100 to 300, and the work budget ends each attempt
// earlier, as a timeout of NCCL's would (the attempt's steps count as
// spent against the global budget). A step that scores and sorts its n
// candidates against a NIC (inter-node) counts n log2 n more. 72 PCIe
// GPUs without P2P: 816k steps,
// 150 M links, 1.0 s -> 164k steps, 27 M links, 0.16 s, with the same ring
// (one channel of 4 GB/s) and tree.
const workPerStep = 32

// state mirrors struct ncclTopoGraph during the search.
type state struct {
	id           int
	pattern      Pattern
	crossNic     int
	collNet      bool
	minChannels  int
	maxChannels  int
	nChannels    int
	bwIntra      float32
	bwInter      float32
	latencyInter float32
	typeIntra    topo.PathType
	typeInter    topo.PathType
	sameChannels int
	nHops        int
	intra        []int   // MaxChannels*ngpus ranks
	inter        []int64 // MaxChannels*2 NET ids
}

func newState(ngpus int) *state {
	return &state{intra: make([]int, MaxChannels*ngpus), inter: make([]int64, MaxChannels*2)}
}

// copyFrom is the memcpy of one ncclTopoGraph into another.
func (g *state) copyFrom(o *state) {
	intra, inter := g.intra, g.inter
	*g = *o
	g.intra, g.inter = intra, inter
	copy(g.intra, o.intra)
	copy(g.inter, o.inter)
}

// prep holds what every search on one analysed system shares and never
// changes: cached paths, per-link facts, each GPU's NIC order and the
// per-node facts the search loop reads, flattened out of the System.
type prep struct {
	sys     *topo.System
	p       *topo.Paths
	inter   bool
	maxBw   float32
	totalBw float32
	ngpus   int
	// ranks[g] is GPU g's rank; pciLinks[g] its DEV's PCI up-link and the
	// link back (-1 when none), for the PCI bandwidth of nextGPUs' score.
	ranks    []int
	pciLinks [][2]int32
	// linkFlag[i] caches what followPath needs to know about link i.
	linkFlag []uint8
	// pcache[a][b] holds the paths between the node types the search moves
	// between (GPU, NVS, NET), compiled, indexed [src*count(b)+dst];
	// kindCount[b] is count(b). none is the "no path" answer.
	pcache    [3][3][]cpath
	kindCount [3]int
	none      cpath
	// nvsNext[k][g] lists the ring neighbours GPU g tries next on an
	// NVSwitch system for neighbour order k (see nvsOrder), before the
	// "already used" filter.
	nvsNext [3][][]int
	// netIDs[n] is NET n's id; netPeers[n] the NETs on the same ASIC and
	// port (n included, in index order); netGPUs[n] and netGPUType[n] the
	// GPUs closest to NET n and their path type (topo.Paths.Local).
	netIDs     []int64
	netPeers   [][]int
	netGPUs    [][]int
	netGPUType []topo.PathType
	// localNets[g] is GPU g's NIC per channel; netCache memoises selectNets
	// (netCached says which entries are filled), indexed by (typeInter+1,
	// gpu+1).
	localNets [][]int
	netCache  [][]int
	netCached []bool
	// intraOrder[g] memoises nextGPUs' order of the candidates after GPU g
	// when no NIC enters the score (see nextIntra); nil until first needed.
	intraOrder [][]int32
	// workCap is the work one search may do (MaxSearchWork).
	workCap int64
}

// searcher holds the mutable state of one ncclTopoCompute call: link and NIC
// bandwidths are copied from the System so the search never changes it, and
// the per-GPU "used" channel masks.
type searcher struct {
	// prep is copied so that the hot loop reads its fields directly; the
	// copies share its slices, the selectNets cache included.
	prep
	ctx      context.Context
	crossNic int64 // NCCL_CROSS_NIC
	linkBw   []float32
	netBw    []float32
	used     []uint64
	// scoreBuf and nextBuf are scratch buffers per recursion depth (channel
	// and step): a completed channel recurses into the next one while the
	// loops of the previous channels are still iterating.
	scoreBuf []gpuScore
	nextBuf  [][]int
	// g is the graph being built (tmp in ncclTopoCompute), best the best
	// one found so far; time is the step budget of the current attempt and
	// nvsTry the nvsNext list for g's pattern (see startAttempt).
	g, best  *state
	time     int
	nvsTry   [][]int
	steps    int64
	err      error
	fallback bool
	// work counts what the search reads, in links: each path followed
	// counts its links, each candidate list its GPUs (see MaxSearchWork);
	// capped is set when it reached workCap.
	// attemptEnd is the work at which the current attempt's budget ends;
	// sortCost is the rest of what sorting costs, counted against workCap.
	sortCost   int64
	work       int64
	workCap    int64
	attemptEnd int64
	capped     bool
}

func newPrep(a *topo.Analysis) *prep {
	sys := a.Local
	s := &prep{sys: sys, p: a.LocalPaths, inter: a.Inter, maxBw: a.MaxBw, totalBw: a.TotalBw,
		ngpus: len(sys.Nodes[topo.GPU]), workCap: MaxSearchWork}
	s.intraOrder = make([][]int32, s.ngpus)
	s.linkFlag = make([]uint8, len(sys.Links))
	for i, l := range sys.Links {
		n := sys.Node(l.To)
		var f uint8
		if l.To.Type == topo.CPU && n.CPU.Arch == topo.ArchX86 && n.CPU.Vendor == topo.VendorIntel {
			f |= flagIntelCPU
		}
		if l.To.Type == topo.DEV && n.GPU.SM < 80 {
			f |= flagPreAmpereDev
		}
		if l.To.Type == topo.CPU && n.CPU.Arch == topo.ArchPower && l.Type == topo.LinkNVL {
			f |= flagPowerNVL
		}
		s.linkFlag[i] = f
	}
	s.markFreeLinks()
	kinds := [3]topo.NodeType{topo.GPU, topo.NVS, topo.NET}
	for a, ta := range kinds {
		s.kindCount[a] = len(sys.Nodes[ta])
	}
	// The links of every compiled path share two arrays sized up front.
	nlinks := 0
	for a, ta := range kinds {
		for b, tb := range kinds {
			for i := 0; i < s.kindCount[a]; i++ {
				for j := 0; j < s.kindCount[b]; j++ {
					if p := s.p.Get(topo.NodeRef{Type: ta, Index: i}, tb, j); p != nil {
						nlinks += len(p.Links)
					}
				}
			}
		}
	}
	ar := arena{ids: make([]int32, 0, nlinks), links: make([]clink, 0, nlinks)}
	for a, ta := range kinds {
		for b, tb := range kinds {
			na, nb := s.kindCount[a], s.kindCount[b]
			c := make([]cpath, na*nb)
			for i := 0; i < na; i++ {
				for j := 0; j < nb; j++ {
					c[i*nb+j] = s.compile(s.p.Get(topo.NodeRef{Type: ta, Index: i}, tb, j), ta, tb, &ar)
				}
			}
			s.pcache[a][b] = c
		}
	}
	// The tree patterns also need the way back; record its type on each path.
	s.none = cpath{typ: topo.PathDIS, treeTyp: noRevPath}
	for a, ta := range kinds {
		for b, tb := range kinds {
			nb := s.kindCount[b]
			for k := range s.pcache[a][b] {
				c := &s.pcache[a][b][k]
				c.treeTyp = noRevPath
				if rev := s.cachedPath(tb, k%nb, ta, k/nb); rev.ok {
					c.treeTyp = max(c.typ, rev.typ)
				}
			}
		}
	}
	s.localNets = make([][]int, s.ngpus)
	for g := range s.localNets {
		s.localNets[g] = s.p.LocalNets(g)
	}
	s.ranks = make([]int, s.ngpus)
	s.pciLinks = make([][2]int32, s.ngpus)
	for i, g := range sys.Nodes[topo.GPU] {
		s.ranks[i] = g.GPU.Rank
		s.pciLinks[i] = s.findPCILinks(g.GPU.Peer)
	}
	s.prepNVSNext()
	s.prepNets()
	return s
}

// startAttempt sets up one search attempt of ncclTopoCompute on g with
// budget time, keeping the best graph in best.
//
// The attempt also ends, as if its steps had run out, once it has read
// time x workPerStep links (see workPerStep).
func (s *searcher) startAttempt(g, best *state, time int) {
	s.g, s.best, s.time = g, best, time
	s.attemptEnd = s.work + int64(time)*workPerStep
	s.nvsTry = s.nvsNext[nvsOrder(g.pattern)]
}

func newSearcher(ctx context.Context, pr *prep, crossNic int64) *searcher {
	sys := pr.sys
	s := &searcher{prep: *pr, ctx: ctx, crossNic: crossNic, workCap: pr.workCap}
	s.linkBw = make([]float32, len(sys.Links))
	for i, l := range sys.Links {
		s.linkBw[i] = l.Bw
	}
	s.netBw = make([]float32, len(sys.Nodes[topo.NET]))
	for i, n := range sys.Nodes[topo.NET] {
		s.netBw[i] = n.Net.Bw
	}
	s.used = make([]uint64, s.ngpus)
	s.scoreBuf = make([]gpuScore, 0, s.ngpus)
	s.nextBuf = make([][]int, (MaxChannels+1)*(s.ngpus+1))
	return s
}

// noRevPath is cpath.treeTyp when there is no path back: worse than any
// type a graph may accept.
const noRevPath = topo.PathType(1 << 30)

// findPCILinks returns DEV d's first PCI link and the link back from its
// far end, or -1s.
func (s *prep) findPCILinks(d int) [2]int32 {
	sys := s.sys
	dev := topo.NodeRef{Type: topo.DEV, Index: d}
	if d < 0 || d >= len(sys.Nodes[topo.DEV]) {
		return [2]int32{-1, -1}
	}
	for _, li := range sys.Node(dev).Links {
		l := sys.Links[li]
		if l.Type != topo.LinkPCI {
			continue
		}
		for _, pli := range sys.Node(l.To).Links {
			if sys.Links[pli].To == dev {
				return [2]int32{li, pli}
			}
		}
	}
	return [2]int32{-1, -1}
}

// Neighbour orders of nextGPUs on NVSwitch systems.
const (
	nvsOrderRing  = iota // next GPU, then previous: tried previous first
	nvsOrderTree         // previous, then next: tried next first
	nvsOrderFirst        // next GPU only
)

// nvsOrder picks the nvsNext list for a pattern.
func nvsOrder(p Pattern) int {
	switch p {
	case Ring:
		return nvsOrderRing
	case SplitTree, BalancedTree:
		return nvsOrderTree
	}
	return nvsOrderFirst
}

// prepNVSNext fills nvsNext. NCCL sorts every candidate but then keeps only
// the ring neighbours, moving each one it finds to the front in turn, so the
// tried order is the neighbour list reversed, minus GPUs without a path.
func (s *prep) prepNVSNext() {
	n := s.ngpus
	for k := range s.nvsNext {
		s.nvsNext[k] = make([][]int, n)
		for gpu := 0; gpu < n; gpu++ {
			prev, nxt := (gpu-1+n)%n, (gpu+1)%n
			first := []int{nxt, prev}
			switch k {
			case nvsOrderTree:
				first = []int{prev, nxt}
			case nvsOrderFirst:
				first = first[:1]
			}
			if nxt == prev {
				first = first[:1]
			}
			var next []int
			for _, f := range first {
				if f == gpu || s.pcache[0][0][gpu*n+f].hops == 0 {
					continue
				}
				next = slices.Insert(next, 0, f)
			}
			s.nvsNext[k][gpu] = next
		}
	}
}

// prepNets fills the per-NET tables and the selectNets cache.
func (s *prep) prepNets() {
	nets := s.sys.Nodes[topo.NET]
	s.netIDs = make([]int64, len(nets))
	s.netPeers = make([][]int, len(nets))
	s.netGPUs = make([][]int, len(nets))
	s.netGPUType = make([]topo.PathType, len(nets))
	for i := range nets {
		s.netIDs[i] = nets[i].ID
		for j := range nets {
			if nets[j].Net.Asic == nets[i].Net.Asic && nets[j].Net.Port == nets[i].Net.Port {
				s.netPeers[i] = append(s.netPeers[i], j)
			}
		}
		s.netGPUs[i], s.netGPUType[i] = s.p.Local(topo.NodeRef{Type: topo.NET, Index: i}, topo.GPU)
	}
	size := (int(topo.PathDIS) + 2) * (s.ngpus + 1)
	s.netCache = make([][]int, size)
	s.netCached = make([]bool, size)
}

// kindIndex maps node types to the first two indices of pcache (-1: none).
var kindIndex = [topo.NumNodeTypes]int8{topo.GPU: 0, topo.PCI: -1, topo.NVS: 1, topo.CPU: -1, topo.NIC: -1,
	topo.NET: 2, topo.GIN: -1, topo.RMA: -1, topo.DEV: -1, topo.CXB: -1}

// cpath is a path compiled for the search: its type, bandwidth and hop
// count, and the links whose bandwidth can matter with what followPath needs
// to know about each (free links are left out; they never fail).
type cpath struct {
	ok    bool          // a path was computed
	intra bool          // both ends are GPUs or NVSwitches: charged bwIntra, else bwInter
	typ   topo.PathType // PathDIS when there is no path
	// treeTyp is the worse of typ and the type of the path back
	// (noRevPath when there is none): the tree patterns need both ways.
	treeTyp topo.PathType
	bw      float32
	hops    int
	// ids are the charged links, links the same with what followPath's
	// general case needs.
	ids   []int32
	links []clink
	// intel says the Intel P2P overhead (6/5 on PCI links) applies: a PHB
	// path from a GPU through an Intel x86 root complex.
	intel bool
	// plain says every link is charged bw and nothing in reverse (no Intel
	// overhead, no reverse flags).
	plain bool
}

// clink is one charged link of a cpath.
type clink struct {
	li  int32 // link index
	rev int32 // the reverse link (topo.Link.Rev)
	pci bool  // a PCI link
	// flags holds flagPreAmpereDev (only kept when the source is not a
	// GPU) and flagPowerNVL.
	flags uint8
}

// arena holds the link arrays of the compiled paths.
type arena struct {
	ids   []int32
	links []clink
}

func (s *prep) compile(p *topo.Path, src, dst topo.NodeType, ar *arena) cpath {
	if p == nil {
		return cpath{typ: topo.PathDIS}
	}
	start := len(ar.ids)
	c := cpath{ok: true, typ: p.Type, bw: p.Bw, hops: len(p.Links),
		intra: (src == topo.GPU || src == topo.NVS) && (dst == topo.GPU || dst == topo.NVS)}
	for _, li := range p.Links {
		f := s.linkFlag[li]
		if f&flagIntelCPU != 0 && p.Type == topo.PathPHB && src == topo.GPU {
			c.intel = true
		}
		if f&flagFree != 0 {
			continue
		}
		var r uint8
		if f&flagPreAmpereDev != 0 && src != topo.GPU {
			r |= flagPreAmpereDev
		}
		r |= f & flagPowerNVL
		l := s.sys.Links[li]
		ar.links = append(ar.links, clink{li: li, rev: l.Rev, pci: l.Type == topo.LinkPCI, flags: r})
		ar.ids = append(ar.ids, li)
	}
	end := len(ar.ids)
	c.ids, c.links = ar.ids[start:end:end], ar.links[start:end:end]
	c.plain = !c.intel
	for _, l := range c.links {
		if l.flags != 0 {
			c.plain = false
		}
	}
	return c
}

// cachedPath returns the compiled path from (t1,i1) to (t2,i2), or the
// "none" path (ok false).
func (s *prep) cachedPath(t1 topo.NodeType, i1 int, t2 topo.NodeType, i2 int) *cpath {
	if uint(t1) >= topo.NumNodeTypes || uint(t2) >= topo.NumNodeTypes {
		return &s.none
	}
	a, b := kindIndex[t1], kindIndex[t2]
	if a < 0 || b < 0 {
		return &s.none
	}
	na, nb := s.kindCount[a], s.kindCount[b]
	if uint(i1) >= uint(na) || uint(i2) >= uint(nb) {
		return &s.none
	}
	return &s.pcache[a][b][i1*nb+i2]
}

// gpuPath returns the compiled path between GPUs a and b (both valid).
func (s *prep) gpuPath(a, b int) *cpath { return &s.pcache[0][0][a*s.ngpus+b] }

// subRound is SUB_ROUND: subtract, then round to 1/1000 with roundf (half
// away from zero) in float arithmetic. The float32 product is exact in
// float64, so adding 0.5 there and truncating equals roundf.
func subRound(a, b float32) float32 {
	x := float64((a - b) * 1000)
	if !(x < 1<<52 && x > -(1<<52)) {
		return float32(x) / 1000
	}
	if x >= 0 {
		return float32(int64(x+0.5)) / 1000
	}
	return float32(int64(x-0.5)) / 1000
}

// followPath charges bw on the first maxSteps links of path and returns how
// many links had enough bandwidth (followPath,
// https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/search.cc#L81-L123).
// GPU traffic through an Intel root complex of PHB type costs 6/5 on PCI
// links; traffic from a NIC or NVSwitch towards a pre-Ampere GPU also costs
// 1/8 in reverse, and NVLink to a POWER CPU costs the full amount in reverse.
func (s *searcher) followPath(p *cpath, maxSteps int, bw float32) int {
	linkBw := s.linkBw
	if p.plain {
		return chargePlain(linkBw, p.ids[:maxSteps], bw)
	}
	pciBw := bw
	if p.intel {
		pciBw = bw * 6 / 5 // INTEL_P2P_OVERHEAD, topo.h:39
	}
	for step, l := range p.links[:maxSteps] {
		fwBw := bw
		if l.pci {
			fwBw = pciBw
		}
		var revBw float32
		if r := l.flags; r != 0 {
			if r&flagPreAmpereDev != 0 {
				revBw += fwBw / 8
			}
			if r&flagPowerNVL != 0 {
				revBw += fwBw
			}
		}
		if linkBw[l.li] < fwBw {
			return step
		}
		if revBw != 0 {
			if l.rev < 0 || linkBw[l.rev] < revBw {
				return step
			}
			linkBw[l.rev] = subRound(linkBw[l.rev], revBw)
		}
		linkBw[l.li] = subRound(linkBw[l.li], fwBw)
	}
	return maxSteps
}

// chargePlain is followPath for plain paths: every link is charged bw,
// nothing in reverse.
func chargePlain(linkBw []float32, ids []int32, bw float32) int {
	for step, li := range ids {
		if linkBw[li] < bw {
			return step
		}
		linkBw[li] = subRound(linkBw[li], bw)
	}
	return len(ids)
}

// followGraphPath tries to go from (t1,i1) to (t2,i2) charging the graph's
// intra or inter bandwidth times mult, and rewinds on failure
// (ncclTopoFollowPath, search.cc:127-172). t1 < 0 means "start here".
func (s *searcher) followGraphPath(g *state, t1 topo.NodeType, i1 int, t2 topo.NodeType, i2 int, mult int) bool {
	if t1 < 0 {
		return true
	}
	return s.follow(g, s.cachedPath(t1, i1, t2, i2), mult)
}

// follow is followGraphPath on a compiled path (typ PathDIS: no path).
func (s *searcher) follow(g *state, path *cpath, mult int) bool {
	if path.typ >= topo.PathDIS {
		return false
	}
	bw, typ := g.bwInter, g.typeInter
	if path.intra {
		bw, typ = g.bwIntra, g.typeIntra
	}
	if mult == 1 {
		worst := path.typ
		if g.pattern == BalancedTree || g.pattern == Tree || g.pattern == SplitTree {
			worst = path.treeTyp
		}
		if worst > typ {
			return false
		}
	}
	bw *= float32(mult)
	n := len(path.ids)
	var step int
	if path.plain {
		step = chargePlain(s.linkBw, path.ids, bw)
	} else {
		step = s.followPath(path, n, bw)
	}
	// The links charged, the one that failed, and the rewind.
	s.work += int64(step) + 1
	if step < n {
		s.work += int64(step)
		s.followPath(path, step, -bw)
		return false
	}
	g.nHops += mult * path.hops
	return true
}

// gpuPciBw is the remaining bandwidth of a GPU's PCI link (min of both
// directions), truncated to an int as NCCL's score does (search.cc:174-187).
func (s *searcher) gpuPciBw(g int) int {
	l := s.pciLinks[g]
	if l[0] < 0 {
		return -1
	}
	return int(min(s.linkBw[l[0]], s.linkBw[l[1]]))
}

type gpuScore struct {
	g, startIndex, intraNhops, intraBw, interNhops, interPciBw, interBw int
}

// nextGPUs orders the candidate next GPUs (ncclTopoSearchNextGpuSort,
// https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/search.cc#L253-L326):
// by NIC bandwidth, PCI bandwidth, NIC hops, GPU bandwidth, GPU hops, then
// index (recGPU handles NVSwitch systems, where only the ring neighbours are
// tried). The result is written into the scratch buffer of the given
// recursion step.
func (s *searcher) nextGPUs(g *state, gpu, step, sortNet int) []int {
	netIdx := -1
	if sortNet != 0 {
		netIdx = s.netIndex(g.inter[g.nChannels*2])
	}
	if netIdx < 0 {
		return s.nextIntra(g, gpu, step, sortNet)
	}
	return s.nextScored(g, gpu, step, sortNet, netIdx)
}

// nextIntra is nextGPUs when no NIC enters the score. The NIC terms are then
// zero for every candidate, and the rest of the key (GPU-to-GPU path
// bandwidth and hops, start index) does not change during a search, so the
// order is sorted once per GPU and each step only drops the GPUs the channel
// has used: O(n) per step instead of O(n log n) plus n path look-ups.
// BenchmarkSearchWide (load ~15 on 2 cores, so only the ratio holds): 16 GPUs
// 0.70 -> 0.066 s, 72 GPUs 10.9 -> 1.35 s, 512 GPUs 162 -> 12.2 s.
// TestNextIntraMatchesSort holds it to nextScored's full sort.
func (s *searcher) nextIntra(g *state, gpu, step, sortNet int) []int {
	order := s.intraOrder[gpu]
	if order == nil {
		scores := s.scores(gpu, -1, 0)
		order = make([]int32, len(scores))
		for i, sc := range scores {
			order[i] = int32(sc.g)
		}
		s.intraOrder[gpu] = order
	}
	flag := uint64(1) << uint(g.nChannels)
	gg := s.pcache[0][0][gpu*s.ngpus : (gpu+1)*s.ngpus]
	next := s.buf(g, step)[:0]
	s.work += int64(len(order))
	sameIntra := true
	for _, q := range order {
		if s.used[q]&flag != 0 {
			continue
		}
		if len(next) > 0 {
			p0 := &gg[next[0]]
			if p := &gg[q]; p.hops != p0.hops || int(p.bw) != int(p0.bw) {
				sameIntra = false
			}
		}
		next = append(next, int(q))
	}
	if sortNet == -1 && sameIntra {
		slices.Reverse(next)
	}
	return next
}

// nextScored is nextGPUs with NIC netIdx in the score: the PCI term reads
// the bandwidth left on the GPU's links, which the search consumes, so the
// candidates are scored and sorted at every step as NCCL does.
func (s *searcher) nextScored(g *state, gpu, step, sortNet, netIdx int) []int {
	scores := s.scores(gpu, netIdx, uint64(1)<<uint(g.nChannels))
	// Scoring reads every GPU, and sorting n scores costs about n log2 n
	// comparisons; each costs about three link reads more (measured: a
	// 72-GPU NVLink mesh with 256 NICs on two hosts spent 60% of its time
	// here), which count against MaxSearchWork only, so that the attempts'
	// budgets stay as they were.
	nlog := int64(len(scores) * bits.Len(uint(len(scores))))
	s.work += int64(s.ngpus) + nlog
	s.sortCost += 3 * nlog
	next := s.buf(g, step)[:len(scores)]
	sameIntra := true
	for i := 1; i < len(scores); i++ {
		if scores[i].intraBw != scores[0].intraBw || scores[i].intraNhops != scores[0].intraNhops {
			sameIntra = false
		}
	}
	for i := range scores {
		if sortNet == -1 && sameIntra {
			next[i] = scores[len(scores)-1-i].g
		} else {
			next[i] = scores[i].g
		}
	}
	return next
}

// scores fills scoreBuf with the candidates after GPU gpu that are reachable
// and not marked with flag in used, scored against NIC netIdx (-1: none),
// sorted by cmpScore.
func (s *searcher) scores(gpu, netIdx int, flag uint64) []gpuScore {
	gg := s.pcache[0][0][gpu*s.ngpus : (gpu+1)*s.ngpus]
	scores := s.scoreBuf[:0]
	for i := 1; i < s.ngpus; i++ {
		q := (gpu + i) % s.ngpus
		path := &gg[q]
		if path.hops == 0 || s.used[q]&flag != 0 {
			continue
		}
		sc := gpuScore{g: q, startIndex: i, intraNhops: path.hops, intraBw: int(path.bw)}
		if np := s.cachedPath(topo.NET, netIdx, topo.GPU, q); np.ok {
			sc.interNhops = np.hops
			sc.interPciBw = s.gpuPciBw(q)
			sc.interBw = int(np.bw)
		}
		scores = append(scores, sc)
	}
	s.scoreBuf = scores
	slices.SortFunc(scores, cmpScore)
	return scores
}

// buf returns the scratch buffer of the recursion depth (channel, step).
func (s *searcher) buf(g *state, step int) []int {
	d := g.nChannels*(s.ngpus+1) + step
	if s.nextBuf[d] == nil {
		s.nextBuf[d] = make([]int, s.ngpus)
	}
	return s.nextBuf[d]
}

// cmpScore is NCCL's qsort comparator; startIndex makes it a total order.
func cmpScore(x, y gpuScore) int {
	switch {
	case x.interBw != y.interBw:
		return y.interBw - x.interBw
	case x.interPciBw != y.interPciBw:
		return y.interPciBw - x.interPciBw
	case x.interNhops != y.interNhops:
		return x.interNhops - y.interNhops
	case x.intraBw != y.intraBw:
		return y.intraBw - x.intraBw
	case x.intraNhops != y.intraNhops:
		return x.intraNhops - y.intraNhops
	}
	return x.startIndex - y.startIndex
}

// replayGPU returns the GPU at position step+1 of the previous channel
// (ncclTopoReplayGetGpu, search.cc:340-352).
func (s *searcher) replayGPU(g *state, step int) int {
	if g.nChannels == 0 {
		return -1
	}
	return s.gpuOfRank(g.intra[(g.nChannels-1)*s.ngpus+step+1])
}

// tryGPU moves to GPU q and recurses (ncclTopoSearchTryGpu, search.cc:358-371).
// t < 0 means the channel starts at q.
func (s *searcher) tryGPU(step, backToNet, backToFirst, forced int, t topo.NodeType, idx, q int) {
	if q < 0 || s.capped {
		// Past the work cap nothing new is followed; the levels above
		// still give back what they charged.
		return
	}
	var path *cpath
	if t >= 0 {
		if t == topo.GPU {
			path = s.gpuPath(idx, q)
		} else {
			path = s.cachedPath(t, idx, topo.GPU, q)
		}
		if !s.follow(s.g, path, 1) {
			return
		}
	}
	flag := uint64(1) << uint(s.g.nChannels)
	s.used[q] ^= flag
	if d := s.g.nChannels*(s.ngpus+1) + step; d > 0 && d%yieldDepth == 0 {
		// The recursion is channels × GPUs deep (2,300 levels for 72
		// GPUs in 32 channels). Under WebAssembly every Go call is also a
		// call on the engine's own stack, which a browser worker keeps
		// small (the page died with "Maximum call stack size exceeded");
		// a goroutine switch unwinds that stack, the Go stack stays.
		// Natively it is a cheap yield.
		runtime.Gosched()
	}
	s.recGPU(q, step, backToNet, backToFirst, forced)
	s.used[q] ^= flag
	if path != nil {
		s.follow(s.g, path, -1)
	}
}

// tryNVLS checks NVSwitch bandwidth for one NVLS head (ncclTopoSearchTryNvls,
// search.cc:410-443): every GPU exchanges bwIntra with the switch, the head
// twice.
func (s *searcher) tryNVLS(head int) {
	g := s.g
	mult := func(d int) int {
		if d == head {
			return 2
		}
		return 1
	}
	d0 := 0
	ok := true
	for ok && d0 < s.ngpus {
		ok = s.followGraphPath(g, topo.NVS, 0, topo.GPU, d0, mult(d0))
		d0++
	}
	if !ok {
		d0--
	} else {
		d1 := 0
		for ok && d1 < s.ngpus {
			ok = s.followGraphPath(g, topo.GPU, d1, topo.NVS, 0, mult(d1))
			d1++
		}
		if !ok {
			d1--
		} else {
			s.recGPU(-1, s.ngpus, -1, -1, 0)
		}
		for d1 > 0 {
			d1--
			s.followGraphPath(g, topo.GPU, d1, topo.NVS, 0, -mult(d1))
		}
	}
	for d0 > 0 {
		d0--
		s.followGraphPath(g, topo.NVS, 0, topo.GPU, d0, -mult(d0))
	}
}

// better is ncclTopoCompareGraphs (search.cc:445-468).
func (s *searcher) better(g, ref *state) bool {
	if g.nChannels < g.minChannels {
		return false
	}
	if g.pattern == NVLS {
		copyIt := false
		if g.nChannels > ref.nChannels && g.nChannels <= s.ngpus {
			copyIt = true
		}
		if float32(g.nChannels)*g.bwInter > float32(ref.nChannels)*ref.bwInter {
			copyIt = true
		}
		return copyIt
	}
	a, b := float32(g.nChannels)*g.bwIntra, float32(ref.nChannels)*ref.bwIntra
	if a > b {
		return true
	}
	if a < b {
		return false
	}
	return g.pattern == ref.pattern && g.crossNic == ref.crossNic && g.nHops < ref.nHops
}

// recGPU is ncclTopoSearchRecGpu
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/search.cc#L621-L722)
// on the graph s.g, keeping the best one in s.best and counting down s.time.
func (s *searcher) recGPU(gpu, step, backToNet, backToFirst, forced int) {
	if s.time <= 0 {
		return
	}
	s.time--
	s.steps++
	if s.steps&(ctxCheckEvery-1) == 0 && s.err == nil {
		if err := s.ctx.Err(); err != nil {
			s.err = err
		}
	}
	if s.err != nil {
		s.time = 0
		return
	}
	if s.work+s.sortCost >= s.workCap {
		s.capped = true
		s.time = 0
		return
	}
	if s.work >= s.attemptEnd {
		s.time = 0
		return
	}
	g := s.g
	if step == s.ngpus {
		g.nChannels++
		if s.better(g, s.best) {
			s.best.copyFrom(g)
			if g.nChannels == g.maxChannels {
				s.time = -1
			}
		}
		if g.nChannels < g.maxChannels {
			s.searchRec()
		}
		g.nChannels--
		return
	}
	g.intra[g.nChannels*s.ngpus+step] = s.rank(gpu)
	switch {
	case step == backToNet:
		if !s.inter {
			return
		}
		start := s.netIndex(g.inter[g.nChannels*2])
		for _, n := range s.selectNets(g.typeInter, gpu) {
			if !s.checkNet(g, start, n, step) {
				continue
			}
			nextBackToNet := -1
			bwInterSave := g.bwInter
			if g.pattern == BalancedTree {
				// Balanced tree: charge half of bwInter on each of the first two GPUs.
				if step == 0 {
					nextBackToNet = 1
				}
				g.bwInter /= 2
			}
			ok := s.followGraphPath(g, topo.GPU, gpu, topo.NET, n, 1)
			g.bwInter = bwInterSave
			if ok {
				g.inter[g.nChannels*2+1] = s.netID(n)
				s.recGPU(gpu, step, nextBackToNet, backToFirst, forced)
				if g.pattern == BalancedTree {
					g.bwInter /= 2
				}
				s.followGraphPath(g, topo.GPU, gpu, topo.NET, n, -1)
				g.bwInter = bwInterSave
			}
		}
	case g.pattern == NVLS:
		s.tryNVLS(gpu)
	case g.pattern == CollNetDirect:
		// CollNet needs a network plugin with collective offload; never searched.
	case step < s.ngpus-1:
		switch {
		case forced == forcedOrderPCI:
			s.tryGPU(step+1, backToNet, backToFirst, forced, topo.GPU, gpu, step+1)
		case forced == forcedOrderReplay:
			s.tryGPU(step+1, backToNet, backToFirst, forced, topo.GPU, gpu, s.replayGPU(g, step))
		case s.nvsCount() > 0:
			// With NVSwitches only the ring neighbours are tried
			// (prepNVSNext), minus those the channel already uses. Every
			// tryGPU leaves the used masks as it found them, so checking
			// each neighbour just before trying it gives the list NCCL
			// builds up front.
			flag := uint64(1) << uint(g.nChannels)
			for _, q := range s.nvsTry[gpu] {
				if s.used[q]&flag == 0 {
					s.tryGPU(step+1, backToNet, backToFirst, forced, topo.GPU, gpu, q)
				}
			}
		default:
			sortNet := -1
			if backToNet == -1 {
				sortNet = 0
			} else if backToNet == step+1 {
				sortNet = 1
			}
			for _, q := range s.nextGPUs(g, gpu, step, sortNet) {
				s.tryGPU(step+1, backToNet, backToFirst, forced, topo.GPU, gpu, q)
			}
		}
	case step == backToFirst:
		if first := s.gpuOfRank(g.intra[g.nChannels*s.ngpus]); first >= 0 {
			if path := s.gpuPath(gpu, first); s.follow(g, path, 1) {
				s.recGPU(first, step+1, backToNet, -1, forced)
				s.follow(g, path, -1)
			}
		}
	default:
		s.recGPU(gpu, s.ngpus, -1, -1, forced)
	}
}

func (s *prep) rank(g int) int          { return s.ranks[g] }
func (s *prep) netID(n int) int64       { return s.netIDs[n] }
func (s *prep) nvsCount() int           { return s.kindCount[1] }
func (s *prep) netCount() int           { return len(s.netIDs) }
func (s *prep) net(n int) *topo.NetInfo { return &s.sys.Nodes[topo.NET][n].Net }

// netIndex returns the first NET with the given id, or -1.
func (s *prep) netIndex(id int64) int {
	for i, n := range s.netIDs {
		if n == id {
			return i
		}
	}
	return -1
}

// gpuOfRank returns the GPU with rank r, the last one if several claim it
// (as a rank->GPU map filled in GPU order would), or -1.
func (s *prep) gpuOfRank(r int) int {
	for i := len(s.ranks) - 1; i >= 0; i-- {
		if s.ranks[i] == r {
			return i
		}
	}
	return -1
}

const (
	flagIntelCPU uint8 = 1 << iota
	flagPreAmpereDev
	flagPowerNVL
	flagFree // never binding: charging it cannot change the outcome
)

// markFreeLinks flags the LOC links between a GPU and its DEV node when the
// DEV's other links cannot carry LOC_BW in total. Every path through such a
// LOC link continues over one of those links with at least the same charge,
// so the LOC link can never be the one that runs out, and skipping its
// accounting gives exactly NCCL's result at half the cost on NVSwitch paths.
func (s *prep) markFreeLinks() {
	sys := s.sys
	for d := range sys.Nodes[topo.DEV] {
		dev := topo.NodeRef{Type: topo.DEV, Index: d}
		var out, in float32
		for _, li := range sys.Node(dev).Links {
			l := sys.Links[li]
			if l.Type == topo.LinkLOC {
				continue
			}
			out += l.Bw
			if l.Rev >= 0 {
				in += sys.Links[l.Rev].Bw
			}
		}
		// 1.2 covers the Intel PCI overhead, which charges PCI links more.
		if out*1.2 >= topo.LocBw/2 || in*1.2 >= topo.LocBw/2 {
			continue
		}
		for _, li := range sys.Node(dev).Links {
			l := sys.Links[li]
			if l.Type == topo.LinkLOC && l.To.Type == topo.GPU {
				s.linkFlag[li] |= flagFree
				if l.Rev >= 0 {
					s.linkFlag[l.Rev] |= flagFree
				}
			}
		}
	}
}
