package main

// This file implements `ncclsim validate`: both predictions (NCCL's model
// and the calibrated estimator) against every measurement dataset, as the
// median and maximum absolute percentage error of busbw for sizes of at
// least --min-bytes, per dataset and overall.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/estimate"
)

// loadCalibration reads a calibration file, or the embedded one when path
// is empty.
func loadCalibration(path string) (*estimate.Calibration, error) {
	if path == "" {
		c, err := estimate.DefaultCalibration()
		if err != nil {
			return nil, fmt.Errorf("built-in calibration: %w", err)
		}
		return c, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read calibration: %w", err)
	}
	c, err := estimate.ParseCalibration(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// runValidate implements `ncclsim validate`.
func runValidate(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("validate", stderr)
	dir := fs.String("data", "", "directory of measurement datasets (default: the copy of data/measurements built into ncclsim)")
	calPath := fs.String("calibration", "", "calibration file (default: the copy of data/calibration.yaml built into ncclsim)")
	minFlag := fs.String("min-bytes", "1M", "smallest message size counted in the statistics (suffixes K/M/G)")
	points := fs.Bool("points", false, "also print every row (table output)")
	asJSON := fs.Bool("json", false, "print JSON (always with every row)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: ncclsim validate [--data DIR] [--calibration FILE] [--min-bytes N] [--points] [--json]")
		fmt.Fprintln(stderr, "Compares NCCL's model and the calibrated estimator with every published run (busbw, out-of-place).")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	minBytes, err := parseByteCount(*minFlag)
	if err != nil {
		return usagef("--min-bytes: %v", err)
	}
	sets, err := loadMeasurements(*dir)
	if err != nil {
		return err
	}
	cal, err := loadCalibration(*calPath)
	if err != nil {
		return err
	}
	rep, err := estimate.Validate(ctx, sets, estimate.CachedBuilder(estimate.BuildPreset), cal, minBytes)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return fmt.Errorf("write JSON: %w", err)
		}
		return nil
	}
	_, err = io.WriteString(stdout, formatValidate(rep, *points))
	if err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

// formatValidate renders the report as a table.
func formatValidate(rep *estimate.Report, points bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "busbw absolute percentage error, sizes >= %d bytes (out-of-place times; model = NCCL v2.30.7-1 tuning model, cal = calibrated)\n\n", rep.MinBytes)
	fmt.Fprintf(&b, "%-55s %-13s %-11s %5s %4s  %10s %10s  %10s %10s\n", "DATASET", "COLL", "CLASS", "RANKS", "N", "MODEL MED", "MODEL MAX", "CAL MED", "CAL MAX")
	for _, d := range rep.Datasets {
		id := d.ID
		if !d.Fitted {
			id += " (not fitted)"
		}
		fmt.Fprintf(&b, "%-55s %-13s %-11s %5d %4d  %9.1f%% %9.1f%%  %9.1f%% %9.1f%%\n", id, d.Collective, d.Class, d.NRanks, d.Calibrated.N,
			d.Model.MedianPct, d.Model.MaxPct, d.Calibrated.MedianPct, d.Calibrated.MaxPct)
	}
	fmt.Fprintf(&b, "%-55s %-13s %-11s %5s %4d  %9.1f%% %9.1f%%  %9.1f%% %9.1f%%\n", "OVERALL (all points pooled)", "", "", "", rep.Overall.Calibrated.N,
		rep.Overall.Model.MedianPct, rep.Overall.Model.MaxPct, rep.Overall.Calibrated.MedianPct, rep.Overall.Calibrated.MaxPct)
	fmt.Fprintf(&b, "%-55s %-13s %-11s %5s %4d  %9.1f%% %9.1f%%  %9.1f%% %9.1f%%\n", "FITTED DATASETS ONLY", "", "", "", rep.Fitted.Calibrated.N,
		rep.Fitted.Model.MedianPct, rep.Fitted.Model.MaxPct, rep.Fitted.Calibrated.MedianPct, rep.Fitted.Calibrated.MaxPct)
	if !points {
		return b.String()
	}
	for _, d := range rep.Datasets {
		fmt.Fprintf(&b, "\n%s (%s x%d, %d ranks)\n", d.ID, d.Preset, d.Nodes, d.NRanks)
		fmt.Fprintf(&b, "  %14s %-16s %10s %10s %10s %8s %8s\n", "BYTES", "MODEL PICK", "MEASURED", "MODEL", "CAL", "MODEL%", "CAL%")
		for _, p := range d.Points {
			mark := ""
			if p.Held {
				mark = " held"
			}
			if !p.Counted {
				mark += " (not counted)"
			}
			fmt.Fprintf(&b, "  %14d %-16s %10.3f %10.3f %10.3f %7.1f%% %7.1f%%%s\n", p.Bytes, p.Algo+"/"+p.Proto, p.Measured, p.Model, p.Calibrated, p.ModelAPE, p.CalAPE, mark)
		}
	}
	return b.String()
}
