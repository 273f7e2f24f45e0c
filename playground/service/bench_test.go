package service

import (
	"context"
	"testing"
)

// BenchmarkTopoCached measures a topology answer when the model is cached
// (an input that changes only the drawing, such as the channel).
func BenchmarkTopoCached(b *testing.B) {
	for _, p := range []string{"h100-sxm-8x", "h100-8x-ib", "rtx4090-8x"} {
		b.Run(p, func(b *testing.B) {
			s := New()
			r := &Request{Preset: p}
			s.TopoPage(context.Background(), r)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r.Channel = i % 2
				s.TopoPage(context.Background(), r)
			}
		})
	}
}

// BenchmarkTuneCached measures an algorithm-page answer on a cached model
// (a change of collective).
func BenchmarkTuneCached(b *testing.B) {
	for _, p := range []string{"h100-sxm-8x", "rtx4090-8x"} {
		b.Run(p, func(b *testing.B) {
			s := New()
			r := &Request{Preset: p}
			s.TunePage(context.Background(), r)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r.Coll = []string{"allreduce", "allgather"}[i%2]
				s.TunePage(context.Background(), r)
			}
		})
	}
}

// BenchmarkBuild measures the whole pipeline for a new input (a new
// preset or environment): parse, paths, search, tuning.
func BenchmarkBuild(b *testing.B) {
	for _, p := range []string{"h100-sxm-8x", "a100-sxm-8x", "rtx4090-8x"} {
		b.Run(p, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				s := New()
				if _, err := s.build(context.Background(), &Request{Preset: p}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
