package searchdb

// SchemaVersion is stored as PRAGMA user_version in search.db. The reader (Go or browser)
// refuses a file with another version.
const SchemaVersion = 1

// schemaSQL creates the tables of search.db.
//
// One FTS5 table holds every record. Columns, in bm25 weight order: title, ident (the
// identifier parts and joined forms made by Record.identText), breadcrumb, text; kind, url
// and key (the title as Query.Key writes it, for exact-title matches) are stored but not
// indexed.
//
// Tokenizer: porter over unicode61 with diacritics removed. unicode61 splits identifiers
// at '_' (so body mentions of NCCL_P2P_DISABLE are found by "p2p disable"), porter lets
// "timeouts" find "timeout". Whole identifiers are found through the ident column, which
// holds them written together ("ncclp2pdisable", "processgroupnccl").
//
// detail=column keeps the index small (no token positions). Phrase queries are therefore
// errors, which is why Parse only emits tokens that unicode61 keeps whole.
//
// search_vocab lists the indexed terms; spelling correction reads it.
var schemaSQL = []string{
	`CREATE VIRTUAL TABLE search USING fts5(
  title, ident, breadcrumb, text, kind UNINDEXED, url UNINDEXED, key UNINDEXED,
  tokenize = 'porter unicode61 remove_diacritics 2',
  detail = column
)`,
	`CREATE VIRTUAL TABLE search_vocab USING fts5vocab(search, 'row')`,
}

// insertSQL adds one record; the rowid gives the tie-break order of equal scores.
const insertSQL = `INSERT INTO search(rowid, title, ident, breadcrumb, text, kind, url, key) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)`

// SearchSQL runs a search. Parameters: ?1 the strict (AND) expression, ?2 the loose (OR)
// expression, ?3 the kind filter (the empty string for all), ?4 the limit, ?5 the query's
// Key. Order: rows matching every word (tier 0) before rows matching only some (tier 1);
// then rows whose title is exactly the query (key = ?5); then bm25 with column weights
// title 10, ident 8, breadcrumb 3, text 1, rounded to 6 decimals so that the browser's
// SQLite (wasm) and the native one order equal scores alike; then rowid. Result columns:
// kind, title, breadcrumb, url, snippet (text with matches between char(1) and char(2)),
// score.
//
// site/assets/js/search/query.js holds the same text; the parity test checks it.
const SearchSQL = `WITH hits(id, tier, exact, score) AS (
  SELECT rowid, 0, key = ?5, round(bm25(search, 10.0, 8.0, 3.0, 1.0), 6) FROM search
   WHERE search MATCH ?1 AND (?3 = '' OR kind = ?3)
  UNION ALL
  SELECT rowid, 1, key = ?5, round(bm25(search, 10.0, 8.0, 3.0, 1.0), 6) FROM search
   WHERE search MATCH ?2 AND (?3 = '' OR kind = ?3)
),
best(id, tier, exact, score) AS (
  SELECT id, min(tier), exact, score FROM hits GROUP BY id
),
top(id, tier, exact, score) AS (
  SELECT id, tier, exact, score FROM best ORDER BY tier, exact DESC, score, id LIMIT ?4
)
SELECT search.kind, search.title, search.breadcrumb, search.url,
       snippet(search, 3, char(1), char(2), '…', 16), top.score
  FROM top JOIN search ON search.rowid = top.id
 WHERE search MATCH ?2
 ORDER BY top.tier, top.exact DESC, top.score, top.id`

// VocabExactSQL tells whether ?1 is an indexed term (one row) or not (no row).
const VocabExactSQL = `SELECT 1 FROM search_vocab WHERE term = ?1`

// VocabPrefixSQL returns a term starting with ?1 if there is one; ?2 is the upper bound of
// the prefix range (?1 with its last character incremented).
const VocabPrefixSQL = `SELECT term FROM search_vocab WHERE term >= ?1 AND term < ?2 LIMIT 1`

// VocabRangeSQL returns the correction candidates of a part: terms starting with the same
// character (?1 that character, ?2 the next one) whose length is within ?3..?4, in term
// order, with the number of records holding each.
const VocabRangeSQL = `SELECT term, doc FROM search_vocab
 WHERE term >= ?1 AND term < ?2 AND length(term) BETWEEN ?3 AND ?4
 ORDER BY term`
