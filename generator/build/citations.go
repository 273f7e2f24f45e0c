package build

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/distributed-nav/distributed-nav/generator/citecheck"
)

// checkCitations runs citecheck over every permalink of the notes, the
// front page and the corrections: each must open lines that hold what its
// link text or sentence names, and long ranges must be whole definitions.
func (b *builder) checkCitations() Problems {
	var ps Problems
	c := citecheck.New(b.facts.sources, b.facts.env)
	for _, n := range b.notes {
		for _, cit := range citecheck.Extract(n.Body, n.BodyLine) {
			if msg := c.Check(cit); msg != "" {
				ps = append(ps, Problem{n.Path, cit.Line, msg})
			}
			if msg := c.CheckLibrary(cit); msg != "" && cit.First {
				ps = append(ps, Problem{n.Path, cit.Line, msg})
			}
		}
	}
	home := filepath.Join(b.opts.Root, "content", "pages", "home.md")
	if src, err := os.ReadFile(home); err == nil {
		for _, cit := range citecheck.Extract(string(src), 1) {
			if msg := c.Check(cit); msg != "" {
				ps = append(ps, Problem{b.rel(home), cit.Line, msg})
			}
			if msg := c.CheckLibrary(cit); msg != "" && cit.First {
				ps = append(ps, Problem{b.rel(home), cit.Line, msg})
			}
		}
	}
	for _, corr := range b.facts.corrections {
		links := make([]citecheck.Link, len(corr.Sources))
		for i, u := range corr.Sources {
			links[i] = citecheck.Link{URL: u}
		}
		for i, u := range corr.Sources {
			cit := citecheck.Citation{Line: corr.Line, URL: u, Sentence: corr.Correction, Siblings: citecheck.Siblings(links, i)}
			if msg := c.Check(cit); msg != "" {
				ps = append(ps, Problem{"data/corrections.yaml", corr.Line, "correction " + corr.ID + ": " + msg})
			}
			if msg := c.CheckLibrary(cit); msg != "" && i == 0 {
				ps = append(ps, Problem{"data/corrections.yaml", corr.Line, "correction " + corr.ID + ": " + msg})
			}
		}
	}
	// The lines an env row gives for its effective default must exist at
	// the pinned tag and hold what the effective default names.
	for _, r := range b.facts.env {
		links := make([]citecheck.Link, len(r.DefaultURLs))
		for i, u := range r.DefaultURLs {
			links[i] = citecheck.Link{URL: u}
		}
		for i, u := range r.DefaultURLs {
			if u == "" {
				ps = append(ps, Problem{r.Table, r.TableLine, fmt.Sprintf("%s: default_set_at %s is not in the pinned tree", r.Name, r.DefaultSetAt[i])})
				continue
			}
			if err := b.facts.sources.Check(u, true); err != nil {
				ps = append(ps, Problem{r.Table, r.TableLine, fmt.Sprintf("%s: default_set_at: %v", r.Name, err)})
				continue
			}
			cit := citecheck.Citation{Line: r.TableLine, URL: u, Sentence: r.EffectiveDefault, Siblings: citecheck.Siblings(links, i)}
			if msg := c.Check(cit); msg != "" {
				ps = append(ps, Problem{r.Table, r.TableLine, r.Name + ": effective default: " + msg})
			}
		}
	}
	return ps
}
