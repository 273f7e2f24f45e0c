package graph

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
	"github.com/distributed-nav/distributed-nav/playground/presets"
	"github.com/distributed-nav/distributed-nav/playground/topo"
	"github.com/distributed-nav/distributed-nav/playground/topo/topotest"
)

// wideHost is a PCIe host of cpus sockets with switches switches of gpus
// GPUs each, every other GPU at x8 (topotest.Host).
func wideHost(cpus, switches, gpus int) []byte {
	return []byte(topotest.Host{Sockets: cpus, Switches: switches, GPUs: gpus, MixedWidths: true}.XML())
}

func analyzeXML(t testing.TB, xml []byte) *topo.Analysis {
	t.Helper()
	sys, _, err := topo.ParseXML(bytes.NewReader(xml))
	if err != nil {
		t.Fatal(err)
	}
	a, err := topo.Analyze(sys, ncclenv.New(nil))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestNextIntraMatchesSort holds nextIntra's memoised order to NCCL's
// per-step sort (nextScored with no NIC, which scores and sorts every call
// the way ncclTopoSearchNextGpuSort does, search.cc#L253-L326): for every
// preset and two synthetic hosts, every GPU, both sortNet values that reach
// it, and random "used" masks, the two lists must be equal.
func TestNextIntraMatchesSort(t *testing.T) {
	analyses := map[string]*topo.Analysis{
		"wide-1x1x4": analyzeXML(t, wideHost(1, 1, 4)),
		"wide-2x2x4": analyzeXML(t, wideHost(2, 2, 4)),
		"wide-2x4x9": analyzeXML(t, wideHost(2, 4, 9)),
	}
	ps, err := presets.List()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		a, _ := analyzePreset(t, p.Name, 1)
		analyses[p.Name] = a
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for name, a := range analyses {
		s := newSearcher(context.Background(), newPrep(a), 2)
		g := newState(s.ngpus)
		compared := 0
		for trial := range 20 {
			g.nChannels = trial % 3
			for i := range s.used {
				s.used[i] = 0
				if rng.IntN(3) == 0 {
					s.used[i] = uint64(1) << uint(g.nChannels)
				}
			}
			for gpu := range s.ngpus {
				for _, sortNet := range []int{0, -1} {
					fast := slices.Clone(s.nextIntra(g, gpu, 0, sortNet))
					slow := s.nextScored(g, gpu, 0, sortNet, -1)
					if !slices.Equal(fast, slow) {
						t.Fatalf("%s: GPU %d, sortNet %d, used %v: nextIntra %v, sorted %v", name, gpu, sortNet, s.used, fast, slow)
					}
					compared++
				}
			}
		}
		if compared == 0 {
			t.Errorf("%s: nothing compared", name)
		}
	}
}

// BenchmarkSearchWide runs the whole graph search (ring, tree, NVLS when
// present) on single PCIe hosts of 16, 72 (NCCL_MAX_LOCAL_RANKS) and 512 GPUs.
// The search stops at NCCL's step budgets (searchGlobalTimeout and the
// per-attempt ones), so the cost per step is what grows with the host.
func BenchmarkSearchWide(b *testing.B) {
	for _, shape := range [][3]int{{2, 2, 4}, {2, 4, 9}, {8, 8, 8}} {
		n := shape[0] * shape[1] * shape[2]
		a := analyzeXML(b, wideHost(shape[0], shape[1], shape[2]))
		b.Run(fmt.Sprintf("gpus=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := SearchAll(context.Background(), a, ncclenv.New(nil)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
