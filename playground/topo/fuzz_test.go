package topo_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/controls"
	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
	"github.com/distributed-nav/distributed-nav/playground/topo"
)

// FuzzParseTopologyXML feeds arbitrary bytes to the parser and, when they
// parse, to path analysis: neither may panic, and an error must carry text.
func FuzzParseTopologyXML(f *testing.F) {
	files, _ := filepath.Glob("../../data/topologies/*.xml")
	dumps, _ := filepath.Glob("testdata/real/*.xml")
	files = append(append(files, "testdata/azure-ndv4-topo.xml"), dumps...)
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(minimal))
	f.Add([]byte(`<system version="1"><cpu numaid="0" arch="ppc64"><pci busid="0000:01:00.0" class="0x030200" link_speed="" link_width="0"><gpu dev="0" sm="70" rank="0" gdr="0"><nvlink target="0000:01:00.0" count="3" tclass="0x068001"/></gpu></pci><nic><net dev="0" speed="-1"/></nic></cpu></system>`))
	f.Add([]byte(`<system version="1"><cpu numaid="0" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="0x8f"><pci busid="0000:01:00.0" class="0x060400" link_speed="8 GT/s" link_width="16"><pcilink target="0000:02:00.0"/></pci><pci busid="0000:02:00.0" class="0x060400" link_speed="8 GT/s" link_width="16"/></cpu></system>`))
	// XML features beyond NCCL's own dumps: declaration, DOCTYPE, namespaces,
	// references, CDATA, a byte order mark.
	f.Add([]byte("\uFEFF<?xml version=\"1.0\"?>\n<!DOCTYPE system>\n<!-- description: x &amp; y -->\n" +
		`<system version="1" xmlns:dn="urn:distributed-nav:ncclsim" dn:p2p="nvlink"><cpu numaid="0" arch="x86_64" vendor='Genuine&#x49;ntel' familyid="6" modelid="143">` +
		`<pci busid="0000:17:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16"><gpu dev="0" sm="90" rank="0" gdr="1"/></pci><![CDATA[ note ]]></cpu></system>`))
	// Control characters where the decoder lets them through: C1 and DEL
	// in attribute values and namespaces, C0 in a directive.
	f.Add([]byte("<!X\x1b]0;t\x07><system version=\"1\" xmlns:a=\"\u009b2J\" a:b=\"\u009d0;t\u009c\"><cpu numaid=\"0\" arch=\"x86\u009b_64\x7f\"/></system>"))
	env := ncclenv.New(nil)
	f.Fuzz(func(t *testing.T, data []byte) {
		sys, warns, err := topo.ParseXML(bytes.NewReader(data))
		for _, w := range warns {
			if hasControl(w.Message) {
				t.Fatalf("warning %q holds a control character", w.Message)
			}
		}
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			if hasControl(err.Error()) {
				t.Fatalf("error %q holds a control character", err)
			}
			return
		}
		if hasControl(sys.Description) {
			t.Fatalf("description %q holds a control character", sys.Description)
		}
		for _, n := range sys.Nodes[topo.NET] {
			if hasControl(n.Net.Name) {
				t.Fatalf("NIC name %q holds a control character", n.Net.Name)
			}
		}
		a, err := topo.Analyze(sys, env)
		if err != nil {
			return
		}
		if _, err := a.Paths.GPUPairs(); err != nil {
			t.Fatalf("GPUPairs after successful Analyze: %v", err)
		}
		a.Paths.GPUNetPairs()
	})
}

// hasControl reports whether s holds a C0 or C1 control character or DEL.
func hasControl(s string) bool {
	return strings.ContainsFunc(s, controls.Is)
}
