package workload

import (
	"math"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/gpus"
	"github.com/distributed-nav/distributed-nav/playground/tune"
)

// A GPU of round numbers so that the expected values are computed by hand
// in the comments.
var testGPU = gpus.GPU{Name: "G", DenseBF16TFLOPS: 100, MemoryGB: 16, Source: "https://example.invalid/g"}

func TestDerive(t *testing.T) {
	w := Workload{Params: 1e9, Layers: 10, Dtype: tune.BFloat16, Batch: 2, SeqLen: 500, GPU: testGPU, Utilization: 0.5, Optimizer: AdamW}
	c, err := w.Derive()
	if err != nil {
		t.Fatal(err)
	}
	// 1000 tokens: forward 2 × 1e9 × 1000 = 2e12 FLOPs at 0.5 × 100e12
	// FLOP/s = 40 ms; backward twice that. hidden = √(1e9 / 120) = 2887.
	if c.TokensPerGPU != 1000 || c.ForwardFLOPs != 2e12 || math.Abs(c.ForwardMs-40) > 1e-9 || math.Abs(c.BackwardMs-80) > 1e-9 || c.HiddenSize != 2887 {
		t.Fatalf("%+v", c)
	}
	w.Utilization = 0
	if c, _ := w.Derive(); c.Utilization != DefaultUtilization || math.Abs(c.ForwardMs-50) > 1e-9 {
		t.Errorf("default utilisation: %+v", c)
	}
}

func TestMemoryDDP(t *testing.T) {
	w := Workload{Params: 1e9, Layers: 10, Dtype: tune.BFloat16, Batch: 2, SeqLen: 500, GPU: testGPU, Optimizer: AdamW}
	m, err := w.MemoryDDP()
	if err != nil {
		t.Fatal(err)
	}
	// bf16: parameters, gradients and buckets 2 GB each, AdamW's two
	// states 4 GB; activations 34 × 500 × 2 × 2887 × 10 = 981,580,000 B.
	want := MemoryEstimate{ParamBytes: 2e9, GradBytes: 2e9, BucketBytes: 2e9, OptimizerBytes: 4e9, ActivationBytes: 981580000}
	if m.ParamBytes != want.ParamBytes || m.GradBytes != want.GradBytes || m.BucketBytes != want.BucketBytes || m.OptimizerBytes != want.OptimizerBytes || m.ActivationBytes != want.ActivationBytes {
		t.Fatalf("%+v", m)
	}
	if m.TotalBytes != 10981580000 || !m.Fits || m.GPUBytes != 16e9 {
		t.Errorf("total %d fits %v of %d", m.TotalBytes, m.Fits, m.GPUBytes)
	}
	if !strings.Contains(strings.Join(m.Assumptions, " "), "adamw, 2 state tensor(s)") {
		t.Errorf("assumptions %q", m.Assumptions)
	}
	w.GPU.MemoryGB = 8
	if m, _ := w.MemoryDDP(); m.Fits {
		t.Errorf("10.98 GB fit in 8 GB: %+v", m)
	}
	w.Optimizer = SGD
	if m, _ := w.MemoryDDP(); m.OptimizerBytes != 0 || !m.Fits {
		t.Errorf("sgd (6.98 GB in 8 GB): %+v", m)
	}
}

func TestWorkloadCheck(t *testing.T) {
	ok := Workload{Params: 1e9, Layers: 10, Dtype: tune.BFloat16, Batch: 2, SeqLen: 500, GPU: testGPU, Optimizer: AdamW}
	for name, edit := range map[string]func(*Workload){
		"params":    func(w *Workload) { w.Params = 0 },
		"layers":    func(w *Workload) { w.Layers = 0 },
		"batch":     func(w *Workload) { w.Batch = 0 },
		"seq":       func(w *Workload) { w.SeqLen = 1 << 25 },
		"gpu":       func(w *Workload) { w.GPU = gpus.GPU{} },
		"mfu":       func(w *Workload) { w.Utilization = 1.5 },
		"mfu-tiny":  func(w *Workload) { w.Utilization = MinUtilization / 2 },
		"optimizer": func(w *Workload) { w.Optimizer = "lion" },
	} {
		w := ok
		edit(&w)
		if _, err := w.Derive(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
