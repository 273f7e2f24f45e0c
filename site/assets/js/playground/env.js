// The NCCL environment inputs: a free-form text area (one NAME=VALUE per
// line) and, optionally, dedicated controls for a few variables. Each
// variable's problems are shown next to the control it came from.
import { LIMITS } from './constants.js';
import { h, field, setError, capText } from './ui.js';
import { bigText } from './bigtext.js';

export const MAX_ENV_LINES = LIMITS.envVars;

// MAX_ENV_CHARS is the most the environment box takes: the variables the
// model reads, each at its longest, one per line. A longer paste is
// refused (capText) rather than laid out; an environment dump belongs in
// the doctor page. Text under the cap but too long to lay out fast is held
// in memory (bigText), as in the doctor's boxes: a 262 KB drop into the
// box cost one 2-3 s task, and 16 KiB inserted in one piece (an IME or a
// test driver's insertText) 2-4 s.
export const MAX_ENV_CHARS = LIMITS.envVars * (LIMITS.envLen + 1);

// envEditor builds the controls. dedicated: [{name, label, type: 'text' |
// 'number' | 'check', hint, placeholder}] — their values are taken out of
// the state's env list.
export function envEditor({ state, dedicated = [], onChange }) {
  // A link holds at most the variables and lengths the model takes; the
  // rest stay out of the box (the page names them as not taken), so that a
  // hostile link cannot put megabytes into it.
  const env = (state.env || []).filter((e) => e.length <= LIMITS.envLen).slice(0, MAX_ENV_LINES + dedicated.length);
  const fields = {};
  const controls = [];
  let timer = 0;
  const changed = (delay) => {
    clearTimeout(timer);
    timer = delay ? setTimeout(onChange, delay) : 0;
    if (!delay) onChange();
  };
  for (const d of dedicated) {
    const i = env.findIndex((e) => e.split('=')[0].trim() === d.name);
    const value = i >= 0 ? env[i].slice(env[i].indexOf('=') + 1) : '';
    if (i >= 0) env.splice(i, 1);
    let control;
    if (d.type === 'check') {
      control = h('input', { type: 'checkbox', name: d.name });
      control.checked = value === '1';
      control.addEventListener('change', () => changed(0));
    } else {
      control = h('input', { type: d.type === 'number' ? 'number' : 'text', name: d.name, placeholder: d.placeholder || '', spellcheck: 'false', autocomplete: 'off' });
      if (d.type === 'number') {
        control.min = '1';
        control.max = '64';
      }
      control.value = value;
      control.addEventListener('input', () => changed(d.type === 'number' ? 0 : 200));
      control.addEventListener('change', () => changed(0));
    }
    const f = field({ label: d.label, control, hint: d.hint, check: d.type === 'check' });
    fields[d.name] = { f, d, control };
    controls.push(f.wrap);
  }
  const area = h('textarea', { name: 'env', rows: 2, spellcheck: 'false', autocomplete: 'off', placeholder: 'NCCL_NET_GDR_LEVEL=PHB' });
  const fArea = field({ label: dedicated.length ? 'Other NCCL variables' : 'NCCL environment', control: area, wide: true, hint: 'One NAME=VALUE per line, with NCCL’s own syntax.' });
  // capText first: its refusal of an over-cap paste or drop stops the
  // event before bigText would hold the text.
  capText(fArea, MAX_ENV_CHARS);
  const box = bigText(area, { onChange: (now) => changed(now ? 0 : 300), what: 'environment', onError: (m) => setError(fArea, m) });
  box.set(env.join('\n'), 'environment from the link');
  controls.push(fArea.wrap);
  const warn = h('ul', { class: 'pg-notes', 'aria-live': 'polite' });
  controls.push(warn);

  return {
    controls,
    // list returns the assignments, dedicated controls last (they win), or
    // {error} for malformed lines.
    list() {
      const lines = box.value().split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
      if (lines.length > MAX_ENV_LINES) return { error: { field: 'env', message: `At most ${MAX_ENV_LINES} variables.` } };
      for (const l of lines) {
        if (!/^[A-Za-z_][A-Za-z0-9_]*\s*=/.test(l)) {
          return { error: { field: 'env', message: `“${l.slice(0, 60)}” is not NAME=VALUE.` } };
        }
      }
      const out = lines.slice();
      for (const { d, control } of Object.values(fields)) {
        if (d.type === 'check') {
          if (control.checked) out.push(`${d.name}=1`);
        } else if (control.value.trim() !== '') {
          out.push(`${d.name}=${control.value.trim()}`);
        }
      }
      return { env: out };
    },
    fieldFor(err) {
      if (err.field !== 'env') return null;
      if (err.name && fields[err.name]) return fields[err.name].f;
      return fArea;
    },
    clearErrors() {
      setError(fArea, '');
      Object.values(fields).forEach(({ f }) => setError(f, ''));
    },
    // set replaces the variables with lines (NAME=VALUE) and asks for an
    // update; dedicated controls take their own names.
    set(lines) {
      const rest = [];
      for (const l of lines) {
        const name = l.split('=')[0].trim();
        const f = fields[name];
        if (!f) {
          rest.push(l);
          continue;
        }
        const value = l.slice(l.indexOf('=') + 1);
        if (f.d.type === 'check') f.control.checked = value === '1';
        else f.control.value = value;
      }
      for (const { d, control } of Object.values(fields)) {
        if (!lines.some((l) => l.split('=')[0].trim() === d.name)) {
          if (d.type === 'check') control.checked = false;
          else control.value = '';
        }
      }
      box.set(rest.join('\n'), 'environment');
      changed(0);
    },
    // showProblems lists the model's warnings (deprecated names, clamped
    // values) under the inputs.
    showProblems(problems) {
      warn.replaceChildren(...(problems || []).map((p) => h('li', {}, `${p.severity}: ${p.name}: ${p.message}`)));
    },
  };
}
