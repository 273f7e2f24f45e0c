package presets

import (
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/distributed-nav/distributed-nav/playground/topo"
)

func TestListAndGet(t *testing.T) {
	list, err := List()
	if err != nil {
		t.Fatal(err)
	}
	if !sort.SliceIsSorted(list, func(i, j int) bool { return list[i].Name < list[j].Name }) {
		t.Error("presets not sorted")
	}
	for _, p := range list {
		if p.Description == "" || strings.Contains(p.Description, "\n") {
			t.Errorf("%s: description %q is not one line", p.Name, p.Description)
		}
		sys, warns, err := p.System()
		if err != nil {
			t.Errorf("%s: %v", p.Name, err)
			continue
		}
		if len(warns) != 0 {
			t.Errorf("%s: warnings %v", p.Name, warns)
		}
		if sys.Description != p.Description {
			t.Errorf("%s: parser and registry disagree on the description", p.Name)
		}
	}
	if _, err := Get("no-such-preset"); err == nil || !strings.Contains(err.Error(), "h100-sxm-8x") {
		t.Errorf("Get of an unknown name: %v", err)
	}
}

// TestPresetHardware checks that each preset carries plausible PCI ids and
// the facts its description states.
func TestPresetHardware(t *testing.T) {
	tests := []struct {
		name         string
		gpus, sm     int
		device       uint64 // vendor<<48 | device<<32
		class        string
		cpus, nvs    int
		nets         int
		netBw        float32
		p2p          topo.P2PSupport
		vendor       topo.CPUVendor
		sameSwitches int // PCI switch nodes
	}{
		{"rtx4090-2x", 2, 89, 0x10de2684, "0x030000", 1, 0, 0, 0, topo.P2PNone, topo.VendorAMD, 0},
		{"rtx4090-4x", 4, 89, 0x10de2684, "0x030000", 1, 0, 0, 0, topo.P2PNone, topo.VendorIntel, 0},
		{"rtx4090-8x", 8, 89, 0x10de2684, "0x030000", 2, 0, 0, 0, topo.P2PNone, topo.VendorAMD, 2},
		{"rtx3090-4x-nvlink", 4, 86, 0x10de2204, "0x030000", 1, 0, 0, 0, topo.P2PNVLink, topo.VendorAMD, 0},
		// 200 Gb/s HDR: 200000/8000 = 25 GB/s per NIC.
		{"a100-sxm-8x", 8, 80, 0x10de20b0, "0x030200", 2, 1, 8, 25, topo.P2PAll, topo.VendorAMD, 4},
		{"h100-sxm-8x", 8, 90, 0x10de2330, "0x030200", 2, 1, 0, 0, topo.P2PAll, topo.VendorIntel, 4},
		// 400 Gb/s NDR: 50 GB/s per NIC, one switch per GPU+NIC pair.
		{"h100-8x-ib", 8, 90, 0x10de2330, "0x030200", 2, 1, 8, 50, topo.P2PAll, topo.VendorIntel, 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Get(tt.name)
			if err != nil {
				t.Fatal(err)
			}
			sys, _, err := p.System()
			if err != nil {
				t.Fatal(err)
			}
			if sys.Count(topo.GPU) != tt.gpus || sys.Count(topo.CPU) != tt.cpus || sys.Count(topo.NVS) != tt.nvs ||
				sys.Count(topo.NET) != tt.nets || sys.Count(topo.PCI) != tt.sameSwitches || sys.P2P != tt.p2p {
				t.Fatalf("got %v", sys)
			}
			for _, g := range sys.GPUs() {
				if g.GPU.SM != tt.sm || g.Device>>32 != tt.device || g.Class != tt.class {
					t.Errorf("GPU %s: sm %d device %#x class %s", g.BusID, g.GPU.SM, g.Device>>32, g.Class)
				}
			}
			for _, n := range sys.NETs() {
				if n.Net.Bw != tt.netBw || !n.Net.GDR {
					t.Errorf("NET %s: bw %v gdr %v", n.Net.Name, n.Net.Bw, n.Net.GDR)
				}
			}
			if _, v, _ := sys.CPUType(); v != tt.vendor {
				t.Errorf("CPU vendor %s", v)
			}
		})
	}
}

func TestDescription(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"<!-- description: two GPUs -->\n<system version=\"1\"/>", "two GPUs", true},
		{"<?xml version=\"1.0\"?>\n<!-- other --><!-- description:  x  --><system/>", "x", true},
		{"<system version=\"1\"><!-- description: too late --></system>", "", false},
		{"<!-- description: -->\n<system/>", "", false},
		{"", "", false},
		{"<system", "", false},
		{"\uFEFF<!-- description: after a byte order mark -->\n<system/>", "after a byte order mark", true},
	}
	for _, tt := range tests {
		got, err := Description([]byte(tt.in))
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("Description(%q) = %q, %v", tt.in, got, err)
		}
	}
}

// TestDescriptionSyntaxError checks that malformed XML before the root is
// reported with its line.
func TestDescriptionSyntaxError(t *testing.T) {
	_, err := Description([]byte("<!-- note -->\n<!-- a -- b -->\n<system/>"))
	if err == nil || err.Error() != `line 2: invalid sequence "--" not allowed in comments` {
		t.Fatalf("error %v", err)
	}
}

func TestListFSRejectsUndescribed(t *testing.T) {
	fsys := fstest.MapFS{
		"t/good.xml":    {Data: []byte("<!-- description: ok -->\n<system version=\"1\"/>")},
		"t/presets.tsv": {Data: []byte("good\tG\tGood\nbad\tG\tBad\n")},
		"u/presets.tsv": {Data: []byte("# comment\nalone\tSolo\tAlone, described\n")},
		"t/bad.xml":     {Data: []byte("<system version=\"1\"/>")},
		"t/notes.txt":   {Data: []byte("ignored")},
		"t/sub/x.xml":   {Data: []byte("ignored: in a subdirectory")},
		"u/alone.xml":   {Data: []byte("<!-- description: only -->\n<system version=\"1\"/>")},
	}
	if _, err := listFS(fsys, "t"); err == nil || !strings.Contains(err.Error(), "bad") {
		t.Fatalf("want error naming bad.xml, got %v", err)
	}
	list, err := listFS(fsys, "u")
	if err != nil || len(list) != 1 || list[0].Name != "alone" || list[0].Description != "only" || string(list[0].XML()) == "" ||
		list[0].Group != "Solo" || list[0].Title != "Alone, described" {
		t.Fatalf("list %+v err %v", list, err)
	}
}

// The presets table must name every topology file once, and nothing else.
func TestPresetsTable(t *testing.T) {
	xml := []byte("<!-- description: ok -->\n<system version=\"1\"/>")
	tests := []struct{ name, table, want string }{
		{"missing line", "a\tG\tA\n", "preset b: no line in t/presets.tsv"},
		{"extra line", "a\tG\tA\nb\tG\tB\nc\tG\tC\n", "t/presets.tsv:3: c names no topology file"},
		{"duplicate", "a\tG\tA\na\tG\tA2\nb\tG\tB\n", "t/presets.tsv:2: a is already listed at line 1"},
		{"two fields", "a\tG\nb\tG\tB\n", "t/presets.tsv:1: want name, group and title"},
		{"empty title", "a\tG\t \nb\tG\tB\n", "t/presets.tsv:1: want name, group and title"},
	}
	for _, tt := range tests {
		fsys := fstest.MapFS{"t/a.xml": {Data: xml}, "t/b.xml": {Data: xml}, "t/presets.tsv": {Data: []byte(tt.table)}}
		if _, err := listFS(fsys, "t"); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
	if _, err := listFS(fstest.MapFS{"t/a.xml": {Data: xml}}, "t"); err == nil || !strings.Contains(err.Error(), "presets table") {
		t.Errorf("no table: %v", err)
	}
	// The real table: groups in the order the pickers show them.
	list, err := List()
	if err != nil {
		t.Fatal(err)
	}
	order := map[string]int{}
	for _, p := range list {
		if p.Title == "" || p.Group == "" {
			t.Errorf("%s: no title or group", p.Name)
		}
		order[p.Group] = p.GroupOrder
	}
	for g, want := range map[string]int{"PCIe, consumer GPUs": 0, "PCIe, data-centre GPUs": 1, "NVLink bridge": 2, "NVSwitch": 3, "Multi-node": 4} {
		if got, ok := order[g]; !ok || got != want {
			t.Errorf("group %q: order %d (present %v), want %d", g, got, ok, want)
		}
	}
}
