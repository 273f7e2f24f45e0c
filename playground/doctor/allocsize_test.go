package doctor

import (
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
)

// TestAllocSize checks that cuda-oom-nccl calls a failed request of 256 MiB
// or more a pool and leaves the per-channel sizes NCCL usually asks for
// (NVIDIA/nccl#962's 6 MiB, #1485's 10 MiB) to the general reading.
func TestAllocSize(t *testing.T) {
	cases := []struct {
		name, log string
		pool      bool
	}{
		{"one-rank NET shared buffer", "ncclUnhandledCudaError\nFailed to CUDA calloc 536870912 bytes\n", true},
		{"exactly 256 MiB", "h:1:2 [0] include/alloc.h:185 NCCL WARN Failed to CUDA calloc 268435456 bytes\n", true},
		{"per-channel buffer", "h:1:2 [0] include/alloc.h:185 NCCL WARN Failed to CUDA calloc 6291456 bytes\n", false},
		{"no size", "h:1:2 [0] enqueue.cc:43 NCCL WARN Cuda failure 'out of memory'\n", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := find(Diagnose(parseString(t, c.log), ncclenv.Env{}), "cuda-oom-nccl")
			if d.ID == "" {
				t.Fatalf("cuda-oom-nccl did not fire on %q", c.log)
			}
			if got := strings.Contains(d.Explanation, "is a pool"); got != c.pool {
				t.Errorf("pool reading = %v, want %v: %q", got, c.pool, d.Explanation)
			}
		})
	}
}
