package searchdb

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"testing"
)

func TestZZSmoke(t *testing.T) {
	db := fixtureDB(t)
	f, _ := os.Open(filepath.Join("testdata", "relevance_fixture.txt"))
	cases, err := ParseCases(bufio.NewReader(f))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		res, err := db.Search(context.Background(), c.Query, Options{Limit: 5})
		if err != nil {
			t.Errorf("%q: %v", c.Query, err)
			continue
		}
		q := Parse(c.Query)
		corr, _ := db.Corrections(context.Background(), q)
		t.Logf("== %q want %s  strict=%s corr=%v", c.Query, c.Want, q.Strict(corr), corr)
		for i, r := range res {
			t.Logf("   %d %-10s %-45s %8.3f %s", i+1, r.Kind, r.URL, r.Score, r.Snippet[:min(len(r.Snippet), 80)])
		}
	}
	for _, f := range CheckRelevance(context.Background(), db, cases) {
		t.Errorf("FAIL %s", f)
	}
}
