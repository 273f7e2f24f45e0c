package topo_test

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
	"github.com/distributed-nav/distributed-nav/playground/topo"
)

// The tests in this file parse complete topology files written by NCCL's
// NCCL_TOPO_DUMP_FILE on real machines (testdata/real/; each file names its
// source and the machine in a comment at its top) and check facts that can
// be read off the file by eye, plus the path types that follow from its
// structure. For the RTX 3090 box the same commit also publishes NCCL's own
// log of a run on that host, so the model's paths are checked against the
// path table NCCL printed.

// loadRealDump parses testdata/real/name and fails on any warning: a file
// NCCL wrote itself should need no leniency.
func loadRealDump(t *testing.T, name string) *topo.System {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "real", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sys, warns, err := topo.ParseXML(f)
	if err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	if len(warns) != 0 {
		t.Errorf("%s: warnings %v", name, warns)
	}
	return sys
}

// realPaths computes the paths of sys with no NCCL variable set.
func realPaths(t *testing.T, sys *topo.System) *topo.Paths {
	t.Helper()
	p, err := topo.ComputePaths(sys, ncclenv.New(nil))
	if err != nil {
		t.Fatalf("compute paths: %v", err)
	}
	return p
}

// pathHops lists the links of a path as (type, bw) pairs.
func pathHops(sys *topo.System, p *topo.Path) []topo.Link {
	out := make([]topo.Link, len(p.Links))
	for i, li := range p.Links {
		out[i] = sys.Links[li]
	}
	return out
}

// nearly compares bandwidths that NCCL sums in float32 (NVLink counts).
func nearly(a, b float32) bool { return math.Abs(float64(a-b)) < 1e-3 }

// TestRealDumpIBMH100 checks the IBM Cloud gx3d-160x1792x8h100 dump: eight
// H100 SXM GPUs on NVSwitch, one 200 Gb/s NIC beside each GPU behind a
// virtual bridge, two Sapphire Rapids NUMA domains.
func TestRealDumpIBMH100(t *testing.T) {
	sys := loadRealDump(t, "ibm-gx3d-h100-vsi.xml")

	// Node counts. 8 <gpu> elements each with a rank (8 GPU + 8 DEV nodes);
	// 8 bridges of class 0x060400 (PCI); 2 <cpu>; 8 <pci> holding a <nic>,
	// each with one <net>. Every <nvlink> has tclass 0x068000 (NVSwitch) and
	// NCCL keeps a single NVS node for all NVSwitches (ncclTopoAddNvLinks).
	counts := []struct {
		typ  topo.NodeType
		want int
	}{
		{topo.GPU, 8}, {topo.DEV, 8}, {topo.PCI, 8}, {topo.NVS, 1},
		{topo.CPU, 2}, {topo.NIC, 8}, {topo.NET, 8},
	}
	for _, c := range counts {
		if got := sys.Count(c.typ); got != c.want {
			t.Errorf("%v nodes: %d, want %d", c.typ, got, c.want)
		}
	}

	// GPUs in document order: <gpu dev="i" sm="90" rank="i" gdr="1"> inside
	// <pci busid=...> of device 0x2330 (H100 SXM5).
	busIDs := []string{"0000:a4:00.0", "0000:ae:00.0", "0000:b8:00.0", "0000:c2:00.0",
		"0000:cc:00.0", "0000:d6:00.0", "0000:e0:00.0", "0000:ea:00.0"}
	for i, g := range sys.GPUs() {
		if i >= len(busIDs) {
			break
		}
		if g.BusID != busIDs[i] || g.GPU.Rank != i || g.GPU.Dev != i || g.GPU.SM != 90 || !g.GPU.GDR {
			t.Errorf("GPU%d: bus %s rank %d dev %d sm %d gdr %v; want bus %s rank %d dev %d sm 90 gdr true",
				i, g.BusID, g.GPU.Rank, g.GPU.Dev, g.GPU.SM, g.GPU.GDR, busIDs[i], i, i)
		}
		if g.Device != 0x10de233010de16c1 {
			t.Errorf("GPU%d: PCI ids %#x, want 10de:2330 subsystem 10de:16c1", i, g.Device)
		}
	}

	// NVLinks: every GPU lists four <nvlink> elements with counts 5, 5, 4 and
	// 4 (18 links, the H100 SXM total) to four NVSwitch bus ids. All four
	// fold into one NVL link to the single NVS node, 18 x 20.6 GB/s
	// (SM90_NVLINK_BW, topo.h) = 370.8 GB/s.
	for d := range sys.Nodes[topo.DEV] {
		var nvl []topo.Link
		for _, li := range sys.Nodes[topo.DEV][d].Links {
			if l := sys.Links[li]; l.Type == topo.LinkNVL {
				nvl = append(nvl, l)
			}
		}
		if len(nvl) != 1 || nvl[0].To.Type != topo.NVS || !nearly(nvl[0].Bw, 18*20.6) {
			t.Errorf("DEV%d NVLinks %+v, want one link to NVS of 370.8 GB/s", d, nvl)
		}
	}

	// NICs: eight <net name="mlx5_N" speed="200000" gdr="1">, in document
	// order mlx5_7 down to mlx5_0. 200000 Mb/s / 8000 = 25 GB/s.
	for i, n := range sys.NETs() {
		wantName := "mlx5_" + string(rune('7'-i))
		if n.Net.Name != wantName || n.Net.Dev != 7-i || n.Net.SpeedMbs != 200000 || n.Net.Bw != 25 || !n.Net.GDR {
			t.Errorf("NET%d: %s dev %d speed %d bw %v gdr %v; want %s dev %d speed 200000 bw 25 gdr true",
				i, n.Net.Name, n.Net.Dev, n.Net.SpeedMbs, n.Net.Bw, n.Net.GDR, wantName, 7-i)
		}
	}

	// CPUs: GenuineIntel family 6 model 143 (0x8F) is Sapphire Rapids class
	// (model >= 0x8F, ncclTopoAddCpu), whose inter-socket bandwidth is
	// SRP_QPI_BW = 22 GB/s (topo.h).
	if arch, vendor, model := sys.CPUType(); arch != topo.ArchX86 || vendor != topo.VendorIntel || model != topo.ModelIntelSRP {
		t.Errorf("CPU type %v/%v/%v, want x86_64/Intel/SRP", arch, vendor, model)
	}
	p := realPaths(t, sys)
	if q := p.Get(topo.NodeRef{Type: topo.CPU, Index: 0}, topo.CPU, 1); q == nil || q.Type != topo.PathSYS || q.Bw != 22 {
		t.Errorf("CPU0->CPU1 %+v, want SYS at 22 GB/s", q)
	}

	// GPU0's PCI path to its CPU: GPU0 -LOC- its DEV -PCI- bridge a1:00.0
	// -PCI- CPU0. The GPU's <pci> says link_speed="32.0 GT/s PCIe"
	// link_width="0"; NCCL reads width 0 as 16, so 16*240/80 = 48 GB/s. The
	// bridge says "2.5 GT/s PCIe" x1: 1*15/80 = 0.1875 GB/s. Going through the
	// CPU makes the path PHB, and its bandwidth is the slowest hop.
	// (NCCL's own log of a VM with the same virtual bridge, 104c:8232, prints
	// "PCI[0.2] - PCI/0-65000" and "PCI[48.0] - GPU":
	// https://github.com/NVIDIA/nccl-tests/issues/256.)
	q := p.Get(topo.NodeRef{Type: topo.GPU, Index: 0}, topo.CPU, 0)
	hops := pathHops(sys, q)
	wantHops := []struct {
		typ topo.LinkType
		bw  float32
		to  string
	}{
		{topo.LinkLOC, 5000, "DEV0"},
		{topo.LinkPCI, 48, "PCI/0000:a1:00.0"},
		{topo.LinkPCI, 0.1875, "CPU0"},
	}
	if len(hops) != len(wantHops) || q.Type != topo.PathPHB || q.Bw != 0.1875 {
		t.Fatalf("GPU0->CPU0: %v at %v over %d hops, want PHB at 0.1875 over 3", q.Type, q.Bw, len(hops))
	}
	for i, w := range wantHops {
		if h := hops[i]; h.Type != w.typ || h.Bw != w.bw || sys.Label(h.To) != w.to {
			t.Errorf("GPU0->CPU0 hop %d: %v %v to %s, want %v %v to %s", i, h.Type, h.Bw, sys.Label(h.To), w.typ, w.bw, w.to)
		}
	}

	// Every GPU pair: both GPUs have NVLinks to the NVSwitch, so the path is
	// GPU - NVS - GPU, type NVL, at the 370.8 GB/s of one GPU's NVLinks.
	for a := 0; a < 8; a++ {
		for b := 0; b < 8; b++ {
			if a == b {
				continue
			}
			if q := p.GPUPath(a, b); q.Type != topo.PathNVL || !nearly(q.Bw, 370.8) {
				t.Errorf("GPU%d->GPU%d: %v at %v, want NVL at 370.8", a, b, q.Type, q.Bw)
			}
		}
	}

	// GPU0 and mlx5_7 (NET0) share bridge a1:00.0: GPU -PCI- bridge -PCI-
	// NIC -NET- port crosses one bridge, so PIX, at min(48, 48, 25) = 25 GB/s,
	// and GPUDirect RDMA is on (both gdr="1", PIX <= the default PXB level).
	// mlx5_6 (NET1) hangs off another bridge of the same CPU: the direct path
	// would be PHB at 0.1875 GB/s, but GPU1 sits next to mlx5_6 (PIX) and is
	// NVLink-connected to GPU0, so NCCL's PXN rule relays through GPU1.
	netCases := []struct {
		gpu, net int
		typ      topo.PathType
		bw       float32
		peer     int
	}{
		{0, 0, topo.PathPIX, 25, -1},
		{0, 1, topo.PathPXN, 25, 1},
		{7, 7, topo.PathPIX, 25, -1},
	}
	for _, c := range netCases {
		q := p.NetPath(c.gpu, c.net)
		if q.Type != c.typ || q.Bw != c.bw || p.PXNPeer(c.gpu, c.net) != c.peer {
			t.Errorf("GPU%d->NET%d: %v at %v via %d, want %v at %v via %d",
				c.gpu, c.net, q.Type, q.Bw, p.PXNPeer(c.gpu, c.net), c.typ, c.bw, c.peer)
		}
	}
	if m := p.CheckGdr(0, 0, false); m != topo.GdrDefault {
		t.Errorf("GDR GPU0/mlx5_7: %v, want Default", m)
	}
}

// TestRealDumpRTX3090Box checks the dump of host oneflow-27: eight GeForce
// RTX 3090s, four behind each of two PCIe switches, one switch per NUMA
// domain, one 56 Gb/s NIC on the second switch, GPUDirect RDMA off.
func TestRealDumpRTX3090Box(t *testing.T) {
	sys := loadRealDump(t, "oneflow-rtx3090-pcie.xml")

	// 8 ranked <gpu>; 2 bridges of class 0x060400; 2 <cpu>; one <nic> with
	// one <net>; no <nvlink> anywhere, so no NVS node.
	counts := []struct {
		typ  topo.NodeType
		want int
	}{
		{topo.GPU, 8}, {topo.DEV, 8}, {topo.PCI, 2}, {topo.NVS, 0},
		{topo.CPU, 2}, {topo.NIC, 1}, {topo.NET, 1},
	}
	for _, c := range counts {
		if got := sys.Count(c.typ); got != c.want {
			t.Errorf("%v nodes: %d, want %d", c.typ, got, c.want)
		}
	}
	busIDs := []string{"0000:0f:00.0", "0000:10:00.0", "0000:11:00.0", "0000:12:00.0",
		"0000:9b:00.0", "0000:9c:00.0", "0000:9d:00.0", "0000:9e:00.0"}
	for i, g := range sys.GPUs() {
		if i >= len(busIDs) {
			break
		}
		// <gpu dev="i" sm="86" rank="i" gdr="0">, device 10de:2204.
		if g.BusID != busIDs[i] || g.GPU.Rank != i || g.GPU.SM != 86 || g.GPU.GDR || g.Device>>32 != 0x10de2204 {
			t.Errorf("GPU%d: bus %s rank %d sm %d gdr %v ids %#x", i, g.BusID, g.GPU.Rank, g.GPU.SM, g.GPU.GDR, g.Device)
		}
		for _, li := range sys.Nodes[topo.DEV][g.GPU.Peer].Links {
			if sys.Links[li].Type == topo.LinkNVL {
				t.Errorf("GPU%d has an NVLink; the file has none", i)
			}
		}
	}
	// <net name="mlx5_0" speed="56000" gdr="0">: 56000/8000 = 7 GB/s (NCCL's
	// log prints "NET[7.0] - NET/0").
	if n := sys.NETs()[0].Net; n.Name != "mlx5_0" || n.Bw != 7 || n.GDR {
		t.Errorf("NET0 %+v, want mlx5_0 at 7 GB/s without GDR", n)
	}
	// GenuineIntel family 6 model 106 (0x6A >= 0x55) is Skylake class,
	// SKL_QPI_BW = 10 GB/s; NCCL's log prints "CPU/0 (1/1/2)" (x86, Intel,
	// SKL) and "SYS[10.0] - CPU/1".
	if arch, vendor, model := sys.CPUType(); arch != topo.ArchX86 || vendor != topo.VendorIntel || model != topo.ModelIntelSKL {
		t.Errorf("CPU type %v/%v/%v, want x86_64/Intel/SKL", arch, vendor, model)
	}

	// GPU0's path to CPU0: its <pci> is "16.0 GT/s PCIe" x16, 16*120/80 =
	// 24 GB/s, and so is the switch 0c:00.0 above it; crossing the CPU makes
	// it PHB at 24 GB/s (log: "CPU/0 (2/24.000000/PHB)").
	p := realPaths(t, sys)
	q := p.Get(topo.NodeRef{Type: topo.GPU, Index: 0}, topo.CPU, 0)
	hops := pathHops(sys, q)
	if q.Type != topo.PathPHB || q.Bw != 24 || len(hops) != 3 ||
		hops[1].Type != topo.LinkPCI || hops[1].Bw != 24 || sys.Label(hops[1].To) != "PCI/0000:0c:00.0" ||
		hops[2].Type != topo.LinkPCI || hops[2].Bw != 24 || sys.Label(hops[2].To) != "CPU0" {
		t.Errorf("GPU0->CPU0: %v at %v via %+v, want PHB at 24 through switch 0c:00.0", q.Type, q.Bw, hops)
	}

	// From the structure alone (P2P allowed): GPUs under the same switch are
	// PIX (one bridge), GPUs under different CPUs are SYS at the 10 GB/s
	// inter-socket link. GPU4 and the NIC share switch 98:00.0 (PIX), but
	// with gdr="0" NCCL routes GPU-NIC traffic through the CPU: PHB. GPU0
	// reaches the NIC across the sockets: SYS. The NIC caps both at 7 GB/s.
	structural := []struct {
		name     string
		from, to int
		net      bool
		typ      topo.PathType
		bw       float32
	}{
		{"same switch", 0, 1, false, topo.PathPIX, 24},
		{"other socket", 0, 4, false, topo.PathSYS, 10},
		{"same switch, second socket", 4, 7, false, topo.PathPIX, 24},
		{"NIC on own switch without GDR", 4, 0, true, topo.PathPHB, 7},
		{"NIC on other socket", 0, 0, true, topo.PathSYS, 7},
	}
	for _, c := range structural {
		q := p.GPUPath(c.from, c.to)
		if c.net {
			q = p.NetPath(c.from, c.to)
		}
		if q.Type != c.typ || q.Bw != c.bw {
			t.Errorf("%s: %v at %v, want %v at %v", c.name, q.Type, q.Bw, c.typ, c.bw)
		}
	}

	// NCCL's own path table for this host (log.log lines 165-173 of the
	// source commit, NCCL 2.18.1) shows GPU pairs under one switch as PHB,
	// not PIX: GeForce drivers report no P2P, so NCCL diverts GPU-GPU traffic
	// through the CPU. With P2P off the model must print the same table:
	// same-socket pairs PHB/24, cross-socket SYS/10, NET SYS/7 from GPUs
	// 0-3 and PHB/7 from GPUs 4-7.
	geforce := *sys
	geforce.P2P = topo.P2PNone
	pg := realPaths(t, &geforce)
	for a := 0; a < 8; a++ {
		for b := 0; b < 8; b++ {
			if a == b {
				continue
			}
			want, bw := topo.PathSYS, float32(10)
			if a/4 == b/4 {
				want, bw = topo.PathPHB, 24
			}
			if q := pg.GPUPath(a, b); q.Type != want || q.Bw != bw {
				t.Errorf("P2P off, GPU%d->GPU%d: %v at %v, want %v at %v (NCCL's log)", a, b, q.Type, q.Bw, want, bw)
			}
		}
		want := topo.PathSYS
		if a >= 4 {
			want = topo.PathPHB
		}
		if q := pg.NetPath(a, 0); q.Type != want || q.Bw != 7 {
			t.Errorf("P2P off, GPU%d->NET0: %v at %v, want %v at 7 (NCCL's log)", a, q.Type, q.Bw, want)
		}
	}

	// The run spanned two such hosts (ranks 0-7 and 8-15); NCCL's log line
	// 147 prints "=== System : maxBw 7.0 totalBw 24.0 ===": the best GPU-NIC
	// bandwidth and the largest per-GPU PCI bandwidth (ncclTopoSearchInit).
	two, err := geforce.Replicate(2)
	if err != nil {
		t.Fatal(err)
	}
	a, err := topo.Analyze(two, ncclenv.New(nil))
	if err != nil {
		t.Fatal(err)
	}
	if a.MaxBw != 7 || a.TotalBw != 24 || !a.Inter {
		t.Errorf("search init: maxBw %v totalBw %v inter %v, want 7, 24, true", a.MaxBw, a.TotalBw, a.Inter)
	}
}
