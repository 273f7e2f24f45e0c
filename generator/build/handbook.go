package build

import (
	"strings"

	"github.com/distributed-nav/distributed-nav/generator/sitetree"
)

// Chapter is one chapter of the printed handbook.
type Chapter struct {
	ID    string     `json:"id"`
	Title string     `json:"title"`
	Pages []pageLink `json:"pages"`
}

type pageLink struct {
	Title string `json:"title"`
	URL   string `json:"url"`
}

// layerChapters orders the notes' layers in the handbook and names their
// chapters. A layer not listed here gets a chapter of its own, named after
// it, before the reference chapter.
var layerChapters = []struct{ layer, title string }{
	{"pytorch", "The PyTorch layer"},
	{"nccl", "The NCCL layer"},
	{"hardware", "Hardware"},
}

// handbook lays out the printed handbook: the card, the notes by layer, the
// playground's static results, the environment variables, operations
// (troubleshooting), the corrections and the reference notes (glossary). It
// is derived from the pages, so a new card or note appears without any
// template change.
func (b *builder) handbook(nav []sitetree.NavItem) []Chapter {
	var chapters []Chapter
	pagesUnder := func(it sitetree.NavItem) []pageLink {
		var out []pageLink
		var walk func(sitetree.NavItem)
		walk = func(n sitetree.NavItem) {
			out = append(out, pageLink{n.Title, n.URL})
			for _, c := range n.Children {
				walk(c)
			}
		}
		walk(it)
		return out
	}
	for _, c := range b.cards {
		for _, it := range nav {
			if it.URL == cardURL(c) {
				chapters = append(chapters, Chapter{ID: "card-" + strings.Trim(it.URL, "/"), Title: "The card: " + it.Title, Pages: pagesUnder(it)})
			}
		}
	}
	byLayer := map[string][]pageLink{}
	var layers []string
	for _, n := range b.notes {
		if _, seen := byLayer[n.Layer]; !seen {
			layers = append(layers, n.Layer)
		}
		byLayer[n.Layer] = append(byLayer[n.Layer], pageLink{n.Title, noteURL(n)})
	}
	used := map[string]bool{}
	for _, lc := range layerChapters {
		if ps := byLayer[lc.layer]; len(ps) > 0 {
			chapters = append(chapters, Chapter{ID: "layer-" + lc.layer, Title: lc.title, Pages: ps})
			used[lc.layer] = true
		}
	}
	var pg []pageLink
	for _, w := range playgroundWidgets {
		if w.slug == "topology" || w.slug == "algorithms" || w.slug == "estimator" {
			pg = append(pg, pageLink{w.title, "/playground/" + w.slug + "/"})
		}
	}
	chapters = append(chapters, Chapter{ID: "playground", Title: "What NCCL does on the card's box", Pages: pg})
	chapters = append(chapters, Chapter{ID: "env", Title: "Environment variables", Pages: []pageLink{{"Environment variables", envURL}}})
	for _, l := range layers {
		if used[l] || l == "reference" {
			continue
		}
		title := "Operations"
		if l != "operations" {
			title = strings.ToUpper(l[:1]) + l[1:]
		}
		chapters = append(chapters, Chapter{ID: "layer-" + l, Title: title, Pages: byLayer[l]})
	}
	chapters = append(chapters, Chapter{ID: "corrections", Title: "Corrections to the card", Pages: []pageLink{{"Corrections to the card", "/corrections/"}}})
	if ps := byLayer["reference"]; len(ps) > 0 {
		chapters = append(chapters, Chapter{ID: "layer-reference", Title: "Reference", Pages: ps})
	}
	return chapters
}
