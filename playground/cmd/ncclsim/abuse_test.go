package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
	"github.com/distributed-nav/distributed-nav/playground/stepsim"
	"github.com/distributed-nav/distributed-nav/playground/topo"
	"github.com/distributed-nav/distributed-nav/playground/topo/topotest"
)

// unknownEnv returns n distinct made-up variable assignments, one a line.
func unknownEnv(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "NCCL_NOT_A_KNOB_%d=1\n", i)
	}
	return b.String()
}

// TestAbuse is the abuse suite of the command line: hostile inputs of a
// few bytes to a few MiB, each with the bound that must hold. The bounds
// are counts and bytes, never times; each names the cap it comes from.
func TestAbuse(t *testing.T) {
	step := []string{"step", "--preset", "h100-sxm-8x", "--forward-ms", "50", "--backward-ms", "100"}
	tests := []struct {
		name  string
		args  []string
		stdin string
		code  int    // exit status
		err   string // substring of stderr ("" when none is required)
		// maxOut bounds stdout in bytes; count and maxCount bound the
		// occurrences of count in stdout.
		maxOut          int
		count           string
		maxCount, least int
	}{
		{name: "issue 18 example 1: a million DDP buckets",
			args: append(step, "--model", "ddp", "--layers", "1024", "--tensors-per-layer", "1024", "--bucket-cap-mb", "0.000001", "--params", "1e15", "--json"),
			code: 2, err: fmt.Sprintf("over the limit of %d", stepsim.MaxBuckets), maxOut: 0},
		{name: "DDP at the bucket cap, JSON",
			// 4096 tensors of 1,024 bf16 gradients (the default type) with a 2 KiB
			// cap: one bucket each.
			args: append(step, "--model", "ddp", "--layers", "64", "--tensors-per-layer", "64", "--bucket-cap-mb", "0.001953125", "--params", "4194304", "--json"),
			code: 0, maxOut: 4 << 20, count: `"index":`, maxCount: stepsim.MaxBuckets, least: stepsim.MaxBuckets},
		{name: "FSDP beyond the layer cap",
			args: append(step, "--model", "fsdp", "--layers", "65536", "--params", "1e12"),
			code: 2, err: fmt.Sprintf("1..%d", stepsim.MaxLayers), maxOut: 0},
		{name: "issue 18 example 2: a comment flood",
			args: []string{"topo", "--xml", "-"}, stdin: `<system version="1">` + strings.Repeat("x<!---->", (1<<20)/8) + `</system>`,
			code: 1, err: fmt.Sprintf("more than %d XML tokens", topo.MaxTokens), maxOut: 0},
		{name: "5,000 unknown elements",
			args: []string{"topo", "--xml", "-"}, stdin: topotest.OneGPU(strings.Repeat("<fan/>", 5000)),
			code: 0, maxOut: 64 << 10, count: "unknown element <fan>", maxCount: topo.MaxWarningsPerKind, least: topo.MaxWarningsPerKind},
		{name: "5,000 unknown elements: the rest counted",
			args: []string{"topo", "--xml", "-"}, stdin: topotest.OneGPU(strings.Repeat("<fan/>", 5000)),
			code: 0, maxOut: 64 << 10, count: fmt.Sprintf("and %d more of the same kind", 5000-topo.MaxWarningsPerKind), maxCount: 1, least: 1},
		{name: "issue 18 example 3: 5,000 unknown env names",
			args: []string{"doctor", "--env", "-"}, stdin: unknownEnv(5000),
			code: 0, maxOut: 2 << 20, count: "did you mean", maxCount: ncclenv.MaxSuggestedNames},
		{name: "an unknown name of 100 KB",
			args: []string{"doctor", "--env", "-"}, stdin: "NCCL_" + strings.Repeat("X", 100<<10) + "=1\n",
			code: 0, maxOut: 256 << 10, count: "did you mean", maxCount: 0},
		{name: "66 GPUs on a host: pairs summarised in classes",
			// 66 x 65 ordered pairs; same switch (PIX) and across switches (PHB)
			// are the only two ways one GPU reaches another here.
			args: []string{"topo", "--xml", "-"}, stdin: topotest.Host{Sockets: 1, Switches: 6, GPUs: 11}.XML(),
			code: 0, maxOut: 64 << 10, count: "4290 ordered pairs in 2 classes; --full lists every pair", maxCount: 1, least: 1},
		{name: "66 GPUs on a host: --full --json lists every pair",
			args: []string{"topo", "--xml", "-", "--full", "--json"}, stdin: topotest.Host{Sockets: 1, Switches: 6, GPUs: 11}.XML(),
			code: 0, maxOut: 4 << 20, count: `"direct_path":`, maxCount: 66 * 65, least: 66 * 65},
		{name: "66 GPUs and 64 NICs: GPU-NIC paths summarised in classes",
			// 66 x 64 = 4,224 paths, over topo.MaxListedGPUNICs; every NIC sits on
			// a root port of the CPU with GDR off, so every path is one class (PHB).
			args: []string{"topo", "--xml", "-"}, stdin: topotest.WithNICs(topotest.Host{Sockets: 1, Switches: 6, GPUs: 11}.XML(), 64),
			code: 0, maxOut: 64 << 10, count: "4224 paths in 1 classes; --full lists every path", maxCount: 1, least: 1},
		{name: "66 GPUs and 64 NICs: --full --json lists every GPU-NIC path",
			// one "gdr_send" per path and one in the single class.
			args: []string{"topo", "--xml", "-", "--full", "--json"}, stdin: topotest.WithNICs(topotest.Host{Sockets: 1, Switches: 6, GPUs: 11}.XML(), 64),
			code: 0, maxOut: 8 << 20, count: `"gdr_send":`, maxCount: 66*64 + 1, least: 66*64 + 1},
		{name: "issue 18 (fixB): NICs beyond MAX_IB_VDEVS, refused before the path work",
			args: []string{"topo", "--xml", "-"}, stdin: topotest.OneGPU(topotest.NICs(topo.MaxNICs + 1)),
			code: 1, err: fmt.Sprintf("more than %d NICs on one host", topo.MaxNICs), maxOut: 0},
		{name: "issue 18 example 5: 512 GPUs on a host, refused before the search",
			// NCCL_MAX_LOCAL_RANKS (device.h:92) bounds one host's GPUs; 8 sockets
			// x 8 switches x 8 GPUs is seven times that.
			args: []string{"topo", "--xml", "-"}, stdin: topotest.Host{Sockets: 8, Switches: 8, GPUs: 8}.XML(),
			code: 1, err: fmt.Sprintf("512 GPUs on one host, more than the %d local ranks", topo.MaxLocalRanks), maxOut: 0},
		{name: "NCCL_MAX_NCHANNELS=0 is not silent",
			args: []string{"tune", "--preset", "h100-sxm-8x", "--env", "NCCL_MAX_NCHANNELS=0"},
			code: 0, err: "setting it to 1", maxOut: 64 << 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), tt.args, strings.NewReader(tt.stdin), &out, &errb)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr %.300q", code, tt.code, errb.String())
			}
			if tt.err != "" && !strings.Contains(errb.String(), tt.err) {
				t.Errorf("stderr %.300q does not contain %q", errb.String(), tt.err)
			}
			if out.Len() > tt.maxOut {
				t.Errorf("%d bytes of output, the bound is %d", out.Len(), tt.maxOut)
			}
			if tt.count != "" {
				n := strings.Count(out.String(), tt.count)
				if n > tt.maxCount || n < tt.least {
					t.Errorf("%q occurs %d times, want %d..%d", tt.count, n, tt.least, tt.maxCount)
				}
			}
		})
	}
}
