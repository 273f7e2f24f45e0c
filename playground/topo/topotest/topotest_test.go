package topotest_test

import (
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/topo"
	"github.com/distributed-nav/distributed-nav/playground/topo/topotest"
)

// TestHostsParse: every shape parses without error into N GPUs, NICs none,
// CPUs Sockets, and without warnings but two that follow from its size: more
// GPUs than NCCL's local ranks, and more elements than NCCL's own reader
// holds (topo.NCCLMaxElements; a start tag is '<' and a letter).
func TestHostsParse(t *testing.T) {
	for _, h := range []topotest.Host{{1, 0, 4, false, false}, {1, 6, 11, false, false}, {2, 4, 9, true, false}, {8, 8, 8, true, false}, {1, 0, 300, false, false}, {2, 4, 9, false, true}} {
		x := h.XML()
		elements := 0
		for i := 0; i+1 < len(x); i++ {
			if c := x[i+1]; x[i] == '<' && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
				elements++
			}
		}
		sys, warns, err := topo.ParseXML(strings.NewReader(x))
		if err != nil {
			t.Fatalf("%+v: %v", h, err)
		}
		if n := sys.Count(topo.GPU); n != h.N() {
			t.Errorf("%+v: %d GPUs, want %d", h, n, h.N())
		}
		if n := sys.Count(topo.CPU); n != max(h.Sockets, 1) {
			t.Errorf("%+v: %d CPUs", h, n)
		}
		limit := 0
		for _, w := range warns {
			switch {
			case h.N() > topo.MaxLocalRanks && strings.Contains(w.Message, "local ranks"):
			case elements >= topo.NCCLMaxElements && strings.Contains(w.Message, "NCCL_TOPO_XML_MAX_NODES"):
				limit++
			default:
				t.Errorf("%+v: warning %s", h, w)
			}
		}
		if want := min(1, elements/topo.NCCLMaxElements); limit != want {
			t.Errorf("%+v: %d elements, %d warnings of NCCL's element limit, want %d", h, elements, limit, want)
		}
	}
}
