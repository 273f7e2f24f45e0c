// Package citecheck checks that a permalink points at the lines that hold
// what it is cited for. A sentence of a note, a table cell or a correction
// names identifiers (functions, macros, structs, members, environment
// variables); the permalink it carries must open a line range that overlaps
// the definition of one of them (from the pinned trees' symbol indexes) or
// the line where the environment table says a variable is read. A range
// longer than MaxLines is accepted only for a whole definition that the
// text names, or a whole file.
package citecheck

import (
	"regexp"
	"strings"
	"unicode"
)

// Citation is one link found in Markdown, with the words it is cited for.
type Citation struct {
	// Line is the 1-based line of the link in the source text.
	Line int
	// URL is the link destination.
	URL string
	// Text is the link text as written (Markdown, backticks included).
	Text string
	// Sentence is the sentence (or table cell) that holds the link.
	Sentence string
	// Siblings are the other links of the same sentence: a name the
	// sentence gives is cited by the sibling that names or opens it.
	Siblings []Link
	// First marks the first link of its sentence, so that a check of the
	// sentence as a whole (CheckLibrary) reports once.
	First bool
}

// Link is a link's text and destination.
type Link struct{ Text, URL string }

var linkRE = regexp.MustCompile(`\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\((https?://[^)\s]+)\)`)

// unit is a piece of text read as one: a paragraph, a list item, a table
// cell or a heading, with the line each of its bytes came from.
type unit struct {
	text  strings.Builder
	lines []int
}

func (u *unit) add(s string, line int) {
	if u.text.Len() > 0 {
		u.text.WriteByte(' ')
		u.lines = append(u.lines, line)
	}
	u.text.WriteString(s)
	for range len(s) {
		u.lines = append(u.lines, line)
	}
}

// Extract returns every link of a Markdown text with its sentence. Fenced
// code blocks and front matter are skipped; table rows are split into
// cells, paragraphs and list items into sentences. firstLine is the file
// line of src's first line.
func Extract(src string, firstLine int) []Citation {
	var out []Citation
	var cur *unit
	flush := func() {
		if cur != nil {
			out = append(out, cur.citations()...)
			cur = nil
		}
	}
	lines := strings.Split(src, "\n")
	inFence, inFront := false, false
	for i, raw := range lines {
		line := firstLine + i
		t := strings.TrimSpace(raw)
		if i == 0 && t == "---" {
			inFront = true
			continue
		}
		if inFront {
			if t == "---" {
				inFront = false
			}
			continue
		}
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			flush()
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		switch {
		case t == "":
			flush()
		case strings.HasPrefix(t, "|"):
			flush()
			for _, cell := range splitCells(t) {
				u := &unit{}
				u.add(cell, line)
				out = append(out, u.citations()...)
			}
		case strings.HasPrefix(t, "#"):
			flush()
			u := &unit{}
			u.add(t, line)
			out = append(out, u.citations()...)
		default:
			if isItemStart(t) {
				flush()
			}
			if cur == nil {
				cur = &unit{}
			}
			cur.add(t, line)
		}
	}
	flush()
	return out
}

// splitCells splits a table row at the pipes outside code spans.
func splitCells(row string) []string {
	var cells []string
	var b strings.Builder
	code := false
	for i := 0; i < len(row); i++ {
		c := row[i]
		switch {
		case c == '`':
			code = !code
		case c == '\\' && i+1 < len(row) && row[i+1] == '|':
			b.WriteByte('|')
			i++
			continue
		case c == '|' && !code:
			if s := strings.TrimSpace(b.String()); s != "" {
				cells = append(cells, s)
			}
			b.Reset()
			continue
		}
		b.WriteByte(c)
	}
	if s := strings.TrimSpace(b.String()); s != "" {
		cells = append(cells, s)
	}
	return cells
}

func isItemStart(t string) bool {
	if strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "* ") || strings.HasPrefix(t, "> ") {
		return true
	}
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	return i > 0 && i+1 < len(t) && (t[i] == '.' || t[i] == ')') && t[i+1] == ' '
}

func (u *unit) citations() []Citation {
	s := u.text.String()
	var out []Citation
	for _, sent := range sentences(s) {
		ms := linkRE.FindAllStringSubmatchIndex(s[sent[0]:sent[1]], -1)
		links := make([]Link, len(ms))
		for i, m := range ms {
			links[i] = Link{Text: s[sent[0]+m[2] : sent[0]+m[3]], URL: s[sent[0]+m[4] : sent[0]+m[5]]}
		}
		for i, m := range ms {
			out = append(out, Citation{
				Line:     u.lines[sent[0]+m[0]],
				Text:     links[i].Text,
				URL:      links[i].URL,
				Sentence: s[sent[0]:sent[1]],
				Siblings: Siblings(links, i),
				First:    i == 0,
			})
		}
	}
	return out
}

// Siblings returns every link of links but the i-th.
func Siblings(links []Link, i int) []Link {
	out := make([]Link, 0, len(links)-1)
	out = append(out, links[:i]...)
	return append(out, links[i+1:]...)
}

// sentences returns the byte ranges of the sentences of s: a sentence ends
// at '.', '!', '?' or ';' followed by a space and a capital letter, a
// backtick, a bracket or a parenthesis, outside code spans and links.
func sentences(s string) [][2]int {
	var out [][2]int
	start, depth, code := 0, 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '`':
			code = !code
		case code:
		case c == '[' || c == '(':
			depth++
		case c == ']' || c == ')':
			if depth > 0 {
				depth--
			}
		case depth == 0 && (c == '.' || c == '!' || c == '?' || c == ';') && i+2 < len(s) && s[i+1] == ' ':
			n := rune(s[i+2])
			if unicode.IsUpper(n) || n == '`' || n == '[' || n == '(' || n == '*' {
				out = append(out, [2]int{start, i + 1})
				start = i + 2
			}
		}
	}
	if start < len(s) {
		out = append(out, [2]int{start, len(s)})
	}
	return out
}

var (
	codeRE    = regexp.MustCompile("`([^`]+)`")
	identRE   = regexp.MustCompile(`~?[A-Za-z_][A-Za-z0-9_]*`)
	envRE     = regexp.MustCompile(`\b(?:NCCL|TORCH|TORCHELASTIC|PET|CUDA|FSDP|DDP)_[A-Z0-9_]+\b`)
	fileRE    = regexp.MustCompile(`^[\w.\-/]*\.(?:h|hpp|cc|cpp|cu|cuh|c|py|md|rst|txt|yaml|json|xml|sh)(?::[\d\-L]+)?[,.;:)]*$`)
	linkURLRE = regexp.MustCompile(`\]\([^)]*\)|https?://\S+`)
	stdRE     = regexp.MustCompile(`\bstd::[A-Za-z_][A-Za-z0-9_:]*`)
	pathRE    = regexp.MustCompile(`^[A-Za-z_.][\w.\-]*(?:/[A-Za-z_][\w.\-]*)+/?$`)
)

// isPath reports whether a word of a code span is a file or directory
// path (src/init.cc, torch/distributed/, prims_ll.h), which names no
// identifier.
func isPath(w string) bool { return fileRE.MatchString(w) || pathRE.MatchString(w) }

// Identifiers returns the names a piece of Markdown (or plain text such as
// a correction) cites: every identifier inside a code span, and every
// word outside code spans that is shaped like code (an underscore or an
// inner capital: ncclTopoCompute, NCCL_P2P_LEVEL, stashed_for_allocator_safety_).
// File paths, command-line options and std:: names name nothing; link
// destinations are skipped. Names are returned once each, in order.
func Identifiers(md string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(w string) {
		if len(w) >= 3 && !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	for _, m := range codeRE.FindAllStringSubmatch(md, -1) {
		for _, word := range strings.Fields(m[1]) {
			if isPath(word) || strings.HasPrefix(word, "-") {
				continue
			}
			for _, w := range identRE.FindAllString(stdRE.ReplaceAllString(word, " "), -1) {
				add(w)
			}
		}
	}
	plain := linkURLRE.ReplaceAllString(codeRE.ReplaceAllString(md, " "), " ")
	for _, w := range envRE.FindAllString(plain, -1) {
		add(w)
	}
	for _, word := range strings.Fields(plain) {
		if isPath(strings.Trim(word, "()[],;:.")) {
			continue
		}
		for _, w := range identRE.FindAllString(stdRE.ReplaceAllString(word, " "), -1) {
			if isIdentifierShaped(w) {
				add(w)
			}
		}
	}
	return out
}

// isIdentifierShaped is true for words that look like code rather than
// English: an underscore, or a lower-case letter followed by a capital
// (camelCase). Acronyms such as PHB or NVLink are not.
func isIdentifierShaped(w string) bool {
	if strings.Contains(w, "_") {
		return true
	}
	prevLower := false
	for _, r := range w {
		if prevLower && unicode.IsUpper(r) {
			return true
		}
		prevLower = unicode.IsLower(r)
	}
	return false
}
