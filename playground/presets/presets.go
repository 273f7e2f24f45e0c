// Package presets is the registry of built-in systems: NCCL-format topology
// XML files embedded from data/topologies, each named after its file and
// described by a leading "<!-- description: ... -->" comment, with the group
// and display name the pickers show from data/topologies/presets.tsv.
package presets

import (
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/distributed-nav/distributed-nav/data"
	"github.com/distributed-nav/distributed-nav/playground/topo"
)

// dir is the directory of the presets inside data.Topologies.
const dir = "topologies"

// Preset is one built-in system.
type Preset struct {
	Name        string // file name without ".xml", e.g. "h100-sxm-8x"
	Description string // one line: hardware, and what the preset models
	// Group is the kind of system the pickers file the preset under ("NVSwitch",
	// "Multi-node", ...), Title its short display name ("8× H100 SXM5 on
	// NVSwitch (HGX H100)"); both from presets.tsv.
	Group, Title string
	// GroupOrder ranks Group as the table first lists it.
	GroupOrder int
	xml        []byte
}

// tableFile lists the group and title of every preset.
const tableFile = "presets.tsv"

// entry is one line of the presets table.
type entry struct {
	group, title string
	order, line  int
}

// readTable parses the presets table: comment lines start with "#", every
// other line is name, group and title separated by tabs.
func readTable(fsys fs.FS, dir string) (map[string]entry, error) {
	name := path.Join(dir, tableFile)
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, fmt.Errorf("presets table: %w", err)
	}
	out := map[string]entry{}
	groups := map[string]int{}
	for i, ln := range strings.Split(string(b), "\n") {
		ln = strings.TrimRight(ln, "\r")
		if strings.TrimSpace(ln) == "" || strings.HasPrefix(ln, "#") {
			continue
		}
		f := strings.Split(ln, "\t")
		if len(f) != 3 || f[0] == "" || strings.TrimSpace(f[1]) == "" || strings.TrimSpace(f[2]) == "" {
			return nil, fmt.Errorf("%s:%d: want name, group and title separated by tabs", name, i+1)
		}
		if prev, dup := out[f[0]]; dup {
			return nil, fmt.Errorf("%s:%d: %s is already listed at line %d", name, i+1, f[0], prev.line)
		}
		if _, ok := groups[f[1]]; !ok {
			groups[f[1]] = len(groups)
		}
		out[f[0]] = entry{group: f[1], title: f[2], order: groups[f[1]], line: i + 1}
	}
	return out, nil
}

// XML returns the preset's topology file.
func (p Preset) XML() []byte { return bytes.Clone(p.xml) }

// System parses the preset into a system graph.
func (p Preset) System() (*topo.System, []topo.Warning, error) {
	s, w, err := topo.ParseXML(bytes.NewReader(p.xml))
	if err != nil {
		return nil, w, fmt.Errorf("preset %s: %w", p.Name, err)
	}
	return s, w, nil
}

// List returns every preset, sorted by name.
func List() ([]Preset, error) { return listFS(data.Topologies, dir) }

// Get returns the preset with the given name.
func Get(name string) (Preset, error) {
	all, err := List()
	if err != nil {
		return Preset{}, err
	}
	var names []string
	for _, p := range all {
		if p.Name == name {
			return p, nil
		}
		names = append(names, p.Name)
	}
	return Preset{}, fmt.Errorf("unknown preset %q (available: %s)", name, strings.Join(names, ", "))
}

// listFS reads every *.xml file of dir in fsys.
func listFS(fsys fs.FS, dir string) ([]Preset, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("list presets: %w", err)
	}
	table, err := readTable(fsys, dir)
	if err != nil {
		return nil, err
	}
	var out []Preset
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".xml")
		if e.IsDir() || !ok {
			continue
		}
		b, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("read preset %s: %w", name, err)
		}
		desc, err := Description(b)
		if err != nil {
			return nil, fmt.Errorf("preset %s: %w", name, err)
		}
		e, ok := table[name]
		if !ok {
			return nil, fmt.Errorf("preset %s: no line in %s (name, group, title)", name, path.Join(dir, tableFile))
		}
		delete(table, name)
		out = append(out, Preset{Name: name, Description: desc, Group: e.group, Title: e.title, GroupOrder: e.order, xml: b})
	}
	// A line left over names no file; report the first.
	extra, at := "", 0
	for n, e := range table {
		if extra == "" || e.line < at {
			extra, at = n, e.line
		}
	}
	if extra != "" {
		return nil, fmt.Errorf("%s:%d: %s names no topology file", path.Join(dir, tableFile), at, extra)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Description returns the text of the "<!-- description: ... -->" comment
// that precedes the root element of a topology file (see topo.Description).
func Description(b []byte) (string, error) {
	return topo.Description(b)
}
