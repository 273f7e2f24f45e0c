// Package corrections loads data/corrections.yaml, the places where a skill
// card disagrees with the pinned sources, and places each correction next to
// the card's own words on the page that shows them: the quoted words are
// marked in place (never changed) and a callout with the correct fact and its
// permalinks follows the block that holds them.
package corrections

import (
	"bytes"
	"fmt"
	"html"
	"os"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Correction is one entry of data/corrections.yaml.
type Correction struct {
	ID string `yaml:"id"`
	// Section is the card heading the claim sits under: a subsystem name or
	// a top-level section title, exactly as the card writes it.
	Section string `yaml:"section"`
	// Quote is an exact substring of the card.
	Quote string `yaml:"quote"`
	// Verdict is "false" or "partly".
	Verdict    string   `yaml:"verdict"`
	Correction string   `yaml:"correction"`
	Sources    []string `yaml:"sources"`
	// Line is the 1-based line of the entry in the YAML file.
	Line int `yaml:"-"`
}

// Load reads the corrections file. A missing file yields none.
func Load(p string) ([]Correction, error) {
	b, err := os.ReadFile(p)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read corrections: %w", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	var out []Correction
	if len(doc.Content) == 0 {
		return nil, nil
	}
	seq := doc.Content[0]
	if seq.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%s:%d: want a list of corrections", p, seq.Line)
	}
	seen := map[string]int{}
	for _, item := range seq.Content {
		var c Correction
		if err := item.Decode(&c); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", p, item.Line, err)
		}
		c.Line = item.Line
		switch {
		case c.ID == "" || c.Section == "" || c.Quote == "" || strings.TrimSpace(c.Correction) == "":
			return nil, fmt.Errorf("%s:%d: a correction needs id, section, quote and correction", p, c.Line)
		case c.Verdict != "false" && c.Verdict != "partly":
			return nil, fmt.Errorf("%s:%d: correction %s: verdict %q, want false or partly", p, c.Line, c.ID, c.Verdict)
		case len(c.Sources) == 0:
			return nil, fmt.Errorf("%s:%d: correction %s cites no source", p, c.Line, c.ID)
		}
		if prev, dup := seen[c.ID]; dup {
			return nil, fmt.Errorf("%s:%d: correction id %s repeats line %d", p, c.Line, c.ID, prev)
		}
		seen[c.ID] = c.Line
		out = append(out, c)
	}
	return out, nil
}

// Anchor is the id of the callout on the card's page.
func (c Correction) Anchor() string { return "correction-" + c.ID }

// VerdictLabel is the callout's heading word.
func (c Correction) VerdictLabel() string {
	if c.Verdict == "partly" {
		return "Partly right"
	}
	return "Wrong"
}

// Callout renders the correction as an HTML block (one line, so that it can
// sit inside a Markdown list item).
func (c Correction) Callout() string {
	var b strings.Builder
	fmt.Fprintf(&b, `<div class="correction" role="note" id="%s"><p><strong>Correction (%s):</strong> the card says “%s”. %s</p><p class="sources">Source: `,
		c.Anchor(), strings.ToLower(c.VerdictLabel()), html.EscapeString(c.Quote), inlineHTML(strings.TrimSpace(c.Correction)))
	for i, s := range c.Sources {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `<a href="%s">%s</a>`, html.EscapeString(s), html.EscapeString(ShortSource(s)))
	}
	b.WriteString("</p></div>")
	return b.String()
}

// ShortSource turns a permalink into "path#Lx-Ly" for display.
func ShortSource(u string) string {
	if i := strings.Index(u, "/blob/"); i >= 0 {
		rest := u[i+len("/blob/"):]
		if j := strings.Index(rest, "/"); j >= 0 {
			return rest[j+1:] + " @ " + rest[:j]
		}
	}
	return u
}

// inlineHTML escapes text and turns `code` spans into <code> elements.
func inlineHTML(s string) string {
	parts := strings.Split(s, "`")
	var b strings.Builder
	for i, p := range parts {
		if i%2 == 1 && i < len(parts)-1 {
			b.WriteString("<code>" + html.EscapeString(p) + "</code>")
			continue
		}
		if i%2 == 1 {
			b.WriteString("`")
		}
		b.WriteString(html.EscapeString(p))
	}
	return b.String()
}

// Apply marks each correction's quote in the Markdown body md and inserts
// its callout after the block holding it. It returns the new body and the
// corrections it could not place (their quote is not in md).
func Apply(md string, cs []Correction) (string, []Correction) {
	var missing []Correction
	for _, c := range cs {
		out, ok := applyOne(md, c)
		if !ok {
			missing = append(missing, c)
			continue
		}
		md = out
	}
	return md, missing
}

func applyOne(md string, c Correction) (string, bool) {
	src := []byte(md)
	i := bytes.Index(src, []byte(c.Quote))
	if i < 0 {
		return md, false
	}
	end := i + len(c.Quote)
	lineStart := bytes.LastIndexByte(src[:i], '\n') + 1
	inFence := fenceOpenAt(src[:i])
	var b strings.Builder
	switch {
	case inFence:
		// Inside a code block the words cannot be marked: the callout
		// follows the closing fence.
		closeAt := fenceCloseAfter(src, end)
		b.Write(src[:closeAt])
		b.WriteString("\n" + c.Callout() + "\n")
		b.Write(src[closeAt:])
	default:
		line := string(src[lineStart:i])
		trimmed := strings.TrimLeft(line, " ")
		indent := len(line) - len(trimmed)
		inList := strings.HasPrefix(trimmed, "- ") || strings.HasPrefix(trimmed, "* ") || isOrdered(trimmed)
		inTable := strings.HasPrefix(trimmed, "|")
		b.Write(src[:i])
		fmt.Fprintf(&b, `<mark class="corrected"><a href="#%s">%s</a></mark>`, c.Anchor(), c.Quote)
		rest := src[end:]
		var cut int
		switch {
		case inTable:
			cut = blockEnd(rest)
		default:
			cut = bytes.IndexByte(rest, '\n')
			if cut < 0 {
				cut = len(rest)
			}
			if !inList {
				cut = blockEnd(rest)
			}
		}
		b.Write(rest[:cut])
		switch {
		case inList:
			content := indent + listMarkerWidth(trimmed)
			b.WriteString("\n" + strings.Repeat(" ", content) + c.Callout())
		default:
			b.WriteString("\n\n" + c.Callout())
		}
		b.Write(rest[cut:])
	}
	return b.String(), true
}

func isOrdered(s string) bool {
	j := 0
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	return j > 0 && j+1 < len(s) && (s[j] == '.' || s[j] == ')') && s[j+1] == ' '
}

func listMarkerWidth(s string) int {
	if strings.HasPrefix(s, "- ") || strings.HasPrefix(s, "* ") {
		return 2
	}
	j := 0
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	return j + 2
}

// blockEnd returns the offset of the blank line ending the block at rest.
func blockEnd(rest []byte) int {
	if k := bytes.Index(rest, []byte("\n\n")); k >= 0 {
		return k
	}
	return len(bytes.TrimRight(rest, "\n"))
}

// fenceOpenAt reports whether a ``` fence is open at the end of prefix.
func fenceOpenAt(prefix []byte) bool {
	open := false
	for _, line := range bytes.Split(prefix, []byte("\n")) {
		if bytes.HasPrefix(bytes.TrimLeft(line, " "), []byte("```")) {
			open = !open
		}
	}
	return open
}

// fenceCloseAfter returns the offset just after the closing fence line that
// follows off.
func fenceCloseAfter(src []byte, off int) int {
	pos := off
	for pos < len(src) {
		nl := bytes.IndexByte(src[pos:], '\n')
		if nl < 0 {
			return len(src)
		}
		next := pos + nl + 1
		line := src[next:]
		if e := bytes.IndexByte(line, '\n'); e >= 0 {
			line = line[:e]
		}
		if bytes.HasPrefix(bytes.TrimLeft(line, " "), []byte("```")) {
			return next + len(line)
		}
		pos = next
	}
	return len(src)
}
