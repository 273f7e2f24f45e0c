// Doctor page: paste (or load) an NCCL_DEBUG=INFO log and/or an
// environment listing; the module's log reader summarises it and diagnoses
// what it sees, with links to the site's notes.
import { LIMITS } from './constants.js';
import { h, fill, field, section, setHTML, setError, commandBar } from './ui.js';
import { bigText, overLimit } from './bigtext.js';

const MAX_LOG = LIMITS.logBytes;
const MAX_ENV = LIMITS.envDumpBytes;

// sampleLabel turns a log's file name (owner-repo-issue-what) into a button
// label: "nccl #1453: h100 rings".
function sampleLabel(name) {
  const m = /^(?:[a-z-]+?-)?(nccl-tests|nccl|pytorch|vllm|sglang)-(\d+)-(.*)$/.exec(name);
  return m ? `${m[1]} #${m[2]}: ${m[3].replace(/-/g, ' ')}` : name;
}

export function doctorWidget({ update }) {
  const log = h('textarea', { name: 'log', rows: 10, spellcheck: 'false', autocomplete: 'off', class: 'pg-xml', placeholder: 'host:1234:1234 [0] NCCL INFO NCCL version 2.21.5+cuda12.4 …' });
  const fLog = field({ label: 'NCCL / PyTorch log', control: log, wide: true, hint: 'NCCL_DEBUG=INFO output of one or more ranks; it stays in your browser.' });
  const env = h('textarea', { name: 'envdump', rows: 4, spellcheck: 'false', autocomplete: 'off', placeholder: 'NCCL_P2P_DISABLE=1' });
  const fEnv = field({ label: 'Environment', control: env, wide: true, hint: 'the output of env | grep -E "NCCL|TORCH", or an nccl.conf file' });
  const fileLog = h('input', { type: 'file', name: 'logfile', accept: '.log,.txt,text/plain' });
  const fFile = field({ label: 'Load a log file', control: fileLog });
  let timer = 0;
  const changed = (now) => {
    clearTimeout(timer);
    if (now) update();
    else timer = setTimeout(update, 400);
  };
  const readLog = async (f) => {
    if (!f) return;
    setError(fLog, '');
    // The log is held as the File itself: the worker decodes it.
    const file = await logText.read(f, true);
    if (file === null) return;
    logText.set(file, f.name, f.size);
    changed(true);
  };
  const logText = bigText(log, { onChange: changed, what: 'log', maxBytes: MAX_LOG, onFile: readLog, onError: (m) => setError(fLog, m) });
  const envText = bigText(env, { onChange: changed, what: 'environment', maxBytes: MAX_ENV, onError: (m) => setError(fEnv, m),
    onFile: async (f) => {
      setError(fEnv, '');
      const t = await envText.read(f);
      if (t === null) return;
      envText.set(t, f.name, f.size);
      changed(true);
    } });
  fileLog.addEventListener('change', () => readLog(fileLog.files && fileLog.files[0]));

  // Published logs to try (data/logs, chosen by the generator).
  let samples = [];
  try {
    samples = JSON.parse(document.getElementById('pg-app').dataset.samples || '[]');
  } catch (e) {
    samples = [];
  }
  const sampleBar = samples.length
    ? h('div', { class: 'pg-field wide' }, h('span', { class: 'pg-label' }, 'Or try a published log'),
      h('div', { class: 'pg-toolbar' }, samples.map((s) => h('button', { type: 'button', class: 'pg-button', title: s.shows, onclick: () => {
        logText.set(s.text, `${s.name}.log`);
        changed(true);
      } }, sampleLabel(s.name)))))
    : null;
  const cmd = commandBar();
  const rep = section('Diagnosis', 'pg-doctor');
  const outputs = h('div', {}, cmd.el, rep.el);
  const base = document.documentElement.dataset.base || '/';

  return {
    controls: [fLog.wrap, sampleBar, fEnv.wrap, fFile.wrap].filter(Boolean),
    outputs,
    request() {
      const logValue = logText.value();
      const envValue = envText.value();
      if (logText.isEmpty() && envText.isEmpty()) {
        fill(rep.body, h('p', {}, 'Paste a log or an environment listing into the box to diagnose it.'));
        return { idle: true };
      }
      // The caps count UTF-8 bytes (a file's own bytes), as the Go side does.
      if (logText.bytes() > MAX_LOG) return { error: { field: 'log', message: `The log ${overLimit(logText.bytes(), MAX_LOG)}.` } };
      if (envText.bytes() > MAX_ENV) return { error: { field: 'envdump', message: `The environment text ${overLimit(envText.bytes(), MAX_ENV)}.` } };
      return { fn: 'doctor', req: { log: logValue, env: envValue } };
    },
    render(d) {
      cmd.set(d.command);
      const div = h('div', { class: 'pg-report' });
      setHTML(div, d.figures.report);
      // The report links to site pages by root-relative URL; the site may
      // live under a sub-path.
      div.querySelectorAll('a[href^="/"]:not([href^="//"])').forEach((a) => {
        a.setAttribute('href', base.replace(/\/$/, '') + a.getAttribute('href'));
      });
      const findings = d.result.env_findings || [];
      fill(rep.body, div, findings.length
        ? h('section', { 'aria-label': 'Environment findings' }, h('h3', {}, 'Environment'), h('ul', { class: 'pg-notes' },
          findings.map((f) => h('li', {}, `${f.line ? `line ${f.line}: ` : ''}${f.severity}: ${f.message}${f.suggestions ? ` (did you mean ${f.suggestions.join(', ')}?)` : ''}`))))
        : null);
    },
    fieldFor(err) {
      if (err.field === 'envdump' || err.field === 'env') return fEnv;
      return fLog;
    },
    clearErrors() {
      setError(fLog, '');
      setError(fEnv, '');
    },
    state: () => ({}),
    // The doctor's question has no preset: no warm-up after the first
    // answer (main.js).
    warmup: false,
  };
}
