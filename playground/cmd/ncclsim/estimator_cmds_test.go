package main

import (
	"encoding/json"
	"github.com/distributed-nav/distributed-nav/playground/service"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/data"
	"github.com/distributed-nav/distributed-nav/playground/estimate"
)

// TestCalibrateReproduces: `ncclsim calibrate --out -` prints exactly the
// committed data/calibration.yaml, and --check accepts it and rejects an
// edited copy.
func TestCalibrateReproduces(t *testing.T) {
	out, _, err := runCmd(t, runCalibrate, "--out", "-")
	if err != nil {
		t.Fatal(err)
	}
	if out != string(data.Calibration) {
		t.Fatal("calibrate output differs from the committed data/calibration.yaml")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "calibration.yaml")
	if err := os.WriteFile(p, data.Calibration, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCmd(t, runCalibrate, "--out", p, "--check"); err != nil {
		t.Errorf("--check rejected the committed file: %v", err)
	}
	if err := os.WriteFile(p, append([]byte("# edited\n"), data.Calibration...), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCmd(t, runCalibrate, "--out", p, "--check"); err == nil {
		t.Error("--check accepted an edited file")
	}
}

// TestValidateCommand: the table names every dataset, both estimators and
// the overall line; the JSON's overall calibrated median is within 15%.
func TestValidateCommand(t *testing.T) {
	out, _, err := runCmd(t, runValidate)
	if err != nil {
		t.Fatal(err)
	}
	sets, err := loadMeasurements("")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range sets {
		if !strings.Contains(out, d.ID) {
			t.Errorf("table lacks dataset %s", d.ID)
		}
	}
	for _, want := range []string{"MODEL MED", "IN MED", "OUT MED", "median over datasets", "all points pooled", "leave one source out", "error band:"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q", want)
		}
	}
	js, _, err := runCmd(t, runValidate, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rep estimate.Report
	if err := json.Unmarshal([]byte(js), &rep); err != nil {
		t.Fatal(err)
	}
	// The reported summary (median over datasets, in sample) stays within
	// 15 %, as playground/estimate's TestValidateCommitted requires.
	if rep.Medians.Calibrated > 15 || rep.Overall.Calibrated.N == 0 {
		t.Errorf("in-sample median over datasets %.1f%%, %d points", rep.Medians.Calibrated, rep.Overall.Calibrated.N)
	}
	// The summary medians of the table are the JSON's, to one decimal.
	for _, v := range []float64{rep.Overall.Calibrated.MedianPct, rep.Medians.OutOfSample, rep.Medians.Model} {
		if !strings.Contains(out, strconv.FormatFloat(v, 'f', 1, 64)+"%") {
			t.Errorf("table and JSON disagree on the median %.1f", v)
		}
	}
	if rep.Medians.Datasets != len(sets) || rep.Sources < 2 || rep.BandPoints == 0 {
		t.Errorf("medians over %d datasets of %d, %d sources, %d band points", rep.Medians.Datasets, len(sets), rep.Sources, rep.BandPoints)
	}
	if _, _, err := runCmd(t, runValidate, "--min-bytes", "lots"); !isUsage(err) {
		t.Errorf("bad --min-bytes: %v", err)
	}
}

func TestStepDDPJSON(t *testing.T) {
	out, _, err := runCmd(t, runStep, "--preset", "rtx4090-8x", "--model", "ddp", "--params", "1.3B", "--dtype", "bf16",
		"--forward-ms", "100", "--backward-ms", "200", "--solve-speedup", "0.46,1", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var v service.StepResult
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if v.DDP == nil || v.NRanks != 8 || len(v.DDP.Buckets) == 0 {
		t.Fatalf("output %+v", v)
	}
	r := v.DDP
	if math.Abs(r.Speedup-8*r.SingleGPUStepMs/r.StepMs) > 1e-9 {
		t.Errorf("speedup %v, step %v, single %v", r.Speedup, r.StepMs, r.SingleGPUStepMs)
	}
	if r.GradBytes != 2600000000 {
		t.Errorf("gradient bytes %d, want 1.3e9 x 2", r.GradBytes)
	}
	if len(v.Solved) != 2 || v.Solved[0].Error != "" || v.Solved[0].BackwardMs >= v.Solved[1].BackwardMs {
		t.Errorf("solutions %+v", v.Solved)
	}
	if v.Class != estimate.ClassSHMXSocket {
		t.Errorf("class %s", v.Class)
	}
}

func TestStepFSDPText(t *testing.T) {
	out, _, err := runCmd(t, runStep, "--preset", "h100-sxm-8x", "--model", "fsdp", "--params", "7e9", "--forward-ms", "300",
		"--backward-ms", "600", "--shard-dtype", "fp32", "--reshard-after-forward=false", "--timeline")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"FSDP step on h100-sxm-8x", "memory per GPU", "allgather", "reducescatter", "LANE"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
}

func TestStepUsageErrors(t *testing.T) {
	p := testPreset(t)
	for _, args := range [][]string{
		{"--preset", p, "--model", "ddp", "--forward-ms", "1", "--backward-ms", "2"},
		{"--preset", p, "--model", "zero3", "--params", "1e9"},
		{"--preset", p, "--params", "many"},
		{"--preset", p, "--params", "1e9", "--bucket-cap-mb", "0"},
		{"--preset", p, "--params", "1e9", "--dtype", "complex"},
		{"--preset", p, "--params", "1e9", "--model", "fsdp", "--solve-speedup", "1"},
		{"--preset", p, "--params", "1e9", "--backward-ms", "-3"},
		{"--preset", p, "--params", "1e9", "--timing", "guess"},
	} {
		if _, _, err := runCmd(t, runStep, args...); !isUsage(err) {
			t.Errorf("%q: err %v, want a usage error", args, err)
		}
	}
}

// TestExportTuner checks the CSV against the example plugin's format
// (plugins/tuner/example/README.md at v2.30.7-1): ten fields, names the
// plugin parses, ranges that cover every size exactly once per collective.
func TestExportTuner(t *testing.T) {
	out, _, err := runCmd(t, runExportTuner, "--preset", "a100-sxm-8x", "--nodes", "2")
	if err != nil {
		t.Fatal(err)
	}
	algos := map[string]bool{}
	for _, a := range service.TunerAlgoNames {
		algos[a] = true
	}
	next := map[string]uint64{}
	last := map[string]uint64{}
	rows := 0
	for _, ln := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(ln, "#") {
			continue
		}
		rows++
		f := strings.Split(ln, ",")
		if len(f) != 10 {
			t.Fatalf("%d fields: %q", len(f), ln)
		}
		if len(ln) > service.TunerMaxLine {
			t.Errorf("line too long for the plugin: %q", ln)
		}
		lo, err1 := strconv.ParseUint(f[1], 10, 64)
		hi, err2 := strconv.ParseUint(f[2], 10, 64)
		if err1 != nil || err2 != nil || hi < lo {
			t.Fatalf("bad range %q", ln)
		}
		if lo != next[f[0]] {
			t.Errorf("%s: range starts at %d, expected %d", f[0], lo, next[f[0]])
		}
		next[f[0]], last[f[0]] = hi+1, hi
		if !algos[f[3]] || (f[4] != "ll" && f[4] != "ll128" && f[4] != "simple") {
			t.Errorf("names the plugin cannot parse: %q", ln)
		}
		if f[6] != "2" || f[7] != "16" || f[8] != "1" || f[9] != "-1" {
			t.Errorf("shape columns %q", ln)
		}
		if ch, err := strconv.Atoi(f[5]); err != nil || ch < 1 {
			t.Errorf("channels %q", f[5])
		}
	}
	if rows < 5 || len(last) != 5 {
		t.Fatalf("%d rows for %d collectives", rows, len(last))
	}
	for c, hi := range last {
		if hi != math.MaxUint64 {
			t.Errorf("%s: last range ends at %d, not the largest size_t", c, hi)
		}
	}
	any, _, err := runCmd(t, runExportTuner, "--preset", "rtx4090-2x", "--coll", "allreduce", "--keep-nccl-channels", "--any-shape")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(any, "allreduce,0,") || !strings.Contains(any, ",-1,-1,-1,1,-1\n") || strings.Contains(any, "broadcast") {
		t.Errorf("--any-shape output:\n%s", any)
	}
	if _, _, err := runCmd(t, runExportTuner, "--preset", "rtx4090-2x", "--coll", "alltoall"); !isUsage(err) {
		t.Errorf("unknown collective: %v", err)
	}
}
