// Parity of query.js with the Go package generator/searchdb: every output below was written
// by `go test -tags sqlite_fts5 ./generator/searchdb/ -run Golden -update` into
// generator/searchdb/testdata/query_golden.json. The constants and SQL query.js runs are
// not compared: it imports them from the module `distnav build` writes from the Go source
// (site/assets/gen/search/spec.js). Run: node --test site/assets/js/search/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as q from './query.js';

const golden = JSON.parse(
  readFileSync(new URL('../../../../generator/searchdb/testdata/query_golden.json', import.meta.url), 'utf8'),
);

const terms = (ts) => ts.map((t) => ({ parts: t.parts, prefix: Boolean(t.prefix) }));

test('word runes and their lower case match Go for U+0000..U+05FF', () => {
  let runes = '';
  let lower = '';
  for (let r = 0; r < 0x600; r++) {
    const ch = String.fromCodePoint(r);
    if (q.isWordRune(ch)) {
      runes += ch;
      lower += q.lowerRune(ch);
    }
  }
  assert.equal(runes, golden.wordRunes);
  assert.equal(lower, golden.wordLower);
});

test(`parse, rewrite, loose and key match Go for ${golden.parse.length} inputs`, () => {
  for (const g of golden.parse) {
    const p = q.parse(g.input);
    assert.deepEqual(terms(p.terms), terms(g.terms ?? []), `terms of ${JSON.stringify(g.input)}`);
    const [rw, ok] = q.rewrite(g.input);
    assert.equal(rw, g.strict, `strict of ${JSON.stringify(g.input)}`);
    assert.equal(ok, g.ok, `ok of ${JSON.stringify(g.input)}`);
    assert.equal(q.loose(p), g.loose, `loose of ${JSON.stringify(g.input)}`);
    assert.equal(q.key(p), g.key, `key of ${JSON.stringify(g.input)}`);
    assert.equal(p.name ?? '', g.name ?? '', `name of ${JSON.stringify(g.input)}`);
  }
});

test('splitIdent matches Go', () => {
  for (const [w, parts] of Object.entries(golden.splitIdent)) {
    assert.deepEqual(q.splitIdent(w), parts ?? [], w);
  }
});

test('edit distance, needsCheck and best correction match Go', () => {
  for (const { a, b, d } of golden.editDistance) {
    assert.equal(q.editDistance(a, b), d, `${a} / ${b}`);
  }
  for (const [s, want] of Object.entries(golden.needsCheck)) {
    assert.equal(q.needsCheck(s), want, s);
  }
  for (const g of golden.corrections) {
    assert.deepEqual(q.bestCorrection(g.part, g.cands), [g.best, g.ok], g.part);
  }
});

test('expressions with corrections match Go', () => {
  const corr = new Map([['proces', 'process'], ['disable*', 'disabl'], ['wachdog', 'watchdog']]);
  for (const g of golden.withCorrections) {
    const p = q.parse(g.input);
    assert.equal(q.strict(p, corr), g.strict, g.input);
    assert.equal(q.loose(p, corr), g.loose, g.input);
  }
});

test('snippet HTML matches Go', () => {
  for (const [raw, html] of Object.entries(golden.snippets)) {
    assert.equal(q.snippetHTML(raw), html, JSON.stringify(raw));
  }
});
