package citecheck

import (
	"fmt"
	"sort"
	"strings"

	"github.com/distributed-nav/distributed-nav/generator/envtable"
	"github.com/distributed-nav/distributed-nav/generator/sources"
)

// MaxLines is the longest range accepted for a fact that is not a whole
// definition named by the text, nor a whole file.
const MaxLines = 40

// Checker holds what the check knows: the pinned trees' symbol indexes and
// where the environment tables say each variable is read.
type Checker struct {
	src *sources.Set
	env map[envKey][]int
	// readers maps a variable of the environment tables to the keys of
	// the trees that read it.
	readers map[string][]string
}

type envKey struct {
	tree       *sources.Tree
	file, name string
}

// New returns a checker over the pinned trees and the environment tables.
func New(src *sources.Set, env []envtable.Row) *Checker {
	c := &Checker{src: src, env: map[envKey][]int{}, readers: map[string][]string{}}
	for _, r := range env {
		if keys := readerKeys(r.Reader); len(keys) > 0 {
			c.readers[r.Name] = keys
		}
		if r.File == "" || r.Line == 0 {
			continue
		}
		for _, reader := range strings.Split(r.Reader, ", ") {
			key := "nccl"
			if reader == "PyTorch" {
				key = "pytorch"
			}
			t := src.Tree(key)
			if t == nil {
				continue
			}
			if r.Status == "removed" && t.Legacy != nil {
				t = t.Legacy
			}
			k := envKey{t, r.File, r.Name}
			c.env[k] = append(c.env[k], r.Line)
		}
	}
	return c
}

// span is one place a name is defined or read: lines A..B.
type span struct {
	name string
	a, b int
	// oneLine marks a definition that is a single line (a macro, a
	// member, a variable read), a one-line fact.
	oneLine bool
}

func (s span) String() string {
	if s.a == s.b {
		return fmt.Sprintf("`%s` (L%d)", s.name, s.a)
	}
	return fmt.Sprintf("`%s` (L%d-L%d)", s.name, s.a, s.b)
}

// known returns where each of names is defined or read in the target file.
func (c *Checker) known(tg sources.Target, names []string) []span {
	var out []span
	for _, n := range names {
		for _, sym := range tg.Tree.Defined(tg.Path, n) {
			out = append(out, span{n, sym.Line, sym.End, sym.End == sym.Line})
		}
		for _, l := range c.env[envKey{tg.Tree, tg.Path, n}] {
			out = append(out, span{n, l, l, true})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].a < out[j].a })
	return out
}

// Check returns what is wrong with one citation, or "" when nothing is:
// its range must overlap a definition (or the env table's read line) of
// an identifier its link text names, or, when the text names none, of one
// its sentence names that no sibling link takes, when any of them is
// known in the linked file; and a range longer
// than MaxLines must be a whole definition the text names, the exact
// range of an indexed definition, or the whole file.
func (c *Checker) Check(cit Citation) string {
	tg, ok := c.src.Resolve(cit.URL)
	if !ok || tg.A == 0 {
		return ""
	}
	if limit := tg.Tree.LineLimit(tg.Path); limit > 0 && tg.B > limit {
		return "" // sources.Check reports a range past the end of the file
	}
	basis := "link text"
	textNames := Identifiers(cit.Text)
	cited := c.known(tg, textNames)
	if len(textNames) == 0 {
		basis = "sentence"
		cited = c.known(tg, c.unclaimed(cit))
	}
	rng := fmt.Sprintf("L%d-L%d", tg.A, tg.B)
	if tg.A == tg.B {
		rng = fmt.Sprintf("L%d", tg.A)
	}
	if len(cited) > 0 && !anyOverlap(cited, tg.A, tg.B) {
		var where []string
		for _, s := range cited {
			where = append(where, s.String())
		}
		return fmt.Sprintf("permalink %s: %s of %s holds none of what its %s names: %s", cit.URL, rng, tg.Path, basis, strings.Join(where, ", "))
	}
	if n := tg.B - tg.A + 1; n > MaxLines && !c.longOK(tg, c.known(tg, append(textNames, Identifiers(cit.Sentence)...))) {
		what := "a fact whose text names no definition that long"
		if len(cited) > 0 {
			what = "a fact about " + cited[0].String()
		}
		return fmt.Sprintf("permalink %s: %d lines (%s) for %s; cite the lines that hold it", cit.URL, n, rng, what)
	}
	return ""
}

// unclaimed returns the names of the citation's sentence that no sibling
// link takes: a sibling takes a name its text gives, or whose definition
// or read line in the sibling's file its range opens.
func (c *Checker) unclaimed(cit Citation) []string {
	claimed := map[string]bool{}
	for _, sib := range cit.Siblings {
		names := Identifiers(sib.Text)
		for _, n := range names {
			claimed[n] = true
		}
		tg, ok := c.src.Resolve(sib.URL)
		if !ok || tg.A == 0 {
			continue
		}
		for _, s := range c.known(tg, Identifiers(cit.Sentence)) {
			if s.a <= tg.B && tg.A <= s.b {
				claimed[s.name] = true
			}
		}
	}
	var out []string
	for _, n := range Identifiers(cit.Sentence) {
		if !claimed[n] {
			out = append(out, n)
		}
	}
	return out
}

func anyOverlap(ss []span, a, b int) bool {
	for _, s := range ss {
		if s.a <= b && a <= s.b {
			return true
		}
	}
	return false
}

// longOK: a long range is a whole file or lies within a multi-line
// definition that the link text or its sentence names.
func (c *Checker) longOK(tg sources.Target, cited []span) bool {
	if tg.A == 1 && tg.B == tg.Tree.LineLimit(tg.Path) {
		return true
	}
	for _, s := range cited {
		if !s.oneLine && s.a <= tg.A && tg.B <= s.b {
			return true
		}
	}
	return false
}
