package api

import (
	"context"
	"strconv"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/figure"
	"github.com/distributed-nav/distributed-nav/playground/tune"
)

// Default inputs of the step page (the static view and the live page
// open on them).
var defaultStep = StepInputs{Mode: "ddp", Params: "1.5B", ForwardMs: "60", BackwardMs: "120", OptimizerMs: "10"}

// StaticHTML returns the view of a playground page without JavaScript:
// the same figures and tables the live page shows for its default inputs
// on preset (the estimator page always uses EstimatorDefaultPreset), as an
// HTML fragment made of blocks separated by blank lines, so that it can be
// pasted into a Markdown page. widget is "topology", "algorithms",
// "estimator", "step" or "doctor" (which has no static results: "").
// Output is deterministic.
func StaticHTML(ctx context.Context, widget, preset string) (string, error) {
	s := NewSession()
	var blocks []string
	add := func(html ...string) {
		for _, h := range html {
			if h != "" {
				blocks = append(blocks, h)
			}
		}
	}
	p := func(text string) string { return "<p>" + figure.Escape(text) + "</p>" }
	h2 := func(text string) string { return "<h2>" + figure.Escape(text) + "</h2>" }
	fig := func(markup string) string { return `<div class="pg-figure">` + markup + `</div>` }
	check := func(r Reply) error {
		if strings.HasPrefix(r.JSON, `{"error"`) {
			return &FieldError{Field: widget, Message: r.JSON}
		}
		return nil
	}
	switch widget {
	case "topology":
		req := &Request{Preset: preset, Graph: "ring"}
		r := s.Topo(ctx, req)
		if err := check(r); err != nil {
			return "", err
		}
		b, err := s.build(ctx, req)
		if err != nil {
			return "", err
		}
		add(p("Results for the preset "+preset+": "+b.host.desc),
			h2("Topology and ring channel 0"), fig(r.Figure("topology")),
			h2("Searched graphs"), graphsTable(b),
			h2("Paths and transports between GPUs"), fig(r.Figure("matrix")), r.Figure("legend"),
			p("The same numbers in a terminal: "+Command("topo", req)))
	case "algorithms":
		req := &Request{Preset: preset, Coll: "allreduce"}
		r := s.Tune(ctx, req)
		if err := check(r); err != nil {
			return "", err
		}
		b, err := s.build(ctx, req)
		if err != nil {
			return "", err
		}
		choices, err := b.tune.Sweep(ctx, tune.AllReduce, SweepSizes(), tune.Request{})
		if err != nil {
			return "", err
		}
		var cross []string
		for _, x := range crossovers(b.tune, tune.AllReduce, choices) {
			cross = append(cross, x.from.String()+" → "+x.to.String()+" at "+strconv.FormatUint(x.bytes, 10)+" bytes")
		}
		crossText := "Crossovers: " + strings.Join(cross, "; ") + "."
		if len(cross) == 0 {
			crossText = "The same algorithm and protocol win at every size."
		}
		log := strings.Join(append(b.tune.TuningTableLines(), b.tune.ThresholdsLine()), "\n")
		add(p("AllReduce on the preset "+preset+": NCCL's predicted time for every usable algorithm and protocol, and the one it picks at each size."),
			fig(r.Figure("chart")), p(crossText),
			h2("What NCCL picks at each size"), fig(r.Figure("selection")),
			h2("The TUNING table as NCCL logs it"), `<pre class="pg-log">`+figure.Escape(log)+`</pre>`,
			p("The same numbers in a terminal: "+Command("tune", req)))
	case "estimator":
		req := &Request{Preset: EstimatorDefaultPreset, Coll: "allreduce", Bytes: "64M"}
		r := s.Estimator(ctx, req)
		if err := check(r); err != nil {
			return "", err
		}
		add(p("AllReduce on the preset "+EstimatorDefaultPreset+" (two RTX 4090 without P2P): NCCL's tuning model, the calibrated estimate with its error band, and the published measurements of this system."),
			fig(r.Figure("estimate")), h2("Bus bandwidth against size"), fig(r.Figure("busbw")),
			h2("Time against size"), fig(r.Figure("time")),
			p("The same numbers in a terminal: "+Command("estimate", req)))
	case "step":
		req := &Request{Preset: preset, Step: defaultStep}
		r := s.Step(ctx, req)
		if err := check(r); err != nil {
			return "", err
		}
		add(p("A DDP step of a 1.5-billion-parameter model (bf16 gradients, default buckets; forward 60 ms, backward 120 ms, optimizer 10 ms on one GPU) on the preset "+preset+"."),
			fig(r.Figure("timeline")), h2("Buckets"), fig(r.Figure("spans")),
			p("The same numbers in a terminal: "+Command("step", req)))
	case "doctor":
		return "", nil
	default:
		return "", fieldErr("widget", "unknown widget \""+widget+"\"")
	}
	return strings.Join(blocks, "\n\n") + "\n", nil
}

// graphsTable lists the searched graphs of b.
func graphsTable(b *built) string {
	spec := figure.TableSpec{
		Caption: "Each graph NCCL searched: channels, per-channel bandwidth inside the node and to the network (GB/s), path types, rank order of channel 0",
		Head:    []string{"graph", "channels", "bw intra", "bw inter", "type intra/inter", "channel 0"},
		Class:   "pg-graphs",
	}
	for _, g := range b.search.Graphs() {
		order := ""
		if len(g.Channels) > 0 {
			var r []string
			for _, x := range g.Channels[0].Ranks {
				r = append(r, strconv.Itoa(x))
			}
			order = strings.Join(r, " → ")
		}
		spec.Rows = append(spec.Rows, figure.Row{Cells: []figure.Cell{
			{Text: g.Pattern.String()},
			{Text: strconv.Itoa(g.NChannels), Value: strconv.Itoa(g.NChannels)},
			{Text: figure.Short(float64(g.BwIntra), 2), Value: f32s(g.BwIntra)},
			{Text: figure.Short(float64(g.BwInter), 2), Value: f32s(g.BwInter)},
			{Text: g.TypeIntra.String() + "/" + g.TypeInter.String()},
			{Text: order},
		}})
	}
	return figure.Table(spec)
}
