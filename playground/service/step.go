package service

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/estimate"
	"github.com/distributed-nav/distributed-nav/playground/figure"
	"github.com/distributed-nav/distributed-nav/playground/gpus"
	"github.com/distributed-nav/distributed-nav/playground/stepsim"
	"github.com/distributed-nav/distributed-nav/playground/tune"
	"github.com/distributed-nav/distributed-nav/playground/units"
	"github.com/distributed-nav/distributed-nav/playground/workload"
)

// StepInputs are the inputs of a DDP / FSDP2 step projection, as typed
// (empty means ncclsim step's default). Field errors name them as
// "mode", "params", "bucket_cap_mb", "layers", "tensors_per_layer",
// "forward_ms", "backward_ms", "optimizer_ms", "reduce_dtype",
// "shard_dtype" and "timing".
type StepInputs struct {
	Mode                               string // "ddp" (default) or "fsdp"
	Params                             string // 7e9, 7B, 350M, ...
	BucketCapMB                        string // "" = PyTorch's default
	FirstIteration                     bool
	Layers, TensorsPerLayer            string
	ForwardMs, BackwardMs, OptimizerMs string
	// Reshard is "false" to keep gathered parameters until backward.
	Reshard                 string
	ReduceDtype, ShardDtype string
	Timing                  string // "calibrated" (default) or "model"
	// Solve is a comma list of target speedups (DDP only): for each, the
	// compute times that reach it.
	Solve string
	// GPU, when set, names a GPU of data/gpus.csv: the forward and
	// backward times not given are derived from the model size and the
	// GPU's dense BF16 throughput, and the result carries a memory
	// estimate. Batch (sequences per GPU, default 8), SeqLen (tokens per
	// sequence, default 2048), MFU (fraction of peak, default
	// workload.DefaultUtilization) and Optimizer (adamw, adam,
	// sgd-momentum or sgd; default adamw) work only with GPU. Their
	// field errors are "gpu", "batch", "seq_len", "mfu" and "optimizer".
	GPU, Batch, SeqLen, MFU, Optimizer string
}

// Defaults and limits of the step question (ncclsim step's flag defaults).
const (
	DefaultLayers          = 32
	DefaultTensorsPerLayer = 8
	MaxBucketCapMB         = 1 << 20
	DefaultBatch           = 8
	DefaultSeqLen          = 2048
	DefaultOptimizer       = workload.AdamW
	// MaxBatch and MaxSeqLen bound the derived workload's inputs.
	MaxBatch  = 1 << 20
	MaxSeqLen = 1 << 24
	// MaxSolveTargets bounds the target speedups of one step question
	// (--solve-speedup): each costs two DDP projections and some 80
	// replays of the timeline, and a reader compares a handful.
	MaxSolveTargets = 4
)

// parseCount reads a count as `ncclsim step --params` does (see
// units.ParseCount); errors name the "params" field.
func parseCount(s string) (int64, error) {
	n, err := units.ParseCount(s)
	if err != nil {
		return 0, fieldErr("params", err.Error())
	}
	return n, nil
}

// MaxComputeMs bounds a step's compute times, given or derived: 1e9 ms
// (11.6 days) is far beyond any real step, and the simulation's cost and
// output stay bounded below it.
const MaxComputeMs = 1e9

// msField parses a duration in milliseconds (empty: 0), at most MaxComputeMs.
func msField(field, s string) (float64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, nil
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > MaxComputeMs {
		return 0, fieldErr(field, "want a time in milliseconds from 0 to 1e9, not \""+s+"\"")
	}
	return v, nil
}

// intField parses a positive whole number (empty: def).
func intField(field, s string, def, hi int) (int, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return def, nil
	}
	v, err := strconv.Atoi(t)
	if err != nil || v < 1 || v > hi {
		return 0, fieldErr(field, "want a whole number in 1.."+strconv.Itoa(hi)+", not \""+s+"\"")
	}
	return v, nil
}

// StepResult is the answer to the step question, the object `ncclsim step
// --json` prints: the DDP or FSDP2 projection, the inputs as understood,
// and the calibrated estimator's class and error band for the dominant
// collective.
type StepResult struct {
	Checked  `json:"-"`
	Mode     string              `json:"model"`
	Topology string              `json:"topology"`
	NRanks   int                 `json:"nranks"`
	NNodes   int                 `json:"nnodes"`
	Timing   string              `json:"timing"`
	DDP      *stepsim.DDPResult  `json:"ddp,omitempty"`
	FSDP     *stepsim.FSDPResult `json:"fsdp,omitempty"`
	Solved   []SolvedCompute     `json:"solved,omitempty"`
	// Compute and Memory are set with a GPU: the compute times derived
	// from the model size and the GPU's throughput, and the memory
	// estimate with optimizer state and activations.
	Compute  *workload.Compute        `json:"compute,omitempty"`
	Memory   *workload.MemoryEstimate `json:"memory,omitempty"`
	Inputs   map[string]any           `json:"inputs"`
	Env      map[string]string        `json:"env"`
	Class    estimate.Class           `json:"class"`
	Band     estimate.Band            `json:"error_band"`
	Support  string                   `json:"support"`
	Problems []Problem                `json:"problems"`
}

// SolvedCompute is one solution of a target speedup (ncclsim step
// --solve-speedup): the compute times, in the ratios given, that reach it.
type SolvedCompute struct {
	TargetSpeedup float64 `json:"target_speedup"`
	ForwardMs     float64 `json:"forward_ms"`
	BackwardMs    float64 `json:"backward_ms"`
	OptimizerMs   float64 `json:"optimizer_ms"`
	StepMs        float64 `json:"step_ms"`
	Error         string  `json:"error,omitempty"`
}

// Step answers the step question for req (system fields, Dtype default
// bf16, Fabric, and Step).
func (s *Service) Step(ctx context.Context, req *Request) (*StepResult, error) {
	r, _, err := s.step(ctx, req)
	return r, err
}

// step validates req.Step, projects the step and returns the figures of
// the page with it.
func (s *Service) step(ctx context.Context, req *Request) (*StepResult, []Figure, error) {
	in := req.Step
	mode := strings.ToLower(strings.TrimSpace(in.Mode))
	if mode == "" {
		mode = "ddp"
	}
	if mode != "ddp" && mode != "fsdp" {
		return nil, nil, fieldErr("mode", "want ddp or fsdp, not \""+in.Mode+"\"")
	}
	params, err := parseCount(in.Params)
	if err != nil {
		return nil, nil, err
	}
	dts := strings.TrimSpace(req.Dtype)
	if dts == "" {
		dts = "bf16"
	}
	dt, err := tune.LookupDatatype(dts)
	if err != nil {
		return nil, nil, fieldErr("dtype", err.Error())
	}
	timing := strings.ToLower(strings.TrimSpace(in.Timing))
	if timing == "" {
		timing = "calibrated"
	}
	if timing != "calibrated" && timing != "model" {
		return nil, nil, fieldErr("timing", "want calibrated or model, not \""+in.Timing+"\"")
	}
	layers, err := intField("layers", in.Layers, DefaultLayers, stepsim.MaxLayers)
	if err != nil {
		return nil, nil, err
	}
	var fwd, bwd, opt float64
	for _, x := range []struct {
		field, v string
		dst      *float64
	}{{"forward_ms", in.ForwardMs, &fwd}, {"backward_ms", in.BackwardMs, &bwd}, {"optimizer_ms", in.OptimizerMs, &opt}} {
		if *x.dst, err = msField(x.field, x.v); err != nil {
			return nil, nil, err
		}
	}
	work, comp, err := stepWorkload(in, params, layers, dt)
	if err != nil {
		return nil, nil, err
	}
	if comp != nil {
		if strings.TrimSpace(in.ForwardMs) == "" {
			fwd = comp.ForwardMs
		}
		if strings.TrimSpace(in.BackwardMs) == "" {
			bwd = comp.BackwardMs
		}
	}
	targets, err := parseFloatList(in.Solve)
	if err != nil {
		return nil, nil, fieldErr("solve_speedup", err.Error())
	}
	if len(targets) > 0 && mode != "ddp" {
		return nil, nil, fieldErr("solve_speedup", "target speedups work with the ddp model")
	}
	b, es, err := s.modelAndEstimator(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	comm := stepsim.NewEstimatorComm(es, timing == "model")
	m := b.res.Tune
	out := &StepResult{Checked: b.checked(), Mode: mode, Topology: b.host.name, NRanks: m.Sys.NRanks, NNodes: m.Sys.NNodes, Timing: timing,
		Env: envMap(b.env), Problems: problems(b.problems),
		Inputs: map[string]any{"params": params, "dtype": dt.String(), "forward_ms": fwd, "backward_ms": bwd, "optimizer_ms": opt, "layers": layers}}
	// The class and band of the collective that dominates.
	domFunc := tune.AllReduce
	if mode == "fsdp" {
		domFunc = tune.AllGather
	}
	if m.Sys.NRanks > 1 {
		if e, err := es.Estimate(tune.Request{Func: domFunc, NBytes: 64 << 20, Datatype: dt}); err == nil {
			out.Class, out.Band, out.Support = e.Calibrated.Class, e.Calibrated.Band, e.Calibrated.Support
		}
	}
	var figs []Figure
	switch mode {
	case "ddp":
		tensors, err := intField("tensors_per_layer", in.TensorsPerLayer, DefaultTensorsPerLayer, stepsim.MaxTensors)
		if err != nil {
			return nil, nil, err
		}
		cfg := stepsim.DDPConfig{Params: params, GradDtype: dt, FirstIteration: in.FirstIteration, Layers: layers, TensorsPerLayer: tensors,
			ForwardMs: fwd, BackwardMs: bwd, OptimizerMs: opt}
		if c := strings.TrimSpace(in.BucketCapMB); c != "" {
			mb, err := strconv.ParseFloat(c, 64)
			if err != nil || !(mb > 0) || math.IsInf(mb, 0) || mb > MaxBucketCapMB {
				return nil, nil, fieldErr("bucket_cap_mb", "want a positive size in MiB up to "+strconv.Itoa(MaxBucketCapMB)+", not \""+c+"\"")
			}
			cfg.BucketCapBytes = int64(mb * (1 << 20))
			out.Inputs["bucket_cap_mb"] = mb
		}
		out.Inputs["first_iteration"] = in.FirstIteration
		out.Inputs["tensors_per_layer"] = tensors
		if err := cfg.Check(); err != nil {
			return nil, nil, fieldErr("params", err.Error())
		}
		r, err := stepsim.ProjectDDP(ctx, cfg, comm)
		if err != nil {
			return nil, nil, err
		}
		out.DDP = r
		if work != nil {
			mem, err := work.MemoryDDP()
			if err != nil {
				return nil, nil, err
			}
			out.Memory = &mem
		}
		for _, t := range targets {
			sc, sr, err := stepsim.SolveDDPCompute(ctx, cfg, comm, t)
			sol := SolvedCompute{TargetSpeedup: t}
			if err != nil {
				sol.Error = err.Error()
			} else {
				sol.ForwardMs, sol.BackwardMs, sol.OptimizerMs, sol.StepMs = sc.ForwardMs, sc.BackwardMs, sc.OptimizerMs, sr.StepMs
			}
			out.Solved = append(out.Solved, sol)
		}
		figs = []Figure{
			{"timeline", figure.Timeline(r.Timeline, figure.TimelineOptions{Label: "DDP step timeline: backward compute and bucket allreduces on " + strconv.Itoa(r.NGPUs) + " GPUs, and one GPU's step", SingleGPUMs: r.SingleGPUStepMs, NGPUs: r.NGPUs})},
			{"spans", bucketTable(r)},
		}
	case "fsdp":
		rd, sd := dt, dt
		if t := strings.TrimSpace(in.ReduceDtype); t != "" {
			if rd, err = tune.LookupDatatype(t); err != nil {
				return nil, nil, fieldErr("reduce_dtype", err.Error())
			}
		}
		if t := strings.TrimSpace(in.ShardDtype); t != "" {
			if sd, err = tune.LookupDatatype(t); err != nil {
				return nil, nil, fieldErr("shard_dtype", err.Error())
			}
		}
		reshard := strings.TrimSpace(strings.ToLower(in.Reshard)) != "false"
		cfg := stepsim.FSDPConfig{Params: params, Layers: layers, ParamDtype: dt, ReduceDtype: rd, ShardDtype: sd,
			ReshardAfterForward: reshard, ForwardMs: fwd, BackwardMs: bwd, OptimizerMs: opt}
		out.Inputs["reshard_after_forward"] = reshard
		out.Inputs["reduce_dtype"], out.Inputs["shard_dtype"] = rd.String(), sd.String()
		if err := cfg.Check(); err != nil {
			return nil, nil, fieldErr("params", err.Error())
		}
		r, err := stepsim.ProjectFSDP(ctx, cfg, comm)
		if err != nil {
			return nil, nil, err
		}
		out.FSDP = r
		if work != nil {
			mem, err := work.MemoryFSDP(r, sd, m.Sys.NRanks)
			if err != nil {
				return nil, nil, err
			}
			out.Memory = &mem
		}
		figs = []Figure{
			{"timeline", figure.Timeline(r.Timeline, figure.TimelineOptions{Label: "FSDP2 step timeline: per-layer all-gathers and reduce-scatters against compute on " + strconv.Itoa(r.NGPUs) + " GPUs, and one GPU's step", SingleGPUMs: r.SingleGPUStepMs, NGPUs: r.NGPUs})},
			{"spans", commTable(r)},
		}
	}
	out.Compute = comp
	return out, figs, nil
}

// stepWorkload reads the GPU inputs of in: with a GPU, the workload and
// its derived compute; without one, none (and none of the inputs that
// need a GPU may be set).
func stepWorkload(in StepInputs, params int64, layers int, dt tune.Datatype) (*workload.Workload, *workload.Compute, error) {
	if strings.TrimSpace(in.GPU) == "" {
		for _, x := range []struct{ field, v string }{{"batch", in.Batch}, {"seq_len", in.SeqLen}, {"mfu", in.MFU}, {"optimizer", in.Optimizer}} {
			if strings.TrimSpace(x.v) != "" {
				return nil, nil, fieldErr(x.field, "works with --gpu only")
			}
		}
		return nil, nil, nil
	}
	g, err := gpus.Lookup(strings.TrimSpace(in.GPU))
	if err != nil {
		return nil, nil, fieldErr("gpu", err.Error())
	}
	opt := DefaultOptimizer
	if t := strings.TrimSpace(in.Optimizer); t != "" {
		if opt, err = workload.ParseOptimizer(t); err != nil {
			return nil, nil, fieldErr("optimizer", err.Error())
		}
	}
	mfu := workload.DefaultUtilization
	if t := strings.TrimSpace(in.MFU); t != "" {
		v, err := strconv.ParseFloat(t, 64)
		if err != nil || !(v >= workload.MinUtilization && v <= 1) {
			return nil, nil, fieldErr("mfu", t+": want a fraction from "+strconv.FormatFloat(workload.MinUtilization, 'g', -1, 64)+" to 1")
		}
		mfu = v
	}
	batch, err := intField("batch", in.Batch, DefaultBatch, MaxBatch)
	if err != nil {
		return nil, nil, err
	}
	seq, err := intField("seq_len", in.SeqLen, DefaultSeqLen, MaxSeqLen)
	if err != nil {
		return nil, nil, err
	}
	w := &workload.Workload{Params: params, Layers: layers, Dtype: dt, Batch: batch, SeqLen: seq, GPU: g, Utilization: mfu, Optimizer: opt}
	c, err := w.Derive()
	if err != nil {
		return nil, nil, fieldErr("gpu", err.Error())
	}
	if c.ForwardMs+c.BackwardMs > MaxComputeMs {
		// The step simulation advances a clock through these times; past
		// this it neither ends soon nor says anything a reader can use.
		return nil, nil, fieldErr("params", "the derived compute time is "+strconv.FormatFloat(c.ForwardMs+c.BackwardMs, 'g', 3, 64)+
			" ms per step (forward and backward of "+strconv.FormatInt(c.TokensPerGPU, 10)+" tokens per GPU at "+
			strconv.FormatFloat(100*c.Utilization, 'g', 3, 64)+" % of "+c.GPU+"'s peak); the limit is 1e9 ms (11.6 days): lower the parameters, batch or sequence length")
	}
	return w, &c, nil
}

// parseFloatList reads a comma list of positive numbers (empty: none).
func parseFloatList(s string) ([]float64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	if n := strings.Count(s, ",") + 1; n > MaxSolveTargets {
		return nil, fmt.Errorf("%d target speedups, over the limit of %d", n, MaxSolveTargets)
	}
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%q is not a positive number", f)
		}
		out = append(out, v)
	}
	return out, nil
}

// StepPage is the step page's answer: Result and the ncclsim line; the
// figures are "timeline" (the step's compute and communication lanes next
// to one GPU's step) and "spans" (the buckets or the per-layer
// collectives).
type StepPage struct {
	Result  *StepResult `json:"result"`
	Command string      `json:"command"`
	Figures []Figure    `json:"-"`
}

// StepPage answers the step page for req.
func (s *Service) StepPage(ctx context.Context, req *Request) (*StepPage, error) {
	r, figs, err := s.step(ctx, req)
	if err != nil {
		return nil, err
	}
	return &StepPage{Result: r, Command: commandLine("step", req, stepArgs(req)), Figures: figs}, nil
}

// maxTableRows bounds the span tables; the middle rows are summarised.
const maxTableRows = 24

// elide keeps the first and last rows of a long table.
func elide(n int) func(i int) (show, gap bool) {
	return func(i int) (bool, bool) {
		if n <= maxTableRows {
			return true, false
		}
		h := maxTableRows / 2
		if i < h || i >= n-h {
			return true, false
		}
		return false, i == h
	}
}

// bucketTable lists DDP's buckets and their allreduces.
func bucketTable(r *stepsim.DDPResult) string {
	spec := figure.TableSpec{
		Caption: "DDP buckets: when each bucket's last gradient is ready and when its allreduce runs (ms from the start of the step)",
		Head:    []string{"bucket", "bytes", "ready (ms)", "start (ms)", "end (ms)", "allreduce (ms)", "algorithm/protocol", "busbw (GB/s)"},
		Class:   "pg-spans",
	}
	keep := elide(len(r.Buckets))
	for i, bk := range r.Buckets {
		show, gap := keep(i)
		if gap {
			spec.Rows = append(spec.Rows, figure.Row{Cells: []figure.Cell{{Text: "…"}, {Text: strconv.Itoa(len(r.Buckets)-maxTableRows) + " more buckets"}}})
		}
		if !show {
			continue
		}
		spec.Rows = append(spec.Rows, figure.Row{Attr: strconv.Itoa(bk.Index), Cells: []figure.Cell{
			{Text: strconv.Itoa(bk.Index)},
			{Text: figure.Bytes(float64(bk.Bytes)), Value: strconv.FormatUint(bk.Bytes, 10)},
			{Text: figure.Fixed(bk.ReadyMs, 3), Value: f64s(bk.ReadyMs)},
			{Text: figure.Fixed(bk.StartMs, 3), Value: f64s(bk.StartMs)},
			{Text: figure.Fixed(bk.EndMs, 3), Value: f64s(bk.EndMs)},
			{Text: figure.Fixed(bk.Comm.Us/1e3, 3), Value: f64s(bk.Comm.Us / 1e3)},
			{Text: bk.Comm.Algo + "/" + bk.Comm.Proto},
			{Text: figure.Fixed(bk.Comm.BusBwGBps, 2), Value: f64s(bk.Comm.BusBwGBps)},
		}})
	}
	return figure.Table(spec)
}

// commTable lists FSDP2's per-layer collectives.
func commTable(r *stepsim.FSDPResult) string {
	spec := figure.TableSpec{
		Caption: "FSDP2 collectives per layer (ms from the start of the step)",
		Head:    []string{"#", "layer", "collective", "phase", "bytes", "start (ms)", "end (ms)", "time (ms)", "algorithm/protocol"},
		Class:   "pg-spans",
	}
	keep := elide(len(r.Comms))
	for i, c := range r.Comms {
		show, gap := keep(i)
		if gap {
			spec.Rows = append(spec.Rows, figure.Row{Cells: []figure.Cell{{Text: "…"}, {Text: strconv.Itoa(len(r.Comms)-maxTableRows) + " more"}}})
		}
		if !show {
			continue
		}
		spec.Rows = append(spec.Rows, figure.Row{Attr: strconv.Itoa(i), Cells: []figure.Cell{
			{Text: strconv.Itoa(i)},
			{Text: strconv.Itoa(c.Layer)},
			{Text: c.Kind},
			{Text: c.Phase},
			{Text: figure.Bytes(float64(c.Bytes)), Value: strconv.FormatUint(c.Bytes, 10)},
			{Text: figure.Fixed(c.StartMs, 3), Value: f64s(c.StartMs)},
			{Text: figure.Fixed(c.EndMs, 3), Value: f64s(c.EndMs)},
			{Text: figure.Fixed(c.Comm.Us/1e3, 3), Value: f64s(c.Comm.Us / 1e3)},
			{Text: c.Comm.Algo + "/" + c.Comm.Proto},
		}})
	}
	return figure.Table(spec)
}
