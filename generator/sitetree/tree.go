// Package sitetree holds the pages the generator produces and writes them as
// a Hugo content tree (site/content) with its data files (site/data). The
// tree is written into a temporary directory and swapped into place only
// when complete, so a failed build leaves the previous tree untouched.
package sitetree

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Page is one Hugo content file.
type Page struct {
	// URL is the page's site-relative URL, starting and ending with "/".
	URL string
	// Section is true for list pages (written as _index.md).
	Section     bool
	Title       string
	Description string
	// Weight orders siblings in Hugo's default sort.
	Weight int
	// Layout names a Hugo layout other than the default, if any.
	Layout string
	// Params are extra front-matter fields.
	Params map[string]any
	// Body is the page's Markdown.
	Body string
	// File and Line locate the source the body came from, for messages.
	File string
	Line int
}

// ContentPath is the path of the page's file under site/content.
func (p *Page) ContentPath() string {
	u := strings.Trim(p.URL, "/")
	if p.Section || u == "" {
		return path.Join(u, "_index.md")
	}
	return u + ".md"
}

// NavItem is an entry of the left navigation, in reading order.
type NavItem struct {
	Title    string    `json:"title"`
	URL      string    `json:"url"`
	Children []NavItem `json:"children,omitempty"`
}

// Tree is everything the generator writes for Hugo.
type Tree struct {
	Pages []*Page
	Nav   []NavItem
	// Data files written to site/data, by file name (JSON-encoded).
	Data map[string]any
	// Static files written to site/static (for example search.db is built
	// separately; small generated assets such as SVG go here), by path.
	Static map[string][]byte
	// Assets written to site/assets, by path.
	Assets map[string][]byte
}

// Page returns the page with the given URL, or nil.
func (t *Tree) Page(url string) *Page {
	for _, p := range t.Pages {
		if p.URL == url {
			return p
		}
	}
	return nil
}

// ReadingOrder flattens the navigation into the order a reader walks it.
func (t *Tree) ReadingOrder() []NavItem {
	var out []NavItem
	var walk func([]NavItem)
	walk = func(items []NavItem) {
		for _, it := range items {
			out = append(out, NavItem{Title: it.Title, URL: it.URL})
			walk(it.Children)
		}
	}
	walk(t.Nav)
	return out
}

// LinkPrevNext records each navigated page's neighbours in reading order as
// the "prev" and "next" front-matter params.
func (t *Tree) LinkPrevNext() {
	order := t.ReadingOrder()
	for i, it := range order {
		p := t.Page(it.URL)
		if p == nil {
			continue
		}
		if p.Params == nil {
			p.Params = map[string]any{}
		}
		if i > 0 {
			p.Params["prev"] = map[string]string{"title": order[i-1].Title, "url": order[i-1].URL}
		}
		if i+1 < len(order) {
			p.Params["next"] = map[string]string{"title": order[i+1].Title, "url": order[i+1].URL}
		}
	}
}

// Validate checks that URLs are unique and well formed and that every
// navigation entry points at a page.
func (t *Tree) Validate() error {
	seen := map[string]bool{}
	for _, p := range t.Pages {
		if !strings.HasPrefix(p.URL, "/") || !strings.HasSuffix(p.URL, "/") {
			return fmt.Errorf("page %q: URL %q must start and end with /", p.Title, p.URL)
		}
		if seen[p.URL] {
			return fmt.Errorf("two pages share the URL %s", p.URL)
		}
		seen[p.URL] = true
	}
	for _, it := range t.ReadingOrder() {
		if !seen[it.URL] {
			return fmt.Errorf("navigation entry %q points at %s, which no page has", it.Title, it.URL)
		}
	}
	return nil
}

// Write writes the tree into siteDir's content/, data/ and the generated
// parts of static/ and assets/. It writes everything into a temporary
// directory next to siteDir first and touches siteDir only when that is
// complete, so an error leaves the previous tree as it was.
func (t *Tree) Write(siteDir string) error {
	if err := t.Validate(); err != nil {
		return err
	}
	if err := os.MkdirAll(siteDir, 0o755); err != nil {
		return fmt.Errorf("site directory: %w", err)
	}
	tmp, err := os.MkdirTemp(siteDir, ".gen-")
	if err != nil {
		return fmt.Errorf("make temporary tree: %w", err)
	}
	defer os.RemoveAll(tmp)
	for _, p := range t.Pages {
		b, err := p.render()
		if err != nil {
			return err
		}
		if err := writeFile(filepath.Join(tmp, "content", filepath.FromSlash(p.ContentPath())), b); err != nil {
			return err
		}
	}
	data := map[string]any{"nav": t.Nav}
	for k, v := range t.Data {
		data[k] = v
	}
	for name, v := range data {
		b, err := json.MarshalIndent(v, "", " ")
		if err != nil {
			return fmt.Errorf("encode data %s: %w", name, err)
		}
		if err := writeFile(filepath.Join(tmp, "data", name+".json"), b); err != nil {
			return err
		}
	}
	for name, b := range t.Static {
		if err := writeFile(filepath.Join(tmp, "static", "gen", filepath.FromSlash(name)), b); err != nil {
			return err
		}
	}
	for name, b := range t.Assets {
		if err := writeFile(filepath.Join(tmp, "assets", "gen", filepath.FromSlash(name)), b); err != nil {
			return err
		}
	}
	// Bring each generated directory in line with the new tree: content,
	// data, static/gen, assets/gen. Files are replaced in place and stale
	// ones removed, so a running `hugo server` keeps watching the same
	// directories and reloads only what changed.
	for _, d := range []string{"content", "data", filepath.Join("static", "gen"), filepath.Join("assets", "gen")} {
		if err := syncDir(filepath.Join(tmp, d), filepath.Join(siteDir, d)); err != nil {
			return err
		}
	}
	return nil
}

// syncDir makes dst hold exactly the files of src: new and changed files are
// written (by rename from src), unchanged ones are left alone, files absent
// from src are deleted.
func syncDir(src, dst string) error {
	want := map[string]bool{}
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		want[rel] = true
		target := filepath.Join(dst, rel)
		nb, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if ob, err := os.ReadFile(target); err == nil && bytes.Equal(ob, nb) {
			return nil
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		return os.Rename(p, target)
	})
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("sync %s: %w", dst, err)
	}
	var stale []string
	_ = filepath.WalkDir(dst, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dst, p)
		if !want[rel] {
			stale = append(stale, p)
		}
		return nil
	})
	for _, p := range stale {
		if err := os.Remove(p); err != nil {
			return fmt.Errorf("sync %s: remove stale %s: %w", dst, p, err)
		}
	}
	removeEmptyDirs(dst)
	return nil
}

// removeEmptyDirs deletes directories left empty under root.
func removeEmptyDirs(root string) {
	var dirs []string
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && p != root {
			dirs = append(dirs, p)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		_ = os.Remove(dirs[i]) // fails, harmlessly, when not empty
	}
}

func writeFile(p string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	return nil
}

func (p *Page) render() ([]byte, error) {
	fm := map[string]any{"title": p.Title}
	if p.Description != "" {
		fm["description"] = p.Description
	}
	if p.Weight != 0 {
		fm["weight"] = p.Weight
	}
	if p.Layout != "" {
		fm["layout"] = p.Layout
	}
	keys := make([]string, 0, len(p.Params))
	for k := range p.Params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fm[k] = p.Params[k]
	}
	var b bytes.Buffer
	b.WriteString("---\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(fm); err != nil {
		return nil, fmt.Errorf("front matter of %s: %w", p.URL, err)
	}
	b.WriteString("---\n")
	b.WriteString(p.Body)
	if !strings.HasSuffix(p.Body, "\n") {
		b.WriteByte('\n')
	}
	return b.Bytes(), nil
}
