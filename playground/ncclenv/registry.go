package ncclenv

import (
	"bytes"
	"embed"
	"encoding/csv"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Reader says which library reads a variable.
type Reader int

// Readers of environment variables.
const (
	ReaderNCCL    Reader = iota // read by libnccl itself
	ReaderPyTorch               // read by PyTorch (ProcessGroupNCCL, torchrun, ...), not by NCCL
)

// String names the reader.
func (r Reader) String() string {
	if r == ReaderPyTorch {
		return "PyTorch"
	}
	return "NCCL"
}

// Var describes one known environment variable, as listed in data/env/*.csv.
type Var struct {
	Name    string
	Default string
	Type    string // e.g. "int64", "string", "enum(path type)"; empty when the table has no type
	Source  string // file:line at the pinned release
	// DeprecatedAliasOf names the variable that replaces this one, if this
	// name is deprecated.
	DeprecatedAliasOf string
	// Status is the table's status column when present: "active",
	// "deprecated", "removed" (read by older releases only) or "unread"
	// (declared but never read).
	Status string
	// DebugOnly marks knobs meant for debugging, not for production runs
	// (the table's debug_only column).
	DebugOnly bool
	Reader    Reader
}

// Deprecated reports whether the variable is a deprecated alias.
func (v Var) Deprecated() bool { return v.DeprecatedAliasOf != "" }

// builtinDeprecated lists the legacy NCCL names the release still reads,
// used when the CSV lacks a deprecated_alias_of column:
// NCCL_MIN_NRINGS/NCCL_MAX_NRINGS ("Legacy naming",
// https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/connect.cc#L327-L332) and
// NCCL_CHECK_POINTERS (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/init.cc#L59),
// superseded by NCCL_CHECK_MODE.
var builtinDeprecated = map[string]string{
	"NCCL_MIN_NRINGS":     "NCCL_MIN_NCHANNELS",
	"NCCL_MAX_NRINGS":     "NCCL_MAX_NCHANNELS",
	"NCCL_CHECK_POINTERS": "NCCL_CHECK_MODE",
}

// Registry is an immutable set of known variable names.
type Registry struct {
	vars  map[string]Var
	names []string // sorted
	// hist holds the letter histogram of every name, with and without its
	// prefix, for Nearest's prefilter.
	hist map[string]letterHist
	// suggested caches Nearest's answers; suggestedN counts the entries.
	suggested  sync.Map
	suggestedN atomic.Int64
}

// Table files inside the data.Env file system.
const (
	ncclTable  = "env/nccl.csv"
	torchTable = "env/torch.csv"
)

// LoadRegistry reads env/nccl.csv (required) and env/torch.csv (optional)
// from fsys. Columns are found by header name; "name" is required, and
// the other columns of tableColumns are used when present.
func LoadRegistry(fsys fs.FS) (*Registry, error) {
	r := &Registry{vars: map[string]Var{}}
	if err := r.loadTable(fsys, ncclTable, ReaderNCCL); err != nil {
		return nil, err
	}
	if err := r.loadTable(fsys, torchTable, ReaderPyTorch); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for name, repl := range builtinDeprecated {
		if v, ok := r.vars[name]; ok && v.Reader == ReaderNCCL && v.DeprecatedAliasOf == "" {
			v.DeprecatedAliasOf = repl
			r.vars[name] = v
		}
	}
	r.hist = make(map[string]letterHist, 2*len(r.vars))
	for n := range r.vars {
		r.names = append(r.names, n)
		r.hist[n] = letters(n)
		r.hist[stripPrefix(n)] = letters(stripPrefix(n))
	}
	sort.Strings(r.names)
	return r, nil
}

func (r *Registry) loadTable(fsys fs.FS, path string, reader Reader) error {
	b, err := fs.ReadFile(fsys, path)
	if err != nil {
		return fmt.Errorf("env registry: %w", err)
	}
	cr := csv.NewReader(bytes.NewReader(b))
	cr.FieldsPerRecord = -1 // rows may leave trailing columns out
	recs, err := cr.ReadAll()
	if err != nil {
		return fmt.Errorf("env registry: %s: %w", path, err)
	}
	if len(recs) == 0 {
		return fmt.Errorf("env registry: %s: no header", path)
	}
	header := recs[0]
	col := map[string]int{}
	for i, h := range header {
		col[strings.ToLower(strings.TrimSpace(h))] = i
	}
	if _, ok := col["name"]; !ok {
		return fmt.Errorf("env registry: %s: no \"name\" column in header %q", path, strings.Join(header, ","))
	}
	get := func(rec []string, key string) string {
		if i, ok := col[key]; ok && i < len(rec) {
			return strings.TrimSpace(rec[i])
		}
		return ""
	}
	for _, rec := range recs[1:] {
		name := get(rec, "name")
		if name == "" {
			continue
		}
		if old, dup := r.vars[name]; dup && old.Reader == ReaderNCCL {
			// The NCCL table wins for names both libraries mention.
			continue
		}
		r.vars[name] = Var{
			Name:              name,
			Default:           get(rec, "default"),
			Type:              get(rec, "type"),
			Source:            get(rec, "file"),
			DeprecatedAliasOf: get(rec, "deprecated_alias_of"),
			Status:            strings.ToLower(get(rec, "status")),
			DebugOnly:         get(rec, "debug_only") == "true",
			Reader:            reader,
		}
	}
	return nil
}

// tableColumns are the columns of data/env/*.csv a Registry reads.
var tableColumns = []string{"name", "default", "type", "file", "deprecated_alias_of", "status", "debug_only"}

// trimmed holds data/env/*.csv with only tableColumns, as env/nccl.csv
// and env/torch.csv: the description column and the others no caller
// reads are most of the tables' bytes, and every wasm binary embeds the
// registry (leaving them out saves about 13 KB gzip per binary).
// TestTrimmedTables keeps the copies equal to data/env; run `go generate
// ./playground/ncclenv` after changing a table there.
//
//go:generate go test -run ^TestTrimmedTables$ -update-generated
//go:embed env/*.csv
var trimmed embed.FS

// defaultRegistry is computed once from the embedded tables and never
// modified afterwards.
var defaultRegistry = sync.OnceValues(func() (*Registry, error) {
	return LoadRegistry(trimmed)
})

// DefaultRegistry returns the registry built from data/env/*.csv (embedded
// in this package with only the columns a Registry reads).
func DefaultRegistry() (*Registry, error) { return defaultRegistry() }

// Lookup returns the variable called exactly name.
func (r *Registry) Lookup(name string) (Var, bool) {
	v, ok := r.vars[name]
	return v, ok
}

// Names returns the known names read by reader, sorted.
func (r *Registry) Names(reader Reader) []string {
	var out []string
	for _, n := range r.names {
		if r.vars[n].Reader == reader {
			out = append(out, n)
		}
	}
	return out
}

// Len returns the number of known names.
func (r *Registry) Len() int { return len(r.names) }

// Bounds on the work of Nearest. No variable NCCL or PyTorch reads has a
// name near maxSuggestLen bytes, so a longer name gets no suggestion
// without any comparison; at most suggestCacheSize answers are kept.
const (
	maxSuggestLen    = 128
	suggestCacheSize = 1024
)

// Nearest returns up to max known names closest to name: an exact match
// ignoring case first, then names equal after adding or removing an NCCL_ /
// TORCH_ prefix, then by edit distance (small distances only), ties broken
// alphabetically. Its work is bounded: a name over maxSuggestLen bytes gets
// none, known names whose length or letters differ too much for the
// distance allowed are skipped before any edit distance is computed, and
// answers are cached per name.
func (r *Registry) Nearest(name string, max int) []string {
	if max <= 0 {
		return nil
	}
	u := strings.ToUpper(strings.TrimSpace(name))
	if len(u) > maxSuggestLen {
		return nil
	}
	key := strconv.Itoa(max) + " " + u
	if v, ok := r.suggested.Load(key); ok {
		return append([]string(nil), v.([]string)...)
	}
	out := r.nearest(u, max)
	if r.suggestedN.Add(1) <= suggestCacheSize {
		r.suggested.Store(key, out)
	}
	return append([]string(nil), out...)
}

func (r *Registry) nearest(u string, max int) []string {
	us := stripPrefix(u)
	type cand struct {
		name string
		d    int
	}
	var cands []cand
	limit := len(us) / 3
	if limit < 2 {
		limit = 2
	}
	hu, hus := letters(u), letters(us)
	for _, k := range r.names {
		var d int
		switch ks := stripPrefix(k); {
		case k == u:
			d = 0
		case ks == us:
			d = 1
		case us == k || u == ks:
			d = 1
		default:
			// A spelling difference, possibly combined with a missing or
			// extra prefix (which costs one more). The edit distance is at
			// least the length difference and at least half the letter
			// count difference; skip names that cannot come within limit.
			hk, hks := r.hist[k], r.hist[ks]
			if lowerBound(u, k, hu, hk) > limit && lowerBound(us, ks, hus, hks)+1 > limit &&
				lowerBound(us, k, hus, hk)+1 > limit && lowerBound(u, ks, hu, hks)+1 > limit {
				continue
			}
			d = min(editDistance(u, k), editDistance(us, ks)+1, editDistance(us, k)+1, editDistance(u, ks)+1)
			if d > limit {
				continue
			}
			d++ // rank every real spelling difference after the prefix/case matches
		}
		cands = append(cands, cand{k, d})
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].d != cands[j].d {
			return cands[i].d < cands[j].d
		}
		return cands[i].name < cands[j].name
	})
	out := make([]string, 0, max)
	for _, c := range cands {
		if len(out) == max {
			break
		}
		out = append(out, c.name)
	}
	return out
}

// letterHist counts the letters, digits and other bytes of a name.
type letterHist [38]uint8

// letters returns the histogram of s (counts saturate at 255).
func letters(s string) letterHist {
	var h letterHist
	for i := 0; i < len(s); i++ {
		c := s[i]
		k := 37
		switch {
		case c >= 'A' && c <= 'Z':
			k = int(c - 'A')
		case c >= '0' && c <= '9':
			k = 26 + int(c-'0')
		case c == '_':
			k = 36
		}
		if h[k] < 255 {
			h[k]++
		}
	}
	return h
}

// lowerBound is a cheap lower bound of editDistance(a, b): an edit changes
// the length by at most one and the letter counts by at most two.
func lowerBound(a, b string, ha, hb letterHist) int {
	d := len(a) - len(b)
	if d < 0 {
		d = -d
	}
	l1 := 0
	for i := range ha {
		x := int(ha[i]) - int(hb[i])
		if x < 0 {
			x = -x
		}
		l1 += x
	}
	return max(d, (l1+1)/2)
}

// stripPrefix removes the library prefixes users tend to add or forget.
func stripPrefix(s string) string {
	for _, p := range []string{"TORCH_NCCL_", "NCCL_", "TORCH_"} {
		if strings.HasPrefix(s, p) {
			return s[len(p):]
		}
	}
	return s
}

// editDistance is the optimal-string-alignment distance (Levenshtein plus
// adjacent transpositions) between a and b.
func editDistance(a, b string) int {
	if a == b {
		return 0
	}
	la, lb := len(a), len(b)
	prev2 := make([]int, lb+1)
	prev := make([]int, lb+1)
	cur := make([]int, lb+1)
	for j := 0; j <= lb; j++ {
		prev[j] = j
	}
	for i := 1; i <= la; i++ {
		cur[0] = i
		for j := 1; j <= lb; j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			v := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				v = min(v, prev2[j-2]+1)
			}
			cur[j] = v
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[lb]
}
