package topo_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
	"github.com/distributed-nav/distributed-nav/playground/presets"
	"github.com/distributed-nav/distributed-nav/playground/topo"
	"github.com/distributed-nav/distributed-nav/playground/topo/topotest"
)

// BenchmarkParseXML parses two presets: the largest one (h100-8x-ib, with
// NICs and NVLinks) and a PCIe-only one (rtx4090-8x).
func BenchmarkParseXML(b *testing.B) {
	for _, name := range []string{"h100-8x-ib", "rtx4090-8x"} {
		b.Run(name, func(b *testing.B) {
			p, err := presets.Get(name)
			if err != nil {
				b.Fatal(err)
			}
			data := p.XML()
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := topo.ParseXML(bytes.NewReader(data)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkAnalyze(b *testing.B) {
	sys := preset(b, "h100-8x-ib")
	env := ncclenv.New(nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := topo.Analyze(sys, env); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseXMLHostile measures the bounded paths of the reader on the
// issue-18 inputs: a 2 MiB flood of text runs and comments (stops at
// topo.MaxTokens) and 8,000 unknown elements (warnings capped per kind).
func BenchmarkParseXMLHostile(b *testing.B) {
	inputs := map[string][]byte{
		"comment-flood-2MiB":    []byte(`<system version="1">` + string(bytes.Repeat([]byte("x<!---->"), (2<<20)/8)) + `</system>`),
		"unknown-elements-8000": []byte(topotest.OneGPU(strings.Repeat("<fan/>", 8000))),
	}
	for name, in := range inputs {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				topo.ParseXML(bytes.NewReader(in))
			}
		})
	}
}
