package build

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/distributed-nav/distributed-nav/generator/corrections"
	"github.com/distributed-nav/distributed-nav/generator/crosslink"
	"github.com/distributed-nav/distributed-nav/generator/envtable"
	"github.com/distributed-nav/distributed-nav/generator/sitetree"
	"github.com/distributed-nav/distributed-nav/generator/skill"
	"github.com/distributed-nav/distributed-nav/generator/sources"
)

// facts are the data tables the pages draw on.
type facts struct {
	sources     *sources.Set
	env         []envtable.Row
	corrections []corrections.Correction
}

func loadFacts(root string) (*facts, error) {
	dataDir := filepath.Join(root, "data")
	src, err := sources.Load(dataDir)
	if err != nil {
		return nil, err
	}
	env, err := envtable.Load(dataDir)
	if err != nil {
		return nil, err
	}
	envtable.LinkDefaults(env, src)
	cs, err := corrections.Load(filepath.Join(dataDir, "corrections.yaml"))
	if err != nil {
		return nil, err
	}
	return &facts{sources: src, env: env, corrections: cs}, nil
}

// envLink is the permalink of a variable's source line.
func (f *facts) envLink(r envtable.Row) string { return r.Permalink(f.sources) }

const envURL = "/env/"

// envPage is the single table of every variable.
func (b *builder) envPage() *sitetree.Page {
	var body strings.Builder
	nccl, torch := 0, 0
	for _, r := range b.facts.env {
		if strings.HasPrefix(r.Reader, "NCCL") {
			nccl++
		} else {
			torch++
		}
	}
	vars := []string{"nccl_tag", b.facts.sources.Tree("nccl").Tag, "nccl_rows", strconv.Itoa(nccl),
		"torch_tag", b.facts.sources.Tree("pytorch").Tag, "torch_rows", strconv.Itoa(torch)}
	txt := b.text.Env
	body.WriteString(txt.Intro.Fill(vars...) + "\n\n")
	body.WriteString(envtable.HTML(b.facts.env, b.facts.envLink))
	return &sitetree.Page{URL: envURL, Title: txt.Title.Fill(vars...), Weight: 60,
		Description: txt.Description.Fill(vars...),
		Body:        body.String(), Params: map[string]any{"wide": true}}
}

// correctionsPage lists every correction of every card.
func (b *builder) correctionsPage() *sitetree.Page {
	var body strings.Builder
	count := strconv.Itoa(len(b.facts.corrections))
	txt := b.text.Corrections
	body.WriteString(txt.Intro.Fill("count", count) + "\n\n")
	// The wrapper (an HTML block closed by the blank lines around the
	// Markdown table) lets the stylesheet lay the table out to fit the
	// column, and stack its cells on phones and in print.
	body.WriteString("<div class=\"data-table corrections-table\">\n\n")
	body.WriteString("| Card section | The card says | Verdict | What the source says | Source |\n|---|---|---|---|---|\n")
	for _, c := range b.facts.corrections {
		where := c.Section
		if u, ok := b.correctionPage[c.ID]; ok {
			where = fmt.Sprintf("[%s](%s#%s)", escapeCell(c.Section), u, c.Anchor())
		}
		var srcs []string
		for _, s := range c.Sources {
			// <wbr> after each "/" and before the line range lets a long
			// path wrap between directories and before its lines.
			label := strings.ReplaceAll(escapeCell(corrections.ShortSource(s)), "/", "/<wbr>")
			srcs = append(srcs, fmt.Sprintf("[%s](%s)", strings.Replace(label, "#", "<wbr>#", 1), s))
		}
		fmt.Fprintf(&body, "| %s | “%s” | %s | %s | %s |\n", where, escapeCell(c.Quote), c.VerdictLabel(),
			escapeCell(strings.Join(strings.Fields(c.Correction), " ")), strings.Join(srcs, "<br>"))
	}
	body.WriteString("\n</div>\n")
	return &sitetree.Page{URL: "/corrections/", Title: txt.Title.Fill("count", count), Weight: 70,
		Description: txt.Description.Fill("count", count),
		Body:        body.String(), File: "data/corrections.yaml", Line: 1, Params: map[string]any{"wide": true}}
}

// applyCorrections places every correction on the card page that shows its
// section, and reports the ones whose quote or section is nowhere.
func (b *builder) applyCorrections(c *skill.Card) Problems {
	var ps Problems
	bySection := map[string][]corrections.Correction{}
	for _, corr := range b.facts.corrections {
		bySection[corr.Section] = append(bySection[corr.Section], corr)
	}
	pagesFor := func(section string) []*sitetree.Page {
		for _, s := range c.Sections {
			if s.Title == section {
				switch s.Kind {
				case skill.KindFlows:
					var out []*sitetree.Page
					for _, f := range s.Flows {
						out = append(out, b.page(flowURL(c, f)))
					}
					return out
				case skill.KindProse:
					if p := b.page(sectionURL(c, s)); p != nil {
						return []*sitetree.Page{p}
					}
					return []*sitetree.Page{b.page(cardURL(c))}
				}
			}
			for _, sub := range s.Subsystems {
				if sub.Name == section {
					return []*sitetree.Page{b.page(subsystemURL(c, sub))}
				}
			}
		}
		return nil
	}
	sections := make([]string, 0, len(bySection))
	for s := range bySection {
		sections = append(sections, s)
	}
	sort.Strings(sections)
	for _, section := range sections {
		list := bySection[section]
		pages := pagesFor(section)
		if len(pages) == 0 {
			for _, corr := range list {
				ps = append(ps, Problem{"data/corrections.yaml", corr.Line, fmt.Sprintf("correction %s: the card has no section or subsystem %q", corr.ID, section)})
			}
			continue
		}
		for _, corr := range list {
			placed := false
			for _, p := range pages {
				if p == nil {
					continue
				}
				out, missing := corrections.Apply(p.Body, []corrections.Correction{corr})
				if len(missing) == 0 {
					p.Body = out
					b.correctionPage[corr.ID] = p.URL
					placed = true
					break
				}
			}
			if !placed {
				ps = append(ps, Problem{"data/corrections.yaml", corr.Line, fmt.Sprintf("correction %s: quote %q is not in the card's %q", corr.ID, corr.Quote, section)})
			}
		}
	}
	return ps
}

// crossIndex registers every linkable name: env vars first (most
// specific), then card subsystems, source symbols and source paths.
func (b *builder) crossIndex() *crosslink.Index {
	ix := crosslink.NewIndex()
	for _, r := range b.facts.env {
		ix.Add(r.Name, crosslink.Target{Kind: crosslink.KindEnv, URL: envURL + "#" + r.Anchor(), Title: r.Name})
	}
	for _, c := range b.cards {
		for _, s := range c.Subsystems() {
			if isIdentifier(s.ShortName) {
				ix.Add(s.ShortName, crosslink.Target{Kind: crosslink.KindSubsystem, URL: subsystemURL(c, s), Title: s.ShortName})
			}
		}
	}
	for _, t := range b.facts.sources.Trees {
		for name, sym := range distinctiveSymbols(t.Symbols) {
			ix.Add(name, crosslink.Target{Kind: crosslink.KindSymbol, URL: t.Permalink(sym.File, sym.Line, sym.End), Title: sym.Name})
		}
	}
	for _, t := range b.facts.sources.Trees {
		for _, f := range t.Files() {
			if strings.Contains(f, "/") {
				ix.Add(f, crosslink.Target{Kind: crosslink.KindPath, URL: t.Permalink(f, 0, 0), Title: f})
			}
		}
	}
	return ix
}

// isIdentifier reports whether s is one word usable as a link term.
func isIdentifier(s string) bool {
	if len(s) < 4 {
		return false
	}
	for _, r := range s {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_') {
			return false
		}
	}
	return true
}

// distinctiveSymbols picks symbol names worth auto-linking: identifiers of
// at least 6 characters with an underscore or an inner capital (so common
// words like "init" never link), defined as a function, class, struct,
// macro or enumerator no more than twice (the first definition wins).
func distinctiveSymbols(syms []sources.Symbol) map[string]sources.Symbol {
	count := map[string]int{}
	first := map[string]sources.Symbol{}
	for _, s := range syms {
		switch s.Kind {
		case "function", "class", "struct", "method", "macro", "enumerator":
		default:
			continue
		}
		if len(s.Name) < 6 || !isIdentifier(s.Name) {
			continue
		}
		inner := strings.Contains(strings.Trim(s.Name, "_"), "_")
		for i, r := range s.Name {
			if i > 0 && unicode.IsUpper(r) {
				inner = true
			}
		}
		if !inner {
			continue
		}
		count[s.Name]++
		if _, ok := first[s.Name]; !ok {
			first[s.Name] = s
		}
	}
	out := map[string]sources.Symbol{}
	for n, s := range first {
		if count[n] <= 2 {
			out[n] = s
		}
	}
	return out
}
