package service

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/doctor"
)

// benchLog is an all_reduce_perf run over two hosts of eight H100 each, in
// nccl-tests' own format (its src/common.cu), with one result row.
func benchLog() string {
	var b strings.Builder
	b.WriteString("mpirun -np 16 ./build/all_reduce_perf -b 8 -e 8G -f 2 -g 1\n")
	b.WriteString("# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n# Using devices\n")
	for i := 0; i < 16; i++ {
		fmt.Fprintf(&b, "#  Rank %2d Group  0 Pid %d on node%d device %d [0x%02x] NVIDIA H100 80GB HBM3\n", i, 100+i, i/8, i%8, 0x18+i%8)
	}
	b.WriteString("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n")
	b.WriteString("  8589934592    2147483648     float     sum      -1    48000  178.96  335.55      0    47900  179.33  336.25      0\n")
	return b.String()
}

// The doctor's expectation for an nccl-tests table is the estimator's own
// answer for the preset it suggests (h100-8x-ib on 2 nodes, the run's
// collective and peak size), so the two must agree to the digit.
func TestDoctorExpectation(t *testing.T) {
	ctx := context.Background()
	s := New()
	r, err := s.Doctor(ctx, DoctorRequest{Log: strings.NewReader(benchLog())})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.DoctorExpectation(ctx, r); err != nil {
		t.Fatal(err)
	}
	// 8 H100 per host on 2 hosts: presets.tsv's multi-node H100 system.
	sys := r.Summary.NCCLTests.System
	if sys == nil || sys.Preset != "h100-8x-ib" || sys.Expected == nil || !sys.Exact ||
		sys.CompareCommand != "ncclsim compare --preset h100-8x-ib --nodes 2 --nccl-tests FILE" ||
		sys.EstimatorURL != "/playground/estimator/?preset=h100-8x-ib&nodes=2&coll=allreduce&bytes=8589934592" {
		t.Fatalf("system %+v", sys)
	}
	want, err := s.Estimate(ctx, &Request{Preset: "h100-8x-ib", Nodes: 2, Coll: "allreduce", Bytes: "8589934592"})
	if err != nil {
		t.Fatal(err)
	}
	x := sys.Expected
	if x.ModelBusBwGBps != want.Model.BusBwGBps || x.CalibratedBusBwGBps != want.Calibrated.BusBwGBps || x.MeasuredGBps != 336.25 ||
		x.Ratio != 336.25/want.Calibrated.BusBwGBps || x.Algo != want.Model.Algo {
		t.Errorf("expectation %+v, estimator %+v", x, want.Calibrated)
	}
	var expl, link string
	for _, d := range r.Diagnoses {
		if d.ID == "nccl-tests-result" {
			expl, link = d.Explanation, d.Links[0].URL
		}
	}
	if !strings.Contains(expl, fmt.Sprintf("NCCL's model expects %.1f GB/s", want.Model.BusBwGBps)) || !strings.Contains(expl, "(preset h100-8x-ib)") ||
		!strings.HasSuffix(expl, ".)") || link != sys.EstimatorURL {
		t.Errorf("explanation: %s, first link %s", expl, link)
	}
	// A log without an nccl-tests table is left as it was.
	r2, err := s.Doctor(ctx, DoctorRequest{Log: strings.NewReader("h:1:2 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n")})
	if err != nil {
		t.Fatal(err)
	}
	before := fmt.Sprint(r2.Diagnoses)
	if err := s.DoctorExpectation(ctx, r2); err != nil || fmt.Sprint(r2.Diagnoses) != before {
		t.Errorf("a log without a table changed: %v", err)
	}
}

// The collectives the doctor links to the estimator are exactly those the
// estimator page offers.
func TestDoctorEstimatorColls(t *testing.T) {
	var offered []string
	for _, o := range Constants().Colls {
		offered = append(offered, o.Value)
	}
	if !slices.Equal(offered, doctor.EstimatorColls) {
		t.Errorf("estimator offers %v, the doctor links %v", offered, doctor.EstimatorColls)
	}
}

// TestFileBytes checks the doctor page's cap measure: the bytes of the file
// a browser decoded, each U+FFFD one invalid byte (the rest as in UTF-8).
func TestFileBytes(t *testing.T) {
	for _, tt := range []struct {
		text string
		want int
	}{
		{"", 0},
		{"NCCL INFO\n", 10},
		{"é", 2},              // two bytes in the file and in UTF-8
		{"\uFFFD\uFFFD\n", 3}, // two invalid bytes and a newline
		{strings.Repeat("\uFFFD", 1000), 1000},
	} {
		if got := FileBytes(tt.text); got != tt.want {
			t.Errorf("FileBytes(%q) = %d, want %d", tt.text, got, tt.want)
		}
	}
}
