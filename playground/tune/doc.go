// Package tune reimplements NCCL's tuning model at release v2.30.7-1: the
// per-communicator tables of latency and bandwidth for every collective ×
// algorithm × protocol (ncclTopoTuneModel), the time formula
// (ncclTopoGetAlgoTime) and the selection NCCL makes at enqueue time
// (updateCollCostTable and topoGetAlgoInfo), including the channel and
// thread counts of the chosen pair.
//
// Sources modelled (all at https://github.com/NVIDIA/nccl/blob/v2.30.7-1/):
//   - src/graph/tuning.cc#L243-L618 ncclTopoTuneModel
//   - src/graph/tuning.cc#L630-L655 ncclTopoGetAlgoTime
//   - src/graph/tuning.cc#L55-L136 parseList (NCCL_ALGO, NCCL_PROTO)
//   - src/enqueue.cc#L1989-L2117 updateCollCostTable and topoGetAlgoInfo
//   - src/graph/connect.cc#L380-L536 ncclTopoPostset (channel count)
//   - src/transport/nvls.cc#L202-L246 ncclNvlsTuning (NVLS channel count)
//
// NCCL keeps the tables in C float (32-bit) and mixes in double constants;
// this package performs each step in the same precision so that the printed
// table matches NCCL's log digit for digit and ties break the same way.
//
// The package is independent of the topology search: callers describe the
// searched graphs (Graph) and the communicator (System). Algorithms,
// protocols and collective functions are small registries looked up by name,
// in NCCL's index order.
package tune
