package ncclenv

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func fill(rows, cols, v int) [][]int {
	m := make([][]int, rows)
	for i := range m {
		m[i] = make([]int, cols)
		for j := range m[i] {
			m[i][j] = v
		}
	}
	return m
}

// The expected matrices apply the rules of parseList
// (src/graph/tuning.cc:36-136 at v2.30.7-1); the first three values are the
// examples in its own comment. Rows: Broadcast, Reduce, AllGather,
// ReduceScatter, AllReduce. Columns: LL, LL128, Simple.
func TestParseListProto(t *testing.T) {
	all := func(r []int) [][]int { return [][]int{r, r, r, r, r} }
	tests := []struct {
		in   string
		want [][]int
	}{
		{"LL,Simple;allreduce:^LL", [][]int{{1, 0, 1}, {1, 0, 1}, {1, 0, 1}, {1, 0, 1}, {0, 1, 1}}},
		{"^LL128;allreduce:LL128", [][]int{{1, 0, 1}, {1, 0, 1}, {1, 0, 1}, {1, 0, 1}, {0, 1, 0}}},
		{"simple", all([]int{0, 0, 1})},
		{"SIMPLE", all([]int{0, 0, 1})},
		{"^", all([]int{1, 1, 1})},           // '^' with no names: everything on (LL128 forced to 1)
		{"", all([]int{1, 2, 1})},            // empty value: nothing changes
		{";;", all([]int{1, 2, 1})},          // strtok skips empty entries
		{"LL,,Simple,", all([]int{1, 0, 1})}, // and empty elements
		{":LL", all([]int{1, 0, 0})},         // a leading ':' is skipped by strtok: no prefix
		{"allreduce:LL:Simple", [][]int{{1, 2, 1}, {1, 2, 1}, {1, 2, 1}, {1, 2, 1}, {1, 0, 0}}}, // text after a 2nd ':' is ignored
		{"AllGather:^Simple", [][]int{{1, 2, 1}, {1, 2, 1}, {1, 1, 0}, {1, 2, 1}, {1, 2, 1}}},
	}
	for _, tt := range tests {
		m := fill(5, 3, 1)
		for _, r := range m {
			r[1] = 2
		}
		if err := ParseList(tt.in, FuncNames(), ProtoNames(), m); err != nil {
			t.Errorf("ParseList(%q): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(m, tt.want) {
			t.Errorf("ParseList(%q) = %v, want %v", tt.in, m, tt.want)
		}
	}
}

func TestParseListAlgoComment(t *testing.T) {
	// "ring,collnetdirect;allreduce:tree,collnetdirect;broadcast:ring" from the comment at tuning.cc:45.
	m := fill(5, 7, 1)
	if err := ParseList("ring,collnetdirect;allreduce:tree,collnetdirect;broadcast:ring", FuncNames(), AlgoNames(), m); err != nil {
		t.Fatal(err)
	}
	want := [][]int{
		{0, 1, 0, 0, 0, 0, 0},
		{0, 1, 1, 0, 0, 0, 0},
		{0, 1, 1, 0, 0, 0, 0},
		{0, 1, 1, 0, 0, 0, 0},
		{1, 0, 1, 0, 0, 0, 0},
	}
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("got %v, want %v", m, want)
	}
}

func TestParseListErrors(t *testing.T) {
	tests := []struct {
		in, token, reason string
	}{
		{"ring,foo", "foo", "unknown element"},
		{"Ring, Tree", " Tree", "unknown element"}, // spaces are not trimmed
		{"allreduce:tree;ring", "ring", "entry without a prefix"},
		{";ring", ";ring", ""}, // first token not at the start of the value
		{"allredux:ring", "allredux", "unknown prefix"},
		{"ring;^tree", "^tree", "entry without a prefix"},
		{"allreduce:", "allreduce", "unknown element"}, // a lone prefix is read as an element list
		{"ring,^tree", "^tree", "unknown element"},
		{":", ":", "empty entry"},
	}
	for _, tt := range tests {
		err := CheckList(tt.in, FuncNames(), AlgoNames())
		var le *ListError
		if !errors.As(err, &le) {
			t.Errorf("CheckList(%q) = %v, want a *ListError", tt.in, err)
			continue
		}
		if tt.in == ";ring" {
			if !strings.Contains(le.Reason, "without a prefix") {
				t.Errorf("CheckList(%q) reason %q", tt.in, le.Reason)
			}
			continue
		}
		if le.Token != tt.token || !strings.Contains(le.Reason, tt.reason) {
			t.Errorf("CheckList(%q) = token %q reason %q, want token %q reason %q", tt.in, le.Token, le.Reason, tt.token, tt.reason)
		}
	}
}

func TestParseListShape(t *testing.T) {
	if err := ParseList("ring", FuncNames(), AlgoNames(), fill(4, 7, 1)); err == nil {
		t.Error("wrong row count accepted")
	}
	if err := ParseList("ring", FuncNames(), AlgoNames(), fill(5, 6, 1)); err == nil {
		t.Error("wrong column count accepted")
	}
}

func FuzzParseList(f *testing.F) {
	for _, s := range []string{"ring", "^tree;allreduce:nvls,ring", "a:b:c", ";", ":", "^", "x;y:z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m := fill(5, 7, 3)
		err := ParseList(s, FuncNames(), AlgoNames(), m)
		if err != nil {
			return
		}
		// After a successful parse every cell is untouched (3) or 0/1.
		for _, r := range m {
			for _, v := range r {
				if v != 0 && v != 1 && v != 3 {
					t.Fatalf("ParseList(%q) produced %d", s, v)
				}
			}
		}
	})
}
