package searchdb

// SchemaVersion is stored as PRAGMA user_version in search.db. The reader (Go or browser)
// refuses a file with another version.
const SchemaVersion = 1

// schemaSQL creates the tables of search.db.
//
// docs holds what a result shows (kind, url, title, breadcrumb, stored text) and key, the
// title as Query.Key writes it, for exact-title matches. The FTS5 table search indexes five
// columns, in bm25 weight order: title, ident (the identifier parts and joined forms made
// by Record.identText), breadcrumb, text (the stored text) and more (the part of the text
// not stored, see BuildOptions.StoredTextRunes; usually empty). It is an external-content
// table reading docs through the view search_src, which gives an empty ident and more:
// those are indexed but not stored, since nothing shows them. (FTS5's 'rebuild' would
// therefore lose them; Build never uses it.)
//
// Tokenizer: porter over unicode61 with diacritics removed. unicode61 splits identifiers
// at '_' (so body mentions of NCCL_P2P_DISABLE are found by "p2p disable"), porter lets
// "timeouts" find "timeout". Whole identifiers are found through the ident column, which
// holds them written together ("ncclp2pdisable", "processgroupnccl").
//
// detail=full: token positions are in the index. bm25 then reads term frequencies from the
// index; with detail=column it re-tokenizes the stored text of every matching row (about
// ten times slower for a word found everywhere), and it cannot count ident and more at all,
// because they are not stored. The cost is size: on 1,161 records built from the reference
// notes (300 KB of text) the file is 284 KB gzipped against 220 KB with detail=column.
//
// search_vocab lists the indexed terms; spelling correction reads it.
var schemaSQL = []string{
	`CREATE TABLE docs(
  id INTEGER PRIMARY KEY, kind TEXT NOT NULL, url TEXT NOT NULL, key TEXT NOT NULL,
  title TEXT NOT NULL, breadcrumb TEXT NOT NULL, text TEXT NOT NULL
)`,
	`CREATE VIEW search_src AS SELECT id, title, '' AS ident, breadcrumb, text, '' AS more FROM docs`,
	`CREATE VIRTUAL TABLE search USING fts5(
  title, ident, breadcrumb, text, more,
  content = 'search_src', content_rowid = 'id',
  tokenize = 'porter unicode61 remove_diacritics 2',
  detail = full
)`,
	`CREATE VIRTUAL TABLE search_vocab USING fts5vocab(search, 'row')`,
}

// insertDocSQL and insertIndexSQL add one record; the rowid gives the tie-break order of
// equal scores.
const (
	insertDocSQL   = `INSERT INTO docs(id, kind, url, key, title, breadcrumb, text) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)`
	insertIndexSQL = `INSERT INTO search(rowid, title, ident, breadcrumb, text, more) VALUES (?1, ?2, ?3, ?4, ?5, ?6)`
)

// SearchSQL runs a search. Parameters: ?1 the strict (AND) expression, ?2 the loose (OR)
// expression, ?3 the kind filter (the empty string for all), ?4 the limit, ?5 the query's
// Key, ?6 the query's Name (the empty string for none). Order:
//
//  1. the record whose title is the identifier the query assigns a value to (key = ?6:
//     "NCCL_DEBUG=INFO" finds NCCL_DEBUG first, though its row need not hold "info");
//  2. rows matching every word (tier 0) before rows matching only some (tier 1);
//  3. rows whose title is exactly the query (key = ?5);
//  4. rows whose title (or the identifiers it names) holds every word, before rows that
//     have some of the words only in their breadcrumb or text: a section called "NCCL
//     timeout and the watchdog" answers "watchdog timeout" better than a long section that
//     mentions both words often;
//  5. bm25 with column weights title 10, ident 8, breadcrumb 3, text and more 1, scaled by
//     0.6 for source symbols (so that a page or section about a name outranks a bare symbol
//     row that matches as well) and for the review log's sections, which name many subjects
//     in passing (they also rank one tier lower, so a note about the subject comes first), rounded to 6 decimals so that the browser's SQLite (wasm)
//     and the native one order equal scores alike;
//  6. rowid.
//
// Result columns: kind, title, breadcrumb, url, snippet (text with matches between char(1)
// and char(2)), score. An environment variable's snippet is its whole text (its meaning and
// its default, a few hundred characters at most); other records show the best 16-token
// passage.
//
// Cost: the loose scan is skipped when it equals the strict one (one-word queries), and
// the snippets are made in one pass over the loose matches (CROSS JOIN keeps search as the
// outer loop) rather than by a rowid lookup per result, which for a prefix expression would
// expand the prefix again for every row. The title scan runs the strict expression once
// more, restricted to two short columns.
//
// The browser runs this text too: the generator writes it into the module query.js
// imports (BrowserModule).
const SearchSQL = `WITH hits(id, tier, score) AS (
  SELECT rowid, 0, round(bm25(search, 10.0, 8.0, 3.0, 1.0, 1.0), 6) FROM search WHERE search MATCH ?1
  UNION ALL
  SELECT rowid, 1, round(bm25(search, 10.0, 8.0, 3.0, 1.0, 1.0), 6) FROM search WHERE ?1 <> ?2 AND search MATCH ?2
),
title_hits(id) AS (
  SELECT rowid FROM search WHERE search MATCH '{title ident} : (' || ?1 || ')'
),
best(id, tier, score) AS (
  SELECT id, min(tier), score FROM hits GROUP BY id
),
top(id, named, tier, exact, titled, score) AS (
  SELECT best.id, ?6 <> '' AND docs.key = ?6 AS named, best.tier + (docs.kind = 'log') AS tier, docs.key = ?5 AS exact,
         best.tier = 0 AND best.id IN (SELECT id FROM title_hits) AS in_title,
         round(best.score * CASE docs.kind WHEN 'symbol' THEN 0.6 WHEN 'log' THEN 0.6 ELSE 1.0 END, 6) AS wscore
    FROM best JOIN docs ON docs.id = best.id
   WHERE ?3 = '' OR docs.kind = ?3
   ORDER BY named DESC, tier, exact DESC, in_title DESC, wscore, best.id LIMIT ?4
)
SELECT docs.kind, docs.title, docs.breadcrumb, docs.url,
       CASE docs.kind WHEN 'env' THEN highlight(search, 3, char(1), char(2))
       ELSE snippet(search, 3, char(1), char(2), '…', 16) END, top.score
  FROM search CROSS JOIN top ON top.id = search.rowid JOIN docs ON docs.id = top.id
 WHERE search MATCH ?2
 ORDER BY top.named DESC, top.tier, top.exact DESC, top.titled DESC, top.score, top.id`

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
