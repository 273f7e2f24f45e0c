package main

// This file implements `ncclsim calibrate`: fit the calibrated estimator on
// the measurement datasets and write data/calibration.yaml. The output is a
// pure function of the datasets and the model, so running it twice gives
// the same bytes (--check verifies that against the committed file).

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/distributed-nav/distributed-nav/data"
	"github.com/distributed-nav/distributed-nav/playground/estimate"
)

// loadMeasurements reads the datasets from dir, or from the embedded copy
// of data/measurements when dir is empty.
func loadMeasurements(dir string) ([]*estimate.Dataset, error) {
	var fsys fs.FS = data.Measurements
	sub := "measurements"
	if dir != "" {
		fsys, sub = os.DirFS(dir), "."
	}
	sets, err := estimate.LoadDatasets(fsys, sub)
	if err != nil {
		return nil, fmt.Errorf("load measurements: %w", err)
	}
	if len(sets) == 0 {
		return nil, fmt.Errorf("load measurements: no dataset found")
	}
	return sets, nil
}

// runCalibrate implements `ncclsim calibrate`.
func runCalibrate(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("calibrate", stderr)
	dir := fs.String("data", "", "directory of measurement datasets (default: the copy of data/measurements built into ncclsim)")
	out := fs.String("out", "data/calibration.yaml", "file to write, - for standard output")
	check := fs.Bool("check", false, "write nothing; fail if the file differs from what the fit produces")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: ncclsim calibrate [--data DIR] [--out FILE|-] [--check]")
		fmt.Fprintln(stderr, "Fits the calibrated estimator on the datasets and writes the parameters, each with the datasets it rests on.")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	sets, err := loadMeasurements(*dir)
	if err != nil {
		return err
	}
	cal, err := estimate.Fit(ctx, sets, estimate.CachedBuilder(estimate.BuildPreset))
	if err != nil {
		return err
	}
	b, err := cal.Marshal()
	if err != nil {
		return err
	}
	switch {
	case *check:
		old, err := os.ReadFile(*out)
		if err != nil {
			return fmt.Errorf("check: %w", err)
		}
		if !bytes.Equal(old, b) {
			return fmt.Errorf("check: %s differs from the fit; run `ncclsim calibrate` and commit the result", *out)
		}
		fmt.Fprintf(stdout, "%s is up to date (%d datasets)\n", *out, len(sets))
		return nil
	case *out == "-":
		if _, err := stdout.Write(b); err != nil {
			return fmt.Errorf("write: %w", err)
		}
		return nil
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		return fmt.Errorf("write calibration: %w", err)
	}
	fmt.Fprintf(stdout, "wrote %s: %d classes from %d datasets\n", *out, len(cal.Classes), len(sets))
	return nil
}
