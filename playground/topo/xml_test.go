package topo_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
	"github.com/distributed-nav/distributed-nav/playground/topo"
	"github.com/distributed-nav/distributed-nav/playground/topo/topotest"
)

// minimal is a one-GPU system used as a base for error cases.
const minimal = `<system version="1">
  <cpu numaid="0" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="85">
    <pci busid="0000:17:00.0" class="0x030200" link_speed="16.0 GT/s PCIe" link_width="16">
      <gpu dev="0" sm="80" rank="0" gdr="1"/>
    </pci>
  </cpu>
</system>`

func TestParseXMLErrors(t *testing.T) {
	tests := []struct {
		name, xml, want string
	}{
		{"empty", "", "empty"},
		{"not closed", "<system version=\"1\">\n<cpu numaid=\"0\" arch=\"x86_64\">\n", "line 3: unexpected EOF"},
		{"mismatched", "<system version=\"1\">\n<cpu>\n</pci>\n</system>", "line 3: element <cpu> from line 2 closed by </pci>"},
		{"bad attribute syntax", "<system version=1>\n</system>", "line 1:"},
		{"no system", "<foo/>", "no <system> element"},
		{"wrong version", `<system version="2"></system>`, "line 1: topology XML has version 2"},
		{"missing version", `<system></system>`, "line 1: attribute version of <system> not found"},
		{"missing arch", "<system version=\"1\">\n  <cpu numaid=\"0\"/>\n</system>", "line 2: attribute arch of <cpu> not found"},
		{"missing vendor on x86", "<system version=\"1\">\n<cpu numaid=\"0\" arch=\"x86_64\"/>\n</system>", "line 2: attribute vendor of <cpu> not found"},
		{"missing intel model", "<system version=\"1\">\n<cpu numaid=\"0\" arch=\"x86_64\" vendor=\"GenuineIntel\" familyid=\"6\"/>\n</system>", "attribute modelid of <cpu> not found"},
		{"missing pci class", strings.Replace(minimal, `class="0x030200" `, "", 1), "line 3: attribute class of <pci> not found"},
		{"missing link width", strings.Replace(minimal, ` link_width="16"`, "", 1), "line 3: attribute link_width of <pci> not found"},
		{"missing gpu sm", strings.Replace(minimal, `sm="80" `, "", 1), "line 4: attribute sm of <gpu> not found"},
		{"missing gpu gdr", strings.Replace(minimal, ` gdr="1"`, "", 1), "line 4: attribute gdr of <gpu> not found"},
		{"mlopart bits", strings.Replace(minimal, "0000:17:00.0", "0000:17:00.1", 1), "MLOPart mask"},
		{"duplicate rank", strings.Replace(minimal, "</pci>\n", "</pci>\n<pci busid=\"0000:18:00.0\" class=\"0x030200\" link_speed=\"x\" link_width=\"16\"><gpu dev=\"1\" sm=\"80\" rank=\"0\" gdr=\"1\"/></pci>\n", 1), "duplicate GPU rank 0"},
		{"long value", `<system version="1" x="` + strings.Repeat("a", 256) + `"></system>`, "longer than 255"},
		{"two roots", "<system version=\"1\"></system>\n<system version=\"1\"></system>", "line 2: more than one top-level element"},
		{"too deep", strings.Repeat("<a>", topo.MaxDepth+1) + strings.Repeat("</a>", topo.MaxDepth+1), "nested deeper"},
		{"one-sided nvlink target missing", strings.Replace(minimal, `gdr="1"/>`, `gdr="1"><nvlink count="2" tclass="0x030200"/></gpu>`, 1), "attribute target of <nvlink> not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := topo.ParseXML(strings.NewReader(tt.xml))
			if err == nil {
				t.Fatalf("ParseXML succeeded, want error containing %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

func TestParseXMLSizeLimit(t *testing.T) {
	big := strings.NewReader(strings.Repeat(" ", topo.MaxInputBytes+1))
	if _, _, err := topo.ParseXML(big); err == nil || !strings.Contains(err.Error(), "exceeds") {
		t.Fatalf("want size error, got %v", err)
	}
	many := "<system version=\"1\">" + strings.Repeat("<x/>", topo.MaxElements) + "</system>"
	if _, _, err := topo.ParseXML(strings.NewReader(many)); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Fatalf("want element-count error, got %v", err)
	}
}

func TestParseXMLWarningsKeepUnknown(t *testing.T) {
	in := `<!-- description: test system -->
<system version="1">
  <cpu numaid="0" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="85" colour="blue">
    <pci busid="0000:17:00.0" class="0x030200" link_speed="16.0 GT/s PCIe" link_width="16">
      <gpu dev="0" sm="80" rank="0" gdr="1"/>
    </pci>
    <fan rpm="3000"/>
  </cpu>
</system>`
	sys, warns, err := topo.ParseXML(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if sys.Description != "test system" {
		t.Errorf("description %q", sys.Description)
	}
	want := map[string]bool{"line 3: unknown attribute colour": false, "line 7: unknown element <fan>": false}
	for _, w := range warns {
		for k := range want {
			if strings.HasPrefix(w.String(), k) {
				want[k] = true
			}
		}
	}
	for k, ok := range want {
		if !ok {
			t.Errorf("missing warning %q in %v", k, warns)
		}
	}
	if len(sys.Unknown) != 2 || sys.Unknown[0].Attr != "colour" || sys.Unknown[1].Element != "fan" || sys.Unknown[1].Line != 7 {
		t.Errorf("unknown items not kept: %+v", sys.Unknown)
	}
}

func TestParseXMLLenientIntegers(t *testing.T) {
	// NCCL reads integers with strtol: "16x" is 16 (with a warning here).
	in := strings.Replace(minimal, `link_width="16"`, `link_width="16x"`, 1)
	sys, warns, err := topo.ParseXML(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) == 0 || !strings.Contains(warns[0].String(), "strtol reads it as 16") {
		t.Errorf("warnings %v", warns)
	}
	// Gen4 x16: 16 lanes * 120 (x100 Mb/s per lane) / 80 = 24 GB/s.
	if bw := sys.Links[sys.Nodes[topo.DEV][0].Links[len(sys.Nodes[topo.DEV][0].Links)-1]].Bw; bw != 24 {
		t.Errorf("PCI link bw %v, want 24", bw)
	}
}

func TestP2PAttribute(t *testing.T) {
	in := strings.Replace(minimal, `<system version="1">`, `<system version="1" xmlns:dn="urn:distributed-nav:ncclsim" dn:p2p="nvlink">`, 1)
	sys, warns, err := topo.ParseXML(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if sys.P2P != topo.P2PNVLink || len(warns) != 0 {
		t.Fatalf("P2P %v warnings %v", sys.P2P, warns)
	}
	bad := strings.Replace(in, `dn:p2p="nvlink"`, `dn:p2p="sometimes"`, 1)
	if _, _, err := topo.ParseXML(strings.NewReader(bad)); err == nil {
		t.Fatal("bad p2p value accepted")
	}
}

// TestRealTopologyFile parses the published Azure NDv4 topology file (see the
// comment at its top for its URL).
func TestRealTopologyFile(t *testing.T) {
	f, err := os.Open("testdata/azure-ndv4-topo.xml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sys, warns, err := topo.ParseXML(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 0 {
		t.Errorf("warnings: %v", warns)
	}
	// Four NUMA domains, one bridge each. GPU and NIC <pci> entries carry no
	// <gpu>/<nic> child, so NCCL creates no node for them (topo.cc:660-695).
	if sys.Count(topo.CPU) != 4 || sys.Count(topo.PCI) != 4 || sys.Count(topo.GPU) != 0 || sys.Count(topo.NIC) != 0 {
		t.Fatalf("unexpected graph: %v", sys)
	}
	for _, li := range sys.Nodes[topo.CPU][0].Links {
		l := sys.Links[li]
		switch l.Type {
		case topo.LinkSYS:
			// AMD x86 inter-socket bandwidth AMD_BW = 16 (topo.h:26, topo.cc:76-78).
			if l.Bw != 16 {
				t.Errorf("SYS link bw %v, want 16", l.Bw)
			}
		case topo.LinkPCI:
			// "16 GT/s" (kernel <= 5.6 spelling) is 120 per lane: 16*120/80 = 24.
			if l.Bw != 24 {
				t.Errorf("PCI link bw %v, want 24", l.Bw)
			}
		}
	}
	if _, err := topo.Analyze(sys, ncclenv.New(nil)); err == nil {
		t.Error("Analyze of a GPU-less system should fail")
	}
}

// TestParseXMLSyntax checks that malformed XML is rejected with the line of
// the fault (encoding/xml accepts the first three inputs; readDocument
// rejects them itself).
func TestParseXMLSyntax(t *testing.T) {
	tests := []struct {
		name, xml, want string
	}{
		{"text after the root", minimal + "\n\ntrailing junk", "line 9: text outside the root element"},
		{"duplicate attribute", strings.Replace(minimal, `sm="80"`, `sm="80" sm="90"`, 1), "line 4: duplicate attribute sm in start tag <gpu>"},
		{"second root after a comment", minimal + "\n<!-- x -->\n<system version=\"1\"/>", "line 9: more than one top-level element"},
		{"< in a value", strings.Replace(minimal, `arch="x86_64"`, `arch="x86<64"`, 1), "line 2: unescaped < inside quoted string"},
		{"unknown entity", strings.Replace(minimal, `arch="x86_64"`, `arch="x86&nbsp;64"`, 1), "line 2: invalid character entity &nbsp;"},
		{"NUL byte", strings.Replace(minimal, "</pci>", "</pci>\x00", 1), "line 5: illegal character code U+0000"},
		{"invalid UTF-8", strings.Replace(minimal, `vendor="GenuineIntel"`, "vendor=\"Genuine\xffIntel\"", 1), "line 2: invalid UTF-8"},
		{"unterminated comment", strings.Replace(minimal, "    <pci", "<!-- unfinished\n    <pci", 1), "line 3: comment is not closed by -->"},
		{"unterminated value", "<system version=\"1\n\n", "line 1: unexpected EOF: the tag that starts here is not closed"},
		{"unclosed element", strings.TrimSuffix(minimal, "</system>"), "line 7: unexpected EOF: element <system> from line 1 is not closed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := topo.ParseXML(strings.NewReader(tt.xml))
			var le *topo.LineError
			if !errors.As(err, &le) {
				t.Fatalf("error %v, want a *topo.LineError", err)
			}
			if !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("error %q does not start with %q", err, tt.want)
			}
		})
	}
}

// TestParseXMLTolerated checks the XML features a topology file may use
// without changing the system: a byte order mark, an XML declaration, a
// DOCTYPE (warned about), references in values, CDATA and text (warned
// about).
func TestParseXMLTolerated(t *testing.T) {
	in := "\uFEFF<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" +
		"<!DOCTYPE system>\n" +
		"<!-- description: one &amp; only -->\n" +
		strings.Replace(strings.Replace(minimal,
			`vendor="GenuineIntel"`, `vendor='Genuine&#x49;ntel'`, 1),
			"</pci>", "</pci>\n<![CDATA[ note ]]>", 1)
	sys, warns, err := topo.ParseXML(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if _, v, _ := sys.CPUType(); v != topo.VendorIntel {
		t.Errorf("vendor %v: &#x49; not decoded to I", v)
	}
	// Comments are not entity-decoded.
	if sys.Description != "one &amp; only" {
		t.Errorf("description %q", sys.Description)
	}
	want := []string{"line 2: directive <!DOCTYPE...> ignored", "line 9: text content ignored"}
	if len(warns) != len(want) {
		t.Fatalf("warnings %v, want %v", warns, want)
	}
	for i, w := range warns {
		if w.String() != want[i] {
			t.Errorf("warning %d: %q, want %q", i, w, want[i])
		}
	}
}

// TestDescription reads the summary comment before the root element; the
// wanted values follow from the rule in topo.Description's doc.
func TestDescription(t *testing.T) {
	tests := []struct {
		in, want, err string
	}{
		{"<!-- description: two GPUs -->\n<system version=\"1\"/>", "two GPUs", ""},
		{"\uFEFF<?xml version=\"1.0\"?>\n<!-- other --><!-- description:  x  --><system/>", "x", ""},
		{"<!-- description: -->\n<!-- description: second -->\n<system/>", "second", ""},
		{"<system version=\"1\"><!-- description: too late --></system>", "", "no \"<!-- description: ... -->\" comment before the root element"},
		{"<!-- description: x -->", "x", ""},
		{"<!-- other -->\n", "", "no root element"},
		{"<!-- description: x\n<system/>", "", "line 1: comment is not closed by -->"},
		{"<!-- description: ok -->\n<system", "ok", ""},
	}
	for _, tt := range tests {
		got, err := topo.Description([]byte(tt.in))
		if got != tt.want || (err == nil) != (tt.err == "") || (err != nil && err.Error() != tt.err) {
			t.Errorf("Description(%q) = %q, %v; want %q, %q", tt.in, got, err, tt.want, tt.err)
		}
	}
}

// TestParseXMLBoundedWork checks the bounds that keep a small hostile input
// from costing work or output in proportion to its bytes: warnings of one
// kind stop at topo.MaxWarningsPerKind followed by one "and N more" line,
// and a flood of comments or text runs stops at topo.MaxTokens.
func TestParseXMLBoundedWork(t *testing.T) {
	const extra = 100
	many := strings.Replace(minimal, "  </cpu>", strings.Repeat("    <fan/>\n", extra)+"  </cpu>", 1)
	sys, warns, err := topo.ParseXML(strings.NewReader(many))
	if err != nil {
		t.Fatal(err)
	}
	if len(sys.Unknown) != extra {
		t.Errorf("%d unknown elements kept, want all %d", len(sys.Unknown), extra)
	}
	if len(warns) != topo.MaxWarningsPerKind+1 {
		t.Fatalf("%d warnings, want %d and one summary: %v", len(warns), topo.MaxWarningsPerKind, warns)
	}
	// The <fan/> lines take the place of minimal's line 6 ("  </cpu>"), so
	// the last is line 5+extra.
	want := fmt.Sprintf("and %d more of the same kind, up to line %d", extra-topo.MaxWarningsPerKind, 5+extra)
	if got := warns[len(warns)-1].String(); got != want {
		t.Errorf("last warning %q, want %q", got, want)
	}

	flood := "<system version=\"1\">" + strings.Repeat("x<!---->", topo.MaxTokens) + "</system>"
	_, _, err = topo.ParseXML(strings.NewReader(flood))
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than %d XML tokens", topo.MaxTokens)) {
		t.Fatalf("comment flood: error %v, want the token cap", err)
	}
}

// TestSilentAcceptancesWarn: inputs NCCL takes without complaint although
// they change its behaviour quietly get a warning saying what NCCL does.

// TestLocalRanksLimit: exactly NCCL_MAX_LOCAL_RANKS GPUs is quiet.
func TestLocalRanksLimit(t *testing.T) {
	_, warns, err := topo.ParseXML(strings.NewReader(topotest.Host{Sockets: 1, GPUs: topo.MaxLocalRanks}.XML()))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range warns {
		if strings.Contains(w.Message, "local ranks") {
			t.Errorf("%d GPUs warned: %s", topo.MaxLocalRanks, w)
		}
	}
}

func TestSilentAcceptancesWarn(t *testing.T) {
	sw := `<pci busid="0000:10:00.0" class="0x060400" link_speed="16.0 GT/s PCIe" link_width="16"><pcilink target="0000:10:00.0"/></pci>`
	tests := []struct{ name, xml, want string }{
		{"negative PCI width", strings.Replace(minimal, `link_width="16"`, `link_width="-4"`, 1),
			// -4 lanes * 120 (Gen4, x100 Mb/s per lane) / 80 = -6 GB/s.
			"line 3: link_width=-4 is negative; NCCL computes width * speed / 80 as it is, a bandwidth of -6.0 GB/s"},
		{"switch linked to itself", strings.Replace(minimal, "  </cpu>", sw+"\n  </cpu>", 1),
			"line 6: pcilink target 0000:10:00.0 is the switch itself"},
		{"GPU NVLinked to itself", `<system version="1"><cpu numaid="0" affinity="ff" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">
<pci busid="0000:02:00.0" class="0x030000" link_speed="16.0 GT/s PCIe" link_width="16"><gpu dev="0" sm="90" rank="0" gdr="1">
<nvlink target="0000:02:00.0" count="4" tclass="0x030000"/></gpu></pci></cpu></system>`,
			"line 3: NVLink target 0000:02:00.0 is the GPU itself"},
		{"more GPUs than NCCL's local ranks", topotest.Host{Sockets: 1, GPUs: topo.MaxLocalRanks + 1}.XML(),
			fmt.Sprintf("line 1: %d GPUs on one host: NCCL sizes its per-host state for at most %d local ranks", topo.MaxLocalRanks+1, topo.MaxLocalRanks)},
		{"over-long description", "<!-- description: " + strings.Repeat("é", topo.MaxDescription+5) + " -->\n" + minimal,
			fmt.Sprintf("line 1: the description comment is %d characters; it is shown cut to %d", topo.MaxDescription+5, topo.MaxDescription)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sys, warns, err := topo.ParseXML(strings.NewReader(tt.xml))
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, w := range warns {
				found = found || strings.HasPrefix(w.String(), tt.want)
			}
			if !found {
				t.Errorf("no warning starting %q in %v", tt.want, warns)
			}
			if n := len([]rune(sys.Description)); n > topo.MaxDescription+1 {
				t.Errorf("description kept at %d characters", n)
			}
		})
	}
}
