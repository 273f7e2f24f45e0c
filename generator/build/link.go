package build

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/distributed-nav/distributed-nav/generator/crosslink"
	"github.com/distributed-nav/distributed-nav/generator/sitetree"
)

// link runs the cross-link transformer over every page, records backlinks,
// and checks what it finds: env-shaped names the tables do not know and
// permalinks that do not resolve in the pinned trees.
func (b *builder) link() Problems {
	var ps Problems
	ix := b.crossIndex()
	// Names the card gets wrong are allowed where a correction explains them.
	excused := map[string]bool{}
	for _, c := range b.facts.corrections {
		for _, w := range strings.FieldsFunc(c.Quote, func(r rune) bool { return r == ' ' || r == ',' || r == '=' || r == '(' || r == ')' }) {
			if crosslink.EnvShaped(w) {
				excused[w] = true
			}
		}
	}
	// The card's own text is checked against the card file, where lines
	// are exact.
	for _, c := range b.cards {
		for _, s := range c.Sections {
			res := ix.Rewrite([]byte(s.Source), crosslink.Options{})
			for _, p := range res.Problems {
				if !excused[p.Name] {
					ps = append(ps, Problem{c.Path, s.SourceLine + p.Line - 1, p.Message() + " (add a correction for it in data/corrections.yaml)"})
				}
			}
		}
	}
	backlinks := map[string]map[string]string{} // target URL -> source URL -> title
	addBack := func(target string, from *sitetree.Page) {
		target, _, _ = strings.Cut(target, "#")
		if target == from.URL || from.URL == "/az/" || !strings.HasPrefix(target, "/") {
			return
		}
		if backlinks[target] == nil {
			backlinks[target] = map[string]string{}
		}
		backlinks[target][from.URL] = from.Title
	}
	for _, p := range b.pages {
		if p.URL == "/az/" {
			continue
		}
		res := ix.Rewrite([]byte(p.Body), crosslink.Options{Self: p.URL})
		p.Body = string(res.Markdown)
		fromCard := p.Params != nil && p.Params["card"] != nil
		if !fromCard {
			for _, prob := range res.Problems {
				if !excused[prob.Name] {
					ps = append(ps, Problem{p.File, b.lineIn(p, prob.Line), prob.Message()})
				}
			}
		}
		for _, m := range res.Mentions {
			addBack(m.Target.URL, p)
			if m.Target.Kind == crosslink.KindSymbol || m.Target.Kind == crosslink.KindPath {
				b.mentioned[m.Target.Title] = m.Target
				if b.mentionedOn[m.Target.Title] == nil {
					b.mentionedOn[m.Target.Title] = map[string]bool{}
				}
				b.mentionedOn[m.Target.Title][p.URL] = true
			}
		}
		for _, l := range res.Links {
			switch {
			case b.facts.sources.IsGitHubBlob(l):
				// The corrections page repeats the corrections' sources, which are
				// checked (with their entry's line) below.
				if p.URL == "/corrections/" {
					continue
				}
				if err := b.facts.sources.Check(l, b.allowsLegacy(p)); err != nil {
					ps = append(ps, Problem{p.File, b.lineOfLink(p, l), err.Error()})
				}
			case strings.HasPrefix(l, "/"):
				addBack(l, p)
				target, _, _ := strings.Cut(l, "#")
				target, _, _ = strings.Cut(target, "?")
				// A card page quoting a note (a subsystem page's lead) repeats the
				// note's links; the note's own check reports them where they are.
				if !b.known(target) && !(fromCard && b.noteLinks(l)) {
					ps = append(ps, Problem{p.File, b.lineOfLink(p, l), fmt.Sprintf("link %s points at no page of the site", l)})
				}
			case strings.Contains(l, ".md") && !strings.Contains(l, "://"):
				name := strings.TrimSuffix(path.Base(strings.SplitN(l, "#", 2)[0]), ".md")
				if n := b.noteByName[name]; n != nil {
					addBack(noteURL(n), p)
				} else {
					ps = append(ps, Problem{p.File, b.lineOfLink(p, l), fmt.Sprintf("link %s resolves to no note (content/notes/%s.md)", l, name)})
				}
			}
		}
	}
	for _, c := range b.facts.corrections {
		for _, s := range c.Sources {
			if err := b.facts.sources.Check(s, false); err != nil {
				ps = append(ps, Problem{"data/corrections.yaml", c.Line, fmt.Sprintf("correction %s: %v", c.ID, err)})
			}
		}
	}
	for _, r := range b.facts.env {
		if u := b.facts.envLink(r); u != "" {
			if err := b.facts.sources.Check(u, true); err != nil {
				ps = append(ps, Problem{r.Table, r.TableLine, fmt.Sprintf("%s: %v", r.Name, err)})
			}
		} else if r.File != "" {
			ps = append(ps, Problem{r.Table, r.TableLine, fmt.Sprintf("%s: %s is not in the pinned tree", r.Name, r.File)})
		}
	}
	for _, p := range b.pages {
		froms := backlinks[p.URL]
		if len(froms) == 0 {
			continue
		}
		urls := make([]string, 0, len(froms))
		for u := range froms {
			urls = append(urls, u)
		}
		sort.Strings(urls)
		var list []map[string]string
		for _, u := range urls {
			list = append(list, map[string]string{"url": u, "title": froms[u]})
		}
		if p.Params == nil {
			p.Params = map[string]any{}
		}
		p.Params["backlinks"] = list
	}
	return ps
}

// noteLinks reports whether some note links to l.
func (b *builder) noteLinks(l string) bool {
	for _, n := range b.notes {
		if strings.Contains(n.Body, "]("+l+")") {
			return true
		}
	}
	return false
}

// known reports whether a root-relative URL is a page of the site, a
// trigger page, the handbook (HTML and PDF), or a file the site serves.
func (b *builder) known(u string) bool {
	if b.page(u) != nil || strings.HasPrefix(u, "/triggers/") || u == "/triggers/" || u == "/handbook.pdf" || u == "/handbook.html" {
		return true
	}
	for _, prefix := range b.opts.ExtraURLs {
		if strings.HasPrefix(u, prefix) {
			return true
		}
	}
	return false
}

// allowsLegacy: only the notes' "changes since" sections may cite the
// legacy tag; the check is per page, so notes may, card pages may not.
func (b *builder) allowsLegacy(p *sitetree.Page) bool {
	return strings.HasPrefix(p.URL, "/notes/")
}

// lineIn maps a line of a page body to its source file line.
func (b *builder) lineIn(p *sitetree.Page, bodyLine int) int {
	if strings.HasPrefix(p.File, "content/notes/") || strings.HasPrefix(p.File, "content/pages/") {
		return p.Line + bodyLine - 1
	}
	return p.Line
}

func (b *builder) lineOfLink(p *sitetree.Page, l string) int {
	i := strings.Index(p.Body, l)
	if i < 0 {
		return p.Line
	}
	return b.lineIn(p, strings.Count(p.Body[:i], "\n")+1)
}

// checkNoteSources requires every level-2 and level-3 section of every note
// to carry at least one source link in its own text (before the next
// heading): a permalink into a pinned tree, or the URL of a published
// measurement.
func (b *builder) checkNoteSources() Problems {
	var ps Problems
	for _, n := range b.notes {
		for i, s := range n.Sections {
			end := s.End
			if i+1 < len(n.Sections) && n.Sections[i+1].Start < end {
				end = n.Sections[i+1].Start
			}
			own := n.Body[s.Start:end]
			if !strings.Contains(own, "](https://") && !strings.Contains(own, "<https://") {
				ps = append(ps, Problem{n.Path, s.Line, fmt.Sprintf("section %q has no source link (a permalink at the pinned tag or a measurement's URL)", s.Title)})
			}
		}
	}
	return ps
}
