package sitetest

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"
)

// The playground's wasm budget (issue 13) is 1.3 MB gzip per page. Each
// page downloads one binary, built from its own main under
// playground/wasm: topology.wasm, algorithms.wasm, estimator.wasm,
// step.wasm and doctor.wasm. Each ceiling is derived from the binary's
// compress/gzip size when it was set, plus 1% for ordinary growth, rounded
// up to 10,000 bytes, so that a change that makes a binary grow more fails
// here instead of passing unnoticed; lower them whenever a binary shrinks.
//
// Set with the split into one binary per page and the answers encoded by
// package jsonenc instead of encoding/json (session 5; before, one
// model.wasm of 1,625,795 bytes compress/gzip, 1,599,500 by gzip -9, served
// the four model pages and doctor.wasm 1,351,693 the doctor): sizes then,
// compress/gzip (gzip -9): topology 1,280,571 (1,267,595), algorithms
// 1,290,198 (1,278,626), estimator 1,415,738 (1,399,854), step 1,338,548
// (1,326,252), doctor 1,291,280 (1,280,775).
const wasmGzipBudget = 1_300_000

var wasmGzipCeiling = map[string]int{
	"topology.wasm":   1_300_000, // 1,280,571 × 1.01
	"algorithms.wasm": 1_310_000, // 1,290,198 × 1.01
	"estimator.wasm":  1_430_000, // 1,415,738 × 1.01
	"step.wasm":       1_360_000, // 1,338,548 × 1.01
	"doctor.wasm":     1_310_000, // 1,291,280 × 1.01
}

// overBudget lists the binaries still over the budget, and what holds each
// back; every other binary must be within it.
var overBudget = map[string]string{
	"estimator.wasm": "the published measurements compiled in as Go code (about 40 KB gzip) and the paste box's nccl-tests reader and comparison",
	"step.wasm":      "the step model and the estimator's calibration on top of the topology pipeline",
}

// TestWasmSize measures the wasm binaries the site serves (built as `make
// wasm` builds them) raw and gzip-compressed, the way GitHub Pages sends
// them. compress/gzip at its best compression writes about 1% more than
// the gzip -9 command.
func TestWasmSize(t *testing.T) {
	needSite(t)
	// Every binary the site serves has its ceiling here.
	served, err := filepath.Glob(filepath.Join(rootSite.Public, "playground", "*.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range served {
		if _, ok := wasmGzipCeiling[filepath.Base(f)]; !ok {
			t.Errorf("public/playground/%s has no ceiling in wasmGzipCeiling", filepath.Base(f))
		}
	}
	for name, ceiling := range wasmGzipCeiling {
		b, err := os.ReadFile(filepath.Join(rootSite.Public, "playground", name))
		if err != nil {
			t.Fatal(err)
		}
		var gz bytes.Buffer
		w, err := gzip.NewWriterLevel(&gz, gzip.BestCompression)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(b); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d bytes raw, %d gzip (budget %d, ceiling %d)", name, len(b), gz.Len(), wasmGzipBudget, ceiling)
		if why, over := overBudget[name]; !over && gz.Len() > wasmGzipBudget {
			t.Errorf("%s is %d bytes gzip, over the page budget of %d", name, gz.Len(), wasmGzipBudget)
		} else if over && gz.Len() <= wasmGzipBudget {
			t.Errorf("%s is within the page budget now (%d bytes gzip): remove it from overBudget (%s)", name, gz.Len(), why)
		}
		if gz.Len() > ceiling {
			t.Errorf("%s is %d bytes gzip, over the ceiling of %d: find what grew (`GOOS=js GOARCH=wasm go list -deps ./playground/wasm/...` lists what is linked)", name, gz.Len(), ceiling)
		}
		if !bytes.HasPrefix(b, []byte("\x00asm")) {
			t.Errorf("%s does not start with the wasm magic", name)
		}
	}
}
