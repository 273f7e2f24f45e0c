package searchdb

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// requireFTS5 skips tests that need SQLite with FTS5 when the package is built without the
// sqlite_fts5 tag (TestNoFTS5 covers that build instead).
func requireFTS5(tb testing.TB) {
	tb.Helper()
	if !builtWithFTS5 {
		tb.Skip("needs -tags sqlite_fts5")
	}
}

// loadFixture reads testdata/fixture.json, a hand-written corpus of 33 records that looks
// like the real site (env vars, sections, symbols, corrections, a page).
func loadFixture(tb testing.TB) []Record {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "fixture.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var recs []Record
	if err := json.Unmarshal(b, &recs); err != nil {
		tb.Fatalf("testdata/fixture.json: %v", err)
	}
	return recs
}

// buildDB builds recs into a fresh file under a temporary directory and opens it.
func buildDB(tb testing.TB, recs []Record) (*DB, string) {
	tb.Helper()
	requireFTS5(tb)
	path := filepath.Join(tb.TempDir(), "search.db")
	if err := Build(context.Background(), path, recs); err != nil {
		tb.Fatalf("Build: %v", err)
	}
	db, err := Open(path)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() { db.Close() })
	return db, path
}

func fixtureDB(tb testing.TB) *DB {
	tb.Helper()
	db, _ := buildDB(tb, loadFixture(tb))
	return db
}
