// Package envtable reads the environment-variable tables (data/env/nccl.csv
// and data/env/torch.csv) with every column the site shows, and renders the
// site's single, filterable variable table.
package envtable

import (
	"encoding/csv"
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/distributed-nav/distributed-nav/generator/sources"
)

// Columns is the header every table must have, in this order.
var Columns = []string{"name", "default", "type", "component", "file", "line", "status", "deprecated_alias_of", "debug_only", "description", "effective_default", "default_set_at"}

// Row is one variable.
type Row struct {
	Name, Default, Type, Component string
	File                           string
	Line                           int
	// Status is active, deprecated, removed, unread (declared, never read)
	// or newer (read only by releases after the pinned one).
	Status            string
	DeprecatedAliasOf string
	DebugOnly         bool
	Description       string
	// EffectiveDefault is the value actually used when the variable is
	// unset, where Default is a sentinel (-2, INT_MIN, "auto"); Markdown
	// code spans allowed. Empty when Default already is the value.
	EffectiveDefault string
	// DefaultSetAt are the source lines where the effective default is
	// set or computed, in the same tree as File.
	DefaultSetAt []Span
	// DefaultURLs are the permalinks of DefaultSetAt, filled by
	// LinkDefaults ("" for a file not in the pinned tree).
	DefaultURLs []string
	// Reader is the library that reads it: "NCCL" or "PyTorch".
	Reader string
	// Table and TableLine locate the row (for messages).
	Table     string
	TableLine int
}

// Span is a line range of one file (A == B for one line).
type Span struct {
	File string
	A, B int
}

// String is "file:a" or "file:a-b".
func (s Span) String() string {
	if s.B > s.A {
		return fmt.Sprintf("%s:%d-%d", s.File, s.A, s.B)
	}
	return fmt.Sprintf("%s:%d", s.File, s.A)
}

// parseSpans reads the default_set_at column: "file:line" or
// "file:first-last" entries separated by spaces.
func parseSpans(v string) ([]Span, error) {
	var out []Span
	for _, f := range strings.Fields(v) {
		file, lines, ok := strings.Cut(f, ":")
		if !ok || file == "" {
			return nil, fmt.Errorf("default_set_at entry %q is not file:line or file:first-last", f)
		}
		first, last, isRange := strings.Cut(lines, "-")
		a, err1 := strconv.Atoi(first)
		b, err2 := a, error(nil)
		if isRange {
			b, err2 = strconv.Atoi(last)
		}
		if err1 != nil || err2 != nil || a <= 0 || b < a {
			return nil, fmt.Errorf("default_set_at entry %q is not file:line or file:first-last", f)
		}
		out = append(out, Span{File: file, A: a, B: b})
	}
	return out, nil
}

// Tables lists the table files and the library each describes.
var Tables = []struct{ File, Reader string }{
	{"nccl.csv", "NCCL"},
	{"torch.csv", "PyTorch"},
}

// Load reads every table under dataDir/env, sorted by name. It fails with
// "file:line: message" on a malformed row, a duplicate name or an alias
// that names no row.
func Load(dataDir string) ([]Row, error) {
	var rows []Row
	seen := map[string]Row{}
	for _, t := range Tables {
		p := filepath.Join(dataDir, "env", t.File)
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("env table: %w", err)
		}
		rs, err := read(f, filepath.ToSlash(filepath.Join("data", "env", t.File)), t.Reader)
		f.Close()
		if err != nil {
			return nil, err
		}
		for _, r := range rs {
			if prev, dup := seen[r.Name]; dup {
				if prev.Table == r.Table {
					return nil, fmt.Errorf("%s:%d: %s is already listed at line %d", r.Table, r.TableLine, r.Name, prev.TableLine)
				}
				// A variable two libraries read (NCCL_DEBUG) keeps one row:
				// the first table's, noting the second reader.
				for i := range rows {
					if rows[i].Name == r.Name {
						rows[i].Reader += ", " + r.Reader
						rows[i].Description += " " + r.Reader + " reads it too: " + r.Description
					}
				}
				continue
			}
			seen[r.Name] = r
			rows = append(rows, r)
		}
	}
	for _, r := range rows {
		if r.DeprecatedAliasOf != "" {
			if _, ok := seen[r.DeprecatedAliasOf]; !ok {
				return nil, fmt.Errorf("%s:%d: %s is an alias of %s, which no table lists", r.Table, r.TableLine, r.Name, r.DeprecatedAliasOf)
			}
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
	return rows, nil
}

func read(r io.Reader, name, reader string) ([]Row, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1 // the header is checked by name below, rows by count after it
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s:1: %w", name, err)
	}
	if strings.Join(header, ",") != strings.Join(Columns, ",") {
		return nil, fmt.Errorf("%s:1: header %q, want %q", name, strings.Join(header, ","), strings.Join(Columns, ","))
	}
	cr.FieldsPerRecord = len(Columns)
	var out []Row
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return out, nil
		}
		line, _ := cr.FieldPos(0)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		row := Row{Name: rec[0], Default: rec[1], Type: rec[2], Component: rec[3], File: rec[4], Status: rec[6],
			DeprecatedAliasOf: rec[7], Description: rec[9], EffectiveDefault: rec[10], Reader: reader, Table: name, TableLine: line}
		spans, err := parseSpans(rec[11])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %s: %w", name, line, row.Name, err)
		}
		if (len(spans) == 0) != (row.EffectiveDefault == "") {
			return nil, fmt.Errorf("%s:%d: %s: effective_default and default_set_at go together (one is empty)", name, line, row.Name)
		}
		row.DefaultSetAt = spans
		if rec[5] != "" {
			n, err := strconv.Atoi(rec[5])
			if err != nil || n <= 0 {
				return nil, fmt.Errorf("%s:%d: %s: line %q is not a positive number", name, line, row.Name, rec[5])
			}
			row.Line = n
		}
		switch rec[8] {
		case "true":
			row.DebugOnly = true
		case "false":
		default:
			return nil, fmt.Errorf("%s:%d: %s: debug_only %q, want true or false", name, line, row.Name, rec[8])
		}
		switch row.Status {
		case "active", "deprecated", "removed", "unread", "newer":
		default:
			return nil, fmt.Errorf("%s:%d: %s: status %q, want active, deprecated, removed, unread or newer", name, line, row.Name, row.Status)
		}
		if row.Name == "" || strings.TrimSpace(row.Description) == "" {
			return nil, fmt.Errorf("%s:%d: a row needs a name and a description", name, line)
		}
		out = append(out, row)
	}
}

// Anchor is the id of the variable's row on the env page.
func (r Row) Anchor() string { return r.Name }

// Permalink is the pinned URL of the line that reads the variable: in the
// NCCL tree for NCCL's variables (at the legacy tag for removed ones), in
// the PyTorch tree for PyTorch's; empty when the file is not in the tree.
func (r Row) Permalink(s *sources.Set) string {
	if r.File == "" {
		return ""
	}
	t := r.tree(s)
	if t == nil || !t.HasFile(r.File) {
		return ""
	}
	return t.Permalink(r.File, r.Line, 0)
}

// tree is the pinned tree the row's lines point into (nil when none).
func (r Row) tree(s *sources.Set) *sources.Tree {
	key := "nccl"
	if strings.HasPrefix(r.Reader, "PyTorch") {
		key = "pytorch"
	}
	t := s.Tree(key)
	if t != nil && r.Status == "removed" && t.Legacy != nil {
		t = t.Legacy
	}
	return t
}

// LinkDefaults fills every row's DefaultURLs: the permalinks of the lines
// where its effective default is set, in the tree its File points into.
func LinkDefaults(rows []Row, s *sources.Set) {
	for i := range rows {
		r := &rows[i]
		t := r.tree(s)
		r.DefaultURLs = make([]string, len(r.DefaultSetAt))
		for j, sp := range r.DefaultSetAt {
			if t != nil && t.HasFile(sp.File) {
				r.DefaultURLs[j] = t.Permalink(sp.File, sp.A, sp.B)
			}
		}
	}
}

// Linker turns a row's file and line into a permalink (nil when the file is
// not in a pinned tree).
type Linker func(r Row) string

// Components returns the distinct components, sorted.
func Components(rows []Row) []string {
	set := map[string]bool{}
	for _, r := range rows {
		set[r.Component] = true
	}
	var out []string
	for c := range set {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// HTML renders the full table: a plain, complete table that needs no
// JavaScript; data attributes let the page's script filter it.
func HTML(rows []Row, link Linker) string {
	var b strings.Builder
	b.WriteString(`<div class="env-filter" hidden><label for="env-q">Filter variables</label> <input id="env-q" type="search" placeholder="name or words"> <label for="env-c">Component</label> <select id="env-c"><option value="">all</option>`)
	for _, c := range Components(rows) {
		fmt.Fprintf(&b, `<option>%s</option>`, html.EscapeString(c))
	}
	b.WriteString(`</select> <label><input id="env-d" type="checkbox"> debugging-only knobs only</label> <output id="env-n" aria-live="polite"></output></div>`)
	b.WriteString("\n")
	// Four columns, so that the meaning sits beside the name at desktop width:
	// who reads the variable, its component and its type go under the name.
	// The data-label of each cell names its column where the table is shown
	// as a stack of cards (phones, print).
	b.WriteString(`<div class="table-scroll data-table" role="region" aria-label="Environment variables" tabindex="0"><table class="env-table" id="env-table"><thead><tr><th scope="col">Variable</th><th scope="col">Default</th><th scope="col">Meaning</th><th scope="col">Source</th></tr></thead><tbody>`)
	for _, r := range rows {
		fmt.Fprintf(&b, `<tr id="%s" data-component="%s" data-debug="%t"><th scope="row"><code>%s</code>`,
			html.EscapeString(r.Anchor()), html.EscapeString(r.Component), r.DebugOnly, strings.ReplaceAll(html.EscapeString(r.Name), "_", "_<wbr>"))
		switch {
		case r.Status == "deprecated" && r.DeprecatedAliasOf != "":
			fmt.Fprintf(&b, ` <span class="badge warn">deprecated: use <a href="#%s">%s</a></span>`, html.EscapeString(r.DeprecatedAliasOf), html.EscapeString(r.DeprecatedAliasOf))
		case r.Status == "deprecated":
			b.WriteString(` <span class="badge warn">deprecated</span>`)
		case r.Status == "removed":
			b.WriteString(` <span class="badge warn">removed</span>`)
		case r.Status == "unread":
			b.WriteString(` <span class="badge">declared, never read</span>`)
		case r.Status == "newer":
			b.WriteString(` <span class="badge">after the pinned release</span>`)
		}
		if r.DebugOnly {
			b.WriteString(` <span class="badge">debugging only</span>`)
		}
		fmt.Fprintf(&b, `<span class="env-meta">read by %s · %s`, html.EscapeString(r.Reader), html.EscapeString(r.Component))
		if r.Type != "" {
			fmt.Fprintf(&b, ` · %s`, html.EscapeString(r.Type))
		}
		fmt.Fprintf(&b, `</span></th><td data-label="Default">%s</td><td data-label="Meaning">%s</td><td data-label="Source">`,
			DefaultHTML(r), html.EscapeString(r.Description))
		if u := link(r); u != "" {
			label := r.File
			if r.Line > 0 {
				label += ":" + strconv.Itoa(r.Line)
			}
			fmt.Fprintf(&b, `<a href="%s">%s</a>`, html.EscapeString(u), breakable(label))
		} else {
			b.WriteString(breakable(r.File))
		}
		b.WriteString(RawDefaultHTML(r))
		b.WriteString("</td></tr>")
	}
	b.WriteString("</tbody></table></div>\n")
	return b.String()
}

// breakable escapes a source path for HTML and lets it wrap after each "/"
// (a <wbr>), so that a long path breaks between its directories.
func breakable(path string) string {
	return strings.ReplaceAll(html.EscapeString(path), "/", "/<wbr>")
}
