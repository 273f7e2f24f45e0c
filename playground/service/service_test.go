package service

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/estimate"
)

func TestCommandQuoting(t *testing.T) {
	got := Command("tune", &Request{Preset: "h100-sxm-8x", Nodes: 2, Env: []string{"NCCL_ALGO=^Tree", "NCCL_SOCKET_IFNAME=eth0 ", " "}, Coll: "AllGather"})
	want := "ncclsim tune --preset h100-sxm-8x --nodes 2 --env 'NCCL_ALGO=^Tree' --env NCCL_SOCKET_IFNAME=eth0 --coll allgather --json"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if q := shellQuote("it's"); q != `'it'\''s'` {
		t.Errorf("quote: %s", q)
	}
}

func TestParseBytes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		err  bool
	}{
		{"0", 0, false}, {"4096", 4096, false}, {"64M", 64 << 20, false}, {"1 GiB", 1 << 30, false}, {"2kb", 2048, false},
		{"-5", 0, true}, {"1e9", 1000000000, false}, {"1.5GiB", 3 << 29, false}, {"1.3K", 0, true}, {"", 0, true}, {"M", 0, true}, {"99999999999999999999T", 0, true}, {"18446744073709551615", 0, true},
	} {
		got, err := ParseBytes(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseBytes(%q) = %d, %v", tc.in, got, err)
		}
		if err != nil {
			if fe, ok := err.(*FieldError); !ok || fe.Field != "bytes" {
				t.Errorf("ParseBytes(%q) error %v is not a bytes field error", tc.in, err)
			}
		}
	}
}

// FuzzParseBytes: any text gives a size or a field error, never a panic,
// and accepted sizes fit the limit ncclsim uses.
func FuzzParseBytes(f *testing.F) {
	for _, s := range []string{"64M", "1 GiB", "-1", "9999999999999999999", "1.5K", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseBytes(s)
		if err == nil && n > 1<<63 {
			t.Errorf("%q accepted as %d", s, n)
		}
	})
}

// FuzzParseCount: the step's parameter count parser.
func FuzzParseCount(f *testing.F) {
	for _, s := range []string{"7B", "350M", "1.3e9", "-3", "NaNB", "1e400", "inf"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseCount(s)
		if err == nil && (n < 1 || n > 1e15) {
			t.Errorf("%q accepted as %d", s, n)
		}
	})
}

// TestServiceCaches checks that changing only the drawing reuses the
// model and that a new environment builds a new one.
func TestServiceCaches(t *testing.T) {
	s := New()
	r := &Request{Preset: "h100-sxm-8x"}
	b1, err := s.build(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	r.Channel, r.Coll = 3, "allgather"
	if b2, _ := s.build(context.Background(), r); b2 != b1 {
		t.Error("the drawing options rebuilt the model")
	}
	r.Env = []string{"NCCL_ALGO=Ring"}
	if b3, _ := s.build(context.Background(), r); b3 == b1 {
		t.Error("a new environment reused the old model")
	}
	x := &Request{XML: "<system version=\"1\"/>"}
	if _, err := s.build(context.Background(), x); err == nil {
		t.Error("a system without CPU or GPU was accepted")
	}
	if _, err := s.build(context.Background(), &Request{Preset: "a", XML: "b"}); err == nil {
		t.Error("preset and XML together were accepted")
	}
}

// TestCommandRoundTrip: ParseCommand reads back what Command writes, so the
// browser tests can answer a page's ncclsim line natively.
func TestCommandRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		q   string
		req Request
	}{
		{PageTopo, Request{Preset: "h100-8x-ib", Nodes: 2, P2P: "nvlink", Env: []string{"NCCL_ALGO=Ring"}}},
		{PageTune, Request{Preset: "rtx4090-2x", Coll: "allgather"}},
		{PageEstimate, Request{XMLName: "mine.xml", Coll: "reducescatter", Bytes: "1G", Dtype: "bfloat16", Fabric: "tcp"}},
		{PageStep, Request{Preset: "a100-sxm-8x", Dtype: "fp16", Step: StepInputs{Mode: "fsdp", Params: "7B", Layers: "40", ForwardMs: "100", BackwardMs: "200", OptimizerMs: "5", Reshard: "false", ReduceDtype: "fp32", Timing: "model"}}},
		{PageStep, Request{Preset: "rtx4090-8x", Step: StepInputs{Mode: "ddp", Params: "1.5B", TensorsPerLayer: "4", BucketCapMB: "50", FirstIteration: true, ForwardMs: "60", BackwardMs: "120"}}},
		{PageStep, Request{Preset: "rtx4090-2x", Step: StepInputs{Mode: "ddp", Params: "1B", GPU: "RTX-4090", Batch: "4", SeqLen: "4096", MFU: "0.5", Optimizer: "sgd"}}},
		{"compare", Request{Preset: "rtx4090-2x-2socket", Fabric: "tcp", Env: []string{"NCCL_PROTO=Simple"}}},
	} {
		line := Command(tc.q, &tc.req)
		args := strings.Fields(line)
		q, got, err := ParseCommand(args[1:])
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if q != tc.q || Command(q, got) != line {
			t.Errorf("%s read back as %s %s", line, q, Command(q, got))
		}
	}
	if _, _, err := ParseCommand([]string{"tune", "--bytes", "1M"}); err == nil {
		t.Error("a flag tune does not take was accepted")
	}
	if _, _, err := ParseCommand([]string{"calibrate"}); err == nil {
		t.Error("calibrate is no page question")
	}
}

// TestCalibrationOverride: a calibration set on Service.Calibration (what
// `ncclsim --calibration FILE` does) is the one the estimate uses, not the
// built-in one. Halving the net-rdma efficiency halves the plateau of a
// 2-node allreduce on that class (both calibrations with the class on its
// fitted parameters, not on NCCL's model), and marking the class for NCCL's
// model makes the estimate NCCL's time.
func TestCalibrationOverride(t *testing.T) {
	ctx := context.Background()
	req := &Request{Preset: "h100-8x-ib", Nodes: 2, Coll: "allreduce", Bytes: "8G"}
	with := func(scale float64, ncclModel string) *EstimateResult {
		t.Helper()
		cal, err := estimate.DefaultCalibration()
		if err != nil {
			t.Fatal(err)
		}
		for i := range cal.Classes {
			if cal.Classes[i].Class == estimate.ClassNetRDMA {
				cal.Classes[i].Efficiency.Value *= scale
				cal.Classes[i].NCCLModel = ncclModel
			}
		}
		s := New()
		s.Calibration = cal
		got, err := s.Estimate(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if got.Calibrated.Class != estimate.ClassNetRDMA {
			t.Fatalf("class %s, want %s", got.Calibrated.Class, estimate.ClassNetRDMA)
		}
		return got
	}
	base, half := with(1, ""), with(0.5, "")
	b, g := base.Calibrated.PlateauBusBwGBps, half.Calibrated.PlateauBusBwGBps
	if math.Abs(g/b-0.5) > 1e-9 {
		t.Errorf("plateau %g GB/s with the halved efficiency, %g with the fitted one: want half", g, b)
	}
	m := with(0.5, "test: on NCCL's model")
	if m.Calibrated.TimeUs != m.Model.TimeUs || m.Calibrated.RampBusBytes != 0 || m.Calibrated.Support != "test: on NCCL's model" {
		t.Errorf("class on NCCL's model: calibrated %g us (model %g), ramp %g, support %q", m.Calibrated.TimeUs, m.Model.TimeUs, m.Calibrated.RampBusBytes, m.Calibrated.Support)
	}
}

// A job of several nodes on a host without a NIC is refused by every
// question that needs NCCL's tuning model, on the nodes input; the
// topology still answers (its graphs carry the search's note), and one
// node or a host with NICs is answered.
func TestNodesNeedANetwork(t *testing.T) {
	s := New()
	ctx := context.Background()
	step := StepInputs{Params: "1B", ForwardMs: "10", BackwardMs: "20"}
	calls := map[string]func(*Request) error{
		"tune":     func(r *Request) error { _, err := s.Tune(ctx, r); return err },
		"estimate": func(r *Request) error { r.Coll, r.Bytes = "allreduce", "64M"; _, err := s.Estimate(ctx, r); return err },
		"step":     func(r *Request) error { r.Step = step; _, err := s.Step(ctx, r); return err },
	}
	for _, tc := range []struct {
		preset string // rtx4090-2x lists no <net>; h100-8x-ib lists its IB NICs
		nodes  int
		refuse bool
	}{
		{"rtx4090-2x", 1, false},
		{"rtx4090-2x", 2, true},
		{"rtx4090-2x", 3, true},
		{"h100-8x-ib", 2, false},
	} {
		for name, call := range calls {
			err := call(&Request{Preset: tc.preset, Nodes: tc.nodes})
			var fe *FieldError
			switch {
			case tc.refuse && (!errors.As(err, &fe) || fe.Field != "nodes" || !strings.Contains(fe.Message, "no NET device")):
				t.Errorf("%s %s x %d: %v, want a refusal on nodes naming the missing NET device", name, tc.preset, tc.nodes, err)
			case !tc.refuse && err != nil:
				t.Errorf("%s %s x %d: %v", name, tc.preset, tc.nodes, err)
			}
		}
		if _, err := s.Topo(ctx, &Request{Preset: tc.preset, Nodes: tc.nodes}); err != nil {
			t.Errorf("topo %s x %d: %v", tc.preset, tc.nodes, err)
		}
	}
}
