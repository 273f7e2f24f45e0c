// Search worker (a module worker). It loads the SQLite engine and search.db on the first
// "init" message, then answers "search" messages. Started by ui.js:
//   new Worker(new URL('./worker.js', import.meta.url), { type: 'module' })
//
// Messages in:
//   {type: 'init', base}                       base: the site's base URL, ending in '/'
//   {type: 'search', id, q, kind?, limit?}     id: any number, echoed back
// Messages out:
//   {type: 'ready', ms, bytes, times}          engine and search.db loaded: ms since init,
//                                              db size, and times (ms) at which the engine
//                                              JS, the db, the wasm, the open and a warm-up
//                                              search finished
//   {type: 'results', id, q, results, ms}      results: [{kind, title, breadcrumb, url,
//                                              snippet, score}], url relative to base,
//                                              snippet HTML with <mark>
//   {type: 'error', id?, message}              id absent for a failed init
//
// The engine comes from <base>vendor/sqlite-wasm/ (index.mjs and sqlite3.wasm, fetched in
// parallel with the database) and the database from <base>search.db. After "ready" the
// worker runs a few throw-away searches between messages to get the wasm optimized.
import { openSearchDB } from './engine.js';

let ready = null;

async function start(base) {
  const t0 = performance.now();
  const root = new URL(base, self.location.href);
  const engineDir = new URL('vendor/sqlite-wasm/', root);
  const dbURL = new URL('search.db', root).href;
  const times = {};
  const since = (name) => (times[name] = Math.round(performance.now() - t0));
  // Fetch the wasm at the same time as the engine's JavaScript and the database, rather than
  // after the JavaScript has loaded, and compile it while it streams in.
  const wasm = fetch(new URL('sqlite3.wasm', engineDir).href).then((r) => {
    if (!r.ok) {
      throw new Error(`cannot load sqlite3.wasm (HTTP ${r.status})`);
    }
    return r;
  });
  const [mod, bytes] = await Promise.all([
    import(new URL('index.mjs', engineDir).href).then((m) => (since('engine'), m)),
    fetch(dbURL).then((r) => {
      if (!r.ok) {
        throw new Error(`cannot load search.db (HTTP ${r.status})`);
      }
      return r.arrayBuffer();
    }).then((b) => (since('db'), b)),
  ]);
  const sqlite3 = await mod.default({
    print: () => {},
    printErr: () => {},
    instantiateWasm(imports, done) {
      wasm
        .then((r) => WebAssembly.instantiateStreaming(r, imports))
        .then((res) => done(res.instance, res.module))
        .catch((err) => self.postMessage({ type: 'error', message: String(err?.message ?? err) }));
      return {};
    },
  });
  since('wasm');
  const db = openSearchDB(sqlite3, new Uint8Array(bytes));
  since('open');
  // One throw-away search compiles the engine's hot paths (the browser compiles wasm
  // functions on first call) while the user is still typing.
  db.search('warm up');
  since('warm');
  self.postMessage({ type: 'ready', ms: performance.now() - t0, bytes: bytes.byteLength, times });
  warmUp(db);
  return db;
}

// WARM_QUERIES exercise the search paths (broad prefixes, several words, a misspelling).
const WARM_QUERIES = ['th', 'co pr', 'the re', 'nccl', 'wrod speling', 'in', 'st'];
const WARM_ROUNDS = 3;

// warmUp runs throw-away searches one per task, so that real searches (messages) are served
// in between: the browser first runs wasm with a baseline compiler and optimizes functions
// once they have run enough, and a broad search is several times faster after that.
function warmUp(db) {
  let i = 0;
  const tick = () => {
    if (i >= WARM_QUERIES.length * WARM_ROUNDS) {
      return;
    }
    try {
      db.search(WARM_QUERIES[i % WARM_QUERIES.length]);
    } catch {
      return;
    }
    i++;
    setTimeout(tick, 0);
  };
  setTimeout(tick, 0);
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
