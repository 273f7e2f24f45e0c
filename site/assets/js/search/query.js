// Query rewriting and the search steps for search.db, shared by worker.js and the node
// tests. The functions are a line-for-line port of generator/searchdb (query.go and the
// Search/Corrections methods of search.go), run on the SQL of sql.go itself: the same typed
// text gives the same FTS5 expressions and so the same results in the browser and in
// `distnav search`. The parity tests (query.test.mjs, search.test.mjs) check this against
// JSON written by the Go tests. Change both sides together.

// The limits, kinds, connectors, stop words and SQL come from the Go package: the generator
// writes them into ../../gen/search/spec.js (searchdb.BrowserModule); nothing here restates
// them.
import {
  ASSIGN_PREFIXES, CONNECTORS, DEFAULT_LIMIT, KINDS, MAX_LIMIT, MAX_PARTS_PER_TERM,
  MAX_QUERY_RUNES, MAX_TERMS, SEARCH_SQL, STOP_WORDS, VOCAB_EXACT_SQL, VOCAB_PREFIX_SQL,
  VOCAB_RANGE_SQL,
} from '../../gen/search/spec.js';

export {
  ASSIGN_PREFIXES, CONNECTORS, DEFAULT_LIMIT, KINDS, MAX_LIMIT, MAX_PARTS_PER_TERM,
  MAX_QUERY_RUNES, MAX_TERMS, SEARCH_SQL, STOP_WORDS, VOCAB_EXACT_SQL, VOCAB_PREFIX_SQL,
  VOCAB_RANGE_SQL,
};
export { SCHEMA_VERSION } from '../../gen/search/spec.js';

const LETTER_OR_NUMBER = /^[\p{L}\p{N}]$/u;
const UPPER = /^\p{Lu}$/u;
const LOWER = /^\p{Ll}$/u;
const DIGIT = /^\p{Nd}$/u;

const isUpper = (ch) => ch !== undefined && UPPER.test(ch);
const isLower = (ch) => ch !== undefined && LOWER.test(ch);
const isDigit = (ch) => ch !== undefined && DIGIT.test(ch);

// isWordRune: ASCII letters and digits, and letters and numbers of U+00C0..U+04FF (Latin,
// Greek, Cyrillic) whose lower case stays in that range, on which Go, JavaScript and
// SQLite's unicode61 agree. ch is one code point as a string.
export function isWordRune(ch) {
  const r = ch.codePointAt(0);
  if ((r >= 0x61 && r <= 0x7a) || (r >= 0x41 && r <= 0x5a) || (r >= 0x30 && r <= 0x39)) {
    return true;
  }
  if (r >= 0xc0 && r <= 0x4ff) {
    if (!LETTER_OR_NUMBER.test(ch)) {
      return false;
    }
    const l = lowerRune(ch).codePointAt(0);
    return l < 0x80 || (l >= 0xc0 && l <= 0x4ff);
  }
  return false;
}

function isConnector(ch) {
  return CONNECTORS.includes(ch);
}

// lowerRune: the simple one-to-one lower-case mapping, like Go's unicode.ToLower. JavaScript's
// toLowerCase uses the full mapping, which differs only for U+0130 in the word-rune range.
export function lowerRune(ch) {
  if (ch === '\u0130') {
    return 'i';
  }
  return ch.toLowerCase();
}

// splitIdent splits one word into lower-cased identifier parts (SplitIdent in query.go).
export function splitIdent(word) {
  const rs = Array.from(word);
  const parts = [];
  let cur = [];
  const flush = () => {
    if (cur.length > 0) {
      parts.push(cur.join(''));
      cur = [];
    }
  };
  for (let i = 0; i < rs.length; i++) {
    const r = rs[i];
    if (!isWordRune(r)) {
      flush();
      continue;
    }
    if (cur.length > 0 && i > 0) {
      const prev = rs[i - 1];
      const next = i + 1 < rs.length ? rs[i + 1] : undefined;
      if (isLower(prev) && isUpper(r)) {
        flush();
      } else if (isUpper(prev) && isUpper(r) && isLower(next)) {
        flush();
      } else if (isDigit(prev) && isUpper(r) && isLower(next)) {
        flush();
      }
    }
    cur.push(lowerRune(r));
  }
  flush();
  return parts;
}

// parse turns typed text into {terms: [{parts, prefix}]} (Parse in query.go).
export function parse(text) {
  let rs = Array.from(String(text ?? ''));
  if (rs.length > MAX_QUERY_RUNES) {
    rs = rs.slice(0, MAX_QUERY_RUNES);
  }
  const words = [];
  let start = -1;
  for (let i = 0; i < rs.length; i++) {
    const inWord = isWordRune(rs[i]) || isConnector(rs[i]);
    if (inWord && start < 0) {
      start = i;
    }
    if (!inWord && start >= 0) {
      words.push(rs.slice(start, i).join(''));
      start = -1;
    }
  }
  const typing = start >= 0;
  if (start >= 0) {
    words.push(rs.slice(start).join(''));
  }
  const all = [];
  for (let i = 0; i < words.length; i++) {
    let parts = splitIdent(words[i]);
    if (parts.length === 0) {
      continue;
    }
    if (parts.length > MAX_PARTS_PER_TERM) {
      parts = parts.slice(0, MAX_PARTS_PER_TERM);
    }
    all.push({ parts, prefix: typing && i === words.length - 1 });
  }
  if (all.length === 0) {
    return { terms: [] };
  }
  let kept = all.filter((t) => !(!t.prefix && t.parts.length === 1 && STOP_WORDS.includes(t.parts[0])));
  if (kept.length === 0) {
    kept = all;
  }
  if (kept.length > MAX_TERMS) {
    kept = kept.slice(0, MAX_TERMS);
  }
  const out = { terms: kept };
  const name = assignedName(rs);
  if (name !== '') {
    out.name = name;
  }
  return out;
}

const isQuerySpace = (ch) => ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r' || ch === '\f' || ch === '\v';

// assignedName: the joined parts of NAME when the text is NAME=VALUE, optionally after one of
// ASSIGN_PREFIXES, with no white space inside (assignedName in query.go). rs is an array of
// code points.
function assignedName(rs) {
  let fields = [];
  let cur = '';
  for (const ch of rs) {
    if (isQuerySpace(ch)) {
      if (cur !== '') {
        fields.push(cur);
      }
      cur = '';
    } else {
      cur += ch;
    }
  }
  if (cur !== '') {
    fields.push(cur);
  }
  if (fields.length === 2 && ASSIGN_PREFIXES.includes(fields[0].toLowerCase())) {
    fields = fields.slice(1);
  }
  if (fields.length !== 1) {
    return '';
  }
  const eq = fields[0].indexOf('=');
  if (eq <= 0) {
    return '';
  }
  const name = fields[0].slice(0, eq);
  for (const ch of name) {
    if (!isWordRune(ch) && !isConnector(ch)) {
      return '';
    }
  }
  let parts = splitIdent(name);
  if (parts.length > MAX_PARTS_PER_TERM) {
    parts = parts.slice(0, MAX_PARTS_PER_TERM);
  }
  return parts.join('');
}

// quote writes s as an FTS5 string, inside which nothing is syntax.
export function quote(s) {
  return '"' + s.replaceAll('"', '""') + '"';
}

export function correctionKey(part, prefix) {
  return prefix ? part + '*' : part;
}

function joined(t) {
  return t.parts.join('');
}

function partExpr(t, i, corr) {
  const p = t.parts[i];
  const pre = t.prefix && i === t.parts.length - 1;
  let s = quote(p);
  if (pre) {
    s += '*';
  }
  const c = corr ? corr.get(correctionKey(p, pre)) : undefined;
  if (c !== undefined && c !== '' && c !== p) {
    s = '(' + s + ' OR ' + quote(c) + ')';
  }
  return s;
}

function termExpr(t, corr) {
  if (t.parts.length === 1) {
    return partExpr(t, 0, corr);
  }
  let j = quote(joined(t));
  if (t.prefix) {
    j += '*';
  }
  const ps = t.parts.map((_, i) => partExpr(t, i, corr));
  return '(' + j + ' OR (' + ps.join(' AND ') + '))';
}

function join(q, op, corr) {
  return q.terms.map((t) => termExpr(t, corr)).join(' ' + op + ' ');
}

// strict: every word (AND); loose: any word (OR). corr is a Map or undefined.
export const strict = (q, corr) => join(q, 'AND', corr);
export const loose = (q, corr) => join(q, 'OR', corr);

// key is the query written as one word (Query.Key).
export function key(q) {
  return q.terms.map(joined).join('');
}

// rewrite returns [expression, ok] like Rewrite in query.go.
export function rewrite(text) {
  const q = parse(text);
  if (q.terms.length === 0) {
    return ['', false];
  }
  return [strict(q, undefined), true];
}

// needsCheck: ASCII letters and digits only, at least 4 characters, not only digits.
export function needsCheck(part) {
  if (part.length < 4) {
    return false;
  }
  let letter = false;
  for (const c of part) {
    if (c >= 'a' && c <= 'z') {
      letter = true;
    } else if (!(c >= '0' && c <= '9')) {
      return false;
    }
  }
  return letter;
}

export function maxEdits(part) {
  return Array.from(part).length >= 6 ? 2 : 1;
}

// bestCorrection picks the closest candidate {term, docs}: smallest edit distance (at most
// maxEdits), then most records, then the first in the given order. Returns [term, ok].
export function bestCorrection(part, cands) {
  const maxd = maxEdits(part);
  let best = '';
  let bestD = maxd + 1;
  let bestDocs = -1;
  for (const c of cands) {
    if (c.term === part) {
      continue;
    }
    const d = editDistance(part, c.term);
    if (d > maxd) {
      continue;
    }
    if (d < bestD || (d === bestD && c.docs > bestDocs)) {
      best = c.term;
      bestD = d;
      bestDocs = c.docs;
    }
  }
  return [best, best !== ''];
}

// editDistance: optimal string alignment distance in code points.
export function editDistance(a, b) {
  const ra = Array.from(a);
  const rb = Array.from(b);
  const n = ra.length;
  const m = rb.length;
  let prev2 = new Array(m + 1).fill(0);
  let prev = new Array(m + 1).fill(0);
  let cur = new Array(m + 1).fill(0);
  for (let j = 0; j <= m; j++) {
    prev[j] = j;
  }
  for (let i = 1; i <= n; i++) {
    cur[0] = i;
    for (let j = 1; j <= m; j++) {
      const cost = ra[i - 1] === rb[j - 1] ? 0 : 1;
      let v = prev[j] + 1;
      if (cur[j - 1] + 1 < v) {
        v = cur[j - 1] + 1;
      }
      if (prev[j - 1] + cost < v) {
        v = prev[j - 1] + cost;
      }
      if (i > 1 && j > 1 && ra[i - 1] === rb[j - 2] && ra[i - 2] === rb[j - 1]) {
        if (prev2[j - 2] + 1 < v) {
          v = prev2[j - 2] + 1;
        }
      }
      cur[j] = v;
    }
    [prev2, prev, cur] = [prev, cur, prev2];
  }
  return prev[m];
}

// nextPrefixBound: p (ASCII) with its last character incremented.
export function nextPrefixBound(p) {
  return p.slice(0, -1) + String.fromCharCode(p.charCodeAt(p.length - 1) + 1);
}

// snippetHTML escapes like Go's html.EscapeString and turns \x01/\x02 into <mark></mark>.
export function snippetHTML(raw) {
  let out = '';
  for (const ch of String(raw ?? '')) {
    switch (ch) {
      case '&': out += '&amp;'; break;
      case '<': out += '&lt;'; break;
      case '>': out += '&gt;'; break;
      case '"': out += '&#34;'; break;
      case "'": out += '&#39;'; break;
      case '\x01': out += '<mark>'; break;
      case '\x02': out += '</mark>'; break;
      default: out += ch;
    }
  }
  return out;
}

function clampLimit(n) {
  n = Number.isInteger(n) ? n : 0;
  if (n <= 0) {
    return DEFAULT_LIMIT;
  }
  if (n > MAX_LIMIT) {
    return MAX_LIMIT;
  }
  return n;
}

// corrections mirrors DB.Corrections. exec(sql, params) runs one statement and returns its
// rows as arrays.
export function corrections(exec, q) {
  const corr = new Map();
  const done = new Set();
  for (const t of q.terms) {
    for (let i = 0; i < t.parts.length; i++) {
      const p = t.parts[i];
      const pre = t.prefix && i === t.parts.length - 1;
      const k = correctionKey(p, pre);
      if (done.has(k) || !needsCheck(p)) {
        continue;
      }
      done.add(k);
      const known = pre
        ? exec(VOCAB_PREFIX_SQL, [p, nextPrefixBound(p)]).length > 0
        : exec(VOCAB_EXACT_SQL, [p]).length > 0;
      if (known) {
        continue;
      }
      const maxd = maxEdits(p);
      const rows = exec(VOCAB_RANGE_SQL, [p.slice(0, 1), nextPrefixBound(p.slice(0, 1)), p.length - maxd, p.length + maxd]);
      const cands = rows.map((r) => ({ term: String(r[0]), docs: Number(r[1]) }));
      const [c, ok] = bestCorrection(p, cands);
      if (ok) {
        corr.set(k, c);
      }
    }
  }
  return corr;
}

// search mirrors DB.Search: opts {kind, limit}. Throws on an unknown kind; returns [] for
// text without a searchable word.
export function search(exec, text, opts = {}) {
  const kind = opts.kind ?? '';
  if (kind !== '' && !KINDS.includes(kind)) {
    throw new Error(`unknown kind ${JSON.stringify(kind)} (want one of ${KINDS.join(', ')})`);
  }
  const limit = clampLimit(opts.limit);
  const q = parse(text);
  if (q.terms.length === 0) {
    return [];
  }
  const corr = corrections(exec, q);
  const rows = exec(SEARCH_SQL, [strict(q, corr), loose(q, corr), kind, limit, key(q), q.name ?? '']);
  return rows.map((r) => ({
    kind: r[0],
    title: r[1],
    breadcrumb: r[2],
    url: r[3],
    snippet: snippetHTML(r[4]),
    score: Number(r[5]),
  }));
}
