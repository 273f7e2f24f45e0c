package searchdb

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRelevanceFixture: every query of testdata/relevance_fixture.txt finds its expected
// record in the top 3 of the fixture corpus. The queries are what users type: variable
// names in any case, parts of identifiers, prose questions, typos and half-typed words.
func TestRelevanceFixture(t *testing.T) {
	db := fixtureDB(t)
	f, err := os.Open(filepath.Join("testdata", "relevance_fixture.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cases, err := ParseCases(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 40 {
		t.Fatalf("only %d relevance cases, want at least 40", len(cases))
	}
	for _, fail := range CheckRelevance(context.Background(), db, cases) {
		t.Error(fail)
	}
}

// TestCheckRelevanceReports: a case that cannot hold is reported with what was found.
func TestCheckRelevanceReports(t *testing.T) {
	db := fixtureDB(t)
	fails := CheckRelevance(context.Background(), db, []Case{
		{Query: "NCCL_P2P_DISABLE", Want: "#nccl_p2p_disable", Line: 1},
		{Query: "NCCL_P2P_DISABLE", Want: "#no-such-anchor", Line: 2},
		{Query: "🚀", Want: "#anything", Line: 3},
	})
	if len(fails) != 2 || fails[0].Case.Line != 2 || fails[1].Case.Line != 3 {
		t.Fatalf("failures = %v, want lines 2 and 3", fails)
	}
	if len(fails[0].Got) == 0 || !strings.Contains(fails[0].String(), "#nccl_p2p_disable") {
		t.Errorf("failure does not show what was found: %s", fails[0])
	}
	if len(fails[1].Got) != 0 {
		t.Errorf("no-result failure has results: %v", fails[1].Got)
	}
}

func TestParseCases(t *testing.T) {
	cases, err := ParseCases(strings.NewReader("# comment\n\nwatchdog timeout\t#watchdog-thread\r\n  p2p disable \t #nccl_p2p_disable \n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Case{{"watchdog timeout", "#watchdog-thread", 3}, {"p2p disable", "#nccl_p2p_disable", 4}}
	if len(cases) != len(want) || cases[0] != want[0] || cases[1] != want[1] {
		t.Errorf("ParseCases = %+v, want %+v", cases, want)
	}
	for _, bad := range []string{"no tab here\n", "\t#only-url\n", "query only\t\n"} {
		if _, err := ParseCases(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("ParseCases(%q): err = %v, want a line 1 error", bad, err)
		}
	}
}
