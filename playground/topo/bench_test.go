package topo_test

import (
	"bytes"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
	"github.com/distributed-nav/distributed-nav/playground/presets"
	"github.com/distributed-nav/distributed-nav/playground/topo"
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
