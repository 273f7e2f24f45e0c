package tune

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/topo"
)

// cell formats one table cell the way the TUNING log does ("%8.1f/%6.1f").
func cell(m *Model, f Func, a Algorithm, p Protocol) string {
	return fmt.Sprintf("%.1f/%.1f", m.Latencies[f][a][p], m.Bandwidths[f][a][p])
}

func mustModel(t testing.TB, s System, g Graphs, o Options) *Model {
	t.Helper()
	m, err := NewModel(s, g, o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func mustSelect(t testing.TB, m *Model, f Func, n uint64) Choice {
	t.Helper()
	c, err := m.Select(Request{Func: f, NBytes: n})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// hopper8 is the illustrative single-node input of nccl-model.md §6: eight
// Hopper GPUs, ring and tree graphs with 16 channels of 20 GB/s over NVLink.
func hopper8() (System, Graphs) {
	tree := Graph{Pattern: PatternBalancedTree, NChannels: 16, BwIntra: 20, BwInter: 20, TypeIntra: topo.PathNVL, TypeInter: topo.PathPIX, SameChannels: true}
	ring := tree
	ring.Pattern = PatternRing
	return System{NRanks: 8, NNodes: 1, MinCompCap: 90, MaxCompCap: 90, CPUArch: ArchX86, CPUVendor: VendorIntel},
		Graphs{Ring: ring, Tree: tree}
}

// TestGoldenHopper8 checks nccl-model.md §6 (derived by hand from
// tuning.cc:305-435 with the constants of tuning.cc:148-212):
//
//	cc index 2 (Hopper), 1 node: llMaxBw 141, perChMaxTreeBw 38.7,
//	perChMaxRingLL128Bw 36.7, perChMaxTreeLL128Bw 36.7; busBw = 16×20 = 320.
//	Ring AllReduce, nsteps 14, ratio 8/14:
//	  LL     min(141, 160)=141 → 80.6;     lat 6.6 + 14×0.6 = 15.0
//	  LL128  min(294.4, 587.2) → 168.2;    lat 14 + 14×1.9 = 40.6
//	  Simple 320 → 182.9;                  lat 8.4 + 14×3.4 = 56.0
//	Tree AllReduce, ratio 0.5, first min(0.92×320, 16×38.7) = 294.4:
//	  LL     294.4/3.8 = 77.47 → 38.7;     lat 6.8 + 2×7×0.6 = 15.2
//	  LL128  294.4×7/9 = 228.98 → 114.5;   lat 14 + 2×7×1.25 = 31.5
//	  Simple 294.4 → 147.2;                lat 8.4 + 2×7×4.0 = 64.4
func TestGoldenHopper8(t *testing.T) {
	s, g := hopper8()
	m := mustModel(t, s, g, Options{})
	want := map[[2]int]string{
		{int(Tree), int(LL)}: "15.2/38.7", {int(Tree), int(LL128)}: "31.5/114.5", {int(Tree), int(Simple)}: "64.4/147.2",
		{int(Ring), int(LL)}: "15.0/80.6", {int(Ring), int(LL128)}: "40.6/168.2", {int(Ring), int(Simple)}: "56.0/182.9",
	}
	for k, w := range want {
		if got := cell(m, AllReduce, Algorithm(k[0]), Protocol(k[1])); got != w {
			t.Errorf("AllReduce %v/%v = %s, want %s", Algorithm(k[0]), Protocol(k[1]), got, w)
		}
	}
	// The same cells as NCCL lays them out: "%13s |" then "%8.1f/%6.1f |"
	// per cell (tuning.cc:572-583); the row also carries CollNetDirect,
	// whose zeroed graph gives PCI latencies: 2×(1×0 + 7×0.4) + 0 = 5.6
	// for LL/LL128 and 2×(3.7 + 2.8) + 31 = 44.0 for Simple.
	lines := m.TuningTableLines()
	wantRow := "    AllReduce |    15.2/  38.7 |    31.5/ 114.5 |    64.4/ 147.2 |    15.0/  80.6 |    40.6/ 168.2 |    56.0/ 182.9 |     5.6/   0.0 |     5.6/   0.0 |    44.0/   0.0 |"
	if lines[7] != wantRow {
		t.Errorf("AllReduce row\n got %q\nwant %q", lines[7], wantRow)
	}
	wantThreads := " Max NThreads |            512 |            640 |            512 |            512 |            640 |            512 |              0 |              0 |            640 |"
	if lines[2] != wantThreads {
		t.Errorf("threads row\n got %q\nwant %q", lines[2], wantThreads)
	}
	// §6: argmin Ring/LL for 1 KiB-1 MiB, Ring/LL128 at 16 MiB, Ring/Simple at 256 MiB.
	for _, tc := range []struct {
		n     uint64
		algo  Algorithm
		proto Protocol
	}{{1 << 10, Ring, LL}, {1 << 20, Ring, LL}, {16 << 20, Ring, LL128}, {256 << 20, Ring, Simple}} {
		c := mustSelect(t, m, AllReduce, tc.n)
		if c.Algo != tc.algo || c.Proto != tc.proto {
			t.Errorf("%d B: %v/%v, want %v/%v", tc.n, c.Algo, c.Proto, tc.algo, tc.proto)
		}
	}
	// Time at 256 MiB: 56.0 + 268435456/(1000×182.857) = 1524.0 µs (tuning.cc:653).
	if c := mustSelect(t, m, AllReduce, 256<<20); math.Abs(float64(c.TimeUs)-1524.0) > 0.05 {
		t.Errorf("time at 256 MiB = %v, want 1524.0", c.TimeUs)
	}
}

// TestGoldenLayout checks the block structure of the TUNING table
// (tuning.cc:547-584): three blocks (3+3+1 algorithms), each with Algorithm,
// Protocol, Max NThreads and five function rows; the last Protocol row keeps
// nine columns.
func TestGoldenLayout(t *testing.T) {
	s, g := hopper8()
	m := mustModel(t, s, g, Options{})
	lines := m.TuningTableLines()
	if len(lines) != 24 {
		t.Fatalf("%d lines, want 24", len(lines))
	}
	wantHeads := []string{
		"  Algorithm   |                            Tree                  |                            Ring                  |                   CollNetDirect                  |",
		"  Algorithm   |                    CollNetChain                  |                            NVLS                  |                        NVLSTree                  |",
		"  Algorithm   |                             PAT                  |",
	}
	for i, w := range wantHeads {
		if lines[8*i] != w {
			t.Errorf("block %d header\n got %q\nwant %q", i, lines[8*i], w)
		}
	}
	proto := "  Protocol    |" + strings.Repeat("             LL |          LL128 |         Simple |", 3)
	for i := 0; i < 3; i++ {
		if lines[8*i+1] != proto {
			t.Errorf("block %d protocol row %q", i, lines[8*i+1])
		}
	}
	if lines[18] != " Max NThreads |              0 |              0 |              0 |" {
		t.Errorf("PAT threads row %q", lines[18])
	}
	for i, f := range []string{"    Broadcast |", "       Reduce |", "    AllGather |", "ReduceScatter |", "    AllReduce |"} {
		if !strings.HasPrefix(lines[3+i], f) {
			t.Errorf("row %d = %q, want prefix %q", 3+i, lines[3+i], f)
		}
	}
}

// pcie4090 is a hypothetical single node of four RTX 4090 (sm89) whose GPUs
// talk through the CPU: ring and tree graphs of 2 channels at 10 GB/s with
// typeIntra PHB.
func pcie4090(sameChannels bool) (System, Graphs) {
	tree := Graph{Pattern: PatternBalancedTree, NChannels: 2, BwIntra: 10, BwInter: 10, TypeIntra: topo.PathPHB, TypeInter: topo.PathPIX, SameChannels: sameChannels}
	ring := tree
	ring.Pattern = PatternRing
	return System{NRanks: 4, NNodes: 1, MinCompCap: 89, MaxCompCap: 89, CPUArch: ArchX86, CPUVendor: VendorAMD},
		Graphs{Ring: ring, Tree: tree}
}

// TestGoldenPCIe4090 derives every expected value by hand:
//
//	sm89 → cc index 1 (Ampere): llMaxBw 87.7, perChMaxTreeBw 24.0
//	(tuning.cc:180, 201); typeIntra PHB ≠ NVL → PCI latencies (tuning.cc:285,
//	165-168); PHB > NVB disables LL128 (tuning.cc:531, 537); busBw = 2×10 = 20.
//	AllReduce (nsteps 6, ring ratio 4/6, tree ratio 0.5):
//	  Ring LL     min(87.7, 10) × 4/6 = 6.7;  lat 6.6 + 6×1.0 = 12.6
//	  Ring LL128  bw 0;                       lat 14 + 6×2.5 = 29.0
//	  Ring Simple 20 × 4/6 = 13.3;            lat 8.4 + 6×5.7 = 42.6
//	  Tree LL     min(18.4/3.8, 87.7)×0.5 = 2.4; lat 6.8 + 2×3×1.0 = 12.8
//	  Tree LL128  bw 0;                       lat 14 + 2×3×1.9 = 25.4
//	  Tree Simple 18.4×0.5 = 9.2;             lat 8.4 + 2×3×4.0 = 32.4
//	Broadcast (nsteps 4, ratio 1), sameChannels → one hop:
//	  LL 6.6+1.0 = 7.6 / min(87.7, 10) = 10.0;  Simple 8.4+5.7 = 14.1 / 20.0
//	AllGather (nsteps 3, ratio 4/3): LL 6.6+3×1.0 = 9.6 / 13.3; Simple 8.4+3×5.7 = 25.5 / 26.7
//	CollNetDirect (zeroed graph, tuning.cc:418-421): 2×(1×0+3×0.4) = 2.4 for
//	LL/LL128, 2×(3.7+1.2)+31 = 40.8 for Simple; bandwidth 0.
//	PAT is not computed: NCCL_PAT_ENABLE=2 needs one GPU per node (tuning.cc:220).
func TestGoldenPCIe4090(t *testing.T) {
	s, g := pcie4090(true)
	m := mustModel(t, s, g, Options{})
	tests := []struct {
		f    Func
		a    Algorithm
		p    Protocol
		want string
	}{
		{AllReduce, Ring, LL, "12.6/6.7"}, {AllReduce, Ring, LL128, "29.0/0.0"}, {AllReduce, Ring, Simple, "42.6/13.3"},
		{AllReduce, Tree, LL, "12.8/2.4"}, {AllReduce, Tree, LL128, "25.4/0.0"}, {AllReduce, Tree, Simple, "32.4/9.2"},
		{Broadcast, Ring, LL, "7.6/10.0"}, {Broadcast, Ring, Simple, "14.1/20.0"},
		{AllGather, Ring, LL, "9.6/13.3"}, {AllGather, Ring, Simple, "25.5/26.7"},
		{AllGather, CollNetDirect, LL, "2.4/0.0"}, {AllGather, CollNetDirect, Simple, "40.8/0.0"},
		{AllGather, PAT, Simple, "0.0/0.0"},
	}
	for _, tt := range tests {
		if got := cell(m, tt.f, tt.a, tt.p); got != tt.want {
			t.Errorf("%v %v/%v = %s, want %s", tt.f, tt.a, tt.p, got, tt.want)
		}
	}
	// Without sameChannels a Broadcast pays nsteps hops, Simple at the tree
	// Simple latency (tuning.cc:399-401): LL 6.6+4×1.0 = 10.6, Simple 8.4+4×4.0 = 24.4.
	s2, g2 := pcie4090(false)
	m2 := mustModel(t, s2, g2, Options{})
	if got := cell(m2, Broadcast, Ring, LL); got != "10.6/10.0" {
		t.Errorf("Broadcast LL without sameChannels = %s", got)
	}
	if got := cell(m2, Broadcast, Ring, Simple); got != "24.4/20.0" {
		t.Errorf("Broadcast Simple without sameChannels = %s", got)
	}
	// Ring LL beats Ring Simple until 12.6 + n/6666.7 = 42.6 + n/13333.3,
	// i.e. n = 400000 B: 256 KiB → Ring/LL, 512 KiB → Ring/Simple.
	if c := mustSelect(t, m, AllReduce, 256<<10); c.Algo != Ring || c.Proto != LL {
		t.Errorf("256 KiB: %v/%v", c.Algo, c.Proto)
	}
	if c := mustSelect(t, m, AllReduce, 512<<10); c.Algo != Ring || c.Proto != Simple {
		t.Errorf("512 KiB: %v/%v", c.Algo, c.Proto)
	}
	// Channels (enqueue.cc:2070-2115): comm->nChannels = 2×2 = 4. At 8 B,
	// Ring LL (threshold 8×4 = 32): 8 < nc×512×32 shrinks nc to 1, then nt
	// halves 512→64, and the minimum of 3 warps gives 96 threads.
	if c := mustSelect(t, m, AllReduce, 8); c.NChannels != 1 || c.NThreads != 96 {
		t.Errorf("8 B: %d channels, %d threads; want 1, 96", c.NChannels, c.NThreads)
	}
	// At 1 GiB, Ring Simple keeps 4 channels and 512+32 threads.
	if c := mustSelect(t, m, AllReduce, 1<<30); c.NChannels != 4 || c.NThreads != 544 {
		t.Errorf("1 GiB: %d channels, %d threads; want 4, 544", c.NChannels, c.NThreads)
	}
	// maxThreads[Ring][Simple] is 512 because 10×2 = 20 > PCI_BW (12); with
	// one channel of 10 GB/s it drops to 256 (tuning.cc:244-247).
	if m.MaxThreads[Ring][Simple] != 512 {
		t.Errorf("ring simple threads %d", m.MaxThreads[Ring][Simple])
	}
	g3 := g
	g3.Ring.NChannels, g3.Tree.NChannels = 1, 1
	if m3 := mustModel(t, s, g3, Options{}); m3.MaxThreads[Ring][Simple] != 256 {
		t.Errorf("ring simple threads with 1 channel %d, want 256", m3.MaxThreads[Ring][Simple])
	}
}

// TestGoldenHopperTwoNodes is a hypothetical 2 nodes × 8 Hopper, Intel x86,
// ring/tree 4 channels of 24 GB/s, typeIntra NVL, typeInter PXB,
// latencyInter 0. By hand (tuning.cc:305-435):
//
//	index2 = 1 (2 nodes), llMaxBw row 0 (Intel) = 39.0, perChMaxTreeBw 41.4;
//	nNodes ≤ 2 → bw = bwIntra = 24, busBw = 96.
//	Ring AllReduce: nsteps 30, nInterSteps 2, ratio 16/30, netOverhead 1 µs (×3 Simple)
//	  LL     min(39, 48)×16/30 = 20.8;  lat 6.6 + 28×max(0.6,1) + 2×2.7 = 40.0
//	  LL128  88.32×16/30 = 47.1;        lat 14 + 28×max(1.9,1) + 2×4.0 = 75.2
//	  Simple 96×16/30 = 51.2;           lat 8.4 + 28×max(3.4,3) + 2×14 = 131.6
//	Tree AllReduce: min(88.32, 165.6) = 88.32, ratio 0.5
//	  LL     88.32/3.8×0.5 = 11.6;      lat 6.8 + 2×(7×0.6 + 1×5.0) = 25.2
//	  LL128  88.32×120/128×0.5 = 41.4;  lat 14 + 2×(7×1.25 + 8.5) = 48.5
//	  Simple 44.2;                      lat 8.4 + 2×(7×4 + 14) = 92.4
//	NVLS and NVLSTree are disabled: no CollNet across nodes (tuning.cc:504-506).
func TestGoldenHopperTwoNodes(t *testing.T) {
	tree := Graph{Pattern: PatternBalancedTree, NChannels: 4, BwIntra: 24, BwInter: 24, TypeIntra: topo.PathNVL, TypeInter: topo.PathPXB, SameChannels: true}
	ring := tree
	ring.Pattern = PatternRing
	s := System{NRanks: 16, NNodes: 2, MinCompCap: 90, MaxCompCap: 90, CPUArch: ArchX86, CPUVendor: VendorIntel}
	m := mustModel(t, s, Graphs{Ring: ring, Tree: tree}, Options{})
	want := map[[2]int]string{
		{int(Ring), int(LL)}: "40.0/20.8", {int(Ring), int(LL128)}: "75.2/47.1", {int(Ring), int(Simple)}: "131.6/51.2",
		{int(Tree), int(LL)}: "25.2/11.6", {int(Tree), int(LL128)}: "48.5/41.4", {int(Tree), int(Simple)}: "92.4/44.2",
	}
	for k, w := range want {
		if got := cell(m, AllReduce, Algorithm(k[0]), Protocol(k[1])); got != w {
			t.Errorf("AllReduce %v/%v = %s, want %s", Algorithm(k[0]), Protocol(k[1]), got, w)
		}
	}
	// Ring Simple "plateau" (tuning.cc:647-650): once nBytes/(nChannels×nRanks)
	// ≥ 64 with comm->nChannels = 2×4 = 8, i.e. from 8192 B, lat ×1.4.
	below := m.AlgoTime(AllReduce, Ring, Simple, 8191, 1)
	at := m.AlgoTime(AllReduce, Ring, Simple, 8192, 1)
	if w := float32(131.6) + 8191/(1000*m.Bandwidths[AllReduce][Ring][Simple]); math.Abs(float64(below-w)) > 1e-3 {
		t.Errorf("time(8191) = %v, want %v", below, w)
	}
	if w := float32(131.6*1.4) + 8192/(1000*m.Bandwidths[AllReduce][Ring][Simple]); math.Abs(float64(at-w)) > 1e-3 {
		t.Errorf("time(8192) = %v, want %v", at, w)
	}
	if m.Bandwidths[AllReduce][NVLS][Simple] != 0 || m.AlgoEnable[AllReduce][NVLS] != 0 {
		t.Error("NVLS must be disabled across nodes without CollNet")
	}
}

// TestPublishedLog2297 reproduces the TUNING table of a published NCCL
// 2.29.7 log: two ranks on two "hosts" (NCCL_HOSTID), one RTX 5090 (sm120)
// each, NCCL_NET=Socket, in
// https://github.com/eunomia-bpf/nccl-eBPF/blob/b28739427f3a7c54327ecf750873726455537fa4/docs/tmp/default-suboptimal-search.md
// (section "Step 1 Raw Output"). Between 2.29.7-1 and 2.30.7-1 tuning.cc
// changed only the Blackwell N4 perChMaxNVLSTreeBw and the CollNetChain
// support check, neither of which these cells read. The graphs are inferred
// from the log: ring 2 channels × 1.2 GB/s (Broadcast Simple 2.4, threads
// 256 since 2.4 ≤ PCI_BW), tree 2 × 2.4 GB/s with pattern TREE (PAT
// 4.8×0.75 = 3.6; tree AllReduce 4.8×0.92×0.85/3.8×0.5 = 0.5).
func TestPublishedLog2297(t *testing.T) {
	ring := Graph{Pattern: PatternRing, NChannels: 2, BwIntra: 1.2, BwInter: 1.2, TypeIntra: topo.PathLOC, TypeInter: topo.PathSYS, SameChannels: true}
	tree := Graph{Pattern: PatternTree, NChannels: 2, BwIntra: 2.4, BwInter: 2.4, TypeIntra: topo.PathLOC, TypeInter: topo.PathSYS, SameChannels: true}
	s := System{NRanks: 2, NNodes: 2, MinCompCap: 120, MaxCompCap: 120, CPUArch: ArchX86, CPUVendor: VendorIntel}
	m := mustModel(t, s, Graphs{Ring: ring, Tree: tree}, Options{})
	// Values read from the log, as "lat/bw" per (function, algorithm, protocol).
	want := []struct {
		f    Func
		a    Algorithm
		vals [3]string
	}{
		{Broadcast, Ring, [3]string{"9.3/1.2", "18.0/0.0", "22.4/2.4"}},
		{AllGather, Ring, [3]string{"11.6/2.4", "22.5/0.0", "22.4/4.8"}},
		{AllGather, CollNetDirect, [3]string{"5.0/0.0", "8.5/0.0", "14.0/0.0"}},
		{AllReduce, Tree, [3]string{"16.8/0.5", "31.0/0.0", "36.4/1.9"}},
		{AllReduce, Ring, [3]string{"16.6/1.2", "31.0/0.0", "36.4/2.4"}},
		{AllReduce, CollNetChain, [3]string{"5.0/0.0", "8.5/0.0", "14.0/0.0"}},
		{AllGather, PAT, [3]string{"0.0/0.0", "0.0/0.0", "17.6/3.6"}},
		{AllReduce, NVLS, [3]string{"0.0/0.0", "0.0/0.0", "0.0/0.0"}},
	}
	for _, w := range want {
		for p := Protocol(0); p < NumProtocols; p++ {
			if got := cell(m, w.f, w.a, p); got != w.vals[p] {
				t.Errorf("%v %v/%v = %s, log says %s", w.f, w.a, p, got, w.vals[p])
			}
		}
	}
	if m.MaxThreads[Ring][Simple] != 256 {
		t.Errorf("ring simple threads %d, log says 256", m.MaxThreads[Ring][Simple])
	}
	// The log's selections: Broadcast Ring/LL up to 16 KiB, Ring/Simple from
	// 32 KiB; LL runs on channel 0 only up to 8 KiB and on channels 0..1 at
	// 16 KiB (threshold 8×2 = 16 per thread, 512 threads, 4 channels).
	for _, tc := range []struct {
		n     uint64
		proto Protocol
		nc    int
	}{{1024, LL, 1}, {8192, LL, 1}, {16384, LL, 2}, {32768, Simple, 2}, {131072, Simple, 4}} {
		c := mustSelect(t, m, Broadcast, tc.n)
		if c.Algo != Ring || c.Proto != tc.proto || c.NChannels != tc.nc {
			t.Errorf("Broadcast %d B: %v/%v on %d channels, want Ring/%v on %d", tc.n, c.Algo, c.Proto, c.NChannels, tc.proto, tc.nc)
		}
	}
}

// TestGoldenNVLS derives the NVLS cells (tuning.cc:307-323, 376-382, 424-426)
// for a hypothetical single Hopper node with an NVLS graph of 8 channels at
// 40 GB/s: intraBw = 40×0.85×7/8 = 29.75, ×2 for AllReduce = 59.5, capped by
// interBw 40 → busBw 8×40 = 320 → ×8/14 = 182.9; AllGather: 29.75×7/8 =
// 26.03125 → busBw 208.25 (no ratio for non-ring AllGather), which both
// glibc's and Go's %.1f print as 208.2 (an exact tie rounds to even). Latency =
// hwLat[NVLINK][NVLS][Simple] = 25. NVLSTree is off on one node.
func TestGoldenNVLS(t *testing.T) {
	s, g := hopper8()
	s.NVLSSupport = true
	s.NVSCount = 4
	g.NVLS = Graph{Pattern: PatternNVLS, NChannels: 8, BwIntra: 40, BwInter: 40, TypeIntra: topo.PathNVL, TypeInter: topo.PathPIX}
	m := mustModel(t, s, g, Options{})
	if got := cell(m, AllReduce, NVLS, Simple); got != "25.0/182.9" {
		t.Errorf("AllReduce NVLS = %s", got)
	}
	if got := cell(m, AllGather, NVLS, Simple); got != "25.0/208.2" {
		t.Errorf("AllGather NVLS = %s", got)
	}
	if m.Bandwidths[AllReduce][NVLSTree][Simple] != 0 {
		t.Error("NVLSTree must be disabled on one node")
	}
	if m.NVLSChannels != 16 {
		t.Errorf("nvlsChannels %d, want 16 (NVLS_NCHANNELS_SM90)", m.NVLSChannels)
	}
	// NVLS at 256 MiB: 25 + 268435456/182857 = 1493.0 beats Ring/Simple's 1524.0.
	if c := mustSelect(t, m, AllReduce, 256<<20); c.Algo != NVLS || c.NChannels != 16 || c.NThreads != 640 {
		t.Errorf("256 MiB: %v/%v on %d channels × %d threads, want NVLS on 16 × 640", c.Algo, c.Proto, c.NChannels, c.NThreads)
	}
	// Without NVLS support the graph is ignored, as NCCL never searches it.
	s.NVLSSupport = false
	if m2 := mustModel(t, s, g, Options{}); m2.Bandwidths[AllReduce][NVLS][Simple] != 0 || m2.NVLSChannels != 0 {
		t.Error("NVLS graph used without NVLS support")
	}
}

// TestSingleRank: one rank costs nothing and runs Ring/Simple
// (enqueue.cc:1993-1996); ncclTopoTuneModel returns before the tables
// (tuning.cc:261), so nothing is printed.
func TestSingleRank(t *testing.T) {
	g := Graph{Pattern: PatternRing, NChannels: 1, BwIntra: 5000, BwInter: 5000, TypeIntra: topo.PathLOC}
	m := mustModel(t, System{NRanks: 1, NNodes: 1, MinCompCap: 80, MaxCompCap: 80}, Graphs{Ring: g, Tree: g}, Options{})
	c := mustSelect(t, m, AllReduce, 1<<20)
	if c.Algo != Ring || c.Proto != Simple || c.TimeUs != 0 {
		t.Errorf("single rank: %v/%v %v µs", c.Algo, c.Proto, c.TimeUs)
	}
	if m.TuningTableLines() != nil {
		t.Error("single rank printed a table")
	}
}

// TestTieBreak: with equal costs the lower algorithm, then protocol, index
// wins because the scan uses a strict < (enqueue.cc:2035-2044).
func TestTieBreak(t *testing.T) {
	s, g := hopper8()
	m := mustModel(t, s, g, Options{})
	for a := range m.Bandwidths[AllReduce] {
		for p := range m.Bandwidths[AllReduce][a] {
			m.Bandwidths[AllReduce][a][p] = 0
		}
	}
	// Tree/LL128, Ring/LL and Ring/LL128 all cost 10 + 0 µs for a 0-byte message.
	for _, ap := range [][2]int{{int(Tree), int(LL128)}, {int(Ring), int(LL)}, {int(Ring), int(LL128)}} {
		m.Bandwidths[AllReduce][ap[0]][ap[1]] = 100
		m.Latencies[AllReduce][ap[0]][ap[1]] = 10
	}
	c := mustSelect(t, m, AllReduce, 0)
	if c.Algo != Tree || c.Proto != LL128 {
		t.Errorf("tie: %v/%v, want Tree/LL128", c.Algo, c.Proto)
	}
	m.Bandwidths[AllReduce][Tree][LL128] = 0
	if c := mustSelect(t, m, AllReduce, 0); c.Algo != Ring || c.Proto != LL {
		t.Errorf("tie: %v/%v, want Ring/LL", c.Algo, c.Proto)
	}
}
