//go:build !(js && wasm)

package estimate

// withProse gives the compiled calibration the formula and objective that
// data/calibration.yaml states (calibrate writes them from Formula and
// FitObjective, which TestCalibrationData holds the file to).
func withProse(c *Calibration) *Calibration {
	c.Formula, c.Objective = Formula, FitObjective
	return c
}
