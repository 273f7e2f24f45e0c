package searchdb

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSplitIdent(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"NCCL_P2P_DISABLE", []string{"nccl", "p2p", "disable"}},
		{"nccl_p2p_disable", []string{"nccl", "p2p", "disable"}},
		{"ProcessGroupNCCL", []string{"process", "group", "nccl"}},
		{"mark_bucket_ready", []string{"mark", "bucket", "ready"}},
		{"markBucketReady", []string{"mark", "bucket", "ready"}},
		{"NCCLComm", []string{"nccl", "comm"}},
		{"fp16CompressHook", []string{"fp16", "compress", "hook"}},
		{"LL128", []string{"ll128"}},
		{"c10d::ProcessGroupNCCL", []string{"c10d", "process", "group", "nccl"}},
		{"src/graph/tuning.cc", []string{"src", "graph", "tuning", "cc"}},
		{"reduce-scatter", []string{"reduce", "scatter"}},
		{"RTX4090", []string{"rtx4090"}},
		{"x86_64", []string{"x86", "64"}},
		{"HTTPServer", []string{"http", "server"}},
		{"___", nil},
		{"Ünïcödé", []string{"ünïcödé"}},
		{"İ", []string{"i"}}, // simple case mapping, as JS lowerRune special-cases
		{"a🚀b", []string{"a", "b"}},
	}
	for _, tt := range tests {
		if got := SplitIdent(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("SplitIdent(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want []Term
	}{
		{"", nil},
		{"  ", nil},
		{"🚀 ()", nil},
		{"watchdog", []Term{{Parts: []string{"watchdog"}, Prefix: true}}},
		{"watchdog ", []Term{{Parts: []string{"watchdog"}}}},
		{"why is allreduce slow on 4090", []Term{{Parts: []string{"allreduce"}}, {Parts: []string{"slow"}}, {Parts: []string{"4090"}, Prefix: true}}},
		// Only stop words: keep them rather than search for nothing.
		{"the of ", []Term{{Parts: []string{"the"}}, {Parts: []string{"of"}}}},
		// A stop word being typed is kept ("the" may become "thread").
		{"watchdog the", []Term{{Parts: []string{"watchdog"}}, {Parts: []string{"the"}, Prefix: true}}},
		{"NCCL_P2P_LEVEL=PHB", []Term{{Parts: []string{"nccl", "p2p", "level"}}, {Parts: []string{"phb"}, Prefix: true}}},
		{"nccl_", []Term{{Parts: []string{"nccl"}, Prefix: true}}},
		{`"AND" (OR)`, []Term{{Parts: []string{"and"}}, {Parts: []string{"or"}}}},
		{"nccl ::", []Term{{Parts: []string{"nccl"}}}},
	}
	for _, tt := range tests {
		if got := Parse(tt.in).Terms; !slices.EqualFunc(got, tt.want, func(a, b Term) bool {
			return a.Prefix == b.Prefix && slices.Equal(a.Parts, b.Parts)
		}) {
			t.Errorf("Parse(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func TestParseBounds(t *testing.T) {
	long := strings.Repeat("abc ", 100) // 400 runes, 100 words
	q := Parse(long)
	if len(q.Terms) != MaxTerms {
		t.Errorf("terms = %d, want MaxTerms = %d", len(q.Terms), MaxTerms)
	}
	// Only the first MaxQueryRunes code points are read: a word starting after them is lost.
	q = Parse(strings.Repeat(" ", MaxQueryRunes) + "nccl")
	if !q.Empty() {
		t.Errorf("text past MaxQueryRunes was read: %+v", q)
	}
	q = Parse("A_B_C_D_E_F_G_H_I_J")
	if len(q.Terms) != 1 || len(q.Terms[0].Parts) != MaxPartsPerTerm {
		t.Errorf("parts = %+v, want %d parts", q.Terms, MaxPartsPerTerm)
	}
}

func TestRewrite(t *testing.T) {
	tests := []struct {
		in     string
		want   string
		wantOK bool
	}{
		{"", "", false},
		{"\"()*", "", false},
		{"watchdog", `"watchdog"*`, true},
		{"watchdog timeout ", `"watchdog" AND "timeout"`, true},
		{"NCCL_P2P_DISABLE", `("ncclp2pdisable"* OR ("nccl" AND "p2p" AND "disable"*))`, true},
		{"processGroup abort", `("processgroup" OR ("process" AND "group")) AND "abort"*`, true},
		{`x"y`, `"x" AND "y"*`, true},
		{`a"b`, `"b"*`, true}, // "a" is a stop word
		{"NOT nccl", `"nccl"*`, true},
		{"NEAR(x y)", `"near" AND "x" AND "y"`, true},
		{"title:nccl", `("titlenccl"* OR ("title" AND "nccl"*))`, true},
	}
	for _, tt := range tests {
		got, ok := Rewrite(tt.in)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("Rewrite(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestStrictLooseWithCorrections(t *testing.T) {
	q := Parse("proces group")
	corr := Corrections{"proces": "process"}
	if got, want := q.Strict(corr), `("proces" OR "process") AND "group"*`; got != want {
		t.Errorf("Strict = %q, want %q", got, want)
	}
	if got, want := q.Loose(corr), `("proces" OR "process") OR "group"*`; got != want {
		t.Errorf("Loose = %q, want %q", got, want)
	}
	if got, want := q.Key(), "procesgroup"; got != want {
		t.Errorf("Key = %q, want %q", got, want)
	}
}

func TestEditDistance(t *testing.T) {
	// Distances worked out by hand for the optimal-string-alignment metric.
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"watchdog", "watchdog", 0},
		{"wacthdog", "watchdog", 1}, // one transposition
		{"proces", "process", 1},    // one insertion
		{"kitten", "sitting", 3},    // k->s, e->i, +g
		{"ca", "abc", 3},            // OSA (not full Damerau, which gives 2)
		{"héllo", "hello", 1},       // counted in code points, not bytes
		{"abcdef", "badcfe", 3},     // three transpositions
	}
	for _, tt := range tests {
		if got := EditDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := EditDistance(tt.b, tt.a); got != tt.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d (symmetry)", tt.b, tt.a, got, tt.want)
		}
	}
}

func TestBestCorrection(t *testing.T) {
	vocab := []Candidate{{"proce", 3}, {"process", 7}, {"procur", 1}, {"wait", 9}, {"watchdog", 5}}
	tests := []struct {
		part, want string
		ok         bool
	}{
		{"proces", "process", true}, // "proce" and "process" are both 1 away; more records wins
		{"wachdog", "watchdog", true},
		{"wiat", "wait", true},      // transposition, 4 letters allow 1 edit
		{"wxyz", "", false},         // nothing within 1 edit
		{"procss", "process", true}, // 6 letters allow 2 edits; process is 1 away, proce and procur 2
		{"watchdgoxx", "", false},   // 3 edits from watchdog
		{"process", "proce", true},  // the part itself is skipped; the next closest at 2 edits
	}
	for _, tt := range tests {
		got, ok := BestCorrection(tt.part, vocab)
		if got != tt.want || ok != tt.ok {
			t.Errorf("BestCorrection(%q) = %q, %v; want %q, %v", tt.part, got, ok, tt.want, tt.ok)
		}
	}
}

// TestLowerStaysWordRune: lower-casing never turns a word rune into a separator, so a part
// is always made of word runes (which is what keeps each quoted token one FTS5 token).
func TestLowerStaysWordRune(t *testing.T) {
	for r := rune(0); r < 0x600; r++ {
		if isWordRune(r) && !isWordRune(lowerRune(r)) {
			t.Errorf("%U lowers to %U, not a word rune", r, lowerRune(r))
		}
	}
}

func TestNeedsCheckAndMaxEdits(t *testing.T) {
	for s, want := range map[string]bool{"abc": false, "abcd": true, "4090": false, "4090x": true, "café": false, "x86_64": false} {
		if got := NeedsCheck(s); got != want {
			t.Errorf("NeedsCheck(%q) = %v, want %v", s, got, want)
		}
	}
	for s, want := range map[string]int{"abcd": 1, "abcde": 1, "abcdef": 2, "abcdefghij": 2} {
		if got := MaxEdits(s); got != want {
			t.Errorf("MaxEdits(%q) = %d, want %d", s, got, want)
		}
	}
}

// safeExpr is the whole grammar Rewrite may produce: quoted tokens of word runes (with an
// optional prefix star), AND, OR and parentheses.
var safeExpr = regexp.MustCompile(`^(?:"[^"\s]+"\*?|AND|OR|\(|\)| )*$`)

func FuzzRewrite(f *testing.F) {
	for _, s := range parityInputs {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		expr, ok := Rewrite(s)
		if ok != (expr != "") {
			t.Fatalf("Rewrite(%q) = %q, %v", s, expr, ok)
		}
		if !safeExpr.MatchString(expr) {
			t.Fatalf("Rewrite(%q) = %q: not only quoted tokens and operators", s, expr)
		}
		if !utf8.ValidString(expr) {
			t.Fatalf("Rewrite(%q) = %q: invalid UTF-8", s, expr)
		}
		q := Parse(s)
		if len(q.Terms) > MaxTerms {
			t.Fatalf("Parse(%q): %d terms", s, len(q.Terms))
		}
		for _, tm := range q.Terms {
			if len(tm.Parts) == 0 || len(tm.Parts) > MaxPartsPerTerm {
				t.Fatalf("Parse(%q): term %+v", s, tm)
			}
			for _, p := range tm.Parts {
				for _, r := range p {
					if !isWordRune(r) {
						t.Fatalf("Parse(%q): part %q has %U", s, p, r)
					}
				}
			}
		}
	})
}
