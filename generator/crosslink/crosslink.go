// Package crosslink links mentions of known names in Markdown: environment variables, card
// subsystems, source symbols and source paths. It is a goldmark extension: New returns an
// Extension value, and Extend(m) registers on m an AST transformer that walks the parsed
// document, finds mentions in text and code-span nodes (never in headings, links, raw HTML
// or code blocks) and wraps each in a Mention node, a link to its target. The changed
// document renders to HTML through goldmark as any other (Mention renders as <a>), and
// back to Markdown through Markdown, which keeps the author's source byte for byte and adds
// only the links, since Hugo renders the generator's Markdown itself.
//
// It also flags names shaped like environment variables (NCCL_*, TORCH_*, TORCHELASTIC_*)
// that the tables do not know, with the nearest known names.
package crosslink

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/distributed-nav/distributed-nav/generator/markdown"
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

// Extension is the cross-linking goldmark extension. One value serves one document at a
// time: after a Parse, Result holds what the transformer found in it.
type Extension struct {
	ix   *Index
	opts Options
	tr   *transformer
}

// Option tunes an Extension.
type Option func(*Options)

// Self names the URL of the page being linked: mentions of targets on that page (same URL
// before any #fragment) are not linked.
func Self(url string) Option { return func(o *Options) { o.Self = url } }

// New returns the extension linking the names of ix.
func New(ix *Index, opts ...Option) *Extension {
	e := &Extension{ix: ix}
	for _, o := range opts {
		o(&e.opts)
	}
	e.tr = &transformer{ix: ix, opts: e.opts}
	return e
}

// Extend implements goldmark.Extender: it registers the transformer and the HTML renderer
// of Mention nodes.
func (e *Extension) Extend(m goldmark.Markdown) {
	m.Parser().AddOptions(parser.WithASTTransformers(util.Prioritized(e.tr, 100)))
	m.Renderer().AddOptions(renderer.WithNodeRenderers(util.Prioritized(mentionRenderer{}, 100)))
}

// Result returns what the last parse found: the mentions it linked (lines are those of
// the source), the destinations of the links already in it, and unknown env-shaped names.
// Markdown is left empty; see the package function Markdown.
func (e *Extension) Result(src []byte) Result {
	res := Result{Links: e.tr.links, Problems: e.tr.problems}
	for _, m := range e.tr.mentions {
		res.Mentions = append(res.Mentions, Mention{Name: m.Name, Target: m.Target, Line: lineOf(src, m.start)})
	}
	for i := range res.Problems {
		res.Problems[i].Line = lineOf(src, res.Problems[i].Start)
	}
	return res
}

// KindMention is the node kind of MentionNode.
var KindMention = ast.NewNodeKind("CrossLinkMention")

// MentionNode is the inline node the transformer puts around a linked mention: a link to
// Target whose children are the mention's own nodes (text, or a code span).
type MentionNode struct {
	ast.Link
	// Name is the name as indexed (NCCL_P2P_DISABLE for `NCCL_P2P_DISABLE=1`).
	Name   string
	Target Target
	// start and end delimit the mention in the source, code-span backticks included.
	start, end int
}

// Kind implements ast.Node.
func (n *MentionNode) Kind() ast.NodeKind { return KindMention }

// Dump implements ast.Node.
func (n *MentionNode) Dump(src []byte, level int) {
	ast.DumpHelper(n, src, level, map[string]string{"Name": n.Name, "URL": n.Target.URL}, nil)
}

type mentionRenderer struct{}

func (mentionRenderer) RegisterFuncs(r renderer.NodeRendererFuncRegisterer) {
	r.Register(KindMention, func(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			w.WriteString(`<a href="`)
			w.Write(util.EscapeHTML(util.URLEscape([]byte(n.(*MentionNode).Target.URL), true)))
			w.WriteString(`">`)
		} else {
			w.WriteString("</a>")
		}
		return ast.WalkContinue, nil
	})
}

// Markdown writes the document doc, parsed from src with the extension, back as Markdown:
// the source unchanged except that every Mention becomes a link, [mention](target).
func Markdown(src []byte, doc ast.Node) []byte {
	var ms []*MentionNode
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if m, ok := n.(*MentionNode); ok && entering {
			ms = append(ms, m)
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	var out bytes.Buffer
	last := 0
	for _, m := range ms {
		if m.start < last {
			continue // mentions never overlap: each wraps nodes of its own
		}
		out.Write(src[last:m.start])
		fmt.Fprintf(&out, "[%s](%s)", src[m.start:m.end], m.Target.URL)
		last = m.end
	}
	out.Write(src[last:])
	return out.Bytes()
}

// Rewrite links known mentions in src: it parses src with the site's goldmark and the
// extension, and writes the changed document back with Markdown.
func (ix *Index) Rewrite(src []byte, opts Options) Result {
	ext := New(ix, Self(opts.Self))
	doc := markdown.New(ext).Parser().Parse(text.NewReader(src))
	res := ext.Result(src)
	res.Markdown = Markdown(src, doc)
	return res
}

func lineOf(src []byte, off int) int { return bytes.Count(src[:off], []byte("\n")) + 1 }

type transformer struct {
	ix       *Index
	opts     Options
	mentions []*MentionNode
	links    []string
	problems []Problem
	// linked holds the targets already linked in the current top-level
	// block: one link per target per block keeps paragraphs readable.
	linked map[string]bool
}

// Transform implements parser.ASTTransformer.
func (t *transformer) Transform(doc *ast.Document, reader text.Reader, pc parser.Context) {
	t.mentions, t.links, t.problems = nil, nil, nil
	src := reader.Source()
	for block := doc.FirstChild(); block != nil; block = block.NextSibling() {
		t.linked = map[string]bool{}
		t.walk(block, src)
	}
}

func (t *transformer) walk(n ast.Node, src []byte) {
	switch v := n.(type) {
	case *ast.Heading, *ast.FencedCodeBlock, *ast.CodeBlock, *ast.HTMLBlock, *ast.RawHTML, *MentionNode:
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
	// Runs of adjacent text nodes are read as one: goldmark splits text at
	// delimiter characters such as '_', which identifiers contain.
	for c := n.FirstChild(); c != nil; {
		first, ok := c.(*ast.Text)
		if !ok {
			next := c.NextSibling()
			t.walk(c, src)
			c = next
			continue
		}
		run := []*ast.Text{first}
		next := c.NextSibling()
		for next != nil {
			nt, ok := next.(*ast.Text)
			if !ok || nt.Segment.Start != run[len(run)-1].Segment.Stop {
				break
			}
			run = append(run, nt)
			next = next.NextSibling()
		}
		t.textRun(n, run, src)
		c = next
	}
}

// codeSpan links a code span whose whole content is a known name (or
// NAME=value for an environment variable), putting the code span inside the
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
	tgt, ok := t.ix.terms[name]
	if !ok {
		// A qualified C++ name links by its last part (Reducer::mark_bucket_ready).
		i := strings.LastIndex(name, "::")
		if i < 0 {
			return
		}
		if tgt, ok = t.ix.terms[name[i+2:]]; !ok {
			return
		}
	}
	if m := t.mention(name, tgt, open, closeEnd); m != nil {
		parent := cs.Parent()
		parent.ReplaceChild(parent, cs, m)
		m.AppendChild(m, cs)
	}
}

// textRun links known names in a run of adjacent text nodes of parent: the run is replaced
// by text nodes for the words between mentions and a MentionNode, holding a text node, for
// each mention. The last node keeps the run's line-break flags.
func (t *transformer) textRun(parent ast.Node, run []*ast.Text, src []byte) {
	start, end := run[0].Segment.Start, run[len(run)-1].Segment.Stop
	chunk := string(src[start:end])
	type piece struct {
		s, e int
		m    *MentionNode
	}
	var pieces []piece
	pos := start
	for _, tok := range tokens(chunk) {
		s, e := start+tok.off, start+tok.off+len(tok.s)
		t.checkEnv(tok.s, s, e, src)
		tgt, ok := t.ix.terms[tok.s]
		if !ok {
			continue
		}
		if m := t.mention(tok.s, tgt, s, e); m != nil {
			if s > pos {
				pieces = append(pieces, piece{s: pos, e: s})
			}
			pieces = append(pieces, piece{s: s, e: e, m: m})
			pos = e
		}
	}
	if len(pieces) == 0 {
		return
	}
	if pos < end {
		pieces = append(pieces, piece{s: pos, e: end})
	}
	lastText := run[len(run)-1]
	anchor := ast.Node(lastText)
	for i := len(pieces) - 1; i >= 0; i-- {
		p := pieces[i]
		tx := ast.NewTextSegment(text.NewSegment(p.s, p.e))
		if i == len(pieces)-1 {
			tx.SetSoftLineBreak(lastText.SoftLineBreak())
			tx.SetHardLineBreak(lastText.HardLineBreak())
		}
		var n ast.Node = tx
		if p.m != nil {
			p.m.AppendChild(p.m, tx)
			n = p.m
		}
		parent.InsertAfter(parent, anchor, n)
	}
	for _, r := range run {
		parent.RemoveChild(parent, r)
	}
}

// mention returns the node linking name to tgt over src[start:end], or nil when the target
// is the page itself or was already linked in this block.
func (t *transformer) mention(name string, tgt Target, start, end int) *MentionNode {
	if sameURL(tgt.URL, t.opts.Self) || t.linked[tgt.URL] {
		return nil
	}
	t.linked[tgt.URL] = true
	m := &MentionNode{Name: name, Target: tgt, start: start, end: end}
	m.Destination = []byte(tgt.URL)
	t.mentions = append(t.mentions, m)
	return m
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
