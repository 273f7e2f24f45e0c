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
	// OutOfSample is the calibrated busbw predicted by a fit that did not
	// see the dataset's source, OutOfSampleAPE its error; InBand says
	// whether the measured busbw lies inside the class's error band drawn
	// around that prediction.
	OutOfSample    float64 `json:"out_of_sample_busbw_GBps"`
	OutOfSampleAPE float64 `json:"out_of_sample_ape_pct"`
	InBand         bool    `json:"in_band"`
}

// DatasetReport is the validation of one dataset.
type DatasetReport struct {
	ID         string `json:"id"`
	Collective string `json:"coll"`
	Preset     string `json:"preset"`
	Nodes      int    `json:"nodes"`
	NRanks     int    `json:"nranks"`
	Class      Class  `json:"class"`
	Fitted     bool   `json:"fitted"`
	// Source is the dataset's SourceKey.
	Source string `json:"source"`
	// Anomaly is the dataset's Dataset.Anomaly: its points count in the
	// errors but not in the band coverage.
	Anomaly    string `json:"anomaly,omitempty"`
	Model      Stats  `json:"model"`
	Calibrated Stats  `json:"calibrated"`
	// OutOfSample is the error of the leave-one-source-out prediction.
	OutOfSample Stats   `json:"out_of_sample"`
	Points      []Point `json:"points"`
}

// Medians are medians over datasets of each dataset's median absolute
// percentage error (the summary the project reports: every dataset weighs
// the same, whatever its number of rows).
type Medians struct {
	Model       float64 `json:"model_pct"`
	Calibrated  float64 `json:"calibrated_pct"`
	OutOfSample float64 `json:"out_of_sample_pct"`
	Datasets    int     `json:"datasets"`
}

// ClassReport summarises the datasets whose largest rows fall in one path
// class.
type ClassReport struct {
	Class   Class   `json:"class"`
	Sources int     `json:"sources"`
	Medians Medians `json:"medians"`
	// NCCLModel is the calibration's ClassParams.NCCLModel: when not
	// empty, the class is estimated by NCCL's model, and why.
	NCCLModel string `json:"nccl_model,omitempty"`
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
	// OutOfSample pools the leave-one-source-out errors of every dataset.
	OutOfSample Stats `json:"out_of_sample"`
	// Medians is the median over datasets, Classes the same per class.
	Medians Medians       `json:"medians"`
	Classes []ClassReport `json:"classes"`
	// Sources is the number of independent sources.
	Sources int `json:"sources"`
	// BandCoverage is the share (%) of counted points whose measured busbw
	// lies inside the class's error band drawn around the out-of-sample
	// prediction; BandPoints counts them (the points of datasets with an
	// Anomaly are left out, as from the bands).
	BandCoverage float64 `json:"band_coverage_pct"`
	BandPoints   int     `json:"band_points"`
}

// Validate runs both predictions over every row of every dataset and
// compares busbw with the printed out-of-place busbw. Rows of at least
// minBytes with a positive measured busbw are counted in the statistics.
func Validate(ctx context.Context, sets []*Dataset, build Builder, cal *Calibration, minBytes uint64) (*Report, error) {
	rep := &Report{MinBytes: minBytes}
	var allM, allC, fitM, fitC, allO []float64
	prep, fitted, err := prepareAll(ctx, sets, build)
	if err != nil {
		return nil, fmt.Errorf("validate: %w", err)
	}
	oos, err := outOfSample(ctx, prep, fitted)
	if err != nil {
		return nil, fmt.Errorf("validate: %w", err)
	}
	useModel(prep, oos, paramSetOf(cal).nccl)
	bands := map[Class]Band{}
	for _, cp := range cal.Classes {
		bands[cp.Class] = cp.Band
	}
	var inBand, bandPts int
	for k, d := range sets {
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
		dr := DatasetReport{ID: d.ID, Collective: f.String(), Preset: d.System.Preset, Nodes: d.System.Nodes, NRanks: d.NRanks(), Fitted: d.Fit, Source: d.SourceKey(), Anomaly: d.Anomaly}
		var em, ec, eo []float64
		j := 0 // index into the prepared rows (rows of positive size)
		for _, r := range d.Rows {
			if r.Bytes == 0 {
				continue
			}
			tOut := oos[k][j]
			j++
			e, err := sys.Estimate(tune.Request{Func: f, NBytes: r.Bytes, Datatype: dt})
			if err != nil {
				return nil, fmt.Errorf("validate %s, %d bytes: %w", d.ID, r.Bytes, err)
			}
			pt := Point{Bytes: r.Bytes, Measured: r.BusBwGBps, Model: e.Model.BusBwGBps, Calibrated: e.Calibrated.BusBwGBps,
				Algo: e.Model.Algo, Proto: e.Model.Proto, Class: e.Calibrated.Class, Held: e.Calibrated.Held,
				MeasuredUs: r.TimeUs, ModelUs: e.Model.TimeUs, CalibratedUs: e.Calibrated.TimeUs}
			dr.Class = e.Calibrated.Class
			pt.OutOfSample = BusBwGBps(f, d.NRanks(), r.Bytes, tOut)
			if r.BusBwGBps > 0 {
				pt.ModelAPE = 100 * math.Abs(pt.Model-r.BusBwGBps) / r.BusBwGBps
				pt.CalAPE = 100 * math.Abs(pt.Calibrated-r.BusBwGBps) / r.BusBwGBps
				pt.OutOfSampleAPE = 100 * math.Abs(pt.OutOfSample-r.BusBwGBps) / r.BusBwGBps
				pt.Counted = r.Bytes >= minBytes
				pt.InBand = bands[pt.Class].Contains(pt.OutOfSample, r.BusBwGBps)
			}
			if pt.Counted {
				em, ec, eo = append(em, pt.ModelAPE), append(ec, pt.CalAPE), append(eo, pt.OutOfSampleAPE)
				if d.Anomaly == "" {
					bandPts++
					if pt.InBand {
						inBand++
					}
				}
			}
			dr.Points = append(dr.Points, pt)
		}
		dr.Model, dr.Calibrated, dr.OutOfSample = statsOf(em), statsOf(ec), statsOf(eo)
		allM, allC, allO = append(allM, em...), append(allC, ec...), append(allO, eo...)
		if d.Fit {
			fitM, fitC = append(fitM, em...), append(fitC, ec...)
		}
		rep.Datasets = append(rep.Datasets, dr)
	}
	rep.Overall.Model, rep.Overall.Calibrated = statsOf(allM), statsOf(allC)
	rep.Fitted.Model, rep.Fitted.Calibrated = statsOf(fitM), statsOf(fitC)
	rep.OutOfSample = statsOf(allO)
	if bandPts > 0 {
		rep.BandCoverage, rep.BandPoints = 100*float64(inBand)/float64(bandPts), bandPts
	}
	rep.Medians = mediansOf(rep.Datasets)
	srcs := map[string]bool{}
	for _, d := range rep.Datasets {
		srcs[d.Source] = true
	}
	rep.Sources = len(srcs)
	for _, c := range Classes() {
		var ds []DatasetReport
		cs := map[string]bool{}
		for _, d := range rep.Datasets {
			if d.Class == c {
				ds = append(ds, d)
				cs[d.Source] = true
			}
		}
		if len(ds) > 0 {
			cr := ClassReport{Class: c, Sources: len(cs), Medians: mediansOf(ds)}
			if cp, err := cal.For(c); err == nil {
				cr.NCCLModel = cp.NCCLModel
			}
			rep.Classes = append(rep.Classes, cr)
		}
	}
	return rep, nil
}

// mediansOf is the median over the datasets with counted points of their
// median errors.
func mediansOf(ds []DatasetReport) Medians {
	var m, c, o []float64
	for _, d := range ds {
		if d.Calibrated.N == 0 {
			continue
		}
		m, c, o = append(m, d.Model.MedianPct), append(c, d.Calibrated.MedianPct), append(o, d.OutOfSample.MedianPct)
	}
	if len(m) == 0 {
		return Medians{}
	}
	return Medians{Model: median(m), Calibrated: median(c), OutOfSample: median(o), Datasets: len(m)}
}
