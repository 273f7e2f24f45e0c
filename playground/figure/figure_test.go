package figure

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/model"
	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
	"github.com/distributed-nav/distributed-nav/playground/presets"
	"github.com/distributed-nav/distributed-nav/playground/stepsim"
	"github.com/distributed-nav/distributed-nav/playground/topo"
	"github.com/distributed-nav/distributed-nav/playground/topo/topotest"
)

func build(t *testing.T, name string, nodes int, xmlText string) *model.Result {
	t.Helper()
	var sys *topo.System
	var err error
	if xmlText != "" {
		sys, _, err = topo.ParseXML(strings.NewReader(xmlText))
	} else {
		var p presets.Preset
		p, err = presets.Get(name)
		if err == nil {
			sys, _, err = p.System()
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	res, err := model.Build(context.Background(), sys, nodes, ncclenv.Env{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// wellFormed parses s as XML (SVG and our HTML fragments are XHTML-clean).
func wellFormed(t *testing.T, s string) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader("<root>" + strings.ReplaceAll(s, "<br>", "<br/>") + "</root>"))
	d.Strict = true
	for {
		_, err := d.Token()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("not well-formed: %v\n%.300s", err, s)
		}
	}
}

func TestTopologyAllPresets(t *testing.T) {
	list, err := presets.List()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range list {
		t.Run(p.Name, func(t *testing.T) {
			res := build(t, p.Name, 1, "")
			svg := Topology(res, TopologyOptions{Graph: "ring", Channel: -1})
			wellFormed(t, svg)
			// One focusable box per GPU, each named in its label.
			gpus := res.System.Count(topo.GPU)
			if got := strings.Count(svg, `class="pg-node pg-n-gpu"`); got != gpus {
				t.Errorf("%d GPU boxes, want %d", got, gpus)
			}
			// Every drawn ring channel appears.
			if got, want := strings.Count(svg, `data-channel=`), len(res.Search.Ring.Channels); got != want {
				t.Errorf("%d channels drawn, want %d", got, want)
			}
			if again := Topology(res, TopologyOptions{Graph: "ring", Channel: -1}); again != svg {
				t.Error("two renderings of the same input differ")
			}
			m, err := PathMatrix(res)
			if err != nil {
				t.Fatal(err)
			}
			wellFormed(t, m)
			if got, want := strings.Count(m, `data-to=`), gpus*(gpus-1); got != want {
				t.Errorf("%d GPU pair cells, want %d", got, want)
			}
		})
	}
}

// TestTopologyLinks checks tooltips against the system's own links on a
// preset whose numbers are known: the A100 preset has 12 NVLinks of
// 20 GB/s per GPU to the NVSwitch (topo.h SM80_NVLINK_BW = 20), 240 GB/s.
func TestTopologyLinks(t *testing.T) {
	res := build(t, "a100-sxm-8x", 1, "")
	svg := Topology(res, TopologyOptions{})
	if n := strings.Count(svg, `aria-label="NVLink link GPU`); n != 8 {
		t.Errorf("%d GPU-NVSwitch links, want 8", n)
	}
	if !strings.Contains(svg, "NVLink link GPU0 – NVSwitch, 240 GB/s") {
		t.Errorf("missing the GPU0 NVLink tooltip")
	}
	if !strings.Contains(svg, "inter-CPU (SYS) link CPU0 – CPU1") {
		t.Errorf("missing the SYS link")
	}
	if strings.Contains(svg, "data-channel") {
		t.Errorf("channels drawn without a graph")
	}
}

func TestTopologyEscapesNames(t *testing.T) {
	p, err := presets.Get("a100-sxm-8x")
	if err != nil {
		t.Fatal(err)
	}
	evil := strings.Replace(string(p.XML()), `name="mlx5_0"`, `name="&lt;script&gt;x&lt;/script&gt;"`, 1)
	res := build(t, "", 1, evil)
	svg := Topology(res, TopologyOptions{Graph: "tree"})
	m, _ := PathMatrix(res)
	for _, s := range []string{svg, m} {
		if strings.Contains(s, "<script") {
			t.Fatal("raw markup from the XML reached the output")
		}
		wellFormed(t, s)
	}
	if !strings.Contains(svg, "&lt;script&gt;") {
		t.Error("escaped name missing")
	}
}

func TestMultiNodeChannelsUseNICs(t *testing.T) {
	res := build(t, "h100-8x-ib", 2, "")
	svg := Topology(res, TopologyOptions{Graph: "ring", Channel: 0})
	if !strings.Contains(svg, "Ring channel 0 of") || !strings.Contains(svg, "NET") {
		t.Errorf("inter-node ring channel 0 not described with its NICs")
	}
	if strings.Count(svg, "data-channel=") != 1 {
		t.Errorf("want exactly channel 0")
	}
}

func TestTimeChart(t *testing.T) {
	s := []Series{
		{Name: "Ring/LL", Class: "pg-s1", Points: []Point{{X: 8, Y: 10}, {X: 1 << 20, Y: 100, Title: "a <formula>"}, {X: 1 << 30, Y: -1}}},
		{Name: "meas", Class: "pg-s2", Kind: Markers, Points: []Point{{X: 1024, Y: 20, Href: "https://example.com/?a=1&b=2"}}},
		{Name: "band", Class: "pg-s3", Kind: Band, Points: []Point{{X: 8}, {X: 1 << 20}}, Lower: []float64{5, 50}, Upper: []float64{15, 150}},
	}
	opts := ChartOptions{Label: "t", XUnit: UnitBytes, YUnit: UnitMicros, YLog: true,
		Winners: []Segment{{From: 8, To: 1 << 10, Label: "Ring/LL", Class: "pg-s1"}, {From: 1 << 10, To: 1 << 20, Label: "Ring/Simple", Class: "pg-s2"}},
		Marks:   []Mark{{X: 1 << 10, Label: "x"}}}
	svg := TimeChart(s, opts)
	wellFormed(t, svg)
	for _, want := range []string{"a &lt;formula&gt;", "https://example.com/?a=1&amp;b=2", `class="pg-band"`, "1 KiB", `data-series="Ring/LL"`} {
		if !strings.Contains(svg, want) {
			t.Errorf("chart lacks %q", want)
		}
	}
	if TimeChart(s, opts) != svg {
		t.Error("not deterministic")
	}
	if !strings.Contains(TimeChart(nil, opts), "no data") {
		t.Error("empty chart should say so")
	}
}

func TestFormatters(t *testing.T) {
	tests := []struct{ got, want string }{
		{Bytes(8), "8 B"}, {Bytes(1024), "1 KiB"}, {Bytes(1536), "1.5 KiB"}, {Bytes(8 << 30), "8 GiB"},
		{Duration(0.5), "500 ns"}, {Duration(12.5), "12.5 µs"}, {Duration(3200), "3.2 ms"}, {Duration(1.05e6), "1.05 s"},
		{Short(24, 1), "24"}, {Short(20.6, 1), "20.6"}, {Fixed(1.005, 1), "1.0"},
		{Escape(`<a href="x">&'`), "&lt;a href=&#34;x&#34;&gt;&amp;&#39;"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestTableEscapes(t *testing.T) {
	h := Table(TableSpec{Caption: "c<", Head: []string{"a&b"}, Rows: []Row{{Cells: []Cell{{Text: "<x>", Value: "1\""}}, Formula: []string{"f<"}}}})
	wellFormed(t, h)
	if !bytes.Contains([]byte(h), []byte("&lt;x&gt;")) || !strings.Contains(h, `data-v="1&#34;"`) || !strings.Contains(h, "<details") {
		t.Errorf("table: %s", h)
	}
}

func TestTimeline(t *testing.T) {
	tl := stepsim.Timeline{StepMs: 10, Spans: []stepsim.Span{
		{Lane: stepsim.LaneCompute, Kind: stepsim.KindBackward, Label: "backward", StartMs: 0, EndMs: 6},
		{Lane: stepsim.LaneCompute, Kind: stepsim.KindOptimizer, Label: "opt", StartMs: 8, EndMs: 10},
		{Lane: stepsim.LaneComm, Kind: stepsim.KindAllReduce, Label: "<b0>", StartMs: 4, EndMs: 9, Bytes: 1 << 20, Algo: "Ring", Proto: "Simple", ExposedMs: 2},
	}}
	both := Timeline(tl, TimelineOptions{Label: "t", SingleGPUMs: 8, NGPUs: 8})
	wellFormed(t, both)
	drawings := svgs(both)
	if len(drawings) != 2 || !strings.Contains(drawings[0], "pg-wide") || !strings.Contains(drawings[1], "pg-narrow") {
		t.Fatalf("want a wide and a narrow drawing, got %d", len(drawings))
	}
	for _, svg := range drawings {
		checkTimeline(t, svg)
	}
	// The allreduce runs 4-9 ms, compute covers 4-6 and 8-9: uncovered 6-8.
	if got := uncovered(tl.Spans[2], tl.Spans[:2]); len(got) != 1 || got[0] != [2]float64{6, 8} {
		t.Errorf("uncovered = %v", got)
	}
}

// svgText is one text element of a drawing.
type svgText struct {
	x, y   float64
	anchor string
	class  string
	text   string
}

// drawingTexts returns a drawing's viewBox width and its unrotated texts.
func drawingTexts(t *testing.T, svg string) (float64, []svgText) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(svg))
	var w float64
	var out []svgText
	var cur *svgText
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return w, out
		}
		if err != nil {
			t.Fatal(err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			attr := map[string]string{}
			for _, a := range e.Attr {
				attr[a.Name.Local] = a.Value
			}
			if e.Name.Local == "svg" {
				fmt.Sscanf(attr["viewBox"], "0 0 %g", &w)
			}
			if e.Name.Local == "text" && attr["transform"] == "" {
				cur = &svgText{anchor: attr["text-anchor"], class: attr["class"]}
				fmt.Sscanf(attr["x"], "%g", &cur.x)
				fmt.Sscanf(attr["y"], "%g", &cur.y)
			}
		case xml.CharData:
			if cur != nil {
				cur.text += string(e)
			}
		case xml.EndElement:
			if e.Name.Local == "text" && cur != nil {
				out = append(out, *cur)
				cur = nil
			}
		}
	}
}

// fontSize is the stylesheet's size (SVG units) of a text class
// (site/assets/css/playground.css); unclassed text in bars is 10.
func fontSize(class string) float64 {
	for _, c := range []struct {
		class string
		size  float64
	}{{"pg-tick", 12.5}, {"pg-axis-label", 13.5}, {"pg-legend-text", 13.5}, {"pg-mark-label", 11.5}, {"pg-win-label", 11.5}, {"pg-lane-label", 12}} {
		if strings.Contains(class, c.class) {
			return c.size
		}
	}
	return 10
}

// The narrow drawings (for a phone's ~360 px column) keep every label
// inside the drawing and the size axis' labels apart, estimating a
// label's width at 0.62 of its font size per character (system-ui digits
// and lower case are narrower; bold lane labels about that wide).
func TestNarrowDrawingsFit(t *testing.T) {
	var bw, model Series
	bw = Series{Name: "calibrated", Class: "pg-s1"}
	model = Series{Name: "NCCL model", Class: "pg-s2"}
	for e := 3; e <= 33; e++ {
		x := float64(uint64(1) << e)
		bw.Points = append(bw.Points, Point{X: x, Y: 0.0001 * float64(e*e)})
		model.Points = append(model.Points, Point{X: x, Y: 0.0002 * float64(e*e)})
	}
	chart := TimeChart([]Series{bw, model}, ChartOptions{Label: "c", XLabel: "message size", YLabel: "busbw", XUnit: UnitBytes, YUnit: UnitGBps, YLog: true,
		Marks: []Mark{{X: 1 << 16, Label: "x"}}})
	tl := stepsim.Timeline{StepMs: 3200}
	for i := 0; i < 12; i++ {
		tl.Spans = append(tl.Spans, stepsim.Span{Lane: stepsim.LaneComm, Kind: stepsim.KindAllReduce, Label: "bucket " + Itoa(i), StartMs: float64(200 + 250*i), EndMs: float64(400 + 250*i), ExposedMs: 10})
		tl.Spans = append(tl.Spans, stepsim.Span{Lane: stepsim.LaneCompute, Kind: stepsim.KindBackward, Label: "backward", StartMs: float64(250 * i), EndMs: float64(250*i + 240)})
	}
	timeline := Timeline(tl, TimelineOptions{Label: "t", SingleGPUMs: 2900, NGPUs: 8})
	for name, fig := range map[string]string{"chart": chart, "timeline": timeline} {
		d := svgs(fig)
		if len(d) != 2 || !strings.Contains(d[1], `class="pg-chart`) || !strings.Contains(d[1], "pg-narrow") {
			t.Fatalf("%s: no narrow drawing", name)
		}
		w, texts := drawingTexts(t, d[1])
		if w != NarrowWidth {
			t.Errorf("%s: narrow drawing %g units wide, want %g", name, w, NarrowWidth)
		}
		var xTicks []svgText
		for _, tx := range texts {
			half := 0.62 * fontSize(tx.class) * float64(len([]rune(tx.text)))
			lo, hi := tx.x-half/2, tx.x+half/2
			switch tx.anchor {
			case "end":
				lo, hi = tx.x-half, tx.x
			case "":
				lo, hi = tx.x, tx.x+half
			}
			if lo < 0 || hi > w {
				t.Errorf("%s: label %q spans %.0f-%.0f, outside the %g-unit drawing", name, tx.text, lo, hi, w)
			}
			if strings.Contains(tx.class, "pg-tick") && tx.anchor == "middle" {
				xTicks = append(xTicks, tx)
			}
		}
		if len(xTicks) < 2 {
			t.Errorf("%s: %d labels on the horizontal axis", name, len(xTicks))
		}
		for i := 1; i < len(xTicks); i++ {
			a, b := xTicks[i-1], xTicks[i]
			room := 0.62 * 12.5 * float64(len([]rune(a.text))+len([]rune(b.text))) / 2
			if b.y == a.y && b.x-a.x < room+6 {
				t.Errorf("%s: axis labels %q and %q are %.0f units apart, they need %.0f", name, a.text, b.text, b.x-a.x, room+6)
			}
		}
	}
}

// svgs splits a figure into its SVG drawings.
func svgs(s string) []string {
	var out []string
	for _, part := range strings.SplitAfter(s, "</svg>") {
		if strings.TrimSpace(part) != "" {
			out = append(out, part)
		}
	}
	return out
}

func checkTimeline(t *testing.T, svg string) {
	t.Helper()
	if n := strings.Count(svg, `class="pg-exposed"`); n != 1 {
		t.Errorf("%d exposed marks, want 1 (6 to 8 ms)", n)
	}
	if !strings.Contains(svg, "&lt;b0&gt;: allreduce from 4 to 9 ms, 1 MiB, Ring/Simple, 2 ms exposed") {
		t.Errorf("span description missing")
	}
	if !strings.Contains(svg, "one GPU") || strings.Count(svg, `tabindex="0"`) != 4 {
		t.Errorf("want the one-GPU bar and 4 focusable bars")
	}
	// The legend names each kind drawn and the exposed mark, nothing else.
	legend := svg[strings.Index(svg, `<g class="pg-chart-legend"`):]
	for _, want := range []string{">one GPU<", ">backward<", ">optimizer<", ">allreduce<", "exposed: compute waits for it"} {
		if !strings.Contains(legend, want) {
			t.Errorf("legend lacks %q", want)
		}
	}
	if strings.Contains(legend, ">forward<") || strings.Contains(legend, ">allgather<") {
		t.Error("legend lists a kind the timeline does not hold")
	}
}

// manyGPUs returns a host of n GPUs, eight under each PCIe switch.
func manyGPUs(n int) string {
	var b strings.Builder
	b.WriteString(`<system version="1"><cpu numaid="0" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">`)
	for s := 0; s*8 < n; s++ {
		fmt.Fprintf(&b, `<pci busid="0000:%02x:00.0" class="0x060400" link_speed="32.0 GT/s PCIe" link_width="16">`, s+1)
		for g := s * 8; g < min(n, s*8+8); g++ {
			fmt.Fprintf(&b, `<pci busid="%04x:01:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16"><gpu dev="%d" sm="90" rank="%d" gdr="1"/></pci>`, 0x100+g, g, g)
		}
		b.WriteString(`</pci>`)
	}
	b.WriteString(`</cpu></system>`)
	return b.String()
}

// analyzedHost parses and analyses manyGPUs(n).
func analyzedHost(tb testing.TB, n int) *topo.Analysis {
	tb.Helper()
	sys, _, err := topo.ParseXML(strings.NewReader(manyGPUs(n)))
	if err != nil {
		tb.Fatal(err)
	}
	a, err := topo.Analyze(sys, ncclenv.Env{})
	if err != nil {
		tb.Fatal(err)
	}
	return a
}

// TestPathMatrixSummarisesLargeHosts: beyond MaxMatrixCells cells the
// matrix becomes one row per pair class: for 96 GPUs under 12 switches of
// 8, a handful of rows whose counts add up to 96 × 95 pairs, no n × n
// cells.
func TestPathMatrixSummarisesLargeHosts(t *testing.T) {
	a := analyzedHost(t, 96)
	html, err := PathMatrix(&model.Result{Analysis: a})
	if err != nil {
		t.Fatal(err)
	}
	wellFormed(t, html)
	if rows := strings.Count(html, "<tr>"); rows > 10 {
		t.Errorf("%d rows for a summary", rows)
	}
	if !strings.Contains(html, "9120 ordered pairs") {
		t.Errorf("caption does not count 96 × 95 pairs: %.300s", html)
	}
	total := 0
	for _, c := range topo.SummarizePairs(mustPairs(t, a)) {
		total += c.Count
	}
	if total != 96*95 {
		t.Errorf("classes hold %d pairs, want %d", total, 96*95)
	}
}

// TestPathMatrixCellBound: the matrix is drawn cell by cell exactly up to
// MaxMatrixCells (32 GPUs without NICs: 32 × 32 cells, one <td> each);
// 33 GPUs (33 × 33 = 1,089 cells) are summarised in a few rows.
func TestPathMatrixCellBound(t *testing.T) {
	for _, tt := range []struct {
		gpus     int
		summary  bool
		minCells int
	}{{32, false, 32 * 32}, {33, true, 0}} {
		html, err := PathMatrix(&model.Result{Analysis: analyzedHost(t, tt.gpus)})
		if err != nil {
			t.Fatal(err)
		}
		wellFormed(t, html)
		if got := strings.Contains(html, "pg-matrix-summary"); got != tt.summary {
			t.Errorf("%d GPUs: summary %v, want %v", tt.gpus, got, tt.summary)
		}
		if tds := strings.Count(html, "<td"); tds < tt.minCells || (tt.summary && tds > 60) {
			t.Errorf("%d GPUs: %d cells", tt.gpus, tds)
		}
	}
}

func mustPairs(t *testing.T, a *topo.Analysis) []topo.GPUPair {
	t.Helper()
	p, err := a.Paths.GPUPairs()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// BenchmarkBoundedFigures draws the two figures whose size follows the
// input: the pair summary of a 512-GPU host and a timeline of 8,193 spans
// (drawn summarised).
func BenchmarkBoundedFigures(b *testing.B) {
	a := analyzedHost(b, 512)
	b.Run("pair-summary-512-gpus", func(b *testing.B) {
		for b.Loop() {
			if _, err := PathMatrix(&model.Result{Analysis: a}); err != nil {
				b.Fatal(err)
			}
		}
	})
	var tl stepsim.Timeline
	for i := range 8193 {
		lane := stepsim.LaneComm
		if i%2 == 0 {
			lane = stepsim.LaneCompute
		}
		tl.Spans = append(tl.Spans, stepsim.Span{Lane: lane, Kind: stepsim.KindAllReduce, Label: "s", StartMs: float64(i), EndMs: float64(i) + 1})
	}
	tl.StepMs = 8194
	b.Run("timeline-8193-spans", func(b *testing.B) {
		for b.Loop() {
			Timeline(tl, TimelineOptions{Label: "x"})
		}
	})
}

// On an NVSwitch system every physical hop runs through the switch box; the
// circle view beside it must draw one arrow per hop of the ring between
// GPUs, and number the GPUs in the channel's rank order.
func TestRingCircleFollowsChannelOrder(t *testing.T) {
	res := build(t, "h100-sxm-8x", 1, "")
	ring := res.Search.Ring
	if ring == nil || len(ring.Channels) == 0 {
		t.Fatal("no ring searched")
	}
	svg := Topology(res, TopologyOptions{Graph: "ring", Channel: 0})
	wellFormed(t, svg)
	i := strings.Index(svg, `<g class="pg-ring"`)
	if i < 0 {
		t.Fatal("no circle view")
	}
	view := svg[i:]
	ch := ring.Channels[0]
	// A closed ring of n GPUs has n hops, each drawn with an arrow.
	if got, want := strings.Count(view, `marker-end=`), len(ch.GPUs); got != want {
		t.Errorf("%d arrows in the circle view, want %d (one per hop of the ring)", got, want)
	}
	if got := strings.Count(view, `class="pg-rnode pg-n-gpu"`); got != res.System.Count(topo.GPU) {
		t.Errorf("%d GPUs on the circle, want %d", got, res.System.Count(topo.GPU))
	}
	// The badge of the k-th GPU of the ring says k: the first GPU of the
	// channel carries 1, the last carries n.
	for _, k := range []int{1, len(ch.GPUs)} {
		if !strings.Contains(view, `<g class="pg-ring-step">`) || !strings.Contains(view, `>`+Itoa(k)+`</text></g>`) {
			t.Errorf("no order badge %d", k)
		}
	}
	// Every channel drawn at once: no badges (the orders differ), one group
	// per channel.
	all := Topology(res, TopologyOptions{Graph: "ring", Channel: -1})
	if got, want := strings.Count(all, `data-ring-channel=`), len(ring.Channels); got != want {
		t.Errorf("%d channels on the circle, want %d", got, want)
	}
	if strings.Contains(all, "pg-ring-step") {
		t.Error("order badges drawn for several channels at once")
	}
	// Channels run under the boxes: the physical view's channel group comes
	// before its nodes.
	if strings.Index(svg, `<g class="pg-channels">`) > strings.Index(svg, `<g class="pg-nodes">`) {
		t.Error("channels drawn over the device boxes")
	}
	if strings.Contains(Topology(res, TopologyOptions{}), "pg-ring") {
		t.Error("circle view drawn without a graph")
	}
}

// CPUList reads the masks of the presets' <cpu affinity=...> the way
// nvidia-smi topo -m prints CPU affinity: words are 32 bits, the last word
// holds CPUs 0-31.
func TestCPUList(t *testing.T) {
	tests := []struct{ mask, want string }{
		{"ffffffff,ffffffff,00000000,00000000,ffffffff,ffffffff", "0-63,128-191"},
		{"00000000,ffffffff", "0-31"},
		{"0000000f", "0-3"},
		{"00000005", "0,2"},
		{"80000000,00000001", "0,63"},
		{"", "–"},
		{"00000000", "–"},
		{"zz", "zz"},
	}
	for _, tt := range tests {
		if got := CPUList(tt.mask); got != tt.want {
			t.Errorf("CPUList(%q) = %q, want %q", tt.mask, got, tt.want)
		}
	}
}

// The matrix reads like nvidia-smi topo -m: one path label per cell, the
// details in the cell's tooltip, and the CPU and NUMA affinity of each GPU.
// a100-sxm-8x: GPUs 0-3 on NUMA 0, 4-7 on NUMA 1 (data/topologies).
func TestPathMatrixAffinity(t *testing.T) {
	res := build(t, "a100-sxm-8x", 1, "")
	m, err := PathMatrix(res)
	if err != nil {
		t.Fatal(err)
	}
	wellFormed(t, m)
	for _, want := range []string{"CPU affinity", "NUMA affinity", `<td class="pg-aff">0-63,128-191</td><td class="pg-aff">0</td>`} {
		if !strings.Contains(m, want) {
			t.Errorf("matrix lacks %q", want)
		}
	}
	rows := strings.Split(m, "<tr>")
	last := rows[len(rows)-1]
	if !strings.Contains(last, `<td class="pg-aff">1</td>`) {
		t.Errorf("GPU7's NUMA affinity is not 1: %.200s", last)
	}
	if !strings.Contains(m, `data-transport="P2P" data-bw="240">NVL</td>`) {
		t.Errorf("GPU pair cells should carry the short label only")
	}
	if strings.Contains(m, "<small>P2P") {
		t.Error("the transport is printed in the cell; it belongs to the tooltip")
	}
}

// TestTopologyDenseLinks: a 72-GPU NVLink all-to-all mesh has 72 × 71 / 2
// = 2,556 GPU links, past MaxLabelledLinks, so each is one bare <path>
// (about 7 elements a link otherwise: 19,000 for the figure); 8 GPUs on
// PCIe keep their labelled links.
func TestTopologyDenseLinks(t *testing.T) {
	for _, tt := range []struct {
		host     topotest.Host
		dense    bool
		maxStart int
	}{
		{topotest.Host{Sockets: 2, Switches: 4, GPUs: 9, NVLinkAll: true}, true, 4000},
		{topotest.Host{Sockets: 1, Switches: 2, GPUs: 4}, false, 400},
	} {
		sys, _, err := topo.ParseXML(strings.NewReader(tt.host.XML()))
		if err != nil {
			t.Fatal(err)
		}
		a, err := topo.Analyze(sys, ncclenv.Env{})
		if err != nil {
			t.Fatal(err)
		}
		svg := Topology(&model.Result{Analysis: a}, TopologyOptions{ID: "t"})
		wellFormed(t, svg)
		if got := strings.Contains(svg, "pg-links-dense"); got != tt.dense {
			t.Errorf("%+v: dense %v, want %v", tt.host, got, tt.dense)
		}
		if n := strings.Count(svg, "<") - strings.Count(svg, "</"); n > tt.maxStart {
			t.Errorf("%+v: %d start tags, the bound is %d", tt.host, n, tt.maxStart)
		}
	}
}

// TestTopologyManyNICs: past MaxDrawnNICs the NICs under one parent are one
// box, and the figure of 72 GPUs and 252 NICs stays a few thousand elements
// (it drew 7,240 start tags, a NIC and a NET box per NIC); at or under the
// cap every NIC and port keeps a box of its own.
func TestTopologyManyNICs(t *testing.T) {
	for _, tt := range []struct {
		name     string
		xml      string
		groups   int // NIC group boxes
		nicBoxes int // boxes of one NIC each
		maxStart int
		label    string // a substring of a group box's or link's aria-label
	}{
		// 252 NICs, every one on a root port of CPU 0: one group.
		{"72 GPUs, 252 NICs", topotest.WithNICs(topotest.Host{Sockets: 2, Switches: 4, GPUs: 9}.XML(), 252), 1, 0, 1500,
			"252 NICs with 252 network ports (NET 0 mlx5_0 to NET 251 mlx5_251), drawn as one box"},
		{"72 GPUs, 252 NICs: the links to the group", topotest.WithNICs(topotest.Host{Sockets: 2, Switches: 4, GPUs: 9}.XML(), 252), 1, 0, 1500,
			"252 PCIe links 252 NICs (NET0–251) – CPU0 (the first: 24 GB/s)"},
		{"4 GPUs, MaxDrawnNICs NICs", topotest.WithNICs(topotest.Host{Sockets: 1, Switches: 1, GPUs: 4}.XML(), MaxDrawnNICs), 0, MaxDrawnNICs, 2500, ""},
		// topo.MaxCPUs CPUs, every pair linked (2,016 links, drawn bare).
		{"64 CPUs", topotest.CPUs(topo.MaxCPUs, 8), 0, 0, 4000, ""},
		{"4 GPUs, one NIC past the cap", topotest.WithNICs(topotest.Host{Sockets: 1, Switches: 1, GPUs: 4}.XML(), MaxDrawnNICs+1), 1, 0, 600,
			fmt.Sprintf("%d NICs with %d network ports", MaxDrawnNICs+1, MaxDrawnNICs+1)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := build(t, "", 1, tt.xml)
			svg := Topology(res, TopologyOptions{Graph: "ring", Channel: -1, ID: "t"})
			wellFormed(t, svg)
			if n := strings.Count(svg, "<") - strings.Count(svg, "</"); n > tt.maxStart {
				t.Errorf("%d start tags, the bound is %d", n, tt.maxStart)
			}
			if n := strings.Count(svg, `aria-label="`+strconv.Itoa(MaxDrawnNICs+1)+" NICs") + strings.Count(svg, `aria-label="252 NICs`); n != tt.groups {
				t.Errorf("%d NIC group boxes, want %d", n, tt.groups)
			}
			if n := strings.Count(svg, `class="pg-node pg-n-nic" tabindex="0" role="img" aria-label="NIC `); n != tt.nicBoxes {
				t.Errorf("%d boxes of one NIC, want %d", n, tt.nicBoxes)
			}
			if tt.label != "" && !strings.Contains(svg, Escape(tt.label)) {
				t.Errorf("no label holding %q", tt.label)
			}
		})
	}
}
