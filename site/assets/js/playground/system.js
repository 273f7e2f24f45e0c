// The system picker every widget shares: a preset or a pasted / dropped /
// loaded topology XML, the node count and the P2P support the driver
// reports. Inputs are checked here first (size, number format) so that an
// absurd input never reaches the module; the module checks again.
import { LIMITS, P2P } from './constants.js';
import { h, field, select, setError } from './ui.js';
import { encodeXML } from './state.js';
import { bigText, overLimit } from './bigtext.js';

export const MAX_XML = LIMITS.xmlBytes;
export const MAX_NODES = LIMITS.nodes;
const CUSTOM = '__xml__';

// groupedSelect lists the presets under their groups (data/topologies/
// presets.tsv, in the table's order) by their display names, then the
// choice of a pasted XML.
function groupedSelect(presets, value) {
  const s = h('select');
  const groups = new Map();
  for (const p of presets) {
    const g = p.group || 'Systems';
    if (!groups.has(g)) groups.set(g, { order: p.group_order ?? groups.size, list: [] });
    groups.get(g).list.push(p);
  }
  const sorted = [...groups].sort((a, b) => a[1].order - b[1].order);
  for (const [g, { list }] of sorted) {
    const og = h('optgroup', { label: g });
    for (const p of list) og.append(h('option', { value: p.name, selected: p.name === value }, p.title || p.name));
    s.append(og);
  }
  s.append(h('optgroup', { label: 'Your system' }, h('option', { value: CUSTOM, selected: value === CUSTOM }, 'Your topology XML…')));
  return s;
}

export function systemPicker({ presets, state, xml, defaultPreset, engine, onChange }) {
  const names = presets.map((p) => p.name);
  let current = state.preset && names.includes(state.preset) ? state.preset : defaultPreset;
  if (xml) current = CUSTOM;
  const presetSel = groupedSelect(presets, current);
  presetSel.name = 'preset';
  const fPreset = field({ label: 'System', control: presetSel, hint: '' });
  // A preset's description runs to several hundred characters: it shows
  // three lines and a "more" button (its whole text stays the select's
  // description for screen readers). In full, it was the largest text the
  // live view painted, so the page's largest contentful paint moved from
  // the static view to the live view's late reveal.
  const hint = fPreset.hint;
  hint.classList.add('pg-clamp');
  const more = h('button', { type: 'button', class: 'pg-more', 'aria-expanded': 'false', 'aria-controls': hint.id, hidden: true }, 'more');
  more.addEventListener('click', () => {
    const open = more.getAttribute('aria-expanded') !== 'true';
    more.setAttribute('aria-expanded', String(open));
    more.textContent = open ? 'less' : 'more';
    hint.classList.toggle('pg-open', open);
  });
  hint.after(more);
  // The button shows only when the text is cut, measured after layout.
  const cut = () => {
    if (more.getAttribute('aria-expanded') !== 'true') more.hidden = hint.scrollHeight <= hint.clientHeight + 1;
  };
  new ResizeObserver(cut).observe(hint);
  const describe = () => {
    const p = presets.find((x) => x.name === presetSel.value);
    hint.textContent = p ? `${p.name}: ${p.description}` : 'Paste, drop or load the file NCCL_TOPO_DUMP_FILE wrote on your machine.';
    requestAnimationFrame(cut);
  };
  describe();

  const area = h('textarea', { class: 'pg-xml', name: 'xml', spellcheck: 'false', autocomplete: 'off', rows: 8 });
  const fXML = field({ label: 'Topology XML', control: area, wide: true, hint: 'Drop a file here, or load one below. The text stays in your browser.' });
  const file = h('input', { type: 'file', name: 'xmlfile', accept: '.xml,text/xml,application/xml' });
  const fFile = field({ label: 'Load an XML file', control: file });
  const fromPreset = h('button', { type: 'button', class: 'pg-button' }, 'Start from a preset’s XML');
  let xmlName = state.xmlname || 'topology.xml';
  // The command line names the file: offer the text as that file.
  const download = h('a', { class: 'pg-button', download: xmlName, href: '#' }, 'Download this XML');
  let blobURL = '';
  download.addEventListener('click', () => {
    if (blobURL) URL.revokeObjectURL(blobURL);
    blobURL = URL.createObjectURL(new Blob([xmlBox.value()], { type: 'application/xml' }));
    download.href = blobURL;
    download.download = xmlName;
  });
  const custom = h('div', { class: 'pg-field wide' }, fXML.wrap, h('div', { class: 'pg-toolbar' }, fFile.wrap, fromPreset, download));

  const nodes = h('input', { type: 'number', name: 'nodes', min: 1, max: MAX_NODES, step: 1, inputmode: 'numeric', value: state.nodes || '1' });
  const fNodes = field({ label: 'Nodes', control: nodes, hint: 'identical hosts' });
  const p2p = select(P2P, state.p2p || P2P[0][0]);
  p2p.name = 'p2p';
  const fP2P = field({ label: 'P2P the driver allows', control: p2p });

  const el = h('fieldset', {}, h('legend', { class: 'visually-hidden' }, 'System'), fPreset.wrap, fNodes.wrap, fP2P.wrap, custom);
  const showCustom = () => {
    custom.hidden = presetSel.value !== CUSTOM;
  };
  showCustom();

  let timer = 0;
  const changed = (delay = 0) => {
    clearTimeout(timer);
    if (delay) timer = setTimeout(onChange, delay);
    else onChange();
  };
  presetSel.addEventListener('change', () => {
    describe();
    showCustom();
    changed();
  });
  nodes.addEventListener('input', () => changed());
  p2p.addEventListener('change', () => changed());
  // A dump over bigtext.SHOW_BYTES (a shared #xml= link can inflate to
  // megabytes) is held in memory rather than put into the box.
  const xmlBox = bigText(area, { onChange: (now) => changed(now ? 0 : 250), what: 'topology', maxBytes: MAX_XML,
    onFile: (f) => readFile(f), onError: (m) => setError(fXML, m) });
  xmlBox.set(xml || '', 'topology from the link');
  const loadText = (text, name) => {
    xmlBox.set(text, name);
    xmlName = (name || 'topology.xml').replace(/[^A-Za-z0-9._-]/g, '_');
    presetSel.value = CUSTOM;
    describe();
    showCustom();
    changed();
  };
  const readFile = async (f) => {
    if (!f) return;
    setError(fXML, '');
    const t = await xmlBox.read(f);
    if (t !== null) loadText(t, f.name);
  };
  file.addEventListener('change', () => readFile(file.files && file.files[0]));
  fromPreset.addEventListener('click', async () => {
    const name = current !== CUSTOM ? current : defaultPreset;
    const r = await engine.call('presetXML', name, { key: 'presetXML' });
    if (r.data && typeof r.data.raw === 'string') loadText(r.data.raw, `${name}.xml`);
  });
  presetSel.addEventListener('change', () => {
    if (presetSel.value !== CUSTOM) current = presetSel.value;
  });

  const fields = { preset: fPreset, xml: fXML, nodes: fNodes, p2p: fP2P };
  return {
    el,
    fields,
    // request returns the system part of a request, or {error} when an
    // input is rejected before reaching the module.
    request() {
      const req = { p2p: p2p.value };
      const n = nodes.value.trim();
      if (n === '' || !/^\d+$/.test(n) || Number(n) < 1 || Number(n) > MAX_NODES) {
        return { error: { field: 'nodes', message: `Nodes: a whole number from 1 to ${MAX_NODES}.` } };
      }
      req.nodes = Number(n);
      if (presetSel.value === CUSTOM) {
        const text = xmlBox.value();
        if (text.trim() === '') return { error: { field: 'xml', message: 'Paste a topology XML, drop a file here, or load one.' } };
        // UTF-8 bytes, as the Go side counts MaxXMLBytes.
        if (xmlBox.bytes() > MAX_XML) {
          return { error: { field: 'xml', message: `The text ${overLimit(xmlBox.bytes(), MAX_XML)} (a real dump is well under 100 KB).` } };
        }
        req.xml = text;
        req.xmlName = xmlName;
      } else {
        req.preset = presetSel.value;
      }
      return req;
    },
    // state returns the URL parameters of the picker.
    state() {
      return {
        preset: presetSel.value === CUSTOM ? '' : presetSel.value,
        xmlname: presetSel.value === CUSTOM && xmlName !== 'topology.xml' ? xmlName : '',
        nodes: nodes.value !== '1' ? nodes.value : '',
        p2p: p2p.value !== P2P[0][0] ? p2p.value : '',
      };
    },
    isCustom: () => presetSel.value === CUSTOM,
    xmlText: () => xmlBox.value(),
    xmlName: () => xmlName,
    async fragment() {
      if (presetSel.value !== CUSTOM) return '';
      return encodeXML(xmlBox.value());
    },
    clearErrors() {
      Object.values(fields).forEach((f) => setError(f, ''));
    },
  };
}
