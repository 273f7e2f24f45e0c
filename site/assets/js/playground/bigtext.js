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
// choice, not a model limit: a textarea's layout grows with its lines, and
// a real paste of a 255 KB environment listing (10,000 short lines) cost
// one 328 ms task at load 2, while 64 KiB is a quarter of that and still
// six times the largest topology dump of data/topologies (10 KB).
export const SHOW_BYTES = 64 * 1024;

// utf8Bytes returns the length of s in UTF-8 (a lone surrogate counts
// three bytes, as the U+FFFD an encoder writes for it).
export function utf8Bytes(s) {
  return utf8Range(s, 0, s.length)[0];
}

// utf8Range counts the UTF-8 bytes of s from code unit i to end (or one
// unit past it, when end splits a surrogate pair) and returns the count and
// where it stopped.
function utf8Range(s, i, end) {
  let n = 0;
  for (; i < end; i++) {
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
  return [n, i];
}

// COUNT_SLICE is how many code units of a held text are counted in one
// task. Counting 8 MiB in one go cost 30-75 ms on the page thread at load
// 11, and the browser's own encoder (a Blob's size) 110-135 ms, twice per
// paste: the whole paste event took 276 ms. 512 Ki units cost a few ms.
const COUNT_SLICE = 512 * 1024;

// countLater counts the UTF-8 bytes of s a slice per task and calls
// done(n), unless stale() says the text was replaced meanwhile.
function countLater(s, done, stale) {
  let i = 0;
  let n = 0;
  const step = () => {
    if (stale()) return;
    const [k, j] = utf8Range(s, i, Math.min(s.length, i + COUNT_SLICE));
    n += k;
    i = j;
    if (i < s.length) setTimeout(step, 0);
    else done(n);
  };
  setTimeout(step, 0);
}

// sizeText writes a byte count for people: "812 KB", "8.0 MB".
export function sizeText(n) {
  if (n < 1000 * 1000) return `${Math.max(1, Math.round(n / 1000))} KB`;
  return `${(n / (1000 * 1000)).toFixed(1)} MB`;
}

// overLimit says by how much n bytes exceed max, in bytes: "2.1 MB; the
// limit is 2 MiB" did not tell a reader that a file was ten bytes over.
export function overLimit(n, max) {
  const b = (x) => x.toLocaleString('en-US');
  const unit = max % 1048576 === 0 ? `${max / 1048576} MiB, ` : '';
  return `is ${b(n)} bytes (${sizeText(n)}), ${b(n - max)} over the limit here of ${unit}${b(max)} bytes`;
}

// BULK_INSERT is the length from which one inserted piece of text (not a
// keystroke) is inserted by bigText itself; any piece with a line break is.
const BULK_INSERT = 256;

// BINARY_PROBE is how much of a file is looked at for NUL bytes, the sign
// of a binary file (as grep decides): text logs, dumps and listings have
// none.
const BINARY_PROBE = 64 * 1024;

// bigText wraps area (a textarea). onChange(immediate) is called when the
// text changes: immediate is false while the user types. The returned
// object reads the text wherever it lives. With onFile, a file dropped on
// the area's field (also while the box is hidden behind a held file's
// status line) is passed to onFile; read() reads a file for it, refusing
// one over maxBytes or a binary one with a message to onError.
export function bigText(area, { onChange, what = 'text', onFile, maxBytes = Infinity, onError = () => {} }) {
  // held is {text, name, bytes} when the text lives in memory only; bytes
  // is null while countLater counts them.
  let held = null;
  let reading = null; // {name, bytes} while a file is read
  let readSeq = 0;
  const status = h('span', { class: 'pg-hint', role: 'status' });
  const clear = h('button', { type: 'button', class: 'pg-button' }, `Clear the ${what}`);
  const bar = h('div', { class: 'pg-loaded', hidden: true }, status, ' ', clear);
  area.after(bar);

  const show = () => {
    bar.hidden = !held && !reading;
    area.hidden = !!held || !!reading;
    clear.textContent = reading ? 'Cancel' : `Clear the ${what}`;
    if (reading) status.textContent = `Reading ${reading.name}, ${sizeText(reading.bytes)}…`;
    else if (held) status.textContent = `${held.name}, ${sizeText(held.bytes === null ? held.text.length : held.bytes)} loaded (kept in memory, not shown in the box, so that the page stays responsive).`;
  };
  // fileBytes, for text read from a file, is the file's own size
  // (File.size): decoding replaced each invalid byte by U+FFFD, three bytes
  // in UTF-8, and the caps count the file, as ncclsim and the worker do
  // (service.FileBytes).
  // A text of more code units than SHOW_BYTES has more bytes too, so it is
  // held without counting them first; they are counted after, a slice per
  // task, and then() is called once they are (at once when nothing is left
  // to count). Until then bytes() is the code-unit count, a lower bound;
  // the worker applies the caps itself in any case.
  const set = (text, name, fileBytes, then = () => {}) => {
    if (text instanceof Blob) {
      held = { text, name: name || `loaded ${what}`, bytes: text.size };
      area.value = '';
      show();
      then();
      return;
    }
    let bytes = fileBytes;
    if (bytes === undefined) bytes = text.length > SHOW_BYTES ? null : utf8Bytes(text);
    if (bytes === null || bytes > SHOW_BYTES) {
      const entry = { text, name: name || `pasted ${what}`, bytes };
      held = entry;
      area.value = '';
      if (bytes === null) {
        countLater(text, (n) => {
          entry.bytes = n;
          show();
          then();
        }, () => held !== entry);
        show();
        return;
      }
    } else {
      held = null;
      area.value = text;
    }
    show();
    then();
  };
  // tooBig says whether text belongs in memory rather than in the box.
  const tooBig = (text) => text.length > SHOW_BYTES || (text.length > SHOW_BYTES / 4 && utf8Bytes(text) > SHOW_BYTES);
  clear.addEventListener('click', () => {
    const wasReading = !!reading;
    readSeq++;
    reading = null;
    if (!wasReading) {
      held = null;
      area.value = '';
    }
    show();
    area.focus();
    if (!wasReading) onChange(true);
  });
  // read returns the text of file f, or null when it is refused (over
  // maxBytes, or binary: the message goes to onError) or cancelled. The
  // status line says what is being read meanwhile. With asFile it returns
  // f itself once it passes the checks, for set() to hold unread: the
  // worker decodes it (worker.js reads every Blob of a request), so the
  // page's thread never holds its text (decoding 8 MiB of non-UTF-8
  // bytes, 16 MB of UTF-16 with every U+FFFD, took one 650-850 ms task of
  // the page at load 4-7).
  const read = async (f, asFile = false) => {
    if (f.size > maxBytes) {
      onError(`${f.name} ${overLimit(f.size, maxBytes)}.`);
      return null;
    }
    const seq = ++readSeq;
    reading = { name: f.name, bytes: f.size };
    show();
    try {
      const head = new Uint8Array(await f.slice(0, BINARY_PROBE).arrayBuffer());
      if (seq !== readSeq) return null;
      if (head.includes(0)) {
        onError(`${f.name} is a binary file (it holds NUL bytes), not text: load the ${what} as text.`);
        return null;
      }
      const text = asFile ? f : await f.text();
      return seq === readSeq ? text : null;
    } catch (e) {
      if (seq === readSeq) onError(`${f.name} could not be read.`);
      return null;
    } finally {
      if (seq === readSeq) {
        reading = null;
        show();
      }
    }
  };
  if (onFile) {
    const zone = area.closest('.pg-field') || area.parentElement;
    zone.addEventListener('dragover', (ev) => {
      ev.preventDefault();
      zone.classList.add('pg-drop');
    });
    zone.addEventListener('dragleave', () => zone.classList.remove('pg-drop'));
    zone.addEventListener('drop', (ev) => {
      ev.preventDefault();
      zone.classList.remove('pg-drop');
      const f = ev.dataTransfer && ev.dataTransfer.files && ev.dataTransfer.files[0];
      if (f) onFile(f);
    });
  }
  // A large paste goes to memory instead of into the box.
  area.addEventListener('paste', (ev) => {
    const text = ev.clipboardData && ev.clipboardData.getData('text/plain');
    if (!text || !tooBig(text)) return;
    ev.preventDefault();
    set(text, `pasted ${what}`, undefined, () => onChange(true));
  });
  // Dropped text (not a file) too large for the box is held as well: the
  // browser would insert it first and lay it out (262 KB dropped into a
  // box cost one 2-3 s task); smaller drops are inserted by the browser,
  // at the drop point.
  area.addEventListener('drop', (ev) => {
    const dt = ev.dataTransfer;
    if (!dt || (dt.files && dt.files.length > 0)) return;
    const text = dt.getData('text/plain');
    if (!text || !tooBig(text)) return;
    ev.preventDefault();
    set(text, `dropped ${what}`, undefined, () => onChange(true));
  });
  // Text inserted in one piece that is not a paste (an IME or dictation
  // commit, a test driver's Input.insertText) is inserted here, not by the
  // browser: Chromium's editor inserts such text a line at a time, with an
  // input event and a layout per line (20 KB of 800 lines cost 1.2 s of
  // main thread in a bare textarea, 1,600 input events), while
  // setRangeText is one edit. A large one goes to memory as a paste does.
  // The cost is the browser's undo step for that insertion.
  area.addEventListener('beforeinput', (ev) => {
    const text = ev.data;
    if (ev.inputType !== 'insertText' || !text || (text.length < BULK_INSERT && !text.includes('\n'))) return;
    ev.preventDefault();
    if (tooBig(text)) {
      set(text, `pasted ${what}`, undefined, () => onChange(true));
      return;
    }
    area.setRangeText(text, area.selectionStart, area.selectionEnd, 'end');
    area.dispatchEvent(new InputEvent('input', { bubbles: true, inputType: 'insertText', data: text }));
  });
  // Text that reached the box another way (dropped text, autofill, a
  // script) goes to memory as a paste does once it is too large; new text
  // in the box replaces held text.
  area.addEventListener('input', () => {
    if (tooBig(area.value)) {
      set(area.value, `pasted ${what}`, undefined, () => onChange(true));
      return;
    }
    if (held && area.value !== '') {
      held = null;
      show();
    }
    onChange(false);
  });
  area.addEventListener('change', () => {
    if (held && area.value !== '') {
      held = null;
      show();
    }
    onChange(true);
  });

  return {
    bar,
    // value returns the text, shown or held: a held file read with
    // read(f, true) is returned as that File, unread.
    value: () => (held ? held.text : area.value),
    // isEmpty says whether there is no text (a held file is empty when it
    // has no bytes).
    isEmpty: () => (held ? (held.text instanceof Blob ? held.text.size === 0 : held.text.trim() === '') : area.value.trim() === ''),
    // bytes returns the text's size in UTF-8 bytes; while a held text is
    // still being counted, its length in code units (which it is at least).
    bytes: () => (held ? (held.bytes === null ? held.text.length : held.bytes) : utf8Bytes(area.value)),
    // name returns the file name of held text, or ''.
    name: () => (held ? held.name : ''),
    isHeld: () => !!held,
    // set replaces the text (from a file, a sample or a preset) or holds a
    // File unread; name is the file's name, shown when the text is held,
    // fileBytes the file's size, and then is called once the size is known.
    set,
    read,
  };
}
