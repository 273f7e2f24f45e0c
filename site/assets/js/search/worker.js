// Search worker (a module worker). It loads the SQLite engine and search.db on the first
// "init" message, then answers "search" messages. Started by ui.js:
//   new Worker(new URL('./worker.js', import.meta.url), { type: 'module' })
//
// Messages in:
//   {type: 'init', base}                       base: the site's base URL, ending in '/'
//   {type: 'search', id, q, kind?, limit?}     id: any number, echoed back
// Messages out:
//   {type: 'ready', ms, bytes}                 engine and search.db loaded (ms since init)
//   {type: 'results', id, q, results, ms}      results: [{kind, title, breadcrumb, url,
//                                              snippet, score}], url relative to base,
//                                              snippet HTML with <mark>
//   {type: 'error', id?, message}              id absent for a failed init
//
// The engine comes from <base>vendor/sqlite-wasm/index.mjs (which loads sqlite3.wasm
// beside itself) and the database from <base>search.db.
import { openSearchDB } from './engine.js';

let ready = null;

async function start(base) {
  const t0 = performance.now();
  const root = new URL(base, self.location.href);
  const engineURL = new URL('vendor/sqlite-wasm/index.mjs', root).href;
  const dbURL = new URL('search.db', root).href;
  const [mod, bytes] = await Promise.all([
    import(engineURL),
    fetch(dbURL).then((r) => {
      if (!r.ok) {
        throw new Error(`cannot load search.db (HTTP ${r.status})`);
      }
      return r.arrayBuffer();
    }),
  ]);
  const sqlite3 = await mod.default({
    print: () => {},
    printErr: () => {},
  });
  const db = openSearchDB(sqlite3, new Uint8Array(bytes));
  self.postMessage({ type: 'ready', ms: performance.now() - t0, bytes: bytes.byteLength });
  return db;
}

self.onmessage = async (e) => {
  const m = e.data || {};
  if (m.type === 'init') {
    if (!ready) {
      ready = start(m.base ?? '/');
      ready.catch((err) => {
        ready = null; // a later init may retry
        self.postMessage({ type: 'error', message: String(err?.message ?? err) });
      });
    }
    return;
  }
  if (m.type !== 'search') {
    self.postMessage({ type: 'error', id: m.id, message: `unknown message type ${JSON.stringify(m.type)}` });
    return;
  }
  try {
    if (!ready) {
      throw new Error('search before init');
    }
    const db = await ready;
    const t = performance.now();
    const results = db.search(String(m.q ?? ''), { kind: m.kind ?? '', limit: m.limit ?? 10 });
    self.postMessage({ type: 'results', id: m.id, q: m.q, results, ms: performance.now() - t });
  } catch (err) {
    self.postMessage({ type: 'error', id: m.id, message: String(err?.message ?? err) });
  }
};
