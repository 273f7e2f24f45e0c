package topo_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/topo"
)

// TestPCIeLinkBw checks kvDictPciGen and the width*speed/80 formula
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/topo.cc#L545-L556 and #L649-L658).
func TestPCIeLinkBw(t *testing.T) {
	tests := []struct {
		speed string
		width int
		want  float32
		known bool
	}{
		{"2.5 GT/s", 16, 16 * 15.0 / 80, true},        // Gen1 x16: 3
		{"5.0 GT/s PCIe", 16, 16 * 30.0 / 80, true},   // Gen2 x16: 6
		{"8.0 GT/s PCIe", 16, 16 * 60.0 / 80, true},   // Gen3 x16: 12 = PCI_BW (topo.h:25)
		{"8 GT/s", 16, 12, true},                      // kernel <= 5.6 spelling
		{"16.0 GT/s PCIe", 16, 16 * 120.0 / 80, true}, // Gen4 x16: 24 (RTX 4090, A100 presets)
		{"16.0 GT/s PCIe", 8, 8 * 120.0 / 80, true},   // Gen4 x8: 12
		{"32.0 GT/s PCIe", 16, 16 * 240.0 / 80, true}, // Gen5 x16: 48 (H100 presets)
		{"64.0 GT/s PCIe", 16, 16 * 480.0 / 80, true}, // Gen6 x16: 96
		{"16.0 GT/s PCIe", 0, 24, true},               // width 0 is read as 16
		{"16 GT/s PCIe", 16, 24, true},                // prefix match on "16 GT/s"
		{"5.0 GT/s", 16, 16 * 60.0 / 80, false},       // no such key: fallback 60
		{"", 16, 12, false},                           // empty: fallback 60
		{" 16.0 GT/s PCIe", 4, 4 * 60.0 / 80, false},  // prefix match is literal
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q x%d", tt.speed, tt.width), func(t *testing.T) {
			got, known := topo.PCIeLinkBw(tt.speed, tt.width)
			if got != tt.want || known != tt.known {
				t.Fatalf("PCIeLinkBw = %v,%v want %v,%v", got, known, tt.want, tt.known)
			}
		})
	}
}

// TestInterCPUBw checks ncclTopoGetInterCpuBw and the Intel model rule
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/topo.cc#L60-L83, #L748-L751).
func TestInterCPUBw(t *testing.T) {
	tests := []struct {
		name          string
		arch          topo.CPUArch
		vendor        topo.CPUVendor
		family, model int
		want          float32
	}{
		{"Broadwell 0x4f", topo.ArchX86, topo.VendorIntel, 6, 0x4f, 6},        // BDW_QPI_BW
		{"Skylake 0x55", topo.ArchX86, topo.VendorIntel, 6, 0x55, 10},         // SKL_QPI_BW
		{"Ice Lake 0x6a", topo.ArchX86, topo.VendorIntel, 6, 0x6a, 10},        // still SKL class
		{"Sapphire Rapids 0x8f", topo.ArchX86, topo.VendorIntel, 6, 0x8f, 22}, // SRP_QPI_BW
		{"Emerald Rapids 0xcf", topo.ArchX86, topo.VendorIntel, 6, 0xcf, 40},  // ERP_QPI_BW
		{"family 15", topo.ArchX86, topo.VendorIntel, 15, 0xcf, 6},            // not family 6: BDW
		{"AMD", topo.ArchX86, topo.VendorAMD, 25, 17, 16},                     // AMD_BW
		{"Zhaoxin", topo.ArchX86, topo.VendorZhaoxin, 7, 0x3b, 6},             // ZPI_BW
		{"POWER", topo.ArchPower, 0, 0, 0, 32},                                // P9_BW
		{"ARM", topo.ArchARM, 0, 0, 0, 6},                                     // ARM_BW
		{"unknown arch", topo.ArchUnknown, 0, 0, 0, 5000},                     // LOC_BW
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := topo.ModelUndef
			if tt.vendor == topo.VendorIntel {
				model = topo.IntelModel(tt.family, tt.model)
			}
			if got := topo.InterCPUBw(tt.arch, tt.vendor, model); got != tt.want {
				t.Fatalf("InterCPUBw = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestNVLinkBw checks ncclTopoNVLinkBw (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/topo.h#L274-L282).
func TestNVLinkBw(t *testing.T) {
	for sm, want := range map[int]float32{50: 20, 60: 18, 70: 20, 75: 20, 80: 20, 86: 12, 87: 20, 89: 20, 90: 20.6, 100: 40.1, 120: 40.1} {
		if got := topo.NVLinkBw(sm); got != want {
			t.Errorf("NVLinkBw(%d) = %v, want %v", sm, got, want)
		}
	}
}

// oneGPU builds a system with one GPU whose <pci>/<gpu> can be extended.
func oneGPU(cpu, gpuChildren, pciExtra string) string {
	return `<system version="1">
  <cpu numaid="0" ` + cpu + `>
    <pci busid="0000:17:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16">
      <gpu dev="0" sm="90" rank="0" gdr="1">` + gpuChildren + `</gpu>
    </pci>` + pciExtra + `
  </cpu>
</system>`
}

func linkBw(t *testing.T, sys *topo.System, from topo.NodeRef, to topo.NodeType, typ topo.LinkType) float32 {
	t.Helper()
	for _, li := range sys.Node(from).Links {
		l := sys.Links[li]
		if l.To.Type == to && l.Type == typ {
			return l.Bw
		}
	}
	t.Fatalf("no %s link from %s to a %s", typ, from, to)
	return 0
}

// TestLinkBandwidths checks NET (speed/8000, topo.cc:415-418), C2C
// (bw*count/1000, topo.cc:920-923) and NVSwitch (count*NVLinkBw) links.
func TestLinkBandwidths(t *testing.T) {
	intel := `arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143"`
	nic := func(speed string) string {
		return `
    <pci busid="0000:18:00.0" class="0x020700" link_speed="32.0 GT/s PCIe" link_width="16">
      <nic><net name="mlx5_0" dev="0" ` + speed + ` port="1" gdr="1"/></nic>
    </pci>`
	}
	t.Run("NET 400 Gb/s", func(t *testing.T) {
		sys, _, err := topo.ParseXML(strings.NewReader(oneGPU(intel, "", nic(`speed="400000"`))))
		if err != nil {
			t.Fatal(err)
		}
		// 400000 Mb/s / 8000 = 50 GB/s.
		if got := sys.Nodes[topo.NET][0].Net.Bw; got != 50 {
			t.Fatalf("NET bw %v, want 50", got)
		}
		if got := linkBw(t, sys, topo.NodeRef{Type: topo.NIC}, topo.NET, topo.LinkNET); got != 50 {
			t.Fatalf("NIC->NET link %v, want 50", got)
		}
	})
	t.Run("NET speed -1 defaults to 10 Gb/s", func(t *testing.T) {
		sys, _, err := topo.ParseXML(strings.NewReader(oneGPU(intel, "", nic(`speed="-1"`))))
		if err != nil {
			t.Fatal(err)
		}
		if got := sys.Nodes[topo.NET][0].Net.Bw; got != 10000.0/8000 {
			t.Fatalf("NET bw %v, want 1.25", got)
		}
	})
	t.Run("C2C", func(t *testing.T) {
		sys, _, err := topo.ParseXML(strings.NewReader(oneGPU(`arch="arm64"`, `<c2c count="10" bw="45000"/>`, "")))
		if err != nil {
			t.Fatal(err)
		}
		// 45000 * 10 / 1000 = 450 GB/s.
		if got := linkBw(t, sys, topo.NodeRef{Type: topo.DEV}, topo.CPU, topo.LinkC2C); got != 450 {
			t.Fatalf("C2C bw %v, want 450", got)
		}
	})
	t.Run("NVSwitch links aggregate into one NVS node", func(t *testing.T) {
		nv := `<nvlink target="0000:05:00.0" count="5" tclass="0x068000"/><nvlink target="0000:06:00.0" count="4" tclass="0x068000"/>`
		sys, _, err := topo.ParseXML(strings.NewReader(oneGPU(intel, nv, "")))
		if err != nil {
			t.Fatal(err)
		}
		if sys.Count(topo.NVS) != 1 {
			t.Fatalf("%d NVS nodes, want 1", sys.Count(topo.NVS))
		}
		// sm90: 5*20.6 + 4*20.6, summed in float as ncclTopoConnectNodes does.
		want := float32(5)*float32(20.6) + float32(4)*float32(20.6)
		if got := linkBw(t, sys, topo.NodeRef{Type: topo.DEV}, topo.NVS, topo.LinkNVL); got != want {
			t.Fatalf("NVL bw %v, want %v", got, want)
		}
	})
}

// TestFlattenBcmSwitch checks that a two-level Broadcom Gen4 switch
// (device 0xc010, subsystem 0x1000:0xa0xx) is merged into one PCI node
// (ncclTopoFlattenBcmSwitches, topo.cc:204-268).
func TestFlattenBcmSwitch(t *testing.T) {
	sw := `vendor="0x1000" device="0xc010" subsystem_vendor="0x1000" subsystem_device="0xa096" link_speed="16.0 GT/s PCIe" link_width="16"`
	in := `<system version="1">
  <cpu numaid="0" arch="x86_64" vendor="AuthenticAMD">
    <pci busid="0000:01:00.0" class="0x060400" ` + sw + `>
      <pci busid="0000:03:00.0" class="0x060400" ` + sw + `>
        <pci busid="0000:07:00.0" class="0x030200" link_speed="16.0 GT/s PCIe" link_width="16"><gpu dev="0" sm="80" rank="0" gdr="1"/></pci>
        <pci busid="0000:08:00.0" class="0x030200" link_speed="16.0 GT/s PCIe" link_width="16"><gpu dev="1" sm="80" rank="1" gdr="1"/></pci>
      </pci>
    </pci>
  </cpu>
</system>`
	sys, _, err := topo.ParseXML(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if sys.Count(topo.PCI) != 1 || sys.Nodes[topo.PCI][0].BusID != "0000:01:00.0" {
		t.Fatalf("PCI nodes %+v, want the single upper switch", sys.Nodes[topo.PCI])
	}
	// Both GPUs now hang directly off one switch: GPU-DEV-PCI-DEV-GPU = PIX.
	a, err := analyze(t, sys)
	if err != nil {
		t.Fatal(err)
	}
	if p := a.Paths.GPUPath(0, 1); p.Type != topo.PathPIX || p.Count() != 4 {
		t.Fatalf("GPU0->GPU1 %s with %d hops, want PIX with 4", p.Type, p.Count())
	}
}
