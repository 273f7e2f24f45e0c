//go:build !js

package estimate

// Tests of reading and writing data/calibration.yaml, which js/wasm builds
// leave out (calibration_yaml.go).

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/data"
)

// TestCalibrationReproducible: fitting the committed datasets gives the
// committed data/calibration.yaml byte for byte (what `ncclsim calibrate
// --check` verifies).
func TestCalibrationReproducible(t *testing.T) {
	sets, build, _ := fixtures(t)
	cal, err := Fit(context.Background(), sets, build)
	if err != nil {
		t.Fatal(err)
	}
	b, err := cal.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, data.Calibration) {
		t.Error("data/calibration.yaml differs from the fit of data/measurements; run `ncclsim calibrate`")
	}
	// Every class parameter names its datasets unless it is a default, a
	// physical bound or structural (shm's efficiency, which does not exist:
	// its host staging rate takes the role).
	for _, cp := range cal.Classes {
		params := map[string]Param{"efficiency": cp.Efficiency, "latency": cp.LatencyFactor, "ramp": cp.RampBytesPerRank, "gamma": cp.RampGamma}
		if cp.HostStagingGBps != nil {
			params["host staging"] = *cp.HostStagingGBps
		}
		if cp.HostStagingGen5GBps != nil {
			params["host staging gen5"] = *cp.HostStagingGen5GBps
		}
		for name, p := range params {
			if p.Source != "default" && p.Source != "bound" && p.Source != "structural" && len(p.Datasets) == 0 {
				t.Errorf("%s %s: %s value without datasets", cp.Class, name, p.Source)
			}
			if len(p.Datasets) == 1 && !strings.Contains(p.Note, "one dataset only") {
				t.Errorf("%s %s: single-dataset parameter does not say so: %q", cp.Class, name, p.Note)
			}
		}
	}
}

func TestParseCalibrationErrors(t *testing.T) {
	if _, err := ParseCalibration(data.Calibration); err != nil {
		t.Fatalf("committed calibration rejected: %v", err)
	}
	for name, edit := range map[string][2]string{
		"version":      {"version: 1", "version: 7"},
		"unknown key":  {"version: 1", "version: 1\nsurprise: 3"},
		"gamma":        {"ramp_gamma:\n      value: ", "ramp_gamma:\n      value: 7"},
		"class name":   {"class: pcie", "class: carrier-pigeon"},
		"host staging": {"host_staging_GBps:\n      value: ", "host_staging_GBps:\n      value: -"},
		"gen5 staging": {"host_staging_gen5_GBps:\n      value: ", "host_staging_gen5_GBps:\n      value: -"},
	} {
		b := bytes.Replace(data.Calibration, []byte(edit[0]), []byte(edit[1]), 1)
		if bytes.Equal(b, data.Calibration) {
			t.Fatalf("%s: edit did not apply", name)
		}
		if _, err := ParseCalibration(b); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func FuzzParseCalibration(f *testing.F) {
	f.Add(data.Calibration)
	f.Add([]byte("version: 1\ngamma: {value: 2}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseCalibration(b)
		if err != nil {
			return
		}
		for _, cl := range Classes() {
			if _, err := c.For(cl); err != nil {
				t.Errorf("accepted calibration lacks %s", cl)
			}
		}
	})
}

// TestParseCalibrationSizeCap: input one byte over MaxCalibrationBytes is
// refused by its length, before the YAML decoder sees it (a comment-only
// file would otherwise decode to an empty calibration and fail later, with
// a message about its content rather than its size).
func TestParseCalibrationSizeCap(t *testing.T) {
	_, err := ParseCalibration(bytes.Repeat([]byte("#"), MaxCalibrationBytes+1))
	if err == nil || !strings.Contains(err.Error(), "more than the limit") {
		t.Errorf("over the cap: %v", err)
	}
}
