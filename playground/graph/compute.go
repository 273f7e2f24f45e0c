package graph

import (
	"context"
	"fmt"

	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
	"github.com/distributed-nav/distributed-nav/playground/topo"
)

// Per-channel bandwidths (GB/s) the search tries, fastest first
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/search.cc#L1051-L1065).
// "Intra" arrays serve single-host searches, "Inter" multi-host ones.
var (
	speedArrayIntra      = []float32{40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0}
	speedArrayInter      = []float32{48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.4, 1.2, 0.24, 0.12}
	sm90SpeedArrayIntra  = []float32{60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0}
	sm90SpeedArrayInter  = []float32{48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2, 0.24, 0.12}
	sm100SpeedArrayIntra = []float32{90.0, 80.0, 70.0, 60.0, 50.0, 45.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0}
	sm100SpeedArrayInter = []float32{96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2, 0.24, 0.12}
)

// SpeedArray returns the per-channel bandwidth ladder the search uses for the
// given minimum compute capability and single- or multi-host search.
func SpeedArray(ccMin int, inter bool) []float32 {
	switch {
	case ccMin >= 100 && inter:
		return sm100SpeedArrayInter
	case ccMin >= 100:
		return sm100SpeedArrayIntra
	case ccMin >= 90 && inter:
		return sm90SpeedArrayInter
	case ccMin >= 90:
		return sm90SpeedArrayIntra
	case inter:
		return speedArrayInter
	}
	return speedArrayIntra
}

// Search runs ncclTopoCompute for one graph on the analysed system
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/search.cc#L1074-L1313).
// It honours ctx: when the context ends the search stops and the context's
// error is returned. NCCL_CROSS_NIC is read from env.
func Search(ctx context.Context, a *topo.Analysis, env ncclenv.Env, p Params) (*Graph, error) {
	crossNic, _ := env.Param("NCCL_CROSS_NIC", 2)
	if a == nil || a.Local == nil {
		return nil, fmt.Errorf("search: no analysed system")
	}
	return search(ctx, newPrep(a), crossNic, p)
}

func search(ctx context.Context, pr *prep, crossNicParam int64, p Params) (*Graph, error) {
	if p.MaxChannels < 1 || p.MaxChannels > MaxChannels || p.MinChannels < 0 || p.MinChannels > p.MaxChannels {
		return nil, fmt.Errorf("search: channel bounds %d..%d outside 0..%d", p.MinChannels, p.MaxChannels, MaxChannels)
	}
	s := newSearcher(ctx, pr, crossNicParam)
	g := newState(s.ngpus)
	g.id, g.pattern, g.collNet, g.minChannels, g.maxChannels = p.ID, p.Pattern, p.CollNet, p.MinChannels, p.MaxChannels
	if err := s.compute(g); err != nil {
		return nil, err
	}
	return s.result(g), nil
}

func (s *searcher) compute(graph *state) error {
	sys := s.sys
	ccMin, _, _ := sys.CompCap()
	ngpus, ndevs := s.ngpus, len(sys.Nodes[topo.DEV])
	crossNic := 0
	if s.netCount() > 1 && (graph.pattern == Ring || graph.pattern == BalancedTree || graph.pattern == SplitTree) {
		crossNic = int(s.crossNic)
	}
	graph.crossNic = 0
	if crossNic == 1 {
		graph.crossNic = 1
	}
	graph.bwIntra, graph.bwInter, graph.latencyInter = 0, 0, 0
	minTypeIntra, minTypeInter := topo.PathLOC, topo.PathPIX
	maxTypeIntra, maxTypeInter := topo.PathSYS, topo.PathSYS
	if ngpus > 1 {
		minTypeIntra, maxTypeIntra = s.p.MinGPUPath(topo.GPU), s.p.MaxGPUPath(topo.GPU)
	}
	if s.inter {
		minTypeInter, maxTypeInter = s.p.MinGPUPath(topo.NET), s.p.MaxGPUPath(topo.NET)
		maxTypeIntra = maxTypeInter
	}
	if ccMin < 90 {
		// Ampere relies on BALANCED_TREE, which sometimes needs SYS or PHB.
		maxTypeInter = topo.PathSYS
	}
	graph.typeIntra, graph.typeInter = minTypeIntra, minTypeInter
	graph.nChannels = 0
	trySame := 1
	if graph.pattern == NVLS {
		trySame = 0
	}
	graph.sameChannels = trySame
	cpuArch, cpuVendor, _ := sys.CPUType()

	if graph.pattern == NVLS && (s.nvsCount() == 0 || ccMin < 90) {
		return nil
	}
	if graph.pattern == NVLS {
		graph.maxChannels = min(32, ngpus) // NCCL_MAX_NVLS_ARITY
	}
	if graph.pattern == CollNetDirect {
		graph.maxChannels = min(8, ngpus) // NCCL_MAX_DIRECT_ARITY+1
	}
	if ngpus == 1 && graph.pattern != Ring {
		graph.pattern = Tree
	}
	if !s.inter && graph.pattern == NVLS {
		graph.minChannels = graph.maxChannels // pull evenly from all GPUs
	}
	if graph.pattern == Ring && s.p.SplitNVLink() && graph.maxChannels >= 2 && graph.minChannels == 1 {
		graph.minChannels = 2 // two NVLink islands: Tree needs >= 2 channels, Ring follows
	}

	tmp := newState(ngpus)
	tmp.copyFrom(graph)
	speed := SpeedArray(ccMin, s.inter)
	nspeeds := len(speed)
	pass, speedIndex := 1, 0
	maxBw, totalBw := s.maxBw, s.totalBw
	if ndevs > 1 && graph.pattern != Ring {
		// Other patterns need not come back to the starting NIC.
		totalBw = float32(float64(totalBw) * (float64(ndevs) * 1.0 / float64(ndevs-1)))
	}
	for (speed[speedIndex] > maxBw || speed[speedIndex]*float32(graph.minChannels) > totalBw) && speedIndex < nspeeds-1 {
		speedIndex++
	}
	tmp.bwIntra, tmp.bwInter = speed[speedIndex], speed[speedIndex]
	globalTimeout := int64(searchGlobalTimeout)

	for {
		if err := s.ctx.Err(); err != nil {
			return fmt.Errorf("graph search (pattern %s): %w", graph.pattern, err)
		}
		time := searchTimeout
		if tmp.sameChannels != 0 {
			time = searchTimeoutSameChannels
		} else if tmp.pattern == Tree {
			time = searchTimeoutTree
		}
		tmp.nChannels = 0
		globalTimeout -= int64(time)
		s.startAttempt(tmp, graph, time)
		s.searchRec()
		time = s.time
		if s.err != nil {
			return fmt.Errorf("graph search (pattern %s): %w", graph.pattern, s.err)
		}
		if s.capped {
			// MaxSearchWork: end as NCCL's "done" does with the best graph
			// so far, without a second pass.
			if pass == 1 {
				dupChannels(graph, ccMin, ngpus)
			}
			break
		}

		if pass == 1 && time != -1 && float32(graph.nChannels)*graph.bwInter < s.totalBw {
			// Pass 1: no satisfying solution yet, relax one constraint at a time.
			if tmp.sameChannels == 1 && !(cpuArch == topo.ArchX86 && cpuVendor == topo.VendorAMD && tmp.typeIntra == topo.PathSYS) {
				tmp.sameChannels = 0
				continue
			}
			tmp.sameChannels = trySame
			if time != -1 {
				globalTimeout += int64(time)
			} else {
				globalTimeout = searchGlobalTimeout
			}
			if !(globalTimeout < 0 && graph.nChannels > 0) {
				if ccMin >= 90 && tmp.pattern == BalancedTree {
					tmp.pattern = Tree // try a simpler tree
					continue
				}
				tmp.pattern = graph.pattern
				maxIntra := maxTypeIntra
				if s.inter {
					maxIntra = tmp.typeInter
				}
				if tmp.typeIntra < maxIntra && (graph.nChannels == 0 || tmp.typeIntra < graph.typeIntra) {
					tmp.typeIntra++
					if tmp.typeIntra < topo.PathDIS {
						continue
					}
				}
				tmp.typeIntra = minTypeIntra
				if s.inter && tmp.typeInter < maxTypeInter &&
					(graph.nChannels == 0 || tmp.typeInter < graph.typeInter || tmp.typeInter < topo.PathPXN) {
					tmp.typeInter++
					if tmp.typeInter < topo.PathDIS {
						continue
					}
				}
				tmp.typeInter = minTypeInter
				if crossNic == 2 && tmp.crossNic == 0 && (graph.pattern == Ring || graph.pattern == BalancedTree) {
					tmp.crossNic = 2
					continue
				}
				tmp.crossNic = 0
				if crossNic == 1 {
					tmp.crossNic = 1
				}
				if speedIndex < nspeeds-1 && (graph.nChannels == 0 || float64(speed[speedIndex+1]/graph.bwInter) > .49) {
					speedIndex++
					tmp.bwIntra, tmp.bwInter = speed[speedIndex], speed[speedIndex]
					continue
				}
				speedIndex = 0
				for speed[speedIndex] > maxBw && speedIndex < nspeeds-1 {
					speedIndex++
				}
				tmp.bwIntra, tmp.bwInter = speed[speedIndex], speed[speedIndex]
			}
		}

		// done:
		if pass == 1 {
			time = -1
			dupChannels(graph, ccMin, ngpus)
			tmp.copyFrom(graph)
			speedIndex = 0
			for speed[speedIndex] > graph.bwInter && speedIndex < nspeeds-1 {
				speedIndex++
			}
			tmp.bwIntra, tmp.bwInter = speed[speedIndex], speed[speedIndex]
			tmp.minChannels = graph.nChannels
			pass = 2
		}
		// Pass 2: try to raise the bandwidth of the solution.
		if time != 0 && speedIndex > 0 {
			if graph.pattern == Ring {
				speedIndex--
				tmp.bwIntra, tmp.bwInter = speed[speedIndex], speed[speedIndex]
				continue
			} else if graph.pattern == NVLS && tmp.bwInter == graph.bwInter && tmp.bwInter < tmp.bwIntra*2 {
				tmp.minChannels, tmp.maxChannels = graph.nChannels, graph.nChannels
				speedIndex--
				tmp.bwInter = speed[speedIndex]
				continue
			} else if tmp.bwIntra == graph.bwIntra && tmp.bwIntra < tmp.bwInter*2 {
				speedIndex--
				tmp.bwIntra = speed[speedIndex]
				continue
			}
		}
		break
	}

	if graph.nChannels == 0 && !graph.collNet && graph.pattern != NVLS {
		// Fallback: one channel in PCI order.
		for i := 0; i < ngpus; i++ {
			graph.intra[i] = s.rank(i)
		}
		graph.bwIntra = 0.1
		graph.typeIntra = topo.PathSYS
		in, out := int64(-1), int64(-1)
		if nets := s.selectNets(-1, 0); len(nets) > 0 {
			in = s.netID(nets[0])
		}
		if nets := s.selectNets(-1, ngpus-1); len(nets) > 0 {
			out = s.netID(nets[0])
		}
		if in != -1 && out != -1 {
			graph.inter[0], graph.inter[1] = in, out
			graph.bwInter = 0.1
			graph.typeInter = topo.PathSYS
		} else {
			graph.inter[0], graph.inter[1] = -1, -1
			graph.bwInter = 0
			graph.typeInter = topo.PathDIS
		}
		graph.nChannels = 1
		s.fallback = true
	}
	return nil
}

// dupChannels doubles the channels of a fast graph and splits its bandwidth
// (ncclTopoDupChannels, search.cc:1036-1049).
func dupChannels(g *state, ccMin, ngpus int) {
	if g.nChannels == 0 || g.pattern == NVLS || g.bwIntra < 25.0 {
		return
	}
	if ccMin > 80 && g.bwIntra < 50.0 && g.nChannels > 4 {
		return
	}
	dup := min(g.nChannels*2, g.maxChannels)
	copy(g.intra[g.nChannels*ngpus:dup*ngpus], g.intra[:(dup-g.nChannels)*ngpus])
	copy(g.inter[g.nChannels*2:dup*2], g.inter[:(dup-g.nChannels)*2])
	div := float32((dup + g.nChannels - 1) / g.nChannels)
	g.bwIntra /= div
	g.bwInter /= div
	g.nChannels = dup
}

// result converts the final state into a Graph.
func (s *searcher) result(g *state) *Graph {
	out := &Graph{ID: g.id, Pattern: g.pattern, CrossNic: g.crossNic, CollNet: g.collNet,
		MinChannels: g.minChannels, MaxChannels: g.maxChannels, NChannels: g.nChannels, SearchChannels: g.nChannels,
		BwIntra: g.bwIntra, BwInter: g.bwInter, LatencyInter: g.latencyInter, TypeIntra: g.typeIntra,
		TypeInter: g.typeInter, SameChannels: g.sameChannels, NHops: g.nHops, Steps: s.steps, Work: s.work + s.sortCost, WorkCapped: s.capped,
		Fallback: s.fallback}
	for c := 0; c < g.nChannels; c++ {
		n := s.ngpus
		if g.pattern == NVLS {
			n = 1 // NVLS channels only record their head GPU
		}
		ch := Channel{NetIn: -1, NetOut: -1, Ranks: make([]int, 0, n), GPUs: make([]int, 0, n)}
		for i := 0; i < n; i++ {
			r := g.intra[c*s.ngpus+i]
			ch.Ranks = append(ch.Ranks, r)
			ch.GPUs = append(ch.GPUs, s.gpuOfRank(r))
		}
		if s.inter {
			ch.NetIn, ch.NetOut = s.netIndex(g.inter[c*2]), s.netIndex(g.inter[c*2+1])
		}
		out.Channels = append(out.Channels, ch)
	}
	return out
}
