// Engine: the page's handle on the Go wasm module, which runs in a worker
// (worker.js). Calls run one at a time; a newer call with the same key
// replaces one still waiting; cancel() stops a long call by restarting the
// worker from the already compiled module.

// mark records the worker's start-up phases (wall-clock ms) as
// performance marks of this page, once: BenchmarkPageLoad reads them.
function mark(times) {
  if (!times || performance.getEntriesByName('pg-go-main').length) return;
  for (const [name, t] of [['pg-compiled', times.compiled], ['pg-worker', times.workerStart], ['pg-instantiated', times.instantiated], ['pg-go-main', times.goMain], ['pg-files', times.files]]) {
    if (t) performance.mark(name, { startTime: Math.max(0, t - performance.timeOrigin) });
  }
}

// fetchWasm fetches a module's bytes (the page's fetch takes the response
// the head's preload already asked for).
async function fetchWasm(url) {
  const resp = await fetch(url);
  if (!resp.ok) {
    throw new Error(`cannot load the playground module (HTTP ${resp.status})`);
  }
  return resp;
}

// compileHere compiles a response on this thread (the fallback where a
// response body cannot be handed to a worker).
function compileHere(resp) {
  return WebAssembly.compileStreaming ? WebAssembly.compileStreaming(resp) : resp.arrayBuffer().then((b) => WebAssembly.compile(b));
}

export class Engine {
  constructor({ wasmURL, execURL, workerURL }) {
    this.wasmURL = wasmURL;
    this.execURL = execURL;
    this.workerURL = workerURL;
    this.module = null;
    this.worker = null;
    this.ready = null;
    this.seq = 0;
    this.current = null; // {id, fn, req, resolve, reject, onProgress, t0}
    this.queue = [];
    this.warmQueue = [];
    this.info = null;
  }

  // start starts the worker and has it compile and run the module; it
  // resolves to {version} once the module answers. Calls made before then
  // wait for it (start sets this.ready at once). The worker is started
  // first, so that it loads wasm_exec.js while the module downloads. The
  // response body is handed to the worker as it arrives (a transferred
  // stream), so the worker compiles it while it downloads and
  // instantiates it at once: neither the compile nor the hand-over of the
  // module takes the page's thread. Where a stream cannot be transferred,
  // this thread compiles and posts the module.
  start() {
    this.ready = this.boot();
    return this.ready;
  }

  async boot() {
    const w = this.newWorker();
    let resp;
    try {
      resp = await fetchWasm(this.wasmURL);
    } catch (e) {
      w.terminate();
      throw e;
    }
    if (resp.body) {
      try {
        return await this.spawn(w, { type: 'compile', execURL: this.execURL, body: resp.body }, [resp.body]);
      } catch (e) {
        if (e.name !== 'DataCloneError') {
          w.terminate();
          throw e;
        }
      }
    }
    try {
      this.module = await compileHere(resp);
    } catch (e) {
      w.terminate();
      throw e;
    }
    performance.mark('pg-compiled');
    return this.spawn(w);
  }

  // newWorker starts a worker and has it load wasm_exec.js.
  newWorker() {
    const w = new Worker(this.workerURL);
    w.postMessage({ type: 'load', execURL: this.execURL });
    return w;
  }

  // spawn hands worker w (a new one by default) its module: the compiled
  // module by default, or msg (a 'compile' message with the transfer list
  // transfer), after which the worker sends the module it compiled back,
  // for restarts.
  spawn(w = this.newWorker(), msg = { type: 'init', execURL: this.execURL, module: this.module }, transfer = []) {
    this.worker = w;
    this.ready = new Promise((resolve, reject) => {
      w.onmessage = (ev) => {
        const m = ev.data;
        if (m.type === 'module') {
          this.module = m.module;
        } else if (m.type === 'ready') {
          mark(m.times);
          this.info = { version: m.version };
          w.onmessage = (e) => this.onMessage(e.data);
          resolve(this.info);
        } else if (m.type === 'fatal') {
          reject(new Error(m.message));
        }
      };
      w.onerror = (ev) => reject(new Error(ev.message || 'the playground worker could not start'));
    });
    w.postMessage(msg, transfer);
    return this.ready;
  }

  onMessage(m) {
    const c = this.current;
    if (m.type === 'fatal') {
      if (c) {
        c.reject(new Error(m.message));
        this.current = null;
      }
      this.restart();
      return;
    }
    if (!c || m.id !== c.id) {
      return;
    }
    if (m.type === 'progress') {
      if (c.onProgress) c.onProgress(m);
    } else if (m.type === 'result') {
      this.current = null;
      let data;
      try {
        data = JSON.parse(m.json);
      } catch (e) {
        data = { raw: m.json };
      }
      if (m.figures && data && typeof data === 'object') data.figures = m.figures;
      if (!performance.getEntriesByName('pg-answer').length) {
        performance.mark('pg-answer', { detail: { modelMs: m.ms } });
      }
      c.resolve({ data, ms: m.ms, total: performance.now() - c.t0 });
      this.next();
    }
  }

  // call runs fn(req) in the worker. key: calls with the same key replace
  // each other while waiting (only the latest input matters).
  call(fn, req, { key = fn, onProgress } = {}) {
    return new Promise((resolve, reject) => {
      const job = { fn, req, key, resolve, reject, onProgress, t0: performance.now() };
      this.queue = this.queue.filter((q) => {
        if (q.key === key) {
          q.resolve({ superseded: true });
          return false;
        }
        return true;
      });
      this.queue.push(job);
      this.next();
    });
  }

  // warm queues low-priority calls that run only when nothing else waits:
  // they fill the module's caches (models of other presets) and let the
  // browser compile the hot wasm functions with its optimizing tier, so
  // that later inputs update quickly. Their results are dropped. done() is
  // called when the list is exhausted.
  warm(list, done) {
    this.warmQueue = list.map(({ fn, req }) => ({ fn, req, warm: true, resolve: () => {}, reject: () => {}, t0: 0 }));
    this.warmDone = done;
    this.next();
  }

  next() {
    if (this.current) return;
    if (this.queue.length === 0 && this.warmQueue.length === 0) {
      if (this.warmDone) {
        const d = this.warmDone;
        this.warmDone = null;
        d();
      }
      return;
    }
    this.ready.then(() => {
      if (this.current) return;
      const job = this.queue.length > 0 ? this.queue.shift() : this.warmQueue.shift();
      if (!job) return;
      job.id = ++this.seq;
      job.started = performance.now();
      this.current = job;
      this.worker.postMessage({ type: 'call', id: job.id, fn: job.fn, req: job.req });
    }, (err) => {
      const q = this.queue;
      this.queue = [];
      q.forEach((j) => j.reject(err));
    });
  }

  // busyFor returns how long the running call has taken (ms), or 0.
  busyFor() {
    return this.current ? performance.now() - this.current.started : 0;
  }

  // upgrade replaces the module with the one at url, a binary that answers
  // everything this one does and more (the estimator's paste box), once:
  // a running call is cancelled and what waits runs on the new module.
  upgrade(url) {
    if (!this.upgrading) {
      this.upgrading = (async () => {
        const module = await compileHere(await fetchWasm(url));
        this.wasmURL = url;
        this.module = module;
        this.cancel();
        await this.ready;
      })();
      this.upgrading.catch(() => {
        this.upgrading = null; // a later paste tries again
      });
    }
    return this.upgrading;
  }

  // cancel stops the running call (its promise resolves {cancelled: true})
  // and restarts the worker.
  cancel() {
    const c = this.current;
    this.current = null;
    this.warmQueue = [];
    if (c) c.resolve({ cancelled: true });
    this.restart();
  }

  restart() {
    if (this.worker) this.worker.terminate();
    this.spawn().then(() => this.next(), () => {});
  }
}
