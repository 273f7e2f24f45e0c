package build

// This file renders the playground pages' static views (what readers
// without JavaScript and the printed handbook see) from the page answers of
// package service: the same figures and tables the live page shows.

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/figure"
	"github.com/distributed-nav/distributed-nav/playground/service"
)

// figureOf returns the markup of the named figure, or "".
func figureOf(figs []service.Figure, name string) string {
	for _, f := range figs {
		if f.Name == name {
			return f.Markup
		}
	}
	return ""
}

// staticHTML returns the view of a playground page without JavaScript:
// the same figures and tables the live page shows for its default inputs
// on preset (the estimator page always uses service.EstimatorDefaultPreset), as an
// HTML fragment made of blocks separated by blank lines, so that it can be
// pasted into a Markdown page. widget is "topology", "algorithms",
// "estimator", "step" or "doctor" (which has no static results: "").
// Output is deterministic.
func staticHTML(ctx context.Context, widget, preset string) (string, error) {
	s := service.New()
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
	switch widget {
	case "topology":
		req := &service.Request{Preset: preset, Graph: "ring"}
		r, err := s.TopoPage(ctx, req)
		if err != nil {
			return "", err
		}
		add(p("Results for the preset "+preset+": "+r.Result.System.Description),
			h2("Topology and ring channel 0"), fig(figureOf(r.Figures, "topology")),
			h2("Searched graphs"), graphsTable(r.Result),
			h2("Paths and transports between GPUs"), fig(figureOf(r.Figures, "matrix")), figureOf(r.Figures, "legend"),
			p("The same numbers in a terminal: "+r.Command))
	case "algorithms":
		req := &service.Request{Preset: preset, Coll: "allreduce"}
		r, err := s.TunePage(ctx, req)
		if err != nil {
			return "", err
		}
		var cross []string
		for _, x := range r.Crossovers {
			cross = append(cross, x.From+" → "+x.To+" at "+strconv.FormatUint(x.Bytes, 10)+" bytes")
		}
		crossText := "Crossovers: " + strings.Join(cross, "; ") + "."
		if len(cross) == 0 {
			crossText = "The same algorithm and protocol win at every size."
		}
		log := strings.Join(append(r.Result.TableText, r.Result.Thresholds), "\n")
		add(p("AllReduce on the preset "+preset+": NCCL's predicted time for every usable algorithm and protocol, and the one it picks at each size."),
			fig(figureOf(r.Figures, "chart")), p(crossText),
			h2("What NCCL picks at each size"), fig(figureOf(r.Figures, "selection")),
			h2("The TUNING table as NCCL logs it"), `<pre class="pg-log">`+figure.Escape(log)+`</pre>`,
			p("The same numbers in a terminal: "+r.Command))
	case "estimator":
		req := &service.Request{Preset: service.EstimatorDefaultPreset, Coll: service.DefaultEstimatorColl, Bytes: service.DefaultEstimatorBytes}
		r, err := s.EstimatorPage(ctx, req)
		if err != nil {
			return "", err
		}
		add(p("AllReduce on the preset "+service.EstimatorDefaultPreset+" (two RTX 4090 without P2P): NCCL's tuning model, the calibrated estimate with its error band, and the published measurements of this system."),
			fig(figureOf(r.Figures, "estimate")), h2("Bus bandwidth against size"), fig(figureOf(r.Figures, "busbw")),
			h2("Time against size"), fig(figureOf(r.Figures, "time")),
			p("The same numbers in a terminal: "+r.Command))
	case "step":
		req := &service.Request{Preset: preset, Step: service.DefaultStep}
		r, err := s.StepPage(ctx, req)
		if err != nil {
			return "", err
		}
		add(p("A DDP step of a 1.5-billion-parameter model (bf16 gradients, default buckets; forward 60 ms, backward 120 ms, optimizer 10 ms on one GPU) on the preset "+preset+"."),
			fig(figureOf(r.Figures, "timeline")), h2("Buckets"), fig(figureOf(r.Figures, "spans")),
			p("The same numbers in a terminal: "+r.Command))
	case "doctor":
		return "", nil
	default:
		return "", fmt.Errorf("unknown widget %q", widget)
	}
	return strings.Join(blocks, "\n\n") + "\n", nil
}

// graphsTable lists the searched graphs of a topology answer.
func graphsTable(t *service.TopoResult) string {
	spec := figure.TableSpec{
		Caption: "Each graph NCCL searched: channels, per-channel bandwidth inside the node and to the network (GB/s), path types, rank order of channel 0",
		Head:    []string{"graph", "channels", "bw intra", "bw inter", "type intra/inter", "channel 0"},
		Class:   "pg-graphs",
	}
	for _, g := range t.Graphs {
		order := ""
		if len(g.Channels) > 0 {
			var r []string
			for _, x := range g.Channels[0].Ranks {
				r = append(r, strconv.Itoa(x))
			}
			order = strings.Join(r, " → ")
		}
		spec.Rows = append(spec.Rows, figure.Row{Cells: []figure.Cell{
			{Text: g.Pattern},
			{Text: strconv.Itoa(g.NChannels), Value: strconv.Itoa(g.NChannels)},
			{Text: figure.Short(float64(g.BwIntra), 2), Value: strconv.FormatFloat(float64(g.BwIntra), 'f', -1, 32)},
			{Text: figure.Short(float64(g.BwInter), 2), Value: strconv.FormatFloat(float64(g.BwInter), 'f', -1, 32)},
			{Text: g.TypeIntra + "/" + g.TypeInter},
			{Text: order},
		}})
	}
	return figure.Table(spec)
}
