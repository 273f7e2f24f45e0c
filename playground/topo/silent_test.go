package topo

import (
	"fmt"
	"strings"
	"testing"
)

// TestSilentValuesWarn: values NCCL takes as they are but no hardware
// has get a warning that says what NCCL does with them (issue 18 item 5;
// the attack's F7 took each of them without a word).
func TestSilentValuesWarn(t *testing.T) {
	gpu := func(sm, nvlink string) string {
		return `<pci busid="0000:17:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16"><gpu dev="0" sm="` + sm + `" rank="0" gdr="1">` + nvlink + `</gpu></pci>` +
			`<pci busid="0000:18:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16"><gpu dev="1" sm="` + sm + `" rank="1" gdr="1"/></pci>`
	}
	host := func(body string) string {
		return `<system version="1"><cpu numaid="0" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">` + body + `</cpu></system>`
	}
	nic := func(speed string) string {
		return `<pci busid="0000:19:00.0" class="0x020700" link_speed="16.0 GT/s PCIe" link_width="16"><nic><net name="mlx5_0" dev="0" speed="` + speed + `" port="1" gdr="0"/></nic></pci>`
	}
	link := func(count string) string {
		return `<nvlink target="0000:18:00.0" count="` + count + `" tclass="0x030200"/>`
	}
	cases := []struct{ name, xml, warn string }{
		{"NVLink count of a million", host(gpu("90", link("1000000"))), "NVLink count=1000000: NCCL multiplies one NVLink's bandwidth by it"},
		{"NVLink count 0", host(gpu("90", link("0"))), "NVLink count=0: NCCL multiplies one NVLink's bandwidth by it"},
		{"sm 1000", host(gpu("1000", "")), "sm=1000 is no GPU's compute capability"},
		{"sm 10", host(gpu("10", "")), "sm=10 is no GPU's compute capability"},
		{"NIC speed 0", host(gpu("90", "") + nic("0")), "NIC speed=0 Mb/s: NCCL takes 10,000 Mb/s"},
		{"NIC speed -1", host(gpu("90", "") + nic("-1")), "NIC speed=-1 Mb/s"},
		{"link_width 100000", host(strings.Replace(gpu("90", ""), `link_width="16"`, `link_width="100000"`, 1)), "link_width=100000: PCIe links are at most 32 lanes wide"},
	}
	for _, c := range cases {
		_, warns, err := ParseXML(strings.NewReader(c.xml))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var all []string
		for _, w := range warns {
			all = append(all, w.Message)
		}
		if !strings.Contains(strings.Join(all, "\n"), c.warn) {
			t.Errorf("%s: warnings %q lack %q", c.name, all, c.warn)
		}
	}
	// A negative NVLink count is refused with its line: the bandwidth it
	// gives (count x the per-link figure) is below zero, and the
	// estimator then found no path class and blamed --coll (attack F7).
	if _, _, err := ParseXML(strings.NewReader(host(gpu("90", link("-4"))))); err == nil || !strings.Contains(err.Error(), "line 1: NVLink count=-4 is negative") {
		t.Errorf("negative NVLink count: error %v", err)
	}
	// Values every real dump has stay silent: 2 NVLinks, sm 90, 100 Gb/s.
	_, warns, err := ParseXML(strings.NewReader(host(gpu("90", link("2")) + nic("100000"))))
	if err != nil || len(warns) != 0 {
		t.Errorf("a plain host: warnings %v, error %v", warns, err)
	}
}

// TestNCCLElementLimitWarns checks the warning at NCCL's own element limit:
// xmlLoadSub (src/graph/xml.cc:201-204 at v2.30.7-1) checks for a free node
// before it reads each tag, so a file whose 256 nodes (topo.h:211) are all
// taken fails at its next tag; 255 elements still load. Each file here is
// <system>, one <cpu> and n-2 empty <pci> elements, one per line.
func TestNCCLElementLimitWarns(t *testing.T) {
	file := func(n int) string {
		var b strings.Builder
		b.WriteString("<system version=\"1\">\n<cpu numaid=\"0\" arch=\"x86_64\" vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"143\">\n")
		for i := range n - 2 {
			fmt.Fprintf(&b, "<pci busid=\"0000:%02x:%02x.0\" class=\"0x060400\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\"/>\n", i/32+1, i%32)
		}
		b.WriteString("</cpu>\n</system>\n")
		return b.String()
	}
	for _, c := range []struct {
		elements int
		line     int // 0: no warning
	}{
		{255, 0},
		{NCCLMaxElements, NCCLMaxElements}, // the 256th element sits on line 256
		{300, NCCLMaxElements},
	} {
		_, warns, err := ParseXML(strings.NewReader(file(c.elements)))
		if err != nil {
			t.Fatalf("%d elements: %v", c.elements, err)
		}
		got := 0
		for _, w := range warns {
			if strings.Contains(w.Message, "NCCL_TOPO_XML_MAX_NODES") {
				if got != 0 {
					t.Errorf("%d elements: the limit is warned more than once", c.elements)
				}
				got = w.Line
			}
		}
		if got != c.line {
			t.Errorf("%d elements: limit warning on line %d, want %d (warnings %v)", c.elements, got, c.line, warns)
		}
	}
}
