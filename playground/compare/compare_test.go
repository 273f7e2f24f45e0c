package compare

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/data"
	"github.com/distributed-nav/distributed-nav/playground/estimate"
	"github.com/distributed-nav/distributed-nav/playground/model"
	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
	"github.com/distributed-nav/distributed-nav/playground/nccltests"
	"github.com/distributed-nav/distributed-nav/playground/presets"
	"github.com/distributed-nav/distributed-nav/playground/topo"
	"github.com/distributed-nav/distributed-nav/playground/tune"
)

// presetBuilder models preset × nodes with base variables (the user's) and
// p2p as the driver's P2P report ("" keeps the topology's).
func presetBuilder(t *testing.T, preset string, nodes int, base map[string]string, p2p string) Builder {
	t.Helper()
	p, err := presets.Get(preset)
	if err != nil {
		t.Fatal(err)
	}
	host, _, err := p.System()
	if err != nil {
		t.Fatal(err)
	}
	if p2p != "" {
		mode, err := topo.ParseP2PSupport(p2p)
		if err != nil {
			t.Fatal(err)
		}
		c := *host
		c.P2P = mode
		host = &c
	}
	cal, err := estimate.DefaultCalibration()
	if err != nil {
		t.Fatal(err)
	}
	return func(ctx context.Context, extra map[string]string) (*estimate.System, error) {
		env := map[string]string{}
		for k, v := range extra {
			env[k] = v
		}
		for k, v := range base {
			env[k] = v
		}
		res, err := model.Build(ctx, host, nodes, ncclenv.New(env))
		if err != nil {
			return nil, err
		}
		return estimate.NewSystem(res, estimate.FabricAuto, cal)
	}
}

func datasets(t *testing.T) map[string]*estimate.Dataset {
	sets, err := estimate.LoadDatasets(data.Measurements, "measurements")
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]*estimate.Dataset{}
	for _, d := range sets {
		m[d.ID] = d
	}
	return m
}

func parseOne(t *testing.T, text string) *nccltests.Run {
	t.Helper()
	f, err := nccltests.Parse(strings.NewReader(text), nccltests.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Runs) != 1 {
		t.Fatalf("%d runs", len(f.Runs))
	}
	return f.Runs[0]
}

// TestEveryDataset compares every published run with the system its
// dataset names and checks the rows against the dataset and the
// estimator: measured busbw equal to the dataset row, model and
// calibrated busbw equal to estimate.System.Estimate at that size, the
// error its definition.
func TestEveryDataset(t *testing.T) {
	for id, d := range datasets(t) {
		t.Run(id, func(t *testing.T) {
			run := parseOne(t, d.Raw)
			b := presetBuilder(t, d.System.Preset, max(d.System.Nodes, 1), d.System.Env, "")
			res, err := Compare(context.Background(), run, b)
			if err != nil {
				t.Fatal(err)
			}
			if c, _ := nccltests.ParseCollective(res.Coll); string(c) != d.Run.Collective || res.NRanks != d.Hardware.NGPUs || len(res.Rows) != len(d.Rows) {
				t.Fatalf("%s on %d ranks, %d rows", res.Coll, res.NRanks, len(res.Rows))
			}
			sys, err := b(context.Background(), res.Env)
			if err != nil {
				t.Fatal(err)
			}
			f, _ := run.Func()
			dt, _ := nccltests.Datatype(run.Type)
			for i, r := range res.Rows {
				if r.MeasuredBusBw != d.Rows[i].BusBwGBps || r.Bytes != d.Rows[i].Bytes {
					t.Errorf("row %d: measured %v at %d, dataset %v at %d", i, r.MeasuredBusBw, r.Bytes, d.Rows[i].BusBwGBps, d.Rows[i].Bytes)
				}
				e, err := sys.Estimate(tuneReq(f, r.Bytes, dt))
				if err != nil {
					t.Fatal(err)
				}
				if r.CalibratedBusBw != e.Calibrated.BusBwGBps || r.ModelBusBw != e.Model.BusBwGBps {
					t.Errorf("row %d: calibrated %v model %v, estimator %v %v", i, r.CalibratedBusBw, r.ModelBusBw, e.Calibrated.BusBwGBps, e.Model.BusBwGBps)
				}
				if r.MeasuredBusBw > 0 && (r.ErrorPct == nil || *r.ErrorPct != 100*(r.CalibratedBusBw-r.MeasuredBusBw)/r.MeasuredBusBw) {
					t.Errorf("row %d: error %v", i, r.ErrorPct)
				}
			}
			if len(res.Findings) == 0 {
				t.Error("no finding")
			}
			t.Logf("%s: plateau %.2f measured, %.2f calibrated; %s", id, res.Summary.PlateauMeasured, res.Summary.PlateauCalibrated, res.Findings[0].ID)
		})
	}
}

// TestLooksLikeSHM: the published 2x RTX 4090 run that NCCL ran through
// SHM (its log shows "via SHM/direct/direct"), compared with the same box
// modelled with P2P available, is recognised as SHM. The same run against
// the box as it is (P2P unavailable, SHM) is not.
func TestLooksLikeSHM(t *testing.T) {
	d := datasets(t)["rtx4090-2gpu-shm-xsocket-allreduce"]
	if !strings.Contains(d.Raw, "via SHM") {
		t.Fatal("the fixture's log no longer shows SHM")
	}
	run := parseOne(t, d.Raw)
	// P2P expected: the driver reports P2P and NCCL_P2P_LEVEL=SYS lets
	// NCCL use it across the sockets.
	res, err := Compare(context.Background(), run, presetBuilder(t, d.System.Preset, 1, map[string]string{"NCCL_P2P_LEVEL": "SYS"}, "all"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Class != estimate.ClassPCIe && res.Class != estimate.ClassPCIeXSocket && res.Class != estimate.ClassNVLink {
		t.Fatalf("with P2P the class is %s", res.Class)
	}
	if len(res.Findings) != 1 || res.Findings[0].ID != "looks-like-shm" || !strings.Contains(res.Findings[0].Text, "Looks like SHM, P2P is not in use") || res.Findings[0].DoctorRules[0] != ruleP2P {
		t.Fatalf("findings %+v", res.Findings)
	}
	res, err = Compare(context.Background(), run, presetBuilder(t, d.System.Preset, 1, d.System.Env, ""))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Findings {
		if f.ID == "looks-like-shm" {
			t.Fatalf("SHM system reported as SHM-instead-of-P2P: %+v", f)
		}
	}
}

// TestLooksLikeP2P: the published PPIO run on four RTX 4090 with the P2P
// driver (25 GB/s busbw; its dataset sets NCCL_P2P_LEVEL=SYS, which the
// run's NCCL allowed), compared with the box at NCCL v2.30.7's default
// level (four GPUs under an AMD host bridge: SHM, paths.cc), is recognised
// as P2P and told the variable; with NCCL_P2P_LEVEL=SYS it agrees; an SHM
// run on a box without P2P is not called P2P.
func TestLooksLikeP2P(t *testing.T) {
	ds := datasets(t)
	d := ds["ppio-rtx4090-4gpu-p2p-driver"]
	if d.System.Env["NCCL_P2P_LEVEL"] != "SYS" {
		t.Fatalf("the fixture's system env is %v, want NCCL_P2P_LEVEL=SYS", d.System.Env)
	}
	run := parseOne(t, d.Raw)
	res, err := Compare(context.Background(), run, presetBuilder(t, d.System.Preset, 1, nil, ""))
	if err != nil {
		t.Fatal(err)
	}
	if res.Class != estimate.ClassSHM {
		t.Fatalf("at the default level the class is %s, want shm", res.Class)
	}
	if len(res.Findings) != 1 || res.Findings[0].ID != "looks-like-p2p" || !strings.Contains(res.Findings[0].Text, "NCCL_P2P_LEVEL=SYS") {
		t.Fatalf("findings %+v", res.Findings)
	}
	res, err = Compare(context.Background(), run, presetBuilder(t, d.System.Preset, 1, d.System.Env, ""))
	if err != nil {
		t.Fatal(err)
	}
	if res.Findings[0].ID != "agrees" {
		t.Errorf("with the run's NCCL_P2P_LEVEL=SYS: %+v", res.Findings)
	}
	for _, id := range []string{"kalavai-4090-2gpu-k8s", "a40-2gpu-node-p2pdisabled"} {
		d := ds[id]
		res, err := Compare(context.Background(), parseOne(t, d.Raw), presetBuilder(t, d.System.Preset, 1, d.System.Env, ""))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range res.Findings {
			if f.ID == "looks-like-p2p" {
				t.Errorf("%s, an SHM run, is read as P2P: %+v", id, f)
			}
		}
	}
}

// TestFarBelowNIC: a 2-node RoCE run whose busbw is scaled down to a
// quarter of the published one (as a run without GPUDirect RDMA through a
// badly placed NIC might show) is reported as far below the line rate;
// the published run is not.
func TestFarBelowNIC(t *testing.T) {
	d := datasets(t)["oci-h100-2node-16gpu-roce"]
	run := parseOne(t, d.Raw)
	b := presetBuilder(t, d.System.Preset, d.System.Nodes, d.System.Env, "")
	res, err := Compare(context.Background(), run, b)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Findings {
		if f.ID == "far-below-nic" {
			t.Fatalf("published run flagged: %+v", f)
		}
	}
	slow := *run
	slow.Rows = append([]nccltests.Row(nil), run.Rows...)
	for i := range slow.Rows {
		slow.Rows[i].OutOfPlace.BusBwGBps /= 4
	}
	res, err = Compare(context.Background(), &slow, b)
	if err != nil {
		t.Fatal(err)
	}
	if res.Findings[0].ID != "far-below-nic" || !strings.Contains(res.Findings[0].Text, "Check GDR / the NIC's PCIe placement") {
		t.Fatalf("findings %+v", res.Findings)
	}
}

func TestRankMismatch(t *testing.T) {
	d := datasets(t)["tinygrad-4x4090-p2p-7773x"]
	_, err := Compare(context.Background(), parseOne(t, d.Raw), presetBuilder(t, "rtx4090-2x", 1, nil, ""))
	if err == nil || !strings.Contains(err.Error(), "has 4 ranks") {
		t.Fatalf("error %v", err)
	}
}

// TestLinksExist: every page anchor a finding links to is a heading id in
// content/notes.
func TestLinksExist(t *testing.T) {
	for _, l := range []Link{linkP2POff, linkSHM, linkNIC, linkGDR, linkXSocket, linkTopology, linkTransport} {
		page, anchor, _ := strings.Cut(strings.TrimPrefix(l.URL, "/notes/"), "/#")
		b, err := os.ReadFile(filepath.Join("..", "..", "content", "notes", page+".md"))
		if err != nil {
			t.Errorf("%s: %v", l.URL, err)
			continue
		}
		if !strings.Contains(string(b), "{#"+anchor+"}") {
			t.Errorf("%s: no heading {#%s} in %s.md", l.URL, anchor, page)
		}
	}
}

// TestDoctorRulesExist: every doctor rule named is a diagnosis id of
// package doctor.
func TestDoctorRulesExist(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "doctor", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatal(err, files)
	}
	var src strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src.Write(b)
	}
	for _, id := range []string{ruleP2P, ruleNoGDR, ruleNICSock, ruleNetSock} {
		if !regexp.MustCompile(`"` + regexp.QuoteMeta(id) + `"`).MatchString(src.String()) {
			t.Errorf("doctor has no rule %q", id)
		}
	}
}

func tuneReq(f tune.Func, n uint64, dt tune.Datatype) tune.Request {
	return tune.Request{Func: f, NBytes: n, Datatype: dt}
}
