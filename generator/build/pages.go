package build

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/yuin/goldmark/text"

	"github.com/distributed-nav/distributed-nav/generator/flowsvg"
	"github.com/distributed-nav/distributed-nav/generator/markdown"
	"github.com/distributed-nav/distributed-nav/generator/notes"
	"github.com/distributed-nav/distributed-nav/generator/sitetree"
	"github.com/distributed-nav/distributed-nav/generator/skill"
	"github.com/distributed-nav/distributed-nav/generator/slug"
)

// cardURL is the root of a card's pages.
func cardURL(c *skill.Card) string { return "/" + slug.Make(c.Name) + "/" }

func subsystemURL(c *skill.Card, s *skill.Subsystem) string {
	return cardURL(c) + "subsystems/" + s.Slug + "/"
}

func flowURL(c *skill.Card, f *skill.Flow) string { return cardURL(c) + "flows/" + f.Slug + "/" }

func sectionURL(c *skill.Card, s *skill.Section) string { return cardURL(c) + s.Slug + "/" }

func noteURL(n *notes.Note) string { return "/notes/" + n.Name + "/" }

// cardPages turns one card into its pages and its navigation subtree.
func (b *builder) cardPages(c *skill.Card, weight int) sitetree.NavItem {
	root := cardURL(c)
	title := c.Title
	if title == "" {
		title = c.Name
	}
	nav := sitetree.NavItem{Title: title, URL: root}
	var overview strings.Builder
	fmt.Fprintf(&overview, "%s\n\n", c.Description)
	ct := b.text.Card
	overview.WriteString(ct.Overview.Fill("name", c.Name) + "\n\n")
	for _, s := range c.Sections {
		switch s.Kind {
		case skill.KindProse:
			if len(s.Tables) == 0 && strings.Count(s.Source, "\n") <= 3 && !strings.Contains(s.Source, "- ") {
				// A short section (the card's one-line architecture) stays
				// on the overview page.
				fmt.Fprintf(&overview, "## %s\n\n%s\n", s.Title, s.Source)
				continue
			}
			u := sectionURL(c, s)
			b.add(&sitetree.Page{URL: u, Title: s.Title, Body: s.Source + b.sectionDeepDive(s.Title), File: c.Path, Line: s.SourceLine,
				Description: ct.SectionDescription.Fill("title", s.Title), Params: cardParams(c, s.Title)})
			nav.Children = append(nav.Children, sitetree.NavItem{Title: s.Title, URL: u})
			fmt.Fprintf(&overview, "- [%s](%s)\n", s.Title, u)
		case skill.KindIndex:
			u := cardURL(c) + "subsystems/"
			item := sitetree.NavItem{Title: s.Title, URL: u}
			var list strings.Builder
			list.WriteString("| # | Subsystem | Files |\n|---|---|---|\n")
			for _, sub := range s.Subsystems {
				su := subsystemURL(c, sub)
				b.add(b.subsystemPage(c, sub, su))
				item.Children = append(item.Children, sitetree.NavItem{Title: fmt.Sprintf("%d. %s", sub.Number, sub.ShortName), URL: su})
				fmt.Fprintf(&list, "| %d | [%s](%s) | %s |\n", sub.Number, sub.ShortName, su, escapeCell(sub.FileText))
			}
			b.add(&sitetree.Page{URL: u, Section: true, Title: s.Title, Body: list.String(), File: c.Path, Line: s.Line,
				Description: ct.SubsystemsIndex.Fill("count", strconv.Itoa(len(s.Subsystems)))})
			nav.Children = append(nav.Children, item)
			fmt.Fprintf(&overview, "- [%s](%s): %s\n", s.Title, u, ct.SubsystemsItem.Fill("count", strconv.Itoa(len(s.Subsystems))))
		case skill.KindFlows:
			u := cardURL(c) + "flows/"
			item := sitetree.NavItem{Title: s.Title, URL: u}
			var list strings.Builder
			for _, f := range s.Flows {
				fu := flowURL(c, f)
				b.add(b.flowPage(c, f, fu))
				item.Children = append(item.Children, sitetree.NavItem{Title: f.Name, URL: fu})
				fmt.Fprintf(&list, "- [%s](%s): %s\n", f.Name, fu, ct.FlowSteps.Fill("count", strconv.Itoa(len(f.Steps))))
			}
			b.add(&sitetree.Page{URL: u, Section: true, Title: s.Title, Body: list.String(), File: c.Path, Line: s.Line,
				Description: string(ct.FlowsIndex)})
			nav.Children = append(nav.Children, item)
			fmt.Fprintf(&overview, "- [%s](%s): %s\n", s.Title, u, ct.FlowsItem.Fill("count", strconv.Itoa(len(s.Flows))))
		}
	}
	b.add(&sitetree.Page{URL: root, Section: true, Title: title, Description: c.Description, Weight: weight,
		Body: overview.String(), File: c.Path, Line: 1, Params: map[string]any{"triggers": c.Triggers, "card": c.Name}})
	return nav
}

func cardParams(c *skill.Card, part string) map[string]any {
	return map[string]any{"card": c.Name, "cardpart": part}
}

func escapeCell(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

func (b *builder) subsystemPage(c *skill.Card, s *skill.Subsystem, u string) *sitetree.Page {
	var body strings.Builder
	// The page opens with what the subsystem is: the lead paragraph of the note section
	// that explains it, or, without one, the card's own key points.
	description := s.KeyText
	if description == "" {
		description = s.FileText
	}
	if sec, n := b.noteSectionFor(s); n != nil {
		if md := sectionLead(n, sec); md != "" {
			body.WriteString(md + "\n\n")
			description = markdownText(md)
		}
	}
	body.WriteString("## What the card says\n\n")
	for _, f := range s.Fields {
		switch strings.ToLower(f.Label) {
		case "key":
			fmt.Fprintf(&body, "- **%s:**\n", f.Label)
			for _, k := range s.Key {
				fmt.Fprintf(&body, "  - %s\n", k)
			}
		default:
			fmt.Fprintf(&body, "- **%s:** %s\n", f.Label, f.Value)
		}
	}
	if s.SizeHint != "" {
		fmt.Fprintf(&body, "- **Size:** %s (the card's estimate)\n", s.SizeHint)
	}
	body.WriteString("\n")
	if sec, n := b.noteSectionFor(s); n != nil {
		body.WriteString("## Deep dive\n\n")
		link := fmt.Sprintf("[%s](%s#%s)", sec.Title, noteURL(n), sec.ID)
		body.WriteString(b.text.Card.SubsystemDeepDive.Fill("section", link, "note", n.Title) + "\n")
	}
	params := cardParams(c, "Subsystem Index")
	params["subsystem"] = s.Number
	var triggers []string
	text := strings.ToLower(s.Name + " " + s.KeyText + " " + s.FileText)
	for _, t := range c.Triggers {
		if strings.Contains(text, strings.ToLower(t)) {
			triggers = append(triggers, t)
		}
	}
	if len(triggers) > 0 {
		params["triggers"] = triggers
	}
	return &sitetree.Page{URL: u, Title: fmt.Sprintf("%d. %s", s.Number, s.ShortName), Weight: s.Number,
		Description: description, Body: body.String(),
		File: c.Path, Line: s.Line, Params: params}
}

// sectionLead is the first paragraph of a note section, as Markdown: the text between its
// heading and the first blank line after it. A section that opens with anything but prose
// (a sub-heading, a list, a table, code, HTML, a quote) has no lead.
func sectionLead(n *notes.Note, sec notes.Section) string {
	own := n.Body[sec.Start:sec.End]
	_, rest, _ := strings.Cut(own, "\n")
	var lines []string
	for _, l := range strings.Split(rest, "\n") {
		if strings.TrimSpace(l) == "" {
			if len(lines) > 0 {
				break
			}
			continue
		}
		lines = append(lines, l)
	}
	if len(lines) == 0 {
		return ""
	}
	first := strings.TrimSpace(lines[0])
	for _, p := range []string{"#", "```", "~~~", "|", "<", "- ", "* ", "+ ", ">", "1. "} {
		if strings.HasPrefix(first, p) {
			return ""
		}
	}
	return strings.Join(lines, "\n")
}

// markdownText is the plain text of a Markdown fragment: link texts without their
// destinations, code spans without backticks, white space collapsed.
func markdownText(md string) string {
	src := []byte(md)
	return plainText(markdown.New().Parser().Parse(text.NewReader(src)), src)
}

// sectionDeepDive lists the notes, or note sections, that explain a
// top-level card section (front matter card_sections, or a heading's
// section="..." attribute).
func (b *builder) sectionDeepDive(title string) string {
	var links []string
	for _, n := range b.notes {
		for _, cs := range n.CardSections {
			if cs == title {
				links = append(links, fmt.Sprintf("the note [%s](%s)", n.Title, noteURL(n)))
			}
		}
		for _, sec := range n.Sections {
			if sec.CardSection == title {
				links = append(links, fmt.Sprintf("[%s](%s#%s) in *%s*", sec.Title, noteURL(n), sec.ID, n.Title))
			}
		}
	}
	if len(links) == 0 {
		return ""
	}
	return "\n## Deep dive\n\n" + b.text.Card.SectionDeepDive.Fill("links", strings.Join(links, " and ")) + "\n"
}

// noteSectionFor finds the note section whose subsystem attribute names s, as
// the card writes it or without its size hint ("ProcessGroupNCCL" for
// "ProcessGroupNCCL (~3500+ lines C++)"), preferring the notes the card
// references for it.
func (b *builder) noteSectionFor(s *skill.Subsystem) (notes.Section, *notes.Note) {
	find := func(n *notes.Note) (notes.Section, bool) {
		if sec, ok := n.SectionFor(s.Name); ok {
			return sec, true
		}
		return n.SectionFor(s.ShortName)
	}
	for _, ref := range s.Notes {
		if n := b.noteByName[ref.Name]; n != nil {
			if sec, ok := find(n); ok {
				return sec, n
			}
		}
	}
	for _, n := range b.notes {
		if sec, ok := find(n); ok {
			return sec, n
		}
	}
	return notes.Section{}, nil
}

func (b *builder) flowPage(c *skill.Card, f *skill.Flow, u string) *sitetree.Page {
	var body strings.Builder
	body.WriteString(string(b.text.Card.FlowIntro) + "\n\n```text\n")
	body.WriteString(strings.TrimRight(f.Text, "\n"))
	body.WriteString("\n```\n\n## Diagram\n\n")
	var steps []flowsvg.Step
	var list strings.Builder
	for i, st := range f.Steps {
		step := flowsvg.Step{Text: st.Text, Depth: st.Depth}
		if n, sec, ok := b.explainingSection(st.Text); ok {
			target := noteURL(n) + "#" + sec.ID
			step.Href = flowsvg.RelativeURL(u, target)
			name := sectionPath(n, sec)
			step.Hint = n.Title + ": " + name
			fmt.Fprintf(&list, "%d. %s: explained in [%s](%s)\n", i+1, st.Text, name, target)
		} else {
			fmt.Fprintf(&list, "%d. %s\n", i+1, st.Text)
		}
		steps = append(steps, step)
	}
	body.WriteString(flowsvg.Draw("flow-"+f.Slug, f.Name, steps))
	body.WriteString("\n\n## Steps\n\n")
	body.WriteString(list.String())
	return &sitetree.Page{URL: u, Title: f.Name, Description: b.text.Card.FlowDescription.Fill("title", f.Name),
		Body: body.String(), File: c.Path, Line: f.Line, Params: cardParams(c, "Key Data Flow")}
}

// explainingSection finds the note section that explains a chain step: the
// section whose own text mentions the step's name most often. Sections that
// only check the card's wording, and overview sections, do not count.
func (b *builder) explainingSection(step string) (*notes.Note, notes.Section, bool) {
	term := stepTerm(step)
	if term == "" {
		return nil, notes.Section{}, false
	}
	// The deep dives the card references explain its chains; other notes
	// (hardware, troubleshooting) only when those say nothing.
	referenced := map[string]bool{}
	for _, c := range b.cards {
		for _, s := range c.Subsystems() {
			for _, r := range s.Notes {
				referenced[r.Name] = true
			}
		}
	}
	for _, pass := range []bool{true, false} {
		if n, sec, ok := b.bestSection(term, func(n *notes.Note) bool { return referenced[n.Name] == pass }); ok {
			return n, sec, true
		}
	}
	return nil, notes.Section{}, false
}

// bestSection returns the section, among notes accepted by keep, whose own
// text mentions term most often.
func (b *builder) bestSection(term string, keep func(*notes.Note) bool) (*notes.Note, notes.Section, bool) {
	var bestN *notes.Note
	var best notes.Section
	bestCount := 0
	for _, n := range b.notes {
		if !keep(n) {
			continue
		}
		for i, sec := range n.Sections {
			if strings.HasPrefix(sec.Title, "Checking") || sec.ID == "call-path" {
				continue
			}
			end := sec.End
			if i+1 < len(n.Sections) && n.Sections[i+1].Start < end {
				end = n.Sections[i+1].Start
			}
			own := strings.ToLower(n.Body[sec.Start:end])
			if k := strings.Count(own, term); k > bestCount {
				bestN, best, bestCount = n, sec, k
			}
		}
	}
	return bestN, best, bestN != nil
}

// sectionPath names a section with its parent: "DDP Reducer › How it works".
func sectionPath(n *notes.Note, sec notes.Section) string {
	if sec.Level == 2 {
		return sec.Title
	}
	parent := ""
	for _, s := range n.Sections {
		if s.Start >= sec.Start {
			break
		}
		if s.Level == 2 {
			parent = s.Title
		}
	}
	if parent == "" {
		return sec.Title
	}
	return parent + " › " + sec.Title
}

// stepTerm is what a chain step is searched by: its first identifier-like
// word if it has one (autograd_hook, ncclAllReduce(input,...)), else the
// whole step, lower-cased.
func stepTerm(step string) string {
	s := strings.ToLower(strings.TrimSpace(step))
	if i := strings.IndexAny(s, "(="); i > 0 {
		s = strings.TrimSpace(s[:i])
	}
	return s
}

// notePages adds one page per note and returns their navigation entries.
func (b *builder) notePages() []sitetree.NavItem {
	var items []sitetree.NavItem
	for i, n := range b.notes {
		u := noteURL(n)
		b.add(&sitetree.Page{URL: u, Title: n.Title, Description: n.Description, Weight: i + 1, Body: n.Body,
			File: n.Path, Line: n.BodyLine, Params: map[string]any{"layer": n.Layer, "toc": true, "log": n.Log}})
		items = append(items, sitetree.NavItem{Title: n.Title, URL: u})
	}
	return items
}

// checkNoteRefs reports every card notes reference that resolves to no note.
func (b *builder) checkNoteRefs() []Problem {
	var out []Problem
	for _, c := range b.cards {
		for _, s := range c.Subsystems() {
			for _, ref := range s.Notes {
				if b.noteByName[ref.Name] == nil {
					out = append(out, Problem{File: c.Path, Line: ref.Line,
						Msg: fmt.Sprintf("notes reference %q resolves to no note (expected content/notes/%s.md)", ref.Path, ref.Name)})
				}
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	return out
}
