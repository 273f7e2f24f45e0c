package ncclenv

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// unknownNames returns n made-up NCCL_-prefixed names of 6 to 20 letters,
// the shape of a hostile environment dump.
func unknownNames(n int) map[string]string {
	r := rand.New(rand.NewPCG(1, 2))
	const alpha = "ABCDEFGHIJKLMNOPQRSTUVWXYZ_"
	kv := make(map[string]string, n)
	for len(kv) < n {
		var b strings.Builder
		b.WriteString("NCCL_")
		for range 6 + r.IntN(15) {
			b.WriteByte(alpha[r.IntN(len(alpha))])
		}
		kv[b.String()] = strconv.Itoa(len(kv))
	}
	return kv
}

// BenchmarkValidateUnknownNames validates 5,000 unknown names: only
// MaxSuggestedNames of them get suggestions.
func BenchmarkValidateUnknownNames(b *testing.B) {
	reg, err := DefaultRegistry()
	if err != nil {
		b.Fatal(err)
	}
	env := New(unknownNames(5000))
	for b.Loop() {
		reg.Validate(env)
	}
}

// BenchmarkNearest is one uncached suggestion for a plausible misspelling
// and for a long name.
func BenchmarkNearest(b *testing.B) {
	reg, err := DefaultRegistry()
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"NCCL_IB_HCAA", "NCCL_" + strings.Repeat("X", 120)} {
		b.Run(strconv.Itoa(len(name)), func(b *testing.B) {
			for b.Loop() {
				reg.nearest(name, 3)
			}
		})
	}
}

// FuzzNearest checks Nearest on arbitrary names: the prefilter's bound is
// never above the edit distance (so it skips only names the full
// comparison would reject too), the answer never exceeds the asked number
// and names known names, and a cached answer equals a fresh one.
func FuzzNearest(f *testing.F) {
	for _, s := range []string{"NCCL_IB_HCAA", "nccl_debug", "TORCH_NCCL_BLOCKING", "IB_HCA", "", strings.Repeat("A", 200)} {
		f.Add(s)
	}
	reg, err := DefaultRegistry()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, name string) {
		u := strings.ToUpper(name)
		for _, k := range []string{"NCCL_IB_HCA", "NCCL_DEBUG", "TORCH_NCCL_BLOCKING_WAIT"} {
			if lb, d := lowerBound(u, k, letters(u), letters(k)), editDistance(u, k); lb > d {
				t.Fatalf("bound %d above distance %d for %q, %q", lb, d, u, k)
			}
		}
		got := reg.Nearest(name, 3)
		if len(got) > 3 {
			t.Fatalf("%d suggestions", len(got))
		}
		again := reg.Nearest(name, 3)
		if strings.Join(got, ",") != strings.Join(again, ",") {
			t.Fatalf("cached %v, fresh %v", again, got)
		}
		for _, s := range got {
			if _, ok := reg.Lookup(s); !ok {
				t.Fatalf("suggested unknown name %q", s)
			}
		}
	})
}
