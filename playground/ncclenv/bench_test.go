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
