package sitetest

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"
)

// The playground's wasm budget (issue 7) is 1 MB gzip; the binary does not
// meet it yet. wasmGzipCeiling is the size it has reached, kept as a
// ceiling so that a change that makes it grow fails here instead of
// passing unnoticed; lower it whenever the binary shrinks. It rose from
// 1,420,000 when the model packages went back to fmt, encoding/xml,
// encoding/csv and text/tabwriter (issue 13: `gzip -9` of the binary went
// from 1,390,058 to 1,507,926 bytes), to 1,560,000 when the estimator's
// physical model, out-of-sample band and new datasets were compiled in
// (compress/gzip: 1,547,926 bytes at b0d0939+), and then with the
// doctor's NCCL message catalog (playground/ncclmsg: 2,367 format strings
// and their matcher, so the doctor page ties every log line to its source
// line), its rule registry, line explanations and encoding/json for its
// answer (issue 15: about +190 KB; gzip -9 of the binary 1,727,943 bytes, compress/gzip
// about 1% more).
// Splitting the binary per page is what is meant to bring it down: the
// catalog is needed by the doctor page alone.
const (
	wasmGzipBudget  = 1_000_000
	wasmGzipCeiling = 1_750_000
)

// TestWasmSize measures the wasm binary the site serves (built as `make
// wasm` builds it) raw and gzip-compressed, the way GitHub Pages sends it.
// compress/gzip at its best compression writes about 1% more than the
// gzip -9 command (1,406,415 against 1,390,129 bytes at the first
// ceiling).
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
