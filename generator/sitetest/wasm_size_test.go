package sitetest

import (
	"bytes"
	"compress/gzip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The playground's wasm budget (issue 7) is 1 MB gzip; the binary does not
// meet it yet. wasmGzipCeiling is the size it has reached, kept as a
// ceiling so that a change that makes it grow fails here instead of
// passing unnoticed; lower it whenever the binary shrinks.
const (
	wasmGzipBudget  = 1_000_000
	wasmGzipCeiling = 1_420_000
)

// TestWasmSize measures the wasm binary the site serves (built as `make
// wasm` builds it) raw and gzip-compressed, the way GitHub Pages sends it.
// compress/gzip at its best compression writes about 1% more than the
// gzip -9 command (1,406,415 against 1,390,129 bytes when the ceiling was
// set).
func TestWasmSize(t *testing.T) {
	needSite(t)
	b, err := os.ReadFile(filepath.Join(rootSite.Public, "playground", "distnav.wasm"))
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
	t.Logf("distnav.wasm: %d bytes raw, %d gzip (budget %d, ceiling %d)", len(b), gz.Len(), wasmGzipBudget, wasmGzipCeiling)
	if gz.Len() > wasmGzipCeiling {
		t.Errorf("distnav.wasm is %d bytes gzip, over the ceiling of %d: find what grew (the size notes are in the doc comment of playground/wasm/main.go)", gz.Len(), wasmGzipCeiling)
	}
	if !bytes.HasPrefix(b, []byte("\x00asm")) {
		t.Errorf("distnav.wasm does not start with the wasm magic")
	}
}

// TestWasmLeavesOutHeavyPackages keeps the standard library's reflection-
// based packages out of the wasm build: fmt, reflect, encoding/* and text/*
// cost about 120 KB of its gzip size, and each has a lighter path in the
// repository (printf, jsonw, topo's tokenizer, ncclenv's CSV reader,
// doctor's column writer). `go list -deps` under GOOS=js names the packages
// the binary is built from.
func TestWasmLeavesOutHeavyPackages(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "./playground/wasm")
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	n := 0
	for _, p := range strings.Fields(string(out)) {
		n++
		if p == "fmt" || p == "reflect" || strings.HasPrefix(p, "encoding/") || strings.HasPrefix(p, "text/") {
			t.Errorf("the wasm build imports %s; find the importer with `GOOS=js GOARCH=wasm go list -deps -f '{{.ImportPath}} {{.Imports}}' ./playground/wasm`", p)
		}
	}
	if n < 20 {
		t.Fatalf("go list listed only %d packages", n)
	}
}
