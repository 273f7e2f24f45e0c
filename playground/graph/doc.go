// Package graph reproduces NCCL v2.30.7-1's channel search: the deterministic
// backtracking procedure of src/graph/search.cc (ncclTopoCompute and its
// recursion), its relaxation ladder and budgets, channel duplication, and the
// channel count that ncclTopoPostset (src/graph/connect.cc) derives from it.
//
// # Using the results (for the tuning model)
//
// Call SearchAll with a topo.Analysis (topo.Analyze) and the NCCL environment.
// It returns a *Result with:
//
//   - Ring, Tree: always present; NVLS: nil unless NVLS is supported and found.
//     CollNet graphs are never searched (they need a CollNet plugin, so NCCL
//     disables them by default).
//   - Each *Graph carries what ncclTopoTuneModel reads: Pattern, NChannels,
//     BwIntra, BwInter, TypeIntra, TypeInter, LatencyInter, SameChannels,
//     CrossNic. Ring.NChannels and Tree.NChannels are already aligned to
//     min(tree, ring) as init.cc does after the all-gather; SearchChannels
//     keeps the raw search count. Every host is identical, so the cross-rank
//     min/max reduction is the identity.
//   - Result.Scalars() gives the communicator-wide inputs: NRanks, NNodes,
//     LocalRanks, MinCompCap, MaxCompCap, CPUArch, CPUVendor, NVSCount,
//     NChannels (comm->nChannels after ncclTopoPostset), NVLSSupport and
//     MaxTreePattern.
//
// The search takes a context.Context and stops at its deadline; Graph.Steps
// reports how many recursion steps (ncclTopoSearchRecGpu calls, the unit of
// NCCL's NCCL_SEARCH_* budgets) it used, and Graph.Work how many links it
// read. Each attempt's step budget is also a budget of work (workPerStep
// links a step), which binds only on hosts of tens of GPUs, and a search
// stops at MaxSearchWork links whatever its budgets say.
package graph
