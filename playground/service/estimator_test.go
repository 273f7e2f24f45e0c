package service

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/data"
	"github.com/distributed-nav/distributed-nav/playground/estimate"
)

// pastedRun is the published 2x RTX 4090 SHM AllReduce run as its author
// posted it (data/measurements), the system the estimator opens on.
func pastedRun(t *testing.T) string {
	t.Helper()
	sets, err := estimate.LoadDatasets(data.Measurements, "measurements")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range sets {
		if d.ID == "rtx4090-2gpu-shm-xsocket-allreduce" && strings.TrimSpace(d.Raw) != "" {
			return d.Raw
		}
	}
	t.Fatal("dataset rtx4090-2gpu-shm-xsocket-allreduce (with its raw text) missing")
	return ""
}

// The estimator page with a pasted run answers what the compare question
// answers for the same system (the same encoded JSON), draws the run over
// the curves of its own collective only, and lists it per size; a text
// that does not read is a nccl_tests error of the page while the curves
// stay.
func TestEstimatorPageComparesPastedRun(t *testing.T) {
	ctx := context.Background()
	s := New()
	raw := pastedRun(t)
	req := &Request{Preset: EstimatorDefaultPreset, Coll: "allreduce", Bytes: "64M", NCCLTests: raw}
	p, err := s.EstimatorPage(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if p.CompareError != nil || p.Compare == nil {
		t.Fatalf("compare %v, error %v", p.Compare, p.CompareError)
	}
	want, err := New().Compare(ctx, req, CompareRequest{NCCLTests: NCCLTestsInput{Text: strings.NewReader(raw), Name: "pasted output"}})
	if err != nil {
		t.Fatal(err)
	}
	gj, _ := json.Marshal(p.Compare)
	wj, _ := json.Marshal(want)
	if string(gj) != string(wj) {
		t.Errorf("the page's comparison differs from the compare question's:\n%s\n%s", gj, wj)
	}
	if !p.CompareDrawn || !strings.HasPrefix(p.CompareCommand, "ncclsim compare --preset "+EstimatorDefaultPreset+" --nccl-tests FILE") {
		t.Errorf("drawn %t, command %q", p.CompareDrawn, p.CompareCommand)
	}
	figs := map[string]string{}
	for _, f := range p.Figures {
		figs[f.Name] = f.Markup
	}
	// One series, and its legend entry, in each of the chart's two
	// drawings (full width and narrow); the full-width one is checked.
	if n := strings.Count(figs["busbw"], "</svg>"); n != 2 {
		t.Errorf("busbw chart has %d drawings, want the full-width and the narrow one", n)
	}
	figs["busbw"] = figs["busbw"][:strings.Index(figs["busbw"], "</svg>")]
	if n := strings.Count(figs["busbw"], `data-series="your run (`); n != 1 {
		t.Errorf("busbw chart holds %d 'your run' series, want 1", n)
	}
	if n := strings.Count(figs["busbw"], `class="pg-s3 pg-yours"`); n != 2 {
		t.Errorf("busbw chart: 'your run' class %d times, want the series and its legend entry", n)
	}
	if got, want := strings.Count(figs["compare"], `data-row="compare"`), len(want.Rows); got != want || want == 0 {
		t.Errorf("compare table has %d rows, the run %d sizes", got, want)
	}

	// Another collective: compared, but not drawn on the AllGather curves.
	req.Coll = "allgather"
	if p, err = s.EstimatorPage(ctx, req); err != nil || p.Compare == nil || p.CompareDrawn {
		t.Errorf("allgather page: err %v, compare %v, drawn %t", err, p.Compare != nil, p != nil && p.CompareDrawn)
	}

	req.Coll = "allreduce"
	req.NCCLTests = "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n 1048576 262144 float sum -1 abc 1 1 0 1 1 1 0\n"
	p, err = s.EstimatorPage(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if p.CompareError == nil || p.CompareError.Field != "nccl_tests" || !strings.Contains(p.CompareError.Message, "line 2") {
		t.Errorf("bad paste: %+v", p.CompareError)
	}
	if p.Compare != nil || len(p.Figures) != 3 {
		t.Errorf("bad paste: compare %v, %d figures (the curves and the table stay)", p.Compare != nil, len(p.Figures))
	}
}

// TestShownRows checks which pasted rows the estimator page draws: every
// row up to MaxShownCompareRows, else that many from the first row to the
// last, evenly spaced (index i*(n-1)/(k-1)), never a row twice.
func TestShownRows(t *testing.T) {
	for _, n := range []int{0, 1, 2, MaxShownCompareRows, MaxShownCompareRows + 1, 8192} {
		got := shownRows(n)
		if want := min(n, MaxShownCompareRows); len(got) != want {
			t.Fatalf("shownRows(%d) has %d rows, want %d", n, len(got), want)
		}
		for i, r := range got {
			if i > 0 && r <= got[i-1] {
				t.Fatalf("shownRows(%d)[%d] = %d after %d: not increasing", n, i, r, got[i-1])
			}
		}
		if n > 0 && (got[0] != 0 || got[len(got)-1] != n-1) {
			t.Errorf("shownRows(%d) runs %d..%d, want 0..%d", n, got[0], got[len(got)-1], n-1)
		}
	}
}

// A published run is drawn only on an estimate of its own NCCL environment
// (its dataset's system.env, here NCCL_P2P_LEVEL=SYS for the PPIO 4x RTX
// 4090 run); under another environment it is listed in OtherEnv, with its
// environment and without rows. The environment matches however the user
// writes it (spaces around the name and value, a repeated name: the last wins).
func TestEstimatorPageMatchesEnvironment(t *testing.T) {
	const id = "ppio-rtx4090-4gpu-p2p-driver"
	has := func(ms []Measurement) *Measurement {
		for i := range ms {
			if ms[i].ID == id {
				return &ms[i]
			}
		}
		return nil
	}
	for _, tc := range []struct {
		name  string
		env   []string
		drawn bool
	}{
		{"NCCL's defaults", nil, false},
		{"the run's environment", []string{"NCCL_P2P_LEVEL=SYS"}, true},
		{"written loosely", []string{" NCCL_P2P_LEVEL = PXB ", "NCCL_P2P_LEVEL=SYS "}, true},
		{"another value", []string{"NCCL_P2P_LEVEL=PHB"}, false},
		{"one more variable", []string{"NCCL_P2P_LEVEL=SYS", "NCCL_ALGO=Ring"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New().EstimatorPage(context.Background(), &Request{Preset: "rtx4090-4x-1socket-p2p-driver", Coll: "allreduce", Bytes: "64M", Env: tc.env})
			if err != nil {
				t.Fatal(err)
			}
			drawn, listed := has(p.Measurements), has(p.OtherEnv)
			if (drawn != nil) != tc.drawn || (listed != nil) == tc.drawn {
				t.Fatalf("drawn %v, listed %v; want drawn %v", drawn != nil, listed != nil, tc.drawn)
			}
			if listed != nil && (len(listed.Rows) != 0 || strings.Join(listed.Env, " ") != "NCCL_P2P_LEVEL=SYS") {
				t.Errorf("listed with %d rows and env %v, want no rows and NCCL_P2P_LEVEL=SYS", len(listed.Rows), listed.Env)
			}
		})
	}
}
