package tune

import (
	"math"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
	"github.com/distributed-nav/distributed-nav/playground/topo"
)

func near(a float32, b float64) bool { return math.Abs(float64(a)-b) <= 1e-3*math.Max(1, math.Abs(b)) }

func hopperTwoNodes(vendor CPUVendor) (System, Graphs) {
	tree := Graph{Pattern: PatternBalancedTree, NChannels: 4, BwIntra: 24, BwInter: 24, TypeIntra: topo.PathNVL, TypeInter: topo.PathPXB, SameChannels: true}
	ring := tree
	ring.Pattern = PatternRing
	return System{NRanks: 16, NNodes: 2, MinCompCap: 90, MaxCompCap: 90, CPUArch: ArchX86, CPUVendor: vendor}, Graphs{Ring: ring, Tree: tree}
}

func envOpts(t *testing.T, kv map[string]string) Options {
	t.Helper()
	o, err := OptionsFromEnv(ncclenv.New(kv))
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// TestRefinements pins each refinement of tuning.cc:326-435 to a value
// computed by hand, at full precision.
func TestRefinements(t *testing.T) {
	type check struct {
		name string
		got  func() float32
		want float64
	}
	var checks []check

	// Tree pattern TREE: ×0.85 (tuning.cc:336) on hopper8: 294.4×0.85×0.5 = 125.12.
	{
		s, g := hopper8()
		g.Tree.Pattern = PatternTree
		m := mustModel(t, s, g, Options{})
		checks = append(checks, check{"tree pattern penalty", func() float32 { return m.Bandwidths[AllReduce][Tree][Simple] }, 125.12})
		// MaxTreePattern overrides the local tree pattern (init.cc:1447).
		s.MaxTreePattern = PatternBalancedTree
		m2 := mustModel(t, s, g, Options{})
		checks = append(checks, check{"max tree pattern", func() float32 { return m2.Bandwidths[AllReduce][Tree][Simple] }, 147.2})
	}
	// PAT, 4 nodes × 1 GPU, tree graph 2 × 10 GB/s inter: nNodes > 2 → bwInter;
	// busBw 20 × 0.75 = 15 (tuning.cc:337, no ratio for AllGather);
	// lat 8 + log2(4)×(14/3.5) + 4×2.8 = 27.2 (tuning.cc:429-434, ppn 1 → NET Tree latency).
	{
		g := Graph{Pattern: PatternBalancedTree, NChannels: 2, BwIntra: 40, BwInter: 10, TypeIntra: topo.PathLOC, TypeInter: topo.PathPIX}
		r := g
		r.Pattern = PatternRing
		m := mustModel(t, System{NRanks: 4, NNodes: 4, MinCompCap: 90, MaxCompCap: 90, CPUArch: ArchX86, CPUVendor: VendorIntel}, Graphs{Ring: r, Tree: g}, Options{})
		checks = append(checks,
			check{"PAT bw", func() float32 { return m.Bandwidths[AllGather][PAT][Simple] }, 15},
			check{"PAT lat", func() float32 { return m.Latencies[ReduceScatter][PAT][Simple] }, 27.2})
		// NCCL_PAT_ENABLE=0 removes it.
		m0 := mustModel(t, System{NRanks: 4, NNodes: 4, MinCompCap: 90, MaxCompCap: 90, CPUArch: ArchX86}, Graphs{Ring: r, Tree: g}, envOpts(t, map[string]string{"NCCL_PAT_ENABLE": "0"}))
		checks = append(checks, check{"PAT disabled", func() float32 { return m0.Latencies[AllGather][PAT][Simple] }, 0})
	}
	// NCCL_PAT_ENABLE=1 forces PAT with 8 GPUs per node (tuning.cc:219).
	{
		s, g := hopper8()
		m := mustModel(t, s, g, envOpts(t, map[string]string{"NCCL_PAT_ENABLE": "1"}))
		// busBw 16×20×0.75 = 240; lat 8 + 0 + 8×2.8 = 30.4.
		checks = append(checks,
			check{"PAT forced bw", func() float32 { return m.Bandwidths[AllGather][PAT][Simple] }, 240},
			check{"PAT forced lat", func() float32 { return m.Latencies[AllGather][PAT][Simple] }, 30.4})
	}
	// CollNet on 2 nodes × 8 Hopper with an NVSwitch (tuning.cc:340-350, 418-423):
	// Direct: 8 channels × 20 → 160, factor 8/8 = 1, ×0.85 (sm90) = 136, ×0.5 = 68;
	//   lat 2×(1×3.7 + 7×0.4) + 31 = 44.0.
	// Chain: 4 × 20 = 80 × 0.5 = 40; lat 2×7×2.8 + 30 = 69.2.
	// Direct AllGather: ppn × min(20, 0.9×20) = 144 when the plugin has
	// iallgather and 8 heads cover the 8 local ranks.
	{
		s, g := hopperTwoNodes(VendorIntel)
		s.CollNetEnable, s.CollNetChainSupport, s.CollNetHeadsNum, s.CollNetAllGather, s.NVSCount = true, true, 8, true, 4
		g.CollNetDirect = Graph{Pattern: PatternCollNetDirect, NChannels: 8, BwIntra: 20, BwInter: 20, TypeIntra: topo.PathNVL, TypeInter: topo.PathPXB}
		g.CollNetChain = Graph{Pattern: PatternTree, NChannels: 4, BwIntra: 20, BwInter: 20, TypeIntra: topo.PathNVL, TypeInter: topo.PathPXB}
		m := mustModel(t, s, g, Options{})
		checks = append(checks,
			check{"CollNetDirect AR bw", func() float32 { return m.Bandwidths[AllReduce][CollNetDirect][Simple] }, 68},
			check{"CollNetDirect AR lat", func() float32 { return m.Latencies[AllReduce][CollNetDirect][Simple] }, 44},
			check{"CollNetDirect LL unused", func() float32 { return m.Bandwidths[AllReduce][CollNetDirect][LL] }, 0},
			check{"CollNetChain AR bw", func() float32 { return m.Bandwidths[AllReduce][CollNetChain][Simple] }, 40},
			check{"CollNetChain AR lat", func() float32 { return m.Latencies[AllReduce][CollNetChain][Simple] }, 69.2},
			check{"CollNetDirect AG bw", func() float32 { return m.Bandwidths[AllGather][CollNetDirect][Simple] }, 144},
			check{"CollNetDirect RS without ireducescatter", func() float32 { return m.Bandwidths[ReduceScatter][CollNetDirect][Simple] }, 0})
		// Fewer heads than local ranks disables AllGather (tuning.cc:365-372).
		s.CollNetHeadsNum = 4
		m2 := mustModel(t, s, g, Options{})
		checks = append(checks, check{"CollNetDirect AG too few heads", func() float32 { return m2.Bandwidths[AllGather][CollNetDirect][Simple] }, 0})
		// Without NVSwitch CollNetDirect is disabled (tuning.cc:509).
		s.NVSCount = 0
		m3 := mustModel(t, s, g, Options{})
		checks = append(checks, check{"CollNetDirect without NVSwitch", func() float32 { return m3.Bandwidths[AllReduce][CollNetDirect][Simple] }, 0})
	}
	// AMD CPUs across nodes: llMaxBw row 1 (22.5 at 2 nodes) and 2 µs net
	// overhead (tuning.cc:231, 269-271): Ring LL bw min(22.5, 48)×16/30 = 12.0,
	// lat 6.6 + 28×max(0.6, 2.0) + 2×2.7 = 68.0.
	{
		s, g := hopperTwoNodes(VendorAMD)
		m := mustModel(t, s, g, Options{})
		checks = append(checks,
			check{"AMD LL bw", func() float32 { return m.Bandwidths[AllReduce][Ring][LL] }, 12},
			check{"AMD LL lat", func() float32 { return m.Latencies[AllReduce][Ring][LL] }, 68})
		// NCCL_NET_OVERHEAD=500 ns → 0.5 µs < 0.6: lat 6.6 + 28×0.6 + 5.4 = 28.8.
		m2 := mustModel(t, s, g, envOpts(t, map[string]string{"NCCL_NET_OVERHEAD": "500"}))
		checks = append(checks, check{"NET_OVERHEAD", func() float32 { return m2.Latencies[AllReduce][Ring][LL] }, 28.8})
	}
	// POWER CPUs take the ring Simple PCI latency for trees (tuning.cc:278-280):
	// pcie4090 tree Simple 8.4 + 2×3×5.7 = 42.6.
	{
		s, g := pcie4090(true)
		s.CPUArch = ArchPower
		m := mustModel(t, s, g, Options{})
		checks = append(checks, check{"POWER tree latency", func() float32 { return m.Latencies[AllReduce][Tree][Simple] }, 42.6})
	}
	// Ring LL128 cap: 20 channels × 40 GB/s on Hopper: min(0.92×800, 20×36.7 = 734) = 734 ×8/14 = 419.43.
	{
		s, g := hopper8()
		g.Ring.NChannels, g.Tree.NChannels, g.Ring.BwIntra = 20, 20, 40
		m := mustModel(t, s, g, Options{})
		checks = append(checks, check{"ring LL128 cap", func() float32 { return m.Bandwidths[AllReduce][Ring][LL128] }, 734.0 * 8 / 14})
	}
	for _, c := range checks {
		if got := c.got(); !near(got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestLL128Rule walks the auto rule of tuning.cc:518-536.
func TestLL128Rule(t *testing.T) {
	tests := []struct {
		name              string
		minCC, maxCC      int
		intra, inter      topo.PathType
		env               map[string]string
		cudart, nRanks    int
		wantRingAllReduce bool
	}{
		{"NVLink Hopper", 90, 90, topo.PathNVL, topo.PathPIX, nil, 0, 8, true},
		{"NVB ok", 90, 90, topo.PathNVB, topo.PathPIX, nil, 0, 8, true},
		{"PCIe intra", 90, 90, topo.PathPIX, topo.PathPIX, nil, 0, 8, false},
		{"C2C intra", 90, 90, topo.PathC2C, topo.PathPIX, nil, 0, 8, false},
		{"PXN inter on Hopper", 90, 90, topo.PathNVL, topo.PathPXN, nil, 0, 8, true},
		{"PXN inter with LL128_C2C=0", 90, 90, topo.PathNVL, topo.PathPXN, map[string]string{"NCCL_LL128_C2C": "0"}, 0, 8, false},
		{"PXN inter on Ampere", 80, 80, topo.PathNVL, topo.PathPXN, nil, 0, 8, false},
		{"PXB inter on Ampere", 80, 80, topo.PathNVL, topo.PathPXB, nil, 0, 8, true},
		{"PHB inter on Hopper", 90, 90, topo.PathNVL, topo.PathPHB, nil, 0, 8, false},
		{"mixed Ampere/Hopper", 80, 90, topo.PathNVL, topo.PathPIX, nil, 0, 8, false},
		{"mixed Hopper/Blackwell", 90, 100, topo.PathNVL, topo.PathPIX, nil, 0, 8, true},
		{"Pascal", 60, 60, topo.PathNVL, topo.PathPIX, nil, 0, 8, false},
		{"CUDA 11.8 sm90 2 ranks", 90, 90, topo.PathNVL, topo.PathPIX, nil, 11080, 2, false},
		{"forced by NCCL_PROTO", 90, 90, topo.PathPIX, topo.PathPIX, map[string]string{"NCCL_PROTO": "LL128"}, 0, 8, true},
		{"'^LL' also forces LL128 on", 90, 90, topo.PathPHB, topo.PathPIX, map[string]string{"NCCL_PROTO": "^LL"}, 0, 8, true},
	}
	for _, tt := range tests {
		g := Graph{Pattern: PatternRing, NChannels: 4, BwIntra: 20, BwInter: 20, TypeIntra: tt.intra, TypeInter: tt.inter}
		s := System{NRanks: tt.nRanks, NNodes: 1, MinCompCap: tt.minCC, MaxCompCap: tt.maxCC, CUDARTVersion: tt.cudart}
		m := mustModel(t, s, Graphs{Ring: g, Tree: g}, envOpts(t, tt.env))
		if got := m.Bandwidths[AllReduce][Ring][LL128] > 0; got != tt.wantRingAllReduce {
			t.Errorf("%s: LL128 enabled = %v, want %v", tt.name, got, tt.wantRingAllReduce)
		}
	}
}

// TestCommChannels follows ncclTopoPostset (connect.cc:459-506) and the env
// handling of ncclMin/MaxNchannels (connect.cc:334-359) and the CTA config
// (init.cc:2013-2035, 2178-2194).
func TestCommChannels(t *testing.T) {
	ring := func(n int, bw float64) Graphs {
		g := Graph{Pattern: PatternRing, NChannels: n, BwIntra: bw, BwInter: bw, TypeIntra: topo.PathNVL}
		return Graphs{Ring: g, Tree: g}
	}
	one := System{NRanks: 8, NNodes: 1, MinCompCap: 90, MaxCompCap: 90}
	two := System{NRanks: 16, NNodes: 2, MinCompCap: 90, MaxCompCap: 90}
	tests := []struct {
		name string
		sys  System
		g    Graphs
		env  map[string]string
		want int
	}{
		{"doubled", one, ring(16, 20), nil, 32},
		{"capped at 64", one, ring(40, 20), nil, 64},
		{"Hopper multi-node bwIntra>45 doubles again", two, ring(4, 48), nil, 16},
		{"Hopper multi-node bwIntra 45 does not", two, ring(4, 45), nil, 8},
		{"MAX_NCHANNELS", one, ring(16, 20), map[string]string{"NCCL_MAX_NCHANNELS": "4"}, 4},
		{"MAX_NRINGS (deprecated) applies", one, ring(16, 20), map[string]string{"NCCL_MAX_NRINGS": "6"}, 6},
		{"MAX_NCHANNELS wins over MAX_NRINGS", one, ring(16, 20), map[string]string{"NCCL_MAX_NRINGS": "6", "NCCL_MAX_NCHANNELS": "10"}, 10},
		{"MAX_NCHANNELS=0 means 1", one, ring(16, 20), map[string]string{"NCCL_MAX_NCHANNELS": "0"}, 1},
		{"MIN_NCHANNELS copies up", one, ring(2, 20), map[string]string{"NCCL_MIN_NCHANNELS": "24"}, 24},
		{"MIN_NCHANNELS above 64", one, ring(2, 20), map[string]string{"NCCL_MIN_NCHANNELS": "100"}, 64},
		{"MAX then MIN", one, ring(16, 20), map[string]string{"NCCL_MAX_NCHANNELS": "2", "NCCL_MIN_NCHANNELS": "8"}, 8},
		{"MAX_CTAS", one, ring(16, 20), map[string]string{"NCCL_MAX_CTAS": "12"}, 12},
		{"MIN_CTAS", one, ring(1, 20), map[string]string{"NCCL_MIN_CTAS": "16"}, 16},
		{"MAX_CTAS=0 ignored", one, ring(16, 20), map[string]string{"NCCL_MAX_CTAS": "0"}, 32},
	}
	for _, tt := range tests {
		m := mustModel(t, tt.sys, tt.g, envOpts(t, tt.env))
		if m.CommNChannels != tt.want {
			t.Errorf("%s: %d channels, want %d", tt.name, m.CommNChannels, tt.want)
		}
	}
	// Unpack network devices double below 16 channels across nodes.
	s := two
	s.NetDeviceType = NetDeviceUnpack
	if m := mustModel(t, s, ring(2, 20), Options{}); m.CommNChannels != 8 {
		t.Errorf("unpack: %d, want 8", m.CommNChannels)
	}
	if m := mustModel(t, s, ring(2, 20), envOpts(t, map[string]string{"NCCL_UNPACK_DOUBLE_NCHANNELS": "0"})); m.CommNChannels != 4 {
		t.Errorf("unpack disabled: %d, want 4", m.CommNChannels)
	}
	// Ring and tree share the smaller channel count (init.cc:1459).
	g := ring(8, 20)
	g.Tree.NChannels = 6
	if m := mustModel(t, one, g, Options{}); m.Graphs.Ring.NChannels != 6 || m.CommNChannels != 12 {
		t.Errorf("ring/tree alignment: ring %d comm %d", m.Graphs.Ring.NChannels, m.CommNChannels)
	}
}

// TestNVLSChannels follows ncclNvlsTuning (nvls.cc:202-246).
func TestNVLSChannels(t *testing.T) {
	tests := []struct {
		name string
		sys  System
		env  map[string]string
		want int
	}{
		{"Hopper", System{NRanks: 8, NNodes: 1, MinCompCap: 90, MaxCompCap: 90}, nil, 16},
		{"Blackwell one node", System{NRanks: 8, NNodes: 1, MinCompCap: 100, MaxCompCap: 100}, nil, 24},
		{"Blackwell 2 nodes 50 GB/s NIC", System{NRanks: 16, NNodes: 2, MinCompCap: 100, MaxCompCap: 100, MinNetBw: 50}, nil, 32},
		{"Blackwell 4 nodes 100 GB/s NIC", System{NRanks: 32, NNodes: 4, MinCompCap: 100, MaxCompCap: 100, MinNetBw: 100}, nil, 24},
		{"Blackwell 4 nodes 50 GB/s NIC", System{NRanks: 32, NNodes: 4, MinCompCap: 100, MaxCompCap: 100, MinNetBw: 50}, nil, 24},
		{"Blackwell 4 nodes slow NIC", System{NRanks: 32, NNodes: 4, MinCompCap: 100, MaxCompCap: 100, MinNetBw: 25}, nil, 32},
		{"NVLS_NCHANNELS", System{NRanks: 8, NNodes: 1, MinCompCap: 90, MaxCompCap: 90}, map[string]string{"NCCL_NVLS_NCHANNELS": "8"}, 8},
		{"MAX_CTAS clamps", System{NRanks: 8, NNodes: 1, MinCompCap: 90, MaxCompCap: 90}, map[string]string{"NCCL_MAX_CTAS": "4"}, 4},
	}
	for _, tt := range tests {
		if got := NVLSChannels(tt.sys, true, envOpts(t, tt.env)); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}
	if got := NVLSChannels(System{NRanks: 8, NNodes: 1, MinCompCap: 90, MaxCompCap: 90}, false, DefaultOptions()); got != 0 {
		t.Errorf("unsupported: %d", got)
	}
}

// TestThreads covers NCCL_NTHREADS, NCCL_LL128_NTHREADS (getNthreads,
// tuning.cc:17-34, 244-257) and NCCL_THREAD_THRESHOLDS (tuning.cc:587-608).
func TestThreads(t *testing.T) {
	s, g := hopper8()
	tests := []struct {
		env                           map[string]string
		ringSimple, ringLL, ringLL128 int
	}{
		{nil, 512, 512, 640},
		{map[string]string{"NCCL_NTHREADS": "256"}, 256, 256, 640},
		{map[string]string{"NCCL_NTHREADS": "100"}, 512, 512, 640},  // not a multiple of 32 → max
		{map[string]string{"NCCL_NTHREADS": "1024"}, 512, 512, 640}, // above max
		{map[string]string{"NCCL_NTHREADS": "32"}, 64, 64, 640},     // below min
		{map[string]string{"NCCL_NTHREADS": "-1"}, 512, 512, 640},   // non-positive → default
		{map[string]string{"NCCL_LL128_NTHREADS": "320"}, 512, 512, 320},
		{map[string]string{"NCCL_LL128_NTHREADS": "128"}, 512, 512, 160},
	}
	for _, tt := range tests {
		m := mustModel(t, s, g, envOpts(t, tt.env))
		if m.MaxThreads[Ring][Simple] != tt.ringSimple || m.MaxThreads[Ring][LL] != tt.ringLL || m.MaxThreads[Ring][LL128] != tt.ringLL128 {
			t.Errorf("%v: ring threads %d/%d/%d, want %d/%d/%d", tt.env, m.MaxThreads[Ring][Simple], m.MaxThreads[Ring][LL], m.MaxThreads[Ring][LL128], tt.ringSimple, tt.ringLL, tt.ringLL128)
		}
	}
	m := mustModel(t, s, g, Options{})
	if got := m.ThresholdsLine(); got != "threadThresholds 8/8/64 | 64/8/64 | 512 | 512" {
		t.Errorf("default thresholds %q (ring LL = 8×nRanks)", got)
	}
	m = mustModel(t, s, g, envOpts(t, map[string]string{"NCCL_THREAD_THRESHOLDS": "1 2 3 -1 5"}))
	if got := m.ThresholdsLine(); got != "threadThresholds 1/2/3 | 64/5/64 | 512 | 512" {
		t.Errorf("env thresholds %q", got)
	}
}

// TestAlgoProtoEnv checks NCCL_ALGO / NCCL_PROTO restrictions and the
// error NCCL gives when nothing is left (enqueue.cc:2052-2066).
func TestAlgoProtoEnv(t *testing.T) {
	s, g := hopper8()
	m := mustModel(t, s, g, envOpts(t, map[string]string{"NCCL_ALGO": "Tree"}))
	if c := mustSelect(t, m, AllReduce, 1<<20); c.Algo != Tree {
		t.Errorf("NCCL_ALGO=Tree gave %v", c.Algo)
	}
	// Only Tree: AllGather has no tree cell → ncclInvalidUsage.
	if _, err := m.Select(Request{Func: AllGather, NBytes: 1 << 20}); err == nil {
		t.Error("AllGather with NCCL_ALGO=Tree must fail")
	}
	m = mustModel(t, s, g, envOpts(t, map[string]string{"NCCL_ALGO": "ring;allreduce:tree"}))
	if c := mustSelect(t, m, AllGather, 1<<20); c.Algo != Ring {
		t.Errorf("AllGather: %v", c.Algo)
	}
	if c := mustSelect(t, m, AllReduce, 1<<20); c.Algo != Tree {
		t.Errorf("AllReduce: %v", c.Algo)
	}
	m = mustModel(t, s, g, envOpts(t, map[string]string{"NCCL_ALGO": "^ring"}))
	if c := mustSelect(t, m, AllReduce, 8<<30); c.Algo == Ring {
		t.Error("^ring still chose Ring")
	}
	if _, err := OptionsFromEnv(ncclenv.New(map[string]string{"NCCL_ALGO": "ring,bogus"})); err == nil {
		t.Error("bad NCCL_ALGO accepted")
	}
	if _, err := OptionsFromEnv(ncclenv.New(map[string]string{"NCCL_PROTO": "allreduce:LL;LL"})); err == nil {
		t.Error("bad NCCL_PROTO accepted")
	}
	msg, ok := mustModel(t, s, g, envOpts(t, map[string]string{"NCCL_ALGO": "^Tree"})).EnableMatrix()
	if !ok {
		t.Fatal("no enable matrix with NCCL_ALGO set")
	}
	// tuning.cc:468-490: "%8s  " per protocol, "%13s  " per algorithm.
	wantHead := "Enabled NCCL Func/Proto/Algo Matrix:\n     Function |       LL     LL128    Simple   |          Tree           Ring  CollNetDirect   CollNetChain           NVLS       NVLSTree            PAT  \n"
	wantAR := "    AllReduce |        1         2         1   |             0              1              1              1              1              1              1  \n"
	if len(msg) < len(wantHead) || msg[:len(wantHead)] != wantHead {
		t.Errorf("matrix head\n got %q\nwant %q", msg, wantHead)
	}
	if msg[len(msg)-len(wantAR):] != wantAR {
		t.Errorf("matrix AllReduce row\n got %q\nwant %q", msg[len(msg)-len(wantAR):], wantAR)
	}
	if _, ok := mustModel(t, s, g, Options{}).EnableMatrix(); ok {
		t.Error("matrix printed without NCCL_ALGO/NCCL_PROTO")
	}
}

// TestFP8Penalty: FP8 reductions on rings of more than 8 ranks cost ×1024
// (enqueue.cc:2015-2021).
func TestFP8Penalty(t *testing.T) {
	s, g := hopperTwoNodes(VendorIntel)
	m := mustModel(t, s, g, Options{})
	plain := m.CostTable(Request{Func: AllReduce, NBytes: 1 << 20})
	fp8 := m.CostTable(Request{Func: AllReduce, NBytes: 1 << 20, Datatype: Float8E4M3})
	if fp8[Ring][Simple] != plain[Ring][Simple]*1024 || fp8[Tree][Simple] != plain[Tree][Simple] {
		t.Errorf("fp8 costs %v vs %v", fp8[Ring], plain[Ring])
	}
	if c, _ := m.Select(Request{Func: AllReduce, NBytes: 1 << 30, Datatype: Float8E5M2}); c.Algo == Ring {
		t.Error("FP8 on 16 ranks still picked Ring")
	}
}

func TestInvalidInputs(t *testing.T) {
	_, g := hopper8()
	bad := []System{
		{NRanks: 0, NNodes: 1, MinCompCap: 80, MaxCompCap: 80},
		{NRanks: 4, NNodes: 5, MinCompCap: 80, MaxCompCap: 80},
		{NRanks: 4, NNodes: 1, MinCompCap: 0, MaxCompCap: 80},
		{NRanks: 4, NNodes: 1, MinCompCap: 90, MaxCompCap: 80},
		{NRanks: 4, NNodes: 2, MinCompCap: 80, MaxCompCap: 80, LocalRanks: []int{1, 2}},
		{NRanks: 4, NNodes: 2, MinCompCap: 80, MaxCompCap: 80, MinNetBw: math.NaN()},
	}
	for _, s := range bad {
		if _, err := NewModel(s, g, Options{}); err == nil {
			t.Errorf("accepted %+v", s)
		}
	}
	s, _ := hopper8()
	for _, mut := range []func(*Graphs){
		func(g *Graphs) { g.Ring.NChannels = 0 },
		func(g *Graphs) { g.Tree.BwIntra = math.Inf(1) },
		func(g *Graphs) { g.NVLS.NChannels = 65 },
		func(g *Graphs) { g.Ring.TypeIntra = 42 },
		func(g *Graphs) { g.Ring.LatencyInter = -1 },
	} {
		g2 := g
		mut(&g2)
		if _, err := NewModel(s, g2, Options{}); err == nil {
			t.Errorf("accepted graphs %+v", g2)
		}
	}
	o := DefaultOptions()
	o.Algo, o.AlgoSet = "nope", true
	if _, err := NewModel(s, g, o); err == nil {
		t.Error("accepted bad NCCL_ALGO in options")
	}
	if _, err := mustModel(t, s, g, Options{}).Select(Request{Func: Func(9)}); err == nil {
		t.Error("accepted an invalid function")
	}
}

// TestRegistries checks the name registries against NCCL's string tables
// (init.cc:52-55, mirrored in ncclenv for NCCL_ALGO/NCCL_PROTO validation)
// and the lookups.
func TestRegistries(t *testing.T) {
	for i, n := range ncclenv.AlgoNames() {
		if a, err := LookupAlgorithm(n); err != nil || int(a) != i || a.String() != n {
			t.Errorf("algorithm %d %q: %v %v", i, n, a, err)
		}
	}
	for i, n := range ncclenv.ProtoNames() {
		if p, err := LookupProtocol(n); err != nil || int(p) != i || p.String() != n {
			t.Errorf("protocol %d %q: %v %v", i, n, p, err)
		}
	}
	for i, n := range ncclenv.FuncNames() {
		if f, err := LookupFunc(n); err != nil || int(f) != i || f.String() != n {
			t.Errorf("function %d %q: %v %v", i, n, f, err)
		}
	}
	for in, want := range map[string]Func{"all_reduce": AllReduce, "All-Gather": AllGather, "reduce_scatter": ReduceScatter, "bcast": Broadcast} {
		if f, err := LookupFunc(in); err != nil || f != want {
			t.Errorf("LookupFunc(%q) = %v, %v", in, f, err)
		}
	}
	for _, bad := range []string{"alltoall", "sendrecv", ""} {
		if _, err := LookupFunc(bad); err == nil {
			t.Errorf("LookupFunc(%q) accepted", bad)
		}
	}
	if _, err := LookupAlgorithm("Ring2"); err == nil {
		t.Error("unknown algorithm accepted")
	}
	if _, err := LookupProtocol("LL64"); err == nil {
		t.Error("unknown protocol accepted")
	}
	// Graph mapping of init.cc:980-981.
	g := Graphs{Ring: Graph{NChannels: 1}, Tree: Graph{NChannels: 2}, NVLS: Graph{NChannels: 3}}
	if g.For(PAT).NChannels != 2 || g.For(NVLSTree).NChannels != 3 || g.For(Ring).NChannels != 1 {
		t.Error("graph mapping")
	}
	if len(Algorithms()) != NumAlgorithms || len(Protocols()) != NumProtocols || len(Funcs()) != NumFuncs {
		t.Error("registry sizes")
	}
	if dt, err := LookupDatatype("BF16"); err != nil || dt != BFloat16 || dt.Size() != 2 {
		t.Errorf("bf16: %v %v", dt, err)
	}
	if BusBwFactor(AllReduce, 8) != 1.75 || BusBwFactor(AllGather, 4) != 0.75 || BusBwFactor(Broadcast, 4) != 1 {
		t.Error("bus bandwidth factors")
	}
}

func TestTreeCorrectionFactor(t *testing.T) {
	// tuning.cc:623-627, index log2(nBytes/64).
	tests := []struct {
		p    Protocol
		n    uint64
		want float32
		ok   bool
	}{
		{LL, 63, 1, false}, {LL, 64, 1.0, true}, {LL, 1 << 10, .9, true}, {LL, 1 << 19, .4, true},
		{Simple, 1 << 20, .5, true}, {Simple, 1 << 21, .6, true}, {LL128, 1 << 29, 1.0, true}, {Simple, 1 << 30, 1, false},
	}
	for _, tt := range tests {
		got, ok := TreeCorrectionFactor(tt.p, tt.n)
		if got != tt.want || ok != tt.ok {
			t.Errorf("TreeCorrectionFactor(%v, %d) = %v, %v", tt.p, tt.n, got, ok)
		}
	}
}
