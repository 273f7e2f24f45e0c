// Topology page: the system's nodes and links, the path matrix, the
// transports, and the searched rings and trees drawn channel by channel.
import { h, fill, field, select, section, setHTML, scroller, commandBar, list, kv, zoomControl } from './ui.js';
import { systemPicker } from './system.js';
import { envEditor } from './env.js';

export function topologyWidget({ engine, presets, state, xml, defaultPreset, update }) {
  const sys = systemPicker({ presets, state, xml, defaultPreset, engine, onChange: update });
  const env = envEditor({ state, onChange: update });

  const graphSel = select([['ring', 'Ring'], ['tree', 'Tree'], ['nvls', 'NVLS'], ['none', 'none']], state.graph || 'ring');
  graphSel.name = 'graph';
  const fGraph = field({ label: 'Draw the channels of', control: graphSel });
  const chanSel = select([['0', 'channel 0']], '0');
  chanSel.name = 'channel';
  const fChan = field({ label: 'Channel', control: chanSel });
  let wantChannel = state.ch !== undefined ? state.ch : '0';
  graphSel.addEventListener('change', () => {
    wantChannel = '0';
    update();
  });
  chanSel.addEventListener('change', () => {
    wantChannel = chanSel.value;
    update();
  });

  const summary = section('System', 'pg-system');
  const fig = section('Topology and channels', 'pg-topology');
  const figWrap = h('div', { class: 'pg-figure' });
  const detail = h('p', { class: 'pg-detail', 'aria-live': 'polite' }, 'Hover or focus (Tab) a link or device for its type and bandwidth.');
  const chanText = h('p', { class: 'pg-detail' });
  const zoom = zoomControl(figWrap, 'drawing');
  fig.body.append(h('div', { class: 'pg-controls' }, fGraph.wrap, fChan.wrap, zoom.el), chanText, figWrap, detail);
  const showDetail = (ev) => {
    const g = ev.target.closest && ev.target.closest('[aria-label]');
    if (g && figWrap.contains(g) && g.tagName !== 'svg') detail.textContent = g.getAttribute('aria-label');
  };
  figWrap.addEventListener('focusin', showDetail);
  figWrap.addEventListener('mouseover', showDetail);

  const graphs = section('Searched graphs', 'pg-graphs');
  const matrixDetail = h('p', { class: 'pg-detail', 'aria-live': 'polite' }, 'Hover or focus (Tab) a cell for the transport and bandwidth.');
  const matrix = section('Paths and transports between GPUs', 'pg-matrix');
  const cmd = commandBar();
  const outputs = h('div', {}, cmd.el, summary.el, fig.el, graphs.el, matrix.el);

  let lastChannels = null;
  const fillChannels = (counts) => {
    const g = graphSel.value;
    const n = counts[g] || 0;
    const key = `${g}:${n}`;
    if (lastChannels !== key) {
      lastChannels = key;
      const opts = [['-1', `all ${n}`]];
      for (let i = 0; i < n; i++) opts.push([String(i), `channel ${i}`]);
      fill(chanSel, ...opts.map(([v, t]) => h('option', { value: v }, t)));
    }
    chanSel.value = Number(wantChannel) < n ? String(wantChannel) : '0';
    chanSel.disabled = n === 0;
    for (const o of graphSel.options) {
      o.disabled = o.value !== 'none' && !counts[o.value];
    }
  };

  return {
    controls: [sys.el, h('fieldset', {}, h('legend', { class: 'visually-hidden' }, 'NCCL environment'), env.controls)],
    outputs,
    // Inputs the warm-up tries on every system (see startWarmup).
    variants: [{ graph: 'tree' }, { graph: 'ring' }],
    request() {
      const s = sys.request();
      if (s.error) return s;
      const e = env.list();
      if (e.error) return e;
      return { fn: 'topo', req: { ...s, env: e.env, graph: graphSel.value, channel: Number(wantChannel) } };
    },
    render(d) {
      const r = d.result;
      const s = r.system;
      env.showProblems(d.problems);
      cmd.set(d.command);
      fill(summary.body, 
        kv([
          ['System', s.name],
          s.description ? ['Description', s.description] : null,
          ['Ranks', `${s.ranks} (${s.local_ranks} per host × ${s.hosts} host${s.hosts > 1 ? 's' : ''})`],
          ['CPU', `${s.cpu_arch} ${s.cpu_vendor} ${s.cpu_model} × ${s.cpus}`.replace(/\s+/g, ' ')],
          ['NVSwitch', s.nvswitch ? 'yes' : 'no'],
          ['P2P the driver allows', s.p2p_support],
          ['P2P level', s.p2p_level],
          ['Search', `${s.inter ? 'inter-node' : 'intra-node'}, maxBw ${s.max_bw} GB/s, totalBw ${s.total_bw} GB/s`],
          ['Channels', `${r.comm.n_channels} after ncclTopoPostset (ring/tree ${r.comm.coll_channels}), NVLS ${r.comm.nvls_support ? 'yes' : 'no'}, ${r.comm.search_steps} search steps`],
        ]),
        list((r.warnings || []).map((x) => `warning: ${x}`)),
        list((r.notes || []).map((x) => `note: ${x}`)),
        r.trimmed_gpus ? h('p', {}, `GPUs ${r.trimmed_gpus.join(', ')} are reachable only through the network and were trimmed from the search.`) : null,
      );
      fillChannels(d.channels);
      setHTML(figWrap, d.figures.topology);
      zoom.update();
      const g = r.graphs.find((x) => (graphSel.value === 'ring' ? x.pattern === 'RING' : graphSel.value === 'nvls' ? x.pattern === 'NVLS' : x.id === 1));
      const svgDesc = figWrap.querySelector('[data-channel] title');
      chanText.textContent = g ? (chanSel.value === '-1' ? `${g.pattern}: all ${g.channels.length} channels.` : svgDesc ? svgDesc.textContent : '') : 'No channels drawn.';

      const rows = r.graphs.map((x) => h('tr', { 'data-pattern': x.pattern },
        h('th', { scope: 'row' }, x.pattern),
        h('td', { 'data-v': x.n_channels }, String(x.n_channels)),
        h('td', { 'data-v': x.search_channels }, String(x.search_channels)),
        h('td', { 'data-v': x.bw_intra }, String(x.bw_intra)),
        h('td', { 'data-v': x.bw_inter }, String(x.bw_inter)),
        h('td', {}, `${x.type_intra}/${x.type_inter}`),
        h('td', {}, String(x.same_channels)),
        h('td', {}, String(x.cross_nic)),
        h('td', { 'data-v': x.steps }, String(x.steps) + (x.fallback ? ' (fallback)' : '')),
      ));
      const graphBox = scroller('Searched graphs');
      graphBox.append(
        h('table', { class: 'pg-table', id: 'pg-graph-table' },
          h('caption', {}, 'Each graph NCCL searched: channels (after aligning ring and tree), per-channel bandwidth inside the node and to the network (GB/s), path types, search steps'),
          h('thead', {}, h('tr', {}, ['graph', 'channels', 'search channels', 'bw intra', 'bw inter', 'type intra/inter', 'same channels', 'cross NIC', 'steps'].map((t) => h('th', { scope: 'col' }, t)))),
          h('tbody', {}, rows)));
      fill(graphs.body,
        graphBox,
        h('h3', {}, 'Channels'),
        h('ul', { class: 'pg-notes', id: 'pg-channel-list' }, r.graphs.flatMap((x) => channelRuns(x).map((t) => h('li', {}, t)))),
      );

      const counts = { P2P: 0, SHM: 0, NET: 0 };
      const reasons = new Map();
      // The classes cover every pair, also on hosts whose pair list the
      // service leaves out (over 64 GPUs).
      for (const c of r.gpu_pair_classes) {
        counts[c.transport] = (counts[c.transport] || 0) + c.count;
        if (c.reason) reasons.set(`${c.transport}: ${c.reason}`, (reasons.get(`${c.transport}: ${c.reason}`) || 0) + c.count);
      }
      const mHTML = scroller('Path matrix');
      setHTML(mHTML, d.figures.matrix);
      mHTML.addEventListener('focusin', (ev) => {
        const c = ev.target.closest && ev.target.closest('td[title]');
        if (c) matrixDetail.textContent = c.getAttribute('title');
      });
      const legend = h('div', {});
      setHTML(legend, d.figures.legend);
      fill(matrix.body, 
        h('p', { id: 'pg-transports' }, `Transports between the ${r.gpus.length} GPUs of a host (ordered pairs): P2P ${counts.P2P}, SHM ${counts.SHM}, NET ${counts.NET}.`),
        list([...reasons].map(([k, n]) => `${k} (${n} pair${n > 1 ? 's' : ''})`)),
        mHTML,
        matrixDetail,
        legend,
      );
    },
    fieldFor(err) {
      if (sys.fields[err.field]) return sys.fields[err.field];
      return env.fieldFor(err);
    },
    clearErrors() {
      sys.clearErrors();
      env.clearErrors();
    },
    state() {
      const e = env.list();
      return { ...sys.state(), env: e.env || [], graph: graphSel.value !== 'ring' ? graphSel.value : '', ch: chanSel.value !== '0' ? chanSel.value : '' };
    },
    fragment: () => sys.fragment(),
  };
}

// channelRuns lists a graph's channels, one line per run of consecutive
// channels with the same order ("RING 0–11: 0 → 1 → … → 7"), so that twelve
// copies of one ring read as one line.
function channelRuns(x) {
  const order = (c) => `${c.net_in !== undefined ? `NET${c.net_in} → ` : ''}${(c.ranks || []).join(' → ')}${c.net_out !== undefined ? ` → NET${c.net_out}` : ''}`;
  const out = [];
  let from = 0;
  for (let i = 1; i <= x.channels.length; i++) {
    if (i < x.channels.length && order(x.channels[i]) === order(x.channels[from])) continue;
    const ids = i - 1 > from ? `${from}–${i - 1}` : String(from);
    out.push(`${x.pattern} ${ids}: ${order(x.channels[from])}`);
    from = i;
  }
  return out;
}
