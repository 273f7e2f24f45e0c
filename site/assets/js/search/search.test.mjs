// The browser's search engine (sqlite-wasm + engine.js + query.js) gives the same top 10 as
// the Go package on the same database. generator/searchdb/testdata/fixture.db and
// search_golden.json are written by
// `go test -tags sqlite_fts5 ./generator/searchdb/ -run Golden -update`.
// Run: node --test site/assets/js/search/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import sqlite3InitModule from '@sqlite.org/sqlite-wasm';
import { openSearchDB } from './engine.js';

const testdata = new URL('../../../../generator/searchdb/testdata/', import.meta.url);
const golden = JSON.parse(readFileSync(new URL('search_golden.json', testdata), 'utf8'));
const bytes = new Uint8Array(readFileSync(new URL('fixture.db', testdata)));

const sqlite3 = await sqlite3InitModule();

test('sqlite-wasm is the pinned build with FTS5', () => {
  assert.equal(sqlite3.version.libVersion, '3.54.1');
  const db = new sqlite3.oo1.DB(':memory:');
  try {
    assert.equal(db.selectValue("SELECT sqlite_compileoption_used('ENABLE_FTS5')"), 1);
  } finally {
    db.close();
  }
});

test(`same results as Go for ${golden.length} searches`, () => {
  const db = openSearchDB(sqlite3, bytes);
  try {
    for (const g of golden) {
      // A generous timeout: this test is about results, and the machine may be busy.
      const got = db.search(g.query, { kind: g.kind, limit: g.limit }, 60000);
      const want = g.results ?? [];
      const label = `${JSON.stringify(g.query)} kind=${g.kind} limit=${g.limit}`;
      assert.deepEqual(got.map((r) => r.url), want.map((r) => r.url), `URLs of ${label}`);
      for (let i = 0; i < want.length; i++) {
        const { score: gs, ...g1 } = got[i];
        const { score: ws, ...w1 } = want[i];
        assert.deepEqual(g1, w1, `result ${i + 1} of ${label}`);
        assert.ok(Math.abs(gs - ws) <= 1e-6, `score ${i + 1} of ${label}: ${gs} vs ${ws}`);
      }
    }
  } finally {
    db.close();
  }
});

test('hostile input gives results or none, never an error', () => {
  const db = openSearchDB(sqlite3, bytes);
  try {
    const inputs = ['"', '""', '(', ')', 'AND', 'OR NOT', 'NEAR(a b)', '*', '-', ':', '^', 'title:x',
      'a"b"c', '{a b}', '🚀🔥', '東京', 'x'.repeat(5000), 'nccl '.repeat(500), '\u0000', 'İ', 'ǅ'];
    for (const s of inputs) {
      assert.ok(Array.isArray(db.search(s)), JSON.stringify(s));
    }
    assert.throws(() => db.search('nccl', { kind: 'nope' }), /unknown kind/);
  } finally {
    db.close();
  }
});

test('rejects a file that is not search.db', () => {
  assert.throws(() => openSearchDB(sqlite3, new Uint8Array(10)), /not an SQLite database/);
  assert.throws(() => openSearchDB(sqlite3, new Uint8Array(4096)));
});
