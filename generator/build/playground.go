package build

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/distributed-nav/distributed-nav/generator/sitetree"
	"github.com/distributed-nav/distributed-nav/playground/presets"
	"github.com/distributed-nav/distributed-nav/playground/wasm/api"
)

// The playground's default system: the card's case, an 8x RTX 4090 box on
// PCIe whose GeForce GPUs report no P2P.
const defaultPreset = "rtx4090-8x"

// playgroundWidget describes one playground page.
type playgroundWidget struct {
	slug, title, description string
}

var playgroundWidgets = []playgroundWidget{
	{"topology", "Topology and channels", "The system NCCL sees: devices, links, path types between GPUs, transports, and the rings and trees its search builds."},
	{"algorithms", "Algorithm and protocol", "NCCL's cost model for every algorithm and protocol, and the one it picks at each message size."},
	{"estimator", "Collective-time estimator", "How long a collective takes: NCCL's own model against what benchmarks measure on real hardware."},
	{"step", "DDP and FSDP step", "A training step's timeline: backward compute against bucketed allreduce, or FSDP2's all-gathers and reduce-scatters."},
	{"doctor", "Log doctor", "Paste an NCCL_DEBUG=INFO log or your environment and get a diagnosis."},
}

// playgroundPages writes the playground section: each page carries the
// static results of its default preset (what readers without JavaScript, and
// the printed handbook, see), rendered by the same Go code as the live widget
// (api.StaticHTML: tables and SVG figures), and the widget the browser mounts
// over them.
func (b *builder) playgroundPages(ctx context.Context) ([]sitetree.NavItem, error) {
	p, err := presets.Get(defaultPreset)
	if err != nil {
		return nil, fmt.Errorf("playground: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var index strings.Builder
	index.WriteString("The playground runs NCCL's own decision procedure (topology, paths, graph search, tuning and selection) and our calibrated estimator in your browser: Go compiled to WebAssembly, the same code as the `ncclsim` command. The pages open on the card's system, " + p.Description + "\n\n")
	var items []sitetree.NavItem
	for i, w := range playgroundWidgets {
		u := "/playground/" + w.slug + "/"
		fmt.Fprintf(&index, "- [%s](%s): %s\n", w.title, u, w.description)
		preset := defaultPreset
		if w.slug == "estimator" {
			// The estimator opens on the RTX 4090 box without P2P that has
			// published measurements to draw next to the prediction.
			preset = api.EstimatorDefaultPreset
		}
		static, err := api.StaticHTML(ctx, w.slug, preset)
		if err != nil {
			return nil, fmt.Errorf("playground: static %s view of %s: %w", w.slug, preset, err)
		}
		body := static + "\n\n" + cliLine(w.slug, preset)
		b.add(&sitetree.Page{URL: u, Title: w.title, Description: w.description, Weight: i + 1, Layout: "playground",
			Body: body, Params: map[string]any{"widget": w.slug, "preset": preset, "notoc": true}})
		items = append(items, sitetree.NavItem{Title: w.title, URL: u})
	}
	b.add(&sitetree.Page{URL: "/playground/", Section: true, Title: "Playground", Weight: 55,
		Description: "NCCL's topology search, algorithm selection and a time estimator, live in the browser.", Body: index.String()})
	return items, nil
}

// cliLine names the terminal command that prints the same numbers.
func cliLine(widget, preset string) string {
	cmd := map[string]string{
		"topology":   "ncclsim topo --preset " + preset,
		"algorithms": "ncclsim tune --preset " + preset,
		"estimator":  "ncclsim estimate --preset " + preset + " --coll allreduce --bytes 268435456",
		"step":       "ncclsim step --preset " + preset + " --model ddp --params 1.5e9 --forward-ms 60 --backward-ms 120",
		"doctor":     "ncclsim doctor --log FILE --env FILE",
	}[widget]
	return "In a terminal: `" + cmd + "`.\n"
}
