// Package gpus reads data/gpus.csv: the published dense BF16 tensor
// throughput and memory of the GPUs the step projection knows, each with
// the URL the number comes from.
package gpus

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"

	"github.com/distributed-nav/distributed-nav/data"
)

// GPU is one row of the table.
type GPU struct {
	Name    string   `json:"name"`
	Aliases []string `json:"aliases"`
	// DenseBF16TFLOPS is the peak dense (no sparsity) BF16 tensor-core
	// throughput with FP32 accumulation, in 1e12 FLOP/s.
	DenseBF16TFLOPS float64 `json:"dense_bf16_tflops"`
	MemoryGB        float64 `json:"memory_gb"`
	Source          string  `json:"source_url"`
	Note            string  `json:"note"`
}

var header = []string{"name", "aliases", "dense_bf16_tflops", "memory_gb", "source_url", "note"}

// Parse reads a table in the layout of data/gpus.csv.
func Parse(b []byte) ([]GPU, error) {
	r := csv.NewReader(bytes.NewReader(b))
	recs, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("gpus.csv: %w", err)
	}
	if len(recs) == 0 || strings.Join(recs[0], ",") != strings.Join(header, ",") {
		return nil, fmt.Errorf("gpus.csv:1: header must be %s", strings.Join(header, ","))
	}
	var out []GPU
	for i, rec := range recs[1:] {
		line := i + 2
		tf, err := strconv.ParseFloat(rec[2], 64)
		if err != nil || !(tf > 0) {
			return nil, fmt.Errorf("gpus.csv:%d: dense_bf16_tflops %q is not a positive number", line, rec[2])
		}
		mem, err := strconv.ParseFloat(rec[3], 64)
		if err != nil || !(mem > 0) {
			return nil, fmt.Errorf("gpus.csv:%d: memory_gb %q is not a positive number", line, rec[3])
		}
		if !strings.HasPrefix(rec[4], "https://") {
			return nil, fmt.Errorf("gpus.csv:%d: source_url %q is not an https URL", line, rec[4])
		}
		g := GPU{Name: rec[0], DenseBF16TFLOPS: tf, MemoryGB: mem, Source: rec[4], Note: rec[5]}
		if rec[1] != "" {
			g.Aliases = strings.Split(rec[1], ";")
		}
		out = append(out, g)
	}
	return out, nil
}

// All returns the table compiled in from data/gpus.csv.
func All() ([]GPU, error) { return Parse(data.GPUs) }

// Lookup finds a GPU by name or alias, ignoring case, spaces, '_' and '-'.
func Lookup(name string) (GPU, error) {
	all, err := All()
	if err != nil {
		return GPU{}, err
	}
	n := Fold(name)
	var names []string
	for _, g := range all {
		names = append(names, g.Name)
		if Fold(g.Name) == n {
			return g, nil
		}
		for _, a := range g.Aliases {
			if Fold(a) == n {
				return g, nil
			}
		}
	}
	return GPU{}, fmt.Errorf("unknown GPU %q (known: %s)", name, strings.Join(names, ", "))
}

// Fold is the form Lookup compares names in: lower case, without spaces,
// '_' or '-'.
func Fold(s string) string {
	return strings.NewReplacer(" ", "", "_", "", "-", "").Replace(strings.ToLower(strings.TrimSpace(s)))
}
