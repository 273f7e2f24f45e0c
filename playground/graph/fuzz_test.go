package graph

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
	"github.com/distributed-nav/distributed-nav/playground/topo"
)

// FuzzSearch runs the whole pipeline on mutated topologies: parsing,
// analysis and the search must never panic, and a search either succeeds
// with at least one channel per graph or stops at its deadline.
func FuzzSearch(f *testing.F) {
	files, _ := filepath.Glob("../../data/topologies/*.xml")
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b, uint8(1))
		}
	}
	env := ncclenv.New(nil)
	f.Fuzz(func(t *testing.T, data []byte, hosts uint8) {
		sys, _, err := topo.ParseXML(bytes.NewReader(data))
		if err != nil || sys.Count(topo.GPU) > 16 {
			return
		}
		if sys, err = sys.Replicate(int(hosts%4) + 1); err != nil {
			t.Fatal(err)
		}
		a, err := topo.Analyze(sys, env)
		if err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		r, err := SearchAll(ctx, a, env)
		if err != nil {
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("search: %v", err)
			}
			return
		}
		for _, g := range r.Graphs() {
			if g.NChannels < 1 || len(g.Channels) != g.SearchChannels {
				t.Fatalf("%s: %d channels, %d listed", g.Pattern, g.NChannels, len(g.Channels))
			}
		}
	})
}
