package figure

import (
	"strconv"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/model"
	"github.com/distributed-nav/distributed-nav/playground/topo"
)

// PathClass returns the CSS class of a path type: "pg-p-nvl", "pg-p-phb", …
// The classes colour the cells of PathMatrix from best (NVLink) to worst
// (network), in the spirit of `nvidia-smi topo -m`.
func PathClass(t topo.PathType) string {
	return "pg-p-" + strings.ToLower(t.String())
}

// PathMeanings explains each path type in a few words, in NCCL's order.
var pathMeanings = [...]struct {
	t    topo.PathType
	text string
}{
	{topo.PathNVL, "direct NVLink, or through an NVSwitch"},
	{topo.PathNVB, "NVLink through one intermediate GPU"},
	{topo.PathC2C, "chip-to-chip link to the CPU (Grace)"},
	{topo.PathPIX, "at most one PCIe bridge"},
	{topo.PathPXB, "several PCIe bridges, not through the CPU"},
	{topo.PathP2C, "GPU to C2C to CPU to PCIe to the NIC"},
	{topo.PathPXN, "to a NIC through an NVLink-connected peer GPU"},
	{topo.PathPHB, "through a PCIe host bridge (the CPU)"},
	{topo.PathSYS, "across the inter-CPU link (SMP interconnect)"},
	{topo.PathNET, "through the network"},
	{topo.PathDIS, "disconnected"},
}

// PathLegend returns an HTML description list of the path types, each term
// carrying its PathClass, for use next to PathMatrix.
func PathLegend() string {
	var b builder
	b.s(`<dl class="pg-legend">`)
	for _, m := range pathMeanings {
		b.s(`<div><dt class="pg-p `, PathClass(m.t), `">`, m.t.String(), `</dt><dd>`, Escape(m.text), `</dd></div>`)
	}
	b.s(`</dl>`)
	return b.String()
}

// MaxMatrixCells is the most cells PathMatrix draws one by one: a GPU
// row per GPU with a column per GPU and per NIC port, so 32 GPUs without
// NICs or 16 GPUs with 48 NICs (a few thousand page elements with the
// headers). Past it a reader cannot scan the grid, and the page and the
// static view show the classes of topo.SummarizePairs and
// topo.SummarizeNetPairs instead; `ncclsim topo --full --json` has every
// pair and path.
const MaxMatrixCells = 1024

// pairSummary is PathMatrix past MaxMatrixCells: one row per way of
// reaching a GPU (path type, bandwidth, transport) and one per way of
// reaching a NIC, each with its count and an example, instead of cells.
func pairSummary(n, nics int, classes []topo.PairClass, netClasses []topo.NetPairClass) string {
	var b builder
	b.s(`<table class="pg-matrix pg-matrix-summary"><caption>`, strconv.Itoa(n), ` GPUs, `, strconv.Itoa(n*(n-1)),
		` ordered pairs, grouped by how they are reached (`, strconv.Itoa(n), ` × `, strconv.Itoa(n+nics), ` cells are more than the `,
		strconv.Itoa(MaxMatrixCells), ` drawn one by one; <code>ncclsim topo --full --json</code> lists every pair)</caption>`,
		`<thead><tr><th scope="col">path</th><th scope="col">transport</th><th scope="col">GB/s</th><th scope="col">pairs</th><th scope="col">for example</th></tr></thead><tbody>`)
	for _, c := range classes {
		detail := c.Transport.String()
		if c.Via != "" {
			detail += " over " + c.Via
		}
		if c.Reason != "" {
			detail += ": " + c.Reason
		}
		b.s(`<tr><td class="pg-p `, PathClass(c.Type), `">`, c.Type.String(), `</td><td>`, Escape(detail), `</td><td>`,
			Short(float64(c.Bw), 1), `</td><td>`, strconv.Itoa(c.Count), `</td><td>GPU`, strconv.Itoa(c.First.From), ` to GPU`, strconv.Itoa(c.First.To), `</td></tr>`)
	}
	b.s(`</tbody></table>`)
	if len(netClasses) == 0 {
		return b.String()
	}
	b.s(`<table class="pg-matrix pg-matrix-summary"><caption>`, strconv.Itoa(n), ` GPUs × `, strconv.Itoa(nics),
		` NIC ports, grouped by how they are reached</caption>`,
		`<thead><tr><th scope="col">path</th><th scope="col">GPUDirect RDMA receive/send</th><th scope="col">GB/s</th><th scope="col">paths</th><th scope="col">for example</th></tr></thead><tbody>`)
	for _, c := range netClasses {
		detail := c.GDR.String() + "/" + c.GDRRead.String()
		if c.PXN {
			detail += ", PXN through a peer GPU"
		}
		b.s(`<tr><td class="pg-p `, PathClass(c.Type), `">`, c.Type.String(), `</td><td>`, Escape(detail), `</td><td>`,
			Short(float64(c.Bw), 1), `</td><td>`, strconv.Itoa(c.Count), `</td><td>GPU`, strconv.Itoa(c.First.GPU), ` to NIC`, strconv.Itoa(c.First.Net), `</td></tr>`)
	}
	b.s(`</tbody></table>`)
	return b.String()
}

// PathMatrix returns an HTML table of the path between every pair of GPUs
// of one host (rows: from, columns: to) and from every GPU to every NIC
// port, as `nvidia-smi topo -m` lays it out. Each cell shows the path type,
// the transport NCCL would use (P2P, SHM or NET) and the path bandwidth in
// GB/s; its class colours it by path type and data attributes carry the
// values for scripts and tests. Beyond MaxMatrixCells cells it returns
// summary tables of the pair and GPU-NIC classes instead (a few rows).
func PathMatrix(res *model.Result) (string, error) {
	if res == nil || res.Analysis == nil || res.Analysis.Paths == nil {
		return "", nil
	}
	a := res.Analysis
	sys := a.System
	pairs, err := a.Paths.GPUPairs()
	if err != nil {
		return "", err
	}
	n := sys.Count(topo.GPU)
	if nics := sys.Count(topo.NET); n*(n+nics) > MaxMatrixCells {
		return pairSummary(n, nics, topo.SummarizePairs(pairs), topo.SummarizeNetPairs(a.Paths.GPUNetPairs())), nil
	}
	cell := make([][]*topo.GPUPair, n)
	for i := range cell {
		cell[i] = make([]*topo.GPUPair, n)
	}
	for i := range pairs {
		p := &pairs[i]
		if p.From >= 0 && p.From < n && p.To >= 0 && p.To < n {
			cell[p.From][p.To] = p
		}
	}
	nets := sys.NETs()
	netCell := make([][]*topo.GPUNetPair, n)
	for i := range netCell {
		netCell[i] = make([]*topo.GPUNetPair, len(nets))
	}
	np := a.Paths.GPUNetPairs()
	for i := range np {
		p := &np[i]
		if p.GPU >= 0 && p.GPU < n && p.Net >= 0 && p.Net < len(nets) {
			netCell[p.GPU][p.Net] = p
		}
	}

	cpus := sys.Nodes[topo.CPU]
	focus := n <= maxFocusCells
	var b builder
	b.s(`<table class="pg-matrix"><caption>Path from each GPU (row) to each GPU and NIC port (column), as <code>nvidia-smi topo -m</code> lays it out; hover or focus a cell for the transport and bandwidth</caption><thead><tr><th scope="col"><span class="visually-hidden">from</span></th>`)
	for j := 0; j < n; j++ {
		b.s(`<th scope="col">GPU`, strconv.Itoa(j), `</th>`)
	}
	for j, t := range nets {
		b.s(`<th scope="col">NIC`, strconv.Itoa(j))
		if t.Net.Name != "" {
			b.s(`<br><small>`, Escape(clip(t.Net.Name, 12)), `</small>`)
		}
		b.s(`</th>`)
	}
	b.s(`<th scope="col">CPU affinity</th><th scope="col">NUMA affinity</th></tr></thead><tbody>`)
	cellOpen := func(class, detail string) {
		b.s(`<td class="pg-p `, class, `"`)
		b.attr("title", detail)
		if focus {
			b.s(` tabindex="0"`)
		}
	}
	for i := 0; i < n; i++ {
		b.s(`<tr><th scope="row">GPU`, strconv.Itoa(i), `</th>`)
		for j := 0; j < n; j++ {
			if i == j {
				b.s(`<td class="pg-p pg-p-x">X</td>`)
				continue
			}
			p := cell[i][j]
			if p == nil {
				b.s(`<td class="pg-p pg-p-dis">–</td>`)
				continue
			}
			detail := p.Transport.String()
			if p.Via != "" {
				detail += " over " + p.Via
			}
			if p.Reason != "" {
				detail += ": " + p.Reason
			}
			if p.Rerouted && p.DirectType != p.Type {
				detail += " (direct path " + p.DirectType.String() + ", rerouted through the CPU)"
			}
			title := "GPU" + strconv.Itoa(i) + " to GPU" + strconv.Itoa(j) + ": " + p.Type.String() + " (the worst hop of the path), " + gbps(p.Bw) + " (its slowest link), " + detail
			cellOpen(PathClass(p.Type), title)
			b.attr("data-from", strconv.Itoa(i))
			b.attr("data-to", strconv.Itoa(j))
			b.attr("data-path", p.Type.String())
			b.attr("data-transport", p.Transport.String())
			b.attr("data-bw", strconv.FormatFloat(float64(p.Bw), 'g', -1, 32))
			b.s(`>`, p.Type.String(), `</td>`)
		}
		for j := range nets {
			p := netCell[i][j]
			if p == nil {
				b.s(`<td class="pg-p pg-p-dis">–</td>`)
				continue
			}
			title := "GPU" + strconv.Itoa(i) + " to NIC" + strconv.Itoa(j) + ": " + p.Type.String() + ", " + gbps(p.Bw) + ", GPUDirect RDMA receive " + p.GDR.String() + ", send " + p.GDRRead.String()
			if p.PXNPeer >= 0 {
				title += ", PXN through GPU" + strconv.Itoa(p.PXNPeer)
			}
			cellOpen(PathClass(p.Type), title)
			b.attr("data-from", strconv.Itoa(i))
			b.attr("data-nic", strconv.Itoa(j))
			b.attr("data-path", p.Type.String())
			b.attr("data-bw", strconv.FormatFloat(float64(p.Bw), 'g', -1, 32))
			b.s(`>`, p.Type.String(), `</td>`)
		}
		if c := nearestCPU(a, i); c >= 0 {
			cpu := cpus[c].CPU
			b.s(`<td class="pg-aff">`, Escape(CPUList(cpu.Affinity)), `</td><td class="pg-aff">`, strconv.Itoa(cpu.NumaID), `</td>`)
		} else {
			b.s(`<td class="pg-aff">–</td><td class="pg-aff">–</td>`)
		}
		b.s(`</tr>`)
	}
	b.s(`</tbody></table>`)
	return b.String(), nil
}

// maxFocusCells bounds the GPUs whose matrix cells take a keyboard stop each
// (16 GPUs: about 300 stops); larger matrices keep their tooltips.
const maxFocusCells = 16

// nearestCPU returns the index of the CPU (NUMA domain) closest to GPU g:
// the best path type, then the fewest links; -1 when no path is known.
func nearestCPU(a *topo.Analysis, g int) int {
	best, bestType, bestLen := -1, topo.PathType(0), 0
	for c := range a.System.Nodes[topo.CPU] {
		p := a.Paths.Get(topo.NodeRef{Type: topo.GPU, Index: g}, topo.CPU, c)
		if p == nil || (len(p.Links) == 0 && p.Type == 0) {
			continue
		}
		if best < 0 || p.Type < bestType || (p.Type == bestType && len(p.Links) < bestLen) {
			best, bestType, bestLen = c, p.Type, len(p.Links)
		}
	}
	return best
}

// CPUList turns a Linux CPU mask as NCCL's topology XML writes it (hex
// words of 32 bits, most significant first, separated by commas:
// "ffffffff,00000000,ffffffff") into the list nvidia-smi prints ("0-31,64-95").
// A mask that is not hexadecimal is returned unchanged; an empty one gives "–".
func CPUList(mask string) string {
	mask = strings.TrimSpace(mask)
	if mask == "" {
		return "–"
	}
	words := strings.Split(mask, ",")
	var bits []bool
	for i := len(words) - 1; i >= 0; i-- {
		w := strings.TrimPrefix(strings.TrimSpace(words[i]), "0x")
		v, err := strconv.ParseUint(w, 16, 32)
		if err != nil || len(w) > 8 {
			return mask
		}
		for k := 0; k < 32; k++ {
			bits = append(bits, v&(1<<k) != 0)
		}
	}
	var parts []string
	for i := 0; i < len(bits); {
		if !bits[i] {
			i++
			continue
		}
		j := i
		for j+1 < len(bits) && bits[j+1] {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(i))
		} else {
			parts = append(parts, strconv.Itoa(i)+"-"+strconv.Itoa(j))
		}
		i = j + 1
	}
	if len(parts) == 0 {
		return "–"
	}
	return strings.Join(parts, ",")
}
