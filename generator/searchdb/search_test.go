package searchdb

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// hostileInputs must give results or none, never an error.
var hostileInputs = []string{
	`"`, `""`, `"""`, `"nccl`, `nccl"`, `(`, `)`, `(nccl`, `nccl)`, `((()))`, `AND`, `OR`, `NOT`,
	`nccl AND`, `AND nccl`, `nccl OR OR p2p`, `NOT NOT`, `NEAR`, `NEAR(nccl p2p, 2)`, `NEAR/3`,
	`*`, `nccl*`, `*nccl`, `-`, `-nccl`, `nccl -p2p`, `:`, `title:nccl`, `text:`, `{title text}: x`,
	`^`, `^nccl`, `+`, `nccl + p2p`, `'`, `';--`, `%`, `_`, `\`, `\"`, "\x00", "\x00nccl", "\x01\x02",
	"café", "ÑCCL", "İ", "ǅ", "ΟΔΟΣ", "Привет", "東京", "🚀", "🚀nccl🔥", "👩‍👩‍👧", "\u200b",
	"nccl\u00a0p2p", "x\u0301", "\ufeffnccl", string([]byte{0xff, 0xfe, 'n'}), "\u037f", "Ⱥ",
	strings.Repeat("a", 10000), strings.Repeat("nccl ", 2000), strings.Repeat(`"(`, 500),
	strings.Repeat("A_", 100), strings.Repeat("ab ", 5000),
}

func TestSearchHostileInput(t *testing.T) {
	db := fixtureDB(t)
	for _, in := range hostileInputs {
		if _, err := db.Search(context.Background(), in, Options{}); err != nil {
			t.Errorf("Search(%.40q): %v", in, err)
		}
	}
}

// TestWordRunesAreSingleTokens: every rune Parse keeps, lower-cased and put between two
// letters, is one token for SQLite's tokenizer (the one search.db uses), so a quoted part
// is never a phrase. Each probe is indexed as a document of a scratch FTS5 table and the
// tokens of that document are counted.
func TestWordRunesAreSingleTokens(t *testing.T) {
	requireFTS5(t)
	sdb, err := sql.Open("sqlite3", "file::memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	sdb.SetMaxOpenConns(1)
	for _, q := range []string{
		`CREATE VIRTUAL TABLE probe USING fts5(x, tokenize = 'porter unicode61 remove_diacritics 2')`,
		`CREATE VIRTUAL TABLE probe_v USING fts5vocab(probe, 'instance')`,
	} {
		if _, err := sdb.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	probes := map[int64]string{}
	var id int64
	for r := rune(0); r < 0x600; r++ {
		if isWordRune(r) {
			id++
			probes[id] = "a" + string(lowerRune(r)) + "b"
		}
	}
	probes[id+1] = "a b" // a control probe: two tokens, so the count below can fail
	for i, p := range probes {
		if _, err := sdb.Exec("INSERT INTO probe(rowid, x) VALUES (?, ?)", i, p); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := sdb.Query("SELECT doc, count(*) FROM probe_v GROUP BY doc")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	counts := map[int64]int{}
	for rows.Next() {
		var doc int64
		var n int
		rows.Scan(&doc, &n)
		counts[doc] = n
	}
	for i, p := range probes {
		want := 1
		if i == id+1 {
			want = 2
		}
		if counts[i] != want {
			t.Errorf("%q (%U) is %d tokens, want %d", p, []rune(p)[1], counts[i], want)
		}
	}
	if id < 600 {
		t.Errorf("only %d word runes checked", id)
	}
}

func FuzzSearch(f *testing.F) {
	requireFTS5(f)
	for _, s := range slices.Concat(hostileInputs[:20], parityInputs) {
		f.Add(s)
	}
	db := fixtureDB(f)
	f.Fuzz(func(t *testing.T, s string) {
		res, err := db.Search(context.Background(), s, Options{})
		if err != nil {
			t.Fatalf("Search(%q): %v", s, err)
		}
		if len(res) > DefaultLimit {
			t.Fatalf("Search(%q): %d results", s, len(res))
		}
	})
}

func TestSearchKindAndLimit(t *testing.T) {
	db := fixtureDB(t)
	ctx := context.Background()
	all, err := db.Search(ctx, "nccl", Options{Limit: MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) <= DefaultLimit {
		t.Fatalf("only %d results for nccl; the fixture should have more than %d", len(all), DefaultLimit)
	}
	def, _ := db.Search(ctx, "nccl", Options{})
	if len(def) != DefaultLimit {
		t.Errorf("default limit: %d results, want %d", len(def), DefaultLimit)
	}
	big, _ := db.Search(ctx, "nccl", Options{Limit: 1000})
	if len(big) != len(all) {
		t.Errorf("limit 1000: %d results, want the MaxLimit result count %d", len(big), len(all))
	}
	three, _ := db.Search(ctx, "nccl", Options{Limit: 3})
	if len(three) != 3 || three[0] != all[0] || three[2] != all[2] {
		t.Errorf("limit 3 is not the first 3 of the full list: %v", three)
	}
	for _, k := range Kinds {
		res, err := db.Search(ctx, "nccl", Options{Kind: k, Limit: MaxLimit})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.Kind != k {
				t.Errorf("kind %s: got a %s result %s", k, r.Kind, r.URL)
			}
		}
		if k == KindEnv && len(res) < 5 {
			t.Errorf("kind env: %d results, want the fixture's NCCL env vars", len(res))
		}
	}
	if _, err := db.Search(ctx, "nccl", Options{Kind: "blog"}); err == nil || !strings.Contains(err.Error(), "unknown kind") {
		t.Errorf("unknown kind: err = %v", err)
	}
	res, err := db.Search(ctx, "  ", Options{})
	if err != nil || res != nil {
		t.Errorf("blank query = %v, %v; want nil, nil", res, err)
	}
}

// TestSearchOrder: rows matching every word come before rows matching only some, and an
// exact title match comes first.
func TestSearchOrder(t *testing.T) {
	db := fixtureDB(t)
	const text = "watchdog heartbeat "
	res, err := db.Search(context.Background(), text, Options{Limit: MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	strict := map[string]bool{}
	rows, err := db.db.Query("SELECT docs.url FROM search JOIN docs ON docs.id = search.rowid WHERE search MATCH ?", Parse(text).Strict(nil))
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var u string
		rows.Scan(&u)
		strict[u] = true
	}
	rows.Close()
	nStrict, seenLoose := 0, false
	for _, r := range res {
		switch {
		case !strict[r.URL]:
			seenLoose = true
		case seenLoose:
			t.Errorf("%s matches every word but ranks after a partial match", r.URL)
		default:
			nStrict++
		}
	}
	if nStrict == 0 || !seenLoose || nStrict != len(strict) {
		t.Errorf("%d rows match every word (want %d), partial matches seen: %v", nStrict, len(strict), seenLoose)
	}
	res, _ = db.Search(context.Background(), "processgroupnccl ", Options{})
	if len(res) < 2 || res[0].Title != "ProcessGroupNCCL" || res[1].Title != "ProcessGroupNCCL" {
		t.Errorf("exact title matches are not first: %v", res)
	}
}

// TestIdentOutranksBody: a record that names an identifier ranks above one that only
// mentions its words, even when the identifier is neither in its title nor in its text (the
// ident column is indexed but not stored, so it only counts if bm25 reads the index).
func TestIdentOutranksBody(t *testing.T) {
	db, _ := buildDB(t, []Record{
		{Kind: KindSection, Title: "Other", URL: "body/", Text: "foo and bar and baz mentioned in the body text of this record"},
		{Kind: KindSymbol, Title: "Some section", URL: "ident/", Text: "unrelated words here", Identifiers: []string{"foo_bar_baz"}},
	})
	for _, q := range []string{"foo bar baz ", "foo_bar_baz", "foobarbaz"} {
		res, err := db.Search(context.Background(), q, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res) == 0 || res[0].URL != "ident/" {
			t.Errorf("%q: %v, want ident/ first", q, res)
		}
	}
}

func TestSearchSnippet(t *testing.T) {
	db, _ := buildDB(t, []Record{{
		Kind: KindSection, Title: "Escaping", URL: "x/#escaping",
		Text: `Use <script>alert("x")</script> & 'quotes' with the watchdog`,
	}})
	res, err := db.Search(context.Background(), "watchdog", Options{})
	if err != nil || len(res) != 1 {
		t.Fatalf("Search = %v, %v", res, err)
	}
	want := `Use &lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; &#39;quotes&#39; with the <mark>watchdog</mark>`
	if res[0].Snippet != want {
		t.Errorf("snippet = %q\nwant      %q", res[0].Snippet, want)
	}
}

func TestSnippetText(t *testing.T) {
	r := Result{Snippet: SnippetHTML("a <b> & \x01NCCL\x02_P2P \"q\" 'x'")}
	if got, want := r.SnippetText("[", "]"), `a <b> & [NCCL]_P2P "q" 'x'`; got != want {
		t.Errorf("SnippetText = %q, want %q", got, want)
	}
	if got, want := r.SnippetText("", ""), `a <b> & NCCL_P2P "q" 'x'`; got != want {
		t.Errorf("SnippetText = %q, want %q", got, want)
	}
}

func TestSearchCorrections(t *testing.T) {
	db := fixtureDB(t)
	ctx := context.Background()
	tests := []struct {
		in   string
		key  string
		want string
	}{
		{"wacthdog ", "wacthdog", "watchdog"}, // transposition
		{"proces group", "proces", "process"},
		{"heartbaet ", "heartbaet", "heartbeat"},
		{"bucketi", "bucketi*", "bucket"}, // typed prefix that no term starts with
	}
	for _, tt := range tests {
		corr, err := db.Corrections(ctx, Parse(tt.in))
		if err != nil {
			t.Fatal(err)
		}
		if corr[tt.key] != tt.want {
			t.Errorf("Corrections(%q) = %v, want %s -> %s", tt.in, corr, tt.key, tt.want)
		}
	}
	// Known words, short words, numbers and typed prefixes of known terms are left alone.
	for _, in := range []string{"watchdog ", "ncl ", "4090 ", "watchd", "cafe "} {
		corr, err := db.Corrections(ctx, Parse(in))
		if err != nil {
			t.Fatal(err)
		}
		if len(corr) != 0 {
			t.Errorf("Corrections(%q) = %v, want none", in, corr)
		}
	}
}

func TestSearchContext(t *testing.T) {
	db := fixtureDB(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := db.Search(ctx, "nccl", Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v, want context.Canceled", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	time.Sleep(time.Millisecond)
	if _, err := db.Search(ctx, "nccl", Options{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("expired: err = %v, want context.DeadlineExceeded", err)
	}
}

func TestOpenErrors(t *testing.T) {
	requireFTS5(t)
	dir := t.TempDir()
	if _, err := Open(filepath.Join(dir, "missing.db")); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("directory: %v", err)
	}
	junk := filepath.Join(dir, "junk.db")
	os.WriteFile(junk, []byte(strings.Repeat("not a database ", 500)), 0o644)
	if _, err := Open(junk); err == nil {
		t.Error("junk file opened")
	}
	// A valid SQLite file with another schema version is refused by name.
	other := filepath.Join(dir, "other.db")
	sdb, err := sql.Open("sqlite3", "file:"+other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sdb.Exec("PRAGMA user_version = 7; CREATE TABLE t(x)"); err != nil {
		t.Fatal(err)
	}
	sdb.Close()
	if _, err := Open(other); err == nil || !strings.Contains(err.Error(), "schema version 7") {
		t.Errorf("wrong version: %v", err)
	}
}
