package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/doctor"
	"github.com/distributed-nav/distributed-nav/playground/estimate"
	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
	"github.com/distributed-nav/distributed-nav/playground/service"
	"github.com/distributed-nav/distributed-nav/playground/stepsim"
	"github.com/distributed-nav/distributed-nav/playground/topo"
	"github.com/distributed-nav/distributed-nav/playground/topo/topotest"
	"github.com/distributed-nav/distributed-nav/playground/workload"
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
		// 64 rings of 11,500 ranks (3.7 MB): each ring keeps its first
		// doctor.MaxRingRanks ranks and says how many more; 64 lines of at
		// most 128 numbers of 6 bytes fit well in 128 KB (the whole log
		// printed back was 3.7 MB, 11.8 MB as JSON).
		{name: "64 rings of 11,500 ranks: first ranks and the rest counted",
			args: []string{"doctor", "--log", "-"}, stdin: ringLog(64, 11500),
			code: 0, maxOut: 128 << 10, count: fmt.Sprintf("and %d more ranks (11500 in all)", 11500-doctor.MaxRingRanks), maxCount: 64, least: 64},
		{name: "64 rings of 11,500 ranks, JSON: rank_count keeps the length",
			args: []string{"doctor", "--log", "-", "--json"}, stdin: ringLog(64, 11500),
			code: 0, maxOut: 256 << 10, count: `"rank_count": 11500`, maxCount: 64, least: 64},
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
		{name: "issue 18 (s6): 72 GPUs and 252 NICs: GPU-NIC paths in classes",
			// 72 x 252 = 18,144 paths; every NIC on a root port of CPU 0 with GDR
			// off: PHB from CPU 0's GPUs, SYS from CPU 1's.
			args: []string{"topo", "--xml", "-"}, stdin: topotest.WithNICs(topotest.Host{Sockets: 2, Switches: 4, GPUs: 9}.XML(), 252),
			code: 0, maxOut: 128 << 10, count: "18144 paths in 2 classes; --full lists every path", maxCount: 1, least: 1},
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
		{name: "issue 18 fixA 1: 100 target speedups, refused before any projection",
			args: append(step, "--model", "ddp", "--params", "1e9", "--solve-speedup", strings.TrimSuffix(strings.Repeat("1.5,", 100), ",")),
			code: 2, err: fmt.Sprintf("100 target speedups, over the limit of %d", service.MaxSolveTargets), maxOut: 0},
		{name: "issue 18 (s6 attack F8): a utilisation of 1e-300 is refused, not simulated",
			// 1e-300 of peak made the derived backward time 1e300 ms; the DDP
			// timeline then never ended and grew past 22 GB.
			args: []string{"step", "--preset", "h100-sxm-8x", "--params", "7B", "--gpu", "H100-SXM", "--mfu", "1e-300"},
			code: 2, err: fmt.Sprintf("want a fraction from %v to 1", workload.MinUtilization), maxOut: 0},
		{name: "issue 18 (s6): a derived compute time past the limit is refused",
			// 1e15 parameters x 2^20 x 2^24 tokens: 2 x 1e15 x 2^44 FLOPs forward at
			// 40 % of an H100's peak is about 1e17 ms, past MaxComputeMs (1e9).
			args: []string{"step", "--preset", "h100-sxm-8x", "--params", "1e15", "--gpu", "H100-SXM", "--batch", "1048576", "--seq-len", "16777216"},
			code: 2, err: "the limit is 1e9 ms", maxOut: 0},
		{name: "an env file over the limit is refused before any check",
			// 100,000 unknown names, 1.9 MB: over MaxEnvFileBytes (1 MiB).
			args: []string{"doctor", "--env", "-"}, stdin: unknownEnv(100000),
			code: 1, err: fmt.Sprintf("larger than %d bytes", service.MaxEnvFileBytes), maxOut: 0},
		{name: "issue 18 fixA 2: an over-long env line is reported by number, the next line still read",
			args: []string{"doctor", "--env", "-"}, stdin: "NCCL_X=" + strings.Repeat("a", 2*doctor.MaxEnvLineBytes) + "\nNCCL_DEBUG=INFO\n",
			code: 0, maxOut: 64 << 10, count: fmt.Sprintf("line 1: warning: line over the limit of %d bytes", doctor.MaxEnvLineBytes), maxCount: 1, least: 1},
		{name: "issue 18 fixA 2: the line after an over-long one",
			args: []string{"doctor", "--env", "-"}, stdin: "NCCL_X=" + strings.Repeat("a", 2*doctor.MaxEnvLineBytes) + "\nNCCL_DEBUG=INFO\n",
			code: 0, maxOut: 64 << 10, count: "line 2: info: NCCL_DEBUG", maxCount: 1, least: 1},
		{name: "issue 18 fixA 3: raw 8-bit CSI does not reach the output",
			args: []string{"doctor", "--log", "-"}, stdin: "h\x9bA:1:1 [0] NCCL INFO NCCL version 2.18.1\x9b31m+cuda12\n",
			code: 0, maxOut: 64 << 10, count: "\x9b", maxCount: 0, least: 0},
		{name: "issue 18 fixA 3: raw 8-bit CSI, the version read clean",
			args: []string{"doctor", "--log", "-"}, stdin: "h\x9bA:1:1 [0] NCCL INFO NCCL version 2.18.1\x9b31m+cuda12\n",
			code: 0, maxOut: 64 << 10, count: "NCCL version: 2.18.1+cuda12\n", maxCount: 1, least: 1},
		{name: "issue 18 fixA 4: escape sequences in the description comment do not reach the terminal",
			args: []string{"topo", "--xml", "-"}, stdin: "<!-- description: \x1b]0;pwned\x07\x1b[2J hi -->" + topotest.OneGPU(""),
			code: 0, maxOut: 64 << 10, count: "\x1b", maxCount: 0, least: 0},
		{name: "issue 18 (s6): C1 controls in a NIC's name do not reach the output",
			args: []string{"topo", "--xml", "-"}, stdin: topotest.OneGPU(c1NIC),
			code: 0, maxOut: 64 << 10, count: "\u009b", maxCount: 0, least: 0},
		{name: "issue 18 (s6): C1 controls in a NIC's name: the name read clean, the removal said",
			args: []string{"topo", "--xml", "-"}, stdin: topotest.OneGPU(c1NIC),
			code: 0, err: `attribute name of <net> holds terminal control characters`, maxOut: 64 << 10, count: " mlx5_0 ", maxCount: 1, least: 1},
		{name: "issue 18 (s6): ESC in a directive is quoted escaped",
			args: []string{"topo", "--xml", "-"}, stdin: "<!X\x1b]0;pwned\x07>" + topotest.OneGPU(""),
			code: 0, err: `directive <!X\x1b]0;pwned\x07...> ignored`, maxOut: 64 << 10, count: "\x1b", maxCount: 0, least: 0},
		{name: "issue 18 (s6): C1 in an element name, the decoder's error escaped",
			args: []string{"topo", "--xml", "-"}, stdin: "<system version=\"1\"><cpu\u009b numaid=\"0\"/></system>",
			code: 1, err: `invalid XML name: cpu\u009b`, maxOut: 0},
		{name: "issue 18 (s6): an escape sequence in an --env name is echoed escaped",
			args: []string{"tune", "--preset", "h100-sxm-8x", "--env", "NCCL_\x1b[2JALGO=Ring"},
			code: 2, err: `"NCCL_\x1b[2JALGO": not a variable`, maxOut: 0},
		{name: "issue 18 (s6): an unknown preset is echoed escaped",
			args: []string{"topo", "--preset", "h100\x1b]0;pwned\x07"},
			code: 2, err: `unknown preset "h100\x1b]0;pwned\a"`, maxOut: 0},
		{name: "issue 18 (s6): an unknown preset of 100 KB is echoed cut",
			args: []string{"topo", "--preset", strings.Repeat("x", 100000)},
			code: 2, err: `… (100000 bytes)"`, maxOut: 0},
		{name: "issue 18 (s6 attack F11): a control sequence in a file name is echoed escaped",
			args: []string{"topo", "--xml", "/nonexistent/\x1b[2J\u009bx.xml"},
			code: 1, err: `/nonexistent/\x1b[2J\u009bx.xml`, maxOut: 0},
		{name: "issue 18 (s6 attack F11): a control sequence in --bytes is echoed escaped",
			args: []string{"estimate", "--preset", "h100-8x-ib", "--coll", "allreduce", "--bytes", "1\x1b[2J"},
			code: 2, err: `1\x1b[2J`, maxOut: 0},
		{name: "issue 18 (s6 attack F3): more CPUs than topo.MaxCPUs, refused before the path work",
			// 560 CPUs (the attacker's) made 156,520 CPU-CPU links and 3.6 s of CPU.
			args: []string{"topo", "--xml", "-"}, stdin: topotest.CPUs(560, 1),
			code: 1, err: fmt.Sprintf("more than %d CPUs (NUMA nodes) on one host", topo.MaxCPUs), maxOut: 0},
		{name: "issue 18 (s6 attack F1): --timeout 0 is refused, not read as no limit",
			args: []string{"topo", "--preset", "h100-sxm-8x", "--timeout", "0"},
			code: 2, err: "--timeout: 0s is not a positive duration", maxOut: 0},
		{name: "issue 18 (s6 attack F1): a negative --timeout is refused",
			args: []string{"topo", "--preset", "h100-sxm-8x", "--timeout", "-1s"},
			code: 2, err: "--timeout: -1s is not a positive duration", maxOut: 0},
		{name: "issue 18 (s6 attack): a search over --timeout names --timeout",
			args: []string{"topo", "--preset", "h100-sxm-8x", "--timeout", "1ns"},
			code: 2, err: "--timeout: the graph search did not finish within 1ns", maxOut: 0},
		{name: "issue 18 fixA 6: NCCL_MIN_NCHANNELS=100000 is not silent",
			args: []string{"tune", "--preset", "h100-sxm-8x", "--env", "NCCL_MIN_NCHANNELS=100000"},
			code: 0, err: "limiting to 64", maxOut: 64 << 10},
		{name: "issue 18 fixA 6: NCCL_BUFFSIZE=0 is not silent",
			args: []string{"tune", "--preset", "h100-sxm-8x", "--env", "NCCL_BUFFSIZE=0"},
			code: 0, err: "NCCL_BUFFSIZE: a buffer of 0 bytes", maxOut: 64 << 10},
		{name: "issue 18 fixA 6: a GPU NVLinked to itself is not silent",
			args: []string{"topo", "--xml", "-"}, stdin: `<system version="1"><cpu numaid="0" affinity="ff" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">` +
				`<pci busid="0000:02:00.0" class="0x030000" link_speed="16.0 GT/s PCIe" link_width="16"><gpu dev="0" sm="90" rank="0" gdr="1">` +
				`<nvlink target="0000:02:00.0" count="4" tclass="0x030000"/></gpu></pci></cpu></system>`,
			code: 0, maxOut: 64 << 10, count: "is the GPU itself", maxCount: 1, least: 1},
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

// c1NIC is a NIC whose name carries an 8-bit CSI (clear screen), an OSC
// (set the window title) ended by ST, and a DEL: Go's XML decoder lets C1
// controls and DEL through in attribute values.
const c1NIC = `<pci busid="0000:18:00.0" class="0x020700" link_speed="16.0 GT/s PCIe" link_width="16"><nic>` +
	"<net name=\"mlx5_\u009b2J\u009d0;pwned\u009c0\x7f\" dev=\"0\" speed=\"100000\" port=\"1\" gdr=\"0\"/></nic></pci>"

// ringLog is an NCCL_DEBUG=INFO log of rank 0's ring lines: channels rings
// ("Channel NN/MM :" as init.cc prints them), each visiting ranks ranks.
func ringLog(channels, ranks int) string {
	var order strings.Builder
	for r := range ranks {
		fmt.Fprintf(&order, " %d", r)
	}
	var b strings.Builder
	for c := range channels {
		fmt.Fprintf(&b, "h:1:1 [0] NCCL INFO Channel %02d/%02d :   %s\n", c, channels, order.String())
	}
	return b.String()
}

// TestCalibrationFileCapped: a --calibration file over
// estimate.MaxCalibrationBytes is refused by its size before any YAML is
// decoded (the attack's 10 MB file cost 600 MB and 10 s to decode, and
// /dev/zero grew without end), and the real file still loads.
func TestCalibrationFileCapped(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, bytes.Repeat([]byte("#"), estimate.MaxCalibrationBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		code       int
		err        string
	}{
		{"one byte over the limit", big, 1, fmt.Sprintf("larger than %d bytes", estimate.MaxCalibrationBytes)},
		{"the project's own file", "../../../data/calibration.yaml", 0, ""},
	} {
		code, out, errs := runWithStdin("", "estimate", "--preset", "h100-sxm-8x", "--coll", "allreduce", "--bytes", "1G", "--calibration", tc.path)
		if code != tc.code || !strings.Contains(errs, tc.err) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d and %q", tc.name, code, errs, tc.code, tc.err)
		}
		if tc.code != 0 && out != "" {
			t.Errorf("%s: printed %d bytes", tc.name, len(out))
		}
	}
}
