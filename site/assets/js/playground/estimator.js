// Estimator page: busbw and time against size for one collective, NCCL's
// model next to the calibrated estimate with its error band, and the
// published measurements of the same system as points linked to their
// sources. Opens on the RTX 4090 box with P2P unavailable. The reader's
// own nccl-tests output, pasted in the box, is compared by the service as
// `ncclsim compare` does and drawn over the curves.
import { h, fill, field, select, section, setHTML, scroller, setError, commandBar } from './ui.js';
import { systemPicker } from './system.js';
import { envEditor } from './env.js';
import { bigText, overLimit } from './bigtext.js';
import { COLLS, DTYPES, FABRICS, ESTIMATOR_PRESET, ESTIMATE, LIMITS } from './constants.js';

// base is the site's root (<html data-base>, Hugo's relURL of "").
const base = new URL(document.documentElement.dataset.base || '/', document.baseURI).href;
const join = (els) => els.flatMap((e, i) => (i ? [', ', e] : [e]));


export function estimatorWidget({ engine, presets, state, xml, update }) {
  const def = presets.some((p) => p.name === ESTIMATOR_PRESET) ? ESTIMATOR_PRESET : presets[0].name;
  const sys = systemPicker({ presets, state, xml, defaultPreset: def, engine, onChange: update });
  const collSel = select(COLLS, state.coll || ESTIMATE.coll);
  collSel.name = 'coll';
  const fColl = field({ label: 'Collective', control: collSel });
  const size = h('input', { type: 'text', name: 'bytes', value: state.bytes || ESTIMATE.bytes, spellcheck: 'false', autocomplete: 'off', inputmode: 'text' });
  const fSize = field({ label: 'Message size', control: size, hint: 'bytes: 64M, 1.5GiB, 1e9 (K/M/G/T are powers of 1024)' });
  const dtype = select(DTYPES, state.dtype || ESTIMATE.dtype);
  dtype.name = 'dtype';
  const fDtype = field({ label: 'Element type', control: dtype });
  const fabric = select(FABRICS, state.fabric || ESTIMATE.fabric);
  fabric.name = 'fabric';
  const fFabric = field({ label: 'Network between nodes', control: fabric });
  const env = envEditor({ state, onChange: update });
  // The reader's own run, read by the service's nccl-tests parser; not kept
  // in the address (too long for a link).
  const paste = h('textarea', { name: 'nccl_tests', rows: '6', spellcheck: 'false', autocomplete: 'off', wrap: 'off',
    placeholder: '#       size         count      type   redop    root     time   algbw   busbw #wrong ...' });
  const fPaste = field({ label: 'Paste your nccl-tests output', control: paste, wide: true,
    hint: 'all_reduce_perf and friends: the console log or only the table; the collective and rank count come from it' });
  let timer = 0;
  collSel.addEventListener('change', update);
  dtype.addEventListener('change', update);
  fabric.addEventListener('change', update);
  size.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(update, 250);
  });
  size.addEventListener('change', () => {
    clearTimeout(timer);
    update();
  });
  // A large paste is held in memory, and its size counted in UTF-8 bytes as
  // the service counts MaxNCCLTestsBytes (bigtext.js).
  const pasteBox = bigText(paste, {
    onChange: (now) => {
      clearTimeout(timer);
      if (now) update();
      else timer = setTimeout(update, 400);
    },
    what: 'nccl-tests output',
    maxBytes: LIMITS.ncclTestsBytes,
    onError: (m) => setError(fPaste, m),
    // A dropped file is read as a pasted run (binary files and files over
    // the cap refused with the reason).
    onFile: async (f) => {
      setError(fPaste, '');
      const t = await pasteBox.read(f);
      if (t === null) return;
      pasteBox.set(t, f.name, f.size, () => {
        clearTimeout(timer);
        update();
      });
    },
  });

  const cmd = commandBar();
  const est = section('At the chosen size', 'pg-estimate');
  const busbw = section('Bus bandwidth against size', 'pg-busbw');
  const time = section('Time against size', 'pg-time');
  const meas = section('Published measurements of this system', 'pg-measurements');
  const yours = section('Your run next to the estimate', 'pg-compare');
  yours.el.hidden = true;
  const busWrap = h('div', { class: 'pg-figure' });
  const timeWrap = h('div', { class: 'pg-figure' });
  const detail = h('p', { class: 'pg-detail', 'aria-live': 'polite' }, 'Tab to a measured point to read it; Enter opens its source.');
  busbw.body.append(busWrap, detail);
  time.body.append(timeWrap);
  const showDetail = (ev) => {
    const g = ev.target.closest && ev.target.closest('[aria-label]');
    if (g && g.tagName !== 'svg') detail.textContent = g.getAttribute('aria-label');
  };
  busWrap.addEventListener('focusin', showDetail);
  const outputs = h('div', {}, cmd.el, est.el, busbw.el, time.el, yours.el, meas.el);
  const resultSections = [est, busbw, time, meas];
  let answered = false;

  // renderCompare shows the comparison of the pasted run, or the reason it
  // could not be read next to the box (the curves stay).
  const renderCompare = (d) => {
    const c = d.compare;
    setError(fPaste, d.compare_error ? d.compare_error.message : '');
    if (!c) {
      yours.el.hidden = true;
      fill(yours.body);
      return;
    }
    yours.el.hidden = false;
    const t = scroller('Your run per size');
    setHTML(t, d.figures.compare);
    const s = c.summary;
    const parts = [h('p', { id: 'pg-compare-summary' }, `${c.coll} on ${c.nranks} ranks (table at line ${c.header_line}; collective from the ${c.coll_from}, rank count from the ${c.nranks_from})` +
      (s.median_error_pct === null ? '.' : `: at sizes ≥ 1 MiB the calibrated estimate is off by ${s.median_error_pct.toFixed(1)} % (median), NCCL’s model by ${s.model_median_error_pct.toFixed(1)} %; ${s.points_in_band} of ${s.points} points lie within the band.`)),
    d.compare_drawn ? h('p', {}, 'Your points are drawn over the curves above (“your run” in the legend).') : h('p', {}, `Your run is ${c.coll}; choose that collective above to see its points over the curves.`), t,
    h('p', {}, 'Same numbers from the command line (save the pasted text as FILE): ', h('code', { id: 'pg-compare-command' }, d.compare_command))];
    for (const f of c.findings || []) {
      const links = (f.links || []).map((l) => h('a', { href: base + l.url.replace(/^\//, '') }, l.title));
      const rules = (f.doctor_rules || []).map((r) => h('code', {}, r));
      parts.push(h('div', { class: `pg-finding ${f.severity}`, 'data-id': f.id }, h('h3', {}, f.title), h('p', {}, f.text),
        rules.length ? h('p', {}, 'Doctor rule: ', ...join(rules), ' (the log doctor reads the same cause from an NCCL_DEBUG=INFO log).') : null,
        links.length ? h('p', {}, 'See ', ...join(links), '.') : null));
    }
    fill(yours.body, ...parts);
  };

  return {
    controls: [sys.el, fColl.wrap, fSize.wrap, fDtype.wrap, fFabric.wrap, h('fieldset', {}, h('legend', { class: 'visually-hidden' }, 'NCCL environment'), env.controls), fPaste.wrap],
    outputs,
    // Inputs the warm-up tries on every system (see startWarmup).
    variants: [{ coll: 'allgather' }, { coll: 'reducescatter' }, { coll: 'allreduce' }, { bytes: '1G' }],
    request() {
      const s = sys.request();
      if (s.error) return s;
      const e = env.list();
      if (e.error) return e;
      const b = size.value.trim();
      if (b === '' || b.length > 32) return { error: { field: 'bytes', message: 'Give a size such as 64M, 1G or 4096.' } };
      const req = { ...s, env: e.env, coll: collSel.value, bytes: b, dtype: dtype.value, fabric: fabric.value };
      const pasted = pasteBox.value();
      if (pasted.trim() !== '') {
        if (pasteBox.bytes() > LIMITS.ncclTestsBytes) return { error: { field: 'nccl_tests', message: `The pasted text ${overLimit(pasteBox.bytes(), LIMITS.ncclTestsBytes)}.` } };
        req.ncclTests = pasted;
      }
      return { fn: 'estimator', req };
    },
    render(d) {
      const r = d.result;
      answered = true;
      for (const s of resultSections) s.el.hidden = false;
      env.showProblems(d.problems);
      cmd.set(d.command);
      const t = scroller('Estimate at the chosen size');
      setHTML(t, d.figures.estimate);
      const c = r.calibrated;
      fill(est.body,
        t,
        c.class ? h('p', {}, `Path class ${c.class}; measured runs of this class fall within ${c.busbw_low_GBps.toFixed(2)}–${c.busbw_high_GBps === null ? '∞' : c.busbw_high_GBps.toFixed(2)} GB/s busbw of this estimate. ${c.support}.`) : h('p', {}, c.support),
        c.held ? h('p', {}, `The calibrated time is held at that of ${c.held_from_bytes} bytes: NCCL switches to ${c.algo}/${c.proto} earlier than this system rewards.`) : null,
      );
      renderCompare(d);
      setHTML(busWrap, d.figures.busbw);
      setHTML(timeWrap, d.figures.time);
      fill(meas.body, d.measurements.length
        ? h('ul', { class: 'pg-notes', id: 'pg-measurement-list' }, d.measurements.map((m) => {
          const src = /^https?:\/\//.test(m.url) ? h('a', { href: m.url, rel: 'noopener' }, m.title || m.url) : h('span', {}, `${m.title} (${m.url})`);
          return h('li', { 'data-id': m.id }, src, ` — ${m.gpu}, ${m.ngpus} GPUs, NCCL ${m.nccl_version}, ${m.dtype}${m.env.length ? `, ${m.env.join(' ')}` : ''}${m.date ? `, ${m.date}` : ''}${m.fit ? '' : ' (not used for the fit)'}: ${m.published_rows > m.rows.length ? `${m.published_rows} sizes, ${m.rows.length} of them drawn (a few per factor of two of the size)` : `${m.rows.length} sizes`}.`);
        }))
        : h('p', { id: 'pg-measurement-list' }, `No published measurement matches this system, node count, collective${d.other_env.length ? ' and NCCL environment' : ''}. The presets with measurements are listed on the estimator’s data page; the calibrated curve still applies its path class.`),
      // Runs of this system under another NCCL environment are not drawn
      // (the curves model the environment above); one click sets theirs.
      d.other_env.length
        ? h('section', { 'aria-label': 'Runs with another NCCL environment' },
          h('p', {}, 'Measured on this system with another NCCL environment (not drawn: the curves are for the environment above):'),
          h('ul', { class: 'pg-notes', id: 'pg-other-env' }, d.other_env.map((m) => {
            const src = /^https?:\/\//.test(m.url) ? h('a', { href: m.url, rel: 'noopener' }, m.title || m.url) : h('span', {}, m.title);
            const envText = m.env.length ? m.env.join(' ') : 'NCCL’s defaults';
            return h('li', { 'data-id': m.id }, src, ` — ${envText} `,
              h('button', { type: 'button', class: 'pg-button', onclick: () => env.set(m.env) }, m.env.length ? `Use ${envText}` : 'Use NCCL’s defaults'));
          })))
        : null);
    },
    // A first answer that is an error leaves no result to show: the
    // result sections are hidden rather than shown as empty headings, and
    // come back with the first answer that renders.
    onError() {
      if (!answered) for (const s of resultSections) s.el.hidden = true;
    },
    fieldFor(err) {
      if (sys.fields[err.field]) return sys.fields[err.field];
      if (err.field === 'nccl_tests' || err.field === 'ncclTests') return fPaste;
      if (err.field === 'coll') return fColl;
      if (err.field === 'bytes') return fSize;
      if (err.field === 'dtype') return fDtype;
      if (err.field === 'fabric') return fFabric;
      return env.fieldFor(err);
    },
    clearErrors() {
      sys.clearErrors();
      env.clearErrors();
      [fColl, fSize, fDtype, fFabric, fPaste].forEach((f) => setError(f, ''));
    },
    state() {
      const e = env.list();
      return { ...sys.state(), coll: collSel.value !== ESTIMATE.coll ? collSel.value : '', bytes: size.value.trim() !== ESTIMATE.bytes ? size.value.trim() : '',
        dtype: dtype.value !== ESTIMATE.dtype ? dtype.value : '', fabric: fabric.value !== ESTIMATE.fabric ? fabric.value : '', env: e.env || [] };
    },
    fragment: () => sys.fragment(),
  };
}
