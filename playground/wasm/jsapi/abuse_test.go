//go:build js && wasm

package jsapi

import (
	"fmt"
	"strconv"
	"strings"
	"syscall/js"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/figure"
	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
	"github.com/distributed-nav/distributed-nav/playground/service"
	"github.com/distributed-nav/distributed-nav/playground/stepsim"
	"github.com/distributed-nav/distributed-nav/playground/topo"
	"github.com/distributed-nav/distributed-nav/playground/topo/topotest"
)

// TestAbuse is the worker-API half of issue 18's abuse suite (the CLI half
// is playground/cmd/ncclsim's TestAbuse): each hostile request must come back
// as a reply whose size, item counts and figure elements are bounded by the
// model's caps, with the cap's message where one applies. Bounds, not times:
// what is asserted cannot pass by luck on a fast machine.
func TestAbuse(t *testing.T) {
	o := newAPI(t)
	step := map[string]any{"preset": "h100-sxm-8x", "forwardMs": "50", "backwardMs": "100"}
	with := func(base map[string]any, kv ...any) js.Value {
		m := map[string]any{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return obj(m)
	}
	unknown := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "NCCL_NOT_A_KNOB_%d=1\n", i)
		}
		return b.String()
	}
	tests := []struct {
		name string
		fn   string
		req  js.Value
		// errField is the field of the expected error reply ("-" when the
		// reply must not be an error); errText a substring of its message.
		errField, errText string
		// maxJSON and maxTags bound the reply: bytes of JSON, and start tags
		// over all figures (what the page would add to the DOM).
		maxJSON, maxTags int
		// count occurs in the JSON between least and most times.
		count       string
		least, most int
	}{
		{name: "issue 18 example 1: a million DDP buckets", fn: "step",
			req:      with(step, "mode", "ddp", "layers", "1024", "tensorsPerLayer", "1024", "bucketCapMb", "0.000001", "params", "1e15"),
			errField: "params", errText: "over the limit of " + strconv.Itoa(stepsim.MaxBuckets), maxJSON: 4 << 10},
		{name: "DDP at the bucket cap: the timeline summarised", fn: "step",
			// 4096 tensors of 1,024 bf16 gradients with a 2 KiB cap: one bucket
			// each; the timeline draws at most 2*MaxSpansPerLane spans a lane, and
			// the bound allows twelve such lanes (this run has three) with their
			// labels, far below the 4096 x lanes spans of an unsummarised one.
			req:      with(step, "mode", "ddp", "layers", "64", "tensorsPerLayer", "64", "bucketCapMb", "0.001953125", "params", "4194304"),
			errField: "-", maxJSON: 4 << 20, maxTags: 12 * 2 * figure.MaxSpansPerLane},
		{name: "FSDP beyond the layer cap", fn: "step", req: with(step, "mode", "fsdp", "layers", "65536", "params", "1e12"),
			errField: "layers", errText: strconv.Itoa(stepsim.MaxLayers), maxJSON: 4 << 10},
		{name: "issue 18 example 2: a comment flood", fn: "topo",
			req:      obj(map[string]any{"xml": `<system version="1">` + strings.Repeat("x<!---->", (1<<20)/8) + `</system>`}),
			errField: "xml", errText: fmt.Sprintf("more than %d XML tokens", topo.MaxTokens), maxJSON: 4 << 10},
		{name: "5,000 unknown elements: warnings capped per kind", fn: "topo",
			req:      obj(map[string]any{"xml": topotest.OneGPU(strings.Repeat("<fan/>", 5000))}),
			errField: "-", maxJSON: 64 << 10, maxTags: 2000,
			count: "unknown element \\u003cfan\\u003e", least: topo.MaxWarningsPerKind, most: topo.MaxWarningsPerKind},
		{name: "66 GPUs on a host: pairs and matrix summarised", fn: "topo",
			req:      obj(map[string]any{"xml": topotest.Host{Sockets: 1, Switches: 6, GPUs: 11}.XML()}),
			errField: "-", maxJSON: 256 << 10, maxTags: 3000, count: `"gpu_pairs_omitted":4290`, least: 1, most: 1},
		{name: "66 GPUs and 64 NICs: GPU-NIC paths summarised", fn: "topo",
			// 66 x 64 = 4,224 paths, over topo.MaxListedGPUNICs.
			req:      obj(map[string]any{"xml": topotest.WithNICs(topotest.Host{Sockets: 1, Switches: 6, GPUs: 11}.XML(), 64)}),
			errField: "-", maxJSON: 256 << 10, maxTags: 3000, count: `"gpu_nics_omitted":4224`, least: 1, most: 1},
		{name: "NICs beyond MAX_IB_VDEVS refused", fn: "topo",
			req:      obj(map[string]any{"xml": topotest.OneGPU(topotest.NICs(topo.MaxNICs + 1))}),
			errField: "xml", errText: fmt.Sprintf("more than %d NICs on one host", topo.MaxNICs), maxJSON: 4 << 10},
		{name: "issue 18 (fixB): 72 GPUs in an NVLink all-to-all mesh answer", fn: "topo",
			// The graph search recurses channels x GPUs deep; the page's worker
			// died of "Maximum call stack size exceeded" on this shape. This
			// runner gives node an 8 MiB stack; the same row passes under
			// node --stack-size=200 (see graph.yieldDepth).
			req:      obj(map[string]any{"xml": topotest.Host{Sockets: 2, Switches: 4, GPUs: 9, NVLinkAll: true}.XML()}),
			errField: "-", maxJSON: 4 << 20, maxTags: 4000, count: `"gpu_pairs_omitted":5112`, least: 1, most: 1},
		{name: "issue 18 (s6): 72 GPUs and 252 NICs: NIC boxes grouped past figure.MaxDrawnNICs", fn: "topo",
			// A NIC and a NET box per NIC drew 7,240 start tags; the 252 NICs on
			// CPU 0's root ports are now one box (1,084 tags natively).
			req:      obj(map[string]any{"xml": topotest.WithNICs(topotest.Host{Sockets: 2, Switches: 4, GPUs: 9}.XML(), 252)}),
			errField: "-", maxJSON: 1 << 20, maxTags: 2500, count: `"gpu_nics_omitted":18144`, least: 1, most: 1},
		{name: "32 GPUs and 8 NICs: the path matrix summarised", fn: "topo",
			// 32 x (32 + 8) = 1,280 cells, over figure.MaxMatrixCells: the matrix
			// figure is two class tables of a few rows (it was 1,474 start tags).
			req:      obj(map[string]any{"xml": topotest.WithNICs(topotest.Host{Sockets: 1, Switches: 4, GPUs: 8}.XML(), 8)}),
			errField: "-", maxJSON: 1 << 20, maxTags: 1500, count: `"gpu_nic_classes"`, least: 1, most: 1},
		{name: "issue 18 (s6): C1 controls in a NIC's name do not reach the page", fn: "topo",
			// Go's XML decoder passes C1 controls and DEL in attribute values:
			// an 8-bit CSI (clear screen) and an OSC (window title) ended by ST.
			req: obj(map[string]any{"xml": topotest.OneGPU(`<pci busid="0000:18:00.0" class="0x020700" link_speed="16.0 GT/s PCIe" link_width="16"><nic>` +
				"<net name=\"mlx5_\u009b2J\u009d0;pwned\u009c0\x7f\" dev=\"0\" speed=\"100000\" port=\"1\" gdr=\"0\"/></nic></pci>")}),
			errField: "-", maxJSON: 256 << 10, maxTags: 2000, count: "\u009b", least: 0, most: 0},
		{name: "NCCL_MAX_NCHANNELS=0 is not silent", fn: "tune",
			req:      obj(map[string]any{"preset": "h100-sxm-8x", "env": []any{"NCCL_MAX_NCHANNELS=0"}}),
			errField: "-", maxJSON: 1 << 20, maxTags: 5000, count: "setting it to 1", least: 1, most: 4},
		{name: "issue 18 example 3: 5,000 unknown env names", fn: "doctor",
			req:      obj(map[string]any{"log": "host:1:2 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n", "env": unknown(5000)}),
			errField: "-", maxJSON: 2 << 20, maxTags: 5000, count: "did you mean", least: 0, most: ncclenv.MaxSuggestedNames},
		// A file of random bytes under the cap, as the browser decodes it:
		// each invalid byte became U+FFFD (3 bytes in UTF-8, 1 in UTF-16).
		// The cap counts the file's bytes, as ncclsim doctor does, so a
		// file the CLI reads is read here too; one U+FFFD more than the
		// cap is refused, naming the cap.
		{name: "a decoded binary file under the log cap is read", fn: "doctor",
			req:      obj(map[string]any{"log": replacedLog(service.MaxLogBytes - 100)}),
			errField: "-", maxJSON: 256 << 10, maxTags: 2000},
		{name: "a decoded binary file over the log cap is refused", fn: "doctor",
			req:      obj(map[string]any{"log": replacedLog(service.MaxLogBytes + 1)}),
			errField: "log", errText: "the limit here is 8 MiB", maxJSON: 4 << 10},
		// A linear nccl-tests sweep of 8,192 sizes pasted on the estimator
		// page: the table and each chart draw service.MaxShownCompareRows of
		// them, evenly spaced, and say how many more; the JSON keeps every
		// row (one "in_band" each). Tags: 128 rows of 8 cells and 2 charts
		// of 128 markers over the page's curves stay under 6,000 (8,192
		// rows drew 115,405 elements).
		{name: "8,192 pasted nccl-tests rows: table and points capped", fn: "estimator",
			req:      obj(map[string]any{"preset": "h100-sxm-8x", "coll": "allreduce", "bytes": "1M", "ncclTests": linearSweep(8192)}),
			errField: "-", maxJSON: 8 << 20, maxTags: 6000, count: `"in_band"`, least: 8192, most: 8192},
		{name: "terminal escapes in a log are not passed on", fn: "doctor",
			req: obj(map[string]any{"log": "host:1:2 [0] NCCL INFO NCCL version \x1b[31m2.21.5\x1b[0m+cuda12.4\x1b]0;owned\x07\n" +
				"host:1:2 [0] NCCL INFO NET/Socket : Using [0]eth0\x1b[2J\n"}),
			errField: "-", maxJSON: 64 << 10, maxTags: 2000, count: `\u001b`, least: 0, most: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := o.Call(tt.fn, tt.req)
			text := v.Get("json").String()
			a := call(t, o, tt.fn, tt.req)
			if tt.errField == "-" {
				ok(t, a)
			} else {
				field, msg := errField(t, a)
				if field != tt.errField || !strings.Contains(msg, tt.errText) {
					t.Errorf("error field %q message %q, want field %q containing %q", field, msg, tt.errField, tt.errText)
				}
			}
			if len(text) > tt.maxJSON {
				t.Errorf("%d bytes of JSON, the bound is %d", len(text), tt.maxJSON)
			}
			tags := 0
			for name, f := range a["figures"].(map[string]any) {
				n := strings.Count(f.(string), "<") - strings.Count(f.(string), "</")
				t.Logf("figure %s: %d bytes, %d start tags", name, len(f.(string)), n)
				tags += n
			}
			if tags > tt.maxTags {
				t.Errorf("%d start tags in the figures, the bound is %d", tags, tt.maxTags)
			}
			if tt.count != "" {
				if n := strings.Count(text, tt.count); n < tt.least || n > tt.most {
					t.Errorf("%q occurs %d times, want %d..%d", tt.count, n, tt.least, tt.most)
				}
			}
			t.Logf("%d bytes of JSON, %d start tags", len(text), tags)
		})
	}
}

// replacedLog is n characters of U+FFFD in lines of 100 bytes of the file
// they were decoded from: what TextDecoder makes of n bytes of random
// non-UTF-8 data with a newline every 100th byte.
func replacedLog(n int) string {
	line := strings.Repeat("\uFFFD", 99) + "\n"
	return strings.Repeat(line, n/100) + strings.Repeat("\uFFFD", n%100)
}

// linearSweep is an all_reduce_perf run on 8 ranks of one node stepping the
// size linearly (-b 32 -i 32): n rows of 32, 64, ... bytes.
func linearSweep(n int) string {
	var b strings.Builder
	b.WriteString("# nThread 1 nGpus 1 minBytes 32 maxBytes " + strconv.Itoa(32*n) + " step: 32(bytes) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n")
	for r := range 8 {
		fmt.Fprintf(&b, "#  Rank %2d Group  0 Pid   4242 on     node01 device %2d [0000:2c:00] NVIDIA H100\n", r, r)
	}
	b.WriteString("#\n#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%12d %12d     float     sum      -1    10.0   10.00   17.50      0    10.0   10.00   17.50      0\n", 32*i, 8*i)
	}
	return b.String()
}
