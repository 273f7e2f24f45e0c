package estimate

import (
	"errors"
	"fmt"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/tune"
)

// DatasetSchema is the schema version of data/measurements/*.json.
const DatasetSchema = 1

// Dataset is one published nccl-tests run in the project's schema
// (data/measurements/README.md documents every field).
type Dataset struct {
	Schema   int      `json:"schema"`
	ID       string   `json:"id"`
	Source   Source   `json:"source"`
	Hardware Hardware `json:"hardware"`
	Run      Run      `json:"run"`
	// System maps the run onto a modelled system.
	System SystemRef `json:"system"`
	// Fit says whether calibration may use the run; FitReason explains a
	// false.
	Fit       bool   `json:"fit"`
	FitReason string `json:"fit_reason"`
	// Anomaly, when not empty, is what the source itself shows to be wrong
	// with the system or the run (a cluster its thread reports as
	// underperforming, a table whose times fall as the size grows). Such a
	// run is validated and reported, but it is not fitted and it counts
	// neither in the error bands nor in the choice of classes handed to
	// NCCL's model: the band describes systems that work, and runs like it
	// are what `ncclsim compare` is meant to flag.
	Anomaly string   `json:"anomaly,omitempty"`
	Caveats []string `json:"caveats"`
	Rows    []Row    `json:"rows"`
	// Raw is the table (and log lines) as published, for traceability.
	// LoadDatasets fills it; the compiled-in copy (DefaultDatasets) leaves
	// it empty.
	Raw string `json:"raw"`
}

// Source says where the numbers were published.
type Source struct {
	URL   string `json:"url"`
	Title string `json:"title"`
	Date  string `json:"date,omitempty"`
	Path  string `json:"path,omitempty"`
	Note  string `json:"note,omitempty"`
	// CollectedIn names the file of the shared collection the run was
	// normalised from.
	CollectedIn string `json:"collected_in"`
	// Author is who published the run (a GitHub user or organisation, a
	// company), when the URL alone does not tell: runs with the same
	// author are one source for leave-one-source-out validation.
	Author string `json:"author,omitempty"`
}

// SourceKey names the independent source a dataset comes from:
// leave-one-source-out validation leaves every dataset with the same key
// out together. It is "author:" + Source.Author when the author is
// recorded; for a GitHub issue or pull request the thread
// (github.com/OWNER/REPO/issues/N: different threads are different
// people's machines); for any other GitHub URL the owner (one person or
// organisation publishes one set of machines); otherwise the URL itself,
// lower-cased.
func (d *Dataset) SourceKey() string {
	if a := strings.TrimSpace(d.Source.Author); a != "" {
		return "author:" + strings.ToLower(a)
	}
	u := strings.ToLower(strings.TrimSpace(d.Source.URL))
	for _, sep := range []string{";", "#", "?"} {
		u, _, _ = strings.Cut(u, sep)
	}
	u = strings.TrimSpace(u)
	for _, p := range []string{"https://", "http://", "www."} {
		u = strings.TrimPrefix(u, p)
	}
	if rest, ok := strings.CutPrefix(u, "github.com/"); ok {
		parts := strings.Split(rest, "/")
		if len(parts) >= 4 && (parts[2] == "issues" || parts[2] == "pull" || parts[2] == "discussions") {
			return "github.com/" + strings.Join(parts[:4], "/")
		}
		if parts[0] != "" {
			return "github.com/" + parts[0]
		}
	}
	return u
}

// Hardware is the hardware as the source describes it.
type Hardware struct {
	GPUModel     string `json:"gpu_model"`
	NGPUs        int    `json:"n_gpus"`
	NNodes       int    `json:"n_nodes"`
	Interconnect string `json:"interconnect"`
}

// Run describes the software side of the run.
type Run struct {
	NCCLVersion string            `json:"nccl_version"`
	Env         map[string]string `json:"env"`
	Command     string            `json:"command"`
	// Collective is allreduce, allgather, reducescatter, broadcast or reduce.
	Collective  string   `json:"collective"`
	Dtype       string   `json:"dtype"`
	AuthorNotes string   `json:"author_notes"`
	AvgBusBw    *float64 `json:"avg_busbw_reported_GBps"`
}

// SystemRef maps a run onto a preset topology.
type SystemRef struct {
	Preset string `json:"preset"`
	Nodes  int    `json:"nodes"`
	// Env holds the NCCL variables of the run that the model applies.
	Env map[string]string `json:"env"`
	// Fabric is "ib", "roce" or "tcp" for multi-node runs, empty otherwise.
	Fabric string `json:"fabric"`
	Why    string `json:"why"`
}

// Row is one line of an nccl-tests table: out-of-place and in-place time
// (µs), algbw and busbw (GB/s) as printed.
type Row struct {
	Bytes         uint64  `json:"bytes"`
	Count         uint64  `json:"count"`
	TimeUs        float64 `json:"time_us"`
	AlgBwGBps     float64 `json:"algbw_GBps"`
	BusBwGBps     float64 `json:"busbw_GBps"`
	TimeUsInPlace float64 `json:"time_us_inplace"`
	AlgBwInPlace  float64 `json:"algbw_GBps_inplace"`
	BusBwInPlace  float64 `json:"busbw_GBps_inplace"`
}

// Func returns the dataset's collective as a tune.Func.
func (d *Dataset) Func() (tune.Func, error) { return tune.LookupFunc(d.Run.Collective) }

// Datatype returns the element type of the run.
func (d *Dataset) Datatype() (tune.Datatype, error) { return tune.LookupDatatype(d.Run.Dtype) }

// NRanks is the number of ranks of the run.
func (d *Dataset) NRanks() int { return d.Hardware.NGPUs }

// Limits of a measurements directory (ncclsim validate and calibrate
// --data): validate refits once per source, so its work grows with the
// datasets times their rows. data/measurements has 39 datasets of at most
// 103 rows and 41 KB; the caps leave room for years of published runs and
// refuse a directory or file past them, by name, before any fit.
const (
	MaxDatasets     = 256
	MaxDatasetBytes = 1 << 20
	MaxDatasetRows  = 1024
)

func (d *Dataset) check() error {
	if d.Schema != DatasetSchema {
		return fmt.Errorf("schema %d, want %d", d.Schema, DatasetSchema)
	}
	if strings.TrimSpace(d.ID) == "" {
		return errors.New("empty id")
	}
	if strings.TrimSpace(d.Source.URL) == "" {
		return errors.New("no source url")
	}
	if _, err := d.Func(); err != nil {
		return fmt.Errorf("run.collective: %w", err)
	}
	if _, err := d.Datatype(); err != nil {
		return fmt.Errorf("run.dtype: %w", err)
	}
	if d.Hardware.NGPUs < 1 || d.Hardware.NNodes < 1 {
		return fmt.Errorf("hardware: %d GPUs on %d nodes", d.Hardware.NGPUs, d.Hardware.NNodes)
	}
	if d.System.Preset == "" {
		return errors.New("system.preset is empty")
	}
	if d.System.Nodes != d.Hardware.NNodes {
		return fmt.Errorf("system.nodes %d differs from hardware.n_nodes %d", d.System.Nodes, d.Hardware.NNodes)
	}
	if d.Hardware.NGPUs%d.Hardware.NNodes != 0 {
		return fmt.Errorf("%d GPUs do not divide over %d nodes", d.Hardware.NGPUs, d.Hardware.NNodes)
	}
	switch d.System.Fabric {
	case "", "ib", "roce", "tcp":
	default:
		return fmt.Errorf("system.fabric %q: want ib, roce, tcp or empty", d.System.Fabric)
	}
	if d.System.Nodes > 1 && d.System.Fabric == "" {
		return errors.New("a multi-node run needs system.fabric")
	}
	if d.Fit && d.Anomaly != "" {
		return errors.New("a run with an anomaly cannot be fitted")
	}
	if !d.Fit && strings.TrimSpace(d.FitReason) == "" {
		return errors.New("fit is false but fit_reason is empty")
	}
	if len(d.Rows) > MaxDatasetRows {
		return fmt.Errorf("%d rows, over the limit of %d", len(d.Rows), MaxDatasetRows)
	}
	if len(d.Rows) == 0 {
		return errors.New("no rows")
	}
	for i, r := range d.Rows {
		if i > 0 && r.Bytes < d.Rows[i-1].Bytes {
			return fmt.Errorf("row %d: sizes not ascending (%d after %d)", i, r.Bytes, d.Rows[i-1].Bytes)
		}
		if r.TimeUs < 0 || r.AlgBwGBps < 0 || r.BusBwGBps < 0 {
			return fmt.Errorf("row %d (%d bytes): negative value", i, r.Bytes)
		}
		if r.Bytes > 0 && r.TimeUs == 0 {
			return fmt.Errorf("row %d (%d bytes): zero time", i, r.Bytes)
		}
	}
	return nil
}

// DefaultDatasets returns the datasets of data/measurements/*.json, sorted
// by id, as LoadDatasets(data.Measurements, "measurements") reads them
// except for Raw, which is left empty. The
// values are compiled in (datasets_data.go, written by `go generate` from
// the JSON files, and checked against them by TestDatasetsData), so that
// the wasm playground does not link a JSON decoder. Every call returns a
// fresh copy.
func DefaultDatasets() ([]*Dataset, error) {
	sets := embeddedDatasets()
	for _, d := range sets {
		if err := d.check(); err != nil {
			return nil, fmt.Errorf("dataset %q: %w", d.ID, err)
		}
	}
	return sets, nil
}

// ref returns a pointer to a copy of v (the generated data's spelling of
// an optional number).
func ref[T any](v T) *T { return &v }
