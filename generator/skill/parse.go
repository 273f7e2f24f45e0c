package skill

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
	yaml "go.yaml.in/yaml/v3"

	"github.com/distributed-nav/distributed-nav/generator/markdown"
	"github.com/distributed-nav/distributed-nav/generator/slug"
)

// Error is a problem found in a card, located at a line of its file.
type Error struct {
	Path string
	Line int
	Msg  string
}

// Error formats the problem as "path:line: message".
func (e *Error) Error() string {
	return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Msg)
}

// frontMatter is the YAML header of a SKILL.md.
type frontMatter struct {
	Name        string   `yaml:"name"`
	Description string   `yaml:"description"`
	Triggers    []string `yaml:"triggers"`
}

// ParseFile reads and parses the card at path.
func ParseFile(p string) (*Card, error) {
	src, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("read skill card: %w", err)
	}
	return Parse(p, src)
}

// Parse parses the card src; p names it in errors.
func Parse(p string, src []byte) (*Card, error) {
	fm, body, bodyLine, err := splitFrontMatter(p, src)
	if err != nil {
		return nil, err
	}
	c := &Card{Path: p, Name: fm.Name, Description: fm.Description, Triggers: fm.Triggers}
	pr := &parser{path: p, src: body, lineOffset: bodyLine - 1, lines: lineStarts(body)}
	doc := markdown.New().Parser().Parse(text.NewReader(body))
	if err := pr.card(doc, c); err != nil {
		return nil, err
	}
	return c, nil
}

func splitFrontMatter(p string, src []byte) (frontMatter, []byte, int, error) {
	var fm frontMatter
	if !bytes.HasPrefix(src, []byte("---\n")) && !bytes.HasPrefix(src, []byte("---\r\n")) {
		return fm, nil, 0, &Error{p, 1, "missing YAML front matter: the file must start with a line \"---\""}
	}
	rest := src[bytes.IndexByte(src, '\n')+1:]
	end := -1
	for off := 0; off < len(rest); {
		nl := bytes.IndexByte(rest[off:], '\n')
		line := rest[off:]
		if nl >= 0 {
			line = rest[off : off+nl]
		}
		if strings.TrimRight(string(line), "\r") == "---" {
			end = off
			break
		}
		if nl < 0 {
			break
		}
		off += nl + 1
	}
	if end < 0 {
		return fm, nil, 0, &Error{p, 1, "front matter is not closed by a line \"---\""}
	}
	yamlSrc := rest[:end]
	dec := yaml.NewDecoder(bytes.NewReader(yamlSrc))
	if err := dec.Decode(&fm); err != nil && !errors.Is(err, errEOF(err)) {
		return fm, nil, 0, &Error{p, yamlLine(err) + 1, "front matter: " + yamlMessage(err)}
	}
	if strings.TrimSpace(fm.Name) == "" {
		return fm, nil, 0, &Error{p, 1, "front matter: \"name\" is missing or empty"}
	}
	if strings.TrimSpace(fm.Description) == "" {
		return fm, nil, 0, &Error{p, 1, "front matter: \"description\" is missing or empty"}
	}
	for i, t := range fm.Triggers {
		if strings.TrimSpace(t) == "" {
			return fm, nil, 0, &Error{p, 1, fmt.Sprintf("front matter: trigger %d is empty", i+1)}
		}
	}
	closeLen := bytes.IndexByte(rest[end:], '\n')
	bodyStart := len(src) - len(rest) + end
	if closeLen < 0 {
		bodyStart = len(src)
	} else {
		bodyStart += closeLen + 1
	}
	bodyLine := bytes.Count(src[:bodyStart], []byte("\n")) + 1
	return fm, src[bodyStart:], bodyLine, nil
}

// errEOF returns err itself when it is the decoder's end-of-input error, so
// that an empty front matter is reported by the field checks instead.
func errEOF(err error) error {
	if err != nil && err.Error() == "EOF" {
		return err
	}
	return errors.New("not EOF")
}

// yamlLine extracts the 1-based line from a YAML error ("yaml: line 3: ...").
func yamlLine(err error) int {
	msg := err.Error()
	if i := strings.Index(msg, "line "); i >= 0 {
		rest := msg[i+5:]
		j := 0
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		if n, convErr := strconv.Atoi(rest[:j]); convErr == nil {
			return n
		}
	}
	return 1
}

func yamlMessage(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if i := strings.Index(msg, ": "); i >= 0 && strings.HasPrefix(msg, "line ") {
		return msg[i+2:]
	}
	return msg
}

type parser struct {
	path       string
	src        []byte
	lineOffset int
	lines      []int
	// last is the start of the latest top-level block seen, the best
	// location for nodes that carry no text of their own.
	last int
}

func lineStarts(src []byte) []int {
	starts := []int{0}
	for i, b := range src {
		if b == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// line returns the 1-based file line of byte offset off in the body.
func (p *parser) line(off int) int {
	off = p.clamp(off)
	lo, hi := 0, len(p.lines)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if p.lines[mid] <= off {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo + 1 + p.lineOffset
}

func (p *parser) errorf(off int, format string, args ...any) error {
	return &Error{p.path, p.line(off), fmt.Sprintf(format, args...)}
}

// nodeStart returns the byte offset where a block node's text starts.
func nodeStart(n ast.Node) int {
	if n.Type() == ast.TypeBlock && n.Lines().Len() > 0 {
		return n.Lines().At(0).Start
	}
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if s := nodeStart(c); s >= 0 {
			return s
		}
	}
	if t, ok := n.(*ast.Text); ok {
		return t.Segment.Start
	}
	return -1
}

// lineStartOf returns the offset of the beginning of the line containing off.
func (p *parser) lineStartOf(off int) int {
	off = p.clamp(off)
	return bytes.LastIndexByte(p.src[:off], '\n') + 1
}

// clamp keeps an offset inside the body; nodes without text (an empty
// heading) report -1.
func (p *parser) clamp(off int) int {
	if off < 0 {
		return p.last
	}
	if off > len(p.src) {
		return len(p.src)
	}
	return off
}

// inlineText concatenates the literal text of an inline subtree.
func inlineText(n ast.Node, src []byte) string {
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch t := c.(type) {
		case *ast.Text:
			b.Write(t.Segment.Value(src))
			if t.SoftLineBreak() || t.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(t.Value)
		}
		return ast.WalkContinue, nil
	})
	return strings.TrimSpace(b.String())
}

// rawLines returns a block's source lines joined, as written.
func rawLines(n ast.Node, src []byte) string {
	var b strings.Builder
	lines := n.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		b.Write(seg.Value(src))
	}
	return b.String()
}

func (p *parser) card(doc ast.Node, c *Card) error {
	var cur *Section
	var curNodes []ast.Node
	bodyStart := 0 // where the current section's body begins: the line after its heading
	flush := func(end int) error {
		if cur == nil {
			return nil
		}
		if err := p.section(cur, curNodes, bodyStart, end); err != nil {
			return err
		}
		c.Sections = append(c.Sections, cur)
		return nil
	}
	seenSlugs := map[string]int{}
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		if off := nodeStart(n); off >= 0 {
			p.last = off
		}
		h, isHeading := n.(*ast.Heading)
		switch {
		case isHeading && h.Level == 1:
			if c.Title != "" || cur != nil {
				return p.errorf(nodeStart(h), "a level-1 heading may only open the card")
			}
			c.Title = inlineText(h, p.src)
		case isHeading && h.Level == 2:
			start := p.lineStartOf(nodeStart(h))
			if err := flush(start); err != nil {
				return err
			}
			title := inlineText(h, p.src)
			s := slug.Make(title)
			if s == "" {
				return p.errorf(nodeStart(h), "section heading %q has no letters or digits", title)
			}
			if prev, dup := seenSlugs[s]; dup {
				return p.errorf(nodeStart(h), "section %q repeats the section at line %d", title, prev)
			}
			seenSlugs[s] = p.line(nodeStart(h))
			cur = &Section{Title: title, Slug: s, Line: p.line(nodeStart(h))}
			curNodes = nil
			bodyStart = len(p.src)
			if nl := bytes.IndexByte(p.src[p.clamp(nodeStart(h)):], '\n'); nl >= 0 {
				bodyStart = p.clamp(nodeStart(h)) + nl + 1
			}
		default:
			if cur == nil {
				if _, blank := n.(*ast.ThematicBreak); blank {
					continue
				}
				return p.errorf(nodeStart(n), "content before the first level-2 section: every part of a card belongs to a \"## \" section")
			}
			curNodes = append(curNodes, n)
		}
	}
	if err := flush(len(p.src)); err != nil {
		return err
	}
	if len(c.Sections) == 0 {
		return &Error{p.path, p.lineOffset + 1, "the card has no level-2 sections"}
	}
	return p.checkSubsystemNumbers(c)
}

func (p *parser) checkSubsystemNumbers(c *Card) error {
	seen := map[int]*Subsystem{}
	slugs := map[string]*Subsystem{}
	for _, s := range c.Subsystems() {
		if prev, dup := seen[s.Number]; dup {
			return &Error{p.path, s.Line, fmt.Sprintf("duplicate subsystem number %d (also %q at line %d)", s.Number, prev.Name, prev.Line)}
		}
		seen[s.Number] = s
		if prev, dup := slugs[s.Slug]; dup {
			return &Error{p.path, s.Line, fmt.Sprintf("subsystem %q has the same URL slug as %q at line %d", s.Name, prev.Name, prev.Line)}
		}
		slugs[s.Slug] = s
	}
	return nil
}

// section classifies a level-2 section by the shape of its children and
// fills in its model.
func (p *parser) section(s *Section, nodes []ast.Node, start, end int) error {
	if len(nodes) > 0 && start < end {
		// Skip the blank lines after the heading.
		for start < end && p.src[start] == '\n' {
			start++
		}
		s.Source = strings.TrimRight(string(p.src[start:end]), "\n") + "\n"
		s.SourceLine = p.line(start)
	}
	var subs [][]ast.Node // nodes grouped under each level-3 heading
	for _, n := range nodes {
		if h, ok := n.(*ast.Heading); ok {
			if h.Level != 3 {
				return p.errorf(nodeStart(h), "unknown section layout in %q: level-%d heading (cards use level 2 for sections and level 3 for entries)", s.Title, h.Level)
			}
			subs = append(subs, []ast.Node{h})
			continue
		}
		if len(subs) == 0 {
			if len(nodes) > 0 && hasHeading(nodes) {
				return p.errorf(nodeStart(n), "unknown section layout in %q: content before its first level-3 heading", s.Title)
			}
			if t, ok := n.(*east.Table); ok {
				s.Tables = append(s.Tables, p.table(t))
			}
			continue
		}
		subs[len(subs)-1] = append(subs[len(subs)-1], n)
	}
	if len(subs) == 0 {
		s.Kind = KindProse
		return nil
	}
	first := subs[0][0].(*ast.Heading)
	if _, _, numbered := splitNumber(inlineText(first, p.src)); numbered {
		s.Kind = KindIndex
		for _, group := range subs {
			sub, err := p.subsystem(s, group)
			if err != nil {
				return err
			}
			s.Subsystems = append(s.Subsystems, sub)
		}
		return nil
	}
	s.Kind = KindFlows
	for _, group := range subs {
		f, err := p.flow(s, group)
		if err != nil {
			return err
		}
		s.Flows = append(s.Flows, f)
	}
	return nil
}

func hasHeading(nodes []ast.Node) bool {
	for _, n := range nodes {
		if _, ok := n.(*ast.Heading); ok {
			return true
		}
	}
	return false
}

// splitNumber splits "12. NCCL GPU Kernel" into 12 and "NCCL GPU Kernel".
func splitNumber(title string) (int, string, bool) {
	num, rest, ok := strings.Cut(title, ". ")
	if !ok {
		return 0, "", false
	}
	n, err := strconv.Atoi(num)
	if err != nil || n <= 0 {
		return 0, "", false
	}
	return n, strings.TrimSpace(rest), true
}

func (p *parser) subsystem(s *Section, group []ast.Node) (*Subsystem, error) {
	h := group[0].(*ast.Heading)
	title := inlineText(h, p.src)
	num, name, ok := splitNumber(title)
	if !ok {
		return nil, p.errorf(nodeStart(h), "unknown section layout in %q: entry %q is not numbered like the entries before it (\"N. Name\")", s.Title, title)
	}
	sub := &Subsystem{Number: num, Name: name, Line: p.line(nodeStart(h))}
	sub.ShortName, sub.SizeHint = splitSizeHint(name)
	sub.Slug = slug.Make(sub.ShortName)
	var list *ast.List
	for _, n := range group[1:] {
		l, ok := n.(*ast.List)
		if !ok || list != nil {
			return nil, p.errorf(nodeStart(n), "unknown section layout in %q: entry %d must hold exactly one bullet list of \"Label: value\" items", s.Title, num)
		}
		list = l
	}
	if list == nil {
		return nil, p.errorf(nodeStart(h), "subsystem %d %q has no \"Label: value\" bullets", num, name)
	}
	for item := list.FirstChild(); item != nil; item = item.NextSibling() {
		block := item.FirstChild()
		if block == nil {
			return nil, p.errorf(nodeStart(item), "subsystem %d: empty bullet", num)
		}
		raw := strings.TrimSpace(strings.ReplaceAll(rawLines(block, p.src), "\n", " "))
		label, value, ok := strings.Cut(raw, ":")
		label = strings.TrimSpace(label)
		value = strings.TrimSpace(value)
		off := nodeStart(block)
		if !ok || label == "" || strings.ContainsAny(label, " \t") && len(strings.Fields(label)) > 3 || value == "" {
			return nil, p.errorf(off, "subsystem %d: bullet %q is not of the form \"Label: value\"", num, raw)
		}
		f := Field{Label: label, Value: value, Line: p.line(off)}
		sub.Fields = append(sub.Fields, f)
		switch strings.ToLower(label) {
		case "file", "files":
			sub.FileText = value
			sub.Files = splitTop(value, " + ")
		case "notes", "note":
			for _, ref := range splitTop(value, ",") {
				base := path.Base(ref)
				sub.Notes = append(sub.Notes, NoteRef{Path: ref, Name: strings.TrimSuffix(base, path.Ext(base)), Line: f.Line})
			}
		case "key":
			sub.KeyText = value
			sub.Key = splitTop(value, ",")
		}
	}
	return sub, nil
}

// splitSizeHint separates a trailing parenthesised size hint that mentions
// lines ("ProcessGroupNCCL (~3500+ lines C++)") from the name.
func splitSizeHint(name string) (short, hint string) {
	if !strings.HasSuffix(name, ")") {
		return name, ""
	}
	open := strings.LastIndex(name, "(")
	if open <= 0 {
		return name, ""
	}
	inner := name[open+1 : len(name)-1]
	if !strings.Contains(inner, "lines") {
		return name, ""
	}
	return strings.TrimSpace(name[:open]), inner
}

// splitTop splits s on sep where sep is not inside parentheses, trimming
// each part and dropping empty ones.
func splitTop(s, sep string) []string {
	var out []string
	depth, last := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			if depth > 0 {
				depth--
			}
		}
		if depth == 0 && strings.HasPrefix(s[i:], sep) {
			if part := strings.TrimSpace(s[last:i]); part != "" {
				out = append(out, part)
			}
			last = i + len(sep)
			i += len(sep) - 1
		}
	}
	if part := strings.TrimSpace(s[last:]); part != "" {
		out = append(out, part)
	}
	return out
}

func (p *parser) flow(s *Section, group []ast.Node) (*Flow, error) {
	h := group[0].(*ast.Heading)
	name := inlineText(h, p.src)
	if _, _, numbered := splitNumber(name); numbered {
		return nil, p.errorf(nodeStart(h), "unknown section layout in %q: numbered entry %q among data flows", s.Title, name)
	}
	f := &Flow{Name: name, Slug: slug.Make(name), Line: p.line(nodeStart(h))}
	var code *ast.FencedCodeBlock
	for _, n := range group[1:] {
		switch b := n.(type) {
		case *ast.FencedCodeBlock:
			if code != nil {
				return nil, p.errorf(nodeStart(n), "data flow %q has more than one fenced block", name)
			}
			code = b
		case *ast.Paragraph:
			// Prose around a chain is allowed.
		default:
			return nil, p.errorf(nodeStart(n), "unknown section layout in %q: entry %q holds a %s; a data flow is one fenced block with optional prose", s.Title, name, n.Kind().String())
		}
	}
	if code == nil {
		return nil, p.errorf(nodeStart(h), "unknown section layout in %q: entry %q has neither \"Label: value\" bullets nor a fenced data-flow block", s.Title, name)
	}
	f.Text = rawLines(code, p.src)
	f.Steps = flowSteps(f.Text)
	if len(f.Steps) < 2 {
		return nil, p.errorf(nodeStart(h), "data flow %q has fewer than two steps joined by \"→\"", name)
	}
	return f, nil
}

// flowSteps splits a chain on its arrows; continuation lines (indented, or
// starting with an arrow) are one level deeper.
func flowSteps(chain string) []Step {
	var steps []Step
	for i, line := range strings.Split(chain, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		depth := 0
		if i > 0 && (strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t") || strings.HasPrefix(strings.TrimSpace(line), "→")) {
			depth = 1
		}
		for _, part := range strings.Split(line, "→") {
			if t := strings.TrimSpace(part); t != "" {
				steps = append(steps, Step{Text: t, Depth: depth})
			}
		}
	}
	return steps
}

func (p *parser) table(t *east.Table) *Table {
	out := &Table{Line: p.line(nodeStart(t))}
	for row := t.FirstChild(); row != nil; row = row.NextSibling() {
		var cells []string
		for cell := row.FirstChild(); cell != nil; cell = cell.NextSibling() {
			cells = append(cells, inlineText(cell, p.src))
		}
		if _, isHeader := row.(*east.TableHeader); isHeader {
			out.Header = cells
		} else {
			out.Rows = append(out.Rows, cells)
		}
	}
	return out
}
