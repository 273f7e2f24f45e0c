package stepsim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/distributed-nav/distributed-nav/playground/tune"
)

// MaxLayers bounds FSDPConfig.Layers. Each layer is wrapped by
// fully_shard and costs two or three collectives and two spans; the
// deepest published transformer stacks have a few hundred blocks (Llama
// 3.1 405B: 126), so 1,024 is far above any real model while keeping the
// projection and its output small.
const MaxLayers = 1 << 10

// FSDPConfig describes an FSDP2 (fully_shard) step: the model is Layers
// equal layers, each wrapped by fully_shard.
type FSDPConfig struct {
	Params int64
	Layers int
	// ParamDtype is the unsharded (compute) parameter type the all-gathers
	// move (MixedPrecisionPolicy.param_dtype); ReduceDtype the gradient
	// type of the reduce-scatters (reduce_dtype, defaulting to the
	// parameter type); ShardDtype the type of the sharded parameters and
	// gradients kept between steps (the parameters' own type, fp32 under
	// mixed precision).
	ParamDtype  tune.Datatype
	ReduceDtype tune.Datatype
	ShardDtype  tune.Datatype
	// ReshardAfterForward frees each layer's unsharded parameters after its
	// forward and all-gathers them again before its backward (True, the
	// FSDP2 default); False keeps them until backward.
	ReshardAfterForward bool
	ForwardMs           float64
	BackwardMs          float64
	OptimizerMs         float64
}

// LayerComm is one collective of one layer.
type LayerComm struct {
	Layer   int     `json:"layer"`
	Kind    string  `json:"kind"`
	Phase   string  `json:"phase"` // forward or backward
	Bytes   uint64  `json:"bytes"`
	StartMs float64 `json:"start_ms"`
	EndMs   float64 `json:"end_ms"`
	Comm    CommCost
}

// Memory is the per-GPU memory of parameters and gradients (activations
// and optimizer state are not included).
type Memory struct {
	ShardedParamBytes uint64 `json:"sharded_param_bytes"`
	ShardedGradBytes  uint64 `json:"sharded_grad_bytes"`
	// PeakUnshardedParamBytes and PeakUnshardedGradBytes are the largest
	// amounts of unsharded (gathered) parameters and unreduced gradients
	// alive at once; PeakParamBytes and PeakGradBytes add the shards.
	PeakUnshardedParamBytes uint64 `json:"peak_unsharded_param_bytes"`
	PeakUnshardedGradBytes  uint64 `json:"peak_unsharded_grad_bytes"`
	PeakParamBytes          uint64 `json:"peak_param_bytes"`
	PeakGradBytes           uint64 `json:"peak_grad_bytes"`
	// PeakTotalBytes is the largest parameter + gradient footprint at one
	// moment.
	PeakTotalBytes uint64 `json:"peak_total_bytes"`
}

// FSDPResult is an FSDP2 step projection.
type FSDPResult struct {
	NGPUs           int         `json:"ngpus"`
	LayerBytes      uint64      `json:"layer_param_bytes"`
	Comms           []LayerComm `json:"comms"`
	ForwardEndMs    float64     `json:"forward_end_ms"`
	BackwardEndMs   float64     `json:"backward_end_ms"`
	CommEndMs       float64     `json:"comm_end_ms"`
	TotalCommMs     float64     `json:"total_comm_ms"`
	ExposedCommMs   float64     `json:"exposed_comm_ms"`
	StepMs          float64     `json:"step_ms"`
	SingleGPUStepMs float64     `json:"single_gpu_step_ms"`
	Speedup         float64     `json:"speedup"`
	Efficiency      float64     `json:"efficiency"`
	Memory          Memory      `json:"memory"`
	Timeline        Timeline    `json:"timeline"`
}

// Check reports the first invalid field of the configuration.
func (c FSDPConfig) Check() error {
	if c.Params <= 0 || c.Params > math.MaxInt64/8 {
		return fmt.Errorf("fsdp: %d parameters", c.Params)
	}
	if c.Layers < 1 || c.Layers > MaxLayers || int64(c.Layers) > c.Params {
		return fmt.Errorf("fsdp: %d layers (want 1..%d, at most one per parameter)", c.Layers, MaxLayers)
	}
	for name, t := range map[string]tune.Datatype{"param": c.ParamDtype, "reduce": c.ReduceDtype, "shard": c.ShardDtype} {
		if t.Size() <= 0 {
			return fmt.Errorf("fsdp: unknown %s type %v", name, t)
		}
	}
	for name, v := range map[string]float64{"forward": c.ForwardMs, "backward": c.BackwardMs, "optimizer": c.OptimizerMs} {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("fsdp: %s time %v ms", name, v)
		}
	}
	return nil
}

// ProjectFSDP projects one FSDP2 step of cfg on comm. Collectives run one
// at a time in the order FSDP2 issues them: forward all-gathers one layer
// ahead of compute; in backward (layers in reverse) the next layer's
// all-gather is issued when a layer's backward starts and its
// reduce-scatter when it ends.
func ProjectFSDP(ctx context.Context, cfg FSDPConfig, comm Comm) (*FSDPResult, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	if comm == nil {
		return nil, errors.New("fsdp: no communicator")
	}
	n := comm.NRanks()
	L := cfg.Layers
	layerParams := uint64(cfg.Params) / uint64(L)
	pb, rb, sb := uint64(cfg.ParamDtype.Size()), uint64(cfg.ReduceDtype.Size()), uint64(cfg.ShardDtype.Size())
	layerBytes := layerParams * pb
	gradBytes := layerParams * rb
	res := &FSDPResult{NGPUs: n, LayerBytes: layerBytes}
	fl, bl := cfg.ForwardMs/float64(L), cfg.BackwardMs/float64(L)
	res.SingleGPUStepMs = cfg.ForwardMs + cfg.BackwardMs + cfg.OptimizerMs

	cost := func(f tune.Func, b uint64) (CommCost, error) {
		if n <= 1 {
			return CommCost{}, nil
		}
		return comm.Cost(f, b, cfg.ParamDtype)
	}
	agCost, err := cost(tune.AllGather, layerBytes)
	if err != nil {
		return nil, fmt.Errorf("fsdp: all-gather: %w", err)
	}
	var rsCost CommCost
	if n > 1 {
		if rsCost, err = comm.Cost(tune.ReduceScatter, gradBytes, cfg.ReduceDtype); err != nil {
			return nil, fmt.Errorf("fsdp: reduce-scatter: %w", err)
		}
	}
	var compute, comms []Span
	commFree := 0.0
	// issue queues a collective on the comm lane no earlier than at.
	issue := func(kind, phase string, layer int, b uint64, c CommCost, at float64) LayerComm {
		lc := LayerComm{Layer: layer, Kind: kind, Phase: phase, Bytes: b, Comm: c}
		lc.StartMs = max(at, commFree)
		lc.EndMs = lc.StartMs + c.Us/1e3
		commFree = lc.EndMs
		res.TotalCommMs += c.Us / 1e3
		res.Comms = append(res.Comms, lc)
		comms = append(comms, Span{Lane: LaneComm, Kind: kind, Label: fmt.Sprintf("%s layer %d", phase, layer), StartMs: lc.StartMs, EndMs: lc.EndMs,
			Bytes: b, Algo: c.Algo, Proto: c.Proto})
		return lc
	}
	// Memory events: +bytes at a time, -bytes at a later time.
	type memEv struct {
		t     float64
		param int64
		grad  int64
	}
	var evs []memEv

	// Forward.
	agEnd := make([]float64, L)
	agStart := make([]float64, L)
	t := 0.0
	ag := issue(KindAllGather, KindForward, 0, layerBytes, agCost, 0)
	agStart[0], agEnd[0] = ag.StartMs, ag.EndMs
	for i := 0; i < L; i++ {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("fsdp: %w", err)
			}
		}
		start := max(t, agEnd[i])
		if i+1 < L { // prefetch the next layer while this one computes
			a := issue(KindAllGather, KindForward, i+1, layerBytes, agCost, start)
			agStart[i+1], agEnd[i+1] = a.StartMs, a.EndMs
		}
		t = start + fl
		compute = append(compute, Span{Lane: LaneCompute, Kind: KindForward, Label: fmt.Sprintf("layer %d", i), StartMs: start, EndMs: t})
		evs = append(evs, memEv{agStart[i], int64(layerBytes), 0})
		if cfg.ReshardAfterForward {
			evs = append(evs, memEv{t, -int64(layerBytes), 0})
		}
	}
	res.ForwardEndMs = t

	// Backward, last layer first.
	bagEnd := make([]float64, L)
	if cfg.ReshardAfterForward {
		a := issue(KindAllGather, KindBackward, L-1, layerBytes, agCost, t)
		bagEnd[L-1] = a.EndMs
		evs = append(evs, memEv{a.StartMs, int64(layerBytes), 0})
	}
	for i := L - 1; i >= 0; i-- {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("fsdp: %w", err)
			}
		}
		start := max(t, bagEnd[i])
		if cfg.ReshardAfterForward && i > 0 {
			a := issue(KindAllGather, KindBackward, i-1, layerBytes, agCost, start)
			bagEnd[i-1] = a.EndMs
			evs = append(evs, memEv{a.StartMs, int64(layerBytes), 0})
		}
		t = start + bl
		compute = append(compute, Span{Lane: LaneCompute, Kind: KindBackward, Label: fmt.Sprintf("layer %d", i), StartMs: start, EndMs: t})
		// Unsharded gradients live from the layer's backward to the end of
		// its reduce-scatter; unsharded parameters are freed after it.
		evs = append(evs, memEv{t, -int64(layerBytes), 0})
		if n > 1 {
			rs := issue(KindReduceScatter, KindBackward, i, gradBytes, rsCost, t)
			evs = append(evs, memEv{start, 0, int64(gradBytes)}, memEv{rs.EndMs, 0, -int64(gradBytes)})
		}
	}
	res.BackwardEndMs = t
	res.CommEndMs = max(commFree, t)
	res.StepMs = res.CommEndMs + cfg.OptimizerMs
	if cfg.OptimizerMs > 0 {
		compute = append(compute, Span{Lane: LaneCompute, Kind: KindOptimizer, Label: "optimizer", StartMs: res.CommEndMs, EndMs: res.StepMs})
	}
	if res.StepMs > 0 {
		res.Speedup = float64(n) * res.SingleGPUStepMs / res.StepMs
		res.Efficiency = res.Speedup / float64(n)
	}
	// Comm spans are in issue order, which is also start order.
	markExposed(compute, comms)
	for _, c := range comms {
		res.ExposedCommMs += c.ExposedMs
	}
	// Peak memory: frees before allocations at the same instant.
	sort.SliceStable(evs, func(i, j int) bool {
		if evs[i].t != evs[j].t {
			return evs[i].t < evs[j].t
		}
		return evs[i].param+evs[i].grad < evs[j].param+evs[j].grad
	})
	var p, g, pp, pg, ptot int64
	for _, e := range evs {
		p += e.param
		g += e.grad
		pp, pg, ptot = max(pp, p), max(pg, g), max(ptot, p+g)
	}
	shardP := uint64(cfg.Params) * sb / uint64(n)
	shardG := uint64(cfg.Params) * sb / uint64(n)
	res.Memory = Memory{ShardedParamBytes: shardP, ShardedGradBytes: shardG,
		PeakUnshardedParamBytes: uint64(pp), PeakUnshardedGradBytes: uint64(pg),
		PeakParamBytes: shardP + uint64(pp), PeakGradBytes: shardG + uint64(pg),
		PeakTotalBytes: shardP + shardG + uint64(ptot)}
	res.Timeline = Timeline{Spans: append(compute, comms...), StepMs: res.StepMs}
	return res, nil
}
