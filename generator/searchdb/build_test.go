package searchdb

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestBuildReproducible: the same records, in any order, give the same bytes.
func TestBuildReproducible(t *testing.T) {
	requireFTS5(t)
	recs := loadFixture(t)
	shuffled := slices.Clone(recs)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	dir := t.TempDir()
	var files [][]byte
	for i, rs := range [][]Record{recs, recs, shuffled} {
		path := filepath.Join(dir, "s"+string(rune('0'+i))+".db")
		if err := Build(context.Background(), path, rs); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, b)
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Error("two builds of the same records differ")
	}
	if !bytes.Equal(files[0], files[2]) {
		t.Error("a build of the same records in another order differs")
	}
	if len(files[0])%pageSize != 0 {
		t.Errorf("size %d is not a multiple of the page size %d", len(files[0]), pageSize)
	}
	// A different input must give different bytes, or the comparison above proves nothing.
	recs[0].Text += " changed"
	other := filepath.Join(dir, "other.db")
	if err := Build(context.Background(), other, recs); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(other)
	if bytes.Equal(b, files[0]) {
		t.Error("a changed record gave the same bytes")
	}
}

func TestBuildRejectsBadRecords(t *testing.T) {
	requireFTS5(t)
	good := Record{Kind: KindEnv, Title: "NCCL_DEBUG", URL: "env/#nccl_debug"}
	tests := []struct {
		name string
		edit func(*Record)
		want string
	}{
		{"kind", func(r *Record) { r.Kind = "blog" }, "kind"},
		{"empty kind", func(r *Record) { r.Kind = "" }, "kind"},
		{"title", func(r *Record) { r.Title = " \n " }, "empty title"},
		{"url", func(r *Record) { r.URL = "" }, "empty URL"},
		{"absolute url", func(r *Record) { r.URL = "/env/" }, "relative"},
		{"scheme", func(r *Record) { r.URL = "https://example.com/env/" }, "relative"},
		{"space", func(r *Record) { r.URL = "env/ x" }, "relative"},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := good
			tt.edit(&r)
			err := Build(context.Background(), filepath.Join(dir, "x.db"), []Record{good, r})
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "record 1") {
				t.Errorf("Build error = %v, want one naming record 1 and %q", err, tt.want)
			}
		})
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("failed builds left files: %v", entries)
	}
}

// TestBuildAtomic: a build replaces the old file only when it succeeded, and leaves no
// temporary file behind either way.
func TestBuildAtomic(t *testing.T) {
	requireFTS5(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "search.db")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := []Record{{Kind: "nope", Title: "x", URL: "x/"}}
	if err := Build(context.Background(), path, bad); err == nil {
		t.Fatal("Build accepted a bad record")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Build(ctx, path, loadFixture(t)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Build with a cancelled context: %v, want context.Canceled", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Fatalf("failed builds changed the file: %q", b)
	}
	if err := Build(context.Background(), path, loadFixture(t)); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if !bytes.HasPrefix(b, []byte("SQLite format 3\x00")) {
		t.Fatalf("not an SQLite file: %q", b[:16])
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only search.db: %v", len(entries), entries)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
}

func TestBuildEmpty(t *testing.T) {
	db, _ := buildDB(t, nil)
	res, err := db.Search(context.Background(), "nccl", Options{})
	if err != nil || len(res) != 0 {
		t.Errorf("Search on an empty db = %v, %v; want no results", res, err)
	}
}

func TestIdentText(t *testing.T) {
	tests := []struct {
		rec  Record
		want string
	}{
		{Record{Title: "NCCL_P2P_DISABLE"}, "nccl p2p disable ncclp2p p2pdisable ncclp2pdisable"},
		{Record{Title: "Watchdog", Identifiers: []string{"ProcessGroupNCCL"}}, "process group nccl processgroup groupnccl processgroupnccl"},
		// Title words that are not identifiers add nothing; a duplicate adds nothing.
		{Record{Title: "DDP Reducer bucketing", Identifiers: []string{"bucket_cap_mb", "bucket_cap_mb"}}, "bucket cap mb bucketcap capmb bucketcapmb"},
		{Record{Title: "Plain title"}, ""},
		// Runs stop at scope and path separators.
		{Record{Title: "c10d::Reducer", Identifiers: []string{""}}, "c10d reducer"},
		{Record{Title: "x", Identifiers: []string{"src/graph/tuning.cc", "torch.distributed.init_process_group"}}, "src graph tuning cc torch distributed init process group initprocess processgroup initprocessgroup"},
	}
	for _, tt := range tests {
		if got := tt.rec.identText(); got != tt.want {
			t.Errorf("identText(%+v) = %q, want %q", tt.rec, got, tt.want)
		}
	}
}

func TestCleanText(t *testing.T) {
	for in, want := range map[string]string{
		"  a\n\tb  ":       "a b",
		"x\x01y\x02z":      "x y z",
		"keep <b>&</b> it": "keep <b>&</b> it",
		"":                 "",
	} {
		if got := cleanText(in); got != want {
			t.Errorf("cleanText(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCutText(t *testing.T) {
	tests := []struct {
		in     string
		n      int
		stored string
		rest   string
	}{
		{"short", 10, "short", ""},
		{"short", 0, "short", ""},
		{"one two three four", 9, "one two …", "three four"},                 // back to the space before "three"
		{"abcdefghijkl", 6, "abcdef …", "ghijkl"},                            // no space in the second half: hard cut
		{"héllo wörld again", 11, "héllo wörld …", "again"},                  // counted in code points
		{"aaaa bbbbbbbbbbbbbbbbbbbb", 20, "aaaa bbbbbbbbbbbbbbb …", "bbbbb"}, // space only in the first half
	}
	for _, tt := range tests {
		if stored, rest := cutText(tt.in, tt.n); stored != tt.stored || rest != tt.rest {
			t.Errorf("cutText(%q, %d) = %q, %q; want %q, %q", tt.in, tt.n, stored, rest, tt.stored, tt.rest)
		}
	}
}

// TestStoredTextRunes: with a short stored text, a word past the stored part is still found
// (it is indexed), its snippet is the stored beginning, and matches inside it are marked.
func TestStoredTextRunes(t *testing.T) {
	requireFTS5(t)
	recs := []Record{{Kind: KindSection, Title: "Long", URL: "long/", Text: "watchdog " + strings.Repeat("filler ", 100) + "zebraword"}}
	path := filepath.Join(t.TempDir(), "s.db")
	if err := BuildWithOptions(context.Background(), path, recs, BuildOptions{StoredTextRunes: 40}); err != nil {
		t.Fatal(err)
	}
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	res, err := db.Search(context.Background(), "zebraword", Options{})
	if err != nil || len(res) != 1 {
		t.Fatalf("Search(zebraword) = %v, %v; want the record", res, err)
	}
	if strings.Contains(res[0].Snippet, "zebraword") || !strings.HasPrefix(res[0].Snippet, "watchdog filler") {
		t.Errorf("snippet = %q, want the stored beginning only", res[0].Snippet)
	}
	res, _ = db.Search(context.Background(), "watchdog zebraword", Options{})
	if len(res) != 1 || !strings.Contains(res[0].Snippet, "<mark>watchdog</mark>") {
		t.Errorf("snippet = %v, want watchdog marked", res)
	}
}
