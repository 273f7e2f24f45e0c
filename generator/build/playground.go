package build

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/distributed-nav/distributed-nav/generator/sitetext"
	"github.com/distributed-nav/distributed-nav/generator/sitetree"
	"github.com/distributed-nav/distributed-nav/playground/presets"
	"github.com/distributed-nav/distributed-nav/playground/service"
)

// The playground's default system (service.DefaultPreset).
const defaultPreset = service.DefaultPreset

// playgroundConstants is site/assets/gen/playground/constants.js: the
// defaults, limits and option lists of the playground pages
// (service.Constants) as an ES module, so that the JavaScript restates none
// of them.
func playgroundConstants() ([]byte, error) {
	b, err := json.MarshalIndent(service.Constants(), "", "  ")
	if err != nil {
		return nil, fmt.Errorf("playground constants: %w", err)
	}
	return []byte("// Written by the generator from playground/service (service.Constants); do not edit.\nexport default " + string(b) + ";\n"), nil
}

// playgroundWidgets are the widgets the wasm adapter mounts, in page order; their titles
// and descriptions are in content/site.yaml (playground.widgets).
var playgroundWidgets = []string{"topology", "algorithms", "estimator", "step", "doctor"}

// playgroundTexts pairs every widget with its texts and reports a widget content/site.yaml
// does not describe, or one it describes that does not exist.
func (b *builder) playgroundTexts() ([]sitetext.Widget, error) {
	var out []sitetext.Widget
	for _, slug := range playgroundWidgets {
		w, ok := b.text.Widget(slug)
		if !ok {
			return nil, fmt.Errorf("%s:1: playground.widgets has no entry for the %s widget", sitetext.Path, slug)
		}
		out = append(out, w)
	}
	for _, w := range b.text.Playground.Widgets {
		if !slices.Contains(playgroundWidgets, w.Slug) {
			return nil, fmt.Errorf("%s:1: playground.widgets: %q is not a widget (the widgets are %s)", sitetext.Path, w.Slug, strings.Join(playgroundWidgets, ", "))
		}
	}
	return out, nil
}

// playgroundPages writes the playground section: each page carries the
// static results of its default preset (what readers without JavaScript, and
// the printed handbook, see), rendered by the same Go code as the live widget
// (staticHTML: tables and SVG figures from the service's page answers), and the widget the browser mounts
// over them.
func (b *builder) playgroundPages(ctx context.Context) ([]sitetree.NavItem, error) {
	p, err := presets.Get(defaultPreset)
	if err != nil {
		return nil, fmt.Errorf("playground: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	widgets, err := b.playgroundTexts()
	if err != nil {
		return nil, err
	}
	var index strings.Builder
	index.WriteString(b.text.Playground.Intro.Fill("system", p.Description) + "\n\n")
	var items []sitetree.NavItem
	for i, w := range widgets {
		u := "/playground/" + w.Slug + "/"
		fmt.Fprintf(&index, "- [%s](%s): %s\n", w.Title, u, w.Description)
		preset := defaultPreset
		if w.Slug == "estimator" {
			// The estimator opens on the RTX 4090 box without P2P that has
			// published measurements to draw next to the prediction.
			preset = service.EstimatorDefaultPreset
		}
		static, err := staticHTML(ctx, w.Slug, preset)
		if err != nil {
			return nil, fmt.Errorf("playground: static %s view of %s: %w", w.Slug, preset, err)
		}
		// The static view ends with the exact command of its numbers (the
		// live view shows the command of its inputs); the doctor, which has
		// none, names its command here.
		body := static
		if w.Slug == "doctor" {
			body = b.cliLine(doctorCommand)
		}
		// The layout introduces ncclsim with this subcommand, above the view.
		params := map[string]any{"widget": w.Slug, "preset": preset, "notoc": true, "cli": cliSubcommand[w.Slug]}
		if w.Slug == "doctor" {
			samples, err := b.doctorSamples()
			if err != nil {
				return nil, fmt.Errorf("playground: %w", err)
			}
			params["samples"] = samples
		}
		b.add(&sitetree.Page{URL: u, Title: string(w.Title), Description: string(w.Description), Weight: i + 1, Layout: "playground",
			Body: body, Params: params})
		items = append(items, sitetree.NavItem{Title: string(w.Title), URL: u})
	}
	b.add(&sitetree.Page{URL: "/playground/", Section: true, Title: string(b.text.Playground.Title), Weight: 55,
		Description: string(b.text.Playground.Description), Body: index.String(), File: sitetext.Path, Line: 1})
	return items, nil
}

// ncclsimURL is the page that says what ncclsim is and how to run it from a clone
// (content/pages/ncclsim.md).
const ncclsimURL = "/playground/ncclsim/"

// cliLine names the terminal command cmd (without the program name) that
// prints the same numbers, linking the page about ncclsim when
// content/pages has one.
func (b *builder) cliLine(cmd string) string {
	cmd = "ncclsim " + cmd
	for _, n := range b.prose {
		if n.URL == ncclsimURL {
			return "The same numbers in a terminal, with [ncclsim](" + ncclsimURL + "): `" + cmd + "`.\n"
		}
	}
	return "The same numbers in a terminal: `" + cmd + "`.\n"
}

// cliSubcommand is the ncclsim subcommand that answers each widget's
// question.
var cliSubcommand = map[string]string{
	"topology":   "topo",
	"algorithms": "tune",
	"estimator":  "estimate",
	"step":       "step",
	"doctor":     "doctor",
}

// doctorCommand is the doctor page's command line (without the program
// name): the page has no static view to carry one.
const doctorCommand = "doctor --log nccl.log --env env.txt"

// doctorSampleLogs are the published logs (data/logs) the doctor page offers
// to try: a ring layout on NVSwitch GPUs, a PyTorch watchdog timeout and the
// PCIe paths of a GeForce box.
var doctorSampleLogs = []string{
	"nvidia-nccl-1453-h100-rings",
	"pytorch-pytorch-118369-watchdog-timeout",
	"nvidia-nccl-tests-307-rtx4090-paths",
}

// doctorSample is one log the doctor page can load: its text and what it
// shows, from the log's "#| shows:" header line.
type doctorSample struct {
	Name  string `json:"name"`
	Shows string `json:"shows"`
	Text  string `json:"text"`
}

// doctorSamples reads the sample logs.
func (b *builder) doctorSamples() ([]doctorSample, error) {
	var out []doctorSample
	for _, name := range doctorSampleLogs {
		rel := "data/logs/" + name + ".log"
		raw, err := os.ReadFile(filepath.Join(b.opts.Root, filepath.FromSlash(rel)))
		if err != nil {
			return nil, fmt.Errorf("doctor sample: %w", err)
		}
		text := string(raw)
		shows := ""
		for _, ln := range strings.Split(text, "\n") {
			if v, ok := strings.CutPrefix(ln, "#| shows:"); ok {
				shows = strings.TrimSpace(v)
				break
			}
		}
		if shows == "" {
			return nil, fmt.Errorf("%s:1: a sample log needs a \"#| shows:\" header line", rel)
		}
		out = append(out, doctorSample{Name: name, Shows: shows, Text: text})
	}
	return out, nil
}
