package service

import (
	"context"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/topo"
	"github.com/distributed-nav/distributed-nav/playground/topo/topotest"
)

// TestPairClassesCoverEveryPair: the classes (topo.SummarizePairs) stand
// for every ordered pair of distinct GPUs, n*(n-1) on an n-GPU host; up to
// topo.MaxListedGPUs GPUs the pairs are listed as well, beyond it only with
// Full.
func TestPairClassesCoverEveryPair(t *testing.T) {
	s := New()
	list, err := s.Presets()
	if err != nil {
		t.Fatal(err)
	}
	reqs := map[string]*Request{
		"66 GPUs":        {XML: topotest.Host{Sockets: 1, GPUs: topo.MaxListedGPUs + 2}.XML()},
		"66 GPUs, full":  {XML: topotest.Host{Sockets: 1, GPUs: topo.MaxListedGPUs + 2}.XML(), Full: true},
		"64 GPUs listed": {XML: topotest.Host{Sockets: 1, GPUs: topo.MaxListedGPUs}.XML()},
	}
	for _, p := range list {
		reqs[p.Name] = &Request{Preset: p.Name}
	}
	for name, req := range reqs {
		r, err := s.Topo(context.Background(), req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		n := len(r.GPUs)
		sum := 0
		for _, c := range r.GPUPairClasses {
			sum += c.Count
		}
		if sum != n*(n-1) {
			t.Errorf("%s: classes count %d pairs, want %d", name, sum, n*(n-1))
		}
		listed := n <= topo.MaxListedGPUs || req.Full
		switch {
		case listed && (len(r.GPUPairs) != n*(n-1) || r.GPUPairsOmitted != 0):
			t.Errorf("%s: %d pairs listed, %d omitted; want all %d listed", name, len(r.GPUPairs), r.GPUPairsOmitted, n*(n-1))
		case !listed && (len(r.GPUPairs) != 0 || r.GPUPairsOmitted != n*(n-1)):
			t.Errorf("%s: %d pairs listed, %d omitted; want none listed, %d omitted", name, len(r.GPUPairs), r.GPUPairsOmitted, n*(n-1))
		}
	}
	if c := Command("topo", &Request{Preset: "x", Full: true}); !strings.Contains(c, " --full") {
		t.Errorf("command line %q leaves out --full", c)
	}
}
