// Package model runs NCCL's communicator-init pipeline end to end for a
// simulated job: a host topology (topo) replicated over some nodes, path
// computation and trimming (topo.Analyze), the ring/tree/NVLS graph search
// (graph.SearchAll) and the tuning model (tune.NewModel), all under one NCCL
// environment. It is the only implementation of that pipeline: package
// service (behind ncclsim, the wasm adapter and the generator's static
// views) and the estimator's fit call it; it holds no state of its own.
package model

import (
	"context"
	"fmt"
	"io"
	"math"

	"github.com/distributed-nav/distributed-nav/playground/graph"
	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
	"github.com/distributed-nav/distributed-nav/playground/topo"
	"github.com/distributed-nav/distributed-nav/playground/tune"
)

// Result is everything the pipeline computed for one job.
type Result struct {
	// System is the host topology replicated over the job's nodes.
	System   *topo.System
	Analysis *topo.Analysis
	Search   *graph.Result
	Tune     *tune.Model
	// Notes collects what the stages want the user to know (values NCCL
	// reads differently than written, model limitations).
	Notes []string
}

// Build runs the pipeline for host (one node's topology) over nodes
// identical nodes with environment env: Search, then Tune. The search
// honours ctx.
func Build(ctx context.Context, host *topo.System, nodes int, env ncclenv.Env) (*Result, error) {
	res, err := Search(ctx, host, nodes, env)
	if err != nil {
		return nil, err
	}
	if err := res.AddTuning(env); err != nil {
		return nil, err
	}
	return res, nil
}

// Search runs the stages before tuning: it replicates host over nodes,
// analyses the paths and searches the graphs. The Result has no Tune
// model yet (AddTuning adds it); the topology view needs nothing more, and
// it stays available when the environment makes the tuning model fail.
// A host of more GPUs than topo.MaxLocalRanks is refused before any work.
func Search(ctx context.Context, host *topo.System, nodes int, env ncclenv.Env) (*Result, error) {
	if host == nil {
		return nil, fmt.Errorf("model: no topology")
	}
	if nodes < 1 {
		return nil, fmt.Errorf("model: %d nodes, want at least 1", nodes)
	}
	if n := host.LocalRanks(); n > topo.MaxLocalRanks {
		// NCCL would overrun its per-host arrays before its search ended; the
		// search's cost grows with the square of the GPU count, so a model
		// that ran it anyway would spend seconds on a system NCCL cannot run.
		return nil, fmt.Errorf("model: %d GPUs on one host, more than the %d local ranks NCCL's per-host state holds (NCCL_MAX_LOCAL_RANKS, https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/include/device.h#L92): NCCL cannot run one communicator over them, so the graph search is not run; describe at most %d GPUs per host", n, topo.MaxLocalRanks, topo.MaxLocalRanks)
	}
	sys, err := host.Replicate(nodes)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	a, err := topo.Analyze(sys, env)
	if err != nil {
		return nil, fmt.Errorf("model: analyse topology: %w", err)
	}
	sr, err := graph.SearchAll(ctx, a, env)
	if err != nil {
		return nil, fmt.Errorf("model: graph search: %w", err)
	}
	return &Result{System: sys, Analysis: a, Search: sr, Notes: append([]string(nil), sr.Notes...)}, nil
}

// AddTuning builds the tuning model on a Search result under env (the
// same environment the search ran with) and records its notes.
func (res *Result) AddTuning(env ncclenv.Env) error {
	opts, err := tune.OptionsFromEnv(env)
	if err != nil {
		return fmt.Errorf("model: %w", err)
	}
	ts, tg := TuneInputs(res.Search, res.Analysis.Local)
	tm, err := tune.NewModel(ts, tg, opts)
	if err != nil {
		return fmt.Errorf("model: tuning: %w", err)
	}
	res.Tune = tm
	if res.Search.NChannels != tm.CommNChannels {
		res.Notes = append(res.Notes, fmt.Sprintf("graph search derived %d channels, the tuning model %d; the tuning model's count is used", res.Search.NChannels, tm.CommNChannels))
	}
	return nil
}

// BuildXML parses a topology XML (as NCCL_TOPO_DUMP_FILE writes it) and runs
// Build. Parser warnings are returned alongside the result.
func BuildXML(ctx context.Context, r io.Reader, nodes int, env ncclenv.Env) (*Result, []topo.Warning, error) {
	host, warns, err := topo.ParseXML(r)
	if err != nil {
		return nil, warns, fmt.Errorf("model: parse topology: %w", err)
	}
	res, err := Build(ctx, host, nodes, env)
	return res, warns, err
}

// TuneInputs converts a graph search result into the tuning model's inputs:
// the communicator scalars and the five searched graphs (CollNet graphs stay
// zero, as NCCL leaves them without a CollNet plugin). local is the trimmed
// host system the search ran on; it supplies the slowest NIC speed.
func TuneInputs(sr *graph.Result, local *topo.System) (tune.System, tune.Graphs) {
	sc := sr.Scalars()
	s := tune.System{
		NRanks:         sc.NRanks,
		NNodes:         sc.NNodes,
		MinCompCap:     sc.MinCompCap,
		MaxCompCap:     sc.MaxCompCap,
		CPUArch:        tune.CPUArch(sc.CPUArch),
		CPUVendor:      tune.CPUVendor(sc.CPUVendor),
		NVSCount:       sc.NVSCount,
		NetDeviceType:  tune.NetDeviceHost,
		NVLSSupport:    sc.NVLSSupport,
		MaxTreePattern: tune.Pattern(sc.MaxTreePattern),
	}
	if sc.NNodes > 0 && sc.LocalRanks > 0 && sc.LocalRanks*sc.NNodes == sc.NRanks {
		s.LocalRanks = make([]int, sc.NNodes)
		for i := range s.LocalRanks {
			s.LocalRanks[i] = sc.LocalRanks
		}
	}
	if local != nil {
		minBw := float32(math.MaxFloat32)
		for _, n := range local.NETs() {
			minBw = min(minBw, n.Net.Bw)
		}
		if minBw != math.MaxFloat32 {
			s.MinNetBw = float64(minBw)
		}
	}
	g := tune.Graphs{Ring: convert(sr.Ring), Tree: convert(sr.Tree)}
	if sr.NVLS != nil {
		g.NVLS = convert(sr.NVLS)
	}
	return s, g
}

// convert copies the fields the tuning model reads. Bandwidths are float32
// in both NCCL and the graph package, so widening them loses nothing.
func convert(g *graph.Graph) tune.Graph {
	if g == nil {
		return tune.Graph{}
	}
	return tune.Graph{
		Pattern:      tune.Pattern(g.Pattern),
		NChannels:    g.NChannels,
		BwIntra:      float64(g.BwIntra),
		BwInter:      float64(g.BwInter),
		TypeIntra:    g.TypeIntra,
		TypeInter:    g.TypeInter,
		LatencyInter: float64(g.LatencyInter),
		SameChannels: g.SameChannels != 0,
		CrossNic:     g.CrossNic == 1,
	}
}
