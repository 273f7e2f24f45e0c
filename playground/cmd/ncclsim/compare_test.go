package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/estimate"
)

func runWithStdin(stdin string, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func systemArgs(d *estimate.Dataset) []string {
	args := []string{"--preset", d.System.Preset, "--nodes", strconv.Itoa(max(d.System.Nodes, 1))}
	for k, v := range d.System.Env {
		args = append(args, "--env", k+"="+v)
	}
	return args
}

// TestCompareReadsEveryDataset: `ncclsim compare --json` on the raw text of
// every published run (standard input), as published, with Open MPI's
// [1,0]<stdout>: prefix on every line and with CRLF line ends, has the
// documented keys and each row's measured_busbw_GBps equal to the
// dataset's out-of-place busbw.
func TestCompareReadsEveryDataset(t *testing.T) {
	sets, err := loadMeasurements("")
	if err != nil {
		t.Fatal(err)
	}
	edits := map[string]func(string) string{
		"as published": func(s string) string { return s },
		"prefixed": func(s string) string {
			return "[1,0]<stdout>:" + strings.ReplaceAll(s, "\n", "\n[1,0]<stdout>:")
		},
		"CRLF": func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") },
	}
	for _, d := range sets {
		for name, edit := range edits {
			t.Run(d.ID+"/"+name, func(t *testing.T) {
				args := append([]string{"compare", "--nccl-tests", "-", "--json"}, systemArgs(d)...)
				code, out, errs := runWithStdin(edit(d.Raw), args...)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, errs)
				}
				var got struct {
					Coll   string           `json:"coll"`
					NRanks int              `json:"nranks"`
					Rows   []map[string]any `json:"rows"`
				}
				if err := json.Unmarshal([]byte(out), &got); err != nil {
					t.Fatal(err)
				}
				if !strings.EqualFold(got.Coll, d.Run.Collective) || got.NRanks != d.Hardware.NGPUs || len(got.Rows) != len(d.Rows) {
					t.Fatalf("%s on %d ranks, %d rows", got.Coll, got.NRanks, len(got.Rows))
				}
				for i, r := range got.Rows {
					for _, k := range []string{"bytes", "measured_busbw_GBps", "model_busbw_GBps", "calibrated_busbw_GBps", "busbw_low_GBps", "error_pct"} {
						if _, ok := r[k]; !ok {
							t.Fatalf("row %d lacks %q", i, k)
						}
					}
					if r["measured_busbw_GBps"].(float64) != d.Rows[i].BusBwGBps || uint64(r["bytes"].(float64)) != d.Rows[i].Bytes {
						t.Errorf("row %d: %v at %v, dataset %v at %d", i, r["measured_busbw_GBps"], r["bytes"], d.Rows[i].BusBwGBps, d.Rows[i].Bytes)
					}
				}
			})
		}
	}
}

func TestCompareText(t *testing.T) {
	sets, err := loadMeasurements("")
	if err != nil {
		t.Fatal(err)
	}
	var raw string
	for _, d := range sets {
		if d.ID == "kalavai-4090-2gpu-docker" {
			raw = d.Raw
		}
	}
	code, out, errs := runWithStdin(raw, "compare", "--preset", "rtx4090-2x", "--p2p", "all", "--nccl-tests", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"AllReduce of float32 on rtx4090-2x x 1 node(s), 2 ranks", "MEASURED", "CALIBRATED", "Looks like SHM, P2P is not in use", "doctor rule: p2p-unavailable", "/notes/troubleshooting/#p2p-silently-disabled"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestCompareErrors(t *testing.T) {
	cases := []struct {
		name  string
		stdin string
		args  []string
		code  int
		want  string
	}{
		{"garbage", "hello\n#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n 1048576 262144 float sum -1 x 1 1 0 1 1 1 0\n",
			[]string{"--preset", "rtx4090-2x", "--nccl-tests", "-"}, 1, "line 3: no nccl-tests results table found: row skipped: time \"x\" is not a number"},
		{"no file", "", []string{"--preset", "rtx4090-2x"}, 2, "--nccl-tests FILE is required"},
		{"both stdin", "", []string{"--xml", "-", "--nccl-tests", "-"}, 2, "cannot both read standard input"},
		{"rank mismatch", "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n 1048576 262144 float sum -1 100.0 10.49 15.73 0 100.0 10.49 15.73 0\n",
			[]string{"--preset", "rtx4090-2x", "--nccl-tests", "-"}, 1, "has 4 ranks (busbw/algbw) and the system 2"},
		{"bad coll", "", []string{"--preset", "rtx4090-2x", "--nccl-tests", "-", "--coll", "allsum"}, 2, "--coll: unknown collective"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, errs := runWithStdin(c.stdin, append([]string{"compare"}, c.args...)...)
			if code != c.code || !strings.Contains(errs, c.want) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, errs, c.code, c.want)
			}
		})
	}
}

// TestExportTunerMeasured: two pinned runs give one line per winning
// range; a file without pinned runs says why no CSV can be written.
func TestExportTunerMeasured(t *testing.T) {
	table := func(env string, bus1, bus2 string) string {
		return "$ " + env + " ./build/all_reduce_perf -g 2\n" +
			"#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n" +
			" 1048576 262144 float sum -1 100.0 " + bus1 + " " + bus1 + " 0 100.0 " + bus1 + " " + bus1 + " 0\n" +
			" 67108864 16777216 float sum -1 3000.0 " + bus2 + " " + bus2 + " 0 3000.0 " + bus2 + " " + bus2 + " 0\n"
	}
	in := table("NCCL_ALGO=Tree NCCL_PROTO=LL128", "10.49", "20.00") + table("NCCL_ALGO=Ring NCCL_PROTO=Simple", "8.00", "22.37")
	code, out, errs := runWithStdin(in, "export-tuner", "--nccl-tests", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	// The geometric midpoint of 1 MiB and 64 MiB is 8 MiB.
	for _, want := range []string{"allreduce,0,8388608,tree,ll128,-1,-1,2,1,-1\n", "allreduce,8388609,18446744073709551615,ring,simple,-1,-1,2,1,-1\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("CSV lacks %q:\n%s", want, out)
		}
	}
	code, _, errs = runWithStdin(table("", "1.00", "2.00"), "export-tuner", "--nccl-tests", "-")
	if code != 1 || !strings.Contains(errs, "no measured choice") || !strings.Contains(errs, "does not show both NCCL_ALGO and NCCL_PROTO") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	code, _, errs = runWithStdin(in, "export-tuner", "--nccl-tests", "-", "--preset", "rtx4090-2x")
	if code != 2 || !strings.Contains(errs, "takes no --preset") {
		t.Fatalf("exit %d: %s", code, errs)
	}
}

// TestStepFromGPU: with --gpu the step's forward and backward times are
// the ones stepsim.Workload derives (2 × params × tokens FLOPs at the
// utilisation; here 1e9 × 2 × 1024 × 2 / (165.2e12 × 0.5) s = 49.59 ms
// forward on an RTX 4090), --forward-ms still overrides, and the memory
// block counts AdamW's state; the workload flags need --gpu.
func TestStepFromGPU(t *testing.T) {
	code, out, errs := runWithStdin("", "step", "--preset", "rtx4090-2x", "--params", "1B", "--layers", "16", "--gpu", "RTX-4090", "--batch", "2", "--seq-len", "1024", "--mfu", "0.5", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var got struct {
		Inputs  map[string]any `json:"inputs"`
		Compute struct {
			ForwardMs  float64 `json:"forward_ms"`
			BackwardMs float64 `json:"backward_ms"`
		} `json:"compute"`
		Memory struct {
			OptimizerBytes uint64 `json:"optimizer_bytes"`
			Optimizer      string `json:"optimizer"`
		} `json:"memory"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	want := 2 * 1e9 * 2048 / (165.2e12 * 0.5) * 1e3
	if d := got.Compute.ForwardMs - want; d > 1e-6 || d < -1e-6 || got.Inputs["forward_ms"].(float64) != got.Compute.ForwardMs || got.Compute.BackwardMs != 2*got.Compute.ForwardMs {
		t.Errorf("compute %+v, inputs %v, want forward %.4f ms", got.Compute, got.Inputs, want)
	}
	// bf16 parameters: two AdamW states of 2 bytes per parameter.
	if got.Memory.Optimizer != "adamw" || got.Memory.OptimizerBytes != 4e9 {
		t.Errorf("memory %+v", got.Memory)
	}
	code, out, _ = runWithStdin("", "step", "--preset", "rtx4090-2x", "--params", "1B", "--gpu", "RTX-4090", "--forward-ms", "7", "--json")
	if code != 0 || !strings.Contains(out, `"forward_ms": 7`) {
		t.Errorf("override: exit %d", code)
	}
	code, _, errs = runWithStdin("", "step", "--preset", "rtx4090-2x", "--params", "1B", "--batch", "4", "--forward-ms", "1", "--backward-ms", "2")
	if code != 2 || !strings.Contains(errs, "--batch: works with --gpu only") {
		t.Errorf("exit %d: %s", code, errs)
	}
}

// TestCompareOtherRunsCapped: a file of 30 runs names maxOtherRuns (10) of
// the 29 it does not compare, one per line, then says how many more there
// are; --json still lists all 29.
func TestCompareOtherRunsCapped(t *testing.T) {
	var in strings.Builder
	for range 30 {
		in.WriteString("$ ./build/all_reduce_perf -g 2\n" +
			"#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n" +
			" 1048576 262144 float sum -1 100.0 10.49 10.49 0 100.0 10.49 10.49 0\n")
	}
	code, out, errs := runWithStdin(in.String(), "compare", "--preset", "rtx4090-2x", "--nccl-tests", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if n := strings.Count(out, "the file also holds run "); n != maxOtherRuns {
		t.Errorf("%d runs named one per line, want %d:\n%s", n, maxOtherRuns, out)
	}
	if !strings.Contains(out, "and 19 more run(s) in the file") {
		t.Errorf("no count of the runs left out:\n%s", out)
	}
	code, out, errs = runWithStdin(in.String(), "compare", "--preset", "rtx4090-2x", "--nccl-tests", "-", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var got struct {
		Others []json.RawMessage `json:"other_runs"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Others) != 29 {
		t.Errorf("--json lists %d other runs, want 29", len(got.Others))
	}
}
