package service

import (
	"context"
	"reflect"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/gpus"
)

// TestConstantsStepGPUOptions: the step page's GPU and optimizer options
// are what the step question accepts. Every row of data/gpus.csv is
// offered (after the "no GPU" choice), and a DDP step with each GPU and
// each optimizer, on the page's opening inputs with the compute times left
// empty, derives its compute and counts that optimizer's state.
func TestConstantsStepGPUOptions(t *testing.T) {
	c := Constants()
	list, err := gpus.All()
	if err != nil {
		t.Fatal(err)
	}
	if len(c.GPUs) != len(list)+1 || c.GPUs[0].Value != "" {
		t.Fatalf("%d GPU options for %d GPUs in data/gpus.csv", len(c.GPUs), len(list))
	}
	s := New()
	ctx := context.Background()
	for i, g := range c.GPUs[1:] {
		opt := c.Optimizers[i%len(c.Optimizers)]
		in := StepInputs{Mode: c.Step.Mode, Params: c.Step.Params, GPU: g.Value, Batch: c.Step.Batch, SeqLen: c.Step.SeqLen, MFU: c.Step.MFU, Optimizer: opt.Value}
		r, err := s.Step(ctx, &Request{Preset: "rtx4090-2x", Step: in})
		if err != nil {
			t.Fatalf("%s with %s: %v", g.Value, opt.Value, err)
		}
		if r.Compute == nil || r.Memory == nil || r.Compute.GPU != list[i].Name || !(r.Compute.ForwardMs > 0) || r.Inputs["forward_ms"] != r.Compute.ForwardMs {
			t.Errorf("%s: compute %+v", g.Value, r.Compute)
		}
		if string(r.Memory.Optimizer) != opt.Value {
			t.Errorf("%s: memory counts %q, the option was %q", g.Value, r.Memory.Optimizer, opt.Value)
		}
	}
}

// TestConstantsPresets: the pages list the systems the service answers
// for, the opening systems among them.
func TestConstantsPresets(t *testing.T) {
	c := Constants()
	want, err := New().Presets()
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Presets) == 0 || !reflect.DeepEqual(c.Presets, want) {
		t.Fatalf("constants list %d presets, the service %d", len(c.Presets), len(want))
	}
	for _, name := range []string{c.DefaultPreset, c.EstimatorPreset} {
		found := false
		for _, p := range c.Presets {
			found = found || p.Name == name
		}
		if !found {
			t.Errorf("opening preset %s is not listed", name)
		}
	}
}
