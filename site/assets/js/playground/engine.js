// Engine: the page's handle on the Go wasm module, which runs in a worker
// (worker.js). Calls run one at a time; a newer call with the same key
// replaces one still waiting; cancel() stops a long call by restarting the
// worker from the already compiled module.

// mark records the worker's start-up phases (wall-clock ms) as
// performance marks of this page, once: BenchmarkPageLoad reads them.
function mark(times) {
  if (!times || performance.getEntriesByName('pg-go-main').length) return;
  for (const [name, t] of [['pg-worker', times.workerStart], ['pg-instantiated', times.instantiated], ['pg-go-main', times.goMain]]) {
    performance.mark(name, { startTime: Math.max(0, t - performance.timeOrigin) });
  }
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

  // start compiles the module and starts the worker; it resolves to
  // {version, presets}. The worker is started first, so that it loads
  // wasm_exec.js while the module downloads and compiles (the page's head
  // has already asked for the module with a preload).
  async start() {
    const w = this.newWorker();
    if (!this.module) {
      performance.mark('pg-fetch');
      try {
        const resp = await fetch(this.wasmURL);
        if (!resp.ok) {
          throw new Error(`cannot load the playground module (HTTP ${resp.status})`);
        }
        this.module = await (WebAssembly.compileStreaming
          ? WebAssembly.compileStreaming(resp)
          : resp.arrayBuffer().then((b) => WebAssembly.compile(b)));
      } catch (e) {
        w.terminate();
        throw e;
      }
      performance.mark('pg-compiled');
    }
    return this.spawn(w);
  }

  // newWorker starts a worker and has it load wasm_exec.js.
  newWorker() {
    const w = new Worker(this.workerURL);
    w.postMessage({ type: 'load', execURL: this.execURL });
    return w;
  }

  // spawn hands the compiled module to worker w (a new one by default).
  spawn(w = this.newWorker()) {
    this.worker = w;
    this.ready = new Promise((resolve, reject) => {
      w.onmessage = (ev) => {
        const m = ev.data;
        if (m.type === 'ready') {
          mark(m.times);
          this.info = { version: m.version, presets: JSON.parse(m.presets) };
          w.onmessage = (e) => this.onMessage(e.data);
          resolve(this.info);
        } else if (m.type === 'fatal') {
          reject(new Error(m.message));
        }
      };
      w.onerror = (ev) => reject(new Error(ev.message || 'the playground worker could not start'));
    });
    w.postMessage({ type: 'init', execURL: this.execURL, module: this.module });
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
        const resp = await fetch(url);
        if (!resp.ok) {
          throw new Error(`cannot load the playground module (HTTP ${resp.status})`);
        }
        const module = await (WebAssembly.compileStreaming
          ? WebAssembly.compileStreaming(resp)
          : resp.arrayBuffer().then((b) => WebAssembly.compile(b)));
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
