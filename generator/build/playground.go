package build

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/distributed-nav/distributed-nav/generator/sitetree"
	"github.com/distributed-nav/distributed-nav/playground/model"
	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
	"github.com/distributed-nav/distributed-nav/playground/presets"
	"github.com/distributed-nav/distributed-nav/playground/tune"
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
// static results of the default preset (what readers without JavaScript, and
// the printed handbook, see) and the widget the browser mounts over them.
func (b *builder) playgroundPages(ctx context.Context) ([]sitetree.NavItem, error) {
	p, err := presets.Get(defaultPreset)
	if err != nil {
		return nil, fmt.Errorf("playground: %w", err)
	}
	host, _, err := p.System()
	if err != nil {
		return nil, fmt.Errorf("playground: preset %s: %w", defaultPreset, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	res, err := model.Build(ctx, host, 1, ncclenv.Env{})
	if err != nil {
		return nil, fmt.Errorf("playground: model of %s: %w", defaultPreset, err)
	}
	var index strings.Builder
	index.WriteString("The playground runs NCCL's own decision procedure (topology, paths, graph search, tuning and selection) and our calibrated estimator in your browser: Go compiled to WebAssembly, the same code as the `ncclsim` command. Each page opens on the card's system, " + p.Description + "\n\n")
	var items []sitetree.NavItem
	for i, w := range playgroundWidgets {
		u := "/playground/" + w.slug + "/"
		fmt.Fprintf(&index, "- [%s](%s): %s\n", w.title, u, w.description)
		var body string
		switch w.slug {
		case "topology":
			body = topologyStatic(p, res)
		case "algorithms":
			body = algorithmsStatic(p, res)
		case "estimator":
			body = estimatorStatic(p, res)
		case "step":
			body = "The step projection needs the interactive page: it combines the estimator with your model's size and compute times.\n\nIn a terminal, `ncclsim step` prints the same projection.\n"
		case "doctor":
			body = "The doctor reads an `NCCL_DEBUG=INFO` log or an environment listing you paste; it needs the interactive page. In a terminal, `ncclsim doctor --log FILE --env FILE` prints the same diagnosis.\n"
		}
		b.add(&sitetree.Page{URL: u, Title: w.title, Description: w.description, Weight: i + 1, Layout: "playground",
			Body: body, Params: map[string]any{"widget": w.slug, "preset": defaultPreset, "notoc": true}})
		items = append(items, sitetree.NavItem{Title: w.title, URL: u})
	}
	b.add(&sitetree.Page{URL: "/playground/", Section: true, Title: "Playground", Weight: 55,
		Description: "NCCL's topology search, algorithm selection and a time estimator, live in the browser.", Body: index.String()})
	return items, nil
}

func topologyStatic(p presets.Preset, res *model.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Results for the preset `%s`: %s\n\n", p.Name, p.Description)
	pairs, err := res.Analysis.Paths.GPUPairs()
	if err == nil && len(pairs) > 0 {
		n := 0
		for _, pr := range pairs {
			if pr.From+1 > n {
				n = pr.From + 1
			}
			if pr.To+1 > n {
				n = pr.To + 1
			}
		}
		cell := map[[2]int]string{}
		for _, pr := range pairs {
			cell[[2]int{pr.From, pr.To}] = fmt.Sprintf("%s %s", pr.Type, pr.Transport)
		}
		b.WriteString("## Path type and transport between GPUs\n\n| |")
		for j := 0; j < n; j++ {
			fmt.Fprintf(&b, " GPU%d |", j)
		}
		b.WriteString("\n|---|")
		for j := 0; j < n; j++ {
			b.WriteString("---|")
		}
		b.WriteString("\n")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "| **GPU%d** |", i)
			for j := 0; j < n; j++ {
				if i == j {
					b.WriteString(" X |")
					continue
				}
				fmt.Fprintf(&b, " %s |", cell[[2]int{i, j}])
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	b.WriteString("## Graphs the search builds\n\n| Graph | Channels | bwIntra GB/s | bwInter GB/s | typeIntra | typeInter | Rank order of channel 0 |\n|---|---|---|---|---|---|---|\n")
	for _, g := range res.Search.Graphs() {
		order := ""
		if len(g.Channels) > 0 {
			order = strings.Trim(fmt.Sprint(g.Channels[0].Ranks), "[]")
		}
		fmt.Fprintf(&b, "| %s | %d | %.1f | %.1f | %s | %s | %s |\n", g.Pattern, g.NChannels, g.BwIntra, g.BwInter, g.TypeIntra, g.TypeInter, order)
	}
	b.WriteString("\nThe same tables in a terminal: `ncclsim topo --preset " + p.Name + "`.\n")
	return b.String()
}

func algorithmsStatic(p presets.Preset, res *model.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "NCCL's tuning model for `%s`, laid out like its own `NCCL_DEBUG_SUBSYS=TUNING` output (latency in µs / algorithm bandwidth in GB/s):\n\n```text\n", p.Name)
	var tbl bytes.Buffer
	_ = res.Tune.WriteTuningTable(&tbl, "")
	b.WriteString(strings.TrimRight(tbl.String(), "\n"))
	b.WriteString("\n```\n\n## AllReduce: the choice at each size\n\n| Size | Algorithm | Protocol | Channels | Time (µs) |\n|---|---|---|---|---|\n")
	choices, err := res.Tune.Sweep(context.Background(), tune.AllReduce, tune.Sizes(8, 8<<30), tune.Request{})
	if err == nil {
		for _, c := range choices {
			fmt.Fprintf(&b, "| %s | %s | %s | %d | %.1f |\n", humanBytes(c.NBytes), c.Algo, c.Proto, c.NChannels, c.TimeUs)
		}
	}
	b.WriteString("\nThe same in a terminal: `ncclsim tune --preset " + p.Name + "`.\n")
	return b.String()
}

func estimatorStatic(p presets.Preset, res *model.Result) string {
	var b strings.Builder
	n := res.Search.Scalars().NRanks
	fmt.Fprintf(&b, "AllReduce on `%s` (%d ranks) as NCCL's tuning model predicts it. busbw follows nccl-tests: algbw × 2(n−1)/n.\n\n| Size | Algorithm/protocol | Time (µs) | algbw (GB/s) | busbw (GB/s) |\n|---|---|---|---|---|\n", p.Name, n)
	choices, err := res.Tune.Sweep(context.Background(), tune.AllReduce, tune.Sizes(1<<10, 1<<30), tune.Request{})
	if err == nil {
		for i, c := range choices {
			if i%2 == 1 {
				continue
			}
			algbw := float64(c.NBytes) / float64(c.TimeUs) / 1000
			fmt.Fprintf(&b, "| %s | %s/%s | %.1f | %.2f | %.2f |\n", humanBytes(c.NBytes), c.Algo, c.Proto, c.TimeUs, algbw, algbw*tune.BusBwFactor(tune.AllReduce, n))
		}
	}
	b.WriteString("\nThe same in a terminal: `ncclsim estimate --preset " + p.Name + " --coll allreduce --bytes N`.\n")
	return b.String()
}

func humanBytes(n uint64) string {
	units := []string{"B", "KiB", "MiB", "GiB"}
	v, u := n, 0
	for v >= 1024 && v%1024 == 0 && u < len(units)-1 {
		v /= 1024
		u++
	}
	return fmt.Sprintf("%d %s", v, units[u])
}
