// Package presets is the registry of built-in systems: NCCL-format topology
// XML files embedded from data/topologies, each named after its file and
// described by a leading "<!-- description: ... -->" comment.
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
	xml         []byte
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
		out = append(out, Preset{Name: name, Description: desc, xml: b})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Description returns the text of the "<!-- description: ... -->" comment
// that precedes the root element of a topology file (see topo.Description).
func Description(b []byte) (string, error) {
	return topo.Description(b)
}
