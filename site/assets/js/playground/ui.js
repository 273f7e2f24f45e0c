// Small DOM helpers shared by the widgets. Text from the model (names from
// a pasted XML, notes, messages) always goes through textContent; only the
// figures and tables produced by the Go side (playground/figure, which
// escapes every name) are inserted as HTML.

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = v;
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

let uid = 0;
export function newID(prefix) {
  uid += 1;
  return `${prefix}-${uid}`;
}

// MAX_FIELD_CHARS bounds a one-line text input (a size, a parameter count,
// an algorithm list): several times the longest real value (an NCCL_ALGO
// list of every algorithm, ^Ring,Tree,CollnetDirect,CollnetChain,NVLS,
// NVLSTree,PAT, is 55 characters).
export const MAX_FIELD_CHARS = 256;

// field wraps a control with its label, an optional hint and an error line
// that setError fills; the control is described by both. A one-line text
// input takes at most MAX_FIELD_CHARS (capText).
export function field({ label, control, hint, wide = false, check = false }) {
  const id = control.id || newID('pg-f');
  control.id = id;
  const err = h('p', { class: 'pg-error', id: `${id}-err`, 'aria-live': 'polite' });
  const described = [err.id];
  let hintEl = null;
  if (hint !== undefined && hint !== null) {
    hintEl = h('span', { class: 'pg-hint', id: `${id}-hint` }, hint);
    described.push(hintEl.id);
  }
  control.setAttribute('aria-describedby', described.join(' '));
  const lab = h('label', { for: id }, label);
  const wrap = check
    ? h('div', { class: 'pg-field check' }, control, lab, err)
    : h('div', { class: `pg-field${wide ? ' wide' : ''}` }, lab, control, hintEl, err);
  const f = { wrap, control, err, hint: hintEl };
  if (control.tagName === 'INPUT' && control.type === 'text') capText(f, MAX_FIELD_CHARS);
  return f;
}

// capText bounds what a text box takes to max characters (UTF-16 code
// units, as maxLength counts them): typing stops there (maxLength), and a
// paste or drop that would go past it is refused whole, with a message on
// the field, and the box keeps what it had. Putting megabytes into a box
// costs the main thread seconds of layout before any check could run
// (issue 18: 1.8-2.8 s for 8-20 MiB pasted into the environment box).
export function capText(f, max) {
  const c = f.control;
  c.maxLength = max;
  const refuse = (e, text, how) => {
    const kept = c.value.length - Math.abs((c.selectionEnd ?? 0) - (c.selectionStart ?? 0));
    if (kept + text.length <= max) return;
    e.preventDefault();
    e.stopImmediatePropagation();
    setError(f, `The ${how} text (${text.length.toLocaleString('en-US')} characters) was not taken: this box holds at most ${max.toLocaleString('en-US')} characters.`);
  };
  c.addEventListener('paste', (e) => refuse(e, (e.clipboardData && e.clipboardData.getData('text/plain')) || '', 'pasted'));
  c.addEventListener('drop', (e) => refuse(e, (e.dataTransfer && e.dataTransfer.getData('text/plain')) || '', 'dropped'));
}

export function setError(f, message) {
  if (!f) return;
  f.err.textContent = message || '';
  if (message) f.control.setAttribute('aria-invalid', 'true');
  else f.control.removeAttribute('aria-invalid');
}

export function select(options, value) {
  const s = h('select');
  for (const o of options) {
    const [v, text] = Array.isArray(o) ? o : [o, o];
    const opt = h('option', { value: v }, text);
    if (String(v) === String(value)) opt.selected = true;
    s.append(opt);
  }
  return s;
}

// section returns a titled region with a body to fill.
export function section(title, id) {
  const hid = newID('pg-h');
  const body = h('div', { class: 'pg-section-body' });
  const el = h('section', { class: 'pg-section', 'aria-labelledby': hid, id }, h('h2', { id: hid }, title), body);
  return { el, body };
}

// fill replaces an element's children, skipping null, undefined and false.
export function fill(el, ...kids) {
  el.replaceChildren(...kids.flat().filter((k) => k !== null && k !== undefined && k !== false));
}

// scroller returns a horizontally scrollable wrapper for a wide table or
// figure; it is a labelled, focusable region so that keyboard users can
// scroll it.
export function scroller(label) {
  return h('div', { class: 'pg-figure', tabindex: '0', role: 'region', 'aria-label': label });
}

// setHTML replaces an element's content with trusted markup from the Go side.
export function setHTML(el, html) {
  el.innerHTML = html;
}

// commandBar shows the ncclsim line with a copy button and a live status.
export function commandBar() {
  const code = h('code', { class: 'pg-command', id: newID('pg-cmd') });
  const status = h('span', { role: 'status', class: 'pg-hint' });
  const btn = h('button', { type: 'button', class: 'pg-button' }, 'Copy as command');
  btn.addEventListener('click', async () => {
    const text = code.textContent;
    try {
      await navigator.clipboard.writeText(text);
      status.textContent = 'Copied.';
    } catch (e) {
      const r = document.createRange();
      r.selectNodeContents(code);
      const sel = window.getSelection();
      sel.removeAllRanges();
      sel.addRange(r);
      status.textContent = 'Selected: press Ctrl+C to copy.';
    }
  });
  const wrap = h('div', { class: 'pg-toolbar' }, h('span', { class: 'pg-hint' }, 'Same numbers from the command line:'), code, btn, status);
  return {
    el: wrap,
    set(cmd) {
      code.textContent = cmd || '';
      status.textContent = '';
    },
  };
}

// list renders strings as a <ul>, or nothing when empty.
export function list(items, cls = 'pg-notes') {
  if (!items || items.length === 0) return null;
  return h('ul', { class: cls }, items.map((s) => h('li', {}, s)));
}

// kv renders a description list from [term, value] pairs.
export function kv(pairs) {
  return h('dl', { class: 'pg-kv' }, pairs.filter(Boolean).flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}

export function fmt(v, digits = 2) {
  if (v === null || v === undefined || Number.isNaN(v)) return '–';
  return Number(v).toFixed(digits);
}

export function bytes(n) {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let u = 0;
  let v = n;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u += 1;
  }
  const s = Number.isInteger(v) ? String(v) : v.toFixed(v >= 100 ? 0 : v >= 10 ? 1 : 2);
  return `${s} ${units[u]}`;
}

// markRendered records that a widget finished an update: tests and the
// timing display read window.__pg.
export function markRendered(ms) {
  const pg = (window.__pg = window.__pg || { renders: 0, times: [] });
  pg.renders += 1;
  pg.lastEnd = performance.now();
  if (ms !== undefined) pg.times.push(ms);
  document.documentElement.dataset.pgRenders = String(pg.renders);
}

// NARROW_PX is the column width under which the stylesheet shows the
// narrow drawings and the topology at its size (playground.css).
const NARROW_PX = 640;

// zoomControl returns a button that switches the figure in wrap between
// its drawn size (the box scrolls) and fitted to the column. Fitted is the
// default, except in a narrow column, where the topology is shown at its
// size so that its labels stay legible (the stylesheet's pg-fit fits it).
// update() shows the button only when fitting shrinks the figure
// noticeably.
export function zoomControl(wrap, what = 'figure') {
  const label = (full) => (full ? `Fit the ${what} to the column` : `Show the ${what} at full size`);
  const btn = h('button', { type: 'button', class: 'pg-button pg-zoom', 'aria-pressed': 'false', hidden: true }, label(false));
  const narrow = () => wrap.clientWidth > 0 && wrap.clientWidth < NARROW_PX;
  const full = () => (narrow() ? !wrap.classList.contains('pg-fit') : wrap.classList.contains('pg-zoomed'));
  const show = () => {
    btn.setAttribute('aria-pressed', String(full()));
    btn.textContent = label(full());
  };
  btn.addEventListener('click', () => {
    wrap.classList.toggle(narrow() ? 'pg-fit' : 'pg-zoomed');
    show();
  });
  // The drawing shown (a chart holds a wide and a narrow one).
  const shown = () => Array.from(wrap.querySelectorAll('svg')).find((s) => s.getClientRects().length > 0) || wrap.querySelector('svg');
  const update = () => {
    const svg = shown();
    const drawn = svg ? Number(svg.getAttribute('width')) : 0;
    btn.hidden = !(drawn > wrap.clientWidth * 1.15);
    show();
  };
  // Measured after layout (a ResizeObserver callback), never right after
  // the figure is replaced, which would force a layout of the page.
  if (typeof ResizeObserver !== 'undefined') new ResizeObserver(() => update()).observe(wrap);
  return { el: btn, update: () => requestAnimationFrame(update) };
}
