// Playground worker (a classic worker, built by Hugo as an IIFE). It runs
// the Go wasm module (playground/wasm) so that the page never blocks, even
// during a long graph search. Started by engine.js.
//
// Messages in:
//   {type: 'load', execURL}             load wasm_exec.js (sent at once, so that
//                                       it loads while the module compiles)
//   {type: 'init', execURL, module}     module: a compiled WebAssembly.Module
//   {type: 'compile', execURL, body}    body: the module's bytes as they arrive
//                                       (a transferred ReadableStream): compile
//                                       while it downloads, then as init
//   {type: 'call', id, fn, req}         fn: 'topo' | 'tune' | 'estimate' | ...;
//                                       a File (Blob) field of req is read
//                                       as text before the call
// Messages out:
//   {type: 'module', module}            the module a 'compile' made (the page keeps
//                                       it to restart the worker)
//   {type: 'ready', version, times}     times: wall-clock ms of workerStart,
//                                       compiled (after a 'compile'),
//                                       instantiated, goMain, files (after
//                                       fetching the module's data files)
//   {type: 'progress', id, polls, ms}   during a search, at most every 100 ms
//   {type: 'result', id, json, figures, ms}   json: the JSON text the Go function
//                                       returned (or its plain text), figures:
//                                       {name: SVG or HTML markup}
//   {type: 'fatal', message}            the module could not start or stopped
/* global Go */
'use strict';

let api = null;

// now is the wall-clock time in ms, comparable with the page's
// performance.timeOrigin + performance.now() (the worker has its own origin).
const now = () => performance.timeOrigin + performance.now();

const started = now();
let loaded = false;

// load runs wasm_exec.js (which defines Go) once.
function load(execURL) {
  if (loaded) return;
  importScripts(execURL);
  loaded = true;
}

// compile compiles the module from its bytes as they arrive, hands it to
// the page and runs it.
async function compile(execURL, body) {
  const resp = new Response(body, { headers: { 'Content-Type': 'application/wasm' } });
  const module = await (WebAssembly.compileStreaming ? WebAssembly.compileStreaming(resp) : resp.arrayBuffer().then((b) => WebAssembly.compile(b)));
  const compiled = now();
  self.postMessage({ type: 'module', module });
  await init(execURL, module, { compiled });
}

async function init(execURL, module, times = {}) {
  const t = { ...times, workerStart: started };
  load(execURL);
  const go = new Go();
  const instance = await WebAssembly.instantiate(module, go.importObject);
  t.instantiated = now();
  go.run(instance).then(() => {
    api = null;
    self.postMessage({ type: 'fatal', message: 'the playground module stopped' });
  });
  // main() has registered globalThis.distnav before it blocks.
  const mod = self.distnav;
  if (!mod) {
    throw new Error('the playground module did not register its API');
  }
  t.goMain = now();
  // A module built without its data files (the doctor's, without NCCL's
  // message catalog) lists them in files: they are fetched from beside
  // wasm_exec.js and handed over before the module is ready.
  if (Array.isArray(mod.files)) {
    const base = new URL(execURL, self.location.href);
    const texts = {};
    await Promise.all(mod.files.map(async (name) => {
      const resp = await fetch(new URL(name, base));
      if (!resp.ok) throw new Error(`could not load ${name} (HTTP ${resp.status})`);
      texts[name] = await resp.text();
    }));
    const err = mod.setFiles(texts);
    if (err) throw new Error(`the module's data files are unreadable: ${err}`);
    t.files = now();
  }
  api = mod;
  self.postMessage({ type: 'ready', version: api.version, times: t });
}

async function call(id, fn, req) {
  const t0 = performance.now();
  if (!api || typeof api[fn] !== 'function') {
    self.postMessage({ type: 'result', id, json: JSON.stringify({ error: { field: '', message: `unknown function ${fn}` } }), ms: 0 });
    return;
  }
  // A file the page holds unread (bigtext.js read(f, true)) is decoded
  // here, off the page's thread, as the page would have: UTF-8, each
  // invalid sequence a U+FFFD.
  if (req && typeof req === 'object' && !Array.isArray(req)) {
    for (const k of Object.keys(req)) {
      if (!(req[k] instanceof Blob)) continue;
      try {
        req[k] = await req[k].text();
      } catch (e) {
        self.postMessage({ type: 'result', id, json: JSON.stringify({ error: { field: k, message: `The file could not be read (${e && e.message ? e.message : e}).` } }), ms: performance.now() - t0 });
        return;
      }
    }
  }
  let arg = req;
  if (req && typeof req === 'object' && !Array.isArray(req)) {
    arg = Object.assign({}, req, {
      onProgress: (polls) => self.postMessage({ type: 'progress', id, polls, ms: performance.now() - t0 }),
    });
  }
  let json;
  let figures = null;
  let dead = false;
  try {
    const r = api[fn](arg);
    if (typeof r === 'string') {
      json = r;
    } else if (r && typeof r === 'object') {
      json = r.json;
      figures = r.figures;
    } else {
      // A Go runtime that died during the call (out of memory, for one)
      // returns nothing.
      dead = true;
    }
  } catch (e) {
    // The Go side recovers its own panics; this catches a dead runtime.
    dead = true;
  }
  if (dead) {
    api = null;
    json = JSON.stringify({ error: { field: '', message: 'The playground module stopped while answering this input (it may have run out of memory); it has been started again. Try a smaller input.' } });
  }
  self.postMessage({ type: 'result', id, json, figures, ms: performance.now() - t0 });
  if (dead) self.postMessage({ type: 'fatal', message: 'the playground module stopped' });
}

self.onmessage = (ev) => {
  const m = ev.data || {};
  if (m.type === 'load') {
    try {
      load(m.execURL);
    } catch (e) {
      // init loads it again and reports the failure.
    }
  } else if (m.type === 'init' || m.type === 'compile') {
    (m.type === 'init' ? init(m.execURL, m.module) : compile(m.execURL, m.body)).catch((e) => self.postMessage({ type: 'fatal', message: String(e && e.message ? e.message : e) }));
  } else if (m.type === 'call') {
    call(m.id, m.fn, m.req);
  }
};
