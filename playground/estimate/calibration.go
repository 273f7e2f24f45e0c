package estimate

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

// CalibrationVersion is the version of the calibration file format.
const CalibrationVersion = 1

// Calibration holds the fitted parameters of the calibrated estimator
// (data/calibration.yaml). Every parameter names the datasets it was fitted
// on.
type Calibration struct {
	Version int `yaml:"version"`
	// Formula restates the model the parameters belong to.
	Formula string `yaml:"formula"`
	// NCCLModel is the NCCL release whose tuning model supplies L and B.
	NCCLModel string `yaml:"nccl_model"`
	// Objective describes the fit.
	Objective string        `yaml:"objective"`
	Classes   []ClassParams `yaml:"classes"`
	// Datasets lists every dataset seen by the fit and what it was used for.
	Datasets []DatasetUse `yaml:"datasets"`
}

// Param is one fitted number with its provenance.
type Param struct {
	Value float64 `yaml:"value"`
	// Source is "fitted" (fitted on this class's datasets), "pooled"
	// (shared by classes whose own datasets do not constrain it, fitted on
	// all datasets that do) or "default" (no dataset constrains it).
	Source   string   `yaml:"source"`
	Datasets []string `yaml:"datasets"`
	Note     string   `yaml:"note,omitempty"`
}

// ClassParams are the parameters of one path class.
type ClassParams struct {
	Class Class `yaml:"class"`
	// Efficiency (η) is the fraction of the class's physical bound that
	// real runs reach on the plateau: nvlink of NVLink links × per-link
	// bandwidth, pcie of the narrowest PCIe link (shared with SHM, whose
	// copies cross the GPUs' PCIe links), shm-xsocket of NCCL's
	// inter-socket bandwidth, net-rdma and net-tcp of NCCL's network
	// bandwidth of the cell. shm has none of its own (value 1, source
	// "structural"): see HostStagingGBps.
	Efficiency Param `yaml:"efficiency"`
	// HostStagingGBps, for class shm only, is the bandwidth (GB/s) at
	// which host memory stages an SHM hop; it bounds shm and shm-xsocket
	// hops alike. Value 0 means no bound (no SHM run seen).
	HostStagingGBps *Param `yaml:"host_staging_GBps,omitempty"`
	// HostStagingGen5GBps, for class shm only, is the same rate for hops
	// whose GPU links are PCIe Gen5 x16 or faster (Gen5LinkGBps); value 0
	// means no bound. A calibration without it stages every hop at
	// HostStagingGBps.
	HostStagingGen5GBps *Param `yaml:"host_staging_gen5_GBps,omitempty"`
	// LatencyFactor (λ) scales the NCCL model's latency of the chosen cell.
	LatencyFactor Param `yaml:"latency_factor"`
	// RampBytesPerRank (ρ): the bus size at which the bandwidth reaches
	// 1 − 1/e (63 %) of the plateau is ρ × nranks bytes for the Simple
	// protocol, scaled by the protocol's buffer size for LL and LL128 (see
	// RampScale).
	RampBytesPerRank Param `yaml:"ramp_bytes_per_rank"`
	// RampGamma (γ, in (0, 1]) sets how gradual the ramp is: the smaller,
	// the more slowly the bandwidth approaches the plateau.
	RampGamma Param `yaml:"ramp_gamma"`
	// Band is the calibrated busbw error observed on the class's datasets
	// for sizes of at least BandMinBytes.
	Band Band `yaml:"error_band"`
	// NCCLModel, when not empty, says why the class is estimated by NCCL's
	// own model instead of the fitted parameters: their leave-one-source-out
	// error on the class's datasets was larger than the model's (Fit,
	// fallBack). The parameters above are kept for the record; the band is
	// then the model's own error.
	NCCLModel string `yaml:"nccl_model,omitempty"`
}

// Band is an observed error band: the busbw errors of the calibrated
// estimate on the class's rows (sizes of at least MinBytes) predicted by a
// fit that did not see the row's source (leave one source out), so that
// the band says how far off the estimate is on a system the calibration
// has never seen.
type Band struct {
	// MedianPct and MaxPct are the median and the largest absolute error.
	MedianPct float64 `yaml:"median_pct" json:"median_pct"`
	MaxPct    float64 `yaml:"max_pct" json:"max_pct"`
	// OverPct bounds the over-estimate, 100*(estimate-measured)/measured,
	// and UnderPct the under-estimate, 100*(measured-estimate)/measured:
	// they are the BandQuantileHigh and BandQuantileLow quantiles of the
	// signed errors (both at least 0, UnderPct below 100), so that the band
	// spans the middle 90 % of the out-of-sample errors. Kept apart because
	// an over-estimate can exceed 100 % while an under-estimate cannot.
	OverPct  float64 `yaml:"over_pct" json:"over_pct"`
	UnderPct float64 `yaml:"under_pct" json:"under_pct"`
	// Datasets, Sources and Points count what the band was measured on
	// (Sources: independent publications, see Dataset.SourceKey).
	Datasets int `yaml:"datasets" json:"datasets"`
	Sources  int `yaml:"sources" json:"sources"`
	Points   int `yaml:"points" json:"points"`
	// MinBytes is the smallest message size counted.
	MinBytes uint64 `yaml:"min_bytes" json:"min_bytes"`
	// OutOfSample is set when the errors come from leave-one-source-out
	// fits (always, for bands written by Fit).
	OutOfSample bool `yaml:"out_of_sample" json:"out_of_sample"`
}

// DatasetUse records how the fit used one dataset.
type DatasetUse struct {
	ID string `yaml:"id"`
	// Source is the dataset's SourceKey: datasets with the same source are
	// left out together in validation.
	Source string `yaml:"source"`
	Class  Class  `yaml:"class"`
	// Fitted is false for datasets kept for validation only.
	Fitted bool   `yaml:"fitted"`
	Reason string `yaml:"reason,omitempty"`
	// Constrains lists the parameters the dataset has data for
	// (efficiency, latency_factor, ramp_bytes_per_rank).
	Constrains []string `yaml:"constrains"`
}

// DefaultCalibration returns the calibration of data/calibration.yaml, the
// one the CLI and the playground use. The values are compiled in
// (calibration_data.go, written by `go generate` from the YAML file), so that
// binaries that never read a calibration file, such as the wasm playground,
// do not carry a YAML parser; TestCalibrationData fails when the two
// disagree. Every call returns a fresh copy.
func DefaultCalibration() (*Calibration, error) {
	c := withProse(embeddedCalibration())
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("calibration: %w", err)
	}
	return c, nil
}

func (c *Calibration) check() error {
	if c.Version != CalibrationVersion {
		return fmt.Errorf("version %d, want %d", c.Version, CalibrationVersion)
	}
	seen := map[Class]bool{}
	for _, cp := range c.Classes {
		if _, err := ParseClass(string(cp.Class)); err != nil {
			return err
		}
		if seen[cp.Class] {
			return fmt.Errorf("class %s listed twice", cp.Class)
		}
		seen[cp.Class] = true
		for name, v := range map[string]float64{"efficiency": cp.Efficiency.Value, "latency_factor": cp.LatencyFactor.Value, "ramp_bytes_per_rank": cp.RampBytesPerRank.Value} {
			if !(v > 0) || math.IsInf(v, 0) {
				return fmt.Errorf("class %s: %s %v must be positive and finite", cp.Class, name, v)
			}
		}
		if h := cp.HostStagingGBps; h != nil && (!(h.Value >= 0) || math.IsInf(h.Value, 0) || cp.Class != ClassSHM) {
			return fmt.Errorf("class %s: host_staging_GBps %v: only class shm has one, and it is finite and not negative", cp.Class, h.Value)
		}
		if h := cp.HostStagingGen5GBps; h != nil && (!(h.Value >= 0) || math.IsInf(h.Value, 0) || cp.Class != ClassSHM) {
			return fmt.Errorf("class %s: host_staging_gen5_GBps %v: only class shm has one, and it is finite and not negative", cp.Class, h.Value)
		}
		if cp.Class == ClassSHM && cp.HostStagingGBps == nil {
			return fmt.Errorf("class shm: host_staging_GBps missing")
		}
		if g := cp.RampGamma.Value; !(g > 0 && g <= 1) {
			return fmt.Errorf("class %s: ramp_gamma %v outside (0, 1]", cp.Class, g)
		}
	}
	for _, cl := range Classes() {
		if !seen[cl] {
			return fmt.Errorf("class %s missing", cl)
		}
	}
	return nil
}

// For returns the parameters of class cl.
func (c *Calibration) For(cl Class) (ClassParams, error) {
	for _, cp := range c.Classes {
		if cp.Class == cl {
			return cp, nil
		}
	}
	return ClassParams{}, fmt.Errorf("calibration has no class %q", cl)
}

// bandwidthParam is the parameter that sets the class's plateau: the host
// staging bandwidth for shm, the efficiency for every other class.
func (cp ClassParams) bandwidthParam() Param {
	if cp.HostStagingGBps != nil {
		return *cp.HostStagingGBps
	}
	return cp.Efficiency
}

// bandwidthParamFor is bandwidthParam for a cell whose SHM hops run over
// PCIe Gen5 links when gen5 is set: then the Gen5 host staging rate, when
// the calibration has one.
func (cp ClassParams) bandwidthParamFor(gen5 bool) Param {
	if gen5 && cp.HostStagingGen5GBps != nil {
		return *cp.HostStagingGen5GBps
	}
	return cp.bandwidthParam()
}

// sourcesOf counts the independent sources of the datasets ids, as the
// calibration's dataset list records them (a dataset it does not list
// counts as a source of its own).
func (c *Calibration) sourcesOf(ids []string) int {
	src := map[string]string{}
	for _, u := range c.Datasets {
		src[u.ID] = u.Source
	}
	seen := map[string]bool{}
	for _, id := range ids {
		k := src[id]
		if k == "" {
			k = "dataset:" + id
		}
		seen[k] = true
	}
	return len(seen)
}

// round4 keeps four significant digits, so that the file does not depend
// on the last bits of floating-point arithmetic.
func round4(v float64) float64 {
	if v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return v
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 4, 64), 64)
	if err != nil {
		return v
	}
	return r
}

// errNoClass is returned when a routing has no class (single rank).
var errNoClass = errors.New("no path class (single rank)")
