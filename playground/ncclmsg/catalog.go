// Package ncclmsg is NCCL's message catalog: every format string NCCL's
// log calls can print (data/messages, generated from the NCCL source by
// playground/ncclmsg/internal/catalog-gen), matched against the messages of
// a log. Match finds the call that printed a message and the values of its
// conversions; the ncclResult_t texts and IB work-completion names come
// with it.
package ncclmsg

import (
	"errors"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Pinned is the release the catalog's main table describes.
const Pinned = "v2.30.7-1"

// OlderSpan names the minor releases whose other wordings the catalog
// keeps (data/messages/nccl-older.tsv, the last patch of each), oldest to
// newest, for the texts that say which releases an unknown line was
// compared with. TestOlderSpan holds it to the releases the files list.
const OlderSpan = "2.7-2.29"

// Entry is one log call of NCCL's source.
type Entry struct {
	// Release is the tag whose file:line the entry points into: Pinned, or
	// for a wording the pinned release no longer prints the newest scanned
	// release that does.
	Release string `json:"release"`
	// Releases is the range of scanned releases that print an older
	// wording ("v2.18.6-1..v2.21.5-1"); empty for the pinned release.
	Releases  string `json:"releases,omitempty"`
	File      string `json:"file"`
	Line      int    `json:"line"`
	EndLine   int    `json:"end_line"`
	Severity  string `json:"severity"`
	Subsystem string `json:"subsystem"`
	// Format is the C format string; empty when the call passes a
	// non-literal format (such entries never match).
	Format string `json:"format"`

	pat pattern
}

// Permalink links the call at its release.
func (e *Entry) Permalink() string {
	u := "https://github.com/NVIDIA/nccl/blob/" + e.Release + "/" + e.File + "#L" + strconv.Itoa(e.Line)
	if e.EndLine > e.Line {
		u += "-L" + strconv.Itoa(e.EndLine)
	}
	return u
}

// Literal is the number of bytes of literal text in the format (spaces not
// counted), the measure Match ranks its candidates by.
func (e *Entry) Literal() int { return e.pat.literal }

// Result is one ncclResult_t value and its ncclGetErrorString text.
type Result struct {
	Code int
	Name string
	Text string
}

// Catalog holds the entries and the lookup tables.
type Catalog struct {
	Entries []*Entry
	Results []Result
	// WCStatus and WCOpcode name the IB work-completion values.
	WCStatus map[int]string
	WCOpcode map[int]string
	// PathTypes names the PATH_* values of each scanned release, indexed
	// by value.
	PathTypes map[string][]string

	byWord  map[string][]*Entry // anchor word -> entries
	noWord  []*Entry            // entries without an anchor word, tried last
	byPlace map[string][]*Entry // "file:line" basename form -> entries
	version map[string]*Entry   // severity -> showVersion's call (versionEntry)
}

// Files names the files Load reads, as paths under data/ (and under the
// playground's directory of the site, where playground/wasm/build.sh
// copies them for the doctor page's binary, built without them).
var Files = []string{"messages/nccl-" + Pinned + ".tsv", "messages/nccl-older.tsv", "messages/nccl-results.tsv", "messages/ibv-wc.tsv", "messages/path-types.tsv"}

// ReadFunc returns the content of one of Files.
type ReadFunc func(name string) ([]byte, error)

var (
	mu      sync.Mutex
	source  ReadFunc = compiledIn()
	loaded  *Catalog
	loadErr error
)

// Provide sets the files Default reads the catalog from, in place of the
// ones compiled in: a program built with the tag nocatalog (the doctor
// page's wasm, which fetches them from the site) has none compiled in and
// calls Provide before anything asks for the catalog. A catalog Default
// read from the previous files is dropped.
func Provide(read ReadFunc) {
	mu.Lock()
	defer mu.Unlock()
	source, loaded, loadErr = read, nil, nil
}

// Default returns the catalog of the files compiled into the program
// (data.Messages) or set by Provide, read once.
func Default() (*Catalog, error) {
	mu.Lock()
	defer mu.Unlock()
	if loaded == nil && loadErr == nil {
		if source == nil {
			return nil, errors.New("NCCL's message catalog is not loaded (this program was built without it and was not given its files)")
		}
		loaded, loadErr = LoadFiles(source)
	}
	return loaded, loadErr
}

// Load reads the catalog files from fsys (the layout of data/messages).
func Load(fsys fs.FS) (*Catalog, error) {
	return LoadFiles(func(name string) ([]byte, error) { return fs.ReadFile(fsys, name) })
}

// LoadFiles reads the catalog from the Files read returns.
func LoadFiles(read ReadFunc) (*Catalog, error) {
	c := &Catalog{WCStatus: map[int]string{}, WCOpcode: map[int]string{}, PathTypes: map[string][]string{}}
	if err := c.readEntries(read, Files[0], false); err != nil {
		return nil, err
	}
	if err := c.readEntries(read, Files[1], true); err != nil {
		return nil, err
	}
	if err := eachRow(read, Files[2], 3, func(f []string, where string) error {
		code, err := strconv.Atoi(f[0])
		if err != nil {
			return errors.New(where + ": code " + strconv.Quote(f[0]))
		}
		c.Results = append(c.Results, Result{Code: code, Name: f[1], Text: f[2]})
		return nil
	}); err != nil {
		return nil, err
	}
	if err := eachRow(read, Files[3], 3, func(f []string, where string) error {
		v, err := strconv.Atoi(f[1])
		if err != nil {
			return errors.New(where + ": value " + strconv.Quote(f[1]))
		}
		switch f[0] {
		case "status":
			c.WCStatus[v] = f[2]
		case "opcode":
			c.WCOpcode[v] = f[2]
		default:
			return errors.New(where + ": enum " + strconv.Quote(f[0]))
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if err := eachRow(read, Files[4], 3, func(f []string, where string) error {
		v, err := strconv.Atoi(f[1])
		if err != nil || v < 0 || v > 64 {
			return errors.New(where + ": value " + strconv.Quote(f[1]))
		}
		names := c.PathTypes[f[0]]
		for len(names) <= v {
			names = append(names, "")
		}
		names[v] = f[2]
		c.PathTypes[f[0]] = names
		return nil
	}); err != nil {
		return nil, err
	}
	c.index()
	return c, nil
}

// PathName returns the name of path type v in release ("v2.21.5-1"), or ""
// if the release was not scanned or has no such value.
func (c *Catalog) PathName(release string, v int) string {
	names := c.PathTypes[release]
	if v < 0 || v >= len(names) {
		return ""
	}
	return names[v]
}

// PathNamings groups the scanned releases by the name they give path type
// v, oldest release first within each group: for v=7, SYS in 2.12-2.25,
// PHB in 2.26, PXN in 2.27.7 and later...
func (c *Catalog) PathNamings(v int) []PathNaming {
	var rels []string
	for r := range c.PathTypes {
		rels = append(rels, r)
	}
	sort.Slice(rels, func(i, j int) bool { return releaseLess(rels[i], rels[j]) })
	var out []PathNaming
	for _, r := range rels {
		name := c.PathName(r, v)
		if name == "" {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Name == name {
			out[n-1].Last = r
			continue
		}
		out = append(out, PathNaming{Name: name, First: r, Last: r})
	}
	return out
}

// PathNaming is a range of releases that give a path type value one name.
type PathNaming struct {
	Name        string
	First, Last string
}

// releaseLess orders "v2.9.1-1" before "v2.18.6-1".
func releaseLess(a, b string) bool {
	pa, pb := releaseParts(a), releaseParts(b)
	for i := range pa {
		if pa[i] != pb[i] {
			return pa[i] < pb[i]
		}
	}
	return false
}

func releaseParts(r string) [4]int {
	var out [4]int
	r = strings.TrimPrefix(r, "v")
	for i, part := range strings.FieldsFunc(r, func(c rune) bool { return c == '.' || c == '-' }) {
		if i < 4 {
			out[i], _ = strconv.Atoi(part)
		}
	}
	return out
}

// ReleaseFor returns the scanned release whose wordings and numbers a
// printed version ("2.21.5") shares: the scanned release of the same minor
// version (the last patch of each minor was scanned), else the newest older
// one; "" when the version is older than every scanned release.
func (c *Catalog) ReleaseFor(version string) string {
	want := releaseParts("v" + version)
	best := ""
	for r := range c.PathTypes {
		p := releaseParts(r)
		if p[0] == want[0] && p[1] == want[1] {
			return r
		}
		if p[0] > want[0] || (p[0] == want[0] && p[1] > want[1]) {
			continue
		}
		if best == "" || releaseLess(best, r) {
			best = r
		}
	}
	return best
}
