package topotest_test

import (
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/topo"
	"github.com/distributed-nav/distributed-nav/playground/topo/topotest"
)

// TestHostsParse: every shape parses without error or warning into N GPUs,
// NICs none, CPUs Sockets.
func TestHostsParse(t *testing.T) {
	for _, h := range []topotest.Host{{1, 0, 4, false, false}, {1, 6, 11, false, false}, {2, 4, 9, true, false}, {8, 8, 8, true, false}, {1, 0, 300, false, false}, {2, 4, 9, false, true}} {
		sys, warns, err := topo.ParseXML(strings.NewReader(h.XML()))
		if err != nil {
			t.Fatalf("%+v: %v", h, err)
		}
		if n := sys.Count(topo.GPU); n != h.N() {
			t.Errorf("%+v: %d GPUs, want %d", h, n, h.N())
		}
		if n := sys.Count(topo.CPU); n != max(h.Sockets, 1) {
			t.Errorf("%+v: %d CPUs", h, n)
		}
		for _, w := range warns {
			if h.N() <= topo.MaxLocalRanks || !strings.Contains(w.Message, "local ranks") {
				t.Errorf("%+v: warning %s", h, w)
			}
		}
	}
}
