package doctor

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/distributed-nav/distributed-nav/playground/ascii"
	"github.com/distributed-nav/distributed-nav/playground/ncclmsg"
)

// transportLetter abbreviates a transport family in the rank matrix.
func transportLetter(kind string) byte {
	switch family(kind) {
	case "P2P":
		return 'P'
	case "SHM":
		return 'S'
	case "NET":
		if strings.HasPrefix(kind, "NET/Socket") {
			return 'T'
		}
		return 'N'
	case "COLLNET":
		return 'C'
	}
	return '?'
}

// maxMatrixRanks is the largest rank count drawn as a matrix.
const maxMatrixRanks = 32

// WriteText writes a readable report: the summary, the topology and
// channel views, and the diagnoses.
func WriteText(w io.Writer, s *Summary, ds []Diagnosis) error {
	ew := &errWriter{w: w}
	writeSummaryText(ew, s)
	writeTopologyText(ew, s)
	writeChannelsText(ew, s)
	writeDiagnosesText(ew, ds)
	return ew.err
}

type errWriter struct {
	w   io.Writer
	err error
}

// Write writes p unless an earlier write failed; the first error sticks.
func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func writeSummaryText(w io.Writer, s *Summary) {
	fmt.Fprintf(w, "Log: %d lines, %d bytes\n", s.Lines, s.Bytes)
	for _, n := range s.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	var vs []string
	for _, v := range s.Versions {
		x := v.Version
		if v.CUDA != "" {
			x += "+cuda" + v.CUDA
		}
		vs = append(vs, x)
	}
	fmt.Fprintf(w, "NCCL version: %s\n", orAbsent(strings.Join(vs, ", ")))
	if s.CUDADriver != "" {
		fmt.Fprintf(w, "CUDA driver: %s\n", s.CUDADriver)
	}
	fmt.Fprintf(w, "Ranks: %s, nodes: %s, local ranks: %s, hosts seen: %s\n", orUnknown(s.NRanks), orUnknown(s.NNodes),
		orUnknown(s.LocalRanks), orAbsent(strings.Join(s.Hosts, ", ")))
	net := s.Network
	if net == "" {
		net = "not printed"
	}
	fmt.Fprintf(w, "Network: %s", net)
	if len(s.NetDevices) > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(s.NetDevices, ", "))
	}
	fmt.Fprintln(w)
	var ts []string
	for _, t := range s.Transports {
		ts = append(ts, fmt.Sprintf("%s ×%d", t.Kind, t.Count))
	}
	fmt.Fprintf(w, "Transports: %s\n", orNone(strings.Join(ts, ", ")))
	fmt.Fprintf(w, "Channels: %s", orUnknown(s.ChannelCount()))
	for _, c := range s.Channels {
		fmt.Fprintf(w, " [coll %d", c.Coll)
		if c.NVLS >= 0 {
			fmt.Fprintf(w, ", nvls %d", c.NVLS)
		}
		if c.CollNet >= 0 {
			fmt.Fprintf(w, ", collnet %d", c.CollNet)
		}
		if c.P2P >= 0 {
			fmt.Fprintf(w, ", p2p %d", c.P2P)
		}
		fmt.Fprint(w, "]")
	}
	fmt.Fprintln(w)
	nvls := "not printed"
	switch {
	case !s.NVLSComms.Empty():
		nvls = "enabled"
	case !s.NVLSSupported.Empty():
		nvls = "supported"
	case !s.NVLSUnsupported.Empty():
		nvls = "not available"
	}
	collnet := "not mentioned"
	switch {
	case !s.CollNetDisabled.Empty():
		collnet = "disabled"
	case !s.CollNet.Empty():
		collnet = "mentioned"
	}
	fmt.Fprintf(w, "NVLS: %s; CollNet: %s\n", nvls, collnet)
	for _, g := range s.Graphs {
		fmt.Fprintf(w, "Graph: pattern %d, %d channels, bw %.1f/%.1f GB/s, type %s/%s\n", g.Pattern, g.NChannels, g.BwIntra, g.BwInter, g.TypeIntra, g.TypeInter)
	}
	if len(s.AlgoChoices) > 0 {
		fmt.Fprintln(w, "Chosen algorithms:")
		for _, a := range s.AlgoChoices {
			fn := a.Func
			if fn == "" {
				fn = "(collective)"
			}
			fmt.Fprintf(w, "  %s %d bytes -> %s/%s\n", fn, a.Bytes, a.Algorithm, a.Protocol)
		}
	}
	if t := s.Tuning; t != nil {
		writeTuningText(w, t)
	}
	if len(s.EnvSettings) > 0 {
		fmt.Fprintln(w, "Environment echoed by NCCL:")
		for _, e := range s.EnvSettings {
			fmt.Fprintf(w, "  %s=%s (line %d)\n", e.Name, e.Value, e.Line.Line)
		}
	}
	if len(s.Timeouts) > 0 {
		fmt.Fprintln(w, "Timeouts:")
		for _, t := range s.Timeouts {
			fmt.Fprintf(w, "  rank %d %s seq %d, timeout %d ms, ran %d ms (line %d)\n", t.Rank, t.OpType, t.SeqNum, t.TimeoutMs, t.RanForMs, t.Line)
		}
	}
	fmt.Fprintf(w, "Warnings: %d NCCL WARN line(s), %d heartbeat/watchdog abort line(s)\n", s.Warnings.Count, s.Heartbeat.Count)
	if m := s.Messages; m.NCCL > 0 {
		fmt.Fprintf(w, "NCCL messages: %d line(s), %d tied to the NCCL source line that prints them", m.NCCL, m.Matched)
		if m.Older > 0 {
			fmt.Fprintf(w, " (%d in an older release's wording)", m.Older)
		}
		fmt.Fprintf(w, ", %d unknown\n", m.Unknown.Count)
		for _, l := range m.Unknown.Lines {
			fmt.Fprintf(w, "  unknown, line %d: %s\n", l.Line, l.Text)
		}
		if extra := m.Unknown.Count - len(m.Unknown.Lines); extra > 0 {
			fmt.Fprintf(w, "  and %d more unknown line(s)\n", extra)
		}
	}
}

// orAbsent prints what the log does not show as "not in the log".
func orAbsent(s string) string {
	if s == "" {
		return "not in the log"
	}
	return s
}

func writeTuningText(w io.Writer, t *Tuning) {
	fmt.Fprintf(w, "TUNING table (line %d, %d table(s) in the log), latency us / bandwidth GB/s:\n", t.Line, t.Tables)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	header := "  FUNC"
	var cols [][2]string
	for _, a := range t.Algorithms {
		for _, p := range t.Protocols {
			header += "\t" + a + "/" + p
			cols = append(cols, [2]string{a, p})
		}
	}
	fmt.Fprintln(tw, header)
	var funcs []string
	seen := map[string]bool{}
	for _, c := range t.Cells {
		if !seen[c.Func] {
			seen[c.Func] = true
			funcs = append(funcs, c.Func)
		}
	}
	for _, f := range funcs {
		row := "  " + f
		for _, c := range cols {
			if cell, ok := t.Cell(f, c[0], c[1]); ok {
				row += fmt.Sprintf("\t%.1f/%.1f", cell.LatencyUs, cell.BwGBps)
			} else {
				row += "\t-"
			}
		}
		fmt.Fprintln(tw, row)
	}
	tw.Flush()
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// orUnknown prints a count the log may not show: "not in the log" rather
// than a 0 the reader would take for a fact.
func orUnknown(n int) string {
	if n <= 0 {
		return "not in the log"
	}
	return fmt.Sprint(n)
}

// writeTopologyText draws the ranks per host and the transports between
// ranks (a matrix for small jobs, a list otherwise).
func writeTopologyText(w io.Writer, s *Summary) {
	fmt.Fprintln(w, "\nTopology")
	if len(s.Ranks) > 0 {
		ranks := append([]Rank(nil), s.Ranks...)
		sort.SliceStable(ranks, func(i, j int) bool {
			if ranks[i].NRanks != ranks[j].NRanks {
				return ranks[i].NRanks > ranks[j].NRanks
			}
			return ranks[i].Rank < ranks[j].Rank
		})
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  RANK\tOF\tHOST\tCUDA\tNVML\tBUS ID")
		for _, r := range ranks {
			fmt.Fprintf(tw, "  %d\t%d\t%s\t%s\t%s\t%s\n", r.Rank, r.NRanks, orNone(r.Host), devStr(r.CUDADev), devStr(r.NVMLDev), r.BusID)
		}
		tw.Flush()
	}
	writePathsText(w, s)
	if len(s.Pairs) == 0 {
		fmt.Fprintln(w, "  no connection lines (NCCL_DEBUG_SUBSYS=INIT prints them)")
		return
	}
	n := 0
	for _, p := range s.Pairs {
		n = max(n, p.From+1, p.To+1)
	}
	if n <= maxMatrixRanks {
		cell := make([][]byte, n)
		for i := range cell {
			cell[i] = []byte(strings.Repeat(".", n))
			cell[i][i] = '-'
		}
		for _, p := range s.Pairs {
			if p.To >= 0 {
				cell[p.From][p.To] = transportLetter(p.Kind)
			}
		}
		fmt.Fprintln(w, "  transports from row rank to column rank (P=P2P S=SHM N=NET/RDMA T=NET/Socket C=CollNet .=not seen):")
		var head strings.Builder
		head.WriteString("       ")
		for j := 0; j < n; j++ {
			fmt.Fprintf(&head, "%3d", j)
		}
		fmt.Fprintln(w, head.String())
		for i := 0; i < n; i++ {
			var row strings.Builder
			fmt.Fprintf(&row, "    %3d", i)
			for j := 0; j < n; j++ {
				fmt.Fprintf(&row, "  %c", cell[i][j])
			}
			fmt.Fprintln(w, row.String())
		}
		return
	}
	fmt.Fprintln(w, "  transports between ranks:")
	for _, p := range s.Pairs {
		fmt.Fprintf(w, "    %d -> %d via %s\n", p.From, p.To, p.Kind)
	}
}

// nodeID normalises the node names of GRAPH path dumps, which differ
// between releases ("GPU/CE000" and "GPU/0-ce000"), to "gpu/ce000".
func nodeID(name string) string {
	kind, id, ok := strings.Cut(strings.ToLower(name), "/")
	if !ok {
		return strings.ToLower(name)
	}
	if _, local, ok := strings.Cut(id, "-"); ok {
		id = local
	}
	id = strings.TrimLeft(id, "0")
	if id == "" {
		id = "0"
	}
	return kind + "/" + id
}

// writePathsText draws the GPU-to-GPU path types of a GRAPH dump as a
// matrix (the view of NCCL's topology the log gives).
func writePathsText(w io.Writer, s *Summary) {
	var gpus []string
	seen := map[string]bool{}
	types := map[[2]string]string{}
	for _, p := range s.Paths {
		from, to := nodeID(p.From), nodeID(p.To)
		if !strings.HasPrefix(from, "gpu/") || !strings.HasPrefix(to, "gpu/") {
			continue
		}
		for _, g := range []string{from, to} {
			if !seen[g] && len(gpus) < maxMatrixRanks {
				seen[g] = true
				gpus = append(gpus, g)
			}
		}
		types[[2]string{from, to}] = p.Type
	}
	if len(gpus) < 2 {
		return
	}
	sort.Strings(gpus)
	fmt.Fprintln(w, "  GPU-to-GPU path types from the GRAPH dump (row to column):")
	tw := tabwriter.NewWriter(w, 0, 4, 1, ' ', 0)
	head := "    "
	for _, g := range gpus {
		head += "\t" + strings.TrimPrefix(g, "gpu/")
	}
	fmt.Fprintln(tw, head)
	for _, a := range gpus {
		row := "    " + strings.TrimPrefix(a, "gpu/")
		for _, b := range gpus {
			t := types[[2]string{a, b}]
			if t == "" {
				t = "."
			}
			row += "\t" + t
		}
		fmt.Fprintln(tw, row)
	}
	tw.Flush()
}

func devStr(d int) string {
	if d < 0 {
		return "-"
	}
	return fmt.Sprint(d)
}

// writeChannelsText draws the ring orders in the layout of `ncclsim topo`
// and the tree links per rank.
func writeChannelsText(w io.Writer, s *Summary) {
	if len(s.Rings) == 0 && len(s.Trees) == 0 {
		return
	}
	fmt.Fprintln(w, "\nChannels")
	if len(s.Rings) > 0 {
		fmt.Fprintln(w, "  Rings (as rank 0 prints them):")
		for _, r := range s.Rings {
			var b strings.Builder
			fmt.Fprintf(&b, "    %2d:", r.Channel)
			for _, x := range r.Ranks {
				fmt.Fprintf(&b, " %d", x)
			}
			if more := r.MoreRanks(); more > 0 {
				fmt.Fprintf(&b, " ... and %d more ranks (%d in all)", more, r.RankCount)
			} else if len(r.Ranks) > 1 {
				fmt.Fprintf(&b, " -> %d", r.Ranks[0])
			}
			fmt.Fprintln(w, b.String())
		}
	}
	if len(s.Trees) > 0 {
		fmt.Fprintln(w, "  Trees (parent <- rank <- children, per channel):")
		for _, t := range s.Trees {
			down := "-"
			if len(t.Down) > 0 {
				parts := make([]string, len(t.Down))
				for i, d := range t.Down {
					parts[i] = fmt.Sprint(d)
				}
				down = strings.Join(parts, ",")
			}
			up := fmt.Sprint(t.Up)
			if t.Up < 0 {
				up = "root"
			}
			fmt.Fprintf(w, "    ch %2d: %s <- %d <- %s\n", t.Channel, up, t.Rank, down)
		}
	}
}

func writeDiagnosesText(w io.Writer, ds []Diagnosis) {
	fmt.Fprintln(w, "\nDiagnoses")
	if len(ds) == 0 {
		fmt.Fprintln(w, "  none")
		return
	}
	for _, d := range ds {
		fmt.Fprintf(w, "\n[%s] %s (%s)\n", d.Severity, d.Title, d.ID)
		fmt.Fprintf(w, "  %s\n", d.Explanation)
		for _, e := range d.Evidence {
			if e.Line > 0 {
				fmt.Fprintf(w, "  line %d: %s\n", e.Line, e.Text)
			} else {
				fmt.Fprintf(w, "  environment: %s\n", e.Text)
			}
		}
		for _, l := range d.Links {
			fmt.Fprintf(w, "  see %s: %s\n", l.Title, l.URL)
		}
	}
}

// WriteFindings writes env-lint findings one per line.
func WriteFindings(w io.Writer, fs []Finding) error {
	ew := &errWriter{w: w}
	if len(fs) == 0 {
		fmt.Fprintln(ew, "no findings")
	}
	for _, f := range fs {
		fmt.Fprintln(ew, f.String())
		for _, l := range f.Links {
			fmt.Fprintf(ew, "    see %s: %s\n", l.Title, l.URL)
		}
	}
	return ew.err
}

// htmlEscaper replaces the characters that could end a text node or a
// quoted attribute value. The set (and the numeric references for quotes
// and '+') matches what html/template writes, so the fragment is the same
// as when WriteHTML used a template; NUL becomes U+FFFD as it does there.
var htmlEscaper = strings.NewReplacer(
	"\x00", "\uFFFD",
	`"`, "&#34;",
	"&", "&amp;",
	"'", "&#39;",
	"+", "&#43;",
	"<", "&lt;",
	">", "&gt;",
)

// safeURL returns u ready for a double-quoted href: a URL whose scheme is
// not http, https or mailto is replaced by "#ZgotmplZ" (html/template's
// marker for a rejected URL), bytes that may not appear in a URL are
// percent-encoded (existing %XX escapes are kept), and the result is
// attribute-escaped.
func safeURL(u string) string {
	if scheme, _, ok := strings.Cut(u, ":"); ok && !strings.Contains(scheme, "/") {
		switch strings.ToLower(scheme) {
		case "http", "https", "mailto":
		default:
			return "#ZgotmplZ"
		}
	}
	const hexDigits = "0123456789abcdef"
	var b strings.Builder
	for i := 0; i < len(u); i++ {
		c := u[i]
		if urlKeeps(c) || (c == '%' && i+2 < len(u) && ascii.IsHex(u[i+1]) && ascii.IsHex(u[i+2])) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return htmlEscaper.Replace(b.String())
}

// urlKeeps reports whether c may stay as it is in a normalised URL: the
// unreserved characters of RFC 3986 and the reserved ones except the
// single quote and parentheses.
func urlKeeps(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("-._~!#$&*+,/:;=?@[]", c) >= 0
}

// WriteHTML writes the summary and diagnoses as an HTML fragment for the
// site's doctor page. All log text is escaped; links are the site-relative
// URLs of the diagnoses (any other scheme than http, https or mailto is
// dropped).
func WriteHTML(w io.Writer, s *Summary, ds []Diagnosis) error {
	if s == nil {
		s = &Summary{}
	}
	var o htmlOut
	o.raw("<section class=\"doctor-report\">\n<h2>Summary</h2>\n<dl>\n<dt>NCCL version</dt><dd>")
	if len(s.Versions) == 0 {
		o.raw("not printed")
	}
	for i, v := range s.Versions {
		o.sep(i)
		o.text(v.Version)
	}
	o.raw("</dd>\n<dt>Ranks</dt><dd>")
	o.count(s.NRanks)
	o.raw("</dd>\n<dt>Nodes</dt><dd>")
	o.count(s.NNodes)
	o.raw("</dd>\n<dt>Hosts</dt><dd>")
	for i, h := range s.Hosts {
		o.sep(i)
		o.text(h)
	}
	o.raw("</dd>\n<dt>Network</dt><dd>")
	o.text(s.Network)
	o.raw("</dd>\n<dt>Transports</dt><dd>")
	for i, t := range s.Transports {
		o.sep(i)
		o.text(t.Kind)
		o.raw(" ×")
		o.num(t.Count)
	}
	o.raw("</dd>\n<dt>Channels</dt><dd>")
	o.count(s.ChannelCount())
	if m := s.Messages; m.NCCL > 0 {
		o.raw("</dd>\n<dt>NCCL lines</dt><dd>")
		o.num(m.NCCL)
		o.raw(", ")
		o.num(m.Matched)
		o.raw(" tied to the source line that prints them, ")
		o.num(m.Unknown.Count)
		o.raw(" unknown")
	}
	o.raw("</dd>\n</dl>\n")
	if len(s.Notes) > 0 {
		o.raw(`<ul class="doctor-notes">`)
		for _, n := range s.Notes {
			o.raw("<li>")
			o.text(n)
			o.raw("</li>")
		}
		o.raw("</ul>")
	}
	o.raw("\n")
	if len(s.Rings) > 0 {
		o.raw("<h3>Rings</h3><pre>")
		for _, r := range s.Rings {
			if r.Channel >= 0 && r.Channel < 10 {
				o.raw(" ") // printf "%2d"
			}
			o.num(r.Channel)
			o.raw(":")
			for _, x := range r.Ranks {
				o.raw(" ")
				o.num(x)
			}
			if more := r.MoreRanks(); more > 0 {
				o.raw(" … and ")
				o.num(more)
				o.raw(" more ranks (")
				o.num(r.RankCount)
				o.raw(" in all)")
			}
			o.raw("\n")
		}
		o.raw("</pre>")
	}
	o.raw("\n<h2>Diagnoses</h2>\n")
	if len(ds) == 0 {
		o.raw("<p>No diagnoses.</p>")
	}
	for _, d := range ds {
		sev, id := htmlEscaper.Replace(d.Severity.String()), htmlEscaper.Replace(d.ID)
		o.raw(`<article class="diagnosis severity-`, sev, `" id="diag-`, id, "\">\n<h3>")
		o.text(d.Title)
		o.raw(" <small>", sev, " · ", id, "</small></h3>\n<p>")
		o.text(d.Explanation)
		o.raw("</p>\n")
		if len(d.Evidence) > 0 {
			o.raw(`<pre class="evidence">`)
			for _, e := range d.Evidence {
				if e.Line != 0 {
					o.num(e.Line)
					o.raw(": ")
				} else {
					o.raw("env: ")
				}
				o.text(e.Text)
				o.raw("\n")
			}
			o.raw("</pre>")
			o.explanations(d.Evidence, s.Version())
		}
		o.raw("\n<ul>")
		for _, l := range d.Links {
			o.raw(`<li><a href="`, safeURL(l.URL), `">`)
			o.text(l.Title)
			o.raw("</a></li>")
		}
		o.raw("</ul>\n</article>\n")
	}
	if u := s.Messages.Unknown; u.Count > 0 {
		o.raw("\n<h2>Unknown lines</h2>\n<p>No log call of NCCL ", ncclmsg.Pinned, " or of ", ncclmsg.OlderSpan, " prints these NCCL-formatted lines (a network plugin or a newer release may):</p>\n<pre class=\"unknown-lines\">")
		for _, l := range u.Lines {
			o.num(l.Line)
			o.raw(": ")
			o.text(l.Text)
			o.raw("\n")
		}
		if extra := u.Count - len(u.Lines); extra > 0 {
			o.raw("and ")
			o.num(extra)
			o.raw(" more\n")
		}
		o.raw("</pre>")
	}
	o.raw("\n</section>\n")
	if _, err := w.Write(o.b); err != nil {
		return fmt.Errorf("doctor: render html: %w", err)
	}
	return nil
}

// htmlOut collects the HTML fragment of WriteHTML. Its methods are kept out
// of line (go:noinline): inlined at each of WriteHTML's many call sites
// they tripled the function's size in the wasm binary.
type htmlOut struct{ b []byte }

// raw appends markup as it is.
//
//go:noinline
func (o *htmlOut) raw(parts ...string) {
	for _, p := range parts {
		o.b = append(o.b, p...)
	}
}

// text appends escaped text.
//
//go:noinline
func (o *htmlOut) text(s string) { o.b = append(o.b, htmlEscaper.Replace(s)...) }

// count writes a count the log may not show: "not in the log" for 0.
func (o *htmlOut) count(n int) {
	if n <= 0 {
		o.raw("not in the log")
		return
	}
	o.num(n)
}

// explanations writes, for the evidence lines NCCL's catalog knows, a
// disclosure per line with the call that printed it (permalink at its
// release), its format, the fields and what the numbers tell.
func (o *htmlOut) explanations(ev []LineRef, version string) {
	first := true
	for _, e := range ev {
		if e.Line == 0 {
			continue
		}
		x := ExplainLine(e.Text, version)
		if !x.Known {
			continue
		}
		if first {
			o.raw(`<div class="explanations">`)
			first = false
		}
		o.raw("<details class=\"explain\"><summary>Line ")
		o.num(e.Line)
		o.raw(": printed by ")
		o.text(x.File)
		o.raw(":")
		o.num(x.Line)
		o.raw("</summary>\n<p><a href=\"", safeURL(x.Permalink), "\">")
		o.text(x.File + ":" + strconv.Itoa(x.Line) + " at " + x.Release)
		o.raw("</a> (")
		o.text(x.Level + ", subsystem " + x.Subsystem)
		o.raw(")</p>\n<p>Format: <code>")
		o.text(x.Format)
		o.raw("</code></p>\n")
		if len(x.Fields) > 0 {
			o.raw("<ul>")
			for _, f := range x.Fields {
				o.raw("<li><code>")
				name := f.Label
				if name == "" {
					name = f.Spec
				}
				o.text(name + " = " + f.Value)
				o.raw("</code>")
				if f.Meaning != "" {
					o.raw(": ")
					o.text(f.Meaning)
				}
				o.raw("</li>")
			}
			o.raw("</ul>\n")
		}
		for _, n := range x.Notes {
			o.raw("<p>")
			o.text(n)
			o.raw("</p>\n")
		}
		o.raw("</details>\n")
	}
	if !first {
		o.raw("</div>")
	}
}

// num appends a decimal number.
//
//go:noinline
func (o *htmlOut) num(n int) { o.b = strconv.AppendInt(o.b, int64(n), 10) }

// sep appends the ", " between list items (before every item but the
// first).
//
//go:noinline
func (o *htmlOut) sep(i int) {
	if i > 0 {
		o.raw(", ")
	}
}
