package main

// This file implements `ncclsim validate`: both predictions (NCCL's model
// and the calibrated estimator) against every measurement dataset, as the
// median and maximum absolute percentage error of busbw for sizes of at
// least --min-bytes, per dataset and overall (service.ValidateResult).

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/estimate"
	"github.com/distributed-nav/distributed-nav/playground/service"
)

// runValidate implements `ncclsim validate`.
func runValidate(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("validate", stderr)
	dir := fs.String("data", "", "directory of measurement datasets (default: the copy of data/measurements built into ncclsim)")
	calPath := fs.String("calibration", "", "calibration file (default: the copy of data/calibration.yaml built into ncclsim)")
	minFlag := fs.String("min-bytes", service.DefaultValidateMinBytes, "smallest message size counted in the statistics (suffixes K/M/G)")
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
	svc, err := newService(*calPath)
	if err != nil {
		return err
	}
	req := service.ValidateRequest{MinBytes: *minFlag}
	if *dir != "" {
		if req.Datasets, err = loadMeasurements(*dir); err != nil {
			return err
		}
	}
	rep, err := svc.Validate(ctx, req)
	if err != nil {
		return cliError(err, nil, stderr)
	}
	if *asJSON {
		return writeJSON(stdout, rep)
	}
	if _, err := io.WriteString(stdout, formatValidate(rep, *points)); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

// shorten cuts s to n characters, marking the cut with "...".
func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-3]) + "..."
	}
	return s
}

// formatValidate renders the report as a table.
func formatValidate(rep *estimate.Report, points bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "busbw absolute percentage error, sizes >= %d bytes (out-of-place times)\n", rep.MinBytes)
	fmt.Fprintf(&b, "model = NCCL v2.30.7-1 tuning model; in = calibrated, fitted on every dataset; out = calibrated, fitted without the dataset's source (leave one source out)\n\n")
	fmt.Fprintf(&b, "%-48s %-13s %-11s %5s %4s  %9s %9s %9s  %9s %9s  %s\n", "DATASET", "COLL", "CLASS", "RANKS", "N", "MODEL MED", "IN MED", "OUT MED", "MODEL MAX", "OUT MAX", "SOURCE")
	for _, d := range rep.Datasets {
		id := d.ID
		switch {
		case d.Anomaly != "":
			id += " (anomaly, not in the band)"
		case !d.Fitted:
			id += " (not fitted)"
		}
		fmt.Fprintf(&b, "%-48s %-13s %-11s %5d %4d  %8.1f%% %8.1f%% %8.1f%%  %8.1f%% %8.1f%%  %s\n", id, d.Collective, d.Class, d.NRanks, d.Calibrated.N,
			d.Model.MedianPct, d.Calibrated.MedianPct, d.OutOfSample.MedianPct, d.Model.MaxPct, d.OutOfSample.MaxPct, shorten(d.Source, 48))
	}
	fmt.Fprintf(&b, "\nmedian over datasets (%d datasets, %d independent sources): model %.1f%%, in-sample %.1f%%, out-of-sample %.1f%%\n",
		rep.Medians.Datasets, rep.Sources, rep.Medians.Model, rep.Medians.Calibrated, rep.Medians.OutOfSample)
	fmt.Fprintf(&b, "%-12s %7s %8s  %9s %9s %9s\n", "CLASS", "SOURCES", "DATASETS", "MODEL", "IN", "OUT")
	for _, c := range rep.Classes {
		mark := ""
		switch {
		case c.NCCLModel != "":
			mark = "  (on NCCL's model: the fit did worse out of sample)"
		case c.Medians.OutOfSample > c.Medians.Model+estimate.FallBackMarginPct:
			mark = "  (out-of-sample worse than NCCL's model)"
		}
		fmt.Fprintf(&b, "%-12s %7d %8d  %8.1f%% %8.1f%% %8.1f%%%s\n", c.Class, c.Sources, c.Medians.Datasets, c.Medians.Model, c.Medians.Calibrated, c.Medians.OutOfSample, mark)
	}
	fmt.Fprintf(&b, "all points pooled (%d): model median %.1f%% max %.1f%%, in-sample median %.1f%% max %.1f%%, out-of-sample median %.1f%% max %.1f%%\n",
		rep.Overall.Calibrated.N, rep.Overall.Model.MedianPct, rep.Overall.Model.MaxPct, rep.Overall.Calibrated.MedianPct, rep.Overall.Calibrated.MaxPct,
		rep.OutOfSample.MedianPct, rep.OutOfSample.MaxPct)
	fmt.Fprintf(&b, "fitted datasets only (%d points): model median %.1f%%, in-sample median %.1f%%\n",
		rep.Fitted.Calibrated.N, rep.Fitted.Model.MedianPct, rep.Fitted.Calibrated.MedianPct)
	fmt.Fprintf(&b, "error band: the measured busbw lies inside the class's band around the out-of-sample estimate for %.1f%% of %d points (runs marked anomaly left out)\n", rep.BandCoverage, rep.BandPoints)
	if !points {
		return b.String()
	}
	for _, d := range rep.Datasets {
		fmt.Fprintf(&b, "\n%s (%s x%d, %d ranks, source %s)\n", d.ID, d.Preset, d.Nodes, d.NRanks, d.Source)
		fmt.Fprintf(&b, "  %14s %-16s %10s %10s %10s %10s %8s %8s %8s\n", "BYTES", "MODEL PICK", "MEASURED", "MODEL", "IN", "OUT", "MODEL%", "IN%", "OUT%")
		for _, p := range d.Points {
			mark := ""
			if p.Held {
				mark = " held"
			}
			if !p.Counted {
				mark += " (not counted)"
			} else if !p.InBand {
				mark += " outside band"
			}
			fmt.Fprintf(&b, "  %14d %-16s %10.3f %10.3f %10.3f %10.3f %7.1f%% %7.1f%% %7.1f%%%s\n", p.Bytes, p.Algo+"/"+p.Proto, p.Measured, p.Model, p.Calibrated, p.OutOfSample, p.ModelAPE, p.CalAPE, p.OutOfSampleAPE, mark)
		}
	}
	return b.String()
}
