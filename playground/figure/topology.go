package figure

import (
	"math"
	"strconv"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/graph"
	"github.com/distributed-nav/distributed-nav/playground/model"
	"github.com/distributed-nav/distributed-nav/playground/topo"
)

// TopologyOptions selects what Topology draws over the system.
type TopologyOptions struct {
	// Graph names the searched graph whose channels are drawn: "ring",
	// "tree" or "nvls"; "" draws none.
	Graph string
	// Channel is the channel to draw; a negative value draws every channel.
	Channel int
	// ID prefixes the ids of the SVG's markers so that several figures can
	// share a page; "" means "topo".
	ID string
}

// Geometry of the topology drawing, in SVG user units.
const (
	boxW     = 84.0
	boxH     = 40.0
	colW     = 96.0
	rowH     = 80.0
	marginX  = 24.0
	marginT  = 64.0
	marginB  = 40.0
	numChCls = 8 // channel colour classes pg-ch-0 .. pg-ch-7
)

// tbox is one drawn node: a CPU, PCI switch, NVSwitch, NIC, NET port or a
// GPU (the DEV node and its rank node drawn as one box), or a group of
// NICs with their ports drawn as one box (see MaxDrawnNICs).
type tbox struct {
	ref      topo.NodeRef
	x, y     float64 // centre
	depth    int
	children []int
	placed   bool
	// nics and nets are the NICs and NET ports a group box stands for
	// (nil for the box of one node).
	nics, nets []int
}

// MaxDrawnNICs is the most NICs Topology draws one box each (a NIC box and
// a box per port). A host has one NIC or two per GPU, 16 at most among the
// systems NCCL is tuned for; past it (ncclsim accepts up to topo.MaxNICs)
// the NICs under each parent are drawn as one box, or all of the host's as
// one when more than maxNICGroups parents hold them, so that 252 NICs do
// not draw thousands of elements. The path matrix and ncclsim topo list
// every NIC.
const MaxDrawnNICs = 32

// maxNICGroups is the most group boxes the NICs of a host past
// MaxDrawnNICs are drawn as.
const maxNICGroups = 8

// tlayout places the nodes of one host.
type tlayout struct {
	sys   *topo.System
	boxes []tbox
	at    map[topo.NodeRef]int
	next  int // next free leaf column
	w, h  float64
}

// drawn maps a node to the node whose box stands for it: a GPU (rank) node
// is drawn as its DEV node.
func drawn(sys *topo.System, r topo.NodeRef) topo.NodeRef {
	if r.Type == topo.GPU {
		if p := sys.Nodes[topo.GPU][r.Index].GPU.Peer; p >= 0 && p < len(sys.Nodes[topo.DEV]) {
			return topo.NodeRef{Type: topo.DEV, Index: p}
		}
	}
	return r
}

// newLayout builds the tree of PCI/NET/C2C links from each CPU downwards,
// gives each leaf a column and centres parents over their children. Nodes
// no CPU reaches (the NVSwitch) go on a row of their own below.
func newLayout(sys *topo.System) *tlayout {
	l := &tlayout{sys: sys, at: map[topo.NodeRef]int{}}
	groups := nicGroups(sys)
	for _, t := range []topo.NodeType{topo.CPU, topo.PCI, topo.NIC, topo.NET, topo.DEV, topo.NVS, topo.GPU} {
		if t == topo.NIC && groups != nil {
			// One box per group, standing for its NICs and their ports.
			for _, g := range groups {
				box := len(l.boxes)
				l.boxes = append(l.boxes, tbox{ref: topo.NodeRef{Type: topo.NIC, Index: g.nics[0]}, nics: g.nics, nets: g.nets})
				for _, i := range g.nics {
					l.at[topo.NodeRef{Type: topo.NIC, Index: i}] = box
				}
				for _, i := range g.nets {
					l.at[topo.NodeRef{Type: topo.NET, Index: i}] = box
				}
			}
			continue
		}
		for i := range sys.Nodes[t] {
			r := topo.NodeRef{Type: t, Index: i}
			if t == topo.GPU && drawn(sys, r) != r {
				continue
			}
			if _, done := l.at[r]; done {
				continue // a port of a NIC group
			}
			l.at[r] = len(l.boxes)
			l.boxes = append(l.boxes, tbox{ref: r})
		}
	}
	for i := range sys.Nodes[topo.GPU] {
		r := topo.NodeRef{Type: topo.GPU, Index: i}
		if d := drawn(sys, r); d != r {
			l.at[r] = l.at[d]
		}
	}
	// Children: a breadth-first walk from every CPU so that each node hangs
	// under the CPU nearest to it.
	visited := make([]bool, len(l.boxes))
	var queue []int
	for i := range sys.Nodes[topo.CPU] {
		b := l.at[topo.NodeRef{Type: topo.CPU, Index: i}]
		visited[b] = true
		queue = append(queue, b)
	}
	for len(queue) > 0 {
		b := queue[0]
		queue = queue[1:]
		for _, li := range sys.Node(l.boxes[b].ref).Links {
			lk := sys.Links[li]
			if lk.Type != topo.LinkPCI && lk.Type != topo.LinkNET && lk.Type != topo.LinkC2C {
				continue
			}
			if lk.To.Type == topo.CPU {
				continue
			}
			c, ok := l.at[lk.To]
			if !ok || visited[c] {
				continue
			}
			visited[c] = true
			l.boxes[b].children = append(l.boxes[b].children, c)
			queue = append(queue, c)
		}
	}
	maxDepth := 0
	for i := range sys.Nodes[topo.CPU] {
		l.place(l.at[topo.NodeRef{Type: topo.CPU, Index: i}], 0, &maxDepth)
	}
	cols := max(l.next, 1)
	var rest []int
	for i := range l.boxes {
		if !l.boxes[i].placed {
			rest = append(rest, i)
		}
	}
	if len(rest) > 0 {
		maxDepth++
		cols = max(cols, len(rest))
		x0 := marginX + (float64(cols)-float64(len(rest)))*colW/2 + colW/2
		for k, i := range rest {
			l.boxes[i].x = x0 + float64(k)*colW
			l.boxes[i].depth = maxDepth
			l.boxes[i].y = marginT + float64(maxDepth)*rowH
			l.boxes[i].placed = true
		}
	}
	l.w = 2*marginX + float64(cols)*colW
	l.h = marginT + float64(maxDepth)*rowH + boxH/2 + marginB
	// Centre a narrow tree over a wider bottom row.
	if shift := (float64(cols) - float64(max(l.next, 1))) * colW / 2; shift > 0 {
		for i := range l.boxes {
			if !contains(rest, i) {
				l.boxes[i].x += shift
			}
		}
	}
	return l
}

// nicGroup is the NICs (and their NET ports) drawn as one box.
type nicGroup struct{ nics, nets []int }

// nicGroups returns the groups the NICs of sys are drawn as, or nil when
// there are at most MaxDrawnNICs of them (one box each): the NICs under one
// parent (the PCIe switch or CPU their PCI link leads to) form a group,
// all of them one group when more than maxNICGroups parents hold NICs.
// Each NET port goes with the NIC it is linked to.
func nicGroups(sys *topo.System) []nicGroup {
	nics := sys.Nodes[topo.NIC]
	if len(nics) <= MaxDrawnNICs {
		return nil
	}
	parent := make([]topo.NodeRef, len(nics))
	var order []topo.NodeRef
	byParent := map[topo.NodeRef]int{}
	for i := range nics {
		parent[i] = topo.NodeRef{Type: topo.NIC, Index: -1}
		for _, li := range nics[i].Links {
			if lk := sys.Links[li]; lk.Type == topo.LinkPCI {
				parent[i] = lk.To
				break
			}
		}
		if _, ok := byParent[parent[i]]; !ok {
			byParent[parent[i]] = len(order)
			order = append(order, parent[i])
		}
	}
	n := len(order)
	if n > maxNICGroups {
		n = 1
	}
	groups := make([]nicGroup, n)
	groupOf := make([]int, len(nics))
	for i := range nics {
		if n > 1 {
			groupOf[i] = byParent[parent[i]]
		}
		groups[groupOf[i]].nics = append(groups[groupOf[i]].nics, i)
	}
	for i := range sys.Nodes[topo.NET] {
		for _, li := range sys.Nodes[topo.NET][i].Links {
			if lk := sys.Links[li]; lk.To.Type == topo.NIC && lk.To.Index >= 0 && lk.To.Index < len(nics) {
				g := groupOf[lk.To.Index]
				groups[g].nets = append(groups[g].nets, i)
				break
			}
		}
	}
	return groups
}

// groupText is nodeText for a box that stands for several NICs.
func groupText(sys *topo.System, bx *tbox) (l1, l2, desc, kind string) {
	nets := sys.Nodes[topo.NET]
	l1 = strconv.Itoa(len(bx.nics)) + " NICs"
	if len(bx.nics) == 1 {
		l1 = "1 NIC"
	}
	if len(bx.nets) > 0 {
		first, last := bx.nets[0], bx.nets[len(bx.nets)-1]
		l2 = "NET" + strconv.Itoa(first) + "–" + strconv.Itoa(last)
		if last-first+1 != len(bx.nets) {
			l2 = strconv.Itoa(len(bx.nets)) + " ports" // not one range of NETs
		}
		desc = l1 + " with " + strconv.Itoa(len(bx.nets)) + " network ports (NET " +
			strconv.Itoa(first) + " " + nets[first].Net.Name + " to NET " + strconv.Itoa(last) + " " + nets[last].Net.Name +
			"), drawn as one box: the host has " + strconv.Itoa(len(sys.Nodes[topo.NIC])) + " NICs, more than " +
			strconv.Itoa(MaxDrawnNICs) + " drawn one by one; the path matrix and ncclsim topo list each"
	} else {
		desc = l1 + " without network ports, drawn as one box"
	}
	return l1, l2, desc, "nic"
}

func contains(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// place assigns the box and its subtree their positions.
func (l *tlayout) place(i, depth int, maxDepth *int) {
	b := &l.boxes[i]
	b.depth = depth
	b.placed = true
	b.y = marginT + float64(depth)*rowH
	*maxDepth = max(*maxDepth, depth)
	if len(b.children) == 0 {
		b.x = marginX + float64(l.next)*colW + colW/2
		l.next++
		return
	}
	for _, c := range b.children {
		l.place(c, depth+1, maxDepth)
	}
	first, last := l.boxes[b.children[0]].x, l.boxes[b.children[len(b.children)-1]].x
	l.boxes[i].x = (first + last) / 2
}

// shortBus drops the PCI domain from a bus id ("0000:17:00.0" -> "17:00.0").
func shortBus(s string) string {
	if len(s) > 5 && strings.HasPrefix(s, "0000:") {
		return s[5:]
	}
	return s
}

// clip shortens s to n runes with an ellipsis.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// gbps formats a bandwidth in GB/s.
func gbps(bw float32) string { return Short(float64(bw), 1) + " GB/s" }

// nodeText returns the two label lines, the full description and the CSS
// kind of a box.
func nodeText(sys *topo.System, r topo.NodeRef) (l1, l2, desc, kind string) {
	n := sys.Node(r)
	idx := strconv.Itoa(r.Index)
	switch r.Type {
	case topo.CPU:
		c := n.CPU
		model := topo.ModelName(c.Vendor, c.Model)
		l1 = "CPU" + strconv.Itoa(c.NumaID)
		l2 = strings.TrimSpace(c.Vendor.String() + " " + model)
		desc = "CPU " + strconv.Itoa(c.NumaID) + " (NUMA domain): " + c.Arch.String() + " " + c.Vendor.String()
		if model != "" {
			desc += " " + model
		}
		return l1, l2, desc, "cpu"
	case topo.PCI:
		return "PCIe switch", shortBus(n.BusID), "PCIe switch " + n.BusID, "pci"
	case topo.NVS:
		return "NVSwitch", "", "NVSwitch (NCCL merges every NVSwitch of the host into one node)", "nvs"
	case topo.NIC:
		return "NIC", shortBus(n.BusID), "NIC " + n.BusID, "nic"
	case topo.NET:
		t := n.Net
		desc = "NET " + idx
		if t.Name != "" {
			desc += " " + t.Name
		}
		desc += ": " + strconv.Itoa(t.SpeedMbs) + " Mb/s (" + gbps(t.Bw) + "), port " + strconv.Itoa(t.Port) + ", GPUDirect RDMA " + yes(t.GDR)
		return "NET" + idx, clip(t.Name, 12), desc, "net"
	case topo.DEV:
		g := n.GPU
		gi := g.Peer
		label, gdr := "GPU", false
		if gi >= 0 && gi < len(sys.Nodes[topo.GPU]) {
			rank := sys.Nodes[topo.GPU][gi].GPU.Rank
			gdr = sys.Nodes[topo.GPU][gi].GPU.GDR
			label = "GPU" + strconv.Itoa(gi)
			l2 = "rank " + strconv.Itoa(rank)
			desc = "GPU " + strconv.Itoa(gi) + ": rank " + strconv.Itoa(rank) + ", "
		} else {
			desc = "GPU (no rank): "
		}
		desc += "device " + strconv.Itoa(g.Dev) + ", sm " + strconv.Itoa(g.SM) + ", bus " + n.BusID + ", GPUDirect RDMA " + yes(gdr)
		return label, l2, desc, "gpu"
	case topo.GPU:
		return "GPU" + idx, "rank " + strconv.Itoa(n.GPU.Rank), "GPU " + idx + ": rank " + strconv.Itoa(n.GPU.Rank), "gpu"
	}
	return r.String(), "", r.String(), "other"
}

// linkName describes a link type for people.
func linkName(t topo.LinkType) string {
	switch t {
	case topo.LinkNVL:
		return "NVLink"
	case topo.LinkPCI:
		return "PCIe"
	case topo.LinkSYS:
		return "inter-CPU (SYS)"
	case topo.LinkNET:
		return "network port"
	case topo.LinkC2C:
		return "chip-to-chip (C2C)"
	}
	return t.String()
}

// boxName is the short name of a box used in link descriptions.
func boxName(sys *topo.System, r topo.NodeRef) string {
	l1, l2, _, _ := nodeText(sys, r)
	switch r.Type {
	case topo.PCI, topo.NIC:
		return l1 + " " + sys.Node(r).BusID
	case topo.NET:
		if l2 != "" {
			return l1 + " (" + l2 + ")"
		}
	}
	return l1
}

// boxName is the short name of the box that node r is drawn in.
func (l *tlayout) boxName(r topo.NodeRef) string {
	if i, ok := l.at[r]; ok && l.boxes[i].nics != nil {
		l1, l2, _, _ := groupText(l.sys, &l.boxes[i])
		if l2 == "" {
			return l1
		}
		return l1 + " (" + l2 + ")"
	}
	return boxName(l.sys, r)
}

// Topology draws one host of res as an SVG: CPUs on top, PCIe switches,
// GPUs and NICs below them, the NVSwitch (if any) at the bottom; links
// carry their type and bandwidth in a tooltip and in a label shown on hover
// and keyboard focus. When opts.Graph names a searched graph, its channels
// are drawn over the topology along the paths NCCL routes them on.
func Topology(res *model.Result, opts TopologyOptions) string {
	if res == nil || res.Analysis == nil || res.Analysis.System == nil {
		return ""
	}
	id := opts.ID
	if id == "" {
		id = "topo"
	}
	a := res.Analysis
	sys := a.System
	l := newLayout(sys)
	var b builder
	label := "Topology of one host: " + strconv.Itoa(sys.Count(topo.GPU)) + " GPUs, " +
		strconv.Itoa(sys.Count(topo.CPU)) + " CPUs, " + strconv.Itoa(sys.Count(topo.PCI)) + " PCIe switches, " +
		strconv.Itoa(sys.Count(topo.NIC)) + " NICs"
	if sys.Count(topo.NVS) > 0 {
		label += ", NVSwitch"
	}
	// Beside (or below) the physical view, the channels as a circle of GPUs in which
	// the order can be followed (on an NVSwitch every hop of the physical
	// view runs through the one switch box).
	var ring *ringView
	if res.Search != nil && opts.Graph != "" {
		ring = newRingView(a, graphByName(res.Search, opts.Graph), l.w, l.h)
	}
	w, h := l.w, l.h
	if ring != nil {
		w, h = ring.W, ring.H
		label += "; beside it, the channels drawn as a circle of GPUs"
	}
	b.openSVG("pg-topo", label, w, h)
	b.s("<defs>")
	for k := 0; k < numChCls; k++ {
		b.s(`<marker id="`, Escape(id), "-arrow-", strconv.Itoa(k), `" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="5" markerHeight="5" orient="auto-start-reverse"><path class="pg-arrow pg-ch-`, strconv.Itoa(k), `" d="M0,0L10,5L0,10z"/></marker>`)
	}
	b.s("</defs>")

	// Links first, so that boxes cover their ends.
	type drawnLink struct {
		li, bi, bj int
		desc, bw   string
		n          int // links drawn as this one, past the first (to a NIC group)
	}
	var links []drawnLink
	// toGroup counts the links from one box to a NIC group box: they are
	// drawn as one line.
	toGroup := map[[2]int]int{}
	for li, lk := range sys.Links {
		if lk.Type == topo.LinkLOC {
			continue
		}
		from, to := drawn(sys, lk.From), drawn(sys, lk.To)
		if lk.Rev >= 0 && !before(from, to) {
			continue // drawn from the other end
		}
		bi, ok1 := l.at[from]
		bj, ok2 := l.at[to]
		if !ok1 || !ok2 || bi == bj {
			continue
		}
		if l.boxes[bi].nics != nil || l.boxes[bj].nics != nil {
			key := [2]int{min(bi, bj), max(bi, bj)}
			if k, seen := toGroup[key]; seen {
				links[k].n++
				continue
			}
			toGroup[key] = len(links)
		}
		there, back := lk.Bw, lk.Bw
		if lk.Rev >= 0 {
			back = sys.Links[lk.Rev].Bw
		}
		a, z := from, to
		if displayOrder(z.Type) < displayOrder(a.Type) {
			a, z, there, back = z, a, back, there
		}
		bw := gbps(there)
		if back != there {
			bw = gbps(there) + " from " + boxName(sys, a) + ", " + gbps(back) + " back"
		}
		links = append(links, drawnLink{li: li, bi: bi, bj: bj, desc: linkName(lk.Type) + " link " + l.boxName(a) + " – " + l.boxName(z) + ", " + bw, bw: bw})
	}
	for k := range links {
		if n := links[k].n; n > 0 {
			desc := strings.Replace(strings.TrimSuffix(links[k].desc, ", "+links[k].bw), " link ", " links ", 1)
			links[k].desc = strconv.Itoa(n+1) + " " + desc + " (the first: " + links[k].bw + ")"
		}
	}
	if len(links) > MaxLabelledLinks {
		// A mesh (72 GPUs joined all to all: 2,556 links) is drawn as bare
		// lines: no label, tooltip or keyboard stop per link.
		b.s(`<g class="pg-links pg-links-dense" role="img"`)
		b.attr("aria-label", strconv.Itoa(len(links))+" links, too many to label one by one; the path matrix and ncclsim topo list the paths")
		b.s(">")
		for _, k := range links {
			l.drawBareLink(&b, k.li, sys.Links[k.li].Type, k.bi, k.bj)
		}
	} else {
		b.s(`<g class="pg-links">`)
		for _, k := range links {
			l.drawLink(&b, k.li, sys.Links[k.li].Type, k.bi, k.bj, k.desc, k.bw)
		}
	}
	b.s("</g>")

	// Channels under the boxes, so that no arrow crosses a label.
	var g *graph.Graph
	if res.Search != nil && opts.Graph != "" {
		g = graphByName(res.Search, opts.Graph)
		l.drawChannels(&b, a, g, opts, id)
	}

	b.s(`<g class="pg-nodes">`)
	for i := range l.boxes {
		bx := &l.boxes[i]
		l1, l2, desc, kind := nodeText(sys, bx.ref)
		if bx.nics != nil {
			l1, l2, desc, kind = groupText(sys, bx)
		}
		b.s(`<g class="pg-node pg-n-`, kind, `" tabindex="0" role="img"`)
		b.attr("aria-label", desc)
		b.attr("data-node", bx.ref.String())
		b.s(">")
		b.title(desc)
		b.s("<rect")
		b.fattr("x", bx.x-boxW/2)
		b.fattr("y", bx.y-boxH/2)
		b.fattr("width", boxW)
		b.fattr("height", boxH)
		b.s(` rx="5"/>`)
		if l2 == "" {
			b.text(bx.x, bx.y+4, "pg-n1", "middle", l1)
		} else {
			b.text(bx.x, bx.y-3, "pg-n1", "middle", l1)
			b.text(bx.x, bx.y+12, "pg-n2", "middle", l2)
		}
		b.s("</g>")
	}
	b.s("</g>")

	if ring != nil {
		ring.draw(&b, a, g, opts, id)
	}
	b.s("</svg>")
	return b.String()
}

// displayOrder ranks node types for naming a link's ends: the GPU end
// first, the CPU end last.
func displayOrder(t topo.NodeType) int {
	switch t {
	case topo.DEV, topo.GPU:
		return 0
	case topo.NET:
		return 1
	case topo.NIC:
		return 2
	case topo.PCI:
		return 3
	case topo.NVS:
		return 4
	}
	return 5
}

// before orders node references so that each undirected link is drawn once.
func before(a, b topo.NodeRef) bool {
	if a.Type != b.Type {
		return a.Type < b.Type
	}
	return a.Index < b.Index
}

// drawLink draws one link between boxes bi and bj.
// MaxLabelledLinks is the most links Topology draws with a label, a
// tooltip and a keyboard stop each (seven elements a link); past it every
// link is one bare line, so that the figure stays a few thousand elements.
const MaxLabelledLinks = 256

// drawBareLink draws link li as one line, coloured by its type.
func (l *tlayout) drawBareLink(b *builder, li int, t topo.LinkType, bi, bj int) {
	d, _, _ := l.linkPath(bi, bj)
	b.s(`<path class="pg-link-line pg-l-`, strings.ToLower(t.String()), `"`)
	b.attr("d", d)
	b.attr("data-link", strconv.Itoa(li))
	b.s(`/>`)
}

// linkPath returns the SVG path of a link between boxes bi and bj and the
// point its label sits at.
func (l *tlayout) linkPath(bi, bj int) (d string, mx, my float64) {
	p, q := l.boxes[bi], l.boxes[bj]
	if p.depth == q.depth && math.Abs(p.x-q.x) > 1 {
		// Same row: an arc above (CPUs) or below (everything else).
		bend := 26 + 0.12*math.Abs(p.x-q.x)
		dir := 1.0
		if p.ref.Type == topo.CPU {
			dir = -1
			bend = min(bend, marginT-boxH/2-8)
		}
		y0 := p.y + dir*boxH/2
		cx, cy := (p.x+q.x)/2, y0+dir*bend
		d = "M" + num(p.x) + "," + num(y0) + "Q" + num(cx) + "," + num(cy) + " " + num(q.x) + "," + num(y0)
		mx, my = (p.x+2*cx+q.x)/4, (2*y0+2*cy)/4
	} else {
		d = "M" + num(p.x) + "," + num(p.y) + "L" + num(q.x) + "," + num(q.y)
		mx, my = (p.x+q.x)/2, (p.y+q.y)/2
	}
	return d, mx, my
}

func (l *tlayout) drawLink(b *builder, li int, t topo.LinkType, bi, bj int, desc, bw string) {
	cls := "pg-link pg-l-" + strings.ToLower(t.String())
	b.s(`<g class="`, cls, `" tabindex="0" role="img"`)
	b.attr("aria-label", desc)
	b.attr("data-link", strconv.Itoa(li))
	b.s(">")
	b.title(desc)
	d, mx, my := l.linkPath(bi, bj)
	width := 1.5
	if v := mathLog10(bwOf(l.sys, li)); v > 0 {
		width = 1.2 + min(3.5, v)
	}
	b.s(`<path class="pg-link-line"`)
	b.attr("d", d)
	b.fattr("stroke-width", width)
	b.s(`/><path class="pg-hit"`)
	b.attr("d", d)
	b.s(`/>`)
	lbl := strings.ToUpper(t.String()) + " " + bw
	b.s(`<g class="pg-link-label">`)
	w := 7*float64(len([]rune(lbl))) + 8
	b.s("<rect")
	b.fattr("x", mx-w/2)
	b.fattr("y", my-10)
	b.fattr("width", w)
	b.s(` height="18" rx="3"/>`)
	b.text(mx, my+3, "", "middle", lbl)
	b.s("</g></g>")
}

func bwOf(sys *topo.System, li int) float64 { return float64(sys.Links[li].Bw) }

func mathLog10(v float64) float64 {
	if v <= 0 {
		return 0
	}
	return math.Log10(v)
}

// graphByName returns the searched graph named "ring", "tree" or "nvls".
func graphByName(sr *graph.Result, name string) *graph.Graph {
	switch strings.ToLower(name) {
	case "ring":
		return sr.Ring
	case "tree":
		return sr.Tree
	case "nvls":
		return sr.NVLS
	}
	return nil
}

// toSystem maps a node of the trimmed (local) system onto the full system:
// GPU indices may differ (matched by rank), other nodes keep their index.
func toSystem(a *topo.Analysis, r topo.NodeRef) topo.NodeRef {
	if r.Type != topo.GPU || a.Local == a.System {
		return r
	}
	if r.Index < 0 || r.Index >= len(a.Local.Nodes[topo.GPU]) {
		return r
	}
	rank := a.Local.Nodes[topo.GPU][r.Index].GPU.Rank
	for i, g := range a.System.Nodes[topo.GPU] {
		if g.GPU.Rank == rank {
			return topo.NodeRef{Type: topo.GPU, Index: i}
		}
	}
	return r
}

// route returns the boxes a hop from one node to another crosses, following
// the path NCCL computed (on the trimmed system the search ran on).
func (l *tlayout) route(a *topo.Analysis, from, to topo.NodeRef) []int {
	var refs []topo.NodeRef
	if p := a.LocalPaths.Get(from, to.Type, to.Index); p != nil && len(p.Links) > 0 {
		refs = append(refs, from)
		for _, li := range p.Links {
			if int(li) >= 0 && int(li) < len(a.Local.Links) {
				refs = append(refs, a.Local.Links[li].To)
			}
		}
	} else {
		refs = []topo.NodeRef{from, to}
	}
	var out []int
	for _, r := range refs {
		i, ok := l.at[drawn(l.sys, toSystem(a, r))]
		if !ok {
			continue
		}
		if len(out) > 0 && out[len(out)-1] == i {
			continue
		}
		out = append(out, i)
	}
	return out
}

// drawChannels draws the channels of the chosen graph.
func (l *tlayout) drawChannels(b *builder, a *topo.Analysis, g *graph.Graph, opts TopologyOptions, id string) {
	if g == nil || len(g.Channels) == 0 {
		return
	}
	name := strings.ToLower(g.Pattern.String())
	if g.Pattern == graph.BalancedTree || g.Pattern == graph.SplitTree {
		name = "tree"
	}
	b.s(`<g class="pg-channels">`)
	n := len(g.Channels)
	for c, ch := range g.Channels {
		if opts.Channel >= 0 && c != opts.Channel {
			continue
		}
		k := c % numChCls
		off := 0.0
		if opts.Channel < 0 {
			off = (float64(c) - float64(n-1)/2) * 3
		}
		desc := channelText(g, c)
		b.s(`<g class="pg-ch pg-ch-`, strconv.Itoa(k), `" role="img"`)
		b.attr("aria-label", desc)
		b.attr("data-channel", strconv.Itoa(c))
		b.s(">")
		b.title(desc)
		for _, hop := range channelHops(a, g, ch, name) {
			pts := l.route(a, hop[0], hop[1])
			if len(pts) < 2 {
				continue
			}
			l.drawHop(b, pts, off, id, k)
		}
		if g.Pattern == graph.NVLS && len(ch.GPUs) > 0 {
			// NVLS: only the head rank is meaningful; mark it.
			if i, ok := l.at[drawn(l.sys, toSystem(a, topo.NodeRef{Type: topo.GPU, Index: ch.GPUs[0]}))]; ok {
				bx := l.boxes[i]
				b.s("<rect class=\"pg-ch-head\"")
				b.fattr("x", bx.x-boxW/2-4+off)
				b.fattr("y", bx.y-boxH/2-4+off)
				b.fattr("width", boxW+8)
				b.fattr("height", boxH+8)
				b.s(` rx="7"/>`)
			}
		}
		b.s("</g>")
	}
	b.s("</g>")
}

// channelHops lists the (from, to) node pairs of one channel: the rank
// order, closed into a ring when the ring stays inside the host, entered
// from and left to the network when the search is inter-node.
func channelHops(a *topo.Analysis, g *graph.Graph, ch graph.Channel, name string) [][2]topo.NodeRef {
	gpu := func(i int) topo.NodeRef { return topo.NodeRef{Type: topo.GPU, Index: i} }
	var hops [][2]topo.NodeRef
	if g.Pattern == graph.NVLS {
		if len(ch.GPUs) > 0 && len(a.Local.Nodes[topo.NVS]) > 0 {
			hops = append(hops, [2]topo.NodeRef{gpu(ch.GPUs[0]), {Type: topo.NVS, Index: 0}})
		}
		return hops
	}
	if len(ch.GPUs) == 0 {
		return nil
	}
	if ch.NetIn >= 0 {
		hops = append(hops, [2]topo.NodeRef{{Type: topo.NET, Index: ch.NetIn}, gpu(ch.GPUs[0])})
	}
	for i := 0; i+1 < len(ch.GPUs); i++ {
		hops = append(hops, [2]topo.NodeRef{gpu(ch.GPUs[i]), gpu(ch.GPUs[i+1])})
	}
	last := ch.GPUs[len(ch.GPUs)-1]
	switch {
	case ch.NetOut >= 0:
		hops = append(hops, [2]topo.NodeRef{gpu(last), {Type: topo.NET, Index: ch.NetOut}})
	case name == "ring" && len(ch.GPUs) > 1:
		hops = append(hops, [2]topo.NodeRef{gpu(last), gpu(ch.GPUs[0])})
	}
	return hops
}

// ChannelText describes channel c of g in words: "Ring channel 0 of 16:
// NET0 → 0 → 1 → … → NET0".
func channelText(g *graph.Graph, c int) string {
	ch := g.Channels[c]
	name := "Ring"
	switch g.Pattern {
	case graph.NVLS:
		name = "NVLS"
	case graph.Tree, graph.BalancedTree, graph.SplitTree:
		name = "Tree"
	}
	s := name + " channel " + strconv.Itoa(c) + " of " + strconv.Itoa(len(g.Channels)) + ": "
	if g.Pattern == graph.NVLS {
		if len(ch.Ranks) > 0 {
			return s + "head rank " + strconv.Itoa(ch.Ranks[0]) + " reduces through the NVSwitch"
		}
		return s + "no head"
	}
	var parts []string
	if ch.NetIn >= 0 {
		parts = append(parts, "NET"+strconv.Itoa(ch.NetIn))
	}
	for _, r := range ch.Ranks {
		parts = append(parts, "rank "+strconv.Itoa(r))
	}
	switch {
	case ch.NetOut >= 0:
		parts = append(parts, "NET"+strconv.Itoa(ch.NetOut))
	case name == "Ring" && len(ch.Ranks) > 1:
		parts = append(parts, "rank "+strconv.Itoa(ch.Ranks[0]))
	}
	return s + strings.Join(parts, " → ")
}

// laneOffset is how far a channel's line runs to the right of the links
// it follows, so that traffic in both directions along one link, and the
// link itself, stay visible.
const laneOffset = 4.0

// drawHop draws one hop through the given boxes, each segment shifted to
// the right of its direction of travel, ending with an arrow at the border
// of the last box.
func (l *tlayout) drawHop(b *builder, pts []int, off float64, id string, k int) {
	type pt struct{ x, y float64 }
	ps := make([]pt, len(pts))
	for i, p := range pts {
		ps[i] = pt{l.boxes[p].x + off, l.boxes[p].y + off}
	}
	// Start and end at the box borders rather than the centres.
	first, last := ps[0], ps[len(ps)-1]
	ps[0].x, ps[0].y = border(first.x, first.y, ps[1].x, ps[1].y)
	n := len(ps) - 1
	ps[n].x, ps[n].y = border(last.x, last.y, ps[n-1].x, ps[n-1].y)
	var d strings.Builder
	for i := 0; i < n; i++ {
		a, c := ps[i], ps[i+1]
		dx, dy := c.x-a.x, c.y-a.y
		ln := math.Hypot(dx, dy)
		if ln == 0 {
			continue
		}
		nx, ny := -dy/ln*laneOffset, dx/ln*laneOffset
		d.WriteString("M" + num(a.x+nx) + "," + num(a.y+ny) + "L" + num(c.x+nx) + "," + num(c.y+ny))
	}
	b.s(`<path class="pg-ch-line"`)
	b.attr("d", d.String())
	b.s(` marker-end="url(#`, Escape(id), "-arrow-", strconv.Itoa(k), `)"/>`)
}

// border moves (x, y), the centre of a box, towards (tx, ty) until it
// reaches the box's border.
func border(x, y, tx, ty float64) (float64, float64) { return borderOf(x, y, tx, ty, boxW, boxH) }
