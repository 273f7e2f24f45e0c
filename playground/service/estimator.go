package service

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/compare"
	"github.com/distributed-nav/distributed-nav/playground/estimate"
	"github.com/distributed-nav/distributed-nav/playground/figure"
	"github.com/distributed-nav/distributed-nav/playground/tune"
)

// EstimatorDefaultPreset is the system the estimator page opens on: the
// card's RTX 4090 box with P2P unavailable, for which published
// measurements of AllReduce, AllGather and ReduceScatter exist.
const EstimatorDefaultPreset = "rtx4090-2x-2socket"

// EstimatorPage is the estimator page's answer: Result is `ncclsim
// estimate --json` at the chosen size; Sweep holds, for every size from
// 8 B to 8 GiB, NCCL's model and the calibrated estimate (time and busbw)
// with the busbw range of the class's error band; Measurements the
// published runs of the same preset, node count, collective and NCCL
// environment, with their sources, and OtherEnv (without rows) those of
// the same preset, node count and collective measured under another NCCL
// environment, which are not drawn: the curves model the request's
// environment, and a run with NCCL_P2P_DISABLE=1 next to a P2P estimate
// would read as a model error. The figures are "busbw" and "time" (model and calibrated
// curves, the band, the measured points linked to their sources) and
// "estimate" (the table at the chosen size, with formulas).
//
// With the user's nccl-tests output (Request.NCCLTests), Compare is the
// answer `ncclsim compare --json` gives for it on the same system,
// CompareDrawn says whether its points are on the curves (the run is of
// the chosen collective), CompareCommand is that command line, and the
// figure "compare" is its table per size; a problem with the text is
// CompareError (the curves stay).
type EstimatorPage struct {
	Result         *EstimateResult `json:"result"`
	Sweep          Sweep           `json:"sweep"`
	Measurements   []Measurement   `json:"measurements"`
	OtherEnv       []Measurement   `json:"other_env"`
	Problems       []Problem       `json:"problems"`
	Command        string          `json:"command"`
	Compare        *CompareResult  `json:"compare,omitempty"`
	CompareDrawn   bool            `json:"compare_drawn,omitempty"`
	CompareCommand string          `json:"compare_command,omitempty"`
	CompareError   *FieldError     `json:"compare_error,omitempty"`
	Figures        []Figure        `json:"-"`
}

// Sweep is the estimator's curves, one value per size (null where the
// band has no upper end).
type Sweep struct {
	Sizes               []uint64   `json:"sizes"`
	ModelTimeUs         []float64  `json:"model_time_us"`
	ModelBusBwGBps      []float64  `json:"model_busbw_GBps"`
	CalibratedTimeUs    []float64  `json:"calibrated_time_us"`
	CalibratedBusBwGBps []float64  `json:"calibrated_busbw_GBps"`
	BusBwLowGBps        []float64  `json:"busbw_low_GBps"`
	BusBwHighGBps       []*float64 `json:"busbw_high_GBps"`
}

// Measurement is one published run drawn next to the estimate.
type Measurement struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	URL         string `json:"url"`
	Date        string `json:"date"`
	GPU         string `json:"gpu"`
	NGPUs       int    `json:"ngpus"`
	NNodes      int    `json:"nnodes"`
	NCCLVersion string `json:"nccl_version"`
	Dtype       string `json:"dtype"`
	Fit         bool   `json:"fit"`
	// Env is the NCCL environment of the run that the model applies
	// (NAME=VALUE, sorted by name; empty for NCCL's defaults).
	Env  []string         `json:"env"`
	Rows []MeasurementRow `json:"rows"`
	// PublishedRows counts the run's rows as published; Rows holds those
	// the page draws (pageRows: a few per factor of two of the size).
	PublishedRows int `json:"published_rows"`
}

// MeasurementRow is one size of a published run.
type MeasurementRow struct {
	Bytes     uint64  `json:"bytes"`
	TimeUs    float64 `json:"time_us"`
	BusBwGBps float64 `json:"busbw_GBps"`
}

// EstimatorPage answers the estimator page for req.
func (s *Service) EstimatorPage(ctx context.Context, req *Request) (*EstimatorPage, error) {
	r, es, e, err := s.estimate(ctx, req)
	if err != nil {
		return nil, err
	}
	f, _, dt, _ := estimateInputs(req)
	sweep, err := es.Sweep(ctx, f, SweepSizes(), tune.Request{Datatype: dt})
	if err != nil {
		return nil, &FieldError{Field: "coll", Message: err.Error()}
	}
	// The published runs of the same preset, node count and collective,
	// from the table generated from data/measurements (publishedRuns):
	// drawn when measured under the request's NCCL environment, listed
	// otherwise.
	var match []Measurement
	other := []Measurement{}
	if req.Preset != "" {
		env, _, err := parseEnv(req.Env) // as s.estimate read it
		if err != nil {
			return nil, err
		}
		want := assignments(env)
		for _, run := range publishedRuns {
			if run.coll != f.String() || run.preset != req.Preset || max(run.nodes, 1) != r.NNodes {
				continue
			}
			if slices.Equal(run.m.Env, want) {
				match = append(match, run.m)
			} else {
				m := run.m
				m.Rows = []MeasurementRow{}
				other = append(other, m)
			}
		}
	}
	p := &EstimatorPage{Result: r, Measurements: []Measurement{}, OtherEnv: other, Problems: r.Problems, Command: commandLine("estimate", req, nil)}
	sw := &p.Sweep
	for i := range sweep {
		x := &sweep[i]
		sw.Sizes = append(sw.Sizes, x.Bytes)
		sw.ModelTimeUs = append(sw.ModelTimeUs, x.Model.TimeUs)
		sw.ModelBusBwGBps = append(sw.ModelBusBwGBps, x.Model.BusBwGBps)
		sw.CalibratedTimeUs = append(sw.CalibratedTimeUs, x.Calibrated.TimeUs)
		sw.CalibratedBusBwGBps = append(sw.CalibratedBusBwGBps, x.Calibrated.BusBwGBps)
		sw.BusBwLowGBps = append(sw.BusBwLowGBps, x.Calibrated.BusBwLowGBps)
		sw.BusBwHighGBps = append(sw.BusBwHighGBps, x.Calibrated.BusBwHighGBps)
	}
	p.Measurements = append(p.Measurements, match...)
	var yours *compare.Result
	var table *Figure
	if strings.TrimSpace(req.NCCLTests) != "" {
		yours, table = s.comparePasted(ctx, req, f, p)
	}
	p.Figures = []Figure{
		{"busbw", estimatorChart(es, f, sweep, match, yours, true)},
		{"time", estimatorChart(es, f, sweep, match, yours, false)},
		{"estimate", estimateTable(es, e, f)},
	}
	if table != nil {
		p.Figures = append(p.Figures, *table)
	}
	return p, nil
}

// linkable returns u when it is a web address, else "".
func linkable(u string) string {
	if strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://") {
		return u
	}
	return ""
}

// estimatorChart draws busbw (or time) against size: NCCL's model, the
// calibrated estimate with its error band, and the measured points.
func estimatorChart(es *estimate.System, f tune.Func, sweep []estimate.Estimate, sets []Measurement, yours *compare.Result, busbw bool) string {
	bf := tune.BusBwFactor(f, es.Model().Sys.NRanks)
	model := figure.Series{Name: "NCCL model", Class: "pg-s1 pg-dash1"}
	cal := figure.Series{Name: "calibrated", Class: "pg-s0 pg-dash2"}
	band := figure.Series{Name: "error band", Class: "pg-s0", Kind: figure.Band}
	for _, x := range sweep {
		X := float64(x.Bytes)
		mv, cv := x.Model.BusBwGBps, x.Calibrated.BusBwGBps
		lo, hi := x.Calibrated.BusBwLowGBps, math.NaN()
		if x.Calibrated.BusBwHighGBps != nil {
			hi = *x.Calibrated.BusBwHighGBps
		}
		if !busbw {
			mv, cv = x.Model.TimeUs, x.Calibrated.TimeUs
			// The busbw band as a time band: t = bus bytes / busbw.
			sb := X * bf / 1e3
			l, h := sb/hi, sb/lo
			if math.IsNaN(hi) {
				l = math.NaN()
			}
			lo, hi = l, h
		}
		model.Points = append(model.Points, figure.Point{X: X, Y: mv, Title: "NCCL model at " + figure.Bytes(X) + ": " + x.Model.Algo + "/" + x.Model.Proto + ", " + valueText(mv, busbw)})
		cal.Points = append(cal.Points, figure.Point{X: X, Y: cv, Title: "calibrated at " + figure.Bytes(X) + ": " + valueText(cv, busbw)})
		// An unbounded side (NaN) reaches the edge of the plot.
		band.Points = append(band.Points, figure.Point{X: X})
		band.Lower = append(band.Lower, lo)
		band.Upper = append(band.Upper, hi)
	}
	series := []figure.Series{band, model, cal}
	for i, d := range sets {
		s := figure.Series{Name: "measured (" + strconv.Itoa(len(d.Rows)) + " sizes)", Class: figure.SeriesClass(4 + i), Kind: figure.Markers}
		for _, r := range d.Rows {
			v := r.BusBwGBps
			if !busbw {
				v = r.TimeUs
			}
			s.Points = append(s.Points, figure.Point{X: float64(r.Bytes), Y: v, Href: linkable(d.URL),
				Title: d.ID + " at " + figure.Bytes(float64(r.Bytes)) + ": " + valueText(v, busbw) + " (" + d.Title + ")"})
		}
		series = append(series, s)
	}
	if yours != nil {
		series = append(series, yourSeries(yours, busbw))
	}
	opts := figure.ChartOptions{XLabel: "message size (nccl-tests size)", XUnit: figure.UnitBytes, YLog: true}
	if busbw {
		opts.Label = f.String() + " bus bandwidth against size: NCCL's model, the calibrated estimate with its error band, and published measurements"
		opts.YLabel, opts.YUnit = "busbw", figure.UnitGBps
	} else {
		opts.Label = f.String() + " time against size: NCCL's model, the calibrated estimate with its error band, and published measurements"
		opts.YLabel, opts.YUnit = "time", figure.UnitMicros
	}
	return figure.TimeChart(series, opts)
}

func valueText(v float64, busbw bool) string {
	if busbw {
		return figure.Short(v, 3) + " GB/s busbw"
	}
	return figure.Duration(v)
}

// estimateTable compares the model and the calibrated estimate at one size
// and shows how each number was computed.
func estimateTable(es *estimate.System, e *estimate.Estimate, f tune.Func) string {
	n := es.Model().Sys.NRanks
	bf := tune.BusBwFactor(f, n)
	sbus := float64(e.Bytes) * bf
	row := func(name string, p estimate.Prediction, formula []string) figure.Row {
		return figure.Row{Attr: strings.ToLower(strings.Fields(name)[0]), Formula: formula, Cells: []figure.Cell{
			{Text: name},
			{Text: p.Algo + "/" + p.Proto},
			{Text: figure.Fixed(p.TimeUs, 2), Value: f64s(p.TimeUs)},
			{Text: figure.Fixed(p.AlgBwGBps, 2), Value: f64s(p.AlgBwGBps)},
			{Text: figure.Fixed(p.BusBwGBps, 2), Value: f64s(p.BusBwGBps)},
		}}
	}
	busText := "busbw = algbw × " + busFactorText(f, strconv.Itoa(n)) + " = " + figure.Short(bf, 4)
	mf := []string{
		"time = latency × 1 + nBytes / (1000 × bandwidth) = " + figure.Short(e.ModelLatencyUs, 2) + " µs + " + strconv.FormatUint(e.Bytes, 10) + " B / (1000 × " + figure.Short(e.ModelBandwidthGBps, 2) + " GB/s), with the size corrections of ncclTopoGetAlgoTime = " + figure.Short(e.Model.TimeUs, 2) + " µs",
		"algbw = size / time; " + busText,
	}
	c := e.Calibrated
	var cf []string
	if c.Class == "" {
		cf = []string{c.Support}
	} else {
		gamma := ""
		if cp, err := es.Calibration().For(c.Class); err == nil {
			gamma = figure.Short(cp.RampGamma.Value, 3)
		}
		formula := "t = λ·L + Sbus / (η·B) / (1 − exp(−(Sbus / ρ)^γ)) with Sbus = size × " + figure.Short(bf, 4) + " = " + figure.Short(sbus, 0) + " bus bytes, λ·L = " + figure.Short(c.LatencyUs, 2) + " µs, η·B = " + figure.Short(c.PlateauBusBwGBps, 3) + " GB/s, ρ = " + figure.Short(c.RampBusBytes, 0) + " bytes, γ = " + gamma + " → " + figure.Short(c.TimeUs, 2) + " µs"
		if c.RampBusBytes == 0 {
			formula = "t = NCCL's model time, " + figure.Short(c.TimeUs, 2) + " µs: the class is on NCCL's own model (see below)"
		}
		cf = []string{
			"path class " + string(c.Class) + ": " + c.Class.Describe(),
			formula,
			"algbw = size / time; " + busText,
			"error band of the class, out of sample (each point predicted without its own source): −" + figure.Short(c.Band.UnderPct, 1) + " % … +" + figure.Short(c.Band.OverPct, 1) + " %, median " + figure.Short(c.Band.MedianPct, 1) + " %, max " + figure.Short(c.Band.MaxPct, 1) + " % over " + strconv.Itoa(c.Band.Points) + " points of " + strconv.Itoa(c.Band.Datasets) + " datasets from " + strconv.Itoa(c.Band.Sources) + " independent sources; " + strconv.Itoa(c.NSources) + " independent source(s) behind the class's efficiency; " + c.Support,
		}
		if c.Held {
			cf = append(cf, "held at the time of "+strconv.FormatUint(c.HeldFromBytes, 10)+" bytes: NCCL's switch to "+c.Algo+"/"+c.Proto+" would make the calibrated time drop here")
		}
	}
	return figure.Table(figure.TableSpec{
		Caption: f.String() + " of " + figure.Bytes(float64(e.Bytes)) + " on " + strconv.Itoa(n) + " ranks: what NCCL's model predicts and what the calibrated estimator expects nccl-tests to measure",
		Head:    []string{"estimate", "algorithm/protocol", "time (µs)", "algbw (GB/s)", "busbw (GB/s)"},
		Class:   "pg-estimate",
		Rows:    []figure.Row{row("NCCL model", e.Model, mf), row("calibrated", c.Prediction, cf)},
	})
}

// yourSeries is the user's run as markers over the estimator's curves.
func yourSeries(c *compare.Result, busbw bool) figure.Series {
	shown := shownRows(len(c.Rows))
	name := "your run (" + strconv.Itoa(len(c.Rows)) + " sizes)"
	if len(shown) < len(c.Rows) {
		name = "your run (" + strconv.Itoa(len(shown)) + " of " + strconv.Itoa(len(c.Rows)) + " sizes)"
	}
	s := figure.Series{Name: name, Class: "pg-s3 pg-yours", Kind: figure.Markers}
	for _, i := range shown {
		r := c.Rows[i]
		v := r.MeasuredBusBw
		if !busbw {
			v = r.MeasuredTimeUs
		}
		s.Points = append(s.Points, figure.Point{X: float64(r.Bytes), Y: v,
			Title: "your run at " + figure.Bytes(float64(r.Bytes)) + " (line " + strconv.Itoa(r.Line) + "): " + valueText(v, busbw)})
	}
	return s
}

// MaxShownCompareRows is how many rows of a pasted run the estimator page
// draws, in its table and as chart points: a doubling sweep (nccl-tests -f 2)
// from 1 B to 2^63 B is 64 rows, so this is every row of any real sweep with
// room for two runs; more rows (a linear -i sweep, a pasted repetition)
// would only cost the page its responsiveness, and the reply's JSON keeps
// every row.
const MaxShownCompareRows = 128

// shownRows returns the indices of the rows of n the page draws: all of
// them up to MaxShownCompareRows, else that many evenly spaced from the
// first to the last.
func shownRows(n int) []int {
	k := min(n, MaxShownCompareRows)
	out := make([]int, k)
	for i := range out {
		out[i] = i
		if k < n && k > 1 {
			out[i] = i * (n - 1) / (k - 1)
		}
	}
	return out
}
