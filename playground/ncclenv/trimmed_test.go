package ncclenv

import (
	"bytes"
	"encoding/csv"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/data"
)

var updateGenerated = flag.Bool("update-generated", false, "rewrite env/*.csv from data/env")

// trimTable returns table (CSV) with only the columns of tableColumns, in
// the table's order, each row padded to the header's width.
func trimTable(b []byte) ([]byte, error) {
	r := csv.NewReader(bytes.NewReader(b))
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("no header")
	}
	var keep []int
	for i, h := range recs[0] {
		if slices.Contains(tableColumns, strings.ToLower(strings.TrimSpace(h))) {
			keep = append(keep, i)
		}
	}
	var out bytes.Buffer
	w := csv.NewWriter(&out)
	for _, rec := range recs {
		row := make([]string, len(keep))
		for j, i := range keep {
			if i < len(rec) {
				row[j] = rec[i]
			}
		}
		if err := w.Write(row); err != nil {
			return nil, err
		}
	}
	w.Flush()
	return out.Bytes(), w.Error()
}

// TestTrimmedTables: the tables this package embeds (env/*.csv) are
// data/env/*.csv with only the columns a Registry reads, and the registry
// built from them equals the one built from the full tables.
func TestTrimmedTables(t *testing.T) {
	files, err := fs.Glob(data.Env, "env/*.csv")
	if err != nil || len(files) == 0 {
		t.Fatalf("no tables in data/env (%v)", err)
	}
	for _, f := range files {
		full, err := fs.ReadFile(data.Env, f)
		if err != nil {
			t.Fatal(err)
		}
		want, err := trimTable(full)
		if err != nil {
			t.Fatalf("data/%s: %v", f, err)
		}
		if *updateGenerated {
			if err := os.WriteFile(filepath.FromSlash(f), want, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("wrote %s (%d of %d bytes)", f, len(want), len(full))
			continue
		}
		got, err := fs.ReadFile(trimmed, f)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("playground/ncclenv/%s is stale (%v): run `go generate ./playground/ncclenv`", f, err)
		}
	}
	if *updateGenerated {
		return
	}
	fromFull, err := LoadRegistry(data.Env)
	if err != nil {
		t.Fatal(err)
	}
	fromTrimmed, err := DefaultRegistry()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(fromFull.names, fromTrimmed.names) {
		t.Fatalf("the trimmed tables name %d variables, the full ones %d", len(fromTrimmed.names), len(fromFull.names))
	}
	for _, n := range fromFull.names {
		if a, b := fromFull.vars[n], fromTrimmed.vars[n]; a != b {
			t.Errorf("%s: from data/env %+v, from the trimmed copy %+v", n, a, b)
		}
	}
}
