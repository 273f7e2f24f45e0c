// Times searches with the browser's engine (sqlite-wasm + engine.js) under node:
//   node site/assets/js/search/bench.mjs site/static/search.db
// Prints the engine start, the open, the first search, and mean/p95 per query after a
// warm-up. Not a test.
import sqlite3InitModule from '@sqlite.org/sqlite-wasm';
import { readFileSync } from 'node:fs';
import { openSearchDB } from './engine.js';
const path = process.argv[2];
const t0 = performance.now();
const sqlite3 = await sqlite3InitModule();
const t1 = performance.now();
const db = openSearchDB(sqlite3, new Uint8Array(readFileSync(path)));
const t2 = performance.now();
db.search('NCCL_P2P_DISABLE');
const t3 = performance.now();
console.log(`init ${(t1-t0).toFixed(1)} ms, open ${(t2-t1).toFixed(1)} ms, first search ${(t3-t2).toFixed(1)} ms`);
for (const q of ['NCCL_P2P_DISABLE', 'p2p disable', 'why is allreduce slow on 4090', 'proces group', 'watchd', 'n', 'nccl', 'nccl ']) {
  const n = 30;
  for (let i = 0; i < 5; i++) db.search(q);
  const s = performance.now();
  for (let i = 0; i < n; i++) db.search(q);
  const ms = (performance.now() - s) / n;
  const times = [];
  for (let i = 0; i < 20; i++) { const a = performance.now(); db.search(q); times.push(performance.now() - a); }
  times.sort((a, b) => a - b);
  console.log(`${q.padEnd(32)} mean ${ms.toFixed(2)} ms  p95 ${times[18].toFixed(2)} ms`);
}
