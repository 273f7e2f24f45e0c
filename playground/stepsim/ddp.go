package stepsim

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/distributed-nav/distributed-nav/playground/tune"
)

// DDP defaults from PyTorch v2.6.0 (torch/csrc/distributed/c10d/reducer.hpp
// L29-L30).
const (
	DefaultBucketCapBytes   = 25 << 20
	DefaultFirstBucketBytes = 1 << 20
)

// MaxTensors bounds Layers × TensorsPerLayer.
const MaxTensors = 1 << 20

// MaxBuckets bounds the buckets of one DDP projection, checked before any
// is built. DDP keeps a whole replica of the model on each GPU: with Adam
// (16 bytes per parameter) the largest that fits on a 192 GB GPU is about
// 12 B parameters, 48 GB of fp32 gradients, 1,830 buckets of the default
// 25 MiB; 4,096 leaves twice that room while keeping the projection, its
// timeline and its JSON small (each bucket is an allreduce and two spans).
const MaxBuckets = 4096

// DDPConfig describes the model and the step of a DDP projection.
type DDPConfig struct {
	// Params is the number of trained parameters; GradDtype the gradient
	// (and bucket) element type.
	Params    int64
	GradDtype tune.Datatype
	// BucketCapBytes is DDP's bucket_cap_mb in bytes; 0 means the default
	// (25 MiB, with a 1 MiB first bucket). A value set explicitly, even
	// 25 MiB, makes the first bucket as large as the others, as PyTorch
	// does when bucket_cap_mb is passed.
	BucketCapBytes int64
	// FirstIteration models DDP's first iteration: one bucket for all
	// gradients, reduced after backward ends.
	FirstIteration bool
	// Layers and TensorsPerLayer describe how the parameters are split into
	// tensors (each the same size); gradients become ready tensor by
	// tensor, last layer first.
	Layers          int
	TensorsPerLayer int
	// ForwardMs, BackwardMs and OptimizerMs are the compute times of one
	// step on one GPU with the per-GPU batch.
	ForwardMs   float64
	BackwardMs  float64
	OptimizerMs float64
}

// Bucket is one gradient bucket and its allreduce.
type Bucket struct {
	Index   int    `json:"index"`
	Bytes   uint64 `json:"bytes"`
	Tensors int    `json:"tensors"`
	// ReadyMs is when its last gradient is ready (backward time since the
	// start of the step); StartMs and EndMs bound its allreduce.
	ReadyMs float64 `json:"ready_ms"`
	StartMs float64 `json:"start_ms"`
	EndMs   float64 `json:"end_ms"`
	Comm    CommCost
}

// DDPResult is a DDP step projection.
type DDPResult struct {
	NGPUs   int      `json:"ngpus"`
	Buckets []Bucket `json:"buckets"`
	// GradBytes is the gradient size of the model.
	GradBytes uint64 `json:"grad_bytes"`
	// BackwardEndMs is when backward compute ends, CommEndMs when the last
	// allreduce ends (ms from the start of the step).
	BackwardEndMs float64 `json:"backward_end_ms"`
	CommEndMs     float64 `json:"comm_end_ms"`
	// TotalCommMs is the summed allreduce time, ExposedCommMs the part the
	// step waits for (not hidden behind backward).
	TotalCommMs   float64 `json:"total_comm_ms"`
	ExposedCommMs float64 `json:"exposed_comm_ms"`
	// StepMs is the step time with NGPUs GPUs, SingleGPUStepMs without any
	// communication. Speedup is throughput relative to one GPU at the same
	// per-GPU batch (NGPUs × SingleGPUStepMs / StepMs); Efficiency is
	// Speedup / NGPUs.
	StepMs          float64  `json:"step_ms"`
	SingleGPUStepMs float64  `json:"single_gpu_step_ms"`
	Speedup         float64  `json:"speedup"`
	Efficiency      float64  `json:"efficiency"`
	Timeline        Timeline `json:"timeline"`
}

// Check reports the first invalid field of the configuration.
func (c DDPConfig) Check() error {
	if c.Params <= 0 {
		return fmt.Errorf("ddp: %d parameters", c.Params)
	}
	if c.GradDtype.Size() <= 0 {
		return fmt.Errorf("ddp: unknown gradient type %v", c.GradDtype)
	}
	if c.BucketCapBytes < 0 {
		return fmt.Errorf("ddp: bucket cap %d bytes", c.BucketCapBytes)
	}
	if c.Layers < 1 || c.TensorsPerLayer < 1 {
		return fmt.Errorf("ddp: %d layers of %d tensors", c.Layers, c.TensorsPerLayer)
	}
	if int64(c.Layers)*int64(c.TensorsPerLayer) > MaxTensors {
		return fmt.Errorf("ddp: %d tensors exceed the limit of %d", int64(c.Layers)*int64(c.TensorsPerLayer), MaxTensors)
	}
	if int64(c.Layers)*int64(c.TensorsPerLayer) > c.Params {
		return fmt.Errorf("ddp: more tensors (%d) than parameters (%d)", c.Layers*c.TensorsPerLayer, c.Params)
	}
	if err := c.checkTimes(); err != nil {
		return err
	}
	if c.Params > math.MaxInt64/8 {
		return fmt.Errorf("ddp: %d parameters is too many", c.Params)
	}
	if n := c.BucketCount(); n > MaxBuckets {
		return fmt.Errorf("ddp: %d parameters in %d tensors with a bucket cap of %d bytes make %d buckets, over the limit of %d (raise the bucket cap or use fewer, larger tensors)",
			c.Params, int64(c.Layers)*int64(c.TensorsPerLayer), c.bucketCap(), n, MaxBuckets)
	}
	return nil
}

// checkTimes checks the compute times: finite and not negative.
func (c DDPConfig) checkTimes() error {
	for _, t := range []struct {
		name string
		v    float64
	}{{"forward", c.ForwardMs}, {"backward", c.BackwardMs}, {"optimizer", c.OptimizerMs}} {
		if t.v < 0 || math.IsNaN(t.v) || math.IsInf(t.v, 0) {
			return fmt.Errorf("ddp: %s time %v ms", t.name, t.v)
		}
	}
	return nil
}

// bucketCap is the bucket size limit after the first bucket.
func (c DDPConfig) bucketCap() uint64 {
	l := c.BucketLimits()
	return l[len(l)-1]
}

// BucketCount returns how many buckets AssignBuckets makes for the
// config's tensors, without building them: the work is one pass over the
// tensors (at most MaxTensors) and no allocation. Layers and
// TensorsPerLayer must be positive.
func (c DDPConfig) BucketCount() int {
	n := int64(c.Layers) * int64(c.TensorsPerLayer)
	if n <= 0 || c.Params <= 0 {
		return 0
	}
	base, rem := c.Params/n, c.Params%n
	es := uint64(c.GradDtype.Size())
	limits := c.BucketLimits()
	li, count := 0, 0
	var cur uint64
	open := false
	// Ready order is the reverse of the forward order: forward tensor i
	// (the first rem carry one parameter more) is ready (n-1-i)-th.
	for r := int64(0); r < n; r++ {
		p := base
		if n-1-r < rem {
			p++
		}
		cur += uint64(p) * es
		open = true
		if cur >= limits[li] {
			count++
			cur, open = 0, false
			if li+1 < len(limits) {
				li++
			}
		}
	}
	if open {
		count++
	}
	return count
}

// tensorsInReadyOrder splits the parameters into equal tensors (the
// remainder spread over the first ones) and returns their byte sizes in
// the order their gradients become ready: reverse of the forward order.
func (c DDPConfig) tensorsInReadyOrder() []uint64 {
	n := int64(c.Layers) * int64(c.TensorsPerLayer)
	base, rem := c.Params/n, c.Params%n
	es := uint64(c.GradDtype.Size())
	out := make([]uint64, n)
	for i := int64(0); i < n; i++ {
		p := base
		if i < rem {
			p++
		}
		out[n-1-i] = uint64(p) * es // forward tensor i is ready (n-1-i)-th
	}
	return out
}

// BucketLimits returns DDP's successive bucket size limits for the config:
// [first, cap] after the rebuild (first = 1 MiB only with the default cap),
// or one unbounded bucket in the first iteration.
func (c DDPConfig) BucketLimits() []uint64 {
	if c.FirstIteration {
		return []uint64{math.MaxUint64}
	}
	if c.BucketCapBytes == 0 {
		return []uint64{DefaultFirstBucketBytes, DefaultBucketCapBytes}
	}
	return []uint64{uint64(c.BucketCapBytes), uint64(c.BucketCapBytes)}
}

// AssignBuckets groups tensor sizes, given in gradient-ready order, the way
// compute_bucket_assignment_by_size does: a tensor joins the open bucket,
// and the bucket closes once its size reaches the current limit; the limit
// then advances to the next one (the last repeats). It returns the number
// of tensors and the bytes of each bucket.
func AssignBuckets(sizes []uint64, limits []uint64) (counts []int, bytes []uint64) {
	if len(limits) == 0 {
		limits = []uint64{math.MaxUint64}
	}
	li := 0
	var cur uint64
	n := 0
	for _, s := range sizes {
		cur += s
		n++
		if cur >= limits[li] {
			counts, bytes = append(counts, n), append(bytes, cur)
			cur, n = 0, 0
			if li+1 < len(limits) {
				li++
			}
		}
	}
	if n > 0 {
		counts, bytes = append(counts, n), append(bytes, cur)
	}
	return counts, bytes
}

// ProjectDDP projects one DDP step of cfg on the communicator comm.
func ProjectDDP(ctx context.Context, cfg DDPConfig, comm Comm) (*DDPResult, error) {
	p, err := planDDP(ctx, cfg, comm)
	if err != nil {
		return nil, err
	}
	n := p.n
	res := &DDPResult{NGPUs: n, GradBytes: p.total}
	fwd := cfg.ForwardMs
	var compute, comms []Span
	compute = append(compute, Span{Lane: LaneCompute, Kind: KindForward, Label: "forward", StartMs: 0, EndMs: fwd})
	// Gradients become ready at a uniform rate over backward.
	commFree := fwd
	prevReady := fwd
	for k := range p.counts {
		ready := fwd + cfg.BackwardMs*float64(p.done[k])/float64(p.total)
		b := Bucket{Index: k, Bytes: p.bytes[k], Tensors: p.counts[k], ReadyMs: ready}
		compute = append(compute, Span{Lane: LaneCompute, Kind: KindBackward, Label: fmt.Sprintf("backward for bucket %d", k), StartMs: prevReady, EndMs: ready})
		prevReady = ready
		if n > 1 {
			c := p.costs[k]
			b.Comm = c
			b.StartMs = max(ready, commFree)
			b.EndMs = b.StartMs + c.Us/1e3
			commFree = b.EndMs
			res.TotalCommMs += c.Us / 1e3
			comms = append(comms, Span{Lane: LaneComm, Kind: KindAllReduce, Label: fmt.Sprintf("bucket %d", k), StartMs: b.StartMs, EndMs: b.EndMs,
				Bytes: b.Bytes, Algo: c.Algo, Proto: c.Proto})
		} else {
			b.StartMs, b.EndMs = ready, ready
		}
		res.Buckets = append(res.Buckets, b)
	}
	res.BackwardEndMs = fwd + cfg.BackwardMs
	res.CommEndMs = max(commFree, res.BackwardEndMs)
	if n <= 1 {
		res.CommEndMs = res.BackwardEndMs
	}
	res.ExposedCommMs = res.CommEndMs - res.BackwardEndMs
	optStart := res.CommEndMs
	res.StepMs = optStart + cfg.OptimizerMs
	if cfg.OptimizerMs > 0 {
		compute = append(compute, Span{Lane: LaneCompute, Kind: KindOptimizer, Label: "optimizer", StartMs: optStart, EndMs: res.StepMs})
	}
	res.SingleGPUStepMs = fwd + cfg.BackwardMs + cfg.OptimizerMs
	if res.StepMs > 0 {
		res.Speedup = float64(n) * res.SingleGPUStepMs / res.StepMs
		res.Efficiency = res.Speedup / float64(n)
	}
	markExposed(compute, comms)
	res.Timeline = Timeline{Spans: append(compute, comms...), StepMs: res.StepMs}
	return res, nil
}

// SolveDDPCompute finds the compute scale at which the DDP speedup of cfg
// reaches target: forward, backward and optimizer times are all multiplied
// by the same factor (keeping cfg's ratios), found by bisection on a log
// scale. It returns the scaled config and its projection. The speedup grows
// with the compute time (more compute hides more communication) towards
// the GPU count, so targets at or above it, or below the speedup of a
// nearly compute-free step, have no solution.
func SolveDDPCompute(ctx context.Context, cfg DDPConfig, comm Comm, target float64) (DDPConfig, *DDPResult, error) {
	if cfg.ForwardMs+cfg.BackwardMs+cfg.OptimizerMs <= 0 {
		return cfg, nil, errors.New("ddp solve: the compute times are all zero; give their ratio")
	}
	n := float64(comm.NRanks())
	if !(target > 0) || target >= n {
		return cfg, nil, fmt.Errorf("ddp solve: target speedup %v outside (0, %v)", target, n)
	}
	scaled := func(k float64) DDPConfig {
		c := cfg
		c.ForwardMs, c.BackwardMs, c.OptimizerMs = cfg.ForwardMs*k, cfg.BackwardMs*k, cfg.OptimizerMs*k
		return c
	}
	// The buckets and their costs do not depend on the compute times:
	// they are worked out once, and each step of the bisection only
	// replays the timeline (a projection of 1,048,576 tensors took 10 ms,
	// 80 of them per target 0.8 s).
	plan, err := planDDP(ctx, cfg, comm)
	if err != nil {
		return cfg, nil, err
	}
	speed := func(k float64) (float64, *DDPResult, error) {
		c := scaled(k)
		if err := c.checkTimes(); err != nil {
			return 0, nil, err
		}
		return plan.speedup(c.ForwardMs, c.BackwardMs, c.OptimizerMs), nil, nil
	}
	lo, hi := 1e-9, 1e9
	slo, _, err := speed(lo)
	if err != nil {
		return cfg, nil, err
	}
	if slo >= target {
		return cfg, nil, fmt.Errorf("ddp solve: speedup %.3g even with almost no compute; target %v is below it", slo, target)
	}
	shi, _, err := speed(hi)
	if err != nil {
		return cfg, nil, err
	}
	if shi < target {
		return cfg, nil, fmt.Errorf("ddp solve: speedup %.3g at most; target %v is out of reach", shi, target)
	}
	for i := 0; i < 80 && hi/lo > 1+1e-9; i++ {
		mid := math.Sqrt(lo * hi)
		s, _, err := speed(mid)
		if err != nil {
			return cfg, nil, err
		}
		if s < target {
			lo = mid
		} else {
			hi = mid
		}
	}
	r, err := ProjectDDP(ctx, scaled(hi), comm)
	if err != nil {
		return cfg, nil, err
	}
	return scaled(hi), r, nil
}

// ddpPlan is what a DDP projection depends on besides the compute times:
// the GPU count, the buckets (tensors and bytes each), the gradient bytes
// ready when each closes, and each bucket's all-reduce cost (when there
// is more than one GPU).
type ddpPlan struct {
	n      int
	counts []int
	bytes  []uint64
	done   []uint64
	total  uint64
	costs  []CommCost
}

// planDDP works out cfg's buckets and their costs on comm.
func planDDP(ctx context.Context, cfg DDPConfig, comm Comm) (*ddpPlan, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	if comm == nil {
		return nil, errors.New("ddp: no communicator")
	}
	p := &ddpPlan{n: comm.NRanks()}
	sizes := cfg.tensorsInReadyOrder()
	for _, s := range sizes {
		p.total += s
	}
	p.counts, p.bytes = AssignBuckets(sizes, cfg.BucketLimits())
	var done uint64
	tensor := 0
	for k := range p.counts {
		if k%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("ddp: %w", err)
			}
		}
		for i := 0; i < p.counts[k]; i++ {
			done += sizes[tensor]
			tensor++
		}
		p.done = append(p.done, done)
		if p.n > 1 {
			c, err := comm.Cost(tune.AllReduce, p.bytes[k], cfg.GradDtype)
			if err != nil {
				return nil, fmt.Errorf("ddp: bucket %d: %w", k, err)
			}
			p.costs = append(p.costs, c)
		}
	}
	return p, nil
}

// speedup is ProjectDDP's Speedup for these compute times, replayed
// without building the timeline, with the same arithmetic in the same
// order (TestDDPPlanMatchesProjection holds the two equal bit for bit).
func (p *ddpPlan) speedup(fwd, back, opt float64) float64 {
	commFree := fwd
	if p.n > 1 {
		for k, d := range p.done {
			ready := fwd + back*float64(d)/float64(p.total)
			start := max(ready, commFree)
			commFree = start + p.costs[k].Us/1e3
		}
	}
	backEnd := fwd + back
	commEnd := max(commFree, backEnd)
	if p.n <= 1 {
		commEnd = backEnd
	}
	step := commEnd + opt
	if step <= 0 {
		return 0
	}
	return float64(p.n) * (fwd + back + opt) / step
}
