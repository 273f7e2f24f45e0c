// DDP / FSDP2 step page: the projection's inputs, a timeline with compute
// and communication lanes per bucket or layer, and the speedup against one
// GPU. With a GPU chosen, forward and backward come from the model size and
// the GPU's published dense BF16 throughput (service: ncclsim step --gpu),
// with a memory estimate.
import { h, fill, field, select, section, setHTML, scroller, setError, commandBar, kv } from './ui.js';
import { systemPicker } from './system.js';
import { envEditor } from './env.js';
import { FABRICS, STEP_DTYPES, SAME_DTYPES, MODES, TIMINGS, STEP, ESTIMATE, OPTIMIZERS, GPUS, gpuName } from './constants.js';


export function stepWidget({ engine, presets, state, xml, defaultPreset, update }) {
  const sys = systemPicker({ presets, state, xml, defaultPreset, engine, onChange: update });
  const env = envEditor({ state, onChange: update });
  const fields = {};
  const controls = [];
  let timer = 0;
  const later = () => {
    clearTimeout(timer);
    timer = setTimeout(update, 250);
  };
  const now = () => {
    clearTimeout(timer);
    update();
  };
  const add = (name, label, control, hint, opts = {}) => {
    control.name = name;
    const f = field({ label, control, hint, check: control.type === 'checkbox' });
    fields[name] = f;
    controls.push(f.wrap);
    if (opts.only) f.wrap.dataset.only = opts.only;
    if (control.tagName === 'SELECT' || control.type === 'checkbox') control.addEventListener('change', now);
    else {
      control.addEventListener('input', later);
      control.addEventListener('change', now);
    }
    return control;
  };
  const text = (v, attrs = {}) => h('input', { type: 'text', value: v, spellcheck: 'false', autocomplete: 'off', ...attrs });
  const num = (v) => h('input', { type: 'number', min: '0', step: 'any', value: v });
  const check = (on) => {
    const c = h('input', { type: 'checkbox' });
    c.checked = on;
    return c;
  };
  const mode = add('mode', 'Parallelism', select(MODES, state.mode || STEP.mode));
  add('params', 'Parameters', text(state.params || STEP.params), 'e.g. 1.5B, 350M, 7e9');
  add('dtype', 'Gradient / parameter type', select(STEP_DTYPES, state.dtype || STEP.dtype));
  add('layers', 'Layers', num(state.layers || STEP.layers));
  add('tensorsPerLayer', 'Tensors per layer', num(state.tensors || STEP.tensorsPerLayer), 'DDP', { only: 'ddp' });
  add('bucketCapMb', 'bucket_cap_mb', text(state.bucket || '', { placeholder: 'default 25 (first 1)' }), 'DDP, MiB', { only: 'ddp' });
  add('firstIteration', 'First iteration (one bucket)', check(state.first === '1'), '', { only: 'ddp' });
  add('reshard', 'reshard_after_forward', check(state.reshard !== 'false'), '', { only: 'fsdp' });
  add('reduceDtype', 'reduce_dtype', select(SAME_DTYPES, state.rdtype || ''), 'FSDP', { only: 'fsdp' });
  add('shardDtype', 'Sharded parameter type', select(SAME_DTYPES, state.sdtype || ''), 'FSDP', { only: 'fsdp' });
  // Compute from the model: with a GPU chosen, forward and backward come
  // from the model size and the GPU's published throughput.
  // A link may name the GPU by an alias (?gpu=rtx4090), as ncclsim step
  // --gpu takes it; the select holds the table's names.
  if (state.gpu) state.gpu = gpuName(state.gpu);
  add('gpu', 'GPU (derive compute)', select(GPUS, state.gpu || ''), 'from the model size and the GPU’s dense BF16 throughput');
  add('batch', 'Sequences per GPU', num(state.batch || STEP.batch), 'with a GPU', { only: 'gpu' });
  add('seqLen', 'Sequence length', num(state.seq || STEP.seqLen), 'tokens, with a GPU', { only: 'gpu' });
  add('mfu', 'Utilisation of peak', text(state.mfu || '', { placeholder: `default ${STEP.mfu}` }), 'fraction of dense BF16 TFLOP/s', { only: 'gpu' });
  add('optimizer', 'Optimizer (memory)', select(OPTIMIZERS, state.optim || STEP.optimizer), '', { only: 'gpu' });
  add('forwardMs', 'Forward (ms, one GPU)', num(state.fwd || STEP.forwardMs), '', { only: 'typed' });
  add('backwardMs', 'Backward (ms)', num(state.bwd || STEP.backwardMs), '', { only: 'typed' });
  add('optimizerMs', 'Optimizer (ms)', num(state.opt || STEP.optimizerMs));
  add('timing', 'Collective times', select(TIMINGS, state.timing || STEP.timing));
  add('fabric', 'Network between nodes', select(FABRICS, state.fabric || ESTIMATE.fabric));
  const showMode = () => {
    const withGPU = fields.gpu.control.value.trim() !== '';
    for (const f of Object.values(fields)) {
      const only = f.wrap.dataset.only;
      if (only) f.wrap.hidden = only === 'gpu' ? !withGPU : only === 'typed' ? withGPU : only !== mode.value;
    }
  };
  mode.addEventListener('change', showMode);
  fields.gpu.control.addEventListener('change', showMode);
  showMode();

  const cmd = commandBar();
  const sum = section('Step', 'pg-step-summary');
  const tl = section('Timeline', 'pg-timeline');
  const tlWrap = h('div', { class: 'pg-figure' });
  const detail = h('p', { class: 'pg-detail', 'aria-live': 'polite' }, 'Hover or Tab to a span for its times.');
  tl.body.append(tlWrap, detail);
  const showDetail = (ev) => {
    const g = ev.target.closest && ev.target.closest('[aria-label]');
    if (g && g.tagName !== 'svg') detail.textContent = g.getAttribute('aria-label');
  };
  tlWrap.addEventListener('focusin', showDetail);
  tlWrap.addEventListener('mouseover', showDetail);
  const spans = section('Collectives', 'pg-spans');
  const outputs = h('div', {}, cmd.el, sum.el, tl.el, spans.el);
  const val = (name) => {
    const c = fields[name].control;
    return c.type === 'checkbox' ? c.checked : c.value.trim();
  };

  return {
    controls: [sys.el, ...controls, h('fieldset', {}, h('legend', { class: 'visually-hidden' }, 'NCCL environment'), env.controls)],
    outputs,
    // Inputs the warm-up tries on every system (see startWarmup).
    variants: [{ mode: 'fsdp' }, { mode: 'ddp' }],
    request() {
      const s = sys.request();
      if (s.error) return s;
      const e = env.list();
      if (e.error) return e;
      const req = { ...s, env: e.env, mode: val('mode'), params: val('params'), dtype: val('dtype'), layers: val('layers'),
        forwardMs: val('forwardMs'), backwardMs: val('backwardMs'), optimizerMs: val('optimizerMs'), timing: val('timing'), fabric: val('fabric') };
      if (val('gpu') !== '') {
        Object.assign(req, { gpu: val('gpu'), batch: val('batch'), seqLen: val('seqLen'), mfu: val('mfu'), optimizer: val('optimizer') });
        delete req.forwardMs;
        delete req.backwardMs;
      }
      if (req.mode === 'ddp') {
        Object.assign(req, { tensorsPerLayer: val('tensorsPerLayer'), bucketCapMb: val('bucketCapMb'), firstIteration: val('firstIteration') });
      } else {
        Object.assign(req, { reshard: val('reshard') ? 'true' : 'false', reduceDtype: val('reduceDtype'), shardDtype: val('shardDtype') });
      }
      return { fn: 'step', req };
    },
    render(d) {
      const r = d.result;
      env.showProblems(d.problems);
      cmd.set(d.command);
      const x = r.ddp || r.fsdp;
      const mem = r.fsdp ? r.fsdp.memory : null;
      const gb = (v) => `${(v / 1e9).toFixed(2)} GB`;
      fill(sum.body, kv([
        ['Step', `${x.step_ms.toFixed(2)} ms on ${x.ngpus} GPUs; one GPU: ${x.single_gpu_step_ms.toFixed(2)} ms`],
        ['Speedup versus one GPU', `${x.speedup.toFixed(2)}× (scaling efficiency ${(100 * x.efficiency).toFixed(0)} %)`],
        ['Communication', `${x.total_comm_ms.toFixed(2)} ms in total, ${x.exposed_comm_ms.toFixed(2)} ms exposed (not hidden behind compute)`],
        r.ddp ? ['Buckets', `${r.ddp.buckets.length} (gradients ${gb(r.ddp.grad_bytes)})`] : null,
        r.compute ? ['Compute (from the model size)', `forward ${r.compute.forward_ms.toFixed(2)} ms, backward ${r.compute.backward_ms.toFixed(2)} ms: ${r.compute.tokens_per_gpu} tokens per GPU at ${(100 * r.compute.utilization).toFixed(0)} % of the ${r.compute.gpu}’s ${r.compute.peak_tflops} dense BF16 TFLOP/s`] : null,
        r.memory ? ['Memory per GPU (estimate)', `${gb(r.memory.total_bytes)}: parameters ${gb(r.memory.param_bytes)}, gradients ${gb(r.memory.grad_bytes)}${r.memory.bucket_bytes ? `, DDP buckets ${gb(r.memory.bucket_bytes)}` : ''}, ${r.memory.optimizer} state ${gb(r.memory.optimizer_bytes)}, activations ${gb(r.memory.activation_bytes)}; ${r.memory.fits ? 'fits in' : 'does not fit in'} the GPU’s ${gb(r.memory.gpu_bytes)}`] : null,
        mem ? ['Memory per GPU', `parameters ${gb(mem.peak_param_bytes)} peak, gradients ${gb(mem.peak_grad_bytes)} peak, together at most ${gb(mem.peak_total_bytes)}`] : null,
        ['Collective times', r.timing === 'model' ? 'NCCL’s tuning model' : `calibrated estimate${r.class ? `, path class ${r.class} (busbw error median ${r.error_band.median_pct} %, max ${r.error_band.max_pct} %)` : ''}`],
      ]));
      const n = x.ngpus;
      sum.body.append(h('details', { class: 'pg-formula' }, h('summary', {}, 'formulas'),
        h('p', {}, `speedup = GPUs × one-GPU step / step = ${n} × ${x.single_gpu_step_ms.toFixed(3)} / ${x.step_ms.toFixed(3)} = ${x.speedup.toFixed(3)}`),
        h('p', {}, `efficiency = speedup / GPUs = ${x.speedup.toFixed(3)} / ${n} = ${x.efficiency.toFixed(3)}`),
        h('p', {}, `exposed communication = the time the compute lane waits for collectives = ${x.exposed_comm_ms.toFixed(3)} ms of ${x.total_comm_ms.toFixed(3)} ms`),
        h('p', {}, `one-GPU step = forward + backward + optimizer = ${x.single_gpu_step_ms.toFixed(3)} ms (no communication)`)));
      if (r.memory) {
        sum.body.append(h('div', { id: 'pg-step-assumptions' }, h('h3', {}, 'Assumed'), h('ul', { class: 'pg-notes' }, r.memory.assumptions.map((a) => {
          const m = a.match(/\((https:[^)]+)\)/);
          if (!m) return h('li', {}, a);
          const [pre, post] = a.split(m[0]);
          return h('li', {}, pre, '(', h('a', { href: m[1], rel: 'noopener' }, 'source'), ')', post);
        }))));
      }
      setHTML(tlWrap, d.figures.timeline);
      const t = scroller('Collectives of the step');
      setHTML(t, d.figures.spans);
      fill(spans.body, t);
    },
    fieldFor(err) {
      if (sys.fields[err.field]) return sys.fields[err.field];
      const map = { gpu: 'gpu', batch: 'batch', seq_len: 'seqLen', mfu: 'mfu', optimizer: 'optimizer', mode: 'mode', params: 'params', dtype: 'dtype', layers: 'layers', tensors_per_layer: 'tensorsPerLayer', bucket_cap_mb: 'bucketCapMb',
        forward_ms: 'forwardMs', backward_ms: 'backwardMs', optimizer_ms: 'optimizerMs', reduce_dtype: 'reduceDtype', shard_dtype: 'shardDtype', timing: 'timing', fabric: 'fabric' };
      if (map[err.field]) return fields[map[err.field]];
      return env.fieldFor(err);
    },
    clearErrors() {
      sys.clearErrors();
      env.clearErrors();
      Object.values(fields).forEach((f) => setError(f, ''));
    },
    state() {
      const e = env.list();
      const st = { ...sys.state(), env: e.env || [] };
      const keep = (k, v, def) => {
        if (v !== def) st[k] = v;
      };
      keep('mode', val('mode'), STEP.mode);
      keep('params', val('params'), STEP.params);
      keep('dtype', val('dtype'), STEP.dtype);
      keep('layers', val('layers'), STEP.layers);
      keep('fwd', val('forwardMs'), STEP.forwardMs);
      keep('bwd', val('backwardMs'), STEP.backwardMs);
      keep('opt', val('optimizerMs'), STEP.optimizerMs);
      keep('timing', val('timing'), STEP.timing);
      if (val('gpu') !== '') {
        st.gpu = val('gpu');
        keep('batch', val('batch'), STEP.batch);
        keep('seq', val('seqLen'), STEP.seqLen);
        keep('mfu', val('mfu'), '');
        keep('optim', val('optimizer'), STEP.optimizer);
      }
      keep('fabric', val('fabric'), ESTIMATE.fabric);
      if (val('mode') === 'ddp') {
        keep('tensors', val('tensorsPerLayer'), STEP.tensorsPerLayer);
        keep('bucket', val('bucketCapMb'), '');
        if (val('firstIteration')) st.first = '1';
      } else {
        if (!val('reshard')) st.reshard = 'false';
        keep('rdtype', val('reduceDtype'), '');
        keep('sdtype', val('shardDtype'), '');
      }
      return st;
    },
    fragment: () => sys.fragment(),
  };
}
