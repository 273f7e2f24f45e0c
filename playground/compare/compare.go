// Package compare puts a user's own nccl-tests run (package nccltests)
// next to what the playground predicts for the system the user named: per
// size, the measured busbw (out-of-place, as nccl-tests prints it), NCCL's
// tuning model, the calibrated estimate with its error band, and the
// errors of both. Where the model can tell, it says what a gap means,
// testing the measurement against the system under another hypothesis
// rather than against a fixed threshold: a plateau that matches the SHM
// estimate of the same machine better than the P2P one "looks like SHM";
// a multi-node plateau far below what NCCL's model derives from the NICs'
// line rate points at GPUDirect RDMA or the NIC's PCIe placement. Each
// finding names the doctor rule that reads the same problem from an
// NCCL_DEBUG=INFO log, and the troubleshooting section about it.
//
// The package knows nothing of the CLI or the browser: callers give it a
// Builder that models the system under an NCCL environment.
package compare

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/distributed-nav/distributed-nav/playground/estimate"
	"github.com/distributed-nav/distributed-nav/playground/nccltests"
	"github.com/distributed-nav/distributed-nav/playground/tune"
)

// Builder models the user's system with extra NCCL variables set on top of
// the user's own (the user's win on a conflict) and returns its estimator.
type Builder func(ctx context.Context, extra map[string]string) (*estimate.System, error)

// Applied lists the NCCL variables a run's log may set that the model
// honours; Compare applies them to the system so that the prediction is
// for the run that was made. Others seen in the log are reported, not
// applied.
var Applied = []string{
	"NCCL_ALGO", "NCCL_PROTO", "NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL", "NCCL_SHM_DISABLE",
	"NCCL_NET_GDR_LEVEL", "NCCL_NET_GDR_READ", "NCCL_IB_DISABLE", "NCCL_MIN_NCHANNELS",
	"NCCL_MAX_NCHANNELS", "NCCL_NVLS_ENABLE", "NCCL_CROSS_NIC",
}

// PlateauMinBytes is the smallest size counted in the plateau the findings
// read (the estimator's band is measured from 1 MiB up too).
const PlateauMinBytes = 1 << 20

// Row is one size of the comparison. Errors are 100 × (predicted −
// measured) / measured, positive when the prediction is too fast; they
// are nil where the measured busbw is 0 (nccl-tests prints 0.00 below
// 5 MB/s).
type Row struct {
	Bytes           uint64   `json:"bytes"`
	Line            int      `json:"line"`
	MeasuredTimeUs  float64  `json:"measured_time_us"`
	MeasuredBusBw   float64  `json:"measured_busbw_GBps"`
	ModelBusBw      float64  `json:"model_busbw_GBps"`
	ModelAlgo       string   `json:"model_algo"`
	ModelProto      string   `json:"model_proto"`
	CalibratedBusBw float64  `json:"calibrated_busbw_GBps"`
	BandLow         float64  `json:"busbw_low_GBps"`
	BandHigh        *float64 `json:"busbw_high_GBps"`
	InBand          bool     `json:"in_band"`
	ErrorPct        *float64 `json:"error_pct"`
	ModelErrorPct   *float64 `json:"model_error_pct"`
}

// Link is a page of the site (URL site-relative, "/notes/...#anchor").
type Link struct {
	Title string `json:"title"`
	URL   string `json:"url"`
}

// Finding is what a gap between the run and the prediction means.
type Finding struct {
	ID       string `json:"id"`
	Severity string `json:"severity"` // "info" or "warning"
	Title    string `json:"title"`
	Text     string `json:"text"`
	// DoctorRules are the ids of the `ncclsim doctor` diagnoses that read
	// the same cause from an NCCL_DEBUG=INFO log.
	DoctorRules []string `json:"doctor_rules,omitempty"`
	Links       []Link   `json:"links"`
}

// Summary condenses the rows at sizes ≥ PlateauMinBytes.
type Summary struct {
	Points int `json:"points"`
	// MedianErrorPct and ModelMedianErrorPct are medians of the absolute
	// errors; InBand counts the points the band covers.
	MedianErrorPct      *float64 `json:"median_error_pct"`
	ModelMedianErrorPct *float64 `json:"model_median_error_pct"`
	InBand              int      `json:"points_in_band"`
	// PlateauMeasured and PlateauCalibrated are medians of the busbw of the
	// largest sizes (the top sixteenth of the size range, at least 1 MiB).
	PlateauMeasured   float64 `json:"plateau_measured_busbw_GBps"`
	PlateauCalibrated float64 `json:"plateau_calibrated_busbw_GBps"`
	PlateauModel      float64 `json:"plateau_model_busbw_GBps"`
}

// Result is the comparison of one run.
type Result struct {
	Coll     string `json:"coll"`
	NRanks   int    `json:"nranks"`
	NNodes   int    `json:"nnodes"`
	Dtype    string `json:"dtype"`
	CollFrom string `json:"coll_from"`
	// NRanksFrom says where the rank count came from (see nccltests.Run).
	NRanksFrom string `json:"nranks_from"`
	HeaderLine int    `json:"header_line"`
	// Env is what the model applied from the run's log; Ignored the
	// NCCL variables the log shows that the model does not use.
	Env     map[string]string `json:"env"`
	Ignored []string          `json:"ignored_env"`
	// Class, Band and Support describe the calibrated estimate at the
	// largest size.
	Class    estimate.Class `json:"class"`
	Band     estimate.Band  `json:"error_band"`
	Support  string         `json:"support"`
	Rows     []Row          `json:"rows"`
	Summary  Summary        `json:"summary"`
	Findings []Finding      `json:"findings"`
}

// Compare compares run with the system build models (build(ctx, nil) is the
// system as the user gave it). The run's rank count must be the system's.
func Compare(ctx context.Context, run *nccltests.Run, build Builder) (*Result, error) {
	if run == nil || len(run.Rows) == 0 {
		return nil, fmt.Errorf("compare: no rows")
	}
	f, ok := run.Func()
	if !ok {
		return nil, fmt.Errorf("compare: the table at line %d is %s, which NCCL's tuning model does not describe as one collective (it models allreduce, allgather, reducescatter, broadcast and reduce)", run.HeaderLine, run.Collective)
	}
	dt, err := nccltests.Datatype(run.Type)
	if err != nil {
		return nil, fmt.Errorf("compare: the table at line %d: %w", run.HeaderLine, err)
	}
	env, ignored := splitEnv(run.Env)
	sys, err := build(ctx, env)
	if err != nil {
		return nil, fmt.Errorf("compare: model the system: %w", err)
	}
	m := sys.Model().Sys
	if m.NRanks != run.NRanks {
		return nil, fmt.Errorf("compare: the run at line %d has %d ranks (%s) and the system %d (%d node(s)); pick a system with as many GPUs: more nodes, or the topology of the machine that ran it (ncclsim compare: --nodes, --xml; --nranks overrides the count the file gives)", run.HeaderLine, run.NRanks, run.NRanksFrom, m.NRanks, m.NNodes)
	}
	res := &Result{Coll: f.String(), NRanks: run.NRanks, NNodes: m.NNodes, Dtype: dt.String(), CollFrom: run.CollectiveFrom,
		NRanksFrom: run.NRanksFrom, HeaderLine: run.HeaderLine, Env: env, Ignored: ignored}
	for _, r := range run.Rows {
		if !r.OutOfPlace.Present {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("compare: %w", err)
		}
		e, err := sys.Estimate(tune.Request{Func: f, NBytes: r.Bytes, Datatype: dt})
		if err != nil {
			return nil, fmt.Errorf("compare: line %d: %w", r.Line, err)
		}
		c := e.Calibrated
		row := Row{Bytes: r.Bytes, Line: r.Line, MeasuredTimeUs: r.OutOfPlace.TimeUs, MeasuredBusBw: r.OutOfPlace.BusBwGBps,
			ModelBusBw: e.Model.BusBwGBps, ModelAlgo: e.Model.Algo, ModelProto: e.Model.Proto,
			CalibratedBusBw: c.BusBwGBps, BandLow: c.BusBwLowGBps, BandHigh: c.BusBwHighGBps}
		if mb := row.MeasuredBusBw; mb > 0 {
			row.ErrorPct = pct(c.BusBwGBps, mb)
			row.ModelErrorPct = pct(e.Model.BusBwGBps, mb)
			row.InBand = mb >= c.BusBwLowGBps*(1-1e-9) && (c.BusBwHighGBps == nil || mb <= *c.BusBwHighGBps*(1+1e-9))
		}
		res.Rows = append(res.Rows, row)
		res.Class, res.Band, res.Support = c.Class, c.Band, c.Support
	}
	if len(res.Rows) == 0 {
		return nil, fmt.Errorf("compare: the table at line %d has no out-of-place results", run.HeaderLine)
	}
	res.Summary = summarize(res.Rows)
	res.Findings, err = findings(ctx, res, build, f, dt)
	if err != nil {
		return nil, err
	}
	return res, nil
}

func pct(pred, meas float64) *float64 {
	v := 100 * (pred - meas) / meas
	return &v
}

// splitEnv keeps the variables of Applied.
func splitEnv(env map[string]string) (map[string]string, []string) {
	keep := map[string]string{}
	var ignored []string
	for k, v := range env {
		applied := false
		for _, a := range Applied {
			if a == k {
				applied = true
				break
			}
		}
		if applied {
			keep[k] = v
		} else {
			ignored = append(ignored, k+"="+v)
		}
	}
	sort.Strings(ignored)
	return keep, ignored
}

// plateauRows are the rows the plateau is read from: sizes of at least
// PlateauMinBytes within a factor 16 of the largest.
func plateauRows(rows []Row) []Row {
	var top uint64
	for _, r := range rows {
		top = max(top, r.Bytes)
	}
	var out []Row
	for _, r := range rows {
		if r.Bytes >= PlateauMinBytes && r.Bytes >= top/16 && r.MeasuredBusBw > 0 {
			out = append(out, r)
		}
	}
	return out
}

func summarize(rows []Row) Summary {
	var s Summary
	var cal, mod []float64
	for _, r := range rows {
		if r.Bytes < PlateauMinBytes || r.ErrorPct == nil {
			continue
		}
		s.Points++
		cal = append(cal, math.Abs(*r.ErrorPct))
		mod = append(mod, math.Abs(*r.ModelErrorPct))
		if r.InBand {
			s.InBand++
		}
	}
	if len(cal) > 0 {
		a, b := median(cal), median(mod)
		s.MedianErrorPct, s.ModelMedianErrorPct = &a, &b
	}
	if p := plateauRows(rows); len(p) > 0 {
		s.PlateauMeasured = median(column(p, func(r Row) float64 { return r.MeasuredBusBw }))
		s.PlateauCalibrated = median(column(p, func(r Row) float64 { return r.CalibratedBusBw }))
		s.PlateauModel = median(column(p, func(r Row) float64 { return r.ModelBusBw }))
	}
	return s
}

func column(rows []Row, get func(Row) float64) []float64 {
	out := make([]float64, len(rows))
	for i, r := range rows {
		out[i] = get(r)
	}
	return out
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
