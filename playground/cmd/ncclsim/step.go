package main

// This file implements `ncclsim step`: one training step of DDP or FSDP2
// projected onto a system (service.StepResult), with collective times from
// the calibrated estimator (or NCCL's model with --timing model).

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/estimate"
	"github.com/distributed-nav/distributed-nav/playground/service"
	"github.com/distributed-nav/distributed-nav/playground/stepsim"
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
	fs.StringVar(&a.solve, "solve-speedup", "", fmt.Sprintf("DDP: comma list of up to %d target speedups; for each, the compute times (same ratios as given) that reach it", service.MaxSolveTargets))
	fs.BoolVar(&a.showTimeline, "timeline", false, "text output: list every span of the timeline")
	fs.StringVar(&a.gpu, "gpu", "", "GPU (see data/gpus.csv: H100-SXM, A100-80GB, L40S, A40, RTX-4090, ...): derive forward and backward time from the model size and its dense BF16 throughput, and estimate memory")
	fs.IntVar(&a.batch, "batch", service.DefaultBatch, "with --gpu: sequences per GPU per step")
	fs.IntVar(&a.seqLen, "seq-len", service.DefaultSeqLen, "with --gpu: tokens per sequence")
	fs.Float64Var(&a.mfu, "mfu", workload.DefaultUtilization, "with --gpu: fraction of the GPU's peak dense BF16 throughput the step reaches")
	fs.StringVar(&a.optimizer, "optimizer", string(service.DefaultOptimizer), "with --gpu: optimizer whose state the memory estimate counts: adamw, adam, sgd-momentum or sgd")
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
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	in := service.StepInputs{Mode: a.mode, Params: a.params, FirstIteration: a.firstIter,
		Layers: strconv.Itoa(a.layers), TensorsPerLayer: strconv.Itoa(a.tensors),
		OptimizerMs: num(a.optimizerMs), Reshard: strconv.FormatBool(a.reshard),
		ReduceDtype: a.reduceDtype, ShardDtype: a.shardDtype, Timing: a.timing, Solve: a.solve, GPU: a.gpu}
	// Flags left unset stay empty, so that the service applies its
	// defaults: with --gpu, unset forward and backward times are derived.
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "bucket-cap-mb":
			in.BucketCapMB = num(a.bucketCap)
		case "forward-ms":
			in.ForwardMs = num(a.forwardMs)
		case "backward-ms":
			in.BackwardMs = num(a.backwardMs)
		case "batch":
			in.Batch = strconv.Itoa(a.batch)
		case "seq-len":
			in.SeqLen = strconv.Itoa(a.seqLen)
		case "mfu":
			in.MFU = num(a.mfu)
		case "optimizer":
			in.Optimizer = a.optimizer
		}
	})
	svc, err := newService(a.calibration)
	if err != nil {
		return err
	}
	req, err := a.sys.request(stdin)
	if err != nil {
		return err
	}
	req.Dtype, req.Fabric, req.Step = a.dtype, a.fabric, in
	out, err := svc.Step(ctx, req)
	if err != nil {
		return cliError(err, req, stderr)
	}
	report(stderr, out.Checked)
	if a.asJSON {
		return writeJSON(stdout, out)
	}
	if _, err := io.WriteString(stdout, formatStep(out, a.showTimeline)); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

// formatStep renders a projection as text.
func formatStep(o *service.StepResult, spans bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s step on %s x %d node(s), %d GPUs; collective times: %s", strings.ToUpper(o.Mode), o.Topology, o.NNodes, o.NRanks, o.Timing)
	if o.Class != "" {
		fmt.Fprintf(&b, " (path class %s; out of sample, %g%% of the class's busbw errors lie between -%.1f%% and +%.1f%%, median %.1f%%)",
			o.Class, 100*(estimate.BandQuantileHigh-estimate.BandQuantileLow), o.Band.UnderPct, o.Band.OverPct, o.Band.MedianPct)
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
