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

// manyNICs is the largest host the model takes on both counts: 72 GPUs
// (NCCL_MAX_LOCAL_RANKS) and 252 NICs (under MAX_IB_VDEVS, 256).
func manyNICs(t testing.TB) *topo.System {
	sys, _, err := topo.ParseXML(strings.NewReader(topotest.WithNICs(topotest.Host{Sockets: 2, Switches: 4, GPUs: 9}.XML(), 252)))
	if err != nil {
		t.Fatal(err)
	}
	return sys
}

// TestAnalyzeManyNICsBounded counts the allocations of the path analysis
// of 72 GPUs and 252 NICs. NCCL asks for each NIC's local GPU once per
// GPU x NIC pair, and each answer asks every nearby GPU for its NIC list:
// done literally that was 1.3 million NIC lists, 6.7 million allocations
// and 3.4 GB (3.7 s of CPU in ncclsim topo). The answer is now computed
// again only after a path changed: about 15,000 allocations remain (path
// rows and NIC lists); the bound is 50,000.
func TestAnalyzeManyNICsBounded(t *testing.T) {
	sys := manyNICs(t)
	env := ncclenv.New(nil)
	allocs := testing.AllocsPerRun(1, func() {
		if _, err := topo.Analyze(sys, env); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("%.0f allocations", allocs)
	if allocs > 50000 {
		t.Errorf("%.0f allocations to analyse 72 GPUs and 252 NICs; the bound is 50,000", allocs)
	}
}

// BenchmarkAnalyzeManyNICs is the analysis TestAnalyzeManyNICsBounded counts.
func BenchmarkAnalyzeManyNICs(b *testing.B) {
	sys := manyNICs(b)
	env := ncclenv.New(nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := topo.Analyze(sys, env); err != nil {
			b.Fatal(err)
		}
	}
}
