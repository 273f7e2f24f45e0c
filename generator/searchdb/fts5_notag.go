//go:build !(sqlite_fts5 || fts5)

package searchdb

// builtWithFTS5 is false: github.com/mattn/go-sqlite3 was compiled without FTS5, so Build
// and Open refuse with ErrNoFTS5. Build with -tags sqlite_fts5.
const builtWithFTS5 = false
