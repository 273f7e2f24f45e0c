package topo_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

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
	env := ncclenv.New(nil)
	f.Fuzz(func(t *testing.T, data []byte) {
		sys, _, err := topo.ParseXML(bytes.NewReader(data))
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
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
