package graph

import (
	"github.com/distributed-nav/distributed-nav/playground/topo"
)

// prefNetsChannelFirst lists each GPU's preferred NICs channel by channel
// (ncclTopoPrefNetsChannelFirst, search.cc:507-529). gpu < 0 means all GPUs.
func (s *searcher) prefNetsChannelFirst(gpu int, nets []int) []int {
	for g := 0; g < s.ngpus; g++ {
		if gpu != -1 && gpu != g {
			continue
		}
		for _, n := range s.localNets[g] {
			nets = appendUnique(nets, n)
		}
	}
	return nets
}

func appendUnique(list []int, v int) []int {
	for _, x := range list {
		if x == v {
			return list
		}
	}
	return append(list, v)
}

// selectNets builds the ordered list of NICs to try (ncclTopoSelectNets,
// https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/search.cc#L541-L589):
// the preferred NICs of the GPU(s) first, then, unless NCCL_NETDEVS_POLICY
// caps the count, every other NIC whose path type is at most typeInter.
// Multi-node NVLink (MNNVL) hosts, which order GPU-first, are not modelled.
func (s *searcher) selectNets(typeInter topo.PathType, gpu int) []int {
	t, g := int(typeInter)+1, gpu+1
	if t < 0 || t > int(topo.PathDIS)+1 || g < 0 || g > s.ngpus {
		return s.computeSelectNets(typeInter, gpu)
	}
	key := t*(s.ngpus+1) + g
	if !s.netCached[key] {
		s.netCache[key] = s.computeSelectNets(typeInter, gpu)
		s.netCached[key] = true
	}
	return s.netCache[key]
}

// computeSelectNets is selectNets without the cache; its result depends only
// on the static paths, so it is computed once per (typeInter, gpu).
func (s *searcher) computeSelectNets(typeInter topo.PathType, gpu int) []int {
	nets := s.prefNetsChannelFirst(gpu, nil)
	cfg := s.p.Config()
	maxDev := topo.MaxNodesPerType
	if cfg.NetDevsPolicy == topo.NetDevsMax {
		maxDev = cfg.NetDevsMax
		if gpu == -1 {
			maxDev *= s.ngpus
		}
	}
	if len(nets) >= maxDev {
		return nets
	}
	for t := topo.PathType(0); t <= typeInter; t++ {
		for g := 0; g < s.ngpus; g++ {
			if gpu != -1 && gpu != g {
				continue
			}
			for n := 0; n < s.netCount() && n < MaxChannels; n++ {
				if s.p.NetPath(g, n).Type != t {
					continue
				}
				nets = appendUnique(nets, n)
				if len(nets) >= maxDev {
					return nets
				}
			}
		}
	}
	return nets
}

// checkNet says whether NIC n may close a channel that entered through
// start (ncclTopoSearchCheckNet, search.cc:593-619).
func (s *searcher) checkNet(g *state, start, n, step int) bool {
	net, st := s.net(n), s.net(start)
	if net.PlaneID != -1 && st.PlaneID != -1 && net.PlaneID != st.PlaneID {
		return false
	}
	if g.pattern == Tree && n != start {
		return false // trees are symmetric
	}
	if g.pattern == Ring && g.crossNic == 2 {
		if g.nChannels&1 == 1 && s.netID(n) != g.inter[(g.nChannels-1)*2] {
			return false
		}
	} else if g.crossNic == 0 {
		if net.RailID != -1 && st.RailID != -1 {
			if net.RailID != st.RailID {
				return false
			}
		} else if net.Asic != st.Asic || net.Port != st.Port {
			return false
		}
	}
	if g.pattern == BalancedTree && step != 0 && s.netID(n) != g.inter[g.nChannels*2+1] {
		return false
	}
	return true
}

// recNet starts a channel from each candidate NIC (ncclTopoSearchRecNet,
// https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/search.cc#L724-L816).
func (s *searcher) recNet(backToNet, backToFirst int) {
	g := s.g
	bw := int(g.bwInter) // NCCL stores it in an int
	nets := s.selectNets(g.typeInter, -1)
	found := false
	for i := range nets {
		if (g.pattern == NVLS || g.pattern == CollNetDirect) && found {
			break
		}
		n := nets[(g.nChannels+i)%len(nets)]
		net := s.net(n)
		if g.collNet && !net.Coll {
			continue
		}
		if s.netBw[n] < float32(bw) {
			continue
		}
		if g.pattern == Ring && g.crossNic == 2 && g.nChannels&1 == 1 && s.netID(n) != g.inter[(g.nChannels-1)*2+1] {
			continue
		}
		g.inter[g.nChannels*2] = s.netID(n)
		g.latencyInter = net.Latency
		s.chargeNIC(n, -float32(bw))

		if g.pattern == NVLS || g.pattern == CollNetDirect {
			if g.nChannels < len(nets) {
				if q := s.p.LocalGPU(n); q != -1 {
					dup := false
					for c := 0; c < g.nChannels; c++ {
						if g.intra[c*s.ngpus] == s.rank(q) {
							dup = true
							break
						}
					}
					if !dup {
						s.tryGPU(0, backToNet, backToFirst, 0, topo.NET, n, q)
						found = true
					}
				}
			}
		} else if g.nChannels > 0 && g.sameChannels == 1 {
			s.tryGPU(0, backToNet, backToFirst, forcedOrderReplay, topo.NET, n, s.replayGPU(g, -1))
		} else {
			if g.nChannels == 0 && s.nvsCount() == 0 {
				// Try the PCI order first with its own small budget.
				outer := s.time
				s.time = 1 << 10
				s.tryGPU(0, backToNet, backToFirst, forcedOrderPCI, topo.NET, n, 0)
				probe := s.time
				s.time = outer
				if probe == -1 {
					s.time = -1
				}
			}
			local := s.p.LocalGPU(n)
			if local != -1 {
				s.tryGPU(0, backToNet, backToFirst, 0, topo.NET, n, local)
			}
			gpus, pathType := s.netGPUs[n], s.netGPUType[n]
			if pathType == topo.PathDIS {
				// NCCL's "continue" here skips the bandwidth restore below.
				continue
			}
			for _, q := range gpus {
				if q == local {
					continue
				}
				s.tryGPU(0, backToNet, backToFirst, 0, topo.NET, n, q)
			}
		}
		s.chargeNIC(n, float32(bw))
	}
}

// chargeNIC adds delta to every NET port on the same ASIC and port as n.
func (s *searcher) chargeNIC(n int, delta float32) {
	for _, j := range s.netPeers[n] {
		s.netBw[j] += delta
	}
}

// searchParams gives the channel shape (ncclTopoSearchParams, search.cc:835-847).
func (s *searcher) searchParams(p Pattern) (backToNet, backToFirst int) {
	if s.inter {
		switch p {
		case Ring:
			return s.ngpus - 1, -1
		case SplitTree:
			return 1, -1
		}
		return 0, -1
	}
	if p == Ring {
		return -1, s.ngpus - 1
	}
	return -1, -1
}

// searchRec starts the next channel (ncclTopoSearchRec, search.cc:849-881).
func (s *searcher) searchRec() {
	g := s.g
	backToNet, backToFirst := s.searchParams(g.pattern)
	if s.inter {
		s.recNet(backToNet, backToFirst)
		return
	}
	if g.pattern == NVLS {
		s.tryGPU(0, backToNet, backToFirst, 0, -1, -1, g.nChannels)
		return
	}
	if g.nChannels == 0 {
		s.tryGPU(0, backToNet, backToFirst, forcedOrderPCI, -1, -1, 0)
	} else {
		s.tryGPU(0, backToNet, backToFirst, forcedOrderReplay, -1, -1, s.replayGPU(g, -1))
	}
	if g.sameChannels == 0 || g.nChannels == 0 {
		for q := 0; q < s.ngpus; q++ {
			s.tryGPU(0, backToNet, backToFirst, 0, -1, -1, q)
		}
	}
}
