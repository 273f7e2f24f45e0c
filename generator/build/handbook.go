package build

import (
	"sort"
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

// handbook lays out the printed handbook: the card, the notes by layer, the
// playground's static results, the environment variables, operations
// (troubleshooting), the corrections and the reference notes (glossary). It
// is derived from the pages, so a new card or note appears without any
// template change. The chapter names are in content/site.yaml (handbook); a
// layer not listed there gets a chapter of its own, named after it, before the
// reference chapter.
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
				chapters = append(chapters, Chapter{ID: "card-" + strings.Trim(it.URL, "/"), Title: b.text.Handbook.Card.Fill("title", it.Title), Pages: pagesUnder(it)})
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
	hb := b.text.Handbook
	for _, lc := range hb.Layers {
		if ps := byLayer[lc.Layer]; len(ps) > 0 {
			chapters = append(chapters, Chapter{ID: "layer-" + lc.Layer, Title: string(lc.Title), Pages: ps})
			used[lc.Layer] = true
		}
	}
	var pg []pageLink
	for _, slug := range []string{"topology", "algorithms", "estimator"} {
		if w, ok := b.text.Widget(slug); ok {
			pg = append(pg, pageLink{string(w.Title), "/playground/" + slug + "/"})
		}
	}
	chapters = append(chapters, Chapter{ID: "playground", Title: string(hb.Playground), Pages: pg})
	chapters = append(chapters, Chapter{ID: "env", Title: string(hb.Env), Pages: []pageLink{{string(b.text.Env.Title), envURL}}})
	for _, l := range layers {
		if used[l] || l == "reference" {
			continue
		}
		title := string(hb.Operations)
		if l != "operations" {
			title = strings.ToUpper(l[:1]) + l[1:]
		}
		chapters = append(chapters, Chapter{ID: "layer-" + l, Title: title, Pages: byLayer[l]})
	}
	chapters = append(chapters, Chapter{ID: "corrections", Title: string(hb.Corrections), Pages: []pageLink{{string(b.text.Corrections.Title), "/corrections/"}}})
	if ps := byLayer["reference"]; len(ps) > 0 {
		chapters = append(chapters, Chapter{ID: "layer-reference", Title: string(hb.Reference), Pages: ps})
	}
	return chapters
}

// outsideHandbook lists the URLs of the pages no chapter holds (the home page aside): the
// handbook links to them on the live site instead of inside the document.
func outsideHandbook(pages []*sitetree.Page, chapters []Chapter) []string {
	in := map[string]bool{"/": true}
	for _, ch := range chapters {
		for _, p := range ch.Pages {
			in[p.URL] = true
		}
	}
	out := []string{}
	for _, p := range pages {
		if !in[p.URL] {
			out = append(out, p.URL)
		}
	}
	sort.Strings(out)
	return out
}
