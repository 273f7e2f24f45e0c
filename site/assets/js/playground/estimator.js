// Estimator page: busbw and time against size for one collective, NCCL's
// model next to the calibrated estimate with its error band, and the
// published measurements of the same system as points linked to their
// sources. Opens on the RTX 4090 box with P2P unavailable.
import { h, fill, field, select, section, setHTML, scroller, setError, commandBar } from './ui.js';
import { systemPicker } from './system.js';
import { envEditor } from './env.js';
import { COLLS, DTYPES, FABRICS, ESTIMATOR_PRESET, ESTIMATE } from './constants.js';


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

  const cmd = commandBar();
  const est = section('At the chosen size', 'pg-estimate');
  const busbw = section('Bus bandwidth against size', 'pg-busbw');
  const time = section('Time against size', 'pg-time');
  const meas = section('Published measurements of this system', 'pg-measurements');
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
  const outputs = h('div', {}, cmd.el, est.el, busbw.el, time.el, meas.el);

  return {
    controls: [sys.el, fColl.wrap, fSize.wrap, fDtype.wrap, fFabric.wrap, h('fieldset', {}, h('legend', { class: 'visually-hidden' }, 'NCCL environment'), env.controls)],
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
      return { fn: 'estimator', req: { ...s, env: e.env, coll: collSel.value, bytes: b, dtype: dtype.value, fabric: fabric.value } };
    },
    render(d) {
      const r = d.result;
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
      setHTML(busWrap, d.figures.busbw);
      setHTML(timeWrap, d.figures.time);
      fill(meas.body, d.measurements.length
        ? h('ul', { class: 'pg-notes', id: 'pg-measurement-list' }, d.measurements.map((m) => {
          const src = /^https?:\/\//.test(m.url) ? h('a', { href: m.url, rel: 'noopener' }, m.title || m.url) : h('span', {}, `${m.title} (${m.url})`);
          return h('li', { 'data-id': m.id }, src, ` — ${m.gpu}, ${m.ngpus} GPUs, NCCL ${m.nccl_version}, ${m.dtype}${m.date ? `, ${m.date}` : ''}${m.fit ? '' : ' (not used for the fit)'}: ${m.rows.length} sizes.`);
        }))
        : h('p', { id: 'pg-measurement-list' }, 'No published measurement matches this system, node count and collective. The presets with measurements are listed on the estimator’s data page; the calibrated curve still applies its path class.'));
    },
    fieldFor(err) {
      if (sys.fields[err.field]) return sys.fields[err.field];
      if (err.field === 'coll') return fColl;
      if (err.field === 'bytes') return fSize;
      if (err.field === 'dtype') return fDtype;
      if (err.field === 'fabric') return fFabric;
      return env.fieldFor(err);
    },
    clearErrors() {
      sys.clearErrors();
      env.clearErrors();
      [fColl, fSize, fDtype, fFabric].forEach((f) => setError(f, ''));
    },
    state() {
      const e = env.list();
      return { ...sys.state(), coll: collSel.value !== ESTIMATE.coll ? collSel.value : '', bytes: size.value.trim() !== ESTIMATE.bytes ? size.value.trim() : '',
        dtype: dtype.value !== ESTIMATE.dtype ? dtype.value : '', fabric: fabric.value !== ESTIMATE.fabric ? fabric.value : '', env: e.env || [] };
    },
    fragment: () => sys.fragment(),
  };
}
