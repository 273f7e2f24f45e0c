package estimate

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/distributed-nav/distributed-nav/data"
	"github.com/distributed-nav/distributed-nav/playground/model"
	"github.com/distributed-nav/distributed-nav/playground/tune"
)

// shared caches the embedded datasets and built systems across tests.
var shared struct {
	once  sync.Once
	sets  []*Dataset
	build Builder
	cal   *Calibration
	err   error
	mu    sync.Mutex
}

func fixtures(t testing.TB) ([]*Dataset, Builder, *Calibration) {
	t.Helper()
	shared.once.Do(func() {
		shared.sets, shared.err = LoadDatasets(data.Measurements, "measurements")
		if shared.err != nil {
			return
		}
		b := CachedBuilder(BuildPreset)
		shared.build = func(ctx context.Context, ref SystemRef) (*model.Result, error) {
			shared.mu.Lock()
			defer shared.mu.Unlock()
			return b(ctx, ref)
		}
		shared.cal, shared.err = DefaultCalibration()
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.sets, shared.build, shared.cal
}

func system(t testing.TB, preset string, nodes int, env map[string]string, fabric Fabric) *System {
	t.Helper()
	_, build, cal := fixtures(t)
	res, err := build(context.Background(), SystemRef{Preset: preset, Nodes: nodes, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSystem(res, fabric, cal)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestBusBwFactor checks the factors against nccl-tests' GetBw functions
// (commit a0b82b2: src/all_reduce.cu#L59-L65 2(n-1)/n,
// src/all_gather.cu#L38-L44 and src/reduce_scatter.cu#L37-L43 (n-1)/n,
// broadcast and reduce 1).
func TestBusBwFactor(t *testing.T) {
	for _, tc := range []struct {
		f    tune.Func
		n    int
		want float64
	}{
		{tune.AllReduce, 2, 1},
		{tune.AllReduce, 8, 1.75},
		{tune.AllReduce, 128, 2 * 127.0 / 128},
		{tune.AllGather, 2, 0.5},
		{tune.AllGather, 16, 15.0 / 16},
		{tune.ReduceScatter, 4, 0.75},
		{tune.Broadcast, 8, 1},
		{tune.Reduce, 8, 1},
		{tune.AllReduce, 1, 0},
		{tune.AllReduce, 0, 0},
	} {
		if got := BusBwFactor(tc.f, tc.n); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s n=%d: %v, want %v", tc.f, tc.n, got, tc.want)
		}
	}
	// algbw is bytes / time in GB/s: 1 GiB in 8166.8 us is 131.48 GB/s,
	// the out-of-place row of data/measurements/oci-a100sxm40-8gpu-1node.json.
	if got := AlgBwGBps(1073741824, 8166.8); math.Abs(got-131.48) > 0.005 {
		t.Errorf("algbw %v, nccl-tests printed 131.48", got)
	}
	if got := BusBwGBps(tune.AllReduce, 8, 1073741824, 8166.8); math.Abs(got-230.08) > 0.005 {
		t.Errorf("busbw %v, nccl-tests printed 230.08", got)
	}
	if AlgBwGBps(10, 0) != 0 {
		t.Error("zero time must give zero bandwidth")
	}
}

// TestTestSize checks nccl-tests' size rounding (GetCollByteCount in
// src/all_gather.cu#L10-L17 and src/reduce_scatter.cu#L10-L17: the per-rank
// count is rounded down to 16 bytes; the printed size is per-rank count ×
// nranks × element size).
func TestTestSize(t *testing.T) {
	for _, tc := range []struct {
		f         tune.Func
		req       uint64
		elt, n    int
		size, cnt uint64
	}{
		{tune.AllGather, 8, 4, 2, 0, 0},    // 2 floats, 1 per rank, rounded to 0 (the 4090 run's first rows)
		{tune.AllGather, 32, 4, 2, 32, 4},  // 4 floats per rank: the "32 4" row of the 4090 all_gather log
		{tune.AllGather, 100, 4, 4, 64, 4}, // 25 floats / 4 ranks = 6 -> 4
		{tune.ReduceScatter, 1 << 20, 2, 8, 1 << 20, 1 << 16},
		{tune.AllReduce, 10, 4, 8, 8, 2},
		{tune.Broadcast, 1024, 8, 3, 1024, 128},
	} {
		size, cnt, err := TestSize(tc.f, tc.req, tc.elt, tc.n)
		if err != nil {
			t.Fatal(err)
		}
		if size != tc.size || cnt != tc.cnt {
			t.Errorf("%s %d bytes of %d on %d ranks: size %d count %d, want %d %d", tc.f, tc.req, tc.elt, tc.n, size, cnt, tc.size, tc.cnt)
		}
	}
	for _, bad := range []struct{ elt, n int }{{3, 2}, {0, 2}, {4, 0}, {32, 2}} {
		if _, _, err := TestSize(tune.AllGather, 64, bad.elt, bad.n); err == nil {
			t.Errorf("element %d, %d ranks accepted", bad.elt, bad.n)
		}
	}
}

// TestMeasuredRowsFollowDefinitions checks every committed row against the
// nccl-tests definitions: printed algbw = size/time and busbw = algbw ×
// factor, up to the two decimals nccl-tests prints.
func TestMeasuredRowsFollowDefinitions(t *testing.T) {
	sets, _, _ := fixtures(t)
	for _, d := range sets {
		f, _ := d.Func()
		for _, r := range d.Rows {
			if r.Bytes == 0 {
				continue
			}
			for _, v := range []struct{ time, alg, bus float64 }{{r.TimeUs, r.AlgBwGBps, r.BusBwGBps}, {r.TimeUsInPlace, r.AlgBwInPlace, r.BusBwInPlace}} {
				alg := AlgBwGBps(r.Bytes, v.time)
				// The printed time has 4-5 significant digits; allow that
				// relative slack plus the 0.005 rounding of the bandwidth.
				tol := 0.006 + alg*2e-3
				if math.Abs(alg-v.alg) > tol {
					t.Errorf("%s %d bytes: algbw %v printed, size/time %v", d.ID, r.Bytes, v.alg, alg)
				}
				bus := alg * BusBwFactor(f, d.NRanks())
				if math.Abs(bus-v.bus) > tol*2 {
					t.Errorf("%s %d bytes: busbw %v printed, algbw x factor %v", d.ID, r.Bytes, v.bus, bus)
				}
			}
		}
	}
}

// TestRowsTraceToRaw checks that every number of every row appears on the
// line of the published table (Raw) that starts with the row's size and
// count: the normalised rows are copies, not edits. Open MPI's output tags
// ("[1,0]<stdout>:"), which a tagged log can carry at the start of a row
// and again before its in-place block, are read as blanks, and so is the
// task label ("0: ") that srun --label puts before every line.
func TestRowsTraceToRaw(t *testing.T) {
	sets, _, _ := fixtures(t)
	for _, d := range sets {
		lines := map[string][][]float64{}
		for _, ln := range strings.Split(d.Raw, "\n") {
			fs := strings.Fields(openMPITag.ReplaceAllString(srunLabel.ReplaceAllString(ln, ""), " "))
			if len(fs) < 6 {
				continue
			}
			var nums []float64
			for _, f := range fs {
				if v, err := strconv.ParseFloat(f, 64); err == nil {
					nums = append(nums, v)
				}
			}
			lines[fs[0]+" "+fs[1]] = append(lines[fs[0]+" "+fs[1]], nums)
		}
		for _, r := range d.Rows {
			cands, ok := lines[strconv.FormatUint(r.Bytes, 10)+" "+strconv.FormatUint(r.Count, 10)]
			if !ok {
				t.Errorf("%s: no raw line for %d bytes, count %d", d.ID, r.Bytes, r.Count)
				continue
			}
			// Some sizes appear twice (nccl-tests prints 0-byte rows once per
			// requested size); one of the lines must hold every value.
			matched := false
			for _, nums := range cands {
				all := true
				for _, v := range []float64{r.TimeUs, r.AlgBwGBps, r.BusBwGBps, r.TimeUsInPlace, r.AlgBwInPlace, r.BusBwInPlace} {
					found := false
					for _, x := range nums {
						if x == v {
							found = true
							break
						}
					}
					all = all && found
				}
				matched = matched || all
			}
			if !matched {
				t.Errorf("%s %d bytes: %+v not on any raw line %v", d.ID, r.Bytes, r, cands)
			}
		}
	}
}

// openMPITag matches Open MPI's --tag-output stamp "[job,rank]<stream>:".
var openMPITag = regexp.MustCompile(`\[\d+,\d+\]<std(out|err)>:`)

// srunLabel matches the task label "N: " that Slurm's srun --label puts at
// the start of every line.
var srunLabel = regexp.MustCompile(`^\s*\d+: ?`)

// TestMonotonicTime: the calibrated time never decreases with the size,
// over a dense sweep (16 sizes per octave) of every collective on systems
// of every class, except where a class is handed to NCCL's model
// (ClassParams.NCCLModel): there it equals the model's time.
func TestMonotonicTime(t *testing.T) {
	for _, sc := range []struct {
		preset string
		nodes  int
		env    map[string]string
		fabric Fabric
	}{
		{"a100-sxm-8x", 1, nil, FabricAuto},
		{"a100-sxm-8x", 4, nil, FabricRDMA},
		{"h100-a3mega-8x-tcpxo", 2, nil, FabricTCP},
		{"rtx4090-8x", 1, nil, FabricAuto},
		{"rtx4090-2x", 1, nil, FabricAuto},
		{"rtx4090-4x-pcie-switch-p2p", 1, nil, FabricAuto},
		{"a40-4x-2socket-nvlink-pairs", 1, map[string]string{"NCCL_P2P_DISABLE": "1"}, FabricAuto},
	} {
		s := system(t, sc.preset, sc.nodes, sc.env, sc.fabric)
		for f := tune.Func(0); f < tune.NumFuncs; f++ {
			prev, prevN := 0.0, uint64(0)
			for k := 0; k <= 16*34; k++ {
				n := uint64(math.Round(math.Exp2(float64(k) / 16)))
				if n <= prevN {
					continue
				}
				e, err := s.Estimate(tune.Request{Func: f, NBytes: n})
				if err != nil {
					t.Fatalf("%s %s %d: %v", sc.preset, f, n, err)
				}
				if cp, _ := s.cal.For(e.Calibrated.Class); cp.NCCLModel != "" {
					// A class on NCCL's own model takes the model's
					// time, which is not monotonic itself: the Tree
					// correction factors of tuning.cc change by size
					// octave. Only the equality is checked.
					if e.Calibrated.RampBusBytes != 0 || e.Calibrated.LatencyUs != e.ModelLatencyUs {
						t.Errorf("%s x%d %s %d bytes: class %s on NCCL's model reports ramp %g and latency %g, want 0 and NCCL's %g", sc.preset, sc.nodes, f, n, e.Calibrated.Class, e.Calibrated.RampBusBytes, e.Calibrated.LatencyUs, e.ModelLatencyUs)
					}
					if !e.Calibrated.Held && e.Calibrated.TimeUs != e.Model.TimeUs {
						t.Errorf("%s x%d %s %d bytes: class %s on NCCL's model takes %.4f us, the model %.4f us", sc.preset, sc.nodes, f, n, e.Calibrated.Class, e.Calibrated.TimeUs, e.Model.TimeUs)
					}
					prev, prevN = 0, n
					continue
				}
				if e.Calibrated.TimeUs < prev {
					t.Errorf("%s x%d %s: %d bytes take %.4f us, %d bytes %.4f us", sc.preset, sc.nodes, f, n, e.Calibrated.TimeUs, prevN, prev)
					break
				}
				prev, prevN = e.Calibrated.TimeUs, n
			}
		}
	}
}

// TestEstimateBlocks checks the relations inside one estimate: busbw is
// algbw × factor for both blocks, both time the same chosen cell, the
// calibrated time tends to the latency floor for tiny messages and the
// band comes from the class.
func TestEstimateBlocks(t *testing.T) {
	s := system(t, "a100-sxm-8x", 1, nil, FabricAuto)
	for _, n := range []uint64{64, 1 << 20, 256 << 20, 8 << 30} {
		e, err := s.Estimate(tune.Request{Func: tune.AllReduce, NBytes: n})
		if err != nil {
			t.Fatal(err)
		}
		c := e.Calibrated
		if c.Algo != e.Model.Algo || c.Proto != e.Model.Proto {
			t.Errorf("%d: calibrated %s/%s, model %s/%s", n, c.Algo, c.Proto, e.Model.Algo, e.Model.Proto)
		}
		if math.Abs(c.BusBwGBps-c.AlgBwGBps*1.75) > 1e-9*c.BusBwGBps {
			t.Errorf("%d: busbw %v algbw %v", n, c.BusBwGBps, c.AlgBwGBps)
		}
		if c.Class != ClassNVLink || c.NDatasets != len(c.Datasets) || c.NDatasets == 0 {
			t.Errorf("%d: class %s with %d datasets %v", n, c.Class, c.NDatasets, c.Datasets)
		}
		if c.TimeUs < c.LatencyUs {
			t.Errorf("%d: time %v below the latency floor %v", n, c.TimeUs, c.LatencyUs)
		}
		if c.BusBwHighGBps != nil && (c.BusBwLowGBps > c.BusBwGBps || *c.BusBwHighGBps < c.BusBwGBps) {
			t.Errorf("%d: band [%v, %v] does not hold %v", n, c.BusBwLowGBps, *c.BusBwHighGBps, c.BusBwGBps)
		}
	}
	// For a tiny message the ramp term Sbus/P/(1-exp(-(Sbus/R)^γ)) is at
	// most R/P (its limit for γ = 1; below it for γ < 1, where it tends to
	// zero), so the time lies between the latency floor and the floor plus
	// ramp/plateau.
	e, _ := s.Estimate(tune.Request{Func: tune.AllReduce, NBytes: 8})
	c := e.Calibrated
	if lim := c.LatencyUs + c.RampBusBytes/(1e3*c.PlateauBusBwGBps); c.TimeUs < c.LatencyUs || c.TimeUs > 1.05*lim {
		t.Errorf("8 bytes: %v us, floor %v us, floor plus the ramp's limit %v us", c.TimeUs, c.LatencyUs, lim)
	}
	big, _ := s.Estimate(tune.Request{Func: tune.AllReduce, NBytes: 1 << 40})
	if r := big.Calibrated.BusBwGBps / big.Calibrated.PlateauBusBwGBps; r < 0.99 || r > 1 {
		t.Errorf("1 TiB reaches %v of the plateau", r)
	}
	if _, err := s.Estimate(tune.Request{Func: tune.AllReduce, NBytes: MaxBytes + 1}); err == nil {
		t.Error("size above MaxBytes accepted")
	}
}

// TestRoute checks the path class of the presets the measurements map to.
func TestRoute(t *testing.T) {
	for _, tc := range []struct {
		preset string
		nodes  int
		env    map[string]string
		fabric Fabric
		want   Class
	}{
		{"a100-sxm-8x", 1, nil, FabricAuto, ClassNVLink},
		{"a40-2x-nvlink-bridge", 1, nil, FabricAuto, ClassNVLinkDirect},
		{"h100-4x-nvlink-4ib", 1, nil, FabricAuto, ClassNVLinkDirect}, // all-to-all board, no NVSwitch
		{"h100-sxm-8x", 1, map[string]string{"NCCL_ALGO": "Ring"}, FabricAuto, ClassNVLink},
		{"rtx4090-4x-pcie-switch-p2p", 1, nil, FabricAuto, ClassPCIe},
		{"rtx4090-2x", 1, nil, FabricAuto, ClassSHM},
		{"rtx4090-2x-2socket", 1, nil, FabricAuto, ClassSHMXSocket},
		{"a40-4x-2socket-nvlink-pairs", 1, map[string]string{"NCCL_P2P_DISABLE": "1"}, FabricAuto, ClassSHMXSocket},
		{"a100-sxm-8x", 2, nil, FabricAuto, ClassNetRDMA},         // mlx5_* NICs
		{"h100-a3mega-8x-tcpxo", 2, nil, FabricAuto, ClassNetTCP}, // eth* NICs
		{"a100-sxm-8x", 2, nil, FabricTCP, ClassNetTCP},
		// GPUDirect RDMA off (NIC and GPU share a PCIe switch, but the
		// user's level forbids it): every transfer staged in host memory.
		{"a100-sxm-8x", 2, map[string]string{"NCCL_NET_GDR_LEVEL": "LOC"}, FabricAuto, ClassNetHost},
		// GPU and NIC on different sockets: GDR off by default (SYS > PXB),
		// and forced on with NCCL_NET_GDR_LEVEL=SYS the NIC's DMA still
		// crosses the sockets.
		{"a100pcie-1x-2socket-hdr-sys", 2, nil, FabricAuto, ClassNetHost},
		{"a100pcie-1x-2socket-hdr-sys", 2, map[string]string{"NCCL_NET_GDR_LEVEL": "SYS"}, FabricAuto, ClassNetHost},
		// GPU and NIC on different root ports of one socket (PHB).
		{"l40s-2x-2socket-roce", 2, nil, FabricAuto, ClassNetHost},
	} {
		s := system(t, tc.preset, tc.nodes, tc.env, tc.fabric)
		if got := s.Routing().Algo[tune.Ring]; got != tc.want {
			t.Errorf("%s x%d %v: ring class %s, want %s", tc.preset, tc.nodes, tc.env, got, tc.want)
		}
	}
}

// TestSegments: the ranges cover [0, hi] without gaps and every range's
// ends have the range's choice.
func TestSegments(t *testing.T) {
	s := system(t, "a100-sxm-8x", 2, nil, FabricAuto)
	m := s.Model()
	const hi = uint64(1) << 36
	segs, err := Segments(m, tune.Request{Func: tune.AllReduce}, hi)
	if err != nil {
		t.Fatal(err)
	}
	if len(segs) < 3 || segs[0].MinBytes != 0 || segs[len(segs)-1].MaxBytes != hi {
		t.Fatalf("segments %+v", segs)
	}
	for i, sg := range segs {
		if i > 0 && sg.MinBytes != segs[i-1].MaxBytes+1 {
			t.Errorf("gap before %+v", sg)
		}
		for _, n := range []uint64{sg.MinBytes, sg.MaxBytes} {
			c, err := m.Select(tune.Request{Func: tune.AllReduce, NBytes: n})
			if err != nil {
				t.Fatal(err)
			}
			if c.Algo != sg.Algo || c.Proto != sg.Proto || c.NChannels != sg.NChannels {
				t.Errorf("%d bytes: %s/%s/%d, segment says %s/%s/%d", n, c.Algo, c.Proto, c.NChannels, sg.Algo, sg.Proto, sg.NChannels)
			}
		}
	}
}

// TestValidateCommitted runs validate on the committed datasets with the
// committed calibration. The summary the project reports is the median
// over datasets of each dataset's median busbw error at sizes of at least
// 1 MiB: in sample it must stay within 15 %, and out of sample (leave one
// source out) it must stay below NCCL's own model on the same rows, so
// that calibration never makes an unseen system worse on the whole.
func TestValidateCommitted(t *testing.T) {
	sets, build, cal := fixtures(t)
	rep, err := Validate(context.Background(), sets, build, cal, BandMinBytes)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Datasets) != len(sets) {
		t.Fatalf("%d dataset reports for %d datasets", len(rep.Datasets), len(sets))
	}
	m := rep.Medians
	if m.Datasets != len(sets) {
		t.Errorf("medians over %d datasets, want %d", m.Datasets, len(sets))
	}
	if m.Calibrated > 15 {
		t.Errorf("in-sample median over datasets %.1f%% exceeds 15%%", m.Calibrated)
	}
	if m.OutOfSample >= m.Model {
		t.Errorf("out-of-sample median over datasets %.1f%% is no better than NCCL's model's %.1f%%", m.OutOfSample, m.Model)
	}
	if m.OutOfSample < m.Calibrated {
		t.Errorf("out-of-sample median %.1f%% below the in-sample %.1f%%: the folds are not leaving the source out", m.OutOfSample, m.Calibrated)
	}
	// No class may do worse out of sample than NCCL's model on its own
	// datasets (issue 14): a class that would is handed to the model by
	// Fit (fallBack), and its in-sample and out-of-sample figures are then
	// the model's own.
	fell := map[Class]bool{}
	for _, cp := range cal.Classes {
		fell[cp.Class] = cp.NCCLModel != ""
	}
	for _, c := range rep.Classes {
		if c.Medians.OutOfSample-c.Medians.Model >= FallBackMarginPct {
			t.Errorf("%s: out-of-sample median %.2f%% worse than NCCL's model's %.2f%%", c.Class, c.Medians.OutOfSample, c.Medians.Model)
		}
		if fell[c.Class] && (math.Abs(c.Medians.Calibrated-c.Medians.Model) > 1e-9 || math.Abs(c.Medians.OutOfSample-c.Medians.Model) > 1e-9) {
			t.Errorf("%s uses NCCL's model, yet in sample %.2f%% and out of sample %.2f%% differ from the model's %.2f%%", c.Class, c.Medians.Calibrated, c.Medians.OutOfSample, c.Medians.Model)
		}
	}
	total := 0
	for _, d := range rep.Datasets {
		if d.Calibrated.N == 0 {
			t.Errorf("%s: no point of at least 1 MiB", d.ID)
		}
		total += d.Calibrated.N
		for _, p := range d.Points {
			if p.Counted != (p.Bytes >= BandMinBytes && p.Measured > 0) {
				t.Errorf("%s %d: counted %v", d.ID, p.Bytes, p.Counted)
			}
		}
	}
	if total != rep.Overall.Calibrated.N {
		t.Errorf("overall counts %d points, datasets %d", rep.Overall.Calibrated.N, total)
	}
}

// TestBandCoversMeasurements checks the error band against the
// leave-one-source-out predictions it was computed from. The band's ends
// must be the BandQuantileLow and BandQuantileHigh quantiles of the signed
// out-of-sample errors of the class's counted points (recomputed here from
// the report, so the golden values are the report's own numbers), and the
// measured busbw must lie inside the band drawn around the out-of-sample
// estimate for at least 80 % of all counted points (the bar).
func TestBandCoversMeasurements(t *testing.T) {
	sets, build, cal := fixtures(t)
	rep, err := Validate(context.Background(), sets, build, cal, BandMinBytes)
	if err != nil {
		t.Fatal(err)
	}
	signed := map[Class][]float64{}
	in, n := 0, 0
	for _, d := range rep.Datasets {
		if d.Anomaly != "" {
			// Left out of the bands and the coverage (Dataset.Anomaly).
			continue
		}
		for _, p := range d.Points {
			if !p.Counted {
				continue
			}
			signed[p.Class] = append(signed[p.Class], 100*(p.OutOfSample-p.Measured)/p.Measured)
			n++
			if p.InBand {
				in++
			}
		}
	}
	if n == 0 || n != rep.BandPoints {
		t.Fatalf("%d counted points, the report says %d", n, rep.BandPoints)
	}
	if cov := 100 * float64(in) / float64(n); cov < 80 || math.Abs(cov-rep.BandCoverage) > 1e-9 {
		t.Errorf("band covers %.1f%% of the out-of-sample points (report: %.1f%%), want at least 80%%", cov, rep.BandCoverage)
	}
	for _, c := range cal.Classes {
		b := c.Band
		e := signed[c.Class]
		if b.Points != len(e) {
			t.Errorf("%s: band counts %d points, the report %d", c.Class, b.Points, len(e))
			continue
		}
		if len(e) == 0 {
			continue
		}
		if !b.OutOfSample {
			t.Errorf("%s: band not marked out-of-sample", c.Class)
		}
		hi := math.Max(0, quantile(e, BandQuantileHigh))
		lo := math.Min(99, math.Max(0, -quantile(e, BandQuantileLow)))
		near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-3*math.Max(1, math.Abs(b)) }
		if !near(b.OverPct, hi) || !near(b.UnderPct, lo) {
			t.Errorf("%s: band over %v under %v, quantiles of the out-of-sample errors give %v and %v", c.Class, b.OverPct, b.UnderPct, hi, lo)
		}
		if b.UnderPct >= 100 || b.OverPct > b.MaxPct+1e-9 || b.UnderPct > b.MaxPct+1e-9 {
			t.Errorf("%s: over %v, under %v, max %v", c.Class, b.OverPct, b.UnderPct, b.MaxPct)
		}
	}
}

// TestSourceKey: runs are grouped by recorded author, by GitHub thread, or
// by GitHub owner.
func TestSourceKey(t *testing.T) {
	for _, tc := range []struct{ url, author, want string }{
		{"https://github.com/NVIDIA/nccl/issues/1530", "", "github.com/nvidia/nccl/issues/1530"},
		{"https://github.com/NVIDIA/nccl-tests/issues/270#issuecomment-1", "", "github.com/nvidia/nccl-tests/issues/270"},
		{"https://github.com/oracle-japan/ocitutorials/blob/abc/x.md", "", "github.com/oracle-japan"},
		{"https://github.com/coreweave/nccl-tests/blob/main/README.md; job manifest", "", "github.com/coreweave"},
		{"some text", "Oracle-Japan", "author:oracle-japan"},
		{"https://example.com/blog/post", "", "example.com/blog/post"},
	} {
		d := &Dataset{Source: Source{URL: tc.url, Author: tc.author}}
		if got := d.SourceKey(); got != tc.want {
			t.Errorf("SourceKey(%q, %q) = %q, want %q", tc.url, tc.author, got, tc.want)
		}
	}
}

func TestParseDatasetErrors(t *testing.T) {
	sets, _, _ := fixtures(t)
	// The edits below assume a single-node run ("nodes": 1).
	one := sets[0]
	for _, d := range sets {
		if d.System.Nodes == 1 {
			one = d
			break
		}
	}
	good, err := data.Measurements.ReadFile("measurements/" + one.ID + ".json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseDataset(good); err != nil {
		t.Fatalf("good dataset rejected: %v", err)
	}
	for name, edit := range map[string][2]string{
		"unknown field": {`"schema": 1,`, `"schema": 1, "extra": 2,`},
		"bad schema":    {`"schema": 1,`, `"schema": 2,`},
		"no url":        {`"url": "`, `"url": "", "x_url": "`},
		"collective":    {`"collective": "allreduce"`, `"collective": "alltoallv"`},
		"nodes":         {`"nodes": 1,`, `"nodes": 3,`},
	} {
		b := bytes.Replace(good, []byte(edit[0]), []byte(edit[1]), 1)
		if bytes.Equal(b, good) {
			t.Fatalf("%s: edit %q did not apply", name, edit[0])
		}
		if _, err := ParseDataset(b); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := ParseDataset([]byte(`{"schema":1} {}`)); err == nil {
		t.Error("trailing data accepted")
	}
}

func FuzzParseDataset(f *testing.F) {
	sets, _, _ := fixtures(f)
	for _, d := range sets[:2] {
		b, err := data.Measurements.ReadFile("measurements/" + d.ID + ".json")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"schema":1,"rows":[{"bytes":1,"time_us":-1}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := ParseDataset(b)
		if err == nil && (d.ID == "" || len(d.Rows) == 0) {
			t.Errorf("accepted an incomplete dataset: %+v", d)
		}
	})
}

// BenchmarkSweep16x8 is a full nccl-tests sweep (8 B to 8 GiB, factor 2:
// 31 sizes) of AllReduce on 16 nodes of 8 A100 GPUs through a fresh System
// (so the protocol-switch curve is built each time); the communicator
// itself is built once, outside the loop.
func BenchmarkSweep16x8(b *testing.B) {
	_, build, cal := fixtures(b)
	res, err := build(context.Background(), SystemRef{Preset: "a100-sxm-8x", Nodes: 16})
	if err != nil {
		b.Fatal(err)
	}
	sizes := tune.Sizes(8, 8<<30)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := NewSystem(res, FabricAuto, cal)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Sweep(context.Background(), tune.AllReduce, sizes, tune.Request{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEstimate is one estimate on a System whose curve is cached.
func BenchmarkEstimate(b *testing.B) {
	s := system(b, "a100-sxm-8x", 16, nil, FabricAuto)
	req := tune.Request{Func: tune.AllReduce, NBytes: 256 << 20}
	if _, err := s.Estimate(req); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.Estimate(req); err != nil {
			b.Fatal(err)
		}
	}
}

// TestHopBandwidth: each transport is bounded by its own hardware. The
// parameter values are arbitrary; the expected values follow from hopBw's
// definition (NVLink: efficiency x links x per-link bandwidth; PCIe P2P:
// efficiency x narrowest link; SHM: min(pcie efficiency x narrower GPU
// link, host staging), plus the inter-socket term across sockets).
func TestHopBandwidth(t *testing.T) {
	ps := defaultParams()
	ps.eff[classIndex(ClassNVLink)] = 0.9
	ps.eff[classIndex(ClassNVLinkDirect)] = 0.8
	ps.eff[classIndex(ClassPCIe)] = 1.1
	ps.eff[classIndex(ClassSHMXSocket)] = 0.1
	ps.host = 2.5
	ps.host5 = 25
	for _, tc := range []struct {
		name string
		hop  Hop
		want float64
	}{
		{"NVSwitch, 12 links of 20 GB/s", Hop{Class: ClassNVLink, PathBw: 240}, 0.9 * 240},
		{"NVLink bridge, 4 links of 12 GB/s", Hop{Class: ClassNVLinkDirect, PathBw: 48}, 0.8 * 48},
		{"PCIe Gen4 x16 P2P", Hop{Class: ClassPCIe, PathBw: 24}, 1.1 * 24},
		{"SHM Gen4 x16: host staging binds", Hop{Class: ClassSHM, PathBw: 24, PCIeBw: 24}, 2.5},
		{"SHM Gen3 x16: host staging binds", Hop{Class: ClassSHM, PathBw: 12, PCIeBw: 12}, 2.5},
		{"SHM Gen3 x1 riser: the link binds", Hop{Class: ClassSHM, PathBw: 0.75, PCIeBw: 0.75}, 1.1 * 0.75},
		{"SHM across sockets, 10 GB/s inter-socket", Hop{Class: ClassSHMXSocket, PathBw: 10, PCIeBw: 24}, 0.1 * 10},
		{"SHM across sockets, 64 GB/s inter-socket", Hop{Class: ClassSHMXSocket, PathBw: 64, PCIeBw: 24}, 2.5},
		{"SHM Gen5 x16: the Gen5 host staging binds", Hop{Class: ClassSHM, PathBw: 48, PCIeBw: 48}, 25},
		{"SHM Gen5 x8 (24 GB/s, as Gen4 x16): the other rate", Hop{Class: ClassSHM, PathBw: 24, PCIeBw: 24}, 2.5},
		{"SHM Gen5 x16, GPU links not given: the path's", Hop{Class: ClassSHM, PathBw: 48}, 25},
		{"SHM across sockets, Gen5 x16 GPUs, 400 GB/s inter-socket", Hop{Class: ClassSHMXSocket, PathBw: 400, PCIeBw: 48}, 25},
		{"SHM across sockets, Gen5 x16 GPUs, 10 GB/s inter-socket", Hop{Class: ClassSHMXSocket, PathBw: 10, PCIeBw: 48}, 0.1 * 10},
	} {
		if got := ps.hopBw(tc.hop); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: %v GB/s, want %v", tc.name, got, tc.want)
		}
	}
}

// TestSHMGen5: the Gen5 host staging rate applies to a cell whose graph
// has an SHM hop over Gen5 x16 GPU links, whatever its other hops.
func TestSHMGen5(t *testing.T) {
	for _, tc := range []struct {
		name string
		hops []Hop
		want bool
	}{
		{"no hops", nil, false},
		{"P2P over a Gen5 x16 switch", []Hop{{Class: ClassPCIe, PathBw: 48, PCIeBw: 48}}, false},
		{"SHM over Gen4 x16", []Hop{{Class: ClassSHM, PathBw: 24, PCIeBw: 24}}, false},
		{"SHM over Gen5 x16", []Hop{{Class: ClassSHM, PathBw: 48, PCIeBw: 48}}, true},
		{"NVLink and cross-socket SHM over Gen5 x16", []Hop{{Class: ClassNVLink, PathBw: 240}, {Class: ClassSHMXSocket, PathBw: 40, PCIeBw: 48}}, true},
		{"SHM, one GPU on Gen4 x16 (the narrower link)", []Hop{{Class: ClassSHM, PathBw: 24, PCIeBw: 24}}, false},
	} {
		if got := shmGen5(tc.hops); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestSHMPlateauFollowsHardware: two single-socket PCIe Gen4 boxes whose
// NCCL search bandwidths differ (2 GPUs: 24 GB/s, 4 GPUs: 20 GB/s) get the
// same calibrated SHM plateau for a large AllReduce, because an SHM hop is
// bounded by host staging and the GPU's PCIe link, not by the ring
// bandwidth NCCL's search assigned.
func TestSHMPlateauFollowsHardware(t *testing.T) {
	var plateaus []float64
	var models []float64
	for _, preset := range []string{"rtx4090-2x", "rtx4090-4x"} {
		s := system(t, preset, 1, nil, FabricAuto)
		e, err := s.Estimate(tune.Request{Func: tune.AllReduce, NBytes: 1 << 30, Datatype: tune.Float32})
		if err != nil {
			t.Fatal(err)
		}
		if e.Calibrated.Class != ClassSHM || e.Model.Algo != "Ring" || e.Model.Proto != "Simple" {
			t.Fatalf("%s: %s via %s/%s", preset, e.Calibrated.Class, e.Model.Algo, e.Model.Proto)
		}
		plateaus = append(plateaus, e.Calibrated.PlateauBusBwGBps)
		models = append(models, e.Model.BusBwGBps)
	}
	if math.Abs(plateaus[0]-plateaus[1]) > 1e-6*plateaus[0] { // NCCL keeps bandwidths in float32
		t.Errorf("SHM plateaus %v differ between the 2- and 4-GPU box", plateaus)
	}
	if math.Abs(models[0]-models[1]) < 1 {
		t.Errorf("NCCL's model busbw %v: the presets no longer differ, the test shows nothing", models)
	}
}

// TestSupportNamesSources: the support text of a class counts the
// datasets and independent sources behind the parameter that sets its
// plateau (for shm the host staging rate, which the calibration lists).
func TestSupportNamesSources(t *testing.T) {
	_, _, cal := fixtures(t)
	for _, c := range Classes() {
		cp, err := cal.For(c)
		if err != nil {
			t.Fatal(err)
		}
		bw := cp.bandwidthParam()
		n := cal.sourcesOf(bw.Datasets)
		got := supportText(cp, bw, n)
		switch {
		case len(bw.Datasets) == 0:
			if !strings.Contains(got, "no measurement") {
				t.Errorf("%s: %q", c, got)
			}
		case n == 1:
			if !strings.Contains(got, "one independent source") {
				t.Errorf("%s: %q", c, got)
			}
		default:
			if want := fmt.Sprintf("%d datasets from %d independent sources", len(bw.Datasets), n); !strings.Contains(got, want) {
				t.Errorf("%s: %q lacks %q", c, got, want)
			}
		}
	}
}

// TestCrossSocketP2PHop: a PCIe P2P hop across the sockets (P2P forced
// with NCCL_P2P_LEVEL=SYS) is bounded by the GPUs' own PCIe links, not by
// NCCL's inter-socket constant (16 GB/s for AMD): the ring of eight RTX
// 5090 on two Turin sockets crosses the sockets (class pcie-xsocket), and
// its calibrated plateau is the pcie-xsocket efficiency × the Gen5 x16
// link NCCL reads (48 GB/s,
// scaled by the cell's share of the graph bandwidth), far above 16 GB/s.
func TestCrossSocketP2PHop(t *testing.T) {
	s := system(t, "rtx5090-8x-2socket-p2p", 1, map[string]string{"NCCL_P2P_LEVEL": "SYS"}, FabricAuto)
	rt := s.Routing()
	if rt.Algo[tune.Ring] != ClassPCIeXSocket {
		t.Fatalf("ring class %s, want pcie-xsocket", rt.Algo[tune.Ring])
	}
	cross := false
	for _, h := range rt.Hops[tune.Ring] {
		if h.CrossSocket {
			cross = true
			if h.PathBw > 16 || h.PCIeBw < 40 {
				t.Errorf("cross-socket hop %+v: want NCCL's path bandwidth at most 16 GB/s and the GPU links about 48", h)
			}
		}
	}
	if !cross {
		t.Fatal("no ring hop crosses the sockets")
	}
	e, err := s.Estimate(tune.Request{Func: tune.AllReduce, Datatype: tune.Float32, NBytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	if p := e.Calibrated.PlateauBusBwGBps; p < 2*16 {
		t.Errorf("plateau %.1f GB/s: the inter-socket constant still bounds the P2P hop", p)
	}
}

// TestRampRanks: the ramp scale grows with the rank count for the
// algorithms that cut the message into n pieces (Ring, PAT) and not for
// those that stream it whole (Tree, NVLS, NVLSTree, CollNet).
func TestRampRanks(t *testing.T) {
	for _, tc := range []struct {
		a    tune.Algorithm
		n    int
		want float64
	}{
		{tune.Ring, 16, 16}, {tune.PAT, 8, 8}, {tune.Tree, 16, 1}, {tune.NVLS, 8, 1}, {tune.NVLSTree, 64, 1}, {tune.CollNetDirect, 32, 1},
	} {
		if got := RampRanks(tc.a, tc.n); got != tc.want {
			t.Errorf("RampRanks(%v, %d) = %v, want %v", tc.a, tc.n, got, tc.want)
		}
	}
}

// TestDirectNVLinkHops checks the ring's NVLink hop bandwidth without an
// NVSwitch: a pair used by k of the ring's C channels allows C/k times the
// pair's links. On the 4-GPU all-to-all board (6 links per pair, 123.6
// GB/s in NCCL's model: 6 × SM90_NVLINK_BW 20.6) the rings alternate over
// the three peers, so the bound must exceed one pair's links; on a bridged
// pair every channel uses the bridge and the hop keeps the pair's links
// (a40-2x-nvlink-bridge: 4 × SM86_NVLINK_BW 12 = 48 GB/s); through an
// NVSwitch every peer is reached over all links and nothing is scaled
// (a100-sxm-8x: 12 × 20 = 240 GB/s).
func TestDirectNVLinkHops(t *testing.T) {
	for _, tc := range []struct {
		preset   string
		pairBw   float64
		moreThan bool
	}{
		{"h100-4x-nvlink-4ib", 123.6, true},
		{"a40-2x-nvlink-bridge", 48, false},
		{"a100-sxm-8x", 240, false},
	} {
		s := system(t, tc.preset, 1, nil, FabricAuto)
		hops := s.Routing().Hops[tune.Ring]
		if len(hops) == 0 {
			t.Fatalf("%s: no ring hops", tc.preset)
		}
		want := ClassNVLinkDirect
		if tc.preset == "a100-sxm-8x" {
			want = ClassNVLink
		}
		low := math.Inf(1)
		for _, h := range hops {
			if h.Class != want {
				t.Fatalf("%s: hop %+v is not %s", tc.preset, h, want)
			}
			low = math.Min(low, h.PathBw)
		}
		if tc.moreThan && !(low > 1.5*tc.pairBw) {
			t.Errorf("%s: slowest ring hop %.1f GB/s, want more than 1.5 pairs (%.1f)", tc.preset, low, tc.pairBw)
		}
		if !tc.moreThan && math.Abs(low-tc.pairBw) > 0.01 {
			t.Errorf("%s: slowest ring hop %.1f GB/s, want the pair's %.1f", tc.preset, low, tc.pairBw)
		}
	}
}

// TestShapeNeedsTwoSources fits synthetic copies of one published run: a
// latency factor and ramp that one source supports are not fitted (NCCL's
// own latency, factor 1, no ramp), while two sources with the same rows
// fit them. The efficiency is fitted either way.
func TestShapeNeedsTwoSources(t *testing.T) {
	sets, build, _ := fixtures(t)
	base := datasetByID(t, sets, "oke-a100-2node-16gpu-rdma")
	copyAs := func(id, author string) *Dataset {
		d := *base
		d.ID, d.Source.Author = id, author
		return &d
	}
	ctx := context.Background()
	one, err := Fit(ctx, []*Dataset{copyAs("a", "one"), copyAs("b", "one")}, build)
	if err != nil {
		t.Fatal(err)
	}
	two, err := Fit(ctx, []*Dataset{copyAs("a", "one"), copyAs("b", "two")}, build)
	if err != nil {
		t.Fatal(err)
	}
	p1, _ := one.For(ClassNetRDMA)
	p2, _ := two.For(ClassNetRDMA)
	if p1.LatencyFactor.Source != "bound" || p1.LatencyFactor.Value != 1 || p1.RampBytesPerRank.Source != "bound" {
		t.Errorf("one source: latency %+v, ramp %+v; want NCCL's own latency and no ramp", p1.LatencyFactor, p1.RampBytesPerRank)
	}
	if p2.LatencyFactor.Source != "fitted" || p2.RampBytesPerRank.Source != "fitted" {
		t.Errorf("two sources: latency %+v, ramp %+v; want both fitted", p2.LatencyFactor, p2.RampBytesPerRank)
	}
	if p1.Efficiency.Source != "bound" || p1.Efficiency.Value != maxEffNet || p2.Efficiency.Source != "fitted" {
		t.Errorf("efficiency %+v with one source, %+v with two; want the physical bound %v, then fitted", p1.Efficiency, p2.Efficiency, maxEffNet)
	}
	if got := supportText(p1, p1.bandwidthParam(), one.sourcesOf(p1.Efficiency.Datasets)); !strings.Contains(got, "the physical bound is used") {
		t.Errorf("one source: support %q does not say the physical bound is used", got)
	}
}

// TestEfficiencyFromPlateau: the bandwidth parameter is identified by the
// plateau rows (>= PlateauMinBytes) alone. A run whose smaller messages are
// three times slower has the same plateau, so the class keeps the same
// efficiency (two sources of the same rows, so that it is fitted): the
// slow small rows go into the latency factor and the ramp, not into the
// bandwidth, which would carry them over to systems of another shape.
func TestEfficiencyFromPlateau(t *testing.T) {
	sets, build, _ := fixtures(t)
	base := datasetByID(t, sets, "oke-a100-2node-16gpu-rdma")
	slow := *base
	slow.Rows = append([]Row(nil), base.Rows...)
	changed := 0
	for i := range slow.Rows {
		if slow.Rows[i].Bytes < PlateauMinBytes {
			slow.Rows[i].TimeUs *= 3
			changed++
		}
	}
	if changed == 0 || changed == len(slow.Rows) {
		t.Fatalf("%d of %d rows below the plateau: the test needs both kinds", changed, len(slow.Rows))
	}
	ctx := context.Background()
	two := func(d *Dataset) []*Dataset {
		x, y := *d, *d
		x.ID, x.Source.Author, y.ID, y.Source.Author = "x", "one", "y", "two"
		return []*Dataset{&x, &y}
	}
	a, err := Fit(ctx, two(base), build)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Fit(ctx, two(&slow), build)
	if err != nil {
		t.Fatal(err)
	}
	pa, _ := a.For(ClassNetRDMA)
	pb, _ := b.For(ClassNetRDMA)
	if pa.Efficiency.Source != "fitted" || pa.RampBytesPerRank.Source != "fitted" {
		t.Fatalf("efficiency %+v, ramp %+v: want both fitted", pa.Efficiency, pa.RampBytesPerRank)
	}
	if math.Abs(pa.Efficiency.Value-pb.Efficiency.Value) > 1e-3*pa.Efficiency.Value {
		t.Errorf("efficiency %v with the published rows, %v with the small rows three times slower: want equal", pa.Efficiency.Value, pb.Efficiency.Value)
	}
}

// datasetByID returns the dataset id of sets, failing the test without it.
func datasetByID(t *testing.T, sets []*Dataset, id string) *Dataset {
	t.Helper()
	for _, d := range sets {
		if d.ID == id {
			return d
		}
	}
	t.Fatalf("dataset %s missing", id)
	return nil
}

// TestEfficiencyCappedAtLineRate: a network efficiency never exceeds 1,
// NCCL's network bandwidth being the NIC line rate. A run made twice as
// fast as published (busbw far above what its NICs carry) fits the
// efficiency at that bound and says so, and the PCIe bound is the raw
// Gen4 x16 rate over NCCL's 24 GB/s (31.5 / 24).
func TestEfficiencyCappedAtLineRate(t *testing.T) {
	sets, build, _ := fixtures(t)
	fast := *datasetByID(t, sets, "oke-a100-2node-16gpu-rdma")
	fast.Rows = append([]Row(nil), fast.Rows...)
	for i := range fast.Rows {
		fast.Rows[i].TimeUs /= 2
	}
	other := fast
	other.ID, other.Source.Author = "other", "another author"
	cal, err := Fit(context.Background(), []*Dataset{&fast, &other}, build)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := cal.For(ClassNetRDMA)
	if p.Efficiency.Value != maxEffNet || !strings.Contains(p.Efficiency.Note, "upper bound") {
		t.Errorf("efficiency %+v: want %v, noted as at its upper bound", p.Efficiency, maxEffNet)
	}
	if got, want := maxEffPCIe*24, 16*16.0*128/130/8; math.Abs(got-want) > 1e-9 {
		t.Errorf("PCIe bound %v GB/s on a Gen4 x16 link, want %v", got, want)
	}
	def, err := DefaultCalibration()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range def.Classes {
		if hi := effBoxFor(c.Class).hi; c.Efficiency.Value > hi {
			t.Errorf("%s: efficiency %v above its bound %v", c.Class, c.Efficiency.Value, hi)
		}
	}
}

// TestNeutralIsNCCL: with every parameter of the network class at its
// bound (efficiency 1, NCCL's latency, no ramp) the calibrated time of a
// 2-node allreduce is NCCL's model time at every power-of-two size that is
// not held, ring Simple rows with NCCL's x1.4 latency included: a class
// that falls back to its bounds is predicted by NCCL's own model. Tree
// rows are left out: NCCL scales their bandwidth by its tree correction
// factor, which the estimator replaces by its fitted ramp (carrying the
// factor over made the leave-one-source-out median over datasets 14.4% ->
// 14.8%).
func TestNeutralIsNCCL(t *testing.T) {
	_, build, def := fixtures(t)
	cal := *def
	cal.Classes = append([]ClassParams(nil), def.Classes...)
	for i := range cal.Classes {
		cp := &cal.Classes[i]
		if cp.Class == ClassNetRDMA {
			cp.Efficiency.Value, cp.LatencyFactor.Value = 1, 1
			cp.RampBytesPerRank.Value, cp.RampGamma.Value = baseRampBytes, baseRampGamma
		}
	}
	res, err := build(context.Background(), SystemRef{Preset: "a100-sxm-8x", Nodes: 2})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSystem(res, FabricRDMA, &cal)
	if err != nil {
		t.Fatal(err)
	}
	algos := map[string]bool{}
	compared := 0
	for n := uint64(1 << 20); n <= 1<<33; n <<= 1 {
		e, err := s.Estimate(tune.Request{Func: tune.AllReduce, NBytes: n, Datatype: tune.Float32})
		if err != nil {
			t.Fatal(err)
		}
		if e.Calibrated.Class != ClassNetRDMA {
			t.Fatalf("%d bytes: class %s", n, e.Calibrated.Class)
		}
		if e.Calibrated.Held || e.Model.Algo == "Tree" {
			continue
		}
		compared++
		algos[e.Model.Algo+"/"+e.Model.Proto] = true
		if d := math.Abs(e.Calibrated.TimeUs-e.Model.TimeUs) / e.Model.TimeUs; d > 1e-3 {
			t.Errorf("%d bytes %s/%s: calibrated %.3f us, NCCL's model %.3f us", n, e.Model.Algo, e.Model.Proto, e.Calibrated.TimeUs, e.Model.TimeUs)
		}
	}
	if compared < 5 || !algos["Ring/Simple"] {
		t.Errorf("compared %d sizes over %v: want Ring Simple rows", compared, algos)
	}
}

// TestShapeWeighsSources: the latency factor and the ramp weigh every
// independent source the same. A source that publishes the same run three
// times moves them no more than once: fitting {A, B} and {A, A, A, B}
// (A's copies under one author, B another author's run with its small
// messages twice as slow) gives the same latency factor.
func TestShapeWeighsSources(t *testing.T) {
	sets, build, _ := fixtures(t)
	base := datasetByID(t, sets, "oke-a100-2node-16gpu-rdma")
	as := func(id, author string, slow float64) *Dataset {
		d := *base
		d.ID, d.Source.Author = id, author
		d.Rows = append([]Row(nil), base.Rows...)
		for i := range d.Rows {
			if d.Rows[i].Bytes <= LatencyMaxBytes {
				d.Rows[i].TimeUs *= slow
			}
		}
		return &d
	}
	ctx := context.Background()
	two, err := Fit(ctx, []*Dataset{as("a", "one", 1), as("b", "two", 2)}, build)
	if err != nil {
		t.Fatal(err)
	}
	four, err := Fit(ctx, []*Dataset{as("a", "one", 1), as("a2", "one", 1), as("a3", "one", 1), as("b", "two", 2)}, build)
	if err != nil {
		t.Fatal(err)
	}
	p2, _ := two.For(ClassNetRDMA)
	p4, _ := four.For(ClassNetRDMA)
	if p2.LatencyFactor.Source != "fitted" {
		t.Fatalf("latency factor %+v: want fitted", p2.LatencyFactor)
	}
	if d := math.Abs(p4.LatencyFactor.Value-p2.LatencyFactor.Value) / p2.LatencyFactor.Value; d > 2e-3 {
		t.Errorf("latency factor %v from {A, B}, %v from {A, A, A, B}: want equal", p2.LatencyFactor.Value, p4.LatencyFactor.Value)
	}
}

// TestWeights: the shape fit weighs sources, the bandwidth fit modelled
// systems of a source. Three collectives of one source on one system share
// one weight in both; the same source's run with another environment
// (GPUDirect RDMA off) is its own system for the bandwidth.
func TestWeights(t *testing.T) {
	mk := func(id, author, preset string, env map[string]string) *prepared {
		d := &Dataset{ID: id, System: SystemRef{Preset: preset, Nodes: 2, Env: env, Fabric: "ib"}}
		d.Source.URL, d.Source.Author = "https://example.org/"+author, author
		return &prepared{d: d}
	}
	sets := []*prepared{
		mk("ar", "one", "p", nil), mk("ag", "one", "p", map[string]string{}), mk("rs", "one", "p", nil),
		mk("nogdr", "one", "p", map[string]string{"NCCL_NET_GDR_LEVEL": "LOC"}),
		mk("other", "two", "p", nil),
	}
	for name, tc := range map[string]struct {
		got, want []float64
	}{
		"source": {sourceWeights(sets), []float64{0.25, 0.25, 0.25, 0.25, 1}},
		"system": {systemWeights(sets), []float64{1.0 / 3, 1.0 / 3, 1.0 / 3, 1, 1}},
	} {
		for k := range tc.want {
			if math.Abs(tc.got[k]-tc.want[k]) > 1e-12 {
				t.Errorf("%s weights %v, want %v", name, tc.got, tc.want)
				break
			}
		}
	}
}

// TestCrossSocketEfficiencyIsCeiling: pcie-xsocket's efficiency is the
// highest plateau share of the GPU link among the datasets it is fitted
// on (each share computed from that dataset alone), not a value between
// them; leaving out the fastest source lowers it to the next one.
func TestCrossSocketEfficiencyIsCeiling(t *testing.T) {
	sets, build, _ := fixtures(t)
	ctx := context.Background()
	ids := []string{"a100pcie-2gpu-2socket-p2p-sys", "rtx4090-8gpu-2socket-nps4-p2p", "rtx5090-8gpu-p2p-2socket"}
	share := map[string]float64{}
	for _, id := range ids {
		p, err := prepare(ctx, datasetByID(t, sets, id), build)
		if err != nil {
			t.Fatal(err)
		}
		share[id] = envelopeEfficiency([]*prepared{p}, ClassPCIeXSocket)
		if share[id] <= 0 {
			t.Fatalf("%s: no pcie-xsocket plateau rows", id)
		}
	}
	cases := []struct {
		name string
		ids  []string
		want string // the dataset whose share the efficiency equals
	}{
		{"all three", ids, ids[2]},
		{"without the 5090", ids[:2], ids[1]},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var in []*Dataset
			for _, id := range tc.ids {
				in = append(in, datasetByID(t, sets, id))
			}
			cal, err := Fit(ctx, in, build)
			if err != nil {
				t.Fatal(err)
			}
			p, _ := cal.For(ClassPCIeXSocket)
			if p.Efficiency.Source != "fitted" {
				t.Fatalf("efficiency %+v: want fitted", p.Efficiency)
			}
			if math.Abs(p.Efficiency.Value-share[tc.want]) > 1e-4 {
				t.Errorf("efficiency %v, want %v (the plateau share of %s; shares %v)", p.Efficiency.Value, share[tc.want], tc.want, share)
			}
		})
	}
}

// TestDirectNVLinkSharesEfficiency: direct NVLink (class nvlink-direct, a
// bridge or an all-to-all board) runs the same links as NVLink through
// NVSwitches. With NVSwitch runs of two sources and a direct run of one,
// the direct class does not keep the bound 1 but takes the efficiency
// fitted through the NVSwitches (source "pooled", naming the NVSwitch
// datasets), while its latency factor stays NCCL's own; with two direct
// sources it fits its own.
func TestDirectNVLinkSharesEfficiency(t *testing.T) {
	sets, build, _ := fixtures(t)
	nvs := datasetByID(t, sets, "xxrjun-h100-8gpu-nvswitch-allgather") // Ring through NVSwitches: an NVLS run (the AllReduce) says nothing about the link efficiency
	direct := datasetByID(t, sets, "snellius-h100-4gpu-nvlink")
	copyAs := func(base *Dataset, id, author string) *Dataset {
		d := *base
		d.ID, d.Source.Author = id, author
		return &d
	}
	ctx := context.Background()
	one, err := Fit(ctx, []*Dataset{copyAs(nvs, "s1", "one"), copyAs(nvs, "s2", "two"), copyAs(direct, "d1", "three")}, build)
	if err != nil {
		t.Fatal(err)
	}
	sw, _ := one.For(ClassNVLink)
	dp, _ := one.For(ClassNVLinkDirect)
	if sw.Efficiency.Source != "fitted" {
		t.Fatalf("NVSwitch efficiency %+v, want fitted on two sources", sw.Efficiency)
	}
	if dp.Efficiency.Source != "pooled" || dp.Efficiency.Value != sw.Efficiency.Value || len(dp.Efficiency.Datasets) != 2 {
		t.Errorf("direct efficiency %+v with one direct source, want the NVSwitch value %v pooled from s1, s2", dp.Efficiency, sw.Efficiency.Value)
	}
	if dp.LatencyFactor.Source != "bound" || dp.LatencyFactor.Value != 1 {
		t.Errorf("direct latency %+v with one direct source, want NCCL's own", dp.LatencyFactor)
	}
	two, err := Fit(ctx, []*Dataset{copyAs(nvs, "s1", "one"), copyAs(nvs, "s2", "two"), copyAs(direct, "d1", "three"), copyAs(direct, "d2", "four")}, build)
	if err != nil {
		t.Fatal(err)
	}
	if dp2, _ := two.For(ClassNVLinkDirect); dp2.Efficiency.Source != "fitted" {
		t.Errorf("direct efficiency %+v with two direct sources, want fitted", dp2.Efficiency)
	}
}

// TestOneNodeRingGatherLatency: in one node a ring AllGather or
// ReduceScatter starts from the latency of the AllReduce cell (the floor
// the published runs measure for the three alike, latencyFunc); across
// nodes it keeps NCCL's own term. Golden values on the 4-GPU NVLink board
// (4 ranks, Ring LL, tuning.cc:148-158 and :289-291, :412): NCCL gives
// AllReduce 6.6 + 6×0.6 = 10.2 µs and AllGather 6.6 + 3×0.6 = 8.4 µs; the
// calibrated AllGather cell takes the 10.2.
func TestOneNodeRingGatherLatency(t *testing.T) {
	for _, tc := range []struct {
		preset string
		nodes  int
		fabric Fabric
	}{
		{"h100-4x-nvlink-4ib", 1, FabricAuto},
		{"h100-sxm-8x", 1, FabricAuto},
		{"a100-sxm-8x", 2, FabricRDMA},
	} {
		s := system(t, tc.preset, tc.nodes, map[string]string{"NCCL_ALGO": "Ring"}, tc.fabric)
		m := s.Model()
		checked := 0
		for _, f := range []tune.Func{tune.AllGather, tune.ReduceScatter} {
			for _, p := range []tune.Protocol{tune.LL, tune.LL128, tune.Simple} {
				if m.Bandwidths[f][tune.Ring][p] == 0 || m.Bandwidths[tune.AllReduce][tune.Ring][p] == 0 {
					continue
				}
				own := float64(m.LatencyTime(f, tune.Ring, p, math.MaxUint64, 1))
				ar := float64(m.LatencyTime(tune.AllReduce, tune.Ring, p, math.MaxUint64, 1))
				want := own
				if tc.nodes == 1 {
					want = ar
					if !(own < ar) {
						t.Errorf("%s %v %v: NCCL's latency %.2f us not below AllReduce's %.2f us", tc.preset, f, p, own, ar)
					}
				}
				if got := cellFor(m, f, tune.Ring, p, 1).lat; math.Abs(got-want) > 1e-6 {
					t.Errorf("%s x%d %v %v: cell latency %.3f us, want %.3f (own %.3f, AllReduce %.3f)", tc.preset, tc.nodes, f, p, got, want, own, ar)
				}
				checked++
			}
		}
		if checked == 0 {
			t.Errorf("%s: no ring AllGather or ReduceScatter cell", tc.preset)
		}
	}
	m := system(t, "h100-4x-nvlink-4ib", 1, nil, FabricAuto).Model()
	for _, g := range []struct {
		f    tune.Func
		want float64
	}{{tune.AllReduce, 10.2}, {tune.AllGather, 8.4}} {
		if got := float64(m.LatencyTime(g.f, tune.Ring, tune.LL, math.MaxUint64, 1)); math.Abs(got-g.want) > 1e-3 {
			t.Errorf("NCCL's %v Ring LL latency on 4 ranks: %.3f us, want %.1f", g.f, got, g.want)
		}
	}
	if got := cellFor(m, tune.AllGather, tune.Ring, tune.LL, 1).lat; math.Abs(got-10.2) > 1e-3 {
		t.Errorf("calibrated AllGather Ring LL cell latency: %.3f us, want 10.2", got)
	}
}

// TestSwitchReducedPlateau: inside one node an NVLS cell's calibrated
// plateau is NCCL's own NVLS bus bandwidth whatever the nvlink efficiency,
// while the node's ring cells scale with it and across nodes NVLS scales
// with the network class's efficiency. The NVLS figure is rebuilt from the
// searched NVLS graph with NCCL's formula (tuning.cc#L307-L321 at
// v2.30.7-1: nChannels × bwIntra × nvlsEfficiency (0.85 for sm90,
// tuning.cc#L139-L144) × (nChannels-1)/nChannels × 2 for AllReduce; the
// algorithm bandwidth NCCL keeps is that × n/(2(n-1)), tuning.cc#L376-L381,
// which nccl-tests' bus factor 2(n-1)/n turns back), so the test also
// fails if the cell stops being the NVLS figure NCCL derated. On the 8x
// H100 preset the search gives 8 channels of 40 GB/s: 476 GB/s.
func TestSwitchReducedPlateau(t *testing.T) {
	s := system(t, "h100-sxm-8x", 1, nil, FabricAuto)
	m, rt := s.Model(), s.Routing()
	if rt.Algo[tune.NVLS] != ClassNVLink || !switchReduced(tune.NVLS, &rt) || switchReduced(tune.Ring, &rt) {
		t.Fatalf("h100-sxm-8x: NVLS routed to %q, Ring to %q", rt.Algo[tune.NVLS], rt.Algo[tune.Ring])
	}
	g := s.Result().Search.NVLS
	if g == nil || g.NChannels < 2 {
		t.Fatalf("h100-sxm-8x: no NVLS graph")
	}
	nch := float64(g.NChannels)
	want := nch * float64(g.BwIntra) * 0.85 * (nch - 1) / nch * 2
	nvls := cellFor(m, tune.AllReduce, tune.NVLS, tune.Simple, 1)
	if math.Abs(nvls.bus-want) > 1e-3*want {
		t.Fatalf("NVLS AllReduce cell %.2f GB/s busbw, want NCCL's %.2f (%d channels of %.2f GB/s)", nvls.bus, want, g.NChannels, g.BwIntra)
	}
	ring := cellFor(m, tune.AllReduce, tune.Ring, tune.Simple, 1)
	for _, eff := range []float64{0.5, 0.99, 1.2} {
		ps := defaultParams()
		ps.eff[classIndex(ClassNVLink)] = eff
		if got := ps.plateau(nvls, &rt); math.Abs(got-nvls.bus) > 1e-9*nvls.bus {
			t.Errorf("nvlink efficiency %v: NVLS plateau %.2f GB/s, want NCCL's %.2f", eff, got, nvls.bus)
		}
		base := defaultParams().plateau(ring, &rt)
		if got := ps.plateau(ring, &rt); math.Abs(got-eff*base) > 1e-9*base {
			t.Errorf("nvlink efficiency %v: ring plateau %.2f GB/s, want %.2f (efficiency x %.2f)", eff, got, eff*base, base)
		}
	}

	two := system(t, "h100-8x-ib", 2, nil, FabricRDMA)
	m2, rt2 := two.Model(), two.Routing()
	checked := 0
	for _, a := range []tune.Algorithm{tune.NVLS, tune.NVLSTree} {
		c := cellFor(m2, tune.AllReduce, a, tune.Simple, 1)
		if c.bus <= 0 {
			continue
		}
		if switchReduced(a, &rt2) || rt2.Algo[a] != ClassNetRDMA {
			t.Fatalf("2 nodes: %v routed to %q", a, rt2.Algo[a])
		}
		ps := defaultParams()
		ps.eff[classIndex(ClassNVLink)], ps.eff[classIndex(ClassNetRDMA)] = 0.5, 0.8
		if got := ps.plateau(c, &rt2); math.Abs(got-0.8*c.bus) > 1e-9*c.bus {
			t.Errorf("2 nodes %v: plateau %.2f GB/s, want the net-rdma efficiency 0.8 x %.2f", a, got, c.bus)
		}
		checked++
	}
	if checked == 0 {
		t.Errorf("2 nodes: no NVLS or NVLS Tree AllReduce cell")
	}
}

// TestSwitchReducedRowsDoNotConstrainEfficiency: a single-node run whose
// large messages NCCL sends through NVLS says nothing about the nvlink
// link efficiency (its plateau is NCCL's NVLS figure), so its plateau rows
// are not counted as support for it; the same run forced onto Ring is.
func TestSwitchReducedRowsDoNotConstrainEfficiency(t *testing.T) {
	sets, build, _ := fixtures(t)
	d := datasetByID(t, sets, "xxrjun-h100-8gpu-nvswitch-allreduce")
	ctx := context.Background()
	p, err := prepare(ctx, d, build)
	if err != nil {
		t.Fatal(err)
	}
	nvlsRows := 0
	for _, r := range p.rows {
		if r.bytes >= PlateauMinBytes && r.c.a == tune.NVLS {
			nvlsRows++
		}
	}
	if nvlsRows == 0 {
		t.Fatalf("%s: no NVLS plateau rows, the test shows nothing", d.ID)
	}
	if p.constrains(ClassNVLink)[paramEfficiency] {
		t.Errorf("%s: %d NVLS plateau rows counted as nvlink efficiency support", d.ID, nvlsRows)
	}
	ring := *d
	ring.System.Env = map[string]string{"NCCL_ALGO": "Ring"}
	pr, err := prepare(ctx, &ring, build)
	if err != nil {
		t.Fatal(err)
	}
	if !pr.constrains(ClassNVLink)[paramEfficiency] {
		t.Errorf("%s with NCCL_ALGO=Ring: plateau rows not counted as nvlink efficiency support", d.ID)
	}
}
