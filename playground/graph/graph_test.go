package graph

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
	"github.com/distributed-nav/distributed-nav/playground/presets"
	"github.com/distributed-nav/distributed-nav/playground/topo"
)

func analyzePreset(t testing.TB, name string, hosts int, env ...string) (*topo.Analysis, ncclenv.Env) {
	t.Helper()
	p, err := presets.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	sys, _, err := p.System()
	if err != nil {
		t.Fatal(err)
	}
	if sys, err = sys.Replicate(hosts); err != nil {
		t.Fatal(err)
	}
	e, err := ncclenv.ParseAssignments(env)
	if err != nil {
		t.Fatal(err)
	}
	a, err := topo.Analyze(sys, e)
	if err != nil {
		t.Fatal(err)
	}
	return a, e
}

func searchPreset(t testing.TB, name string, hosts int, env ...string) (*Result, *topo.Analysis) {
	t.Helper()
	a, e := analyzePreset(t, name, hosts, env...)
	r, err := SearchAll(context.Background(), a, e)
	if err != nil {
		t.Fatal(err)
	}
	return r, a
}

type want struct {
	nCh              int
	bwIntra, bwInter float32
	pattern          Pattern
}

func checkGraph(t *testing.T, name string, g *Graph, w want) {
	t.Helper()
	if g == nil {
		t.Fatalf("%s graph missing", name)
	}
	if g.SearchChannels != w.nCh || g.BwIntra != w.bwIntra || g.BwInter != w.bwInter || g.Pattern != w.pattern {
		t.Errorf("%s: %s %d channels bw %v/%v, want %s %d channels bw %v/%v", name, g.Pattern, g.SearchChannels,
			g.BwIntra, g.BwInter, w.pattern, w.nCh, w.bwIntra, w.bwInter)
	}
}

// TestPresetGraphs checks the searched graphs against values derived by
// hand from ncclTopoCompute (search.cc:1074-1313); each case says how.
func TestPresetGraphs(t *testing.T) {
	tests := []struct {
		preset     string
		hosts      int
		ring, tree want
		nvls       *want
		commCh     int
	}{
		// A100: NVLink 12 x 20 = 240 GB/s per GPU to the NVSwitch. Speed 40
		// (first of speedArrayIntra) gives 240/40 = 6 rings = 240 >= totalBw,
		// done; ncclTopoDupChannels (bwIntra 40 >= 25, ccMin 80) doubles to 12
		// channels at 40/ceil(12/6) = 20. Pass 2 cannot raise 12 x 30 = 360 >
		// 240. Trees: 12 channels fixed, start at the first speed with
		// speed*12 <= 240*8/7 = 274.3, i.e. 20; perfect at once. Comm: 2*12.
		{"a100-sxm-8x", 1, want{12, 20, 20, Ring}, want{12, 20, 20, BalancedTree}, nil, 24},
		// H100: 18 x 20.6 = 370.8 GB/s. sm90 speeds start at 60: 6 rings
		// (360), no speed below gives more than 360 (50x7, 40x9, 30x12 are not
		// better; 24/60 < 0.49 stops the ladder); dup -> 12 x 30 (ccMin 90 but
		// bwIntra 60 >= 50). Trees: 30*12 = 360 <= 423.8, perfect; 40*12 =
		// 480 fails in pass 2. NVLS: 8 heads, each GPU sends and receives
		// bwIntra to the switch, the head twice: 9*bw <= 370.8 -> bw 40
		// (50*8 = 400 <= 423.8 is tried first and fails); pass 2 raises
		// bwInter alone to 50 then 60 (NVS-GPU hops only charge bwIntra).
		{"h100-sxm-8x", 1, want{12, 30, 30, Ring}, want{12, 30, 30, BalancedTree}, &want{8, 40, 60, NVLS}, 24},
		// GeForce 8x: every hop detours through the CPU, so the four GPUs of
		// a switch share its 24 GB/s uplink: 24/4 = 6 GB/s for one ring or
		// chain (7 does not fit). Comm: 2*1.
		{"rtx4090-8x", 1, want{1, 6, 6, Ring}, want{1, 6, 6, BalancedTree}, nil, 2},
		// Intel 4x: GPU-CPU-GPU hops cost bw*6/5 on the PCIe links (Intel
		// P2P overhead), so one ring at 20 (24 = 20*1.2) and nothing better at
		// lower speeds down to 10 (10/20 < 0.49 stops). Tree likewise at 20.
		{"rtx4090-4x", 1, want{1, 20, 20, Ring}, want{1, 20, 20, BalancedTree}, nil, 2},
		// AMD 2x (no overhead): a ring 0->1->0 at 20 uses each 24 GB/s link
		// once; the ladder finds 2 rings at 12 = 24 >= totalBw 24. The trees
		// (2 channels fixed) are 0->1 and 1->0 at 20 each.
		{"rtx4090-2x", 1, want{2, 12, 12, Ring}, want{2, 20, 20, BalancedTree}, nil, 4},
		// 3090 pairs: rings 0-1-2-3 and 0-3-2-1 cross the CPU twice at 24
		// GB/s per PCIe direction: 2 rings each at 12 = 4 channels x 12 (the
		// split NVLink domains force minChannels 2). Trees start at 15 (4
		// channels fixed, 15*4 <= 48*4/3) and pass 2 raises bwIntra to 20.
		{"rtx3090-4x-nvlink", 1, want{4, 12, 12, Ring}, want{4, 20, 15, BalancedTree}, nil, 8},
		// Two H100 IB hosts: maxBw is the GPU-NIC path, 48 (PCIe Gen5 x16),
		// so 8 rings at 48, one per NIC, = 384 >= totalBw 370.8; no dup
		// (ccMin 90 > 80, bwIntra 48 < 50, 8 > 4). The balanced tree needs a
		// PXN path back to the NIC (type PXN > PIX); with sm90 the ladder
		// first tries the simpler TREE, which fits at PIX: 8 x 48. Comm: 2*8
		// = 16, not doubled again because 16 is not < 16.
		{"h100-8x-ib", 2, want{8, 48, 48, Ring}, want{8, 48, 48, Tree}, nil, 16},
	}
	for _, tt := range tests {
		t.Run(tt.preset, func(t *testing.T) {
			r, _ := searchPreset(t, tt.preset, tt.hosts)
			checkGraph(t, "ring", r.Ring, tt.ring)
			checkGraph(t, "tree", r.Tree, tt.tree)
			if tt.nvls != nil {
				checkGraph(t, "nvls", r.NVLS, *tt.nvls)
			} else if tt.preset != "h100-8x-ib" && r.NVLS != nil {
				t.Errorf("unexpected NVLS graph")
			}
			if r.NChannels != tt.commCh {
				t.Errorf("comm channels %d, want %d", r.NChannels, tt.commCh)
			}
			for _, g := range r.Graphs() {
				if g.Fallback {
					t.Errorf("%s used the fallback", g.Pattern)
				}
			}
		})
	}
}

// TestGraphProperties checks invariants of every searched graph: channels
// visit every local rank once (NVLS: distinct heads), the result is
// deterministic, the steps are within NCCL's budgets, and replaying every
// channel's hops on fresh link bandwidths fits.
func TestGraphProperties(t *testing.T) {
	list, err := presets.List()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range list {
		for _, hosts := range []int{1, 2} {
			r, a := searchPreset(t, p.Name, hosts)
			r2, _ := searchPreset(t, p.Name, hosts)
			if !reflect.DeepEqual(r.Graphs(), r2.Graphs()) {
				t.Fatalf("%s: search is not deterministic", p.Name)
			}
			n := a.Local.Count(topo.GPU)
			for _, g := range r.Graphs() {
				if len(g.Channels) != g.SearchChannels || g.SearchChannels < 1 {
					t.Fatalf("%s %s: %d channels listed, %d searched", p.Name, g.Pattern, len(g.Channels), g.SearchChannels)
				}
				// A pass can use at most one global budget plus one attempt
				// and the 1024-step PCI-order probe per NIC.
				if g.Steps > 2*searchGlobalTimeout {
					t.Errorf("%s %s: %d steps", p.Name, g.Pattern, g.Steps)
				}
				heads := map[int]bool{}
				for c, ch := range g.Channels {
					if g.Pattern == NVLS {
						if heads[ch.Ranks[0]] {
							t.Errorf("%s: NVLS head %d repeated", p.Name, ch.Ranks[0])
						}
						heads[ch.Ranks[0]] = true
						continue
					}
					got := slices.Clone(ch.GPUs)
					slices.Sort(got)
					for i := range got {
						if got[i] != i || len(got) != n {
							t.Fatalf("%s %s channel %d is not a permutation: %v", p.Name, g.Pattern, c, ch.GPUs)
						}
					}
					if (a.Inter && a.Local.Count(topo.NET) > 0) != (ch.NetIn >= 0) {
						t.Errorf("%s %s channel %d: NetIn %d with inter %v", p.Name, g.Pattern, c, ch.NetIn, a.Inter)
					}
				}
				if g.Pattern == Ring || g.Pattern == Tree || (g.Pattern == BalancedTree && !a.Inter) {
					replay(t, a, g)
				}
			}
		}
	}
}

// replay charges every hop of every channel on fresh link bandwidths, the way
// the search did, and fails if any hop does not fit.
func replay(t *testing.T, a *topo.Analysis, g *Graph) {
	t.Helper()
	s := newSearcher(context.Background(), newPrep(a), 2)
	st := newState(s.ngpus)
	st.pattern, st.bwIntra, st.bwInter, st.typeIntra, st.typeInter = g.Pattern, g.BwIntra, g.BwInter, g.TypeIntra, g.TypeInter
	hop := func(t1 topo.NodeType, i1 int, t2 topo.NodeType, i2 int, c int) {
		if !s.followGraphPath(st, t1, i1, t2, i2, 1) {
			t.Fatalf("%s channel %d: hop %s/%d -> %s/%d does not fit at %v/%v", g.Pattern, c, t1, i1, t2, i2, g.BwIntra, g.BwInter)
		}
	}
	for c, ch := range g.Channels {
		gpus := ch.GPUs
		if ch.NetIn >= 0 {
			hop(topo.NET, ch.NetIn, topo.GPU, gpus[0], c)
		}
		for i := 0; i+1 < len(gpus); i++ {
			hop(topo.GPU, gpus[i], topo.GPU, gpus[i+1], c)
		}
		switch {
		case g.Pattern == Ring && ch.NetOut < 0:
			hop(topo.GPU, gpus[len(gpus)-1], topo.GPU, gpus[0], c)
		case g.Pattern == Ring:
			hop(topo.GPU, gpus[len(gpus)-1], topo.NET, ch.NetOut, c)
		case ch.NetOut >= 0:
			hop(topo.GPU, gpus[0], topo.NET, ch.NetOut, c)
		}
	}
}

func TestEnvironment(t *testing.T) {
	tests := []struct {
		name   string
		preset string
		hosts  int
		env    []string
		check  func(t *testing.T, r *Result)
	}{
		{"NCCL_MAX_NCHANNELS caps the comm", "h100-sxm-8x", 1, []string{"NCCL_MAX_NCHANNELS=4"}, func(t *testing.T, r *Result) {
			if r.NChannels != 4 {
				t.Errorf("channels %d, want 4", r.NChannels)
			}
		}},
		{"NCCL_MIN_NCHANNELS raises it", "h100-sxm-8x", 1, []string{"NCCL_MIN_NCHANNELS=32"}, func(t *testing.T, r *Result) {
			if r.NChannels != 32 {
				t.Errorf("channels %d, want 32", r.NChannels)
			}
		}},
		{"legacy NCCL_MAX_NRINGS", "h100-sxm-8x", 1, []string{"NCCL_MAX_NRINGS=2"}, func(t *testing.T, r *Result) {
			if r.NChannels != 2 {
				t.Errorf("channels %d, want 2", r.NChannels)
			}
		}},
		{"new name wins over legacy", "h100-sxm-8x", 1, []string{"NCCL_MAX_NRINGS=2", "NCCL_MAX_NCHANNELS=6"}, func(t *testing.T, r *Result) {
			if r.NChannels != 6 {
				t.Errorf("channels %d, want 6", r.NChannels)
			}
		}},
		{"NCCL_MAX_CTAS", "a100-sxm-8x", 1, []string{"NCCL_MAX_CTAS=8"}, func(t *testing.T, r *Result) {
			if r.NChannels != 8 {
				t.Errorf("channels %d, want 8", r.NChannels)
			}
		}},
		{"NCCL_NVLS_ENABLE=0", "h100-sxm-8x", 1, []string{"NCCL_NVLS_ENABLE=0"}, func(t *testing.T, r *Result) {
			if r.NVLS != nil || r.NVLSSupport {
				t.Errorf("NVLS still searched")
			}
		}},
		{"NCCL_CROSS_NIC=0 keeps rings on one rail", "h100-8x-ib", 2, []string{"NCCL_CROSS_NIC=0"}, func(t *testing.T, r *Result) {
			if r.Ring.CrossNic != 0 {
				t.Errorf("crossNic %d", r.Ring.CrossNic)
			}
			for _, ch := range r.Ring.Channels {
				if ch.NetIn != ch.NetOut {
					t.Errorf("ring leaves through NIC %d after entering through %d", ch.NetOut, ch.NetIn)
				}
			}
		}},
		{"P2P disabled on H100 goes through the CPUs", "h100-sxm-8x", 1, []string{"NCCL_P2P_DISABLE=1"}, func(t *testing.T, r *Result) {
			if r.Ring.TypeIntra < topo.PathPHB {
				t.Errorf("typeIntra %s, want PHB or worse", r.Ring.TypeIntra)
			}
		}},
		// NCCL_P2P_DISABLE reroutes only GPU-GPU paths through a CPU
		// (ncclTopoComputePaths, src/graph/paths.cc:758-772 at v2.30.7-1:
		// the GPU-NVSwitch paths set just before stay NVL) and
		// ncclNvlsInit does not read it (src/transport/nvls.cc:248-280), so
		// NVLS is still searched and found over the NVSwitches: one channel
		// per GPU (maxChannels = min(NCCL_MAX_NVLS_ARITY, 8 GPUs) and
		// minChannels = maxChannels on one node, search.cc:1126-1138). Its
		// start, though, comes from the rerouted GPU-GPU paths: typeIntra
		// starts at their minimum, PHB (ncclTopoGetGpuMinPath,
		// search.cc:1088-1092), and the first speed tried is the first of
		// sm90's intra-node speeds at or under maxBw, the best bandwidth of
		// the device-to-device paths (getMaxBw, search.cc:20-52), which
		// through the CPU is a PCIe Gen5 x16 link's, under 50 GB/s: 40 of
		// {60, 50, 40, ...} (search.cc:1164-1172).
		// Only NCCL_NVLS_ENABLE=0 turns NVLS off (the case above).
		{"P2P disabled keeps NVLS on the NVSwitches", "h100-sxm-8x", 1, []string{"NCCL_P2P_DISABLE=1"}, func(t *testing.T, r *Result) {
			if !r.NVLSSupport || r.NVLS == nil {
				t.Fatalf("NVLS support %v graph %v, want NVLS searched", r.NVLSSupport, r.NVLS)
			}
			if r.NVLS.NChannels != 8 || r.NVLS.TypeIntra != topo.PathPHB || r.NVLS.BwIntra != 40 {
				t.Errorf("NVLS %d channels, typeIntra %s, bwIntra %g; want 8, PHB, 40", r.NVLS.NChannels, r.NVLS.TypeIntra, r.NVLS.BwIntra)
			}
		}},
		{"one GPU left after trimming: tree becomes TREE", "rtx4090-4x", 1, []string{"NCCL_SHM_DISABLE=1"}, func(t *testing.T, r *Result) {
			// The search is inter-node with a single GPU and no NIC, so
			// every graph falls back to one channel without a network.
			if !r.Ring.Fallback || r.Ring.TypeInter != topo.PathDIS || r.Tree.Pattern != Tree {
				t.Errorf("ring %+v tree pattern %s", r.Ring, r.Tree.Pattern)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := searchPreset(t, tt.preset, tt.hosts, tt.env...)
			tt.check(t, r)
		})
	}
}

// TestPostsetChannels checks ncclTopoPostset's arithmetic (connect.cc:460-505).
func TestPostsetChannels(t *testing.T) {
	none := func(string, int64) int64 { return -2 }
	withEnv := func(kv map[string]int64) func(string, int64) int64 {
		return func(name string, def int64) int64 {
			if v, ok := kv[name]; ok {
				return v
			}
			return def
		}
	}
	tests := []struct {
		name          string
		n, cc, nNodes int
		bw            float32
		param         func(string, int64) int64
		want          int
	}{
		{"doubled", 12, 90, 1, 30, none, 24},
		{"capped at 64", 40, 80, 1, 20, none, 64},
		{"Hopper multi-node fast ring doubles again", 4, 90, 2, 48, none, 16},
		{"not when bwIntra <= 45", 4, 90, 2, 45, none, 8},
		{"not on Ampere", 4, 80, 2, 48, none, 8},
		{"not at 16", 8, 90, 2, 48, none, 16},
		{"max channels", 12, 90, 1, 30, withEnv(map[string]int64{"NCCL_MAX_NCHANNELS": 3}), 3},
		{"max below 1 is 1", 12, 90, 1, 30, withEnv(map[string]int64{"NCCL_MAX_NCHANNELS": 0}), 1},
		{"min above 64 is 64", 12, 90, 1, 30, withEnv(map[string]int64{"NCCL_MIN_NCHANNELS": 99}), 64},
		{"min CTAs", 2, 90, 1, 30, withEnv(map[string]int64{"NCCL_MIN_CTAS": 10}), 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := postsetChannels(tt.n, tt.cc, tt.nNodes, tt.bw, tt.param); got != tt.want {
				t.Fatalf("postsetChannels = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestSpeedArray(t *testing.T) {
	if got := SpeedArray(80, false)[0]; got != 40 {
		t.Errorf("sm80 intra starts at %v", got)
	}
	if got := SpeedArray(90, false)[0]; got != 60 {
		t.Errorf("sm90 intra starts at %v", got)
	}
	if got := SpeedArray(100, true)[0]; got != 96 {
		t.Errorf("sm100 inter starts at %v", got)
	}
	if got := SpeedArray(70, true); got[len(got)-1] != 0.12 {
		t.Errorf("inter ends at %v", got[len(got)-1])
	}
}

func TestContextDeadline(t *testing.T) {
	a, e := analyzePreset(t, "h100-sxm-8x", 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := SearchAll(ctx, a, e); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled context: %v", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	time.Sleep(time.Millisecond)
	if _, err := SearchAll(ctx, a, e); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("expired deadline: %v", err)
	}
}

func TestSearchParamsValidation(t *testing.T) {
	a, e := analyzePreset(t, "rtx4090-2x", 1)
	if _, err := Search(context.Background(), a, e, Params{Pattern: Ring, MinChannels: 2, MaxChannels: 1}); err == nil {
		t.Fatal("bad channel bounds accepted")
	}
	if _, err := Search(context.Background(), a, e, Params{Pattern: Ring, MinChannels: 1, MaxChannels: 65}); err == nil {
		t.Fatal("65 channels accepted")
	}
}

func TestScalars(t *testing.T) {
	r, _ := searchPreset(t, "h100-8x-ib", 4)
	s := r.Scalars()
	if s.NRanks != 32 || s.NNodes != 4 || s.LocalRanks != 8 || s.MinCompCap != 90 || s.MaxCompCap != 90 ||
		s.CPUVendor != topo.VendorIntel || s.CPUArch != topo.ArchX86 || s.NVSCount != 1 || s.NChannels != r.NChannels ||
		s.MaxTreePattern != r.Tree.Pattern {
		t.Fatalf("scalars %+v", s)
	}
	if r.Ring.NChannels != r.Tree.NChannels || r.Ring.NChannels != r.CollChannels {
		t.Fatalf("ring %d tree %d coll %d not aligned", r.Ring.NChannels, r.Tree.NChannels, r.CollChannels)
	}
}

// Benchmarks: analysis plus the whole search, as ncclsim topo runs them.
func BenchmarkSearchAll(b *testing.B) {
	for _, name := range []string{"rtx4090-8x", "a100-sxm-8x", "h100-sxm-8x", "h100-8x-ib"} {
		b.Run(name, func(b *testing.B) {
			benchSearch(b, name, 1)
		})
	}
}

// BenchmarkSearch16Nodes is one rank's work on a 16-host x 8-GPU job.
func BenchmarkSearch16Nodes(b *testing.B) { benchSearch(b, "h100-8x-ib", 16) }

func benchSearch(b *testing.B, name string, hosts int) {
	p, err := presets.Get(name)
	if err != nil {
		b.Fatal(err)
	}
	sys, _, err := p.System()
	if err != nil {
		b.Fatal(err)
	}
	if sys, err = sys.Replicate(hosts); err != nil {
		b.Fatal(err)
	}
	env := ncclenv.New(nil)
	b.ReportAllocs()
	for b.Loop() {
		a, err := topo.Analyze(sys, env)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := SearchAll(context.Background(), a, env); err != nil {
			b.Fatal(err)
		}
	}
}
