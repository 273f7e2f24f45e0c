// Package workload derives what a training step costs on one GPU from the
// model instead of typed-in times: forward and backward compute from the
// parameter count, the tokens per GPU and the GPU's published dense BF16
// throughput (package gpus) at a stated utilisation, and the memory one GPU
// holds with the optimizer's state and the activations. Package stepsim
// takes the compute times as inputs; this package supplies them.
package workload

import (
	"fmt"
	"math"

	"github.com/distributed-nav/distributed-nav/playground/gpus"
	"github.com/distributed-nav/distributed-nav/playground/stepsim"
	"github.com/distributed-nav/distributed-nav/playground/tune"
)

// DefaultUtilization is the fraction of a GPU's peak dense BF16
// throughput a training step is assumed to reach (model FLOPs
// utilisation) when the user gives none: well-tuned dense transformer
// training reports 30-50 %; 40 % sits in the middle.
const DefaultUtilization = 0.40

// MinUtilization is the smallest utilisation a workload takes: 1 % of
// peak is below any training step that is not stalled outright, and a
// smaller fraction only turns the derived compute time into a number the
// step simulation cannot advance through (1e-300 gave times of 1e300 ms).
const MinUtilization = 0.01

// Optimizer is the optimizer whose state the memory estimate counts.
type Optimizer string

// Optimizers with the state each keeps per parameter, as torch.optim at
// v2.6.0 allocates it: Adam and AdamW keep exp_avg and exp_avg_sq, each
// torch.zeros_like(param) (so in the parameter's dtype); SGD with momentum
// keeps momentum_buffer, a clone of the first gradient; plain SGD nothing.
const (
	AdamW       Optimizer = "adamw"
	Adam        Optimizer = "adam"
	SGDMomentum Optimizer = "sgd-momentum"
	SGD         Optimizer = "sgd"
)

// ParseOptimizer checks an optimizer name.
func ParseOptimizer(s string) (Optimizer, error) {
	switch o := Optimizer(s); o {
	case AdamW, Adam, SGDMomentum, SGD:
		return o, nil
	}
	return "", fmt.Errorf("unknown optimizer %q (want adamw, adam, sgd-momentum or sgd)", s)
}

// StatesPerParam is the number of parameter-sized tensors o keeps.
func (o Optimizer) StatesPerParam() int {
	switch o {
	case AdamW, Adam:
		return 2
	case SGDMomentum:
		return 1
	}
	return 0
}

// Workload describes the model and the per-GPU batch, from which compute
// time and memory are derived instead of typed in.
type Workload struct {
	// Params and Layers describe a dense transformer; Dtype is the
	// parameter (and activation) type of the compute.
	Params int64
	Layers int
	Dtype  tune.Datatype
	// Batch is the sequences per GPU per step and SeqLen their length.
	Batch  int
	SeqLen int
	GPU    gpus.GPU
	// Utilization is the fraction of GPU.DenseBF16TFLOPS reached; 0 means
	// DefaultUtilization.
	Utilization float64
	Optimizer   Optimizer
}

// Compute is what the workload derives for one GPU.
type Compute struct {
	TokensPerGPU int64   `json:"tokens_per_gpu"`
	ForwardFLOPs float64 `json:"forward_flops"`
	// BackwardFLOPs is twice ForwardFLOPs (gradients of activations and of
	// weights, each a matrix product the size of the forward one).
	BackwardFLOPs float64 `json:"backward_flops"`
	PeakTFLOPS    float64 `json:"peak_tflops"`
	Utilization   float64 `json:"utilization"`
	ForwardMs     float64 `json:"forward_ms"`
	BackwardMs    float64 `json:"backward_ms"`
	// HiddenSize is √(Params / (12 × Layers)), the width of a transformer
	// whose layers hold 12·h² parameters each (attention 4h², MLP 8h²).
	HiddenSize int    `json:"hidden_size"`
	GPU        string `json:"gpu"`
	Source     string `json:"source_url"`
}

// Check reports the first invalid field.
func (w Workload) Check() error {
	switch {
	case w.Params <= 0:
		return fmt.Errorf("workload: %d parameters", w.Params)
	case w.Layers < 1:
		return fmt.Errorf("workload: %d layers", w.Layers)
	case w.Batch < 1 || w.Batch > 1<<20:
		return fmt.Errorf("workload: batch %d sequences per GPU, want 1..%d", w.Batch, 1<<20)
	case w.SeqLen < 1 || w.SeqLen > 1<<24:
		return fmt.Errorf("workload: sequence length %d, want 1..%d", w.SeqLen, 1<<24)
	case w.Dtype.Size() <= 0:
		return fmt.Errorf("workload: unknown type %v", w.Dtype)
	case !(w.GPU.DenseBF16TFLOPS > 0):
		return fmt.Errorf("workload: GPU %q has no throughput", w.GPU.Name)
	case w.Utilization != 0 && !(w.Utilization >= MinUtilization && w.Utilization <= 1):
		return fmt.Errorf("workload: utilisation %v, want a fraction in [%v, 1]", w.Utilization, MinUtilization)
	}
	if _, err := ParseOptimizer(string(w.Optimizer)); err != nil {
		return fmt.Errorf("workload: %w", err)
	}
	return nil
}

// Derive computes forward and backward time on one GPU: forward is
// 2 × Params × tokens FLOPs (one multiply and one add per parameter per
// token; attention-score FLOPs, which grow with the sequence length, are
// left out), backward twice that, at Utilization × the GPU's peak.
func (w Workload) Derive() (Compute, error) {
	if err := w.Check(); err != nil {
		return Compute{}, err
	}
	u := w.Utilization
	if u == 0 {
		u = DefaultUtilization
	}
	tokens := int64(w.Batch) * int64(w.SeqLen)
	fwd := 2 * float64(w.Params) * float64(tokens)
	rate := w.GPU.DenseBF16TFLOPS * 1e12 * u
	return Compute{
		TokensPerGPU: tokens, ForwardFLOPs: fwd, BackwardFLOPs: 2 * fwd,
		PeakTFLOPS: w.GPU.DenseBF16TFLOPS, Utilization: u,
		ForwardMs: fwd / rate * 1e3, BackwardMs: 2 * fwd / rate * 1e3,
		HiddenSize: w.hidden(), GPU: w.GPU.Name, Source: w.GPU.Source,
	}, nil
}

func (w Workload) hidden() int {
	return int(math.Round(math.Sqrt(float64(w.Params) / (12 * float64(w.Layers)))))
}

// MemoryEstimate is the memory one GPU holds at its peak, by kind.
type MemoryEstimate struct {
	ParamBytes      uint64 `json:"param_bytes"`
	GradBytes       uint64 `json:"grad_bytes"`
	BucketBytes     uint64 `json:"bucket_bytes"`
	OptimizerBytes  uint64 `json:"optimizer_bytes"`
	ActivationBytes uint64 `json:"activation_bytes"`
	TotalBytes      uint64 `json:"total_bytes"`
	GPUBytes        uint64 `json:"gpu_bytes"`
	Fits            bool   `json:"fits"`
	Optimizer       string `json:"optimizer"`
	// Assumptions says in words what is counted and how.
	Assumptions []string `json:"assumptions"`
}

// activationBytes is the activation memory of the forward pass kept for
// backward: 34 × seq × batch × hidden bytes per layer with 16-bit
// activations (Korthikanti et al. 2022, "Reducing Activation Recomputation
// in Large Transformer Models", eq. 1, without its 5·a·s/h attention-score
// term, which flash attention does not store), scaled by the element size
// over 2 bytes.
func (w Workload) activationBytes() uint64 {
	per := 34 * float64(w.SeqLen) * float64(w.Batch) * float64(w.hidden()) * float64(w.Dtype.Size()) / 2
	return uint64(per * float64(w.Layers))
}

func (w Workload) assumptions() []string {
	return []string{
		fmt.Sprintf("compute: forward = 2 × parameters × tokens FLOPs, backward = 2 × forward, at %.0f %% of the %s's %.1f dense BF16 TFLOP/s (%s); attention-score FLOPs and the optimizer step are not counted", 100*orDefault(w.Utilization), w.GPU.Name, w.GPU.DenseBF16TFLOPS, w.GPU.Source),
		fmt.Sprintf("optimizer: %s, %d state tensor(s) per parameter in the parameter's type (torch.optim allocates them with zeros_like)", w.Optimizer, w.Optimizer.StatesPerParam()),
		fmt.Sprintf("activations: 34 × sequence × batch × hidden bytes per layer at 16 bits (Korthikanti et al. 2022), hidden = √(parameters / (12 × layers)) = %d, flash attention (no stored attention scores), no activation checkpointing", w.hidden()),
	}
}

func orDefault(u float64) float64 {
	if u == 0 {
		return DefaultUtilization
	}
	return u
}

func (m *MemoryEstimate) total(gpuGB float64) {
	m.TotalBytes = m.ParamBytes + m.GradBytes + m.BucketBytes + m.OptimizerBytes + m.ActivationBytes
	m.GPUBytes = uint64(gpuGB * 1e9)
	m.Fits = m.TotalBytes <= m.GPUBytes
}

// MemoryDDP estimates one GPU's memory under DDP: every rank holds the
// whole model, its gradients, DDP's bucket copies of the gradients
// (gradient_as_bucket_view=False, PyTorch's default, keeps both), the
// optimizer state and the activations.
func (w Workload) MemoryDDP() (MemoryEstimate, error) {
	if err := w.Check(); err != nil {
		return MemoryEstimate{}, err
	}
	pb := uint64(w.Params) * uint64(w.Dtype.Size())
	m := MemoryEstimate{ParamBytes: pb, GradBytes: pb, BucketBytes: pb,
		OptimizerBytes:  pb * uint64(w.Optimizer.StatesPerParam()),
		ActivationBytes: w.activationBytes(), Optimizer: string(w.Optimizer),
		Assumptions: append(w.assumptions(), "DDP: every GPU holds all parameters, their gradients and DDP's gradient buckets (gradient_as_bucket_view=False, the default)")}
	m.total(w.GPU.MemoryGB)
	return m, nil
}

// MemoryFSDP estimates one GPU's memory under FSDP2 from the projection's
// parameter and gradient peaks (r.Memory): optimizer state lives on the
// shards, in the sharded parameters' type.
func (w Workload) MemoryFSDP(r *stepsim.FSDPResult, shard tune.Datatype, nranks int) (MemoryEstimate, error) {
	if err := w.Check(); err != nil {
		return MemoryEstimate{}, err
	}
	if r == nil || nranks < 1 {
		return MemoryEstimate{}, fmt.Errorf("workload: no FSDP projection")
	}
	mm := r.Memory
	m := MemoryEstimate{ParamBytes: mm.PeakParamBytes, GradBytes: mm.PeakGradBytes,
		OptimizerBytes:  mm.ShardedParamBytes * uint64(w.Optimizer.StatesPerParam()),
		ActivationBytes: w.activationBytes(), Optimizer: string(w.Optimizer),
		Assumptions: append(w.assumptions(), fmt.Sprintf("FSDP2: parameters and gradients at their peaks from the timeline; optimizer state on the 1/%d shards in %s", nranks, shard))}
	m.total(w.GPU.MemoryGB)
	return m, nil
}
