package model

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/data"
	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
	"github.com/distributed-nav/distributed-nav/playground/tune"
)

func topologies(t testing.TB) []string {
	t.Helper()
	ents, err := data.Topologies.ReadDir("topologies")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".xml") {
			out = append(out, "topologies/"+e.Name())
		}
	}
	if len(out) == 0 {
		t.Fatal("no topology files embedded")
	}
	return out
}

func build(t testing.TB, path string, nodes int, env map[string]string) *Result {
	t.Helper()
	f, err := data.Topologies.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, _, err := BuildXML(context.Background(), f, nodes, ncclenv.New(env))
	if err != nil {
		t.Fatalf("%s × %d: %v", path, nodes, err)
	}
	return res
}

// TestBuildEveryTopology runs the whole pipeline on every embedded topology
// on 1 and 2 nodes and checks that the adapter hands the searched graphs to
// the tuning model unchanged, that both packages derive the same
// comm->nChannels, and that the ring AllReduce Simple bandwidth is the
// searched graph's nChannels × bw × nRanks/(2(nRanks-1)) (tuning.cc:324, 379).
func TestBuildEveryTopology(t *testing.T) {
	for _, p := range topologies(t) {
		for _, nodes := range []int{1, 2} {
			res := build(t, p, nodes, nil)
			sr, tm := res.Search, res.Tune
			if tm.CommNChannels != sr.NChannels {
				t.Errorf("%s × %d: tune %d channels, graph %d", p, nodes, tm.CommNChannels, sr.NChannels)
			}
			rg := tm.Graphs.Ring
			if rg.NChannels != sr.Ring.NChannels || float32(rg.BwIntra) != sr.Ring.BwIntra || rg.TypeIntra != sr.Ring.TypeIntra || rg.TypeInter != sr.Ring.TypeInter {
				t.Errorf("%s × %d: ring graph %+v not carried from %+v", p, nodes, rg, *sr.Ring)
			}
			if (sr.NVLS != nil) != tm.NVLSSupport {
				t.Errorf("%s × %d: NVLS graph %v, tune support %v", p, nodes, sr.NVLS != nil, tm.NVLSSupport)
			}
			if tm.Sys.NRanks != res.System.NRanks() || tm.Sys.NNodes != nodes {
				t.Errorf("%s × %d: %d ranks on %d nodes", p, nodes, tm.Sys.NRanks, tm.Sys.NNodes)
			}
			if n := tm.Sys.NRanks; n > 1 {
				bw := float64(rg.NChannels) * float64(float32(rg.BwIntra))
				if nodes > 2 {
					bw = float64(rg.NChannels) * float64(float32(rg.BwInter))
				}
				want := bw * float64(n) / float64(2*(n-1))
				if got := tm.Bandwidths[tune.AllReduce][tune.Ring][tune.Simple]; math.Abs(float64(got)-want) > 1e-3*want {
					t.Errorf("%s × %d: ring simple %v, want %v", p, nodes, got, want)
				}
			}
			if _, err := tm.Select(tune.Request{Func: tune.AllReduce, NBytes: 1 << 20}); err != nil {
				t.Errorf("%s × %d: %v", p, nodes, err)
			}
		}
	}
}

// TestBuildEnv passes NCCL's variables through to every stage.
func TestBuildEnv(t *testing.T) {
	p := topologies(t)[0]
	res := build(t, p, 1, map[string]string{"NCCL_MAX_NCHANNELS": "2", "NCCL_PROTO": "Simple", "NCCL_ALGO": "Ring"})
	if res.Tune.CommNChannels != 2 || res.Search.NChannels != 2 {
		t.Errorf("NCCL_MAX_NCHANNELS=2: tune %d, graph %d", res.Tune.CommNChannels, res.Search.NChannels)
	}
	c, err := res.Tune.Select(tune.Request{Func: tune.AllReduce, NBytes: 8})
	if err != nil || c.Algo != tune.Ring || c.Proto != tune.Simple {
		t.Errorf("restricted choice %v/%v %v", c.Algo, c.Proto, err)
	}
	f, err := data.Topologies.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, _, err := BuildXML(context.Background(), f, 1, ncclenv.New(map[string]string{"NCCL_ALGO": "Rign"})); err == nil {
		t.Error("a misspelt NCCL_ALGO must fail as NCCL's init does")
	}
}

func TestBuildErrors(t *testing.T) {
	if _, err := Build(context.Background(), nil, 1, ncclenv.Env{}); err == nil {
		t.Error("nil topology accepted")
	}
	if _, _, err := BuildXML(context.Background(), strings.NewReader("<system"), 1, ncclenv.Env{}); err == nil {
		t.Error("broken XML accepted")
	}
	f, err := data.Topologies.Open(topologies(t)[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, _, err := BuildXML(context.Background(), f, 0, ncclenv.Env{}); err == nil {
		t.Error("0 nodes accepted")
	}
}

// BenchmarkBuild measures the whole pipeline (parse, paths, search, tune)
// for each embedded topology on one node.
func BenchmarkBuild(b *testing.B) {
	for _, p := range topologies(b) {
		raw, err := data.Topologies.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(strings.TrimSuffix(strings.TrimPrefix(p, "topologies/"), ".xml"), func(b *testing.B) {
			for b.Loop() {
				if _, _, err := BuildXML(context.Background(), strings.NewReader(string(raw)), 1, ncclenv.Env{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
