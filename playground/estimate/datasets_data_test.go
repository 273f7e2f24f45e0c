package estimate

import (
	"reflect"
	"testing"

	"github.com/distributed-nav/distributed-nav/data"
)

// TestDatasetsData checks that the datasets compiled into the package
// (datasets_data.go) are data/measurements/*.json as LoadDatasets reads
// them: the file must be exactly what goFuncSource writes for them, and
// the compiled values must equal the parsed ones field by field. Run `go
// generate ./playground/estimate` after a dataset changes.
func TestDatasetsData(t *testing.T) {
	want, err := LoadDatasets(data.Measurements, "measurements")
	if err != nil {
		t.Fatal(err)
	}
	// The compiled copy leaves out the published tables (Raw): nothing but
	// TestRowsTraceToRaw reads them, from the JSON files, and they would
	// be 50 KB of the wasm binary.
	for _, d := range want {
		if d.Raw == "" {
			t.Fatalf("dataset %s has no raw table", d.ID)
		}
		d.Raw = ""
	}
	src, err := goFuncSource("data/measurements/*.json", "embeddedDatasets",
		"embeddedDatasets returns the datasets of data/measurements, sorted by\nid, freshly allocated on every call.", reflect.ValueOf(want))
	if err != nil {
		t.Fatal(err)
	}
	checkGenerated(t, "datasets_data.go", src)
	if *updateGenerated {
		return
	}
	if got := embeddedDatasets(); !reflect.DeepEqual(got, want) {
		t.Error("compiled datasets differ from data/measurements")
	}
	a, err := DefaultDatasets()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, want) {
		t.Error("DefaultDatasets differs from data/measurements")
	}
	// Each call is a fresh copy.
	a[0].Rows[0].BusBwGBps = -1
	a[0].ID = "changed"
	b, err := DefaultDatasets()
	if err != nil {
		t.Fatal(err)
	}
	if b[0].Rows[0].BusBwGBps == -1 || b[0].ID == "changed" {
		t.Error("DefaultDatasets shares memory between calls")
	}
}
