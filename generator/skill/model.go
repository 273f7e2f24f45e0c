// Package skill parses a skill card (content/skills/<name>/SKILL.md) into a
// typed model: its front matter, its top-level sections, the numbered
// subsystem index, the data-flow chains and the tables.
//
// The parser walks goldmark's AST; it never matches regular expressions over
// the Markdown text. Section roles are recognised by their shape (numbered
// third-level headings with "Label: value" bullets form a subsystem index,
// third-level headings each followed by one fenced block form data flows),
// never by their titles, so a different card produces its own model.
package skill

import "fmt"

// Card is one parsed SKILL.md.
type Card struct {
	// Path is the file the card was read from, as given to Parse.
	Path string
	// Name, Description and Triggers come from the YAML front matter.
	Name        string
	Description string
	Triggers    []string
	// Title is the text of the optional level-1 heading.
	Title string
	// Sections are the level-2 sections in document order.
	Sections []*Section
}

// SectionKind is the role of a level-2 section, recognised from its shape.
type SectionKind int

// Section kinds.
const (
	// KindProse is a section of paragraphs, lists, tables and code blocks
	// without subsections.
	KindProse SectionKind = iota
	// KindIndex is a numbered subsystem index: every subsection heading is
	// "N. Name" and holds a list of "Label: value" bullets.
	KindIndex
	// KindFlows is a set of data-flow chains: every subsection holds one
	// fenced code block.
	KindFlows
)

// String names the kind.
func (k SectionKind) String() string {
	switch k {
	case KindProse:
		return "prose"
	case KindIndex:
		return "subsystem-index"
	case KindFlows:
		return "data-flows"
	}
	return fmt.Sprintf("SectionKind(%d)", int(k))
}

// Section is a level-2 section of the card.
type Section struct {
	Title string
	Slug  string
	Kind  SectionKind
	// Line is the 1-based line of the heading in the file.
	Line int
	// Source is the section's Markdown body (without its heading), exactly
	// as written in the card.
	Source string
	// SourceLine is the 1-based line where Source starts.
	SourceLine int
	// Subsystems is set for KindIndex sections.
	Subsystems []*Subsystem
	// Flows is set for KindFlows sections.
	Flows []*Flow
	// Tables holds every table in a prose section.
	Tables []*Table
}

// Subsystem is one entry of a numbered subsystem index.
type Subsystem struct {
	Number int
	// Name is the heading text after "N. ", including any parenthesised
	// part, exactly as the card writes it.
	Name string
	// ShortName is Name without a trailing size hint in parentheses.
	ShortName string
	// SizeHint is the parenthesised size hint ("~3500+ lines C++"), if the
	// parenthesised part mentions lines; empty otherwise.
	SizeHint string
	Slug     string
	Line     int
	// Files, Notes and Key are the values of the "File", "Notes" and "Key"
	// bullets. Files and Key are split on the card's separators ("+" and
	// ","), respecting parentheses.
	Files []string
	Notes []NoteRef
	Key   []string
	// FileText and KeyText are the bullet values exactly as written.
	FileText string
	KeyText  string
	// Fields holds every bullet label and value in order, including
	// labels the model does not interpret.
	Fields []Field
}

// Field is one "Label: value" bullet of a subsystem entry.
type Field struct {
	Label, Value string
	Line         int
}

// NoteRef is a reference from a subsystem to a deep-dive note.
type NoteRef struct {
	// Path is the path as written in the card.
	Path string
	// Name is the file name without directory and extension; notes are
	// resolved by this name.
	Name string
	Line int
}

// Flow is one data-flow chain.
type Flow struct {
	Name string
	Slug string
	Line int
	// Text is the fenced block's content as written.
	Text string
	// Steps are the chain's steps in order: the text split on "→" arrows,
	// trimmed, one entry per step.
	Steps []Step
}

// Step is one step of a data-flow chain.
type Step struct {
	Text string
	// Depth is 0 for steps on the chain's first line and 1 for steps on
	// indented continuation lines.
	Depth int
}

// Table is a Markdown table.
type Table struct {
	Line   int
	Header []string
	Rows   [][]string
}

// Subsystems returns every subsystem of the card in index order.
func (c *Card) Subsystems() []*Subsystem {
	var out []*Subsystem
	for _, s := range c.Sections {
		out = append(out, s.Subsystems...)
	}
	return out
}

// Flows returns every data flow of the card in order.
func (c *Card) Flows() []*Flow {
	var out []*Flow
	for _, s := range c.Sections {
		out = append(out, s.Flows...)
	}
	return out
}
