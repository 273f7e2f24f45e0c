// Package searchdb builds and searches search.db, the SQLite FTS5 database behind the
// site's search box and `distnav search`.
//
// The generator turns pages, environment variables, source symbols and corrections into
// Records and calls Build, which writes the file reproducibly (same records, same bytes).
// DB.Search answers queries in Go; site/assets/js/search/query.js is a line-for-line port
// of the query side (Parse, the spelling corrections, the SQL) that runs in the browser on
// the same file with @sqlite.org/sqlite-wasm, so both return the same results. The parity
// is checked by golden files in testdata/ (regenerate with -update) read by the node tests
// in site/assets/js/search/, and by the Chromium tests in browser_test.go.
//
// How a query is searched:
//   - Parse cuts the typed text into words and each word into identifier parts
//     (NCCL_P2P_DISABLE -> nccl p2p disable; ProcessGroupNCCL -> process group nccl),
//     drops stop words, marks the last word as a prefix while it is being typed, and
//     bounds everything (MaxQueryRunes, MaxTerms, MaxPartsPerTerm). Nothing typed reaches
//     FTS5 as syntax: expressions are built from quoted tokens only.
//   - A word matches written whole (the ident column holds identifiers joined:
//     "ncclp2pdisable", and their runs of parts: "processgroup") or as all of its parts.
//   - Parts that are not indexed get the nearest indexed term as an alternative
//     (optimal-string-alignment distance, 1 edit up to 5 letters, 2 from 6), looked up in
//     the fts5vocab table: "proces group" finds ProcessGroupNCCL.
//   - Rows matching every word rank before rows matching some; an exact title match ranks
//     first; then bm25 with weights title 10, ident 8, breadcrumb 3, text 1.
//
// Build needs SQLite with FTS5: compile with -tags sqlite_fts5. Without it Build and Open
// return ErrNoFTS5.
package searchdb
