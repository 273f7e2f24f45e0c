package figure

import (
	"math"
	"sort"
	"strconv"

	"github.com/distributed-nav/distributed-nav/playground/stepsim"
)

// TimelineOptions lays out a step timeline.
type TimelineOptions struct {
	// Label is the accessible name of the figure.
	Label string
	// SingleGPUMs, when positive, adds a lane with the step of one GPU (the
	// same compute with no communication) for comparison.
	SingleGPUMs float64
	// NGPUs names the lanes of the projected step.
	NGPUs int
	// Width of the SVG; zero means 880.
	Width float64
}

// maxFocusableSpans bounds the spans that get a keyboard stop; beyond it
// (a DDP step of a large model has hundreds of buckets) the spans keep
// their tooltips and the page lists them in a table instead.
const maxFocusableSpans = 60

// kindClass maps a span kind to a colour class.
func kindClass(kind string) string {
	switch kind {
	case stepsim.KindForward:
		return "pg-s0"
	case stepsim.KindBackward:
		return "pg-s4"
	case stepsim.KindOptimizer:
		return "pg-s6"
	case stepsim.KindAllReduce:
		return "pg-s1"
	case stepsim.KindAllGather:
		return "pg-s5"
	case stepsim.KindReduceScatter:
		return "pg-s2"
	}
	return "pg-s3"
}

// MaxSpansPerLane bounds the spans Timeline draws on one lane: about two
// pixels each across the default width. A longer lane is drawn from
// stepsim.Timeline.Summary (its first and last spans, the middle as one).
const MaxSpansPerLane = 300

// Timeline draws a training step as lanes of spans against time (ms): the
// compute lane, the communication lane (collectives, with the part the
// compute lane waits for hatched as exposed) and, when
// opts.SingleGPUMs is set, the step of one GPU for comparison. Like
// TimeChart it returns a full-width drawing (pg-wide) and a narrow one for
// phones (pg-narrow), whose lane names sit above the lanes.
func Timeline(tl stepsim.Timeline, opts TimelineOptions) string {
	if len(tl.Spans) > 2*MaxSpansPerLane {
		tl = tl.Summary(MaxSpansPerLane)
	}
	w := opts.Width
	if w <= 0 {
		w = 880
	}
	return timeline(tl, opts, w, false) + timeline(tl, opts, NarrowWidth, true)
}

// timeline draws one layout of a step timeline.
func timeline(tl stepsim.Timeline, opts TimelineOptions, w float64, narrow bool) string {
	laneH, gap, x0, top := 30.0, 14.0, 150.0, 16.0
	x1 := w - 20
	if narrow {
		// The lane names go above their lanes, so the lanes get the width.
		gap, x0, top, x1 = 30, 22, 32, w-30
	}
	lanes := []string{stepsim.LaneCompute, stepsim.LaneComm}
	names := map[string]string{stepsim.LaneCompute: "compute", stepsim.LaneComm: "communication"}
	if opts.NGPUs > 0 {
		g := strconv.Itoa(opts.NGPUs) + " GPUs: "
		names[stepsim.LaneCompute] = g + "compute"
		names[stepsim.LaneComm] = g + "comm"
	}
	single := opts.SingleGPUMs > 0
	nl := len(lanes)
	if single {
		nl++
	}
	legend := legendEntries(tl, single)
	legendX, legendMax := x0, w-12
	if narrow {
		legendX = 12
	}
	legendY := top + float64(nl)*(laneH+gap) + 40
	if narrow {
		legendY -= gap - 14
	}
	h := legendY + 22*float64(legendRows(legend, legendX, legendMax))
	end := math.Max(tl.StepMs, opts.SingleGPUMs)
	for _, s := range tl.Spans {
		end = math.Max(end, s.EndMs)
	}
	if !(end > 0) {
		end = 1
	}
	px := func(ms float64) float64 { return x0 + ms/end*(x1-x0) }
	var b builder
	class := "pg-chart pg-timeline pg-wide"
	ticks := 8.0
	if narrow {
		class, ticks = "pg-chart pg-timeline pg-narrow", 4
	}
	b.openSVG(class, opts.Label, w, h)

	// Time axis.
	step := niceStep(end / ticks)
	axisY := top + float64(nl)*(laneH+gap)
	if narrow {
		axisY -= gap - 14
	}
	b.s(`<g class="pg-grid" aria-hidden="true">`)
	for t := 0.0; t <= end+step/1e6; t += step {
		x := px(t)
		b.s(`<line`)
		b.fattr("x1", x)
		b.fattr("x2", x)
		b.fattr("y1", top-4)
		b.fattr("y2", axisY)
		b.s(`/>`)
		b.text(x, axisY+14, "pg-tick", "middle", Short(t, 2)+" ms")
	}
	b.s(`</g>`)

	focusable := len(tl.Spans) <= maxFocusableSpans
	laneY := func(i int) float64 { return top + float64(i)*(laneH+gap) }
	li := 0
	if single {
		y := laneY(0)
		laneLabel(&b, narrow, x0, y, laneH, "1 GPU")
		desc := "one GPU: the same compute with no communication, " + Short(opts.SingleGPUMs, 2) + " ms"
		b.s(`<g class="pg-bar pg-s3" tabindex="0" role="img"`)
		b.attr("aria-label", desc)
		b.s(`>`)
		b.title(desc)
		b.s(`<rect`)
		b.fattr("x", px(0))
		b.fattr("y", y)
		b.fattr("width", px(opts.SingleGPUMs)-px(0))
		b.fattr("height", laneH)
		b.s(`/>`)
		// The step's length, inside the bar when it fits, else after it.
		label := "step " + Short(opts.SingleGPUMs, 2) + " ms"
		textW := 7*float64(len(label)) + 8
		if lx := px(0) + 4; px(opts.SingleGPUMs)-px(0) > textW || px(opts.SingleGPUMs)+textW > w {
			b.text(lx, y+laneH/2+4, "", "", label)
		} else {
			b.text(px(opts.SingleGPUMs)+4, y+laneH/2+4, "", "", label)
		}
		b.s(`</g>`)
		li = 1
	}
	var compute []stepsim.Span
	for _, s := range tl.Spans {
		if s.Lane == stepsim.LaneCompute {
			compute = append(compute, s)
		}
	}
	for k, lane := range lanes {
		y := laneY(li + k)
		laneLabel(&b, narrow, x0, y, laneH, names[lane])
		b.s(`<g class="pg-lane" role="list"`)
		b.attr("aria-label", names[lane])
		b.s(`>`)
		for _, s := range tl.Spans {
			if s.Lane != lane {
				continue
			}
			desc := s.Label + ": " + s.Kind + " from " + Short(s.StartMs, 3) + " to " + Short(s.EndMs, 3) + " ms"
			if s.Bytes > 0 {
				desc += ", " + Bytes(float64(s.Bytes))
			}
			if s.Algo != "" {
				desc += ", " + s.Algo + "/" + s.Proto
			}
			if s.ExposedMs > 0 {
				desc += ", " + Short(s.ExposedMs, 3) + " ms exposed"
			}
			b.s(`<g role="listitem" class="pg-bar `, kindClass(s.Kind), `"`)
			if focusable {
				b.s(` tabindex="0"`)
			}
			b.attr("aria-label", desc)
			b.s(`>`)
			b.title(desc)
			xa, xb := px(s.StartMs), px(s.EndMs)
			b.s(`<rect`)
			b.fattr("x", xa)
			b.fattr("y", y)
			b.fattr("width", math.Max(xb-xa, 0.8))
			b.fattr("height", laneH)
			b.s(`/>`)
			if lane == stepsim.LaneComm && s.ExposedMs > 0 {
				for _, iv := range uncovered(s, compute) {
					b.s(`<rect class="pg-exposed"`)
					b.fattr("x", px(iv[0]))
					b.fattr("y", y+laneH-8)
					b.fattr("width", math.Max(px(iv[1])-px(iv[0]), 0.8))
					b.s(` height="8"/>`)
				}
			}
			if xb-xa > 7*float64(len(s.Label))+8 {
				b.text((xa+xb)/2, y+laneH/2+4, "", "middle", s.Label)
			}
			b.s(`</g>`)
		}
		b.s(`</g>`)
	}
	timelineLegend(&b, legend, legendX, legendY, legendMax)
	b.s(`</svg>`)
	return b.String()
}

// laneLabel names a lane: left of it, or above it on a narrow drawing.
func laneLabel(b *builder, narrow bool, x0, y, laneH float64, name string) {
	if narrow {
		b.text(x0, y-6, "pg-lane-label", "", name)
		return
	}
	b.text(x0-8, y+laneH/2+4, "pg-lane-label", "end", name)
}

// kindOrder lists span kinds in the order the legend shows them.
var kindOrder = []string{stepsim.KindForward, stepsim.KindBackward, stepsim.KindOptimizer,
	stepsim.KindAllReduce, stepsim.KindAllGather, stepsim.KindReduceScatter}

// legendEntry is one swatch of a timeline's legend.
type legendEntry struct{ class, text string }

// legendEntries lists a swatch per span kind the timeline holds, the
// exposed-communication mark when a span has some (class ""), and the
// one-GPU bar.
func legendEntries(tl stepsim.Timeline, single bool) []legendEntry {
	present := map[string]bool{}
	exposed := false
	for _, s := range tl.Spans {
		present[s.Kind] = true
		exposed = exposed || s.ExposedMs > 0
	}
	var es []legendEntry
	if single {
		es = append(es, legendEntry{"pg-s3", "one GPU"})
	}
	for _, k := range kindOrder {
		if present[k] {
			es = append(es, legendEntry{kindClass(k), k})
			delete(present, k)
		}
	}
	var other []string
	for k := range present {
		other = append(other, k)
	}
	sort.Strings(other)
	for _, k := range other {
		es = append(es, legendEntry{kindClass(k), k})
	}
	if exposed {
		es = append(es, legendEntry{"", "exposed: compute waits for it"})
	}
	return es
}

// legendWidth is the room an entry takes on its row.
func legendWidth(e legendEntry) float64 { return 18 + 7*float64(len(e.text)) + 18 }

// legendRows counts the rows the entries take from x, wrapping at maxX.
func legendRows(es []legendEntry, x, maxX float64) int {
	rows, at := 1, x
	for _, e := range es {
		if at > x && at+legendWidth(e)-18 > maxX {
			rows++
			at = x
		}
		at += legendWidth(e)
	}
	return rows
}

// timelineLegend writes the entries in rows from (x, y), wrapping at maxX
// as legendRows counts.
func timelineLegend(b *builder, es []legendEntry, x, y, maxX float64) {
	b.s(`<g class="pg-chart-legend" aria-hidden="true">`)
	at := x
	for _, e := range es {
		if at > x && at+legendWidth(e)-18 > maxX {
			at = x
			y += 22
		}
		if e.class == "" {
			b.s(`<rect class="pg-exposed pg-key"`)
			b.fattr("x", at)
			b.fattr("y", y-6)
			b.s(` width="14" height="8"/>`)
		} else {
			b.s(`<g class="pg-bar `, e.class, `"><rect`)
			b.fattr("x", at)
			b.fattr("y", y-10)
			b.s(` width="14" height="12"/></g>`)
		}
		b.text(at+18, y, "pg-legend-text", "", e.text)
		at += legendWidth(e)
	}
	b.s(`</g>`)
}

// uncovered returns the parts of span s during which no compute span runs
// (compute sorted by start, without overlaps).
func uncovered(s stepsim.Span, compute []stepsim.Span) [][2]float64 {
	var out [][2]float64
	at := s.StartMs
	for _, c := range compute {
		if c.EndMs <= at {
			continue
		}
		if c.StartMs >= s.EndMs {
			break
		}
		if c.StartMs > at {
			out = append(out, [2]float64{at, math.Min(c.StartMs, s.EndMs)})
		}
		at = math.Max(at, c.EndMs)
		if at >= s.EndMs {
			return out
		}
	}
	if at < s.EndMs {
		out = append(out, [2]float64{at, s.EndMs})
	}
	return out
}
