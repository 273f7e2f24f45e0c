package graph

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
	"github.com/distributed-nav/distributed-nav/playground/topo"
	"github.com/distributed-nav/distributed-nav/playground/topo/topotest"
)

// deepChain is a host whose GPUs hang under two chains of depth PCIe
// switches below one CPU, half under each: every path between the halves
// is 2 x depth links long.
func deepChain(depth, ngpus int) string {
	var b strings.Builder
	b.WriteString(`<system version="1"><cpu numaid="0" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">`)
	bus := 1
	pci := func(class string) string {
		bus++
		return fmt.Sprintf(`<pci busid="%04x:%02x:00.0" class="%s" link_speed="32.0 GT/s PCIe" link_width="16">`, bus>>8, bus&0xff, class)
	}
	for half := range 2 {
		for range depth {
			b.WriteString(pci("0x060400"))
		}
		for k := range ngpus / 2 {
			g := half*ngpus/2 + k
			fmt.Fprintf(&b, `%s<gpu dev="%d" sm="89" rank="%d" gdr="0"/></pci>`, pci("0x030200"), g, g)
		}
		b.WriteString(strings.Repeat("</pci>", depth))
	}
	b.WriteString(`</cpu></system>`)
	return b.String()
}

func analyzeP2P(t testing.TB, x string, p2p topo.P2PSupport) *topo.Analysis {
	return analyzeHosts(t, x, p2p, 1)
}

// analyzeHosts analyses hosts copies of the host x with the P2P support
// given.
func analyzeHosts(t testing.TB, x string, p2p topo.P2PSupport, hosts int) *topo.Analysis {
	t.Helper()
	sys, _, err := topo.ParseXML(bytes.NewReader([]byte(x)))
	if err != nil {
		t.Fatal(err)
	}
	sys.P2P = p2p
	if sys, err = sys.Replicate(hosts); err != nil {
		t.Fatal(err)
	}
	a, err := topo.Analyze(sys, ncclenv.New(nil))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestSearchWorkBounded: on the hosts of NCCL_MAX_LOCAL_RANKS (72) GPUs
// whose steps are the most expensive, every search ends within its work
// budgets, well under MaxSearchWork, and finds the graph NCCL's step
// budgets alone found (ncclsim topo at main before the work budgets: the
// channels and ring and tree bandwidths given; the deep chains without P2P
// fall back to NCCL's PCI order either way). Without the per-attempt work
// budget the no-P2P hosts read 150-283 million links (1.0-1.9 s).
func TestSearchWorkBounded(t *testing.T) {
	host := topotest.Host{Sockets: 2, Switches: 4, GPUs: 9}
	for _, tt := range []struct {
		name     string
		xml      string
		p2p      topo.P2PSupport
		channels int
		bw, tree float32 // ring and tree BwIntra
		hosts    int
	}{
		{"72 PCIe GPUs", host.XML(), topo.P2PAll, 1, 20, 20, 1},
		{"72 PCIe GPUs without P2P", host.XML(), topo.P2PNone, 1, 4, 4, 1},
		{"72 PCIe GPUs and 252 NICs", topotest.WithNICs(host.XML(), 252), topo.P2PAll, 1, 20, 20, 1},
		{"72 PCIe GPUs and 252 NICs without P2P", topotest.WithNICs(host.XML(), 252), topo.P2PNone, 1, 4, 4, 1},
		{"72 GPUs under two chains of 29 switches", deepChain(29, 72), topo.P2PAll, 2, 20, 20, 1},
		{"72 GPUs under two chains of 29 switches without P2P", deepChain(29, 72), topo.P2PNone, 1, 0.1, 0.1, 1},
		// Inter-node: each step scores and sorts the candidates against a
		// NIC (ncclsim topo --nodes 2 took 6.2 and 8.9 s of CPU at main).
		{"2 hosts of 72 PCIe GPUs and 252 NICs", topotest.WithNICs(host.XML(), 252), topo.P2PAll, 1, 12, 20, 2},
		{"2 hosts of 72 PCIe GPUs and 252 NICs without P2P", topotest.WithNICs(host.XML(), 252), topo.P2PNone, 1, 4, 4, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, err := SearchAll(context.Background(), analyzeHosts(t, tt.xml, tt.p2p, max(tt.hosts, 1)), ncclenv.New(nil))
			if err != nil {
				t.Fatal(err)
			}
			for k, g := range []*Graph{r.Ring, r.Tree} {
				bw := []float32{tt.bw, tt.tree}[k]
				t.Logf("%s: %d steps, %d links read", g.Pattern, g.Steps, g.Work)
				if g.WorkCapped || g.Work > MaxSearchWork*3/4 {
					t.Errorf("%s read %d links (capped %v); the bound is %d", g.Pattern, g.Work, g.WorkCapped, MaxSearchWork*3/4)
				}
				if g.NChannels != tt.channels || g.BwIntra != bw {
					t.Errorf("%s: %d channels of %.1f GB/s, want %d of %.1f", g.Pattern, g.NChannels, g.BwIntra, tt.channels, bw)
				}
			}
		})
	}
}

// TestSearchWorkCap: a search that reaches its cap stops within one
// step's work of it (a step reads at most every candidate's path there and
// back) plus the give-back of every recursion level still open (at most
// MaxChannels x (GPUs + 1) levels of one path each), keeps a usable graph
// and says so in the notes.
func TestSearchWorkCap(t *testing.T) {
	a := analyzeP2P(t, topotest.Host{Sockets: 2, Switches: 4, GPUs: 9}.XML(), topo.P2PNone)
	const workCap = 1 << 20
	r, err := searchAll(context.Background(), a, ncclenv.New(nil), workCap)
	if err != nil {
		t.Fatal(err)
	}
	maxPath := 0
	for _, p := range newPrep(a).pcache[0][0] {
		maxPath = max(maxPath, len(p.ids))
	}
	slack := int64(72*(2*maxPath+2) + MaxChannels*73*(maxPath+1))
	for _, g := range []*Graph{r.Ring, r.Tree} {
		if !g.WorkCapped {
			t.Errorf("%s: not capped at %d links (read %d)", g.Pattern, workCap, g.Work)
		}
		if g.Work > workCap+slack {
			t.Errorf("%s read %d links, over the cap %d plus %d", g.Pattern, g.Work, workCap, slack)
		}
		if g.NChannels < 1 {
			t.Errorf("%s: no channel", g.Pattern)
		}
	}
	want := fmt.Sprintf("the ring search stopped at the model's work cap (%d links read)", workCap)
	if !strings.Contains(strings.Join(r.Notes, "\n"), want) {
		t.Errorf("notes %q lack %q", r.Notes, want)
	}
}

// BenchmarkSearchWork is the search TestSearchWorkBounded bounds, on the
// most expensive host: 72 PCIe GPUs and 252 NICs without P2P.
func BenchmarkSearchWork(b *testing.B) {
	a := analyzeP2P(b, topotest.WithNICs(topotest.Host{Sockets: 2, Switches: 4, GPUs: 9}.XML(), 252), topo.P2PNone)
	for b.Loop() {
		r, err := SearchAll(context.Background(), a, ncclenv.New(nil))
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(r.Ring.Work+r.Tree.Work), "links")
	}
}
