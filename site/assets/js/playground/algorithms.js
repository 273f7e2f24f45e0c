// Algorithm & protocol page: predicted time against size for every usable
// algorithm × protocol, the winner band and crossover sizes, NCCL_ALGO /
// NCCL_PROTO / NCCL_MAX_NCHANNELS / NCCL_P2P_DISABLE inputs, and the
// TUNING-format table.
import { COLLS, DEFAULT_COLL, LIMITS } from './constants.js';
import { h, fill, field, select, section, setHTML, scroller, setError, commandBar, list, kv, bytes } from './ui.js';
import { systemPicker } from './system.js';
import { envEditor } from './env.js';


export function algorithmsWidget({ engine, presets, state, xml, defaultPreset, update }) {
  const sys = systemPicker({ presets, state, xml, defaultPreset, engine, onChange: update });
  const collSel = select(COLLS, state.coll || DEFAULT_COLL);
  collSel.name = 'coll';
  const fColl = field({ label: 'Collective', control: collSel });
  collSel.addEventListener('change', update);
  const env = envEditor({
    state,
    onChange: update,
    dedicated: [
      { name: 'NCCL_ALGO', label: 'NCCL_ALGO', placeholder: 'e.g. ^NVLS or Ring,Tree', hint: 'algorithms to allow' },
      { name: 'NCCL_PROTO', label: 'NCCL_PROTO', placeholder: 'e.g. ^LL128 or Simple', hint: 'protocols to allow' },
      { name: 'NCCL_MAX_NCHANNELS', label: 'NCCL_MAX_NCHANNELS', type: 'number', hint: `1 to ${LIMITS.maxChannels}` },
      { name: 'NCCL_P2P_DISABLE', label: 'NCCL_P2P_DISABLE=1', type: 'check' },
    ],
  });

  const cmd = commandBar();
  const chart = section('Predicted time against message size', 'pg-chart');
  const chartWrap = h('div', { class: 'pg-figure' });
  const detail = h('p', { class: 'pg-detail', 'aria-live': 'polite' }, 'Tab to a curve or a stretch of the winner band for its values.');
  const cross = h('div', {});
  chart.body.append(chartWrap, detail, h('h3', {}, 'Crossover sizes'), cross);
  const showDetail = (ev) => {
    const g = ev.target.closest && ev.target.closest('[aria-label]');
    if (g && chartWrap.contains(g) && g.tagName !== 'svg') detail.textContent = g.getAttribute('aria-label');
  };
  chartWrap.addEventListener('focusin', showDetail);
  const sel = section('What NCCL picks at each size', 'pg-selection');
  const cells = section('Latency and bandwidth of each algorithm and protocol', 'pg-cells');
  const log = section('The TUNING table as NCCL logs it', 'pg-tuning');
  const outputs = h('div', {}, cmd.el, chart.el, sel.el, cells.el, log.el);

  return {
    controls: [sys.el, fColl.wrap, h('fieldset', {}, h('legend', { class: 'visually-hidden' }, 'NCCL environment'), env.controls)],
    outputs,
    // Inputs the warm-up tries on every system (see startWarmup).
    variants: [{ coll: 'allgather' }, { coll: 'reducescatter' }, { coll: 'allreduce' }],
    request() {
      const s = sys.request();
      if (s.error) return s;
      const e = env.list();
      if (e.error) return e;
      return { fn: 'tune', req: { ...s, env: e.env, coll: collSel.value } };
    },
    render(d) {
      const r = d.result;
      env.showProblems(d.problems);
      cmd.set(d.command);
      setHTML(chartWrap, d.figures.chart);
      fill(cross, d.crossovers.length
        ? h('ul', { class: 'pg-notes', id: 'pg-crossovers' }, d.crossovers.map((x) => h('li', { 'data-bytes': x.bytes },
          `${x.from} → ${x.to} at ${x.bytes.toLocaleString('en-US')} bytes (${bytes(x.bytes)})`)))
        : h('p', { id: 'pg-crossovers' }, `${r.selection[0].algo}/${r.selection[0].proto} wins at every size from 8 B to 8 GiB.`));
      const selHTML = scroller('Selection per size');
      setHTML(selHTML, d.figures.selection);
      fill(sel.body, 
        kv([
          ['Ranks', `${r.nranks} on ${r.nodes} node${r.nodes > 1 ? 's' : ''}`],
          ['Channels', `${r.comm_nchannels} (NVLS ${r.nvls_channels})`],
          ['Collective', r.coll],
        ]),
        list(r.notes.map((n) => `note: ${n}`)),
        selHTML,
      );
      const cellsHTML = scroller('Tuning table cells');
      setHTML(cellsHTML, d.figures.cells);
      fill(cells.body, cellsHTML);
      fill(log.body, 
        h('p', {}, 'The lines NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING prints (latency µs / algorithm bandwidth GB/s), to diff against your log:'),
        r.enable_matrix ? h('pre', { class: 'pg-log', tabindex: '0', 'aria-label': 'NCCL_ALGO / NCCL_PROTO matrix' }, r.enable_matrix) : null,
        h('pre', { class: 'pg-log', id: 'pg-tuning-log', tabindex: '0', 'aria-label': 'TUNING table' }, [...r.tuning_log, r.thread_thresholds].join('\n')),
      );
    },
    fieldFor(err) {
      if (sys.fields[err.field]) return sys.fields[err.field];
      if (err.field === 'coll') return fColl;
      return env.fieldFor(err);
    },
    clearErrors() {
      sys.clearErrors();
      env.clearErrors();
      setError(fColl, '');
    },
    state() {
      const e = env.list();
      return { ...sys.state(), coll: collSel.value !== DEFAULT_COLL ? collSel.value : '', env: e.env || [] };
    },
    fragment: () => sys.fragment(),
  };
}
