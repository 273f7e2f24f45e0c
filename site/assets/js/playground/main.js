// Playground entry point (one per playground page). The page carries the
// static, no-JavaScript view in #pg-static and an empty #pg-app with data
// attributes: widget, preset (the default), wasm, exec and worker URLs.
// This module starts the Go wasm module in a worker, builds the widget's
// controls, and from then on every input change asks the module and
// redraws; the static view is hidden once the live one works.
import { Engine } from './engine.js';
import { h, setError, markRendered } from './ui.js';
import { readState, writeState, decodeXML, unusedParams, queryCut, MAX_QUERY } from './state.js';
import { topologyWidget } from './topology.js';
import { algorithmsWidget } from './algorithms.js';
import { estimatorWidget } from './estimator.js';
import { stepWidget } from './step.js';
import { doctorWidget } from './doctor.js';
import { LIMITS, PRESETS, mib } from './constants.js';

const widgets = {
  topology: topologyWidget,
  algorithms: algorithmsWidget,
  estimator: estimatorWidget,
  step: stepWidget,
  doctor: doctorWidget,
};

// A call that takes longer than this shows progress and a Cancel button.
const SHOW_PROGRESS_MS = 200;

// A first answer that takes this much longer than SHOW_PROGRESS_MS shows
// its progress and Cancel button in the floating loading note; the live
// view replaces the static one only with the answer, in one step.
const FIRST_ANSWER_WAIT_MS = 2500;

// The "not taken from the link" note names at most this many parameters.
const LINK_NOTE_ITEMS = 8;

function abs(url) {
  return new URL(url, document.baseURI).href;
}

// ready marks the first live result: <html data-playground="ready">, which
// tests and `make bench` wait on, and its time since navigation.
function ready() {
  const root = document.documentElement;
  if (root.dataset.playground === 'ready') return;
  window.__pgReadyMs = performance.now();
  performance.mark('pg-ready');
  root.dataset.playground = 'ready';
}

async function boot() {
  performance.mark('pg-boot');
  const app = document.getElementById('pg-app');
  if (!app) return;
  const make = widgets[app.dataset.widget];
  if (!make) return;
  const staticView = document.getElementById('pg-static');
  const loading = h('div', { class: 'pg-loading', role: 'status' }, 'Loading the interactive playground…');
  app.before(loading);

  const engine = new Engine({ wasmURL: abs(app.dataset.wasm), execURL: abs(app.dataset.exec), workerURL: abs(app.dataset.worker) });
  // The inputs are built, hidden, and the first question is ready while
  // the module downloads (the systems come with the page, constants.js);
  // the question is asked as soon as the module runs.
  engine.start().catch((e) => {
    loading.textContent = `The interactive playground could not start (${e.message}); the results below are the static view of the default system.`;
  });
  // The static view is painted first (the page's first and largest
  // contentful paint); the live inputs are built after that frame.
  await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
  const state = readState();
  const linkXML = await decodeXML(LIMITS.xmlBytes);
  const xml = linkXML || '';
  const w = make({ engine, presets: PRESETS, state, xml, defaultPreset: app.dataset.preset || PRESETS[0].name, update: () => update() });

  const general = h('p', { class: 'pg-error', role: 'alert' });
  const timing = h('span', { class: 'pg-hint', id: 'pg-timing' });
  const progress = h('progress', { hidden: true, 'aria-label': 'Search progress' });
  const progressText = h('span', { role: 'status' });
  const cancel = h('button', { type: 'button', class: 'pg-button', hidden: true }, 'Cancel');
  const status = h('div', { class: 'pg-status' }, progress, progressText, cancel, timing);
  const form = h('form', { class: 'pg-controls', 'aria-label': 'Inputs', onsubmit: (e) => e.preventDefault() }, w.controls);
  // After a rejected input the previous results stay, greyed out under a
  // note saying they are stale, until an input is accepted again.
  const staleNote = h('p', { class: 'pg-stale-note', role: 'status', hidden: true });
  const results = h('div', { class: 'pg-results' }, general, status, staleNote, w.outputs);
  const setStale = (on) => {
    w.outputs.classList.toggle('pg-stale', on);
    staleNote.hidden = !on;
    staleNote.textContent = on ? 'Stale: these results are for the previous input. Fix the input marked in red to update them.' : '';
    if (on) w.outputs.setAttribute('aria-describedby', 'pg-stale-note');
    else w.outputs.removeAttribute('aria-describedby');
  };
  staleNote.id = 'pg-stale-note';
  app.replaceChildren(form, results);
  // Parameters of the link the inputs could not take are named once, above
  // the results, after the first update (some inputs, such as the channel
  // list, are filled from its answer), until the reader changes an input.
  const linkNote = h('p', { class: 'pg-link-note', role: 'status', id: 'pg-link-note', hidden: true });
  results.prepend(linkNote);
  let linkChecked = false;
  const checkLink = () => {
    if (linkChecked) return;
    linkChecked = true;
    const unused = unusedParams(state, form, w.state());
    if (queryCut()) unused.unshift(`the link's query past its first ${MAX_QUERY / 1024} KiB (it is ${Math.round(queryCut() / 1024)} KiB)`);
    if (linkXML === null) unused.push(`#xml= (the topology in the link unpacks to more than ${mib(LIMITS.xmlBytes)}, the limit)`);
    else if (window.location.hash.startsWith('#xml=') && !xml) unused.push('#xml= (unreadable: not deflated base64url of UTF-8 text)');
    if (!unused.length) return;
    // A few names, each cut short, say enough; a hostile link can hold
    // thousands.
    const shown = unused.slice(0, LINK_NOTE_ITEMS).map((u) => (u.length > 80 ? `${u.slice(0, 77)}…` : u));
    const more = unused.length > shown.length ? ` and ${unused.length - shown.length} more` : '';
    linkNote.textContent = `Not taken from the link: ${shown.join(', ')}${more}. The inputs show what the page uses instead.`;
    linkNote.hidden = false;
  };
  let updates = 0;
  // The live view replaces the static one once its first answer (or
  // error) is drawn, in one step: showing an empty live view first and
  // filling it later moved everything under it (a layout shift of 0.42 on
  // the estimator). Removing the static view (not hiding it) keeps ids
  // unique and the page holding one copy of each table.
  let revealed = false;
  const reveal = () => {
    if (revealed) return;
    revealed = true;
    // The status row goes back above the results if a slow first answer
    // lent it to the loading note.
    if (status.parentNode !== results) staleNote.before(status);
    app.hidden = false;
    loading.remove();
    if (staticView) staticView.remove();
  };

  let rendered = false;
  let busyTimer = 0;
  let pending = 0;
  const setBusy = (on) => {
    clearTimeout(busyTimer);
    if (!on) {
      progress.hidden = true;
      cancel.hidden = true;
      progressText.textContent = '';
      return;
    }
    const showProgress = () => {
      progress.hidden = false;
      progress.removeAttribute('value');
      cancel.hidden = false;
      progressText.textContent = 'Searching…';
    };
    busyTimer = setTimeout(() => {
      if (revealed) {
        showProgress();
        return;
      }
      // The first answer takes a while (a slow machine, a large system):
      // the floating note says so, and when it takes seconds the note
      // also shows its progress and Cancel button. The static view stays
      // until the answer replaces it: showing the live view early, with
      // nothing in its results yet, moved the page (a layout shift of
      // 0.37 on the algorithms page).
      loading.textContent = 'Computing the first answer…';
      busyTimer = setTimeout(() => {
        loading.append(status);
        showProgress();
      }, FIRST_ANSWER_WAIT_MS);
    }, SHOW_PROGRESS_MS);
  };
  cancel.addEventListener('click', () => {
    engine.cancel();
    setBusy(false);
    if (!revealed) {
      // Cancelled before any answer: the live inputs, to ask another.
      reveal();
      ready();
      progressText.textContent = 'Cancelled before the first answer; change an input to ask again.';
      markRendered();
      return;
    }
    progressText.textContent = 'Cancelled; the results shown are from the previous input.';
  });

  async function update() {
    if (!engine.info) {
      // The module is still loading (the loading note says so): the page
      // is live, and its inputs are read, once it runs.
      try {
        await engine.ready;
      } catch (e) {
        return; // start's handler shows why
      }
    }
    const t0 = performance.now();
    if (updates++ > 0) {
      linkNote.hidden = true;
      linkNote.textContent = '';
    }
    w.clearErrors();
    general.textContent = '';
    const job = w.request();
    if (job.idle) {
      // Nothing to compute yet (the doctor before a paste): the page is live.
      reveal();
      ready();
      checkLink();
      markRendered();
      return;
    }
    if (job.error) {
      showError(job.error);
      reveal();
      checkLink();
      markRendered();
      return;
    }
    // A pasted run needs the module with the paste box (the estimator's
    // first module leaves it out to load faster): fetched on first use.
    if (job.req && job.req.ncclTests && app.dataset.pasteWasm) {
      try {
        await engine.upgrade(abs(app.dataset.pasteWasm));
      } catch (e) {
        showError({ field: 'nccl_tests', message: `The nccl-tests reader could not be loaded (${e.message}).` });
        checkLink();
        markRendered();
        return;
      }
    }
    const token = ++pending;
    // A long call still running: stop it, the input it answers is stale.
    if (engine.busyFor() > SHOW_PROGRESS_MS) engine.cancel();
    setBusy(true);
    const r = await engine.call(job.fn, job.req, {
      key: 'main',
      onProgress: (m) => {
        progressText.textContent = `Searching… ${(m.ms / 1000).toFixed(1)} s`;
      },
    });
    if (r.superseded || r.cancelled || token !== pending) return;
    setBusy(false);
    const d = r.data;
    if (d.error) {
      showError(d.error);
      reveal();
      checkLink();
      markRendered(performance.now() - t0);
      return;
    }
    w.render(d);
    reveal();
    ready();
    rendered = true;
    setStale(false);
    checkLink();
    const ms = performance.now() - t0;
    timing.textContent = `Updated in ${ms.toFixed(0)} ms (model ${r.ms.toFixed(0)} ms).`;
    markRendered(ms);
    const frag = w.fragment ? await w.fragment() : undefined;
    writeState(w.state(), frag);
    // A widget whose question takes no preset (the doctor's) has nothing
    // to warm: repeating its request would re-read the same log in the
    // worker once per preset, and send it again each time.
    if (!warmed && w.warmup !== false) {
      warmed = true;
      startWarmup(job);
    }
  }

  // After the first update, warm the module up in the background: the
  // same question for every preset (8-GPU systems first), the widget's
  // other common inputs (w.variants) on the current system, and once more
  // with a changed environment, which needs fresh searches.
  let warmed = false;
  function startWarmup(job) {
    const pg = (window.__pg = window.__pg || { renders: 0, times: [] });
    pg.warm = 'running';
    const names = PRESETS.map((p) => p.name);
    const order = names.filter((n) => /8x/.test(n)).concat(names.filter((n) => !/8x/.test(n)));
    const list = [];
    // A pasted nccl-tests run is left out of every warm-up request: the
    // searches are what is warmed, and each request would send the paste
    // (up to 2 MiB) again and compare it once more.
    const current = { ...job.req };
    delete current.ncclTests;
    const base = () => {
      const req = { ...current };
      delete req.xml;
      delete req.xmlName;
      delete req.nodes;
      return req;
    };
    for (const v of w.variants || []) list.push({ fn: job.fn, req: { ...current, ...v } });
    for (const name of order) list.push({ fn: job.fn, req: { ...base(), preset: name } });
    for (const name of order) {
      for (const v of w.variants || []) list.push({ fn: job.fn, req: { ...base(), ...v, preset: name } });
    }
    for (const name of order) {
      const req = { ...base(), preset: name };
      req.env = (req.env || []).concat([`NCCL_MAX_NCHANNELS=${8 + (list.length % 8)}`]);
      list.push({ fn: job.fn, req });
    }
    engine.warm(list, () => {
      pg.warm = 'done';
    });
  }

  function showError(err) {
    if (rendered) setStale(true);
    const f = w.fieldFor(err);
    if (f) {
      setError(f, err.message);
    } else {
      general.textContent = err.message;
    }
    w.onError && w.onError(err);
  }

  update();
}

boot();
