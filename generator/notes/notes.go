// Package notes loads the hand-written deep-dive notes (content/notes/*.md):
// their front matter, their Markdown body and the outline of their headings,
// including the goldmark heading attributes that tie a section to a card
// subsystem (`## Title {#id subsystem="Card Subsystem Name"}`).
package notes

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
	yaml "go.yaml.in/yaml/v3"

	"github.com/distributed-nav/distributed-nav/generator/markdown"
	"github.com/distributed-nav/distributed-nav/generator/slug"
)

// Note is one deep-dive note.
type Note struct {
	// Name is the file name without ".md"; card references resolve by it.
	Name string
	// Path is the file the note was read from.
	Path        string
	Title       string
	Description string
	Weight      int
	// Layer groups notes in the navigation ("pytorch", "nccl", ...).
	Layer string
	// CardSections names top-level card sections the whole note explains
	// (front matter card_sections).
	CardSections []string
	// Log marks a note about the project's own work (front matter log:
	// true, the review log): the search ranks its sections below the notes
	// about the subjects it mentions.
	Log bool
	// URL and Parent place a page of content/pages/ (front matter url and
	// parent): the site URL it is published at and the navigation entry it is
	// listed under. Notes leave them empty.
	URL, Parent string
	// Body is the Markdown after the front matter.
	Body string
	// BodyLine is the 1-based file line where Body starts.
	BodyLine int
	// Sections are the level-2 and level-3 headings in order.
	Sections []Section
}

// Section is a heading of a note.
type Section struct {
	Level int
	Title string
	// ID is the heading's anchor: its {#id} attribute, or the slug of its
	// title as Hugo would make it.
	ID string
	// Subsystem is the card subsystem this section explains, from the
	// heading's subsystem="..." attribute; empty for other sections.
	Subsystem string
	// CardSection is the top-level card section this section explains,
	// from the heading's section="..." attribute.
	CardSection string
	// Line is the 1-based file line of the heading.
	Line int
	// Start and End delimit the section's Markdown (heading included) in
	// Body, up to the next heading of the same or a higher level.
	Start, End int
}

type frontMatter struct {
	Title       string `yaml:"title"`
	Description string `yaml:"description"`
	Weight      int    `yaml:"weight"`
	Layer       string `yaml:"layer"`
	// CardSections lists card sections the whole note explains.
	CardSections []string `yaml:"card_sections"`
	Log          bool     `yaml:"log"`
	URL          string   `yaml:"url"`
	Parent       string   `yaml:"parent"`
}

// LoadDir loads every *.md file in dir, sorted by weight then name. A
// missing directory yields no notes.
func LoadDir(dir string) ([]*Note, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		return nil, fmt.Errorf("list notes: %w", err)
	}
	var out []*Note
	for _, p := range paths {
		src, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("read note: %w", err)
		}
		n, err := Parse(p, src)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Weight != out[j].Weight {
			return out[i].Weight < out[j].Weight
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// Parse parses one note; p names it in errors ("path:line: message").
func Parse(p string, src []byte) (*Note, error) {
	name := strings.TrimSuffix(filepath.Base(p), filepath.Ext(p))
	n := &Note{Name: name, Path: p}
	body := src
	n.BodyLine = 1
	if bytes.HasPrefix(src, []byte("---\n")) {
		rest := src[4:]
		end := bytes.Index(rest, []byte("\n---\n"))
		if end < 0 {
			return nil, fmt.Errorf("%s:1: front matter is not closed by a line \"---\"", p)
		}
		var fm frontMatter
		if err := yaml.Unmarshal(rest[:end+1], &fm); err != nil {
			return nil, fmt.Errorf("%s:2: front matter: %v", p, err)
		}
		n.Title, n.Description, n.Weight, n.Layer, n.CardSections = fm.Title, fm.Description, fm.Weight, fm.Layer, fm.CardSections
		n.Log = fm.Log
		n.URL, n.Parent = fm.URL, fm.Parent
		body = rest[end+5:]
		n.BodyLine = bytes.Count(src[:len(src)-len(body)], []byte("\n")) + 1
	}
	if strings.TrimSpace(n.Title) == "" {
		return nil, fmt.Errorf("%s:1: front matter: \"title\" is missing", p)
	}
	n.Body = string(body)
	doc := markdown.New().Parser().Parse(text.NewReader(body))
	ids := map[string]int{}
	for c := doc.FirstChild(); c != nil; c = c.NextSibling() {
		h, ok := c.(*ast.Heading)
		if !ok {
			continue
		}
		line := n.BodyLine + bytes.Count(body[:headingOffset(h, body)], []byte("\n"))
		if h.Level == 1 {
			return nil, fmt.Errorf("%s:%d: notes start at level 2; the title comes from the front matter", p, line)
		}
		if h.Level > 3 {
			continue
		}
		s := Section{Level: h.Level, Title: headingText(h, body), Line: line, Start: lineStart(body, headingOffset(h, body))}
		if v, ok := h.AttributeString("id"); ok {
			s.ID = string(asBytes(v))
		}
		if s.ID == "" {
			s.ID = slug.Make(s.Title)
		}
		if v, ok := h.AttributeString("subsystem"); ok {
			s.Subsystem = string(asBytes(v))
		}
		if v, ok := h.AttributeString("section"); ok {
			s.CardSection = string(asBytes(v))
		}
		if prev, dup := ids[s.ID]; dup {
			return nil, fmt.Errorf("%s:%d: heading id %q repeats the heading at line %d", p, line, s.ID, prev)
		}
		ids[s.ID] = line
		n.Sections = append(n.Sections, s)
	}
	for i := range n.Sections {
		n.Sections[i].End = len(body)
		for j := i + 1; j < len(n.Sections); j++ {
			if n.Sections[j].Level <= n.Sections[i].Level {
				n.Sections[i].End = n.Sections[j].Start
				break
			}
		}
	}
	return n, nil
}

// SectionFor returns the section explaining the named card subsystem.
func (n *Note) SectionFor(subsystem string) (Section, bool) {
	for _, s := range n.Sections {
		if s.Subsystem == subsystem {
			return s, true
		}
	}
	return Section{}, false
}

func asBytes(v any) []byte {
	switch t := v.(type) {
	case []byte:
		return t
	case string:
		return []byte(t)
	}
	return []byte(fmt.Sprint(v))
}

func headingOffset(h *ast.Heading, src []byte) int {
	if h.Lines().Len() > 0 {
		return h.Lines().At(0).Start
	}
	return 0
}

func lineStart(src []byte, off int) int {
	return bytes.LastIndexByte(src[:off], '\n') + 1
}

func headingText(h *ast.Heading, src []byte) string {
	var b strings.Builder
	_ = ast.Walk(h, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if t, ok := c.(*ast.Text); ok && entering {
			b.Write(t.Segment.Value(src))
		}
		if s, ok := c.(*ast.String); ok && entering {
			b.Write(s.Value)
		}
		return ast.WalkContinue, nil
	})
	return strings.TrimSpace(b.String())
}
