//go:build !js

package estimate

import (
	"reflect"
	"testing"

	"github.com/distributed-nav/distributed-nav/data"
)

// TestCalibrationData checks that the calibration compiled into the package
// (calibration_data.go) is data/calibration.yaml: the file must be exactly
// what goFuncSource writes for the parsed YAML, and the compiled value must
// equal the parsed one field by field. Run `go generate
// ./playground/estimate` after `ncclsim calibrate` changes the YAML.
func TestCalibrationData(t *testing.T) {
	want, err := ParseCalibration(data.Calibration)
	if err != nil {
		t.Fatal(err)
	}
	// The compiled copy leaves out the file's prose, which withProse
	// restores outside the browser (calibration_prose.go); the file's prose
	// is the model's own, as calibrate writes it.
	if want.Formula != Formula || want.Objective != FitObjective {
		t.Errorf("data/calibration.yaml's formula or objective is not the model's (Formula, FitObjective): run make calibrate")
	}
	gen := *want
	gen.Formula, gen.Objective = "", ""
	src, err := goFuncSource("data/calibration.yaml", "embeddedCalibration",
		"embeddedCalibration returns the parameters of data/calibration.yaml,\nfreshly allocated on every call, without its formula and objective\n(withProse).", reflect.ValueOf(&gen))
	if err != nil {
		t.Fatal(err)
	}
	checkGenerated(t, "calibration_data.go", src)
	if *updateGenerated {
		return
	}
	if got := embeddedCalibration(); !reflect.DeepEqual(got, &gen) {
		t.Errorf("compiled calibration differs from data/calibration.yaml:\n got %+v\nwant %+v", got, want)
	}
	a, err := DefaultCalibration()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, want) {
		t.Errorf("DefaultCalibration differs from data/calibration.yaml")
	}
	// Each call is a fresh copy: changing one leaves the next intact.
	a.Classes[0].Efficiency.Value = -1
	a.Classes[0].Efficiency.Datasets[0] = "changed"
	b, err := DefaultCalibration()
	if err != nil {
		t.Fatal(err)
	}
	if b.Classes[0].Efficiency.Value == -1 || b.Classes[0].Efficiency.Datasets[0] == "changed" {
		t.Error("DefaultCalibration shares memory between calls")
	}
}
