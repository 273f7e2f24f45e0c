package searchdb

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	_ "github.com/mattn/go-sqlite3" // registers the "sqlite3" driver
)

// ErrNoFTS5 is returned by Build and Open when SQLite was compiled without FTS5.
var ErrNoFTS5 = errors.New("searchdb: SQLite has no FTS5; build and test with -tags sqlite_fts5 (github.com/mattn/go-sqlite3)")

// pageSize is the SQLite page size of search.db. It is fixed so that the file does not
// depend on the SQLite defaults of the machine that builds it.
const pageSize = 4096

// Build writes a fresh search.db at path from recs. The same records give the same bytes:
// records are cleaned and sorted (by URL, kind, title, text, identifiers), the page size is
// fixed, nothing time-dependent is written, the index is merged into one segment
// ('optimize') and the file is VACUUMed with journal_mode=delete into one self-contained
// file. The file is written beside path under a temporary name and renamed over path only
// when complete, so a reader never sees half a database.
func Build(ctx context.Context, path string, recs []Record) error {
	return BuildWithOptions(ctx, path, recs, BuildOptions{})
}

// BuildOptions tune Build. The zero value is the default.
type BuildOptions struct {
	// StoredTextRunes, when positive, stores only the first StoredTextRunes code points of
	// each record's text for snippets (cut at a word boundary). The rest is still indexed
	// (in a column that is not stored), so every word stays searchable, but a match past the
	// stored part gets a snippet of the stored beginning without highlight. This is the main lever on the file size (the stored text is
	// most of it); zero stores the whole text.
	StoredTextRunes int
}

// BuildWithOptions is Build with options.
func BuildWithOptions(ctx context.Context, path string, recs []Record, opts BuildOptions) (err error) {
	if !builtWithFTS5 {
		return ErrNoFTS5
	}
	clean := make([]Record, 0, len(recs))
	for i, r := range recs {
		n, err := r.normalize()
		if err != nil {
			return fmt.Errorf("searchdb: record %d (%q): %w", i, r.Title, err)
		}
		clean = append(clean, n)
	}
	slices.SortStableFunc(clean, compareRecords)

	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("searchdb: create temporary file: %w", err)
	}
	tmpName := tmp.Name()
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("searchdb: close temporary file: %w", err)
	}
	defer func() {
		if err != nil {
			_ = os.Remove(tmpName)
			_ = os.Remove(tmpName + "-journal")
		}
	}()
	if err := writeDB(ctx, tmpName, clean, opts); err != nil {
		return err
	}
	if err := syncFile(tmpName); err != nil {
		return err
	}
	if err := os.Chmod(tmpName, 0o644); err != nil {
		return fmt.Errorf("searchdb: chmod: %w", err)
	}
	if err := os.Rename(tmpName, path); err != nil {
		return fmt.Errorf("searchdb: rename into place: %w", err)
	}
	return nil
}

func compareRecords(a, b Record) int {
	return cmp.Or(
		cmp.Compare(a.URL, b.URL),
		cmp.Compare(a.Kind, b.Kind),
		cmp.Compare(a.Title, b.Title),
		cmp.Compare(a.Breadcrumb, b.Breadcrumb),
		cmp.Compare(a.Text, b.Text),
		slices.Compare(a.Identifiers, b.Identifiers),
	)
}

func fileDSN(path string, query string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("searchdb: %w", err)
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: query}
	return u.String(), nil
}

// writeDB fills the empty file at path.
func writeDB(ctx context.Context, path string, recs []Record, opts BuildOptions) error {
	dsn, err := fileDSN(path, "mode=rw")
	if err != nil {
		return err
	}
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return fmt.Errorf("searchdb: open %s: %w", path, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("searchdb: open %s: %w", path, err)
	}
	defer conn.Close()
	if err := checkFTS5(ctx, conn); err != nil {
		return err
	}
	exec := func(q string, args ...any) error {
		if _, err := conn.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("searchdb: %s: %w", firstLine(q), err)
		}
		return nil
	}
	for _, q := range []string{
		fmt.Sprintf("PRAGMA page_size = %d", pageSize),
		"PRAGMA journal_mode = DELETE",
		"PRAGMA encoding = 'UTF-8'",
		fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion),
	} {
		if err := exec(q); err != nil {
			return err
		}
	}
	for _, q := range schemaSQL {
		if err := exec(q); err != nil {
			return err
		}
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("searchdb: begin: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	insDoc, err := tx.PrepareContext(ctx, insertDocSQL)
	if err != nil {
		return fmt.Errorf("searchdb: prepare insert: %w", err)
	}
	defer insDoc.Close()
	insIdx, err := tx.PrepareContext(ctx, insertIndexSQL)
	if err != nil {
		return fmt.Errorf("searchdb: prepare insert: %w", err)
	}
	defer insIdx.Close()
	for i, r := range recs {
		id := i + 1
		stored, rest := cutText(r.Text, opts.StoredTextRunes)
		if _, err := insDoc.ExecContext(ctx, id, r.Kind, r.URL, r.titleKey(), r.Title, r.Breadcrumb, stored); err != nil {
			return fmt.Errorf("searchdb: insert %q: %w", r.URL, err)
		}
		if _, err := insIdx.ExecContext(ctx, id, r.Title, r.identText(), r.Breadcrumb, stored, rest); err != nil {
			return fmt.Errorf("searchdb: index %q: %w", r.URL, err)
		}
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO search(search) VALUES ('optimize')"); err != nil {
		return fmt.Errorf("searchdb: optimize: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("searchdb: commit: %w", err)
	}
	if err := exec("VACUUM"); err != nil {
		return err
	}
	return nil
}

// checkFTS5 fails with ErrNoFTS5 when the linked SQLite lacks FTS5.
func checkFTS5(ctx context.Context, conn *sql.Conn) error {
	var on int
	if err := conn.QueryRowContext(ctx, "SELECT sqlite_compileoption_used('ENABLE_FTS5')").Scan(&on); err != nil {
		return fmt.Errorf("searchdb: compile options: %w", err)
	}
	if on != 1 {
		return ErrNoFTS5
	}
	return nil
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("searchdb: sync: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("searchdb: sync: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("searchdb: sync: %w", err)
	}
	return nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// cutText splits s for storage: stored is the first n code points of s, cut back to the
// last space if there is one in the second half, followed by " …"; rest is the remaining
// text. When n <= 0 or s is short enough, stored is s and rest is empty.
func cutText(s string, n int) (stored, rest string) {
	if n <= 0 {
		return s, ""
	}
	rs := []rune(s)
	if len(rs) <= n {
		return s, ""
	}
	cut := n
	for i := n; i > n/2; i-- {
		if rs[i] == ' ' {
			cut = i
			break
		}
	}
	return strings.TrimRight(string(rs[:cut]), " ") + " …", strings.TrimLeft(string(rs[cut:]), " ")
}
