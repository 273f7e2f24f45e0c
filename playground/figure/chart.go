package figure

import (
	"math"
	"sort"
	"strconv"
	"strings"
)

// Unit says how an axis formats its values.
type Unit int

// Axis units.
const (
	UnitNumber Unit = iota // plain numbers
	UnitBytes              // byte counts, binary prefixes
	UnitMicros             // durations given in microseconds
	UnitGBps               // bandwidths in GB/s
)

// format renders v in the unit.
func (u Unit) format(v float64) string {
	switch u {
	case UnitBytes:
		return Bytes(v)
	case UnitMicros:
		return Duration(v)
	case UnitGBps:
		return sig3(v) + " GB/s"
	}
	return sig3(v)
}

// SeriesKind says how a series is drawn.
type SeriesKind int

// Series kinds.
const (
	Line    SeriesKind = iota // a polyline through the points
	Markers                   // one marker per point (measurements)
	Band                      // a filled area between Lower and Upper
)

// Point is one data point. Title is its tooltip (for example the formula
// that produced the value); Href, for Markers, links the point to its
// source.
type Point struct {
	X, Y  float64
	Title string
	Href  string
}

// Series is one curve of a chart.
type Series struct {
	Name string
	// Class is added to the series' elements; the stylesheet maps classes
	// pg-s0 … pg-s11 to colours and pg-dash1 … pg-dash3 to dash patterns.
	Class  string
	Kind   SeriesKind
	Points []Point
	// Lower and Upper bound a Band at each point's X.
	Lower, Upper []float64
}

// Segment is one stretch of the winner band under the X axis.
type Segment struct {
	From, To float64
	Label    string
	Class    string
}

// Mark is a vertical line at X (a crossover size).
type Mark struct {
	X     float64
	Label string
}

// ChartOptions lays out a chart. X is always logarithmic.
type ChartOptions struct {
	// Label is the accessible name of the chart.
	Label          string
	XLabel, YLabel string
	XUnit, YUnit   Unit
	// YLog makes the Y axis logarithmic.
	YLog bool
	// Width and Height of the plot with its axes; zero means 720 x 400.
	// The legend adds its rows below.
	Width, Height float64
	// Winners, when not empty, are drawn as a band under the X axis.
	Winners []Segment
	// Marks are drawn as dashed vertical lines with their labels.
	Marks []Mark
}

// Legend geometry under a chart, in SVG units.
const (
	legendX0   = 40.0
	legendColW = 220.0
	legendRowH = 22.0
)

// chartArea holds the scales of one chart.
type chartArea struct {
	x0, x1, y0, y1         float64 // plot rectangle
	xmin, xmax, ymin, ymax float64 // data range (log10 where the axis is log)
	ylog                   bool
	xu, yu                 Unit
}

func (c *chartArea) px(x float64) float64 {
	lx := math.Log10(math.Max(x, 1e-300))
	if c.xmax == c.xmin {
		return (c.x0 + c.x1) / 2
	}
	return c.x0 + (lx-c.xmin)/(c.xmax-c.xmin)*(c.x1-c.x0)
}

func (c *chartArea) py(y float64) float64 {
	v := y
	if c.ylog {
		v = math.Log10(math.Max(y, 1e-300))
	}
	if c.ymax == c.ymin {
		return (c.y0 + c.y1) / 2
	}
	return c.y1 - (v-c.ymin)/(c.ymax-c.ymin)*(c.y1-c.y0)
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Narrow layouts. A figure is drawn twice, at its full width and at
// NarrowWidth, and the stylesheet shows the one that fits its column (a
// container query on .pg-figure): fitted into a phone's ~360 px column, a
// 720-unit chart would shrink its 12.5-unit tick labels to about 6 px,
// while the narrow drawing keeps them at their size. Only one of the two is
// displayed (the other is display: none: neither laid out, painted nor
// exposed to assistive technology).
const (
	// NarrowWidth is the width, in SVG units, of the narrow drawings.
	NarrowWidth = 340.0
	// narrowXTicks bounds the size axis' labels on a narrow chart.
	narrowXTicks = 4
)

// chartLayout is the geometry of one drawing of a chart.
type chartLayout struct {
	w, h      float64
	x0        float64 // left edge of the plot: room for the Y tick labels
	legendX0  float64
	legendCol float64
	xTicks    int // most labels on the X axis
	narrow    bool
}

// TimeChart draws series against a logarithmic size axis: the predicted
// time (or bandwidth) of each algorithm and protocol, the winner band along
// the axis and the crossover sizes. Points that are not finite or not
// positive (on log axes) are skipped. It returns two SVG drawings, the
// full-width one (class pg-wide) and a narrow one for phones (pg-narrow).
func TimeChart(series []Series, opts ChartOptions) string {
	w, h := opts.Width, opts.Height
	if w <= 0 {
		w = 720
	}
	if h <= 0 {
		h = 400
	}
	wide := chartLayout{w: w, h: h, x0: 88, legendX0: legendX0, legendCol: legendColW, xTicks: 10}
	narrow := chartLayout{w: NarrowWidth, h: 330, x0: 58, legendX0: 12, legendCol: NarrowWidth - 24, xTicks: narrowXTicks, narrow: true}
	return timeChart(series, opts, wide) + timeChart(series, opts, narrow)
}

// timeChart draws one layout of a chart.
func timeChart(series []Series, opts ChartOptions, l chartLayout) string {
	w, h := l.w, l.h
	// The legend sits under the plot in columns, so that the plot keeps
	// the figure's width.
	named := 0
	for _, s := range series {
		if s.Name != "" {
			named++
		}
	}
	legendCols := max(1, int((w-l.legendX0)/l.legendCol))
	legendRows := (named + legendCols - 1) / legendCols
	c := &chartArea{x0: l.x0, x1: w - 20, y0: 40, y1: h - 64, ylog: opts.YLog, xu: opts.XUnit, yu: opts.YUnit}
	if l.narrow {
		// The Y axis' name goes above the plot, level, where the tick
		// labels leave no room for it turned beside them.
		c.y0 = 52
	}
	if len(opts.Winners) > 0 {
		c.y1 -= 26
	}
	// On a narrow chart the Y unit moves from every tick into the axis
	// label where the tick labels would not fit ("busbw (GB/s)").
	yLabel, yTick := opts.YLabel, opts.YUnit.format
	if l.narrow && opts.YUnit == UnitGBps {
		yLabel += " (GB/s)"
		yTick = sig3
	}
	xs, ys := []float64{}, []float64{}
	okY := func(v float64) bool { return finite(v) && (!opts.YLog || v > 0) }
	for _, s := range series {
		for i, p := range s.Points {
			if !finite(p.X) || p.X <= 0 {
				continue
			}
			xs = append(xs, p.X)
			if s.Kind == Band {
				if i < len(s.Lower) && okY(s.Lower[i]) {
					ys = append(ys, s.Lower[i])
				}
				if i < len(s.Upper) && okY(s.Upper[i]) {
					ys = append(ys, s.Upper[i])
				}
				continue
			}
			if okY(p.Y) {
				ys = append(ys, p.Y)
			}
		}
	}
	var b builder
	class := "pg-chart pg-wide"
	if l.narrow {
		class = "pg-chart pg-narrow"
	}
	b.openSVG(class, opts.Label, w, h+float64(legendRows)*legendRowH)
	if len(xs) == 0 || len(ys) == 0 {
		b.text(w/2, h/2, "pg-axis-label", "middle", "no data")
		b.s("</svg>")
		return b.String()
	}
	sort.Float64s(xs)
	sort.Float64s(ys)
	c.xmin, c.xmax = math.Log10(xs[0]), math.Log10(xs[len(xs)-1])
	if opts.YLog {
		c.ymin = math.Floor(math.Log10(ys[0]))
		c.ymax = math.Ceil(math.Log10(ys[len(ys)-1]))
		if c.ymax == c.ymin {
			c.ymax++
		}
	} else {
		lo, hi := math.Min(0, ys[0]), ys[len(ys)-1]
		step := niceStep((hi - lo) / 5)
		c.ymin, c.ymax = math.Floor(lo/step)*step, math.Ceil(hi/step)*step
		if c.ymax == c.ymin {
			c.ymax = c.ymin + 1
		}
	}

	// Grid and axes.
	b.s(`<g class="pg-grid" aria-hidden="true">`)
	for _, t := range xTicks(xs[0], xs[len(xs)-1], l.xTicks) {
		x := c.px(t)
		b.s(`<line`)
		b.fattr("x1", x)
		b.fattr("x2", x)
		b.fattr("y1", c.y0)
		b.fattr("y2", c.y1)
		b.s(`/>`)
		b.text(x, c.y1+16, "pg-tick", "middle", opts.XUnit.format(t))
	}
	for _, t := range yTicks(c) {
		y := c.py(t)
		b.s(`<line`)
		b.fattr("x1", c.x0)
		b.fattr("x2", c.x1)
		b.fattr("y1", y)
		b.fattr("y2", y)
		b.s(`/>`)
		b.text(c.x0-6, y+4, "pg-tick", "end", yTick(t))
	}
	b.s(`</g><rect class="pg-frame"`)
	b.fattr("x", c.x0)
	b.fattr("y", c.y0)
	b.fattr("width", c.x1-c.x0)
	b.fattr("height", c.y1-c.y0)
	b.s(`/>`)
	b.text((c.x0+c.x1)/2, h-12, "pg-axis-label", "middle", opts.XLabel)
	if l.narrow {
		b.text(4, 16, "pg-axis-label", "", yLabel)
	} else {
		b.s(`<text class="pg-axis-label" text-anchor="middle" transform="translate(16 `, num((c.y0+c.y1)/2), `) rotate(-90)">`, Escape(yLabel), `</text>`)
	}

	// Marks (crossovers).
	if len(opts.Marks) > 0 {
		b.s(`<g class="pg-marks">`)
		for i, m := range opts.Marks {
			if !finite(m.X) || m.X <= 0 {
				continue
			}
			x := c.px(m.X)
			if x < c.x0-0.5 || x > c.x1+0.5 {
				continue
			}
			b.s(`<g class="pg-mark"><title>`, Escape(m.Label), `</title><line`)
			b.fattr("x1", x)
			b.fattr("x2", x)
			b.fattr("y1", c.y0)
			b.fattr("y2", c.y1)
			b.s(`/>`)
			b.text(x, c.y0-6-float64(i%2)*12, "pg-mark-label", "middle", opts.XUnit.format(m.X))
			b.s(`</g>`)
		}
		b.s(`</g>`)
	}

	// Series: bands first, then lines, then markers on top.
	b.s(`<g class="pg-series">`)
	for _, kind := range []SeriesKind{Band, Line, Markers} {
		for _, s := range series {
			if s.Kind != kind {
				continue
			}
			c.drawSeries(&b, s, okY)
		}
	}
	b.s(`</g>`)

	if len(opts.Winners) > 0 {
		y := c.y1 + 24
		b.s(`<g class="pg-winners">`)
		b.text(c.x0-6, y+11, "pg-tick", "end", "winner")
		for _, seg := range opts.Winners {
			from := math.Max(c.px(seg.From), c.x0)
			to := math.Min(c.px(seg.To), c.x1)
			if !(to > from) {
				continue
			}
			b.s(`<g class="pg-win `, Escape(seg.Class), `" tabindex="0" role="img"`)
			desc := seg.Label + " from " + opts.XUnit.format(seg.From) + " to " + opts.XUnit.format(seg.To)
			b.attr("aria-label", desc)
			b.s(`>`)
			b.title(desc)
			b.s(`<rect`)
			b.fattr("x", from)
			b.fattr("y", y)
			b.fattr("width", to-from)
			b.s(` height="16"/>`)
			if to-from > 7*float64(len(seg.Label))+6 {
				b.text((from+to)/2, y+12, "pg-win-label", "middle", seg.Label)
			}
			b.s(`</g>`)
		}
		b.s(`</g>`)
	}

	// Legend, row by row under the axis label.
	b.s(`<g class="pg-chart-legend">`)
	k := 0
	for _, s := range series {
		if s.Name == "" {
			continue
		}
		lx := l.legendX0 + float64(k%legendCols)*l.legendCol
		y := h + 12 + float64(k/legendCols)*legendRowH
		k++
		b.s(`<g class="`, Escape(s.Class), `">`)
		switch s.Kind {
		case Markers:
			b.s(`<circle class="pg-marker"`)
			b.fattr("cx", lx+12)
			b.fattr("cy", y-4)
			b.s(` r="4"/>`)
		case Band:
			b.s(`<rect class="pg-band"`)
			b.fattr("x", lx)
			b.fattr("y", y-10)
			b.s(` width="24" height="12"/>`)
		default:
			b.s(`<line class="pg-line"`)
			b.fattr("x1", lx)
			b.fattr("x2", lx+24)
			b.fattr("y1", y-4)
			b.fattr("y2", y-4)
			b.s(`/>`)
		}
		b.text(lx+30, y, "pg-legend-text", "", clip(s.Name, 26))
		b.s(`</g>`)
	}
	b.s(`</g></svg>`)
	return b.String()
}

// drawSeries draws one series.
func (c *chartArea) drawSeries(b *builder, s Series, okY func(float64) bool) {
	b.s(`<g class="`, Escape(s.Class), `"`)
	b.attr("data-series", s.Name)
	switch s.Kind {
	case Band:
		b.s(` aria-hidden="true">`)
		var top, bot []string
		for i, p := range s.Points {
			if !finite(p.X) || p.X <= 0 || i >= len(s.Lower) || i >= len(s.Upper) {
				continue
			}
			// An unbounded side (NaN, infinite, or zero on a log axis)
			// reaches the edge of the plot.
			lo, hi := c.y1, c.y0
			if okY(s.Lower[i]) {
				lo = math.Min(c.y1, c.py(s.Lower[i]))
			}
			if okY(s.Upper[i]) {
				hi = math.Max(c.y0, c.py(s.Upper[i]))
			}
			if !okY(s.Lower[i]) && !okY(s.Upper[i]) {
				continue
			}
			x := num(c.px(p.X))
			top = append(top, x+","+num(hi))
			bot = append(bot, x+","+num(lo))
		}
		if len(top) > 1 {
			for i, j := 0, len(bot)-1; i < j; i, j = i+1, j-1 {
				bot[i], bot[j] = bot[j], bot[i]
			}
			b.s(`<polygon class="pg-band" points="`, strings.Join(top, " "), " ", strings.Join(bot, " "), `"/>`)
		}
	case Markers:
		b.s(` role="list"`)
		b.attr("aria-label", s.Name)
		b.s(`>`)
		for _, p := range s.Points {
			if !finite(p.X) || p.X <= 0 || !okY(p.Y) {
				continue
			}
			desc := p.Title
			if desc == "" {
				desc = s.Name + ": " + c.yu.format(p.Y) + " at " + c.xu.format(p.X)
			}
			if p.Href != "" {
				b.s(`<a role="listitem"`)
				b.attr("href", p.Href)
				b.attr("aria-label", desc)
				b.s(`>`)
			} else {
				b.s(`<g role="listitem" tabindex="0"`)
				b.attr("aria-label", desc)
				b.s(`>`)
			}
			b.title(desc)
			b.s(`<circle class="pg-marker"`)
			b.fattr("cx", c.px(p.X))
			b.fattr("cy", c.py(p.Y))
			b.s(` r="4"/>`)
			if p.Href != "" {
				b.s(`</a>`)
			} else {
				b.s(`</g>`)
			}
		}
	default:
		var first, last *Point
		var d strings.Builder
		for i := range s.Points {
			p := &s.Points[i]
			if !finite(p.X) || p.X <= 0 || !okY(p.Y) {
				continue
			}
			if first == nil {
				first = p
				d.WriteString("M")
			} else {
				d.WriteString("L")
			}
			last = p
			d.WriteString(num(c.px(p.X)) + "," + num(c.py(p.Y)))
		}
		desc := s.Name
		if first != nil {
			desc += ": " + c.yu.format(first.Y) + " at " + c.xu.format(first.X) + " to " + c.yu.format(last.Y) + " at " + c.xu.format(last.X)
		}
		b.s(` tabindex="0" role="img"`)
		b.attr("aria-label", desc)
		b.s(`>`)
		b.title(desc)
		if first != nil {
			b.s(`<path class="pg-line"`)
			b.attr("d", d.String())
			b.s(`/>`)
			for _, p := range s.Points {
				if p.Title == "" || !finite(p.X) || p.X <= 0 || !okY(p.Y) {
					continue
				}
				b.s(`<circle class="pg-dot"`)
				b.fattr("cx", c.px(p.X))
				b.fattr("cy", c.py(p.Y))
				b.s(` r="2.5">`)
				b.title(p.Title)
				b.s(`</circle>`)
			}
		}
	}
	b.s(`</g>`)
}

// niceStep rounds a raw step up to 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if raw <= 0 || !finite(raw) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

// xTicks returns powers of two between lo and hi, spaced so that at most
// most are drawn (ten when most is 0 or more).
func xTicks(lo, hi float64, most int) []float64 {
	if most <= 0 || most > 10 {
		most = 10
	}
	if !(lo > 0) || !(hi >= lo) {
		return nil
	}
	e0 := int(math.Ceil(math.Log2(lo) - 1e-9))
	e1 := int(math.Floor(math.Log2(hi) + 1e-9))
	step := 1
	for (e1-e0)/step > most-1 {
		step++
	}
	// Prefer steps that keep ticks on round binary units (1, 1 Ki, 1 Mi).
	for _, s := range []int{1, 2, 5, 10, 20} {
		if s >= step {
			step = s
			break
		}
	}
	var out []float64
	start := e0
	if r := ((e0 % step) + step) % step; r != 0 {
		start += step - r
	}
	for e := start; e <= e1; e += step {
		out = append(out, math.Ldexp(1, e))
	}
	return out
}

// yTicks returns tick values for the Y axis.
func yTicks(c *chartArea) []float64 {
	var out []float64
	if c.ylog {
		step := 1.0
		for (c.ymax-c.ymin)/step > 8 {
			step++
		}
		for e := c.ymin; e <= c.ymax+1e-9; e += step {
			out = append(out, math.Pow(10, e))
		}
		return out
	}
	step := niceStep((c.ymax - c.ymin) / 5)
	for v := c.ymin; v <= c.ymax+step/1e6; v += step {
		out = append(out, math.Round(v/step)*step)
	}
	return out
}

// SeriesClass returns the colour class of the i-th series, "pg-s0" … "pg-s11".
func SeriesClass(i int) string { return "pg-s" + strconv.Itoa(i%12) }
