package tune

import (
	"context"
	"testing"
)

// BenchmarkNewModel measures ncclTopoTuneModel: every table cell, the
// enable rules and the thresholds, for the 8×Hopper case.
func BenchmarkNewModel(b *testing.B) {
	s, g := hopper8()
	o := DefaultOptions()
	for b.Loop() {
		if _, err := NewModel(s, g, o); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSelect measures one selection (cost table of 21 cells, argmin,
// channel and thread tuning).
func BenchmarkSelect(b *testing.B) {
	s, g := hopper8()
	m := mustModel(b, s, g, Options{})
	req := Request{Func: AllReduce, NBytes: 1 << 20}
	for b.Loop() {
		if _, err := m.Select(req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSweep8BTo8GiB selects for all 31 powers of two from 8 B to 8 GiB
// and all five functions (155 selections), after building the model: what
// `ncclsim tune` computes.
func BenchmarkSweep8BTo8GiB(b *testing.B) {
	s, g := hopper8()
	sizes := Sizes(8, 8<<30)
	ctx := context.Background()
	for b.Loop() {
		m, err := NewModel(s, g, DefaultOptions())
		if err != nil {
			b.Fatal(err)
		}
		for f := Func(0); f < NumFuncs; f++ {
			if _, err := m.Sweep(ctx, f, sizes, Request{}); err != nil {
				b.Fatal(err)
			}
		}
	}
}
