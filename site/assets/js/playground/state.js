// Page state in the URL: every input of a widget is a query parameter
// (env repeats: ?env=NCCL_ALGO%3DRing&env=...), so a shared link reproduces
// the view. A pasted topology travels in the fragment (#xml=...), deflated
// and base64url-encoded, when it is small enough for a link.

import { MAX_QUERY } from '../linkquery.js';

export const MAX_LINK_XML = 24 * 1024; // encoded characters

// readState reads only the first MAX_QUERY characters of a link's query;
// queryCut says what was left unread.
export { MAX_QUERY };

// queryCut returns the length of the link's query when it was over
// MAX_QUERY, else 0. The page's inline head script (csp.html) cut such a
// query to MAX_QUERY characters in the document's URL before the page was
// parsed and left its length in window.__queryCut; readState reads the
// whole parameters of what is left.
export function queryCut() {
  return window.__queryCut || 0;
}

export function readState() {
  let search = window.location.search;
  if (search.length > MAX_QUERY) {
    // Whole parameters only: up to the last '&' within the cap.
    search = search.slice(0, MAX_QUERY);
    search = search.slice(0, Math.max(1, search.lastIndexOf('&')));
  }
  const q = new URLSearchParams(search);
  const st = {};
  for (const [k, v] of q) {
    if (k === 'env') {
      (st.env = st.env || []).push(v);
    } else {
      st[k] = v;
    }
  }
  return st;
}

// writeState replaces the current history entry's query with st (keys with
// empty values are left out) and sets or clears the #xml fragment.
export function writeState(st, xmlFragment) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(st)) {
    if (v === undefined || v === null || v === '') continue;
    if (Array.isArray(v)) {
      v.filter((x) => x !== '').forEach((x) => q.append(k, x));
    } else {
      q.set(k, String(v));
    }
  }
  const qs = q.toString();
  let hash = window.location.hash;
  if (xmlFragment !== undefined) hash = xmlFragment ? `#xml=${xmlFragment}` : '';
  const url = `${window.location.pathname}${qs ? `?${qs}` : ''}${hash}`;
  if (url !== `${window.location.pathname}${window.location.search}${window.location.hash}`) {
    window.history.replaceState(null, '', url);
  }
}

function toB64url(bytes) {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  }
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromB64url(s) {
  const b = atob(s.replace(/-/g, '+').replace(/_/g, '/'));
  const out = new Uint8Array(b.length);
  for (let i = 0; i < b.length; i++) out[i] = b.charCodeAt(i);
  return out;
}

async function pipe(bytes, stream) {
  const r = new Blob([bytes]).stream().pipeThrough(stream);
  return new Uint8Array(await new Response(r).arrayBuffer());
}

// encodeXML returns the fragment value for xml, or '' when it is too big
// for a link (or compression is unavailable).
export async function encodeXML(xml) {
  if (!xml || typeof CompressionStream === 'undefined') return '';
  try {
    const z = await pipe(new TextEncoder().encode(xml), new CompressionStream('deflate-raw'));
    const s = toB64url(z);
    return s.length <= MAX_LINK_XML ? s : '';
  } catch (e) {
    return '';
  }
}

// inflate returns the deflate-raw stream in bytes decompressed, or null as
// soon as it passes maxBytes: deflate packs up to about 1,000 bytes into
// one, so a link of MAX_LINK_XML characters could otherwise unpack to
// tens of MB on the page before any cap saw it.
// The chunks arrive as resolved promises, all in one task; every
// INFLATE_YIELD bytes the loop gives the page a turn (unpacking 2 MiB in
// one go was a task of 130 ms under load).
const INFLATE_YIELD = 256 * 1024;
async function inflate(bytes, maxBytes) {
  const reader = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate-raw')).getReader();
  const parts = [];
  let n = 0;
  let next = INFLATE_YIELD;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    n += value.length;
    if (n > maxBytes) {
      reader.cancel();
      return null;
    }
    parts.push(value);
    if (n >= next) {
      next += INFLATE_YIELD;
      await new Promise((r) => setTimeout(r, 0));
    }
  }
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

// decodeXML reads the #xml fragment of the current URL; it returns '' when
// there is none or it cannot be read, and null when it unpacks to more
// than maxBytes.
export async function decodeXML(maxBytes) {
  const m = /^#xml=([A-Za-z0-9_-]+)$/.exec(window.location.hash);
  if (!m || typeof DecompressionStream === 'undefined' || m[1].length > MAX_LINK_XML) return '';
  try {
    const raw = await inflate(fromB64url(m[1]), maxBytes);
    // fatal: bytes that are not UTF-8 make the link unreadable, as the
    // model refuses them in a file, instead of growing into U+FFFD
    // replacements that the size check then reports as a larger text.
    return raw ? new TextDecoder('utf-8', { fatal: true }).decode(raw) : null;
  } catch (e) {
    return '';
  }
}

// unusedParams names the parameters of the page's link that the inputs did
// not take ("nodes=abc", "preset=no-such-box", a misspelt key), so that the
// page can say so instead of silently showing its defaults. A parameter is
// taken when the form control of that name holds its value, or, for keys
// without a control of their own, when the widget's state (what the page
// would write back) holds it; env entries are taken when the environment
// list holds them (a misspelt variable is kept there and flagged at its
// field, so it counts as taken).
export function unusedParams(st, form, wState) {
  const out = [];
  const envTaken = new Set((wState.env || []).map((e) => e.trim()));
  for (const [k, v] of Object.entries(st)) {
    const el = form.elements.namedItem(k);
    for (const x of Array.isArray(v) ? v : [v]) {
      if (x === '') continue;
      let used;
      if (k === 'env') {
        used = envTaken.has(x.trim());
      } else if (el && el.tagName && el.type !== 'checkbox' && el.type !== 'file') {
        used = el.value === x;
      } else if (Object.prototype.hasOwnProperty.call(wState, k)) {
        const w = wState[k];
        used = Array.isArray(w) ? w.includes(x) : String(w) === x;
      } else {
        used = false;
      }
      if (!used) out.push(`${k}=${x}`);
    }
  }
  return out;
}
