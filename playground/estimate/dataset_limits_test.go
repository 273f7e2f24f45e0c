//go:build !js

package estimate

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"testing/fstest"
)

// TestDatasetLimits: a measurements directory of more than MaxDatasets
// datasets, a file over MaxDatasetBytes and a dataset of more than
// MaxDatasetRows rows are refused by name before any fit (issue 18's
// re-run of the attack, F6: 300 datasets took 13.8 s in validate, one of
// 200,000 rows 858 MB and 140 MB of --json output). Built from a real
// dataset of data/measurements, whose own size is far under the caps.
func TestDatasetLimits(t *testing.T) {
	const name = "a40-2gpu-nvlink-bridge-nv4"
	b, err := os.ReadFile("../../data/measurements/" + name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	withID := func(id string, rows int) []byte {
		m := map[string]any{}
		for k, v := range raw {
			m[k] = v
		}
		m["id"] = id
		if rows > 0 {
			first := raw["rows"].([]any)[0].(map[string]any)
			var rs []any
			for i := range rows {
				r := map[string]any{}
				for k, v := range first {
					r[k] = v
				}
				r["bytes"] = 1024 * (i + 1)
				rs = append(rs, r)
			}
			m["rows"] = rs
		}
		out, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	many := fstest.MapFS{}
	for i := range MaxDatasets + 1 {
		id := fmt.Sprintf("d%03d", i)
		many[id+".json"] = &fstest.MapFile{Data: withID(id, 0)}
	}
	if _, err := LoadDatasets(many, "."); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than %d datasets", MaxDatasets)) {
		t.Errorf("%d datasets: error %v", MaxDatasets+1, err)
	}
	delete(many, fmt.Sprintf("d%03d.json", MaxDatasets))
	if ds, err := LoadDatasets(many, "."); err != nil || len(ds) != MaxDatasets {
		t.Errorf("%d datasets: %d read, error %v", MaxDatasets, len(ds), err)
	}
	big := fstest.MapFS{"big.json": &fstest.MapFile{Data: append(withID("big", 0), make([]byte, MaxDatasetBytes)...)}}
	if _, err := LoadDatasets(big, "."); err == nil || !strings.Contains(err.Error(), "big.json") || !strings.Contains(err.Error(), "over the limit") {
		t.Errorf("a file over %d bytes: error %v", MaxDatasetBytes, err)
	}
	if _, err := ParseDataset(withID("rows", MaxDatasetRows+1)); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("over the limit of %d", MaxDatasetRows)) {
		t.Errorf("%d rows: error %v", MaxDatasetRows+1, err)
	}
}
