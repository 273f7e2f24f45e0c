// Package sources knows the upstream trees the site cites, pinned at a
// release tag (data/sources.yaml and the file lists, line counts and symbol
// indexes under data/sources/), and validates permalinks into them without
// any network access.
package sources

import (
	"bufio"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Symbol is one entry of a symbol index.
type Symbol struct {
	Name, Kind, File string
	Line, End        int
	Scope            string
}

// Tree is one pinned upstream tree.
type Tree struct {
	// Key is the name in sources.yaml ("nccl", "pytorch").
	Key    string
	Repo   string
	Tag    string
	Commit string
	// Prefix is the permalink prefix, ".../blob/<tag>/".
	Prefix  string
	files   map[string]bool
	lines   map[string]int
	Symbols []Symbol
	// LocalSymbols are file-local definitions (static functions, macros
	// and types of .cc files) that the main index leaves out. Only the
	// permalink check uses them; the site does not link to them.
	LocalSymbols []Symbol
	symEnd       map[string]int
	byFileName   map[fileName][]Symbol
	byFile       map[string][]Symbol
	// Legacy is an older tag some rows may cite (removed variables).
	Legacy *Tree
}

// Set is every pinned tree.
type Set struct {
	Trees []*Tree
}

type treeSpec struct {
	Repo            string    `yaml:"repo"`
	Tag             string    `yaml:"tag"`
	Commit          string    `yaml:"commit"`
	PermalinkPrefix string    `yaml:"permalink_prefix"`
	Files           string    `yaml:"files"`
	Lines           string    `yaml:"lines"`
	Symbols         string    `yaml:"symbols"`
	LocalSymbols    string    `yaml:"local_symbols"`
	Legacy          *treeSpec `yaml:"legacy"`
}

// Load reads dataDir/sources.yaml and the lists it names.
func Load(dataDir string) (*Set, error) {
	p := filepath.Join(dataDir, "sources.yaml")
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("read pinned sources: %w", err)
	}
	var specs map[string]treeSpec
	if err := yaml.Unmarshal(b, &specs); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	keys := make([]string, 0, len(specs))
	for k := range specs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := &Set{}
	for _, k := range keys {
		t, err := loadTree(filepath.Join(dataDir, "sources"), k, specs[k])
		if err != nil {
			return nil, err
		}
		s.Trees = append(s.Trees, t)
	}
	return s, nil
}

func loadTree(dir, key string, spec treeSpec) (*Tree, error) {
	if spec.Repo == "" || spec.Tag == "" || spec.Files == "" {
		return nil, fmt.Errorf("sources.yaml: %s needs repo, tag and files", key)
	}
	t := &Tree{Key: key, Repo: spec.Repo, Tag: spec.Tag, Commit: spec.Commit,
		Prefix: "https://github.com/" + spec.Repo + "/blob/" + spec.Tag + "/",
		files:  map[string]bool{}, lines: map[string]int{}, symEnd: map[string]int{}}
	if spec.PermalinkPrefix != "" && spec.PermalinkPrefix != t.Prefix {
		return nil, fmt.Errorf("sources.yaml: %s permalink_prefix %q does not match repo and tag (%q)", key, spec.PermalinkPrefix, t.Prefix)
	}
	if err := eachLine(filepath.Join(dir, spec.Files), func(line string) error {
		t.files[line] = true
		return nil
	}); err != nil {
		return nil, err
	}
	if spec.Lines != "" {
		if err := eachLine(filepath.Join(dir, spec.Lines), func(line string) error {
			f, n, ok := strings.Cut(line, "\t")
			c, err := strconv.Atoi(n)
			if !ok || err != nil {
				return fmt.Errorf("bad line-count row %q", line)
			}
			t.lines[f] = c
			return nil
		}); err != nil {
			return nil, err
		}
	}
	var err error
	if t.Symbols, err = readSymbols(dir, spec.Symbols, t.symEnd); err != nil {
		return nil, err
	}
	if t.LocalSymbols, err = readSymbols(dir, spec.LocalSymbols, t.symEnd); err != nil {
		return nil, err
	}
	t.byFileName = map[fileName][]Symbol{}
	t.byFile = map[string][]Symbol{}
	for _, list := range [][]Symbol{t.Symbols, t.LocalSymbols} {
		for _, sym := range list {
			k := fileName{sym.File, sym.Name}
			t.byFileName[k] = append(t.byFileName[k], sym)
			t.byFile[sym.File] = append(t.byFile[sym.File], sym)
		}
	}
	if spec.Legacy != nil {
		l := *spec.Legacy
		l.Repo = spec.Repo
		lt, err := loadTree(dir, key+"-legacy", l)
		if err != nil {
			return nil, err
		}
		t.Legacy = lt
	}
	return t, nil
}

// readSymbols reads one symbol index (header "name kind file line end
// scope"); an empty name reads nothing. It raises symEnd[file] to the last
// line any symbol of the file reaches.
func readSymbols(dir, name string, symEnd map[string]int) ([]Symbol, error) {
	if name == "" {
		return nil, nil
	}
	var out []Symbol
	first := true
	err := eachLine(filepath.Join(dir, name), func(line string) error {
		if first {
			first = false
			return nil // header
		}
		f := strings.Split(line, "\t")
		if len(f) < 5 {
			return fmt.Errorf("bad symbol row %q", line)
		}
		a, err1 := strconv.Atoi(f[3])
		e, err2 := a, error(nil)
		if f[4] != "" { // one-line symbols leave the end empty
			e, err2 = strconv.Atoi(f[4])
		}
		if err1 != nil || err2 != nil || a <= 0 || e < a {
			return fmt.Errorf("bad symbol lines in %q", line)
		}
		sym := Symbol{Name: f[0], Kind: f[1], File: f[2], Line: a, End: e}
		if len(f) > 5 {
			sym.Scope = f[5]
		}
		out = append(out, sym)
		if e > symEnd[sym.File] {
			symEnd[sym.File] = e
		}
		return nil
	})
	return out, err
}

type fileName struct{ file, name string }

// Defined returns every definition of name in file, from the main and the
// file-local symbol index (several for overloads or repeated macros).
func (t *Tree) Defined(file, name string) []Symbol { return t.byFileName[fileName{file, name}] }

// DefinedIn returns every indexed definition in file.
func (t *Tree) DefinedIn(file string) []Symbol { return t.byFile[file] }

func eachLine(p string, fn func(string) error) error {
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("pinned sources: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimRight(sc.Text(), "\r")
		if line == "" {
			continue
		}
		if err := fn(line); err != nil {
			return fmt.Errorf("%s:%d: %w", p, n, err)
		}
	}
	return sc.Err()
}

// Tree returns the pinned tree named key in sources.yaml ("nccl",
// "pytorch"), or nil.
func (s *Set) Tree(key string) *Tree {
	for _, t := range s.Trees {
		if t.Key == key {
			return t
		}
	}
	return nil
}

// HasFile reports whether path exists in the pinned tree (a directory
// counts when some file lies under it).
func (t *Tree) HasFile(path string) bool {
	if t.files[path] {
		return true
	}
	dir := strings.TrimSuffix(path, "/") + "/"
	for f := range t.files {
		if strings.HasPrefix(f, dir) {
			return true
		}
	}
	return false
}

// LineLimit returns the number of lines a file has, from the line counts,
// or else the last line any symbol of the file reaches; 0 when unknown.
func (t *Tree) LineLimit(path string) int {
	if n, ok := t.lines[path]; ok {
		return n
	}
	return t.symEnd[path]
}

// Permalink returns the pinned URL of a file, with a line range when a > 0.
func (t *Tree) Permalink(path string, a, b int) string {
	u := t.Prefix + path
	switch {
	case a > 0 && b > a:
		u += fmt.Sprintf("#L%d-L%d", a, b)
	case a > 0:
		u += fmt.Sprintf("#L%d", a)
	}
	return u
}

// Files returns every file path of the tree, sorted.
func (t *Tree) Files() []string {
	out := make([]string, 0, len(t.files))
	for f := range t.files {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// IsGitHubBlob reports whether u is a GitHub file URL of one of the pinned
// repositories (at any tag); only those are validated.
func (s *Set) IsGitHubBlob(u string) bool {
	for _, t := range s.Trees {
		if strings.HasPrefix(u, "https://github.com/"+t.Repo+"/blob/") {
			return true
		}
	}
	return false
}

// locate finds the pinned repository a blob URL points into and splits
// it into tag, path and fragment; repo is nil for URLs of other sites.
func (s *Set) locate(raw string) (repo *Tree, tag, path, frag string, err error) {
	for _, t := range s.Trees {
		blob := "https://github.com/" + t.Repo + "/blob/"
		if !strings.HasPrefix(raw, blob) {
			continue
		}
		u, err := url.Parse(raw)
		if err != nil {
			return t, "", "", "", fmt.Errorf("permalink %s: %w", raw, err)
		}
		tag, path, ok := strings.Cut(strings.TrimPrefix(u.Path, "/"+t.Repo+"/blob/"), "/")
		if !ok || path == "" {
			return t, "", "", "", fmt.Errorf("permalink %s: no file path after the tag", raw)
		}
		return t, tag, path, u.Fragment, nil
	}
	return nil, "", "", "", nil
}

// at returns the tree of repo that tag names: the pinned one, or the
// legacy one when allowLegacy; nil otherwise.
func (t *Tree) at(tag string, allowLegacy bool) *Tree {
	switch {
	case tag == t.Tag:
		return t
	case allowLegacy && t.Legacy != nil && tag == t.Legacy.Tag:
		return t.Legacy
	}
	return nil
}

// Check validates a permalink into a pinned repository: the tag must be the
// pinned one (or the tree's legacy tag when allowLegacy), the path must
// exist at that tag, and a #La-Lb range must lie within the file. URLs of
// other sites are not checked and return nil.
func (s *Set) Check(raw string, allowLegacy bool) error {
	repo, tag, path, frag, err := s.locate(raw)
	if repo == nil || err != nil {
		return err
	}
	tree := repo.at(tag, allowLegacy)
	if tree == nil {
		return fmt.Errorf("permalink %s: tag %s is not the pinned %s", raw, tag, repo.Tag)
	}
	if !tree.HasFile(path) {
		return fmt.Errorf("permalink %s: %s does not exist at %s", raw, path, tree.Tag)
	}
	if frag == "" {
		return nil
	}
	_, b, err := parseRange(frag)
	if err != nil {
		return fmt.Errorf("permalink %s: %w", raw, err)
	}
	if limit := tree.LineLimit(path); limit > 0 && b > limit {
		return fmt.Errorf("permalink %s: line %d is beyond the end of %s (%d lines at %s)", raw, b, path, limit, tree.Tag)
	}
	return nil
}

// Target is what a permalink into a pinned tree points at.
type Target struct {
	Tree *Tree
	Path string
	// A and B are the first and last line of the #La-Lb range; both 0
	// when the link has no line fragment.
	A, B int
}

// Resolve splits a permalink into its tree, path and line range. ok is
// false for URLs that are not permalinks into a pinned repository at its
// pinned or legacy tag, or whose fragment is not a line range (Check
// reports those).
func (s *Set) Resolve(raw string) (Target, bool) {
	repo, tag, path, frag, err := s.locate(raw)
	if repo == nil || err != nil {
		return Target{}, false
	}
	tree := repo.at(tag, true)
	if tree == nil {
		return Target{}, false
	}
	tg := Target{Tree: tree, Path: path}
	if frag != "" {
		if tg.A, tg.B, err = parseRange(frag); err != nil {
			return Target{}, false
		}
	}
	return tg, true
}

// parseRange parses "L12" or "L12-L40".
func parseRange(frag string) (int, int, error) {
	first, second, hasSecond := strings.Cut(frag, "-")
	a, err := lineNum(first)
	if err != nil {
		return 0, 0, err
	}
	if !hasSecond {
		return a, a, nil
	}
	b, err := lineNum(second)
	if err != nil {
		return 0, 0, err
	}
	if b < a {
		return 0, 0, fmt.Errorf("line range L%d-L%d runs backwards", a, b)
	}
	return a, b, nil
}

func lineNum(s string) (int, error) {
	if !strings.HasPrefix(s, "L") {
		return 0, fmt.Errorf("fragment %q is not a line anchor (L<n> or L<a>-L<b>)", s)
	}
	n, err := strconv.Atoi(s[1:])
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("fragment %q is not a line anchor (L<n> or L<a>-L<b>)", s)
	}
	return n, nil
}
