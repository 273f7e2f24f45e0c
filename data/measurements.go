package data

import "embed"

// Measurements holds the published nccl-tests runs the calibrated estimator
// is fitted and validated on, one dataset per file
// (measurements/ID.json; the schema is in measurements/README.md).
//
//go:embed measurements/*.json
var Measurements embed.FS

// Calibration is data/calibration.yaml: the fitted parameters of the
// calibrated estimator, written by `ncclsim calibrate`. The CLI and the
// playground read the same bytes.
//
//go:embed calibration.yaml
var Calibration []byte
