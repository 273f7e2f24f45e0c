package topo

import (
	"fmt"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/topo/topotest"
)

// TestPlainText: escape sequences go whole, in their 7-bit and C1 forms,
// line breaks become spaces and other controls are dropped; ordinary text,
// non-ASCII letters included, is kept.
func TestPlainText(t *testing.T) {
	cases := []struct{ in, want string }{
		{"8x H100 SXM", "8x H100 SXM"},
		{"\x1b]0;pwned\x07\x1b[2J hi", " hi"},
		{"a\x1b]8;;http://x\x1b\\link", "alink"},
		{"\u009b31mred\u009d0;t\u009c!", "red!"},
		{"two\nlines\tand\rtab", "two lines and tab"},
		{"nul\x00 del\x7f bel\x07", "nul del bel"},
		{"ünïcödé ×8", "ünïcödé ×8"},
		{"trailing \x1b", "trailing "},
	}
	for _, c := range cases {
		if got := plainText(c.in); got != c.want {
			t.Errorf("plainText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestControlsInXML: no control character of the file reaches a value the
// model keeps, a warning or an error. Go's decoder refuses C0 controls in
// names and attribute values but passes DEL and C1 (U+0080-U+009F) in
// values, and C0 in a directive; each case names what it must say.
func TestControlsInXML(t *testing.T) {
	gpu := `<pci busid="0000:17:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16"><gpu dev="0" sm="90" rank="0" gdr="1"/></pci>`
	cpu := func(body string) string {
		return `<system version="1"><cpu numaid="0" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">` + gpu + body + `</cpu></system>`
	}
	nic := func(name string) string {
		return `<pci busid="0000:18:00.0" class="0x020700" link_speed="16.0 GT/s PCIe" link_width="16"><nic><net name="` + name + `" dev="0" speed="100000" port="1" gdr="0"/></nic></pci>`
	}
	cases := []struct {
		name, xml string
		netName   string // the NIC's name as the model keeps it ("" when none)
		warn, err string // a substring the warnings / the error must hold
	}{
		{"C1 CSI and OSC in a NIC name", cpu(nic("mlx5_\u009b2J\u009d0;pwned\u009c0\x7f")), "mlx5_0",
			`attribute name of <net> holds terminal control characters; they are removed ("mlx5_\u009b2J\u009d0;pwned\u009c0\x7f" is read as "mlx5_0")`, ""},
		{"C1 in an unknown attribute", cpu(nic("mlx5_0")[:len(nic("mlx5_0"))-len(`/></nic></pci>`)] + " foo=\"\u009b31mred\"/></nic></pci>"), "mlx5_0",
			`unknown attribute foo="red"`, ""},
		{"ESC and C1 in a directive", `<!X` + "\x1b]0;title\x07\u009b2J" + `>` + cpu(""), "",
			`directive <!X\x1b]0;title\x07\u009b2J...> ignored`, ""},
		{"C1 in an element name", `<system version="1"><cpu` + "\u009b" + ` numaid="0"/></system>`, "", "", `invalid XML name: cpu\u009b`},
		{"C1 in an attribute name", `<system version="1"><cpu numaid="0" x` + "\u009b" + `y="1"/></system>`, "", "", `invalid XML name: x\u009b`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sys, warns, err := ParseXML(strings.NewReader(c.xml))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one holding %q", err, c.err)
				}
				if hasControl(err.Error()) {
					t.Errorf("error %q holds a control character", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var all []string
			for _, w := range warns {
				all = append(all, w.String())
				if hasControl(w.String()) {
					t.Errorf("warning %q holds a control character", w)
				}
			}
			if !strings.Contains(strings.Join(all, "\n"), c.warn) {
				t.Errorf("warnings %q, want one holding %q", all, c.warn)
			}
			if c.netName != "" {
				nets := sys.Nodes[NET]
				if len(nets) != 1 || nets[0].Net.Name != c.netName {
					t.Errorf("NETs %+v, want one named %q", nets, c.netName)
				}
			}
		})
	}
}

// TestCPUCap: MaxCPUs CPUs are read (every pair linked, as NCCL links
// them); one more is refused on the line of the CPU past the cap.
func TestCPUCap(t *testing.T) {
	sys, _, err := ParseXML(strings.NewReader(topotest.CPUs(MaxCPUs, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if n := sys.Count(CPU); n != MaxCPUs {
		t.Errorf("%d CPUs read, want %d", n, MaxCPUs)
	}
	_, _, err = ParseXML(strings.NewReader(topotest.CPUs(MaxCPUs+1, 1)))
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than %d CPUs (NUMA nodes) on one host", MaxCPUs)) {
		t.Errorf("error %v, want the CPU cap", err)
	}
}
