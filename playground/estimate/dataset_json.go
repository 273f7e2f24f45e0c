//go:build !js

package estimate

// Reading datasets from JSON files is for the command line (ncclsim
// calibrate) and the tests; the js/wasm build uses the compiled-in copy
// (DefaultDatasets) and so does not link encoding/json.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// ParseDataset decodes and checks one dataset file. Unknown fields are
// errors so that a typo cannot silently drop a number.
func ParseDataset(b []byte) (*Dataset, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var d Dataset
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	if dec.More() {
		return nil, errors.New("dataset: trailing data after the JSON object")
	}
	if err := d.check(); err != nil {
		return nil, fmt.Errorf("dataset %q: %w", d.ID, err)
	}
	return &d, nil
}

// LoadDatasets reads every *.json file of dir in fsys, sorted by file name.
// A file's name (without .json) must equal its id.
func LoadDatasets(fsys fs.FS, dir string) ([]*Dataset, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("list datasets: %w", err)
	}
	var out []*Dataset
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if e.IsDir() || !ok {
			continue
		}
		if len(out) == MaxDatasets {
			return nil, fmt.Errorf("more than %d datasets", MaxDatasets)
		}
		if info, err := e.Info(); err == nil && info.Size() > MaxDatasetBytes {
			return nil, fmt.Errorf("%s: %d bytes, over the limit of %d for one dataset", e.Name(), info.Size(), MaxDatasetBytes)
		}
		b, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("read dataset %s: %w", name, err)
		}
		d, err := ParseDataset(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		if d.ID != name {
			return nil, fmt.Errorf("%s: id %q differs from the file name", e.Name(), d.ID)
		}
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}
