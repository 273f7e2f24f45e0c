//go:build js && wasm && !nocatalog

package jsapi

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall/js"
	"testing"

	"github.com/distributed-nav/distributed-nav/data"
	"github.com/distributed-nav/distributed-nav/playground/ncclmsg"
	"github.com/distributed-nav/distributed-nav/playground/service"
)

// TestSetFiles hands the doctor's API the catalog files as the worker does
// for doctor.wasm (built with nocatalog): the files read from data/, a
// set with one file missing, and one with a broken row, whose error names
// the file and line; the doctor then explains a line from the given files.
func TestSetFiles(t *testing.T) {
	// Whatever a case provides, the compiled-in catalog is back afterwards.
	t.Cleanup(func() {
		ncclmsg.Provide(func(name string) ([]byte, error) { return fs.ReadFile(data.Messages, name) })
	})
	holder := js.Global().Get("Object").New()
	api := RegisterDoctor(holder, service.New())
	files := func(edit func(name, text string) (string, bool)) js.Value {
		o := js.Global().Get("Object").New()
		for _, n := range ncclmsg.Files {
			b, err := os.ReadFile(filepath.Join("..", "..", "..", "data", n))
			if err != nil {
				t.Fatal(err)
			}
			if text, keep := edit(n, string(b)); keep {
				o.Set(n, text)
			}
		}
		return o
	}
	same := func(_, text string) (string, bool) { return text, true }
	cases := []struct {
		name    string
		arg     any
		wantErr string // "" for a good set
	}{
		{"not an object", "x", "wants an object"},
		{"a file missing", files(func(n, text string) (string, bool) { return text, n != "messages/ibv-wc.tsv" }), "messages/ibv-wc.tsv: not given"},
		{"a broken row", files(func(n, text string) (string, bool) {
			if n == "messages/nccl-results.tsv" {
				text += "notacode\tncclX\tbroken\n"
			}
			return text, true
		}), "data/messages/nccl-results.tsv:"},
		{"the files of data/", files(same), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := api.Call("setFiles", c.arg).String()
			if c.wantErr == "" && got != "" || c.wantErr != "" && !strings.Contains(got, c.wantErr) {
				t.Fatalf("setFiles: %q, want %q", got, c.wantErr)
			}
		})
	}
	// After the good set, the doctor ties a v2.30.7-1 line to its source.
	a := call(t, api, "doctor", map[string]any{"log": "host:1:1 [0] NCCL INFO NCCL version 2.30.7+cuda12.9\n"})
	if !strings.Contains(a["figures"].(map[string]any)["report"].(string), "1 tied to the source line") {
		t.Errorf("doctor after setFiles: the version line is not tied to its source:\n%.600s", a["figures"].(map[string]any)["report"])
	}
	// This binary has the catalog compiled in, so it asks for no files.
	if f := api.Get("files"); !f.IsUndefined() {
		t.Errorf("files = %v, want undefined in a binary with the catalog", f)
	}
}
