// Package stepsim projects one training step of data-parallel PyTorch
// (DDP) and fully sharded data parallelism (FSDP2) onto a modelled system:
// backward compute against the collectives that overlap it, step time,
// exposed communication, speedup over one GPU and, for FSDP2, the peak
// parameter and gradient memory per GPU.
//
// Collective times come from a Comm, normally the calibrated estimator of
// package estimate, so a projection inherits its error band. The results
// are plain data: Timeline holds spans on named lanes (compute, comm) in
// milliseconds that a UI can draw directly.
//
// Behaviour modelled, at PyTorch v2.6.0:
//   - DDP buckets (torch/csrc/distributed/c10d/reducer.cpp,
//     compute_bucket_assignment_by_size, L2097-L2220): parameters are taken
//     in order and a bucket closes as soon as its size reaches the current
//     limit; the limits are [first bucket, cap, cap, ...] with the first
//     bucket 1 MiB (kDefaultFirstBucketBytes, reducer.hpp L29) only when
//     bucket_cap_mb is left at its default of 25 MiB
//     (torch/nn/parallel/distributed.py L796-L802), else the cap.
//   - In the first iteration DDP uses a single bucket (bucket_size_limits =
//     [sys.maxsize], distributed.py L1168-L1169), so the one allreduce
//     starts when backward ends; from the second iteration the buckets are
//     rebuilt in the order gradients became ready (Reducer::rebuild_buckets,
//     reducer.cpp L1798-L1874) and each bucket's allreduce is launched, in
//     order, as soon as its last gradient is ready (Reducer::mark_bucket_ready,
//     reducer.cpp L1023-L1044). Allreduces run one after another on the
//     process group's NCCL stream; the optimizer waits for the last one
//     (Reducer::finalize_backward).
//   - FSDP2 (torch/distributed/fsdp/_fully_shard/): one all-gather per
//     layer before its forward and, with reshard_after_forward=True, again
//     before its backward; one reduce-scatter per layer after its backward;
//     the next layer's all-gather is prefetched while the current layer
//     computes (one layer ahead). Collectives share one NCCL communicator
//     and run one at a time.
//
// Compute times are inputs; package workload derives them from the model
// size and the GPU's published dense BF16 throughput at a stated
// utilisation, and estimates one GPU's memory with the optimizer's state
// and the activations.
//
// Not modelled: compute slowed down by communication kernels sharing SMs,
// the optimizer's own collectives, and gradient accumulation.
package stepsim
