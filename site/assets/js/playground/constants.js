// The defaults, limits and option lists the playground pages show, written
// by the generator from Go (service.Constants in playground/service) into
// site/assets/gen: the JavaScript restates none of them.
import C from '../../gen/playground/constants.js';

// pairs turns [{value, label}] into the [value, label] pairs ui.select takes.
const pairs = (list) => list.map((o) => [o.value, o.label]);

export const LIMITS = C.limits;
export const COLLS = pairs(C.colls);
export const P2P = pairs(C.p2p);
export const DTYPES = pairs(C.dtypes);
export const STEP_DTYPES = pairs(C.stepDtypes);
export const SAME_DTYPES = pairs(C.sameDtypes);
export const FABRICS = pairs(C.fabrics);
export const TIMINGS = pairs(C.timings);
export const MODES = pairs(C.modes);
export const OPTIMIZERS = pairs(C.optimizers);
export const GPUS = pairs(C.gpus);
// gpuName returns the GPU a name or alias stands for (as ncclsim step --gpu
// reads it), or the text unchanged when it names none.
export const gpuName = (s) => C.gpuAliases[String(s).trim().toLowerCase().replace(/[ _-]/g, '')] || s;
export const DEFAULT_COLL = C.defaultColl;
export const ESTIMATOR_PRESET = C.estimatorPreset;
export const ESTIMATE = C.estimate;
export const STEP = C.step;
// The built-in systems ({name, description, group, title, group_order}),
// as the module's presets() lists them.
export const PRESETS = C.presets;

// mib writes a byte limit in MiB for messages.
export const mib = (n) => `${n / 1048576} MiB`;
