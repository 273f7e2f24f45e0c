package api

import (
	"context"
	"math"
	"strconv"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/estimate"
	"github.com/distributed-nav/distributed-nav/playground/figure"
	"github.com/distributed-nav/distributed-nav/playground/stepsim"
	"github.com/distributed-nav/distributed-nav/playground/tune"
	"github.com/distributed-nav/distributed-nav/playground/units"
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
}

// parseCount reads a count as `ncclsim step --params` does (see
// units.ParseCount); errors name the "params" field.
func parseCount(s string) (int64, error) {
	n, err := units.ParseCount(s)
	if err != nil {
		return 0, fieldErr("params", err.Error())
	}
	return n, nil
}

// msField parses a duration in milliseconds (empty: 0).
func msField(field, s string) (float64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, nil
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > 1e9 {
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
		return 0, fieldErr(field, "want a whole number from 1 to "+strconv.Itoa(hi))
	}
	return v, nil
}

// Step answers the DDP / FSDP page: "result" is `ncclsim step --json` for
// the same inputs, "command" the CLI line; the figures are "timeline" (the
// step's compute and communication lanes next to one GPU's step) and
// "spans" (a table of the buckets or the per-layer collectives).
func (s *Session) Step(ctx context.Context, req *Request) Reply {
	in := req.Step
	mode := strings.ToLower(strings.TrimSpace(in.Mode))
	if mode == "" {
		mode = "ddp"
	}
	if mode != "ddp" && mode != "fsdp" {
		return errorReply(fieldErr("mode", "want ddp or fsdp"))
	}
	params, err := parseCount(in.Params)
	if err != nil {
		return errorReply(err)
	}
	dts := strings.TrimSpace(req.Dtype)
	if dts == "" {
		dts = "bf16"
	}
	dt, err := tune.LookupDatatype(dts)
	if err != nil {
		return errorReply(fieldErr("dtype", err.Error()))
	}
	timing := strings.ToLower(strings.TrimSpace(in.Timing))
	if timing == "" {
		timing = "calibrated"
	}
	if timing != "calibrated" && timing != "model" {
		return errorReply(fieldErr("timing", "want calibrated or model"))
	}
	layers, err := intField("layers", in.Layers, 32, stepsim.MaxLayers)
	if err != nil {
		return errorReply(err)
	}
	var fwd, bwd, opt float64
	for _, x := range []struct {
		field, v string
		dst      *float64
	}{{"forward_ms", in.ForwardMs, &fwd}, {"backward_ms", in.BackwardMs, &bwd}, {"optimizer_ms", in.OptimizerMs, &opt}} {
		if *x.dst, err = msField(x.field, x.v); err != nil {
			return errorReply(err)
		}
	}
	b, es, err := s.modelAndEstimator(ctx, req)
	if err != nil {
		return errorReply(err)
	}
	comm := stepsim.NewEstimatorComm(es, timing == "model")
	m := b.tune

	var w jw
	w.b = make([]byte, 0, 32<<10)
	w.obj()
	w.key("result")
	w.obj()
	w.kstr("model", mode)
	w.kstr("topology", b.host.name)
	w.kint("nranks", m.Sys.NRanks)
	w.kint("nnodes", m.Sys.NNodes)
	w.kstr("timing", timing)

	// The class and band of the collective that dominates, as the CLI.
	domFunc := tune.AllReduce
	if mode == "fsdp" {
		domFunc = tune.AllGather
	}
	var class, support string
	var band estimate.Band
	if m.Sys.NRanks > 1 {
		if e, err := es.Estimate(tune.Request{Func: domFunc, NBytes: 64 << 20, Datatype: dt}); err == nil {
			class, support, band = string(e.Calibrated.Class), e.Calibrated.Support, e.Calibrated.Band
		}
	}

	// inputs: encoding/json writes the map's keys sorted.
	type kv struct {
		k string
		v func()
	}
	inputs := []kv{
		{"params", func() { w.i64(params) }},
		{"dtype", func() { w.str(dt.String()) }},
		{"forward_ms", func() { w.f64(fwd) }},
		{"backward_ms", func() { w.f64(bwd) }},
		{"optimizer_ms", func() { w.f64(opt) }},
		{"layers", func() { w.int(layers) }},
	}
	var figs []Figure
	switch mode {
	case "ddp":
		tensors, err := intField("tensors_per_layer", in.TensorsPerLayer, 8, stepsim.MaxTensors)
		if err != nil {
			return errorReply(err)
		}
		cfg := stepsim.DDPConfig{Params: params, GradDtype: dt, FirstIteration: in.FirstIteration, Layers: layers, TensorsPerLayer: tensors,
			ForwardMs: fwd, BackwardMs: bwd, OptimizerMs: opt}
		if c := strings.TrimSpace(in.BucketCapMB); c != "" {
			mb, err := strconv.ParseFloat(c, 64)
			if err != nil || !(mb > 0) || math.IsInf(mb, 0) || mb > 1<<20 {
				return errorReply(fieldErr("bucket_cap_mb", "want a positive size in MiB"))
			}
			cfg.BucketCapBytes = int64(mb * (1 << 20))
			inputs = append(inputs, kv{"bucket_cap_mb", func() { w.f64(mb) }})
		}
		inputs = append(inputs, kv{"first_iteration", func() { w.bool(in.FirstIteration) }}, kv{"tensors_per_layer", func() { w.int(tensors) }})
		if err := cfg.Check(); err != nil {
			return errorReply(fieldErr("params", err.Error()))
		}
		r, err := stepsim.ProjectDDP(ctx, cfg, comm)
		if err != nil {
			return errorReply(err)
		}
		w.key("ddp")
		writeDDP(&w, r)
		figs = []Figure{
			{"timeline", figure.Timeline(r.Timeline, figure.TimelineOptions{Label: "DDP step timeline: backward compute and bucket allreduces on " + strconv.Itoa(r.NGPUs) + " GPUs, and one GPU's step", SingleGPUMs: r.SingleGPUStepMs, NGPUs: r.NGPUs})},
			{"spans", bucketTable(r)},
		}
	case "fsdp":
		rd, sd := dt, dt
		if t := strings.TrimSpace(in.ReduceDtype); t != "" {
			if rd, err = tune.LookupDatatype(t); err != nil {
				return errorReply(fieldErr("reduce_dtype", err.Error()))
			}
		}
		if t := strings.TrimSpace(in.ShardDtype); t != "" {
			if sd, err = tune.LookupDatatype(t); err != nil {
				return errorReply(fieldErr("shard_dtype", err.Error()))
			}
		}
		reshard := strings.TrimSpace(strings.ToLower(in.Reshard)) != "false"
		cfg := stepsim.FSDPConfig{Params: params, Layers: layers, ParamDtype: dt, ReduceDtype: rd, ShardDtype: sd,
			ReshardAfterForward: reshard, ForwardMs: fwd, BackwardMs: bwd, OptimizerMs: opt}
		inputs = append(inputs, kv{"reshard_after_forward", func() { w.bool(reshard) }},
			kv{"reduce_dtype", func() { w.str(rd.String()) }}, kv{"shard_dtype", func() { w.str(sd.String()) }})
		if err := cfg.Check(); err != nil {
			return errorReply(fieldErr("params", err.Error()))
		}
		r, err := stepsim.ProjectFSDP(ctx, cfg, comm)
		if err != nil {
			return errorReply(err)
		}
		w.key("fsdp")
		writeFSDP(&w, r)
		figs = []Figure{
			{"timeline", figure.Timeline(r.Timeline, figure.TimelineOptions{Label: "FSDP2 step timeline: per-layer all-gathers and reduce-scatters against compute on " + strconv.Itoa(r.NGPUs) + " GPUs, and one GPU's step", SingleGPUMs: r.SingleGPUStepMs, NGPUs: r.NGPUs})},
			{"spans", commTable(r)},
		}
	}
	w.key("inputs")
	w.obj()
	for i := 1; i < len(inputs); i++ {
		for j := i; j > 0 && inputs[j].k < inputs[j-1].k; j-- {
			inputs[j], inputs[j-1] = inputs[j-1], inputs[j]
		}
	}
	for _, x := range inputs {
		w.key(x.k)
		x.v()
	}
	w.end()
	w.key("env")
	writeEnv(&w, b.env)
	w.kstr("class", class)
	w.key("error_band")
	writeBand(&w, band)
	w.kstr("support", support)
	w.key("problems")
	writeProblems(&w, b.problems)
	w.end()
	w.kstr("command", Command("step", req))
	w.end()
	return Reply{JSON: w.String(), Figures: figs}
}

// writeCommCost writes a stepsim.CommCost.
func writeCommCost(w *jw, c stepsim.CommCost) {
	w.obj()
	w.kf64("time_us", c.Us)
	w.kstr("algo", c.Algo)
	w.kstr("proto", c.Proto)
	w.kf64("busbw_GBps", c.BusBwGBps)
	w.end()
}

// writeTimeline writes a stepsim.Timeline.
func writeTimeline(w *jw, tl stepsim.Timeline) {
	w.obj()
	w.key("spans")
	if tl.Spans == nil {
		w.null()
	} else {
		w.arr()
		for _, s := range tl.Spans {
			w.obj()
			w.kstr("lane", s.Lane)
			w.kstr("kind", s.Kind)
			w.kstr("label", s.Label)
			w.kf64("start_ms", s.StartMs)
			w.kf64("end_ms", s.EndMs)
			if s.Bytes != 0 {
				w.key("bytes")
				w.u64(s.Bytes)
			}
			if s.Algo != "" {
				w.kstr("algo", s.Algo)
			}
			if s.Proto != "" {
				w.kstr("proto", s.Proto)
			}
			if s.ExposedMs != 0 {
				w.kf64("exposed_ms", s.ExposedMs)
			}
			w.end()
		}
		w.endArr()
	}
	w.kf64("step_ms", tl.StepMs)
	w.end()
}

// writeDDP writes a stepsim.DDPResult as encoding/json would.
func writeDDP(w *jw, r *stepsim.DDPResult) {
	w.obj()
	w.kint("ngpus", r.NGPUs)
	w.key("buckets")
	if r.Buckets == nil {
		w.null()
	} else {
		w.arr()
		for _, bk := range r.Buckets {
			w.obj()
			w.kint("index", bk.Index)
			w.key("bytes")
			w.u64(bk.Bytes)
			w.kint("tensors", bk.Tensors)
			w.kf64("ready_ms", bk.ReadyMs)
			w.kf64("start_ms", bk.StartMs)
			w.kf64("end_ms", bk.EndMs)
			w.key("Comm")
			writeCommCost(w, bk.Comm)
			w.end()
		}
		w.endArr()
	}
	w.key("grad_bytes")
	w.u64(r.GradBytes)
	w.kf64("backward_end_ms", r.BackwardEndMs)
	w.kf64("comm_end_ms", r.CommEndMs)
	w.kf64("total_comm_ms", r.TotalCommMs)
	w.kf64("exposed_comm_ms", r.ExposedCommMs)
	w.kf64("step_ms", r.StepMs)
	w.kf64("single_gpu_step_ms", r.SingleGPUStepMs)
	w.kf64("speedup", r.Speedup)
	w.kf64("efficiency", r.Efficiency)
	w.key("timeline")
	writeTimeline(w, r.Timeline)
	w.end()
}

// writeFSDP writes a stepsim.FSDPResult as encoding/json would.
func writeFSDP(w *jw, r *stepsim.FSDPResult) {
	w.obj()
	w.kint("ngpus", r.NGPUs)
	w.key("layer_param_bytes")
	w.u64(r.LayerBytes)
	w.key("comms")
	if r.Comms == nil {
		w.null()
	} else {
		w.arr()
		for _, c := range r.Comms {
			w.obj()
			w.kint("layer", c.Layer)
			w.kstr("kind", c.Kind)
			w.kstr("phase", c.Phase)
			w.key("bytes")
			w.u64(c.Bytes)
			w.kf64("start_ms", c.StartMs)
			w.kf64("end_ms", c.EndMs)
			w.key("Comm")
			writeCommCost(w, c.Comm)
			w.end()
		}
		w.endArr()
	}
	w.kf64("forward_end_ms", r.ForwardEndMs)
	w.kf64("backward_end_ms", r.BackwardEndMs)
	w.kf64("comm_end_ms", r.CommEndMs)
	w.kf64("total_comm_ms", r.TotalCommMs)
	w.kf64("exposed_comm_ms", r.ExposedCommMs)
	w.kf64("step_ms", r.StepMs)
	w.kf64("single_gpu_step_ms", r.SingleGPUStepMs)
	w.kf64("speedup", r.Speedup)
	w.kf64("efficiency", r.Efficiency)
	mm := r.Memory
	w.key("memory")
	w.obj()
	for _, x := range []struct {
		k string
		v uint64
	}{{"sharded_param_bytes", mm.ShardedParamBytes}, {"sharded_grad_bytes", mm.ShardedGradBytes},
		{"peak_unsharded_param_bytes", mm.PeakUnshardedParamBytes}, {"peak_unsharded_grad_bytes", mm.PeakUnshardedGradBytes},
		{"peak_param_bytes", mm.PeakParamBytes}, {"peak_grad_bytes", mm.PeakGradBytes}, {"peak_total_bytes", mm.PeakTotalBytes}} {
		w.key(x.k)
		w.u64(x.v)
	}
	w.end()
	w.key("timeline")
	writeTimeline(w, r.Timeline)
	w.end()
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
