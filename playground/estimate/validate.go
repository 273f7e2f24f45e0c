package estimate

import (
	"context"
	"fmt"
	"math"

	"github.com/distributed-nav/distributed-nav/playground/tune"
)

// Stats summarises absolute percentage errors.
type Stats struct {
	MedianPct float64 `json:"median_ape_pct"`
	MaxPct    float64 `json:"max_ape_pct"`
	N         int     `json:"n"`
}

func statsOf(e []float64) Stats {
	if len(e) == 0 {
		return Stats{}
	}
	return Stats{MedianPct: median(e), MaxPct: maxOf(e), N: len(e)}
}

// Point compares one measured row with both predictions (busbw, GB/s).
type Point struct {
	Bytes        uint64  `json:"bytes"`
	Measured     float64 `json:"measured_busbw_GBps"`
	Model        float64 `json:"model_busbw_GBps"`
	Calibrated   float64 `json:"calibrated_busbw_GBps"`
	ModelAPE     float64 `json:"model_ape_pct"`
	CalAPE       float64 `json:"calibrated_ape_pct"`
	Algo         string  `json:"algo"`
	Proto        string  `json:"proto"`
	Class        Class   `json:"class"`
	Held         bool    `json:"held"`
	Counted      bool    `json:"counted"`
	MeasuredUs   float64 `json:"measured_time_us"`
	ModelUs      float64 `json:"model_time_us"`
	CalibratedUs float64 `json:"calibrated_time_us"`
}

// DatasetReport is the validation of one dataset.
type DatasetReport struct {
	ID         string  `json:"id"`
	Collective string  `json:"coll"`
	Preset     string  `json:"preset"`
	Nodes      int     `json:"nodes"`
	NRanks     int     `json:"nranks"`
	Class      Class   `json:"class"`
	Fitted     bool    `json:"fitted"`
	Model      Stats   `json:"model"`
	Calibrated Stats   `json:"calibrated"`
	Points     []Point `json:"points"`
}

// Report is the validation of every dataset. Overall pools the counted
// points of all datasets (each point weighs the same).
type Report struct {
	MinBytes uint64          `json:"min_bytes"`
	Datasets []DatasetReport `json:"datasets"`
	Overall  struct {
		Model      Stats `json:"model"`
		Calibrated Stats `json:"calibrated"`
	} `json:"overall"`
	// Fitted pools only the datasets the calibration was fitted on.
	Fitted struct {
		Model      Stats `json:"model"`
		Calibrated Stats `json:"calibrated"`
	} `json:"fitted"`
}

// Validate runs both predictions over every row of every dataset and
// compares busbw with the printed out-of-place busbw. Rows of at least
// minBytes with a positive measured busbw are counted in the statistics.
func Validate(ctx context.Context, sets []*Dataset, build Builder, cal *Calibration, minBytes uint64) (*Report, error) {
	rep := &Report{MinBytes: minBytes}
	var allM, allC, fitM, fitC []float64
	for _, d := range sets {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("validate: %w", err)
		}
		res, err := build(ctx, d.System)
		if err != nil {
			return nil, fmt.Errorf("validate %s: %w", d.ID, err)
		}
		if res.Tune.Sys.NRanks != d.NRanks() {
			return nil, fmt.Errorf("validate %s: preset has %d ranks, the run %d", d.ID, res.Tune.Sys.NRanks, d.NRanks())
		}
		sys, err := NewSystem(res, FabricOf(d.System), cal)
		if err != nil {
			return nil, fmt.Errorf("validate %s: %w", d.ID, err)
		}
		f, err := d.Func()
		if err != nil {
			return nil, err
		}
		dt, err := d.Datatype()
		if err != nil {
			return nil, err
		}
		dr := DatasetReport{ID: d.ID, Collective: f.String(), Preset: d.System.Preset, Nodes: d.System.Nodes, NRanks: d.NRanks(), Fitted: d.Fit}
		var em, ec []float64
		for _, r := range d.Rows {
			if r.Bytes == 0 {
				continue
			}
			e, err := sys.Estimate(tune.Request{Func: f, NBytes: r.Bytes, Datatype: dt})
			if err != nil {
				return nil, fmt.Errorf("validate %s, %d bytes: %w", d.ID, r.Bytes, err)
			}
			pt := Point{Bytes: r.Bytes, Measured: r.BusBwGBps, Model: e.Model.BusBwGBps, Calibrated: e.Calibrated.BusBwGBps,
				Algo: e.Model.Algo, Proto: e.Model.Proto, Class: e.Calibrated.Class, Held: e.Calibrated.Held,
				MeasuredUs: r.TimeUs, ModelUs: e.Model.TimeUs, CalibratedUs: e.Calibrated.TimeUs}
			dr.Class = e.Calibrated.Class
			if r.BusBwGBps > 0 {
				pt.ModelAPE = 100 * math.Abs(pt.Model-r.BusBwGBps) / r.BusBwGBps
				pt.CalAPE = 100 * math.Abs(pt.Calibrated-r.BusBwGBps) / r.BusBwGBps
				pt.Counted = r.Bytes >= minBytes
			}
			if pt.Counted {
				em, ec = append(em, pt.ModelAPE), append(ec, pt.CalAPE)
			}
			dr.Points = append(dr.Points, pt)
		}
		dr.Model, dr.Calibrated = statsOf(em), statsOf(ec)
		allM, allC = append(allM, em...), append(allC, ec...)
		if d.Fit {
			fitM, fitC = append(fitM, em...), append(fitC, ec...)
		}
		rep.Datasets = append(rep.Datasets, dr)
	}
	rep.Overall.Model, rep.Overall.Calibrated = statsOf(allM), statsOf(allC)
	rep.Fitted.Model, rep.Fitted.Calibrated = statsOf(fitM), statsOf(fitC)
	return rep, nil
}
