package main

// This file implements `ncclsim step`: one training step of DDP or FSDP2
// projected onto a system (package stepsim), with collective times from
// the calibrated estimator (or NCCL's model with --timing model).

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/estimate"
	"github.com/distributed-nav/distributed-nav/playground/gpus"
	"github.com/distributed-nav/distributed-nav/playground/stepsim"
	"github.com/distributed-nav/distributed-nav/playground/tune"
	"github.com/distributed-nav/distributed-nav/playground/units"
	"github.com/distributed-nav/distributed-nav/playground/workload"
)

// stepArgs are the flags of `ncclsim step`.
type stepArgs struct {
	sys          systemFlags
	asJSON       bool
	mode         string
	params       string
	dtype        string
	bucketCap    float64
	firstIter    bool
	layers       int
	tensors      int
	forwardMs    float64
	backwardMs   float64
	optimizerMs  float64
	reshard      bool
	reduceDtype  string
	shardDtype   string
	timing       string
	fabric       string
	calibration  string
	solve        string
	showTimeline bool
	gpu          string
	batch        int
	seqLen       int
	mfu          float64
	optimizer    string
}

// stepOutput is the JSON form of `ncclsim step`.
type stepOutput struct {
	Mode     string              `json:"model"`
	Topology string              `json:"topology"`
	NRanks   int                 `json:"nranks"`
	NNodes   int                 `json:"nnodes"`
	Timing   string              `json:"timing"`
	DDP      *stepsim.DDPResult  `json:"ddp,omitempty"`
	FSDP     *stepsim.FSDPResult `json:"fsdp,omitempty"`
	Solved   []stepSolved        `json:"solved,omitempty"`
	// Compute and Memory are set with --gpu: the compute times derived
	// from the model size and the GPU's throughput, and the memory
	// estimate with optimizer state and activations.
	Compute  *workload.Compute        `json:"compute,omitempty"`
	Memory   *workload.MemoryEstimate `json:"memory,omitempty"`
	Inputs   map[string]any           `json:"inputs"`
	Env      map[string]string        `json:"env"`
	Class    estimate.Class           `json:"class"`
	Band     estimate.Band            `json:"error_band"`
	Support  string                   `json:"support"`
	Problems []tuneProblem            `json:"problems"`
}

// stepSolved is one solution of --solve-speedup.
type stepSolved struct {
	TargetSpeedup float64 `json:"target_speedup"`
	ForwardMs     float64 `json:"forward_ms"`
	BackwardMs    float64 `json:"backward_ms"`
	OptimizerMs   float64 `json:"optimizer_ms"`
	StepMs        float64 `json:"step_ms"`
	Error         string  `json:"error,omitempty"`
}

// runStep implements `ncclsim step`; stdin is read for "-" file names.
func runStep(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("step", stderr)
	var a stepArgs
	a.sys.register(fs)
	fs.BoolVar(&a.asJSON, "json", false, "print JSON")
	fs.StringVar(&a.mode, "model", "ddp", "parallelism: ddp (DistributedDataParallel) or fsdp (FSDP2 fully_shard)")
	fs.StringVar(&a.params, "params", "", "trained parameters, e.g. 7e9 or 7B, 350M (required)")
	fs.StringVar(&a.dtype, "dtype", "bf16", "gradient type for DDP; parameter (all-gather) type for FSDP")
	fs.Float64Var(&a.bucketCap, "bucket-cap-mb", 0, "DDP bucket_cap_mb in MiB; unset = PyTorch's default 25 MiB with a 1 MiB first bucket")
	fs.BoolVar(&a.firstIter, "first-iteration", false, "DDP's first iteration: one bucket for all gradients, reduced after backward")
	fs.IntVar(&a.layers, "layers", 32, "layers of the model (FSDP: one fully_shard unit each; DDP: tensor grouping)")
	fs.IntVar(&a.tensors, "tensors-per-layer", 8, "DDP: parameter tensors per layer (gradients become ready tensor by tensor)")
	fs.Float64Var(&a.forwardMs, "forward-ms", 0, "forward compute time of one step on one GPU (ms)")
	fs.Float64Var(&a.backwardMs, "backward-ms", 0, "backward compute time of one step on one GPU (ms)")
	fs.Float64Var(&a.optimizerMs, "optimizer-ms", 0, "optimizer step time on one GPU (ms)")
	fs.BoolVar(&a.reshard, "reshard-after-forward", true, "FSDP: free gathered parameters after forward and gather them again in backward")
	fs.StringVar(&a.reduceDtype, "reduce-dtype", "", "FSDP: reduce-scatter type (default: --dtype)")
	fs.StringVar(&a.shardDtype, "shard-dtype", "", "FSDP: type of the sharded parameters and gradients (default: --dtype; fp32 under mixed precision)")
	fs.StringVar(&a.timing, "timing", "calibrated", "collective times: calibrated (what nccl-tests would measure) or model (NCCL's tuning model)")
	fs.StringVar(&a.fabric, "fabric", "auto", "network between nodes: auto, rdma or tcp")
	fs.StringVar(&a.calibration, "calibration", "", "calibration file (default: the one built into ncclsim)")
	fs.StringVar(&a.solve, "solve-speedup", "", "DDP: comma list of target speedups; for each, the compute times (same ratios as given) that reach it")
	fs.BoolVar(&a.showTimeline, "timeline", false, "text output: list every span of the timeline")
	fs.StringVar(&a.gpu, "gpu", "", "GPU (see data/gpus.csv: H100-SXM, A100-80GB, L40S, A40, RTX-4090, ...): derive forward and backward time from the model size and its dense BF16 throughput, and estimate memory")
	fs.IntVar(&a.batch, "batch", 8, "with --gpu: sequences per GPU per step")
	fs.IntVar(&a.seqLen, "seq-len", 2048, "with --gpu: tokens per sequence")
	fs.Float64Var(&a.mfu, "mfu", workload.DefaultUtilization, "with --gpu: fraction of the GPU's peak dense BF16 throughput the step reaches")
	fs.StringVar(&a.optimizer, "optimizer", "adamw", "with --gpu: optimizer whose state the memory estimate counts: adamw, adam, sgd-momentum or sgd")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: ncclsim step (--preset NAME | --xml FILE) [--nodes N] [--p2p MODE] [--env NAME=VALUE]... --model ddp|fsdp --params N [--dtype T]")
		fmt.Fprintln(stderr, "         [--bucket-cap-mb MB] [--first-iteration] [--layers L] [--tensors-per-layer T] --forward-ms F --backward-ms B [--optimizer-ms O]")
		fmt.Fprintln(stderr, "         [--reshard-after-forward=false] [--reduce-dtype T] [--shard-dtype T] [--timing calibrated|model] [--solve-speedup S,...] [--timeline] [--json]")
		fmt.Fprintln(stderr, "   or: ncclsim step SYSTEM --model ddp|fsdp --params N --layers L --gpu GPU [--batch B] [--seq-len S] [--mfu U] [--optimizer O] ... (compute derived; --forward-ms/--backward-ms override it)")
		fmt.Fprintln(stderr, "Projects one training step: backward compute against the overlapping collectives, exposed communication, step time and speedup over one GPU.")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	bucketSet := set["bucket-cap-mb"]
	params, err := parseCount(a.params)
	if err != nil {
		return usagef("--params: %v", err)
	}
	dt, err := tune.LookupDatatype(a.dtype)
	if err != nil {
		return usagef("--dtype: %v", err)
	}
	if a.mode != "ddp" && a.mode != "fsdp" {
		return usagef("--model %q: want ddp or fsdp", a.mode)
	}
	if a.timing != "calibrated" && a.timing != "model" {
		return usagef("--timing %q: want calibrated or model", a.timing)
	}
	if bucketSet && !(a.bucketCap > 0) {
		return usagef("--bucket-cap-mb %v: want a positive size", a.bucketCap)
	}
	targets, err := parseFloatList(a.solve)
	if err != nil {
		return usagef("--solve-speedup: %v", err)
	}
	if len(targets) > 0 && a.mode != "ddp" {
		return usagef("--solve-speedup works with --model ddp")
	}
	fabric, err := estimate.ParseFabric(a.fabric)
	if err != nil {
		return usagef("--fabric: %v", err)
	}
	var work *workload.Workload
	var comp *workload.Compute
	if a.gpu != "" {
		g, err := gpus.Lookup(a.gpu)
		if err != nil {
			return usagef("--gpu: %v", err)
		}
		opt, err := workload.ParseOptimizer(a.optimizer)
		if err != nil {
			return usagef("--optimizer: %v", err)
		}
		if !(a.mfu > 0 && a.mfu <= 1) {
			return usagef("--mfu %v: want a fraction in (0, 1]", a.mfu)
		}
		work = &workload.Workload{Params: params, Layers: a.layers, Dtype: dt, Batch: a.batch, SeqLen: a.seqLen, GPU: g, Utilization: a.mfu, Optimizer: opt}
		c, err := work.Derive()
		if err != nil {
			return usageError{err}
		}
		comp = &c
		if !set["forward-ms"] {
			a.forwardMs = c.ForwardMs
		}
		if !set["backward-ms"] {
			a.backwardMs = c.BackwardMs
		}
	} else {
		for _, n := range []string{"batch", "seq-len", "mfu", "optimizer"} {
			if set[n] {
				return usagef("--%s works with --gpu", n)
			}
		}
	}
	cal, err := loadCalibration(a.calibration)
	if err != nil {
		return err
	}
	run, err := buildTuneModel(ctx, &a.sys, stdin, stderr)
	if err != nil {
		return err
	}
	sys, err := estimate.NewSystem(run.res, fabric, cal)
	if err != nil {
		return err
	}
	comm := stepsim.NewEstimatorComm(sys, a.timing == "model")
	m := run.res.Tune
	out := stepOutput{Mode: a.mode, Topology: run.name, NRanks: m.Sys.NRanks, NNodes: m.Sys.NNodes, Timing: a.timing,
		Env: tuneEnvMap(run.env), Problems: tuneProblems(run.problems),
		Inputs: map[string]any{"params": params, "dtype": dt.String(), "forward_ms": a.forwardMs, "backward_ms": a.backwardMs, "optimizer_ms": a.optimizerMs, "layers": a.layers}}
	// The class and band of the collective that dominates.
	domFunc := tune.AllReduce
	if a.mode == "fsdp" {
		domFunc = tune.AllGather
	}
	if m.Sys.NRanks > 1 {
		if e, err := sys.Estimate(tune.Request{Func: domFunc, NBytes: 64 << 20, Datatype: dt}); err == nil {
			out.Class, out.Band, out.Support = e.Calibrated.Class, e.Calibrated.Band, e.Calibrated.Support
		}
	}
	switch a.mode {
	case "ddp":
		cfg := stepsim.DDPConfig{Params: params, GradDtype: dt, FirstIteration: a.firstIter, Layers: a.layers, TensorsPerLayer: a.tensors,
			ForwardMs: a.forwardMs, BackwardMs: a.backwardMs, OptimizerMs: a.optimizerMs}
		if bucketSet {
			cfg.BucketCapBytes = int64(a.bucketCap * (1 << 20))
			out.Inputs["bucket_cap_mb"] = a.bucketCap
		}
		out.Inputs["first_iteration"] = a.firstIter
		out.Inputs["tensors_per_layer"] = a.tensors
		if err := cfg.Check(); err != nil {
			return usageError{err}
		}
		r, err := stepsim.ProjectDDP(ctx, cfg, comm)
		if err != nil {
			return err
		}
		out.DDP = r
		if work != nil {
			mem, err := work.MemoryDDP()
			if err != nil {
				return err
			}
			out.Memory = &mem
		}
		for _, t := range targets {
			sc, sr, err := stepsim.SolveDDPCompute(ctx, cfg, comm, t)
			s := stepSolved{TargetSpeedup: t}
			if err != nil {
				s.Error = err.Error()
			} else {
				s.ForwardMs, s.BackwardMs, s.OptimizerMs, s.StepMs = sc.ForwardMs, sc.BackwardMs, sc.OptimizerMs, sr.StepMs
			}
			out.Solved = append(out.Solved, s)
		}
	case "fsdp":
		rd, sd := dt, dt
		if a.reduceDtype != "" {
			if rd, err = tune.LookupDatatype(a.reduceDtype); err != nil {
				return usagef("--reduce-dtype: %v", err)
			}
		}
		if a.shardDtype != "" {
			if sd, err = tune.LookupDatatype(a.shardDtype); err != nil {
				return usagef("--shard-dtype: %v", err)
			}
		}
		cfg := stepsim.FSDPConfig{Params: params, Layers: a.layers, ParamDtype: dt, ReduceDtype: rd, ShardDtype: sd,
			ReshardAfterForward: a.reshard, ForwardMs: a.forwardMs, BackwardMs: a.backwardMs, OptimizerMs: a.optimizerMs}
		out.Inputs["reshard_after_forward"] = a.reshard
		out.Inputs["reduce_dtype"], out.Inputs["shard_dtype"] = rd.String(), sd.String()
		if err := cfg.Check(); err != nil {
			return usageError{err}
		}
		r, err := stepsim.ProjectFSDP(ctx, cfg, comm)
		if err != nil {
			return err
		}
		out.FSDP = r
		if work != nil {
			mem, err := work.MemoryFSDP(r, sd, m.Sys.NRanks)
			if err != nil {
				return err
			}
			out.Memory = &mem
		}
	}
	out.Compute = comp
	if a.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return fmt.Errorf("write JSON: %w", err)
		}
		return nil
	}
	if _, err := io.WriteString(stdout, formatStep(&out, a.showTimeline)); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

// parseCount reads a parameter count (units.ParseCount).
func parseCount(s string) (int64, error) {
	return units.ParseCount(s)
}

// parseFloatList reads a comma list of positive numbers (empty: none).
func parseFloatList(s string) ([]float64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
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

// formatStep renders a projection as text.
func formatStep(o *stepOutput, spans bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s step on %s x %d node(s), %d GPUs; collective times: %s", strings.ToUpper(o.Mode), o.Topology, o.NNodes, o.NRanks, o.Timing)
	if o.Class != "" {
		fmt.Fprintf(&b, " (path class %s, busbw error band median %.1f%%, max %.1f%%)", o.Class, o.Band.MedianPct, o.Band.MaxPct)
	}
	b.WriteString("\n")
	var tl stepsim.Timeline
	switch {
	case o.DDP != nil:
		r := o.DDP
		fmt.Fprintf(&b, "gradients %.3g GB in %d buckets; allreduce total %.2f ms, exposed %.2f ms\n", float64(r.GradBytes)/1e9, len(r.Buckets), r.TotalCommMs, r.ExposedCommMs)
		fmt.Fprintf(&b, "backward ends at %.2f ms, last allreduce at %.2f ms\n", r.BackwardEndMs, r.CommEndMs)
		fmt.Fprintf(&b, "step %.2f ms (one GPU %.2f ms): speedup %.2fx over one GPU, scaling efficiency %.0f%%\n", r.StepMs, r.SingleGPUStepMs, r.Speedup, 100*r.Efficiency)
		fmt.Fprintf(&b, "\n%6s %12s %10s %10s %10s %10s  %s\n", "BUCKET", "BYTES", "READY ms", "START ms", "END ms", "COMM ms", "ALGO/PROTO")
		for i, bk := range r.Buckets {
			if !spans && len(r.Buckets) > 12 && i >= 6 && i < len(r.Buckets)-6 {
				if i == 6 {
					fmt.Fprintf(&b, "%6s (%d more buckets; --timeline or --json lists them)\n", "...", len(r.Buckets)-12)
				}
				continue
			}
			fmt.Fprintf(&b, "%6d %12d %10.3f %10.3f %10.3f %10.3f  %s/%s\n", bk.Index, bk.Bytes, bk.ReadyMs, bk.StartMs, bk.EndMs, bk.Comm.Us/1e3, bk.Comm.Algo, bk.Comm.Proto)
		}
		for _, s := range o.Solved {
			if s.Error != "" {
				fmt.Fprintf(&b, "speedup %.2fx: %s\n", s.TargetSpeedup, s.Error)
				continue
			}
			fmt.Fprintf(&b, "speedup %.2fx is reached with forward %.2f ms + backward %.2f ms + optimizer %.2f ms per step (step %.2f ms)\n",
				s.TargetSpeedup, s.ForwardMs, s.BackwardMs, s.OptimizerMs, s.StepMs)
		}
		tl = r.Timeline
	case o.FSDP != nil:
		r := o.FSDP
		fmt.Fprintf(&b, "layer parameters %.3g MB; %d collectives, total %.2f ms, exposed %.2f ms\n", float64(r.LayerBytes)/1e6, len(r.Comms), r.TotalCommMs, r.ExposedCommMs)
		fmt.Fprintf(&b, "forward ends at %.2f ms, backward at %.2f ms, last collective at %.2f ms\n", r.ForwardEndMs, r.BackwardEndMs, r.CommEndMs)
		fmt.Fprintf(&b, "step %.2f ms (one GPU %.2f ms): speedup %.2fx over one GPU, scaling efficiency %.0f%%\n", r.StepMs, r.SingleGPUStepMs, r.Speedup, 100*r.Efficiency)
		mm := r.Memory
		fmt.Fprintf(&b, "memory per GPU: parameters %.3g GB peak (%.3g GB shards + %.3g GB gathered), gradients %.3g GB peak (%.3g GB shards + %.3g GB unreduced), together at most %.3g GB\n",
			gb(mm.PeakParamBytes), gb(mm.ShardedParamBytes), gb(mm.PeakUnshardedParamBytes), gb(mm.PeakGradBytes), gb(mm.ShardedGradBytes), gb(mm.PeakUnshardedGradBytes), gb(mm.PeakTotalBytes))
		tl = r.Timeline
	}
	if c := o.Compute; c != nil {
		fmt.Fprintf(&b, "\ncompute from the model size: %d tokens per GPU, forward %.3g FLOPs = %.2f ms, backward %.3g FLOPs = %.2f ms at %.0f%% of the %s's %.1f dense BF16 TFLOP/s (%s)\n",
			c.TokensPerGPU, c.ForwardFLOPs, c.ForwardMs, c.BackwardFLOPs, c.BackwardMs, 100*c.Utilization, c.GPU, c.PeakTFLOPS, c.Source)
	}
	if mm := o.Memory; mm != nil {
		fits := "fits in"
		if !mm.Fits {
			fits = "does NOT fit in"
		}
		buckets := ""
		if mm.BucketBytes > 0 {
			buckets = fmt.Sprintf(", DDP buckets %.3g GB", gb(mm.BucketBytes))
		}
		fmt.Fprintf(&b, "memory per GPU: parameters %.3g GB, gradients %.3g GB%s, %s state %.3g GB, activations %.3g GB: %.3g GB, %s the GPU's %.3g GB\n",
			gb(mm.ParamBytes), gb(mm.GradBytes), buckets, mm.Optimizer, gb(mm.OptimizerBytes), gb(mm.ActivationBytes), gb(mm.TotalBytes), fits, gb(mm.GPUBytes))
		for _, s := range mm.Assumptions {
			fmt.Fprintf(&b, "  assumed: %s\n", s)
		}
	}
	if spans {
		fmt.Fprintf(&b, "\n%-8s %-14s %-22s %10s %10s %10s\n", "LANE", "KIND", "LABEL", "START ms", "END ms", "EXPOSED")
		for _, s := range tl.Spans {
			fmt.Fprintf(&b, "%-8s %-14s %-22s %10.3f %10.3f %10.3f\n", s.Lane, s.Kind, s.Label, s.StartMs, s.EndMs, s.ExposedMs)
		}
	}
	return b.String()
}

func gb(v uint64) float64 { return float64(v) / 1e9 }
