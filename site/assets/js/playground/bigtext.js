// A text input for pasted or loaded files that may be large (a topology
// dump, an NCCL log, an environment listing). Text up to SHOW_BYTES is
// edited in the textarea as usual; a larger file or paste is kept in memory
// only, and the box shows "file X, N MB loaded" with a Clear button:
// putting megabytes into a <textarea> costs the main thread seconds of
// layout (issue 18 measured 2-5 s for 8 MiB), while a string in memory
// costs nothing until the worker reads it.
//
// Sizes are counted in UTF-8 bytes, as the Go side counts its caps
// (service.MaxLogBytes and the others, in constants.js), not in UTF-16 code
// units as String.length would.
import { h } from './ui.js';

// SHOW_BYTES is the most text the textarea is given. It is a display
// choice, not a model limit: 256 KiB fills the box in a few milliseconds,
// and is more than any real topology dump (tens of KB).
export const SHOW_BYTES = 256 * 1024;

// utf8Bytes returns the length of s in UTF-8 without encoding it.
export function utf8Bytes(s) {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 4;
        i++;
      } else n += 3;
    } else n += 3;
  }
  return n;
}

// sizeText writes a byte count for people: "812 KB", "8.0 MB".
export function sizeText(n) {
  if (n < 1000 * 1000) return `${Math.max(1, Math.round(n / 1000))} KB`;
  return `${(n / (1000 * 1000)).toFixed(1)} MB`;
}

// bigText wraps area (a textarea). onChange(immediate) is called when the
// text changes: immediate is false while the user types. The returned
// object reads the text wherever it lives.
export function bigText(area, { onChange, what = 'text' }) {
  let held = null; // {text, name, bytes} when the text lives in memory only
  const status = h('span', { class: 'pg-hint', role: 'status' });
  const clear = h('button', { type: 'button', class: 'pg-button' }, `Clear the ${what}`);
  const bar = h('div', { class: 'pg-loaded', hidden: true }, status, ' ', clear);
  area.after(bar);

  const show = () => {
    bar.hidden = !held;
    area.hidden = !!held;
    if (held) status.textContent = `${held.name}, ${sizeText(held.bytes)} loaded (kept in memory, not shown in the box, so that the page stays responsive).`;
  };
  const set = (text, name) => {
    const bytes = utf8Bytes(text);
    if (bytes > SHOW_BYTES) {
      held = { text, name: name || `pasted ${what}`, bytes };
      area.value = '';
    } else {
      held = null;
      area.value = text;
    }
    show();
  };
  clear.addEventListener('click', () => {
    held = null;
    area.value = '';
    show();
    area.focus();
    onChange(true);
  });
  // A large paste goes to memory instead of into the box.
  area.addEventListener('paste', (ev) => {
    const text = ev.clipboardData && ev.clipboardData.getData('text/plain');
    if (!text || text.length <= SHOW_BYTES / 4 || utf8Bytes(text) <= SHOW_BYTES) return;
    ev.preventDefault();
    set(text, `pasted ${what}`);
    onChange(true);
  });
  area.addEventListener('input', () => onChange(false));
  area.addEventListener('change', () => onChange(true));

  return {
    bar,
    // value returns the text, shown or held.
    value: () => (held ? held.text : area.value),
    // bytes returns the text's size in UTF-8 bytes.
    bytes: () => (held ? held.bytes : utf8Bytes(area.value)),
    // name returns the file name of held text, or ''.
    name: () => (held ? held.name : ''),
    isHeld: () => !!held,
    // set replaces the text (from a file, a sample or a preset); name is the
    // file's name, shown when the text is held.
    set,
  };
}
