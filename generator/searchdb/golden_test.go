package searchdb

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// -update rewrites the golden files that the browser-side tests read:
//
//	go test -tags sqlite_fts5 ./generator/searchdb/ -run Golden -update
//
// testdata/query_golden.json: the outputs of the pure query functions for many inputs;
// site/assets/js/search/query.test.mjs checks that query.js gives the same.
// testdata/fixture.db and testdata/search_golden.json: the fixture corpus built by Build,
// and the Go search results on it; site/assets/js/search/search.test.mjs runs the same
// searches with @sqlite.org/sqlite-wasm and checks it gets the same top 10.
var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// parityInputs is what a user might type, plus hostile text. Every Parse/Rewrite output for
// these goes into query_golden.json.
var parityInputs = []string{
	"", " ", "   \t\n", "NCCL_P2P_DISABLE", "nccl_p2p_disable", "p2p disable", "NCCL_P2P_DIS",
	"NCCL_P2P_LEVEL=PHB", "ProcessGroupNCCL", "processgroup", "proces group", "process group ",
	"mark_bucket_ready", "markBucketReady", "Reducer::mark_bucket_ready()", "watchdog timeout",
	"watchdog timeout ", "bucket_cap_mb", "why is allreduce slow on 4090", "LL128",
	"reduce_scatter fsdp", "heartbeat abort", "NCCLComm", "fp16CompressHook", "c10d::ProcessGroupNCCL",
	"src/graph/tuning.cc", "torch.distributed.init_process_group", "reduce-scatter", "all-reduce",
	`"NCCL_P2P_DISABLE"`, `"unterminated`, `a"b`, `""""`, "(nccl", "nccl)", "((()))", "AND", "OR",
	"NOT", "nccl AND p2p", "nccl OR p2p", "nccl NOT p2p", "NEAR(nccl p2p)", "nccl*", "*", "-nccl",
	"nccl -p2p", "title:nccl", ":", "^nccl", "nccl^", "{title}: nccl", "+nccl", "the", "the and of",
	"what is the", "why", "café crème", "Ünïcödé ÑCCL", "İstanbul", "ΟΔΟΣ", "Привет мир",
	"東京 nccl", "🚀 nccl 🔥", "🚀", "nccl\u00a0p2p", "x\u0301y", "\u037f", "ǅungla", "½ gpu",
	"a b c d e f g h i j k l m n o p q r s t", strings.Repeat("nccl ", 60),
	strings.Repeat("x", 300), "A_B_C_D_E_F_G_H_I_J_K", "___", "nccl_", "nccl_p2p_", "p2p.",
	"4090", "rtx4090", "RTX4090Ti", "gpu0", "x86_64", "IPv6Address", "HTTPServer",
	"\x00\x01nccl\x02", "wacthdog", "TORCH_NCCL_ASYNC_ERROR_HANDLING=1 torchrun",
	"NCCL_DEBUG=INFO", "nccl_debug=info", "export NCCL_SOCKET_IFNAME=eth0", "EXPORT NCCL_ALGO=Ring",
	"set NCCL_IB_HCA=mlx5_0,mlx5_1", "NCCL_DEBUG=", "=INFO", "NCCL_DEBUG =INFO", "NCCL DEBUG=INFO",
	"sudo export NCCL_DEBUG=INFO", "NCCL_P2P_LEVEL=NVL\t", "A_B_C_D_E_F_G_H_I_J=1", "ñandú_x=1",
	"NCCL_DEBUG=INFO\u00a0x", "x-y=1", "日本=1", "\u000bNCCL_ALGO=Tree\f",
}

// editPairs are inputs for EditDistance with distances worked out by hand.
var editPairs = [][2]string{
	{"", ""}, {"", "abc"}, {"abc", ""}, {"watchdog", "watchdog"}, {"wacthdog", "watchdog"},
	{"proces", "process"}, {"kitten", "sitting"}, {"ca", "abc"}, {"héllo", "hello"},
	{"bucketi", "bucket"}, {"nccl", "ncll"}, {"abcdef", "badcfe"},
}

type goldenParse struct {
	Input  string `json:"input"`
	Terms  []Term `json:"terms"`
	Strict string `json:"strict"`
	Loose  string `json:"loose"`
	Key    string `json:"key"`
	Name   string `json:"name,omitempty"`
	OK     bool   `json:"ok"`
}

type goldenCorrection struct {
	Part  string      `json:"part"`
	Cands []Candidate `json:"cands"`
	Best  string      `json:"best"`
	OK    bool        `json:"ok"`
}

type queryGolden struct {
	WordRunes    string              `json:"wordRunes"`
	WordLower    string              `json:"wordLower"`
	Parse        []goldenParse       `json:"parse"`
	SplitIdent   map[string][]string `json:"splitIdent"`
	EditDistance []map[string]any    `json:"editDistance"`
	NeedsCheck   map[string]bool     `json:"needsCheck"`
	Corrections  []goldenCorrection  `json:"corrections"`
	WithCorr     []goldenParse       `json:"withCorrections"`
	Snippets     map[string]string   `json:"snippets"`
}

func makeQueryGolden() queryGolden {
	g := queryGolden{
		SplitIdent: map[string][]string{},
		NeedsCheck: map[string]bool{},
		Snippets:   map[string]string{},
	}
	var wr, wl strings.Builder
	for r := rune(0); r < 0x600; r++ {
		if isWordRune(r) {
			wr.WriteRune(r)
			wl.WriteRune(lowerRune(r))
		}
	}
	g.WordRunes, g.WordLower = wr.String(), wl.String()
	for _, in := range parityInputs {
		q := Parse(in)
		rw, ok := Rewrite(in)
		g.Parse = append(g.Parse, goldenParse{Input: in, Terms: q.Terms, Strict: rw, Loose: q.Loose(nil), Key: q.Key(), Name: q.Name, OK: ok})
		for _, w := range strings.Fields(in) {
			g.SplitIdent[w] = SplitIdent(w)
		}
	}
	for _, p := range editPairs {
		g.EditDistance = append(g.EditDistance, map[string]any{"a": p[0], "b": p[1], "d": EditDistance(p[0], p[1])})
	}
	for _, s := range []string{"", "abc", "abcd", "4090", "4090x", "x86_64", "café", "procss", "ncc1"} {
		g.NeedsCheck[s] = NeedsCheck(s)
	}
	vocab := []Candidate{{"proce", 3}, {"process", 7}, {"processgroup", 2}, {"procur", 1}, {"watchdog", 5}, {"watchdogs", 5}, {"wait", 9}}
	for _, p := range []string{"proces", "procss", "prcess", "wachdog", "watchdgo", "wiat", "zzzz", "process"} {
		best, ok := BestCorrection(p, vocab)
		g.Corrections = append(g.Corrections, goldenCorrection{Part: p, Cands: vocab, Best: best, OK: ok})
	}
	corr := Corrections{"proces": "process", "disable*": "disabl", "wachdog": "watchdog"}
	for _, in := range []string{"proces group", "nccl_p2p_disable", "wachdog timeout", "proces", "proces_group"} {
		q := Parse(in)
		g.WithCorr = append(g.WithCorr, goldenParse{Input: in, Terms: q.Terms, Strict: q.Strict(corr), Loose: q.Loose(corr), Key: q.Key(), OK: !q.Empty()})
	}
	for _, s := range []string{"", "plain", "a<b>&\"c\"'d'", "\x01NCCL\x02_P2P", "…\x01x\x02 <script>"} {
		g.Snippets[s] = SnippetHTML(s)
	}
	return g
}

// searchQueries are run on the fixture database for the browser parity test.
var searchQueries = []struct {
	Query string `json:"query"`
	Kind  string `json:"kind"`
	Limit int    `json:"limit"`
}{
	{"NCCL_P2P_DISABLE", "", 10}, {"p2p disable", "", 10}, {"processgroup", "", 10},
	{"proces group", "", 10}, {"mark_bucket_ready", "", 10}, {"watchdog timeout", "", 10},
	{"wachdog", "", 10}, {"why is allreduce slow on 4090", "", 10}, {"LL128", "", 10},
	{"reduce_scatter fsdp", "", 10}, {"heartbeat abort", "", 10}, {"nccl", "", 10},
	{"nccl", "env", 10}, {"nccl", "", 50}, {"bucket", "section", 3}, {"timeout", "", 10},
	{"the", "", 10}, {`"(AND*`, "", 10}, {"🚀", "", 10}, {"café", "", 10}, {"ncc", "", 10},
	{"p", "", 10}, {"watchd", "", 10}, {"bucketi", "", 10}, {"tuning.cc", "", 10},
	{"NCCL_DEBUG=INFO", "", 10}, {"export NCCL_SOCKET_IFNAME=eth0", "", 10},
	{"NCCL_IB_HCA=mlx5_0,mlx5_1", "env", 5}, {"NCCL_P2P_LEVEL=PHB", "", 10},
}

type searchCase struct {
	Query   string   `json:"query"`
	Kind    string   `json:"kind"`
	Limit   int      `json:"limit"`
	Results []Result `json:"results"`
}

func marshalGolden(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale: the Go side changed; rerun with -update, then run the node tests (node --test site/assets/js/search/)", path)
	}
}

// TestQueryGolden keeps testdata/query_golden.json in step with the Go code; the JS port is
// checked against that file by query.test.mjs.
func TestQueryGolden(t *testing.T) {
	checkGolden(t, "query_golden.json", marshalGolden(t, makeQueryGolden()))
}

// TestSearchGolden builds the fixture database, checks it is byte-identical to the committed
// testdata/fixture.db (so the build is reproducible across runs and machines with the same
// SQLite), and keeps the Go results in testdata/search_golden.json for search.test.mjs.
func TestSearchGolden(t *testing.T) {
	db, path := buildDB(t, loadFixture(t))
	built, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "fixture.db", built)
	var out []searchCase
	for _, c := range searchQueries {
		res, err := db.Search(context.Background(), c.Query, Options{Kind: c.Kind, Limit: c.Limit})
		if err != nil {
			t.Fatalf("Search(%q): %v", c.Query, err)
		}
		out = append(out, searchCase{Query: c.Query, Kind: c.Kind, Limit: c.Limit, Results: res})
	}
	checkGolden(t, "search_golden.json", marshalGolden(t, out))
}
