package build

import (
	"fmt"
	"html"
	"sort"
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"

	"github.com/distributed-nav/distributed-nav/generator/corrections"
	"github.com/distributed-nav/distributed-nav/generator/crosslink"
	"github.com/distributed-nav/distributed-nav/generator/flowsvg"
	"github.com/distributed-nav/distributed-nav/generator/markdown"
	"github.com/distributed-nav/distributed-nav/generator/searchdb"
	"github.com/distributed-nav/distributed-nav/generator/sitetree"
)

// searchRecords turns the assembled site into search rows: one per page
// lead and per level-2/3 section, one per environment variable, one per
// source symbol or file the pages mention, one per correction. URLs are
// relative to the site's base URL (no leading slash).
func (b *builder) searchRecords(mentioned map[string]crosslink.Target) []searchdb.Record {
	var recs []searchdb.Record
	for _, p := range b.pages {
		if p.URL == "/az/" || p.URL == envURL || p.URL == "/corrections/" {
			continue // their rows come from the tables themselves
		}
		recs = append(recs, pageRecords(p, b.breadcrumb(p))...)
	}
	for _, r := range b.facts.env {
		// The text is what the result shows: the meaning, then the default (the
		// effective value where the table's default is a sentinel). Where the
		// variable lives (library, component) is in the breadcrumb.
		def := r.Default
		if r.EffectiveDefault != "" {
			def = strings.ReplaceAll(r.EffectiveDefault, "`", "") + " (declared as " + r.Default + ")"
		}
		text := strings.TrimSpace(r.Description) + " Default: " + def + "."
		if r.DeprecatedAliasOf != "" {
			text += " Deprecated: use " + r.DeprecatedAliasOf + "."
		}
		recs = append(recs, searchdb.Record{Kind: searchdb.KindEnv, Title: r.Name,
			Breadcrumb: "Environment variables › " + r.Reader + " › " + r.Component,
			URL:        strings.TrimPrefix(envURL, "/") + "#" + r.Anchor(), Text: text, Identifiers: []string{r.Name}})
	}
	for _, c := range b.facts.corrections {
		u := strings.TrimPrefix(b.correctionPage[c.ID], "/") + "#" + c.Anchor()
		recs = append(recs, searchdb.Record{Kind: searchdb.KindCorrection, Title: "Correction: " + c.Quote,
			Breadcrumb: "Corrections › " + c.Section, URL: u,
			Text: strings.Join(strings.Fields(c.Correction), " ") + " Sources: " + sourcesText(c.Sources)})
	}
	names := make([]string, 0, len(mentioned))
	for n := range mentioned {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t := mentioned[n]
		where := "Source"
		if strings.Contains(t.URL, "/pytorch/pytorch/") {
			where = "PyTorch v2.6.0"
		} else if strings.Contains(t.URL, "/NVIDIA/nccl/") {
			where = "NCCL v2.30.7-1"
		}
		file := corrections.ShortSource(t.URL)
		recs = append(recs, searchdb.Record{Kind: searchdb.KindSymbol, Title: n, Breadcrumb: where + " › " + strings.SplitN(file, "#", 2)[0],
			URL: strings.TrimPrefix(sourcesURL, "/") + "#" + symbolAnchor(n), Text: string(t.Kind) + " " + n + " at " + file, Identifiers: []string{n}})
	}
	return recs
}

func sourcesText(srcs []string) string {
	var out []string
	for _, s := range srcs {
		out = append(out, corrections.ShortSource(s))
	}
	return strings.Join(out, ", ")
}

// breadcrumb names the page's ancestors, from the top.
func (b *builder) breadcrumb(p *sitetree.Page) string {
	var parts []string
	u := strings.Trim(p.URL, "/")
	segs := strings.Split(u, "/")
	for i := 1; i < len(segs); i++ {
		if anc := b.page("/" + strings.Join(segs[:i], "/") + "/"); anc != nil {
			parts = append(parts, anc.Title)
		}
	}
	parts = append(parts, p.Title)
	return strings.Join(parts, " › ")
}

// pageRecords splits a page's Markdown at its level-2 and level-3 headings.
func pageRecords(p *sitetree.Page, crumb string) []searchdb.Record {
	src := []byte(p.Body)
	doc := markdown.New().Parser().Parse(text.NewReader(src))
	base := strings.TrimPrefix(p.URL, "/")
	if base == "" {
		base = "./" // the home page: the base URL itself
	}
	cur := searchdb.Record{Kind: searchdb.KindPage, Title: p.Title, Breadcrumb: crumb, URL: base, Text: p.Description}
	var recs []searchdb.Record
	// A heading that repeats within the page ("How it works" under every
	// subsystem) is named with its h2 ("Watchdog Thread › How it works"), and
	// the card pages' h2s with the page title, so results are told apart.
	h2 := ""
	if p.Params != nil && p.Params["card"] != nil {
		h2 = p.Title
	}
	seen := map[string]int{}
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		if h, ok := n.(*ast.Heading); ok && h.Level <= 3 {
			seen[plainText(h, src)]++
		}
	}
	flush := func() {
		if strings.TrimSpace(cur.Text) != "" || cur.Kind == searchdb.KindPage {
			recs = append(recs, cur)
		}
	}
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		if h, ok := n.(*ast.Heading); ok && h.Level <= 3 {
			flush()
			title := plainText(h, src)
			display := title
			if h.Level == 3 && h2 != "" && seen[title] > 1 {
				display = h2 + " › " + title
			} else if h.Level == 2 && p.Params != nil && p.Params["card"] != nil {
				display = p.Title + " › " + title
			}
			if h.Level == 2 && (p.Params == nil || p.Params["card"] == nil) {
				h2 = title
			}
			id, _ := h.AttributeString("id")
			anchor := ""
			if idb, ok := id.([]byte); ok {
				anchor = string(idb)
			}
			kind := searchdb.KindSection
			if p.Params != nil && p.Params["log"] == true {
				kind = searchdb.KindLog
			}
			cur = searchdb.Record{Kind: kind, Title: display, Breadcrumb: crumb, URL: strings.TrimPrefix(base, "./") + "#" + anchor}
			continue
		}
		if _, raw := n.(*ast.HTMLBlock); raw {
			continue
		}
		cur.Text += " " + plainText(n, src)
		// Block boundaries separate words.
	}
	flush()
	return recs
}

// plainText is the text of a subtree: text, code spans and code blocks.
func plainText(n ast.Node, src []byte) string {
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch v := c.(type) {
		case *ast.Text:
			b.Write(v.Segment.Value(src))
			if v.SoftLineBreak() || v.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(v.Value)
		case *ast.FencedCodeBlock, *ast.CodeBlock:
			lines := c.Lines()
			for i := 0; i < lines.Len(); i++ {
				seg := lines.At(i)
				b.Write(seg.Value(src))
			}
			return ast.WalkSkipChildren, nil
		case *ast.RawHTML, *ast.HTMLBlock:
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return strings.Join(strings.Fields(b.String()), " ")
}

const sourcesURL = "/sources/"

// symbolAnchor is the id of a symbol's row on the sources page.
func symbolAnchor(name string) string {
	return "src-" + strings.NewReplacer("/", "-", ".", "-", ":", "-").Replace(name)
}

// sourcesPage lists every source symbol and file the site links to, with
// its permalink and the pages that mention it.
func (b *builder) sourcesPage() *sitetree.Page {
	names := make([]string, 0, len(b.mentioned))
	for n := range b.mentioned {
		names = append(names, n)
	}
	sort.Strings(names)
	var body strings.Builder
	body.WriteString(string(b.text.Sources.Intro) + "\n\n")
	body.WriteString(`<div class="data-table"><table class="sources-table"><thead><tr><th scope="col">Name</th><th scope="col">Where</th><th scope="col">Mentioned on</th></tr></thead><tbody>`)
	for _, n := range names {
		t := b.mentioned[n]
		fmt.Fprintf(&body, `<tr id="%s"><th scope="row"><code>%s</code></th><td data-label="Where"><a href="%s">%s</a></td><td data-label="Mentioned on">`,
			html.EscapeString(symbolAnchor(n)), html.EscapeString(n), html.EscapeString(t.URL), html.EscapeString(corrections.ShortSource(t.URL)))
		urls := make([]string, 0, len(b.mentionedOn[n]))
		for u := range b.mentionedOn[n] {
			urls = append(urls, u)
		}
		sort.Strings(urls)
		for i, u := range urls {
			if i > 0 {
				body.WriteString(", ")
			}
			title := u
			if p := b.page(u); p != nil {
				title = p.Title
			}
			fmt.Fprintf(&body, `<a href="%s">%s</a>`, html.EscapeString(flowsvg.RelativeURL(sourcesURL, u)), html.EscapeString(title))
		}
		body.WriteString("</td></tr>")
	}
	body.WriteString("</tbody></table></div>\n")
	return &sitetree.Page{URL: sourcesURL, Title: string(b.text.Sources.Title), Weight: 80, Body: body.String(),
		Description: string(b.text.Sources.Description), Params: map[string]any{"wide": true}}
}
