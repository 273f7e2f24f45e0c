package topo_test

import (
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
	"github.com/distributed-nav/distributed-nav/playground/presets"
	"github.com/distributed-nav/distributed-nav/playground/topo"
)

func analyze(t *testing.T, sys *topo.System, env ...string) (*topo.Analysis, error) {
	t.Helper()
	e, err := ncclenv.ParseAssignments(env)
	if err != nil {
		t.Fatal(err)
	}
	return topo.Analyze(sys, e)
}

func preset(t testing.TB, name string) *topo.System {
	t.Helper()
	p, err := presets.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	sys, warns, err := p.System()
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 0 {
		t.Fatalf("preset %s: warnings %v", name, warns)
	}
	return sys
}

func pairOf(t *testing.T, a *topo.Analysis, from, to int) topo.GPUPair {
	t.Helper()
	pairs, err := a.Paths.GPUPairs()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pairs {
		if p.From == from && p.To == to {
			return p
		}
	}
	t.Fatalf("no pair %d->%d", from, to)
	return topo.GPUPair{}
}

// TestPresetPaths checks GPU-GPU paths, bandwidths and transports of every
// preset against values derived by hand from NCCL's rules.
func TestPresetPaths(t *testing.T) {
	// NVLink through NVSwitches: count x NVLinkBw(sm), the four H100 nvlink
	// elements (5,4,4,5 links) summed in float by ncclTopoConnectNodes.
	h100NVL := float32(5)*float32(20.6) + float32(4)*float32(20.6) + float32(4)*float32(20.6) + float32(5)*float32(20.6)
	tests := []struct {
		preset    string
		env       []string
		from, to  int
		typ       topo.PathType
		bw        float32
		transport topo.Transport
		direct    topo.PathType
	}{
		// GeForce, P2P none. Same switch: GPU-DEV-PCI-DEV-GPU is PIX (one
		// bridge) but NVML refuses P2P, so NCCL reroutes through the
		// destination's CPU: GPU-DEV-PCI-CPU-PCI-DEV-GPU, PHB at the PCIe
		// Gen4 x16 bandwidth 16*120/80 = 24 (paths.cc:762-774).
		{"rtx4090-8x", nil, 0, 1, topo.PathPHB, 24, topo.TransportSHM, topo.PathPIX},
		// Across sockets the path crosses the AMD inter-socket link, AMD_BW 16.
		{"rtx4090-8x", nil, 0, 4, topo.PathSYS, 16, topo.TransportSHM, topo.PathSYS},
		// Two GPUs on root ports of one AMD CPU: PHB, 24 GB/s; with the
		// driver refusing P2P it is SHM.
		{"rtx4090-2x", nil, 0, 1, topo.PathPHB, 24, topo.TransportSHM, topo.PathPHB},
		// With P2P allowed, AMD with at most two GPUs uses level SYS
		// (paths.cc:360-362), so PHB is within it: P2P over PCIe.
		{"rtx4090-2x", []string{"p2p=all"}, 0, 1, topo.PathPHB, 24, topo.TransportP2P, topo.PathPHB},
		// Intel, 4 GPUs: default level PXB; PHB is beyond it even with P2P.
		{"rtx4090-4x", []string{"p2p=all"}, 0, 1, topo.PathPHB, 24, topo.TransportSHM, topo.PathPHB},
		// ... unless NCCL_P2P_LEVEL=PHB.
		{"rtx4090-4x", []string{"p2p=all", "NCCL_P2P_LEVEL=PHB"}, 0, 1, topo.PathPHB, 24, topo.TransportP2P, topo.PathPHB},
		// Lower case is not recognised by NCCL's strcmp: still SHM.
		{"rtx4090-4x", []string{"p2p=all", "NCCL_P2P_LEVEL=phb"}, 0, 1, topo.PathPHB, 24, topo.TransportSHM, topo.PathPHB},
		// Legacy integer level 3 maps to PHB (levelsOldToNew, paths.cc:243).
		{"rtx4090-4x", []string{"p2p=all", "NCCL_P2P_LEVEL=3"}, 0, 1, topo.PathPHB, 24, topo.TransportP2P, topo.PathPHB},
		// NVLink bridge pair: 4 links x SM86_NVLINK_BW 12 = 48.
		{"rtx3090-4x-nvlink", nil, 0, 1, topo.PathNVL, 48, topo.TransportP2P, topo.PathNVL},
		// Unbridged pair through the CPU: PHB 24, SHM.
		{"rtx3090-4x-nvlink", nil, 0, 2, topo.PathPHB, 24, topo.TransportSHM, topo.PathPHB},
		// A100 through NVSwitches: 6 targets x 2 links x SM80_NVLINK_BW 20 = 240.
		{"a100-sxm-8x", nil, 0, 7, topo.PathNVL, 240, topo.TransportP2P, topo.PathNVL},
		{"h100-sxm-8x", nil, 0, 5, topo.PathNVL, h100NVL, topo.TransportP2P, topo.PathNVL},
		// NCCL_P2P_DISABLE=1 sets the level to LOC: every pair goes through
		// the CPU. Same socket: PHB at Gen5 48; other socket: SYS at SRP 22.
		{"h100-sxm-8x", []string{"NCCL_P2P_DISABLE=1"}, 0, 1, topo.PathPHB, 48, topo.TransportSHM, topo.PathNVL},
		{"h100-sxm-8x", []string{"NCCL_P2P_DISABLE=1"}, 0, 4, topo.PathSYS, 22, topo.TransportSHM, topo.PathNVL},
		// NCCL_P2P_DISABLE=0 is not "1": P2P stays on.
		{"h100-sxm-8x", []string{"NCCL_P2P_DISABLE=0"}, 0, 1, topo.PathNVL, h100NVL, topo.TransportP2P, topo.PathNVL},
		// SHM disabled on GeForce: neither P2P nor SHM, so NCCL marks the
		// pair NET and trims the peer (paths.cc:777-792).
		{"rtx4090-8x", []string{"NCCL_SHM_DISABLE=1"}, 0, 1, topo.PathNET, 24, topo.TransportNET, topo.PathPIX},
		// NCCL_IGNORE_DISABLED_P2P=2 skips NVML: no reroute, PIX stays, but
		// cudaDeviceCanAccessPeer still refuses, so the transport is SHM.
		{"rtx4090-8x", []string{"NCCL_IGNORE_DISABLED_P2P=2"}, 0, 1, topo.PathPIX, 24, topo.TransportSHM, topo.PathPIX},
	}
	for _, tt := range tests {
		t.Run(tt.preset+" "+strings.Join(tt.env, " "), func(t *testing.T) {
			sys := preset(t, tt.preset)
			var env []string
			for _, e := range tt.env {
				if v, ok := strings.CutPrefix(e, "p2p="); ok {
					p, err := topo.ParseP2PSupport(v)
					if err != nil {
						t.Fatal(err)
					}
					sys.P2P = p
					continue
				}
				env = append(env, e)
			}
			a, err := analyze(t, sys, env...)
			if err != nil {
				t.Fatal(err)
			}
			p := pairOf(t, a, tt.from, tt.to)
			if p.Type != tt.typ || p.Bw != tt.bw || p.Transport != tt.transport || p.DirectType != tt.direct {
				t.Fatalf("%d->%d: %s %v %s (direct %s), want %s %v %s (direct %s)", tt.from, tt.to,
					p.Type, p.Bw, p.Transport, p.DirectType, tt.typ, tt.bw, tt.transport, tt.direct)
			}
		})
	}
}

// TestNVLinkWithoutP2PFails: NVML refusing P2P between NVLink peers makes
// NCCL fail unless NCCL_IGNORE_DISABLED_P2P is set (paths.cc:393-400).
func TestNVLinkWithoutP2PFails(t *testing.T) {
	sys := preset(t, "h100-sxm-8x")
	sys.P2P = topo.P2PNone
	if _, err := analyze(t, sys); err == nil || !strings.Contains(err.Error(), "NCCL_IGNORE_DISABLED_P2P") {
		t.Fatalf("want error mentioning NCCL_IGNORE_DISABLED_P2P, got %v", err)
	}
	a, err := analyze(t, sys, "NCCL_IGNORE_DISABLED_P2P=1")
	if err != nil {
		t.Fatal(err)
	}
	if p := pairOf(t, a, 0, 1); p.Transport != topo.TransportSHM || p.Type != topo.PathPHB {
		t.Fatalf("pair %+v, want SHM over PHB", p)
	}
}

// TestNetPaths checks GPU->NIC paths, PXN and GDR on the IB preset.
func TestNetPaths(t *testing.T) {
	tests := []struct {
		name     string
		env      []string
		gpu, net int
		typ      topo.PathType
		bw       float32
		gdr      topo.GdrMode
		pxn      int
	}{
		// GPU and its NIC share a Gen5 switch: GPU-DEV-PCI-NIC-NET = PIX,
		// min(48 PCIe, 50 NET = 400000/8000) = 48; GDR on (PIX <= P2C).
		{"local NIC", nil, 0, 0, topo.PathPIX, 48, topo.GdrDefault, -1},
		// Another GPU's NIC: through NVLink to that GPU, then its switch
		// (PXN, paths.cc:816-843), bandwidth min(370.8, 48) = 48.
		{"PXN", nil, 0, 3, topo.PathPXN, 48, topo.GdrDefault, 3},
		// Without PXN the path climbs to the CPU (PHB, same socket), and GDR
		// is off because PHB > P2C.
		{"PXN disabled", []string{"NCCL_PXN_DISABLE=1"}, 0, 3, topo.PathPHB, 48, topo.GdrDisabled, -1},
		// Other socket without PXN: SYS at SRP 22 GB/s.
		{"PXN disabled other socket", []string{"NCCL_PXN_DISABLE=1"}, 0, 5, topo.PathSYS, 22, topo.GdrDisabled, -1},
		// NCCL_NET_GDR_LEVEL=LOC forbids GDR even at PIX: both directions are
		// rerouted through the CPU (paths.cc:844-855), PHB.
		{"GDR level LOC", []string{"NCCL_NET_GDR_LEVEL=LOC", "NCCL_PXN_DISABLE=1"}, 0, 0, topo.PathPHB, 48, topo.GdrDisabled, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := analyze(t, preset(t, "h100-8x-ib"), tt.env...)
			if err != nil {
				t.Fatal(err)
			}
			var got *topo.GPUNetPair
			for _, p := range a.Paths.GPUNetPairs() {
				if p.GPU == tt.gpu && p.Net == tt.net {
					got = &p
					break
				}
			}
			if got == nil {
				t.Fatal("pair missing")
			}
			if got.Type != tt.typ || got.Bw != tt.bw || got.GDR != tt.gdr || got.PXNPeer != tt.pxn {
				t.Fatalf("got %s %v gdr %s pxn %d, want %s %v gdr %s pxn %d", got.Type, got.Bw, got.GDR, got.PXNPeer,
					tt.typ, tt.bw, tt.gdr, tt.pxn)
			}
		})
	}
}

// TestLocalNet checks the NIC spreading of ncclTopoGetLocalNetType: on the
// A100 preset GPUs 0 and 1 share NICs 0 and 1 (localNetCount 2, a power of
// two, localGpuCount 2, netsPerGpu = ceil(2/2) = 1): GPU dev 0 -> mirror(0)
// = 0 -> NIC 0; dev 1 -> mirror(1, 2) = 1 -> NIC 1.
func TestLocalNet(t *testing.T) {
	a, err := analyze(t, preset(t, "a100-sxm-8x"))
	if err != nil {
		t.Fatal(err)
	}
	for g, want := range []int{0, 1, 2, 3, 4, 5, 6, 7} {
		if got := a.Paths.LocalNet(g, 0); got != want {
			t.Errorf("LocalNet(%d, 0) = %d, want %d", g, got, want)
		}
		// netsPerGpu is 1, so every channel uses the same NIC.
		if got := a.Paths.LocalNet(g, 5); got != want {
			t.Errorf("LocalNet(%d, 5) = %d, want %d", g, got, want)
		}
	}
	// NCCL_NETDEVS_POLICY=ALL: netsPerGpu = 2, channel 1 moves to the other NIC.
	a, err = analyze(t, preset(t, "a100-sxm-8x"), "NCCL_NETDEVS_POLICY=ALL")
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Paths.LocalNet(0, 1); got != 1 {
		t.Errorf("LocalNet(0, 1) with ALL = %d, want 1", got)
	}
}

// TestTrim: with SHM disabled on GeForce every other GPU is only reachable
// through the network, so the search sees GPU 0 alone and is inter-node.
func TestTrim(t *testing.T) {
	a, err := analyze(t, preset(t, "rtx4090-4x"), "NCCL_SHM_DISABLE=1")
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Trimmed) != 3 || a.Local.Count(topo.GPU) != 1 || a.Local.Count(topo.DEV) != 4 || !a.Inter {
		t.Fatalf("trimmed %v, local GPUs %d DEVs %d inter %v", a.Trimmed, a.Local.Count(topo.GPU), a.Local.Count(topo.DEV), a.Inter)
	}
}

// TestSearchInit checks ncclTopoSearchInit's bounds (search.cc:39-54).
func TestSearchInit(t *testing.T) {
	tests := []struct {
		preset         string
		hosts          int
		maxBw, totalBw float32
	}{
		// Best DEV-DEV path 24 (PCIe Gen4), largest PCI link 24.
		{"rtx4090-8x", 1, 24, 24},
		// DEV-DEV through NVSwitch 240; NVLink sum 240 > PCI 24.
		{"a100-sxm-8x", 1, 240, 240},
		// Multi-host: best DEV-NET path 48 (Gen5 switch), NVLink sum 370.8.
		{"h100-8x-ib", 2, 48, float32(5)*float32(20.6) + float32(4)*float32(20.6) + float32(4)*float32(20.6) + float32(5)*float32(20.6)},
	}
	for _, tt := range tests {
		sys, err := preset(t, tt.preset).Replicate(tt.hosts)
		if err != nil {
			t.Fatal(err)
		}
		a, err := analyze(t, sys)
		if err != nil {
			t.Fatal(err)
		}
		if a.MaxBw != tt.maxBw || a.TotalBw != tt.totalBw || a.Inter != (tt.hosts > 1) {
			t.Errorf("%s: maxBw %v totalBw %v inter %v, want %v %v %v", tt.preset, a.MaxBw, a.TotalBw, a.Inter, tt.maxBw, tt.totalBw, tt.hosts > 1)
		}
	}
}

// TestPathProperties checks invariants on every preset and several
// environments: every path is a chain of links from its source to its
// destination, its bandwidth is the minimum over its links, and a P2P pair
// never exceeds the P2P level.
func TestPathProperties(t *testing.T) {
	list, err := presets.List()
	if err != nil {
		t.Fatal(err)
	}
	envs := [][]string{nil, {"NCCL_P2P_DISABLE=1"}, {"NCCL_PXN_DISABLE=1"}, {"NCCL_P2P_LEVEL=SYS", "NCCL_IGNORE_DISABLED_P2P=1"}, {"NCCL_NVB_DISABLE=1"}}
	for _, p := range list {
		for _, env := range envs {
			sys, _, err := p.System()
			if err != nil {
				t.Fatal(err)
			}
			a, err := analyze(t, sys, env...)
			if err != nil {
				t.Fatalf("%s %v: %v", p.Name, env, err)
			}
			check := func(src topo.NodeRef, dt topo.NodeType, di int) {
				path := a.Paths.Get(src, dt, di)
				if path == nil {
					t.Fatalf("%s: no path %s -> %s/%d", p.Name, src, dt, di)
				}
				if path.Count() == 0 {
					return
				}
				at := src
				minBw := float32(1e30)
				for _, li := range path.Links {
					l := sys.Links[li]
					if l.From != at {
						t.Fatalf("%s %v: path %s->%s/%d breaks at %s", p.Name, env, src, dt, di, at)
					}
					at = l.To
					minBw = min(minBw, l.Bw)
				}
				if at != (topo.NodeRef{Type: dt, Index: di}) {
					t.Fatalf("%s: path ends at %s, not %s/%d", p.Name, at, dt, di)
				}
				if path.Bw != minBw {
					t.Fatalf("%s %v: path %s->%s/%d bw %v, min link %v", p.Name, env, src, dt, di, path.Bw, minBw)
				}
			}
			for g := range sys.GPUs() {
				for q := range sys.GPUs() {
					check(topo.NodeRef{Type: topo.GPU, Index: g}, topo.GPU, q)
				}
				for n := range sys.NETs() {
					check(topo.NodeRef{Type: topo.GPU, Index: g}, topo.NET, n)
				}
			}
			pairs, err := a.Paths.GPUPairs()
			if err != nil {
				t.Fatal(err)
			}
			for _, pr := range pairs {
				if pr.Transport == topo.TransportP2P && pr.Type > a.Paths.P2PLevel() {
					t.Fatalf("%s %v: P2P pair %d->%d with path %s beyond level %s", p.Name, env, pr.From, pr.To, pr.Type, a.Paths.P2PLevel())
				}
			}
		}
	}
}

func TestConfigNotes(t *testing.T) {
	env, _ := ncclenv.ParseAssignments([]string{"NCCL_P2P_LEVEL=nvl", "NCCL_PXN_DISABLE=yes", "NCCL_NETDEVS_POLICY=MAX:0"})
	c := topo.NewConfig(env)
	joined := strings.Join(c.Notes, "\n")
	for _, want := range []string{`NCCL_P2P_LEVEL="nvl"`, "write NVL", `NCCL_PXN_DISABLE="yes"`, "NCCL_NETDEVS_POLICY"} {
		if !strings.Contains(joined, want) {
			t.Errorf("notes %q lack %q", joined, want)
		}
	}
	if c.UserP2PLevel != -1 || c.PXNDisable || c.NetDevsPolicy != topo.NetDevsAuto {
		t.Errorf("config %+v", c)
	}
	env, _ = ncclenv.ParseAssignments([]string{"NCCL_P2P_LEVEL=9", "NCCL_NET_GDR_LEVEL=PIX"})
	c = topo.NewConfig(env)
	// Legacy levels above 5 are capped at 5, which maps to SYS.
	if c.UserP2PLevel != topo.PathSYS || c.UserGDRLevel != topo.PathPIX {
		t.Errorf("levels %s %s", c.UserP2PLevel, c.UserGDRLevel)
	}
}
