// Package crosslink links mentions of known names in Markdown: environment
// variables, card subsystems, source symbols and source paths. It works as a
// goldmark AST transformer: the transformer walks the parsed document, finds
// mentions in text and code-span nodes (never in headings, links, raw HTML or
// code blocks) and records edits by source offset; Rewrite applies them, so
// the output is the same Markdown with links added, ready for Hugo.
//
// It also flags names shaped like environment variables (NCCL_*, TORCH_*,
// TORCHELASTIC_*) that the tables do not know, with the nearest known names.
package crosslink

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Kind says what a target is.
type Kind string

// Target kinds.
const (
	KindEnv       Kind = "env"
	KindSubsystem Kind = "subsystem"
	KindSymbol    Kind = "symbol"
	KindPath      Kind = "path"
)

// Target is where a mention links to.
type Target struct {
	Kind  Kind
	URL   string
	Title string
}

// Index holds the known names. Build it with Add; it is read-only while
// rewriting.
type Index struct {
	terms map[string]Target
	// env holds every known environment variable name, linked or not, for
	// the unknown-name check.
	env []string
}

// NewIndex returns an empty index.
func NewIndex() *Index { return &Index{terms: map[string]Target{}} }

// Add registers a name. An earlier registration of the same name wins, so
// callers add the most specific kinds first.
func (ix *Index) Add(name string, t Target) {
	if name == "" {
		return
	}
	if _, dup := ix.terms[name]; dup {
		return
	}
	ix.terms[name] = t
	if t.Kind == KindEnv {
		ix.env = append(ix.env, name)
	}
}

// Lookup returns the target of a name.
func (ix *Index) Lookup(name string) (Target, bool) {
	t, ok := ix.terms[name]
	return t, ok
}

// Mention is one linked occurrence.
type Mention struct {
	Name   string
	Target Target
	// Line is 1-based within the rewritten document.
	Line int
}

// Problem is an unknown env-var-shaped name.
type Problem struct {
	Name    string
	Line    int
	Nearest []string
	// Start and End are the byte offsets of the name in the source.
	Start, End int
}

// Message formats the problem.
func (p Problem) Message() string {
	if len(p.Nearest) == 0 {
		return fmt.Sprintf("unknown environment variable %s", p.Name)
	}
	return fmt.Sprintf("unknown environment variable %s (nearest known: %s)", p.Name, strings.Join(p.Nearest, ", "))
}

// Result is what Rewrite produces.
type Result struct {
	Markdown []byte
	Mentions []Mention
	// Links are the destinations of links already in the source.
	Links    []string
	Problems []Problem
}

// Options tune one rewrite.
type Options struct {
	// Self is the URL of the page being rewritten; mentions of targets on
	// that page (same URL before any #fragment) are not linked.
	Self string
}

// Markdown returns a goldmark configured like Hugo's defaults (GFM,
// attributes), with the cross-link transformer t registered.
func Markdown(t parser.ASTTransformer) goldmark.Markdown {
	return goldmark.New(
		goldmark.WithExtensions(extension.GFM),
		goldmark.WithParserOptions(
			parser.WithAttribute(),
			parser.WithAutoHeadingID(),
			parser.WithASTTransformers(prioritized(t)),
		),
	)
}

// Rewrite links known mentions in src.
func (ix *Index) Rewrite(src []byte, opts Options) Result {
	tr := &transformer{ix: ix, opts: opts}
	md := Markdown(tr)
	md.Parser().Parse(text.NewReader(src))
	res := Result{Links: tr.links, Problems: tr.problems}
	sort.Slice(tr.edits, func(i, j int) bool { return tr.edits[i].start < tr.edits[j].start })
	var out bytes.Buffer
	last := 0
	for _, e := range tr.edits {
		if e.start < last {
			continue // overlapping edits cannot happen by construction; be safe
		}
		out.Write(src[last:e.start])
		fmt.Fprintf(&out, "[%s](%s)", src[e.start:e.end], e.target.URL)
		last = e.end
		res.Mentions = append(res.Mentions, Mention{Name: e.name, Target: e.target, Line: lineOf(src, e.start)})
	}
	out.Write(src[last:])
	res.Markdown = out.Bytes()
	for i := range res.Problems {
		res.Problems[i].Line = lineOf(src, res.Problems[i].Start)
	}
	return res
}

func lineOf(src []byte, off int) int { return bytes.Count(src[:off], []byte("\n")) + 1 }

type edit struct {
	start, end int
	name       string
	target     Target
}

type transformer struct {
	ix       *Index
	opts     Options
	edits    []edit
	links    []string
	problems []Problem
	// linked holds the targets already linked in the current top-level
	// block: one link per target per block keeps paragraphs readable.
	linked map[string]bool
}

// Transform implements parser.ASTTransformer.
func (t *transformer) Transform(doc *ast.Document, reader text.Reader, pc parser.Context) {
	src := reader.Source()
	for block := doc.FirstChild(); block != nil; block = block.NextSibling() {
		t.linked = map[string]bool{}
		t.walk(block, src)
	}
}

func (t *transformer) walk(n ast.Node, src []byte) {
	switch v := n.(type) {
	case *ast.Heading, *ast.FencedCodeBlock, *ast.CodeBlock, *ast.HTMLBlock, *ast.RawHTML:
		return
	case *ast.Link:
		t.links = append(t.links, string(v.Destination))
		return
	case *ast.AutoLink:
		t.links = append(t.links, string(v.URL(src)))
		return
	case *ast.CodeSpan:
		t.codeSpan(v, src)
		return
	}
	// Merge runs of adjacent text nodes: goldmark splits text at
	// delimiter characters such as '_', which identifiers contain.
	for c := n.FirstChild(); c != nil; {
		if _, ok := c.(*ast.Text); ok {
			start := c.(*ast.Text).Segment.Start
			end := c.(*ast.Text).Segment.Stop
			next := c.NextSibling()
			for next != nil {
				nt, ok := next.(*ast.Text)
				if !ok || nt.Segment.Start != end {
					break
				}
				end = nt.Segment.Stop
				next = next.NextSibling()
			}
			t.text(start, end, src)
			c = next
			continue
		}
		t.walk(c, src)
		c = c.NextSibling()
	}
}

// codeSpan links a code span whose whole content is a known name (or
// NAME=value for an environment variable), wrapping the backticks in the
// link, and checks env-shaped names inside it.
func (t *transformer) codeSpan(cs *ast.CodeSpan, src []byte) {
	first, ok := cs.FirstChild().(*ast.Text)
	if !ok {
		return
	}
	last, ok := cs.LastChild().(*ast.Text)
	if !ok {
		return
	}
	start, end := first.Segment.Start, last.Segment.Stop
	content := string(src[start:end])
	for _, tok := range tokens(content) {
		t.checkEnv(tok.s, start+tok.off, start+tok.off+len(tok.s), src)
	}
	open := start
	for open > 0 && src[open-1] == '`' {
		open--
	}
	closeEnd := end
	for closeEnd < len(src) && src[closeEnd] == '`' {
		closeEnd++
	}
	if start-open != closeEnd-end || start == open {
		return
	}
	name := strings.TrimSpace(content)
	if k, _, isAssign := strings.Cut(name, "="); isAssign {
		name = k
	}
	if tgt, ok := t.ix.terms[name]; ok {
		t.link(open, closeEnd, name, tgt)
		return
	}
	// A qualified C++ name links by its last part (Reducer::mark_bucket_ready).
	if i := strings.LastIndex(name, "::"); i >= 0 {
		if tgt, ok := t.ix.terms[name[i+2:]]; ok {
			t.link(open, closeEnd, name, tgt)
		}
	}
}

// text links known names in a run of plain text.
func (t *transformer) text(start, end int, src []byte) {
	chunk := string(src[start:end])
	for _, tok := range tokens(chunk) {
		s, e := start+tok.off, start+tok.off+len(tok.s)
		t.checkEnv(tok.s, s, e, src)
		if tgt, ok := t.ix.terms[tok.s]; ok {
			t.link(s, e, tok.s, tgt)
		}
	}
}

func (t *transformer) link(start, end int, name string, tgt Target) {
	if sameURL(tgt.URL, t.opts.Self) || t.linked[tgt.URL] {
		return
	}
	t.linked[tgt.URL] = true
	t.edits = append(t.edits, edit{start: start, end: end, name: name, target: tgt})
}

func sameURL(target, self string) bool {
	if self == "" {
		return false
	}
	base, _, _ := strings.Cut(target, "#")
	return base == self
}

// checkEnv reports an env-shaped token the index does not know. A token
// ending in '_' followed by '*' is a family pattern (NCCL_IB_*), not a name.
func (t *transformer) checkEnv(tok string, start, end int, src []byte) {
	if !EnvShaped(tok) {
		return
	}
	if end < len(src) && src[end] == '*' {
		return
	}
	if _, ok := t.ix.terms[tok]; ok {
		return // a variable, or a known source name such as a macro
	}
	t.problems = append(t.problems, Problem{Name: tok, Start: start, End: end, Nearest: Nearest(tok, t.ix.env, 3)})
}

// EnvShaped reports whether s looks like an NCCL or PyTorch environment
// variable: a known prefix followed by upper-case letters, digits and
// underscores, not ending in '_'.
func EnvShaped(s string) bool {
	prefix := ""
	for _, p := range []string{"NCCL_", "TORCH_", "TORCHELASTIC_"} {
		if strings.HasPrefix(s, p) {
			prefix = p
		}
	}
	if prefix == "" || len(s) == len(prefix) || strings.HasSuffix(s, "_") {
		return false
	}
	for _, r := range s {
		if !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

type token struct {
	s   string
	off int
}

// tokens splits text into identifier-like words: letters, digits, '_', and
// '.', '/', ':' between such characters (paths and qualified names).
func tokens(s string) []token {
	var out []token
	isWord := func(c byte) bool {
		return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	}
	i := 0
	for i < len(s) {
		if !isWord(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) {
			if isWord(s[j]) {
				j++
				continue
			}
			if (s[j] == '.' || s[j] == '/' || s[j] == ':') && j+1 < len(s) && (isWord(s[j+1]) || s[j] == ':' && s[j+1] == ':') {
				j++
				continue
			}
			break
		}
		out = append(out, token{s: strings.TrimRight(s[i:j], ":"), off: i})
		i = j
	}
	return out
}

// Nearest returns up to n known names closest to name by edit distance
// (case-insensitive), nearest first, ties broken alphabetically.
func Nearest(name string, known []string, n int) []string {
	type cand struct {
		s string
		d int
	}
	var cs []cand
	up := strings.ToUpper(name)
	for _, k := range known {
		cs = append(cs, cand{k, distance(up, strings.ToUpper(k))})
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].d != cs[j].d {
			return cs[i].d < cs[j].d
		}
		return cs[i].s < cs[j].s
	})
	var out []string
	for i := 0; i < len(cs) && i < n; i++ {
		out = append(out, cs[i].s)
	}
	return out
}

// distance is the Levenshtein distance between a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func prioritized(t parser.ASTTransformer) util.PrioritizedValue {
	return util.Prioritized(t, 100)
}
