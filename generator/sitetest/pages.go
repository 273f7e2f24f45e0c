package sitetest

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// PageKind is one kind of page the site has, with an example of it.
type PageKind struct {
	// Name names the kind ("env", "playground-topology").
	Name string
	// Path is the example's path under the site's root, with its query.
	Path string
	// Widget pages are filled by the wasm playground: checks wait for its
	// first result.
	Widget bool
}

// PageKinds lists every kind of page of the site built into public: the
// home page, the card's overview, subsystem and flow pages, notes, the data
// pages, the indexes and every playground view. A term page of the triggers
// taxonomy is taken from the built site (its names come from the card). It
// fails when an example is missing from public.
func PageKinds(public string) ([]PageKind, error) {
	kinds := []PageKind{
		{"home", "", false},
		{"card-overview", "distributed-nav/", false},
		{"subsystem", "distributed-nav/subsystems/processgroupnccl/", false},
		{"flow", "distributed-nav/flows/nccl-allreduce/", false},
		{"notes-index", "notes/", false},
		{"note", "notes/nccl-internals-architecture-deep-dive/", false},
		{"env", "env/", false},
		{"corrections", "corrections/", false},
		{"sources", "sources/", false},
		{"az", "az/", false},
		{"triggers", "triggers/", false},
		{"playground-index", "playground/", false},
		{"playground-topology", "playground/topology/?preset=h100-sxm-8x", true},
		{"playground-algorithms", "playground/algorithms/", true},
		{"playground-estimator", "playground/estimator/", true},
		{"playground-step", "playground/step/", true},
		{"playground-doctor", "playground/doctor/", true},
	}
	// Hugo writes the site at the root of public/ whatever the base URL's
	// path; the server adds the sub-path.
	entries, err := os.ReadDir(filepath.Join(public, "triggers"))
	if err != nil {
		return nil, fmt.Errorf("page kinds: %w", err)
	}
	var terms []string
	for _, e := range entries {
		if e.IsDir() {
			terms = append(terms, e.Name())
		}
	}
	sort.Strings(terms)
	if len(terms) == 0 {
		return nil, fmt.Errorf("page kinds: the built site has no trigger pages")
	}
	kinds = append(kinds, PageKind{"trigger", "triggers/" + terms[0] + "/", false})
	for _, k := range kinds {
		p := strings.SplitN(k.Path, "?", 2)[0]
		if _, err := os.Stat(filepath.Join(public, p, "index.html")); err != nil {
			return nil, fmt.Errorf("page kind %s: %w", k.Name, err)
		}
	}
	return kinds, nil
}
