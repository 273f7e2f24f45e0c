package graph

import (
	"context"
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
)

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
// changes: cached paths, per-link facts and each GPU's NIC order.
type prep struct {
	sys     *topo.System
	p       *topo.Paths
	inter   bool
	maxBw   float32
	totalBw float32
	ngpus   int
	rankGPU map[int]int
	// linkFlag[i] caches what followPath needs to know about link i.
	linkFlag []uint8
	linkPCI  []bool
	linkRev  []int32
	// pcache[a][b] holds the paths between the node types the search moves
	// between (GPU, NVS, NET), compiled, indexed [src*count(b)+dst].
	pcache [3][3][]cpath
	// localNets[g] is GPU g's NIC per channel; netCache memoises selectNets.
	localNets [][]int
	netCache  map[[2]int][]int
}

// searcher holds the mutable state of one ncclTopoCompute call: link and NIC
// bandwidths are copied from the System so the search never changes it, and
// the per-GPU "used" channel masks.
type searcher struct {
	*prep
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
	steps    int64
	err      error
	fallback bool
}

func newPrep(a *topo.Analysis) *prep {
	sys := a.Local
	s := &prep{sys: sys, p: a.LocalPaths, inter: a.Inter, maxBw: a.MaxBw, totalBw: a.TotalBw,
		ngpus: len(sys.Nodes[topo.GPU])}
	s.linkFlag = make([]uint8, len(sys.Links))
	s.linkPCI = make([]bool, len(sys.Links))
	s.linkRev = make([]int32, len(sys.Links))
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
		s.linkPCI[i] = l.Type == topo.LinkPCI
		s.linkRev[i] = l.Rev
	}
	s.markFreeLinks()
	kinds := [3]topo.NodeType{topo.GPU, topo.NVS, topo.NET}
	for a, ta := range kinds {
		for b, tb := range kinds {
			na, nb := len(sys.Nodes[ta]), len(sys.Nodes[tb])
			c := make([]cpath, na*nb)
			for i := 0; i < na; i++ {
				for j := 0; j < nb; j++ {
					c[i*nb+j] = s.compile(s.p.Get(topo.NodeRef{Type: ta, Index: i}, tb, j), ta)
				}
			}
			s.pcache[a][b] = c
		}
	}
	s.localNets = make([][]int, s.ngpus)
	for g := range s.localNets {
		s.localNets[g] = s.p.LocalNets(g)
	}
	s.netCache = map[[2]int][]int{}
	s.rankGPU = make(map[int]int, s.ngpus)
	for i, g := range sys.Nodes[topo.GPU] {
		s.rankGPU[g.GPU.Rank] = i
	}
	return s
}

func newSearcher(ctx context.Context, pr *prep, crossNic int64) *searcher {
	sys := pr.sys
	s := &searcher{prep: pr, ctx: ctx, crossNic: crossNic}
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

// kindIndex maps node types to the first two indices of pcache (-1: none).
var kindIndex = [topo.NumNodeTypes]int8{topo.GPU: 0, topo.PCI: -1, topo.NVS: 1, topo.CPU: -1, topo.NIC: -1,
	topo.NET: 2, topo.GIN: -1, topo.RMA: -1, topo.DEV: -1, topo.CXB: -1}

// cpath is a path compiled for the search: its type, bandwidth and hop
// count, and the links whose bandwidth can matter with what followPath needs
// to know about each (free links are left out; they never fail).
type cpath struct {
	ok    bool // a path was computed
	typ   topo.PathType
	bw    float32
	hops  int
	links []int32
	pci   []bool
	rev   []uint8 // flagPreAmpereDev (only kept when the source is not a GPU) and flagPowerNVL
	// intel says the Intel P2P overhead (6/5 on PCI links) applies: a PHB
	// path from a GPU through an Intel x86 root complex.
	intel bool
}

func (s *prep) compile(p *topo.Path, src topo.NodeType) cpath {
	if p == nil {
		return cpath{}
	}
	c := cpath{ok: true, typ: p.Type, bw: p.Bw, hops: len(p.Links)}
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
		c.links = append(c.links, li)
		c.pci = append(c.pci, s.linkPCI[li])
		c.rev = append(c.rev, r)
	}
	return c
}

// cachedPath returns the compiled path from (t1,i1) to (t2,i2), or nil.
func (s *prep) cachedPath(t1 topo.NodeType, i1 int, t2 topo.NodeType, i2 int) *cpath {
	a, b := kindIndex[t1], kindIndex[t2]
	if a < 0 || b < 0 {
		return nil
	}
	c := s.pcache[a][b]
	nb := len(s.sys.Nodes[t2])
	k := i1*nb + i2
	if i1 < 0 || i2 < 0 || i2 >= nb || k >= len(c) || !c[k].ok {
		return nil
	}
	return &c[k]
}

// subRound is SUB_ROUND: subtract, then round to 1/1000 with roundf (half
// away from zero) in float arithmetic. The float32 product is exact in
// float64, so adding 0.5 there and truncating equals roundf.
func subRound(a, b float32) float32 {
	x := float64((a - b) * 1000)
	if x >= 1<<52 || x <= -(1<<52) || x != x {
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
	pciBw := bw
	if p.intel {
		pciBw = bw * 6 / 5 // INTEL_P2P_OVERHEAD, topo.h:39
	}
	for step := 0; step < maxSteps; step++ {
		li := p.links[step]
		fwBw := bw
		if p.pci[step] {
			fwBw = pciBw
		}
		var revBw float32
		if r := p.rev[step]; r != 0 {
			if r&flagPreAmpereDev != 0 {
				revBw += fwBw / 8
			}
			if r&flagPowerNVL != 0 {
				revBw += fwBw
			}
		}
		if s.linkBw[li] < fwBw {
			return step
		}
		if revBw != 0 {
			rev := s.linkRev[li]
			if rev < 0 || s.linkBw[rev] < revBw {
				return step
			}
			s.linkBw[rev] = subRound(s.linkBw[rev], revBw)
		}
		s.linkBw[li] = subRound(s.linkBw[li], fwBw)
	}
	return maxSteps
}

// followGraphPath tries to go from (t1,i1) to (t2,i2) charging the graph's
// intra or inter bandwidth times mult, and rewinds on failure
// (ncclTopoFollowPath, search.cc:127-172). t1 < 0 means "start here".
func (s *searcher) followGraphPath(g *state, t1 topo.NodeType, i1 int, t2 topo.NodeType, i2 int, mult float32) bool {
	if t1 < 0 {
		return true
	}
	path := s.cachedPath(t1, i1, t2, i2)
	if path == nil {
		return false
	}
	intra := (t1 == topo.GPU || t1 == topo.NVS) && (t2 == topo.GPU || t2 == topo.NVS)
	bw, typ := g.bwInter, g.typeInter
	if intra {
		bw, typ = g.bwIntra, g.typeIntra
	}
	if path.typ >= topo.PathDIS {
		return false
	}
	if mult == 1 && path.typ > typ {
		return false
	}
	if mult == 1 && (g.pattern == BalancedTree || g.pattern == Tree || g.pattern == SplitTree) {
		if rev := s.cachedPath(t2, i2, t1, i1); rev == nil || rev.typ > typ {
			return false
		}
	}
	bw *= mult
	n := len(path.links)
	if step := s.followPath(path, n, bw); step < n {
		s.followPath(path, step, -bw)
		return false
	}
	g.nHops += int(mult * float32(path.hops))
	return true
}

// gpuPciBw is the remaining bandwidth of a GPU's PCI link (min of both
// directions), truncated to an int as NCCL's score does (search.cc:174-187).
func (s *searcher) gpuPciBw(g int) int {
	dev := topo.NodeRef{Type: topo.DEV, Index: s.sys.Nodes[topo.GPU][g].GPU.Peer}
	for _, li := range s.sys.Node(dev).Links {
		l := s.sys.Links[li]
		if l.Type != topo.LinkPCI {
			continue
		}
		for _, pli := range s.sys.Node(l.To).Links {
			if s.sys.Links[pli].To == dev {
				return int(min(s.linkBw[li], s.linkBw[pli]))
			}
		}
	}
	return -1
}

type gpuScore struct {
	g, startIndex, intraNhops, intraBw, interNhops, interPciBw, interBw int
}

// nextGPUs orders the candidate next GPUs (ncclTopoSearchNextGpuSort,
// https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/search.cc#L253-L326):
// by NIC bandwidth, PCI bandwidth, NIC hops, GPU bandwidth, GPU hops, then
// index; with NVSwitches only the ring neighbours are tried. The result is
// written into the scratch buffer of the given recursion step.
func (s *searcher) nextGPUs(g *state, gpu, step, sortNet int) []int {
	flag := uint64(1) << uint(g.nChannels)
	gg := s.pcache[0][0][gpu*s.ngpus : (gpu+1)*s.ngpus]
	if s.nvsCount() > 0 {
		// With NVSwitches NCCL sorts every candidate but then keeps only the
		// ring neighbours, moving each found one to the front in turn: the
		// result depends only on which neighbours are still candidates.
		prev, nxt := (gpu-1+s.ngpus)%s.ngpus, (gpu+1)%s.ngpus
		first := [2]int{nxt, prev}
		nFirst := 2
		switch g.pattern {
		case Ring:
		case SplitTree, BalancedTree:
			first = [2]int{prev, nxt}
		default:
			nFirst = 1
		}
		if nxt == prev && nFirst == 2 {
			nFirst = 1
		}
		next := s.buf(g, step)[:0]
		for _, f := range first[:nFirst] {
			if f == gpu || gg[f].hops == 0 || s.used[f]&flag != 0 {
				continue
			}
			next = append(next, 0)
			copy(next[1:], next[:len(next)-1])
			next[0] = f
		}
		return next
	}
	netIdx := -1
	if sortNet != 0 {
		netIdx = s.netIndex(g.inter[g.nChannels*2])
	}
	scores := s.scoreBuf[:0]
	for i := 1; i < s.ngpus; i++ {
		q := (gpu + i) % s.ngpus
		path := &gg[q]
		if path.hops == 0 || s.used[q]&flag != 0 {
			continue
		}
		sc := gpuScore{g: q, startIndex: i, intraNhops: path.hops, intraBw: int(path.bw)}
		if np := s.cachedPath(topo.NET, netIdx, topo.GPU, q); netIdx >= 0 && np != nil {
			sc.interNhops = np.hops
			sc.interPciBw = s.gpuPciBw(q)
			sc.interBw = int(np.bw)
		}
		scores = append(scores, sc)
	}
	s.scoreBuf = scores
	slices.SortFunc(scores, cmpScore)
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
	r := g.intra[(g.nChannels-1)*s.ngpus+step+1]
	if q, ok := s.rankGPU[r]; ok {
		return q
	}
	return -1
}

// tryGPU moves to GPU q and recurses (ncclTopoSearchTryGpu, search.cc:358-371).
func (s *searcher) tryGPU(g, save *state, step, backToNet, backToFirst, forced int, time *int, t topo.NodeType, idx, q int) {
	if q < 0 {
		return
	}
	flag := uint64(1) << uint(g.nChannels)
	if s.followGraphPath(g, t, idx, topo.GPU, q, 1) {
		s.used[q] ^= flag
		s.recGPU(g, save, q, step, backToNet, backToFirst, forced, time)
		s.used[q] ^= flag
		s.followGraphPath(g, t, idx, topo.GPU, q, -1)
	}
}

// tryNVLS checks NVSwitch bandwidth for one NVLS head (ncclTopoSearchTryNvls,
// search.cc:410-443): every GPU exchanges bwIntra with the switch, the head
// twice.
func (s *searcher) tryNVLS(g, save *state, head int, time *int) {
	mult := func(d int) float32 {
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
			s.recGPU(g, save, -1, s.ngpus, -1, -1, 0, time)
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
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/search.cc#L621-L722).
func (s *searcher) recGPU(g, save *state, gpu, step, backToNet, backToFirst, forced int, time *int) {
	if *time <= 0 {
		return
	}
	*time--
	s.steps++
	if s.steps%ctxCheckEvery == 0 && s.err == nil {
		if err := s.ctx.Err(); err != nil {
			s.err = err
		}
	}
	if s.err != nil {
		*time = 0
		return
	}
	if step == s.ngpus {
		g.nChannels++
		if s.better(g, save) {
			save.copyFrom(g)
			if g.nChannels == g.maxChannels {
				*time = -1
			}
		}
		if g.nChannels < g.maxChannels {
			s.searchRec(g, save, time)
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
				s.recGPU(g, save, gpu, step, nextBackToNet, backToFirst, forced, time)
				if g.pattern == BalancedTree {
					g.bwInter /= 2
				}
				s.followGraphPath(g, topo.GPU, gpu, topo.NET, n, -1)
				g.bwInter = bwInterSave
			}
		}
	case g.pattern == NVLS:
		s.tryNVLS(g, save, gpu, time)
	case g.pattern == CollNetDirect:
		// CollNet needs a network plugin with collective offload; never searched.
	case step < s.ngpus-1:
		var next []int
		switch forced {
		case forcedOrderPCI:
			next = s.buf(g, step)[:1]
			next[0] = step + 1
		case forcedOrderReplay:
			next = s.buf(g, step)[:1]
			next[0] = s.replayGPU(g, step)
		default:
			sortNet := -1
			if backToNet == -1 {
				sortNet = 0
			} else if backToNet == step+1 {
				sortNet = 1
			}
			next = s.nextGPUs(g, gpu, step, sortNet)
		}
		for _, q := range next {
			s.tryGPU(g, save, step+1, backToNet, backToFirst, forced, time, topo.GPU, gpu, q)
		}
	case step == backToFirst:
		first, ok := s.rankGPU[g.intra[g.nChannels*s.ngpus]]
		if ok && s.followGraphPath(g, topo.GPU, gpu, topo.GPU, first, 1) {
			s.recGPU(g, save, first, step+1, backToNet, -1, forced, time)
			s.followGraphPath(g, topo.GPU, gpu, topo.GPU, first, -1)
		}
	default:
		s.recGPU(g, save, gpu, s.ngpus, -1, -1, forced, time)
	}
}

func (s *prep) rank(g int) int         { return s.sys.Nodes[topo.GPU][g].GPU.Rank }
func (s *prep) netID(n int) int64      { return s.sys.Nodes[topo.NET][n].ID }
func (s *prep) nvsCount() int          { return len(s.sys.Nodes[topo.NVS]) }
func (s *prep) netCount() int          { return len(s.sys.Nodes[topo.NET]) }
func (s *prep) net(n int) topo.NetInfo { return s.sys.Nodes[topo.NET][n].Net }

func (s *prep) netIndex(id int64) int {
	for i, n := range s.sys.Nodes[topo.NET] {
		if n.ID == id {
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
