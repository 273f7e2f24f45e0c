package tune

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
	"github.com/distributed-nav/distributed-nav/playground/topo"
)

func contextWithCancel() (context.Context, context.CancelFunc) {
	return context.WithCancel(context.Background())
}

func contextBackground() context.Context { return context.Background() }

func FuzzParseNCCLAlgo(f *testing.F) {
	for _, s := range []string{"Ring", "^Tree", "ring,tree;allreduce:nvls,nvlstree", "allgather:pat;ring", "", ";", ":", "^", "tree,,ring,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseNCCLAlgo(s)
		if cerr := ncclenv.CheckList(s, funcNames(), algoNames()); (err == nil) != (cerr == nil) {
			t.Fatalf("ParseNCCLAlgo(%q) err %v, CheckList err %v", s, err, cerr)
		}
		if err != nil {
			var le *ncclenv.ListError
			if !errors.As(err, &le) {
				t.Fatalf("error %v is not a *ncclenv.ListError", err)
			}
			return
		}
		for _, row := range m {
			for _, v := range row {
				if v != 0 && v != 1 {
					t.Fatalf("ParseNCCLAlgo(%q) cell %d", s, v)
				}
			}
		}
	})
}

func FuzzParseNCCLProto(f *testing.F) {
	for _, s := range []string{"Simple", "^LL128;allreduce:LL128", "LL,Simple;allreduce:^LL", "ll128", "allreduce:", "^"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseNCCLProto(s)
		if err != nil {
			return
		}
		for _, row := range m {
			for p, v := range row {
				// Only an untouched LL128 cell keeps the "auto" value 2.
				if v != 0 && v != 1 && !(v == 2 && Protocol(p) == LL128) {
					t.Fatalf("ParseNCCLProto(%q) = %v", s, m)
				}
			}
		}
	})
}

// FuzzModel feeds arbitrary numbers to NewModel and Select: bad input must
// give an error, never a panic, and a usable model must select something.
func FuzzModel(f *testing.F) {
	f.Add(8, 1, 90, 16, 20.0, 20.0, 1, 5, 0.0, uint64(1<<20), 4)
	f.Add(16, 2, 80, 2, 12.0, 6.0, 8, 9, 2.0, uint64(8), 2)
	f.Fuzz(func(t *testing.T, nRanks, nNodes, cc, nch int, bwIntra, bwInter float64, ti, te int, lat float64, n uint64, fn int) {
		g := Graph{Pattern: PatternRing, NChannels: nch, BwIntra: bwIntra, BwInter: bwInter,
			TypeIntra: topo.PathType(ti), TypeInter: topo.PathType(te), LatencyInter: lat}
		m, err := NewModel(System{NRanks: nRanks, NNodes: nNodes, MinCompCap: cc, MaxCompCap: cc, CPUArch: ArchX86}, Graphs{Ring: g, Tree: g}, Options{})
		if err != nil {
			return
		}
		c, err := m.Select(Request{Func: Func(fn), NBytes: n})
		if err != nil {
			return
		}
		if c.TimeUs < 0 || math.IsNaN(float64(c.TimeUs)) || c.NChannels < 1 || c.NThreads < 96 {
			t.Fatalf("odd choice %+v", c)
		}
		_ = m.TuningTableLines()
	})
}
