// Opens search.db bytes with @sqlite.org/sqlite-wasm and runs searches on it. Shared by
// worker.js (browser) and search.test.mjs (node), so the code that the parity test runs is
// the code the browser runs.
import { search, SCHEMA_VERSION } from './query.js';

// DEFAULT_TIMEOUT_MS bounds one search, like searchdb.DefaultTimeout.
export const DEFAULT_TIMEOUT_MS = 2000;

// openSearchDB loads a search.db file (Uint8Array or ArrayBuffer) into an in-memory,
// read-only database. sqlite3 is the object returned by sqlite3InitModule().
export function openSearchDB(sqlite3, bytes) {
  const { capi, wasm, oo1 } = sqlite3;
  const data = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  if (data.byteLength < 100) {
    throw new Error(`search.db is ${data.byteLength} bytes: not an SQLite database`);
  }
  const db = new oo1.DB(':memory:', 'r');
  try {
    const p = wasm.allocFromTypedArray(data);
    const rc = capi.sqlite3_deserialize(
      db.pointer, 'main', p, data.byteLength, data.byteLength,
      capi.SQLITE_DESERIALIZE_FREEONCLOSE | capi.SQLITE_DESERIALIZE_READONLY,
    );
    db.checkRc(rc);
    const v = db.selectValue('PRAGMA user_version');
    if (v !== SCHEMA_VERSION) {
      throw new Error(`search.db has schema version ${v}, want ${SCHEMA_VERSION}`);
    }
  } catch (e) {
    db.close();
    throw e;
  }

  // A progress handler stops any statement that runs past the deadline (the browser's
  // counterpart of go-sqlite3's interrupt on context cancellation).
  let deadline = Infinity;
  capi.sqlite3_progress_handler(db.pointer, 1000, () => (performance.now() > deadline ? 1 : 0), 0);

  const stmts = new Map();
  const exec = (sql, params) => {
    let st = stmts.get(sql);
    if (!st) {
      st = db.prepare(sql);
      stmts.set(sql, st);
    }
    try {
      st.bind(params);
      const rows = [];
      while (st.step()) {
        rows.push(st.get([]));
      }
      return rows;
    } finally {
      st.reset(true);
    }
  };

  return {
    // search runs one query; opts {kind, limit}; timeoutMs bounds it.
    search(text, opts = {}, timeoutMs = DEFAULT_TIMEOUT_MS) {
      deadline = performance.now() + timeoutMs;
      try {
        return search(exec, text, opts);
      } catch (e) {
        if (performance.now() > deadline) {
          throw new Error(`search stopped after ${timeoutMs} ms`);
        }
        throw e;
      } finally {
        deadline = Infinity;
      }
    },
    close() {
      for (const st of stmts.values()) {
        st.finalize();
      }
      stmts.clear();
      db.close();
    },
  };
}
