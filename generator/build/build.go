// Package build turns the project's sources (content/ and data/) into the
// Hugo tree under site/: it loads every skill card and note, assembles the
// pages and the navigation in reading order, checks references, and writes
// the tree atomically.
package build

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/distributed-nav/distributed-nav/generator/crosslink"
	"github.com/distributed-nav/distributed-nav/generator/notes"
	"github.com/distributed-nav/distributed-nav/generator/searchdb"
	"github.com/distributed-nav/distributed-nav/generator/sitetext"
	"github.com/distributed-nav/distributed-nav/generator/sitetree"
	"github.com/distributed-nav/distributed-nav/generator/skill"
)

// Options locate the inputs and the output.
type Options struct {
	// Root is the repository root holding content/ and data/.
	Root string
	// SiteDir is the Hugo project directory written into (site/).
	SiteDir string
	// ExtraURLs are URL prefixes served by the site that are not pages the
	// generator writes (for example static files); links to them are valid.
	ExtraURLs []string
}

// Problem is a located finding of a check.
type Problem struct {
	File string
	Line int
	Msg  string
}

// String formats the problem as "file:line: message".
func (p Problem) String() string { return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg) }

// Problems is a list of findings that fail a build.
type Problems []Problem

// Error lists every problem, one per line.
func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

type builder struct {
	opts       Options
	cards      []*skill.Card
	notes      []*notes.Note
	noteByName map[string]*notes.Note
	// prose are the pages of content/pages/ other than the home page.
	prose []*notes.Note
	// text is the prose of the pages the builder assembles (content/site.yaml).
	text  *sitetext.Texts
	facts *facts
	pages []*sitetree.Page
	// correctionPage maps a correction id to the URL of the card page that
	// shows it.
	correctionPage map[string]string
	// mentioned holds the source symbols and files the pages link to.
	mentioned map[string]crosslink.Target
	// mentionedOn holds, per symbol or file, the URLs of the pages naming it.
	mentionedOn map[string]map[string]bool
	// records are the search rows of the assembled site.
	records []searchdb.Record
}

func (b *builder) add(p *sitetree.Page) { b.pages = append(b.pages, p) }

// page returns the page with the URL u, or nil.
func (b *builder) page(u string) *sitetree.Page {
	for _, p := range b.pages {
		if p.URL == u {
			return p
		}
	}
	return nil
}

// rel makes a path relative to the repository root for messages.
func (b *builder) rel(p string) string {
	if r, err := filepath.Rel(b.opts.Root, p); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return p
}

// Load reads every card and note under opts.Root.
func Load(opts Options) (*builder, error) {
	b := &builder{opts: opts, noteByName: map[string]*notes.Note{}}
	cards, err := filepath.Glob(filepath.Join(opts.Root, "content", "skills", "*", "SKILL.md"))
	if err != nil {
		return nil, fmt.Errorf("list skill cards: %w", err)
	}
	sort.Strings(cards)
	if len(cards) == 0 {
		return nil, fmt.Errorf("no skill cards under %s", filepath.Join(opts.Root, "content", "skills"))
	}
	for _, p := range cards {
		src, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("read skill card: %w", err)
		}
		c, err := skill.Parse(b.rel(p), src)
		if err != nil {
			return nil, err
		}
		b.cards = append(b.cards, c)
	}
	ns, err := notes.LoadDir(filepath.Join(opts.Root, "content", "notes"))
	if err != nil {
		return nil, err
	}
	for _, n := range ns {
		n.Path = b.rel(n.Path)
		b.noteByName[n.Name] = n
	}
	b.notes = ns
	if b.text, err = sitetext.Load(opts.Root); err != nil {
		return nil, err
	}
	if b.prose, err = loadProsePages(opts.Root); err != nil {
		return nil, err
	}
	for _, n := range b.prose {
		n.Path = b.rel(n.Path)
	}
	if b.facts, err = loadFacts(opts.Root); err != nil {
		return nil, err
	}
	return b, nil
}

// Check runs every source check: notes references, unknown environment
// variables, permalinks, note sections without a source link, corrections
// that cannot be placed. It assembles the pages to do so but writes nothing.
func (b *builder) Check() Problems {
	ps := b.checkNoteRefs()
	ps = append(ps, b.checkCitations()...)
	if _, more := b.assemble(); len(more) > 0 {
		ps = append(ps, more...)
	}
	return ps
}

// Tree assembles the pages and navigation; any problem fails it.
func (b *builder) Tree() (*sitetree.Tree, error) {
	t, ps := b.assemble()
	if len(ps) > 0 {
		return nil, ps
	}
	return t, nil
}

func (b *builder) assemble() (*sitetree.Tree, Problems) {
	b.pages = nil
	b.correctionPage = map[string]string{}
	b.mentioned = map[string]crosslink.Target{}
	b.mentionedOn = map[string]map[string]bool{}
	var ps Problems
	t := &sitetree.Tree{}
	home, err := b.homePage()
	if err != nil {
		return nil, Problems{{File: "content/pages/home.md", Line: 1, Msg: err.Error()}}
	}
	b.add(home)
	t.Nav = append(t.Nav, sitetree.NavItem{Title: string(b.text.StartHere), URL: "/"})
	for i, c := range b.cards {
		t.Nav = append(t.Nav, b.cardPages(c, 10+i))
		ps = append(ps, b.applyCorrections(c)...)
	}
	if noteItems := b.notePages(); len(noteItems) > 0 {
		b.add(&sitetree.Page{URL: "/notes/", Section: true, Title: string(b.text.Notes.Title), Weight: 50,
			Description: string(b.text.Notes.Description), Body: notesIndex(b.notes), File: sitetext.Path, Line: 1})
		t.Nav = append(t.Nav, sitetree.NavItem{Title: string(b.text.Notes.Title), URL: "/notes/", Children: noteItems})
	}
	pgItems, err := b.playgroundPages(context.Background())
	if err != nil {
		return nil, append(ps, Problem{File: "playground", Line: 1, Msg: err.Error()})
	}
	t.Nav = append(t.Nav, sitetree.NavItem{Title: string(b.text.Playground.Title), URL: "/playground/", Children: pgItems})
	b.add(b.envPage())
	t.Nav = append(t.Nav, sitetree.NavItem{Title: string(b.text.Env.Title), URL: envURL})
	b.add(b.correctionsPage())
	t.Nav = append(t.Nav, sitetree.NavItem{Title: string(b.text.Corrections.Title), URL: "/corrections/"})
	ps = append(ps, b.addProsePages(t.Nav)...)
	ps = append(ps, b.link()...)
	ps = append(ps, b.checkNoteSources()...)
	b.add(b.sourcesPage())
	t.Nav = append(t.Nav, sitetree.NavItem{Title: string(b.text.Sources.Title), URL: sourcesURL})
	b.records = b.searchRecords(b.mentioned)
	var extra []azEntry
	for _, n := range b.notes {
		for _, sec := range n.Sections {
			extra = append(extra, azEntry{Title: sec.Title, URL: noteURL(n) + "#" + sec.ID, Where: n.Title})
		}
	}
	for _, r := range b.facts.env {
		extra = append(extra, azEntry{Title: r.Name, URL: envURL + "#" + r.Anchor(), Where: "environment variable"})
	}
	b.add(azPage(b.text.AZ, b.pages, extra))
	t.Nav = append(t.Nav, sitetree.NavItem{Title: string(b.text.AZ.Title), URL: "/az/"})
	t.Pages = b.pages
	t.LinkPrevNext()
	css, err := chromaCSS()
	if err != nil {
		return nil, append(ps, Problem{File: "site", Line: 1, Msg: err.Error()})
	}
	spec, err := searchdb.BrowserModule()
	if err != nil {
		return nil, append(ps, Problem{File: "generator/searchdb", Line: 1, Msg: err.Error()})
	}
	consts, err := playgroundConstants()
	if err != nil {
		return nil, append(ps, Problem{File: "site", Line: 1, Msg: err.Error()})
	}
	// Tree.Assets are written under site/assets/gen/.
	t.Assets = map[string][]byte{"chroma.css": css, strings.TrimPrefix(searchdb.ModulePath, "gen/"): spec, "playground/constants.js": consts}
	chapters := b.handbook(t.Nav)
	t.Data = map[string]any{"handbook": chapters, "handbook_live": outsideHandbook(b.pages, chapters)}
	return t, ps
}

func notesIndex(ns []*notes.Note) string {
	var s strings.Builder
	for _, n := range ns {
		fmt.Fprintf(&s, "- [%s](%s): %s\n", n.Title, noteURL(n), n.Description)
	}
	return s.String()
}

// homePage reads content/pages/home.md, the site's front page prose.
func (b *builder) homePage() (*sitetree.Page, error) {
	p := filepath.Join(b.opts.Root, "content", "pages", "home.md")
	src, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("read home page: %w", err)
	}
	n, err := notes.Parse(b.rel(p), src)
	if err != nil {
		return nil, err
	}
	return &sitetree.Page{URL: "/", Section: true, Title: n.Title, Description: n.Description, Body: n.Body,
		File: n.Path, Line: n.BodyLine}, nil
}

// loadProsePages reads content/pages/*.md except home.md: pages of prose published at the
// URL their front matter names.
func loadProsePages(root string) ([]*notes.Note, error) {
	ns, err := notes.LoadDir(filepath.Join(root, "content", "pages"))
	if err != nil {
		return nil, err
	}
	var out []*notes.Note
	for _, n := range ns {
		if n.Name != "home" {
			out = append(out, n)
		}
	}
	return out, nil
}

// addProsePages adds the pages of content/pages/ at their URLs, each listed in the
// navigation under the entry its front matter names as parent (at the top level without
// one).
func (b *builder) addProsePages(nav []sitetree.NavItem) Problems {
	var ps Problems
	for _, n := range b.prose {
		u := n.URL
		if !strings.HasPrefix(u, "/") || !strings.HasSuffix(u, "/") || u == "/" {
			ps = append(ps, Problem{n.Path, 2, fmt.Sprintf("front matter: url %q must start and end with / and name a page other than the home page", u)})
			continue
		}
		if b.page(u) != nil {
			ps = append(ps, Problem{n.Path, 2, fmt.Sprintf("front matter: url %s is already a page of the site", u)})
			continue
		}
		b.add(&sitetree.Page{URL: u, Title: n.Title, Description: n.Description, Weight: n.Weight, Body: n.Body,
			File: n.Path, Line: n.BodyLine})
		if n.Parent == "" {
			continue
		}
		if !appendNavChild(nav, n.Parent, sitetree.NavItem{Title: n.Title, URL: u}) {
			ps = append(ps, Problem{n.Path, 2, fmt.Sprintf("front matter: parent %s is no entry of the navigation", n.Parent)})
		}
	}
	return ps
}

// appendNavChild adds child under the entry with URL parent, searching the tree; it
// reports whether it found one.
func appendNavChild(items []sitetree.NavItem, parent string, child sitetree.NavItem) bool {
	for i := range items {
		if items[i].URL == parent {
			items[i].Children = append(items[i].Children, child)
			return true
		}
		if appendNavChild(items[i].Children, parent, child) {
			return true
		}
	}
	return false
}

// Run loads, checks, assembles and writes the site tree. On any problem it
// returns an error and leaves the previous tree in place.
func Run(ctx context.Context, opts Options) error {
	b, err := Load(opts)
	if err != nil {
		return err
	}
	if ps := b.Check(); len(ps) > 0 {
		return ps
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	t, err := b.Tree()
	if err != nil {
		return err
	}
	if err := t.Write(opts.SiteDir); err != nil {
		return fmt.Errorf("write site tree: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(opts.SiteDir, "static"), 0o755); err != nil {
		return fmt.Errorf("write search database: %w", err)
	}
	if err := searchdb.Build(ctx, filepath.Join(opts.SiteDir, "static", "search.db"), b.records); err != nil {
		return fmt.Errorf("write search database: %w", err)
	}
	return nil
}

// IsProblems reports whether err is a list of located problems.
func IsProblems(err error) bool {
	var ps Problems
	return errors.As(err, &ps)
}
