//go:build sqlite_fts5 || fts5

package searchdb

// builtWithFTS5 is true when github.com/mattn/go-sqlite3 is compiled with FTS5
// (build tag sqlite_fts5, or its alias fts5).
const builtWithFTS5 = true
