package graph

import (
	"context"
	"fmt"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
	"github.com/distributed-nav/distributed-nav/playground/topo"
)

// Result holds the graphs NCCL searches at communicator init and the channel
// count it derives from them.
type Result struct {
	Ring *Graph
	Tree *Graph
	// NVLS is nil when NVLS is not supported (no NVSwitch, sm < 90,
	// NCCL_NVLS_ENABLE=0, a single GPU) or the search found no channel.
	NVLS *Graph
	// NChannels is comm->nChannels after ncclTopoPostset.
	NChannels int
	// CollChannels is min(ring, tree) before ncclTopoPostset doubles it.
	CollChannels int
	// NVLSSupport is comm->nvlsSupport after the search.
	NVLSSupport bool
	// Notes explain environment values NCCL would read differently than
	// written, and model limitations that applied.
	Notes []string

	analysis *topo.Analysis
}

// Scalars are the communicator-wide inputs of NCCL's tuning model.
type Scalars struct {
	NRanks     int
	NNodes     int
	LocalRanks int
	MinCompCap int
	MaxCompCap int
	CPUArch    topo.CPUArch
	CPUVendor  topo.CPUVendor
	NVSCount   int
	// NChannels is comm->nChannels after ncclTopoPostset.
	NChannels   int
	NVLSSupport bool
	// MaxTreePattern is the tree graph's final pattern (comm->maxTreePattern).
	MaxTreePattern Pattern
}

// Scalars returns the communicator-wide tuning inputs.
func (r *Result) Scalars() Scalars {
	a := r.analysis
	minCC, maxCC, _ := a.Local.CompCap()
	arch, vendor, _ := a.Local.CPUType()
	return Scalars{
		NRanks:         a.System.NRanks(),
		NNodes:         a.System.Hosts,
		LocalRanks:     a.System.LocalRanks(),
		MinCompCap:     minCC,
		MaxCompCap:     maxCC,
		CPUArch:        arch,
		CPUVendor:      vendor,
		NVSCount:       len(a.Local.Nodes[topo.NVS]),
		NChannels:      r.NChannels,
		NVLSSupport:    r.NVLSSupport,
		MaxTreePattern: r.Tree.Pattern,
	}
}

// Graphs returns the searched graphs in NCCL's id order (ring, tree, nvls),
// skipping the absent ones.
func (r *Result) Graphs() []*Graph {
	out := []*Graph{r.Ring, r.Tree}
	if r.NVLS != nil {
		out = append(out, r.NVLS)
	}
	return out
}

// Steps is the total number of search steps over all graphs.
func (r *Result) Steps() int64 {
	var n int64
	for _, g := range r.Graphs() {
		n += g.Steps
	}
	return n
}

// SearchAll searches the ring, tree and (when supported) NVLS graphs as
// initTransportsRank does
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/init.cc#L1171-L1217),
// aligns ring and tree to the same channel count (init.cc:1459) and applies
// ncclTopoPostset's channel rules
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/connect.cc#L380-L536).
// CollNet graphs are not searched: they need a CollNet network plugin and are
// disabled by default (config.collnetEnable = 0).
func SearchAll(ctx context.Context, a *topo.Analysis, env ncclenv.Env) (*Result, error) {
	return searchAll(ctx, a, env, MaxSearchWork)
}

// searchAll is SearchAll with each search's work capped at workCap.
func searchAll(ctx context.Context, a *topo.Analysis, env ncclenv.Env, workCap int64) (*Result, error) {
	if a == nil || a.Local == nil {
		return nil, fmt.Errorf("search: no analysed system")
	}
	res := &Result{analysis: a}
	param := func(name string, def int64) int64 {
		v, note := env.Param(name, def)
		if note != "" {
			res.Notes = append(res.Notes, note)
		}
		return v
	}
	res.Notes = append(res.Notes, a.LocalPaths.Config().Notes...)
	if a.Inter && len(a.Local.Nodes[topo.NET]) == 0 {
		res.Notes = append(res.Notes, "the search is inter-node but the topology has no NET device: NCCL needs a network to reach the other ranks, so every graph falls back to one channel without NICs")
	}
	crossNic := param("NCCL_CROSS_NIC", 2)
	pr := newPrep(a)
	pr.workCap = workCap

	ring, err := search(ctx, pr, crossNic, Params{ID: 0, Pattern: Ring, MinChannels: 1, MaxChannels: MaxChannels / 2})
	if err != nil {
		return nil, fmt.Errorf("ring: %w", err)
	}
	tree, err := search(ctx, pr, crossNic, Params{ID: 1, Pattern: BalancedTree, MinChannels: ring.NChannels, MaxChannels: ring.NChannels})
	if err != nil {
		return nil, fmt.Errorf("tree: %w", err)
	}
	res.Ring, res.Tree = ring, tree

	// ncclNvlsInit (src/transport/nvls.cc:248-281): NCCL_NVLS_ENABLE=2 (the
	// default) asks the driver for multicast support, which HGX boards with
	// NVSwitches and sm90+ GPUs report; 1 forces it on, 0 off.
	nvlsEnable := param("NCCL_NVLS_ENABLE", 2)
	minCC, _, _ := a.Local.CompCap()
	multicast := len(a.Local.Nodes[topo.NVS]) > 0 && minCC >= 90
	res.NVLSSupport = nvlsEnable != 0 && len(a.Local.Nodes[topo.GPU]) >= 2 && (nvlsEnable == 1 || multicast)
	if res.NVLSSupport {
		nvls, err := search(ctx, pr, crossNic, Params{ID: 3, Pattern: NVLS, MinChannels: 1, MaxChannels: MaxChannels})
		if err != nil {
			return nil, fmt.Errorf("nvls: %w", err)
		}
		if nvls.NChannels == 0 {
			res.NVLSSupport = false
		} else {
			res.NVLS = nvls
		}
	}

	for _, g := range res.Graphs() {
		if g.WorkCapped {
			res.Notes = append(res.Notes, fmt.Sprintf("the %s search stopped at the model's work cap (%d links read) after %d steps and kept the best graph found by then; NCCL, bound only by its step budgets, may find more channels or a faster graph on this host",
				strings.ToLower(g.Pattern.String()), workCap, g.Steps))
		}
	}
	res.CollChannels = min(ring.NChannels, tree.NChannels)
	ring.NChannels, tree.NChannels = res.CollChannels, res.CollChannels
	res.NChannels = postsetChannels(res.CollChannels, minCC, a.System.Hosts, ring.BwIntra, param)
	return res, nil
}

// postsetChannels applies ncclTopoPostset's channel arithmetic: double the
// channels, double again on Hopper+ multi-node rings faster than 45 GB/s with
// fewer than 16 channels, then clamp to NCCL_MAX_NCHANNELS / NCCL_MAX_CTAS
// and raise to NCCL_MIN_NCHANNELS / NCCL_MIN_CTAS (the legacy
// NCCL_MAX_NRINGS / NCCL_MIN_NRINGS are read first and overridden by the
// new names, connect.cc:334-359). CollNet and "unpack" network devices are
// not modelled.
func postsetChannels(n, minCC, nNodes int, ringBwIntra float32, param func(string, int64) int64) int {
	n = min(MaxChannels, n*2)
	if minCC >= 90 && nNodes > 1 && ringBwIntra > 45.0 && n < 16 {
		n *= 2
	}
	maxN := int64(MaxChannels)
	if v := param("NCCL_MAX_NRINGS", -2); v != -2 {
		maxN = v
	}
	if v := param("NCCL_MAX_NCHANNELS", -2); v != -2 {
		maxN = v
	}
	maxN = min(maxN, MaxChannels)
	if maxN < 1 {
		maxN = 1
	}
	minN := int64(0)
	if v := param("NCCL_MIN_NRINGS", -2); v != -2 {
		minN = v
	}
	if v := param("NCCL_MIN_NCHANNELS", -2); v != -2 {
		minN = v
	}
	minN = max(min(minN, MaxChannels), 0)
	// config.minCTAs/maxCTAs default to 1/MAXCHANNELS; NCCL_MIN_CTAS and
	// NCCL_MAX_CTAS override them when positive (init.cc:2013-2036, 2177-2194).
	minCTAs, maxCTAs := int64(1), int64(MaxChannels)
	if v := param("NCCL_MIN_CTAS", -1<<31); v > 0 {
		minCTAs = v
	}
	if v := param("NCCL_MAX_CTAS", -1<<31); v > 0 {
		maxCTAs = v
	}
	minCTAs, maxCTAs = min(minCTAs, MaxChannels), min(maxCTAs, MaxChannels)
	if minCTAs > maxCTAs {
		minCTAs = maxCTAs
	}
	n = int(min(min(maxN, int64(n)), maxCTAs))
	if target := int(max(minN, minCTAs)); target > n {
		n = target
	}
	return n
}
