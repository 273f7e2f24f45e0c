package searchdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"html"
	"os"
	"strings"
	"time"
)

// DefaultTimeout bounds a search whose context has no deadline.
const DefaultTimeout = 2 * time.Second

// DB is an open, read-only search.db. It is safe for concurrent use.
type DB struct {
	db                         *sql.DB
	search, exact, prefix, rng *sql.Stmt
}

// Options narrow a search.
type Options struct {
	// Kind keeps only records of this kind (one of Kinds); empty keeps all.
	Kind string
	// Limit is the number of results: 0 means DefaultLimit, more than MaxLimit means
	// MaxLimit.
	Limit int
}

// Result is one search hit.
type Result struct {
	Kind       string `json:"kind"`
	Title      string `json:"title"`
	Breadcrumb string `json:"breadcrumb"`
	// URL is relative to the site's base URL (see Record.URL).
	URL string `json:"url"`
	// Snippet is HTML: a passage of the record's text, escaped, with the matched words in
	// <mark>…</mark>.
	Snippet string `json:"snippet"`
	// Score is the rounded bm25 score; lower is better. Scores of rows that match every word
	// and of rows that match only some are not comparable.
	Score float64 `json:"score"`
}

// Open opens search.db at path read-only and checks its schema version.
func Open(path string) (*DB, error) {
	if !builtWithFTS5 {
		return nil, ErrNoFTS5
	}
	if _, err := statFile(path); err != nil {
		return nil, err
	}
	dsn, err := fileDSN(path, "mode=ro&immutable=1")
	if err != nil {
		return nil, err
	}
	sdb, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return nil, fmt.Errorf("searchdb: open %s: %w", path, err)
	}
	d := &DB{db: sdb}
	if err := d.init(path); err != nil {
		sdb.Close()
		return nil, err
	}
	return d, nil
}

func statFile(path string) (int64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, fmt.Errorf("searchdb: %w", err)
	}
	if fi.IsDir() {
		return 0, fmt.Errorf("searchdb: %s is a directory", path)
	}
	return fi.Size(), nil
}

func (d *DB) init(path string) error {
	ctx := context.Background()
	var v int
	if err := d.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("searchdb: read %s: %w", path, err)
	}
	if v != SchemaVersion {
		return fmt.Errorf("searchdb: %s has schema version %d, want %d (rebuild it with distnav build)", path, v, SchemaVersion)
	}
	var err error
	prep := func(q string) *sql.Stmt {
		if err != nil {
			return nil
		}
		var s *sql.Stmt
		s, err = d.db.PrepareContext(ctx, q)
		if err != nil {
			if strings.Contains(err.Error(), "no such module") {
				err = fmt.Errorf("%w (%v)", ErrNoFTS5, err)
			} else {
				err = fmt.Errorf("searchdb: %s: %w", path, err)
			}
		}
		return s
	}
	d.search = prep(SearchSQL)
	d.exact = prep(VocabExactSQL)
	d.prefix = prep(VocabPrefixSQL)
	d.rng = prep(VocabRangeSQL)
	return err
}

// Close releases the database.
func (d *DB) Close() error {
	for _, s := range []*sql.Stmt{d.search, d.exact, d.prefix, d.rng} {
		if s != nil {
			s.Close()
		}
	}
	return d.db.Close()
}

// Search finds records for typed text. Whatever the text (quotes, parentheses, AND, *, -,
// :, non-ASCII, thousands of characters) it returns results or none, never an FTS5 syntax
// error: the text is rewritten by Parse into quoted tokens. Unknown words of at least four
// letters are also searched as the nearest indexed term (see Corrections). The search stops
// with the context's error when ctx is done, or after DefaultTimeout if ctx has no
// deadline.
func (d *DB) Search(ctx context.Context, text string, opts Options) ([]Result, error) {
	if opts.Kind != "" && !ValidKind(opts.Kind) {
		return nil, fmt.Errorf("searchdb: unknown kind %q (want one of %v)", opts.Kind, Kinds)
	}
	limit := clampLimit(opts.Limit)
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
		defer cancel()
	}
	q := Parse(text)
	if q.Empty() {
		return nil, nil
	}
	corr, err := d.Corrections(ctx, q)
	if err != nil {
		return nil, err
	}
	rows, err := d.search.QueryContext(ctx, q.Strict(corr), q.Loose(corr), opts.Kind, limit, q.Key(), q.Name)
	if err != nil {
		return nil, searchErr(ctx, err)
	}
	defer rows.Close()
	var out []Result
	for rows.Next() {
		var r Result
		var snip string
		if err := rows.Scan(&r.Kind, &r.Title, &r.Breadcrumb, &r.URL, &snip, &r.Score); err != nil {
			return nil, fmt.Errorf("searchdb: read result: %w", err)
		}
		r.Snippet = SnippetHTML(snip)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, searchErr(ctx, err)
	}
	return out, nil
}

func searchErr(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("searchdb: search stopped: %w", ctxErr)
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return fmt.Errorf("searchdb: search stopped: %w", err)
	}
	return fmt.Errorf("searchdb: search: %w", err)
}

func clampLimit(n int) int {
	switch {
	case n <= 0:
		return DefaultLimit
	case n > MaxLimit:
		return MaxLimit
	}
	return n
}

// Corrections looks the parts of q up in the vocabulary and returns, for each part that is
// not indexed (or, for the part being typed, that no indexed term starts with), the
// nearest indexed term chosen by BestCorrection among terms with the same first letter.
// Only parts for which NeedsCheck holds are looked up. The browser does the same steps
// with the same SQL.
func (d *DB) Corrections(ctx context.Context, q Query) (Corrections, error) {
	corr := Corrections{}
	done := map[string]bool{}
	for _, t := range q.Terms {
		for i, p := range t.Parts {
			pre := t.Prefix && i == len(t.Parts)-1
			key := CorrectionKey(p, pre)
			if done[key] || !NeedsCheck(p) {
				continue
			}
			done[key] = true
			known, err := d.known(ctx, p, pre)
			if err != nil {
				return nil, err
			}
			if known {
				continue
			}
			maxd := MaxEdits(p)
			rows, err := d.rng.QueryContext(ctx, p[:1], nextPrefixBound(p[:1]), len(p)-maxd, len(p)+maxd)
			if err != nil {
				return nil, searchErr(ctx, err)
			}
			var cands []Candidate
			for rows.Next() {
				var c Candidate
				if err := rows.Scan(&c.Term, &c.Docs); err != nil {
					rows.Close()
					return nil, fmt.Errorf("searchdb: read vocabulary: %w", err)
				}
				cands = append(cands, c)
			}
			err = rows.Err()
			rows.Close()
			if err != nil {
				return nil, searchErr(ctx, err)
			}
			if c, ok := BestCorrection(p, cands); ok {
				corr[key] = c
			}
		}
	}
	return corr, nil
}

// known reports whether p is an indexed term, or with prefix set, whether an indexed term
// starts with p.
func (d *DB) known(ctx context.Context, p string, prefix bool) (bool, error) {
	var err error
	if prefix {
		var t string
		err = d.prefix.QueryRowContext(ctx, p, nextPrefixBound(p)).Scan(&t)
	} else {
		var one int
		err = d.exact.QueryRowContext(ctx, p).Scan(&one)
	}
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, searchErr(ctx, err)
	}
	return true, nil
}

// SnippetHTML turns a raw snippet (matches between \x01 and \x02) into HTML: the text is
// escaped like html.EscapeString (& < > " ') and the markers become <mark> and </mark>.
// site/assets/js/search/query.js does the same, character for character.
func SnippetHTML(raw string) string {
	var b strings.Builder
	for _, r := range raw {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '"':
			b.WriteString("&#34;")
		case '\'':
			b.WriteString("&#39;")
		case 1:
			b.WriteString("<mark>")
		case 2:
			b.WriteString("</mark>")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// SnippetText is the snippet as plain text for a terminal: entities decoded, and each
// match between open and close (for example "\x1b[1m" and "\x1b[0m", or "" and "").
func (r Result) SnippetText(open, close string) string {
	s := strings.NewReplacer("<mark>", "\x01", "</mark>", "\x02").Replace(r.Snippet)
	s = html.UnescapeString(s)
	return strings.NewReplacer("\x01", open, "\x02", close).Replace(s)
}
