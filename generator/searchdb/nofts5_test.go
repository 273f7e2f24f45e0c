package searchdb

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

// TestNoFTS5: without the sqlite_fts5 build tag, Build and Open refuse with ErrNoFTS5
// instead of failing later with "no such module: fts5".
func TestNoFTS5(t *testing.T) {
	if builtWithFTS5 {
		t.Skip("built with FTS5; run `go test ./generator/searchdb/` without -tags to check the refusal")
	}
	path := filepath.Join(t.TempDir(), "search.db")
	if err := Build(context.Background(), path, nil); !errors.Is(err, ErrNoFTS5) {
		t.Errorf("Build: %v, want ErrNoFTS5", err)
	}
	if _, err := Open(path); !errors.Is(err, ErrNoFTS5) {
		t.Errorf("Open: %v, want ErrNoFTS5", err)
	}
}
