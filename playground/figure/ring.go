package figure

import (
	"math"
	"strconv"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/graph"
	"github.com/distributed-nav/distributed-nav/playground/topo"
)

// Geometry of the circle view, in SVG user units.
const (
	ringBoxW   = 58.0
	ringBoxH   = 32.0
	ringPad    = 56.0 // room outside the circle for the boxes and order badges
	ringTop    = 40.0 // room for the panel's title
	ringGap    = 24.0 // between the physical view and the circle
	ringMaxGPU = 64   // beyond this the circle is not drawn
)

// ringView lays out the GPUs of one host on a circle, in index order, so
// that the channels of a searched graph can be drawn as hops between them:
// on an NVSwitch system, where every hop of the physical view runs through
// the one switch box, the circle shows the order the ranks follow.
type ringView struct {
	ox, oy, scale float64 // where the panel sits in the figure, and its scale
	W, H          float64 // size of the whole figure with the panel
	cx, cy, r     float64 // the circle, in the panel's own units
	n             int     // GPUs on the circle (system GPU indices 0..n-1)
}

// ringMaxScale bounds how much the panel grows below a wide physical view.
const ringMaxScale = 2.2

// newRingView places the circle panel beside a physical view of physW x
// physH, or below it when the physical view is much wider than the panel
// (so that the figure keeps a shape that fits a column). Below a wide view
// the panel is scaled up to about half the figure's width, so that when
// the whole figure is shrunk to its column the circle's labels stay as
// large as the physical view's. It returns nil when there is nothing to
// draw.
func newRingView(a *topo.Analysis, g *graph.Graph, physW, physH float64) *ringView {
	n := a.System.Count(topo.GPU)
	if g == nil || len(g.Channels) == 0 || n < 2 || n > ringMaxGPU {
		return nil
	}
	r := math.Min(math.Max(float64(n)*17, 72), 230)
	side := 2*(ringPad+r) + 8
	v := &ringView{n: n, r: r, scale: 1}
	if physW > 1.6*side {
		v.scale = math.Min(math.Max(0.5*physW/side, 1), ringMaxScale)
		v.ox, v.oy = (physW-side*v.scale)/2, physH
		v.W, v.H = physW, physH+(ringTop+side)*v.scale
	} else {
		v.ox, v.oy = physW+ringGap, 0
		v.W, v.H = physW+ringGap+side, math.Max(physH, ringTop+side)
	}
	v.cx = ringPad + r
	v.cy = ringTop + ringPad + r
	return v
}

// slot returns the centre of GPU i (system index) on the circle.
func (v *ringView) slot(i int) (float64, float64) {
	t := -math.Pi/2 + 2*math.Pi*float64(i)/float64(v.n)
	return v.cx + v.r*math.Cos(t), v.cy + v.r*math.Sin(t)
}

// draw writes the panel: a title, the circle's GPUs, a centre box for the
// network or the NVSwitch when a hop reaches one, and every drawn channel
// as arrows between GPUs. With one channel drawn, a badge beside each GPU
// gives its position in the channel's order.
func (v *ringView) draw(b *builder, a *topo.Analysis, g *graph.Graph, opts TopologyOptions, id string) {
	name := strings.ToLower(g.Pattern.String())
	if g.Pattern == graph.BalancedTree || g.Pattern == graph.SplitTree {
		name = "tree"
	}
	sys := a.System
	type hop struct {
		from, to int // slot, or -1 for the centre
	}
	slotOf := func(r topo.NodeRef) int {
		if r.Type != topo.GPU {
			return -1
		}
		s := toSystem(a, r)
		if s.Index < 0 || s.Index >= v.n {
			return -1
		}
		return s.Index
	}
	var drawnCh []int
	hops := map[int][]hop{}
	centre := ""
	for c, ch := range g.Channels {
		if opts.Channel >= 0 && c != opts.Channel {
			continue
		}
		drawnCh = append(drawnCh, c)
		for _, hp := range channelHops(a, g, ch, name) {
			f, t := slotOf(hp[0]), slotOf(hp[1])
			if f < 0 && t < 0 {
				continue
			}
			for _, e := range hp {
				switch e.Type {
				case topo.NET:
					centre = "network"
				case topo.NVS:
					centre = "NVSwitch"
				}
			}
			hops[c] = append(hops[c], hop{f, t})
		}
	}
	if len(drawnCh) == 0 {
		return
	}
	var desc []string
	for i, c := range drawnCh {
		if i == 4 {
			desc = append(desc, "and "+strconv.Itoa(len(drawnCh)-4)+" more")
			break
		}
		desc = append(desc, channelText(g, c))
	}
	b.s(`<g class="pg-ring" role="img"`)
	b.attr("aria-label", "The same channels on a circle of the host's GPUs: "+strings.Join(desc, "; "))
	b.s(` transform="translate(`, num(v.ox), ",", num(v.oy), `) scale(`, num(v.scale), `)">`)
	b.text(8, 22, "pg-ring-title", "", "Channel order, GPUs on a circle")
	b.s(`<circle class="pg-ring-guide"`)
	b.fattr("cx", v.cx)
	b.fattr("cy", v.cy)
	b.fattr("r", v.r)
	b.s(`/>`)

	point := func(s int) (float64, float64, float64, float64) {
		if s < 0 {
			return v.cx, v.cy, ringBoxW + 22, ringBoxH
		}
		x, y := v.slot(s)
		return x, y, ringBoxW, ringBoxH
	}
	// Channels first, under the boxes.
	for k, c := range drawnCh {
		cls := strconv.Itoa(c % numChCls)
		b.s(`<g class="pg-ch pg-ch-`, cls, `"`)
		b.attr("data-ring-channel", strconv.Itoa(c))
		b.s(`>`)
		// Several channels bend by different amounts so that they stay
		// apart where they run between the same GPUs.
		bend := 0.22
		if len(drawnCh) > 1 {
			bend = 0.08 + 0.5*float64(k)/float64(len(drawnCh))
		}
		for _, h := range hops[c] {
			x1, y1, w1, h1 := point(h.from)
			x2, y2, w2, h2 := point(h.to)
			mx, my := (x1+x2)/2, (y1+y2)/2
			qx, qy := mx+(v.cx-mx)*bend, my+(v.cy-my)*bend
			if h.from < 0 || h.to < 0 {
				qx, qy = mx, my
			}
			sx, sy := borderOf(x1, y1, qx, qy, w1, h1)
			ex, ey := borderOf(x2, y2, qx, qy, w2, h2)
			// One path per hop, so that each ends with its own arrow.
			b.s(`<path class="pg-ch-line" d="M`, num(sx), ",", num(sy), "Q", num(qx), ",", num(qy), " ", num(ex), ",", num(ey), `"`)
			b.s(` marker-end="url(#`, Escape(id), "-arrow-", cls, `)"/>`)
		}
		b.s(`</g>`)
	}
	// Boxes on top.
	if centre != "" {
		b.s(`<g class="pg-rnode pg-n-`)
		if centre == "network" {
			b.s(`net`)
		} else {
			b.s(`nvs`)
		}
		b.s(`"><rect`)
		b.fattr("x", v.cx-(ringBoxW+22)/2)
		b.fattr("y", v.cy-ringBoxH/2)
		b.fattr("width", ringBoxW+22)
		b.fattr("height", ringBoxH)
		b.s(` rx="5"/>`)
		b.text(v.cx, v.cy+4, "pg-n2r", "middle", centre)
		b.s(`</g>`)
	}
	order := map[int]int{}
	if len(drawnCh) == 1 {
		for i, gi := range g.Channels[drawnCh[0]].GPUs {
			if s := slotOf(topo.NodeRef{Type: topo.GPU, Index: gi}); s >= 0 {
				if _, seen := order[s]; !seen {
					order[s] = i + 1
				}
			}
		}
	}
	for s := 0; s < v.n; s++ {
		x, y := v.slot(s)
		gn := sys.Nodes[topo.GPU][s].GPU
		b.s(`<g class="pg-rnode pg-n-gpu"><rect`)
		b.fattr("x", x-ringBoxW/2)
		b.fattr("y", y-ringBoxH/2)
		b.fattr("width", ringBoxW)
		b.fattr("height", ringBoxH)
		b.s(` rx="5"/>`)
		b.text(x, y-2, "pg-n1r", "middle", "GPU"+strconv.Itoa(s))
		b.text(x, y+11, "pg-n2r", "middle", "rank "+strconv.Itoa(gn.Rank))
		b.s(`</g>`)
		if k, ok := order[s]; ok {
			// The badge sits outside the circle, on the GPU's radius.
			t := -math.Pi/2 + 2*math.Pi*float64(s)/float64(v.n)
			bx, by := v.cx+(v.r+ringBoxW/2+14)*math.Cos(t), v.cy+(v.r+ringBoxH/2+14)*math.Sin(t)
			b.s(`<g class="pg-ring-step"><circle`)
			b.fattr("cx", bx)
			b.fattr("cy", by)
			b.s(` r="10"/>`)
			b.text(bx, by+4, "", "middle", strconv.Itoa(k))
			b.s(`</g>`)
		}
	}
	b.s(`</g>`)
}

// borderOf moves (x, y), the centre of a w x h box, towards (tx, ty) until
// it reaches the box's border.
func borderOf(x, y, tx, ty, w, h float64) (float64, float64) {
	dx, dy := tx-x, ty-y
	if dx == 0 && dy == 0 {
		return x, y
	}
	t := math.Inf(1)
	if dx != 0 {
		t = min(t, (w/2+2)/math.Abs(dx))
	}
	if dy != 0 {
		t = min(t, (h/2+2)/math.Abs(dy))
	}
	t = min(t, 1)
	return x + dx*t, y + dy*t
}
