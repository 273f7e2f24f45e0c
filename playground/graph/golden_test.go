package graph

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/presets"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/search.golden from the current search")

// goldenEnvs are the environments every preset is searched under for the
// golden file: the defaults, the two other NCCL_CROSS_NIC values, which
// change the NIC checks and the relaxation ladder of multi-NIC hosts, and
// NCCL_P2P_DISABLE=1, which sends GPU traffic through the CPUs (PHB/SYS
// paths, the Intel PCI overhead, long searches on NVSwitch boards).
var goldenEnvs = [][]string{nil, {"NCCL_CROSS_NIC=0"}, {"NCCL_CROSS_NIC=1"}, {"NCCL_P2P_DISABLE=1"}}

// graphDigest is one line per graph: every scalar of the search result, the
// step count, and a hash of the channel list (ranks, GPUs, NICs per channel).
func graphDigest(g *Graph) string {
	var ch strings.Builder
	for _, c := range g.Channels {
		fmt.Fprintf(&ch, "%v %v %d %d;", c.Ranks, c.GPUs, c.NetIn, c.NetOut)
	}
	sum := sha256.Sum256([]byte(ch.String()))
	return fmt.Sprintf("%s ch=%d/%d min=%d max=%d bw=%v/%v lat=%v type=%s/%s cross=%d same=%d hops=%d steps=%d fallback=%v channels=%s",
		g.Pattern, g.NChannels, g.SearchChannels, g.MinChannels, g.MaxChannels, g.BwIntra, g.BwInter, g.LatencyInter,
		g.TypeIntra, g.TypeInter, g.CrossNic, g.SameChannels, g.NHops, g.Steps, g.Fallback, hex.EncodeToString(sum[:8]))
}

// TestSearchGolden pins the complete search output of every preset in
// data/topologies on one and two nodes, under each of goldenEnvs.
// testdata/search.golden was written with -update from the search code as it
// stood before the step-cost optimisation (graph and topo as in commit
// a3e6f1f, unchanged outside tests up to 075f45c), so any change to the
// channels, their order, the bandwidths, types or the number of
// ncclTopoSearchRecGpu steps fails here. Regenerate only for an intended
// change of the modelled behaviour:
// go test ./playground/graph -run TestSearchGolden -update.
func TestSearchGolden(t *testing.T) {
	list, err := presets.List()
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, p := range list {
		for _, hosts := range []int{1, 2} {
			for _, env := range goldenEnvs {
				r, _ := searchPreset(t, p.Name, hosts, env...)
				fmt.Fprintf(&out, "%s nodes=%d env=%v comm=%d coll=%d nvls=%v\n", p.Name, hosts, env, r.NChannels, r.CollChannels, r.NVLSSupport)
				for _, g := range r.Graphs() {
					fmt.Fprintf(&out, "  %s\n", graphDigest(g))
				}
			}
		}
	}
	path := filepath.Join("testdata", "search.golden")
	if *updateGolden {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (run with -update to create it): %v", err)
	}
	got := strings.Split(out.String(), "\n")
	wantLines := strings.Split(string(want), "\n")
	if len(got) != len(wantLines) {
		t.Errorf("golden has %d lines, the search produced %d", len(wantLines), len(got))
	}
	for i := 0; i < min(len(got), len(wantLines)); i++ {
		if got[i] != wantLines[i] {
			t.Errorf("line %d:\n got %s\nwant %s", i+1, got[i], wantLines[i])
		}
	}
}
