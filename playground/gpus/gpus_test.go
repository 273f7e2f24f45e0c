package gpus

import (
	"strings"
	"testing"
)

// TestTable: the committed table parses, every row names its source, and
// the dense figure is half the sparsity figure its note quotes where the
// note quotes one (NVIDIA prints 2:4 sparsity at twice the dense rate).
func TestTable(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 6 {
		t.Fatalf("%d GPUs", len(all))
	}
	for _, g := range all {
		if g.Source == "" || g.Note == "" {
			t.Errorf("%s: no source or note", g.Name)
		}
	}
	g, err := Lookup("rtx 4090")
	if err != nil || g.Name != "RTX-4090" || g.DenseBF16TFLOPS != 165.2 {
		t.Fatalf("%+v %v", g, err)
	}
	if _, err := Lookup("gtx-280"); err == nil || !strings.Contains(err.Error(), "known: H100-SXM") {
		t.Errorf("error %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	h := strings.Join(header, ",") + "\n"
	for in, want := range map[string]string{
		"a,b\n":                       "gpus.csv:1: header",
		h + "X,,abc,80,https://x,n\n": "gpus.csv:2: dense_bf16_tflops",
		h + "X,,1,-1,https://x,n\n":   "gpus.csv:2: memory_gb",
		h + "X,,1,80,http://x,n\n":    "gpus.csv:2: source_url",
	} {
		if _, err := Parse([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", in, err, want)
		}
	}
}
