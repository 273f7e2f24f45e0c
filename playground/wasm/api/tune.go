package api

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/figure"
	"github.com/distributed-nav/distributed-nav/playground/jsonw"
	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
	"github.com/distributed-nav/distributed-nav/playground/tune"
)

// NCCLVersion is the release the model reproduces.
const NCCLVersion = "v2.30.7-1"

// SweepSizes are the sizes of `ncclsim tune`'s selection table: every power
// of two from 8 B to 8 GiB.
func SweepSizes() []uint64 { return tune.Sizes(8, 8<<30) }

// pair is one algorithm × protocol.
type pair struct {
	a tune.Algorithm
	p tune.Protocol
}

func (p pair) String() string { return p.a.String() + "/" + p.p.String() }

// Tune answers the algorithm & protocol page. The JSON holds "result"
// (exactly `ncclsim tune --json` for the same inputs), "curves" (the
// model's time of every usable algorithm × protocol at each sweep size,
// null where unusable), "crossovers" (the exact byte counts where NCCL's
// choice changes, found by bisection between sweep sizes), "segments" (the
// winner band), "problems" and "command"; the figures are "chart",
// "selection" (the choice per size) and "cells" (the collective's cells),
// each number with its formula.
func (s *Session) Tune(ctx context.Context, req *Request) Reply {
	f, err := lookupColl(req.Coll, "allreduce")
	if err != nil {
		return errorReply(err)
	}
	b, err := s.build(ctx, req)
	if err != nil {
		return errorReply(err)
	}
	if b.tuneErr != nil {
		return errorReply(tuneField(b.tuneErr))
	}
	m := b.tune
	sizes := SweepSizes()
	choices, err := m.Sweep(ctx, f, sizes, tune.Request{})
	if err != nil {
		return errorReply(selectField(m, err))
	}
	var w jw
	w.b = make([]byte, 0, 64<<10)
	w.obj()
	w.key("result")
	writeTuneResult(&w, b, f, choices)

	// Curves: every pair some size can use.
	var pairs []pair
	for a := tune.Algorithm(0); a < tune.NumAlgorithms; a++ {
		for p := tune.Protocol(0); p < tune.NumProtocols; p++ {
			for _, c := range choices {
				if c.Costs[a][p] >= 0 {
					pairs = append(pairs, pair{a, p})
					break
				}
			}
		}
	}
	w.key("sizes")
	w.arr()
	for _, n := range sizes {
		w.u64(n)
	}
	w.endArr()
	w.key("curves")
	w.arr()
	for _, pr := range pairs {
		w.obj()
		w.kstr("algo", pr.a.String())
		w.kstr("proto", pr.p.String())
		w.key("time_us")
		w.arr()
		for _, c := range choices {
			if v := c.Costs[pr.a][pr.p]; v >= 0 {
				w.f64(float64(v))
			} else {
				w.null()
			}
		}
		w.endArr()
		w.end()
	}
	w.endArr()

	cross := crossovers(m, f, choices)
	w.key("crossovers")
	w.arr()
	for _, x := range cross {
		w.obj()
		w.key("bytes")
		w.u64(x.bytes)
		w.kstr("from", x.from.String())
		w.kstr("to", x.to.String())
		w.end()
	}
	w.endArr()
	segs := segments(choices, cross)
	w.key("segments")
	w.arr()
	for _, sg := range segs {
		w.obj()
		w.key("from")
		w.u64(sg.from)
		w.key("to")
		w.u64(sg.to)
		w.kstr("winner", sg.p.String())
		w.end()
	}
	w.endArr()

	figs := []Figure{
		{"chart", tuneChart(m, f, pairs, choices, cross, segs)},
		{"selection", selectionTable(m, f, choices)},
		{"cells", cellsTable(m, f)},
	}
	w.key("problems")
	writeProblems(&w, b.problems)
	w.kstr("command", Command("tune", req))
	w.kf64("elapsed_ms", float64(b.elapsed.Microseconds())/1000)
	w.end()
	return Reply{JSON: w.String(), Figures: figs}
}

// tuneField attributes a tuning-model error to the variable that caused it.
func tuneField(err error) error {
	msg := err.Error()
	for _, n := range []string{"NCCL_ALGO", "NCCL_PROTO"} {
		if strings.Contains(msg, n) {
			return &FieldError{Field: "env", Name: n, Message: msg}
		}
	}
	return &FieldError{Field: "env", Message: msg}
}

// selectField attributes a selection failure: with NCCL_ALGO or NCCL_PROTO
// set, no usable pair is their doing; otherwise it belongs to the
// collective.
func selectField(m *tune.Model, err error) error {
	if errors.Is(err, tune.ErrNoAlgorithm) {
		switch {
		case m.Opts.AlgoSet:
			return &FieldError{Field: "env", Name: "NCCL_ALGO", Message: err.Error()}
		case m.Opts.ProtoSet:
			return &FieldError{Field: "env", Name: "NCCL_PROTO", Message: err.Error()}
		}
	}
	return &FieldError{Field: "coll", Message: err.Error()}
}

// lookupColl parses a collective name.
func lookupColl(name, def string) (tune.Func, error) {
	if strings.TrimSpace(name) == "" {
		name = def
	}
	f, err := tune.LookupFunc(name)
	if err != nil {
		return 0, fieldErr("coll", err.Error())
	}
	return f, nil
}

// writeTuneResult writes the object of `ncclsim tune --json`
// (playground/cmd/ncclsim/tune.go, tuneOutput), field for field.
func writeTuneResult(w *jw, b *built, f tune.Func, choices []tune.Choice) {
	m := b.tune
	w.obj()
	w.kstr("topology", b.host.name)
	w.kint("nodes", b.nodes)
	w.kint("nranks", m.Sys.NRanks)
	w.kstr("nccl", NCCLVersion)
	w.key("env")
	writeEnv(w, b.env)
	w.key("problems")
	writeProblems(w, b.problems)
	w.kint("comm_nchannels", m.CommNChannels)
	w.kint("nvls_channels", m.NVLSChannels)
	w.key("max_threads")
	w.obj()
	for _, a := range sortedAlgos() {
		w.key(a.String())
		w.ints(m.MaxThreads[a][:])
	}
	w.end()
	w.kstr("thread_thresholds", m.ThresholdsLine())
	w.key("cells")
	w.arr()
	for fn := tune.Func(0); fn < tune.NumFuncs; fn++ {
		for a := tune.Algorithm(0); a < tune.NumAlgorithms; a++ {
			for p := tune.Protocol(0); p < tune.NumProtocols; p++ {
				w.obj()
				w.kstr("func", fn.String())
				w.kstr("algo", a.String())
				w.kstr("proto", p.String())
				w.kf64("latency_us", float64(m.Latencies[fn][a][p]))
				w.kf64("bandwidth_GBps", float64(m.Bandwidths[fn][a][p]))
				w.kbool("usable", m.Bandwidths[fn][a][p] > 0)
				w.end()
			}
		}
	}
	w.endArr()
	w.key("tuning_log")
	lines := m.TuningTableLines()
	if lines == nil {
		lines = []string{}
	}
	w.strs(lines)
	if s, ok := m.EnableMatrix(); ok {
		w.kstr("enable_matrix", s)
	}
	w.kstr("coll", f.String())
	w.key("selection")
	w.arr()
	factor := tune.BusBwFactor(f, m.Sys.NRanks)
	for _, c := range choices {
		alg := c.AlgBwGBps()
		w.obj()
		w.key("bytes")
		w.u64(c.NBytes)
		w.kstr("algo", c.Algo.String())
		w.kstr("proto", c.Proto.String())
		w.kint("nchannels", c.NChannels)
		w.kint("nthreads", c.NThreads)
		w.kf64("time_us", float64(c.TimeUs))
		w.kf64("algbw_GBps", alg)
		w.kf64("busbw_GBps", alg*factor)
		w.end()
	}
	w.endArr()
	w.key("notes")
	notes := b.notes
	if notes == nil {
		notes = []string{}
	}
	w.strs(notes)
	w.end()
}

// sortedAlgos returns the algorithms in the order encoding/json writes map
// keys (sorted by name), as the CLI's max_threads map comes out.
func sortedAlgos() []tune.Algorithm {
	out := make([]tune.Algorithm, 0, tune.NumAlgorithms)
	for a := tune.Algorithm(0); a < tune.NumAlgorithms; a++ {
		out = append(out, a)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].String() < out[j-1].String(); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// writeEnv writes the environment as a JSON object with sorted keys.
func writeEnv(w *jw, env ncclenv.Env) {
	w.obj()
	for _, n := range env.Names() {
		v, _ := env.Lookup(n)
		w.kstr(n, v)
	}
	w.end()
}

// crossover is a size at which NCCL's choice changes.
type crossover struct {
	bytes    uint64
	from, to pair
}

// winner returns the pair NCCL selects for n bytes, ok false when none.
func winner(m *tune.Model, f tune.Func, n uint64) (pair, bool) {
	c, err := m.Select(tune.Request{Func: f, NBytes: n})
	if err != nil {
		return pair{}, false
	}
	return pair{c.Algo, c.Proto}, true
}

// crossovers finds, between consecutive sweep sizes with different winners,
// the first byte count with the new winner, by bisection (the selection is
// a pure function of the size). A change and change back between two sweep
// sizes is not looked for.
func crossovers(m *tune.Model, f tune.Func, choices []tune.Choice) []crossover {
	var out []crossover
	var find func(lo, hi uint64, wlo, whi pair)
	find = func(lo, hi uint64, wlo, whi pair) {
		if wlo == whi {
			return
		}
		if hi-lo <= 1 {
			out = append(out, crossover{hi, wlo, whi})
			return
		}
		mid := lo + (hi-lo)/2
		wm, ok := winner(m, f, mid)
		if !ok {
			return
		}
		find(lo, mid, wlo, wm)
		find(mid, hi, wm, whi)
	}
	for i := 0; i+1 < len(choices); i++ {
		a, b := choices[i], choices[i+1]
		find(a.NBytes, b.NBytes, pair{a.Algo, a.Proto}, pair{b.Algo, b.Proto})
	}
	return out
}

// segment is one stretch of the winner band.
type segment struct {
	from, to uint64
	p        pair
}

// segments turns the crossovers into the winner band over the sweep range.
func segments(choices []tune.Choice, cross []crossover) []segment {
	if len(choices) == 0 {
		return nil
	}
	first, last := choices[0], choices[len(choices)-1]
	cur := segment{from: first.NBytes, p: pair{first.Algo, first.Proto}}
	var out []segment
	for _, x := range cross {
		cur.to = x.bytes
		out = append(out, cur)
		cur = segment{from: x.bytes, p: x.to}
	}
	cur.to = last.NBytes
	return append(out, cur)
}

// seriesClass gives each algorithm a colour and each protocol a dash
// pattern, so that curves stay apart without relying on colour alone.
func seriesClass(p pair) string {
	return "pg-s" + strconv.Itoa(int(p.a)) + " pg-dash" + strconv.Itoa(int(p.p))
}

// tuneChart draws the time of every usable pair against size.
func tuneChart(m *tune.Model, f tune.Func, pairs []pair, choices []tune.Choice, cross []crossover, segs []segment) string {
	var series []figure.Series
	for _, pr := range pairs {
		s := figure.Series{Name: pr.String(), Class: seriesClass(pr)}
		for _, c := range choices {
			v := c.Costs[pr.a][pr.p]
			if v < 0 {
				continue
			}
			s.Points = append(s.Points, figure.Point{X: float64(c.NBytes), Y: float64(v),
				Title: pr.String() + " at " + figure.Bytes(float64(c.NBytes)) + ": " + timeFormula(m, f, pr.a, pr.p, c.NBytes, v)})
		}
		series = append(series, s)
	}
	opts := figure.ChartOptions{
		Label:  "Predicted " + f.String() + " time against message size for every usable algorithm and protocol on " + strconv.Itoa(m.Sys.NRanks) + " ranks",
		XLabel: "message size (bytes as NCCL counts them)", YLabel: "predicted time",
		XUnit: figure.UnitBytes, YUnit: figure.UnitMicros, YLog: true,
	}
	for _, sg := range segs {
		opts.Winners = append(opts.Winners, figure.Segment{From: float64(sg.from), To: float64(sg.to), Label: sg.p.String(), Class: seriesClass(sg.p)})
	}
	for _, x := range cross {
		opts.Marks = append(opts.Marks, figure.Mark{X: float64(x.bytes), Label: x.from.String() + " → " + x.to.String() + " at " + strconv.FormatUint(x.bytes, 10) + " bytes"})
	}
	return figure.TimeChart(series, opts)
}

// f32s formats a float32 model value as the CLI's JSON does.
func f32s(v float32) string { return string(jsonw.AppendFloat(nil, float64(v), 32)) }

// f64s formats a float64 as JSON does.
func f64s(v float64) string { return string(jsonw.AppendFloat(nil, v, 64)) }

// timeFormula explains ncclTopoGetAlgoTime for one pair and size with the
// model's numbers (tuning.cc:630-655): time = lat × latCount + nBytes /
// (1000 × bw), with the size-dependent corrections that apply.
func timeFormula(m *tune.Model, f tune.Func, a tune.Algorithm, p tune.Protocol, n uint64, t float32) string {
	bw := m.Bandwidths[f][a][p]
	lat := m.Latencies[f][a][p]
	var parts []string
	bwText := figure.Short(float64(bw), 2) + " GB/s"
	if corr, ok := tune.TreeCorrectionFactor(p, n); ok {
		l := log2(n >> 6)
		tree := a == tune.Tree && f == tune.AllReduce && l < 23
		nvlsTree := a == tune.NVLSTree && f == tune.AllReduce && m.Sys.MinCompCap >= 100 && m.Sys.CPUArch == tune.ArchX86
		if tree || nvlsTree {
			bwText = "(" + bwText + " × tree correction " + figure.Short(float64(corr), 2) + ")"
			parts = append(parts, "tree correction for log2(nBytes/64) = "+strconv.Itoa(l))
		}
	}
	latText := figure.Short(float64(lat), 2) + " µs"
	if a == tune.Ring && p == tune.Simple && m.Sys.NNodes > 1 && f == tune.AllReduce &&
		n/uint64(m.CommNChannels*m.Sys.NRanks) >= 64 {
		k := "1.4"
		if m.Sys.MinCompCap < 80 {
			k = "1.9"
		}
		latText = "(" + latText + " × " + k + ")"
		parts = append(parts, "multi-node ring Simple latency × "+k)
	}
	s := "time = latency × 1 + nBytes / (1000 × bandwidth) = " + latText + " + " + strconv.FormatUint(n, 10) + " B / (1000 × " + bwText + ") = " + figure.Short(float64(t), 2) + " µs"
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, "; ") + ")"
	}
	return s
}

func log2(n uint64) int {
	l := -1
	for n != 0 {
		n >>= 1
		l++
	}
	return l
}

// selectionTable renders the chosen pair per size with the formulas.
func selectionTable(m *tune.Model, f tune.Func, choices []tune.Choice) string {
	factor := tune.BusBwFactor(f, m.Sys.NRanks)
	spec := figure.TableSpec{
		Caption: f.String() + ": the algorithm and protocol NCCL picks at each size (model time; busbw as nccl-tests computes it)",
		Head:    []string{"bytes", "algorithm", "protocol", "channels", "threads", "time (µs)", "algbw (GB/s)", "busbw (GB/s)"},
		Class:   "pg-selection",
	}
	nr := strconv.Itoa(m.Sys.NRanks)
	for _, c := range choices {
		alg := c.AlgBwGBps()
		bus := alg * factor
		pr := pair{c.Algo, c.Proto}
		row := figure.Row{Attr: strconv.FormatUint(c.NBytes, 10), Cells: []figure.Cell{
			{Text: figure.Bytes(float64(c.NBytes)), Value: strconv.FormatUint(c.NBytes, 10)},
			{Text: c.Algo.String()},
			{Text: c.Proto.String()},
			{Text: strconv.Itoa(c.NChannels), Value: strconv.Itoa(c.NChannels)},
			{Text: strconv.Itoa(c.NThreads), Value: strconv.Itoa(c.NThreads)},
			{Text: figure.Fixed(float64(c.TimeUs), 2), Value: f64s(float64(c.TimeUs))},
			{Text: figure.Fixed(alg, 2), Value: f64s(alg)},
			{Text: figure.Fixed(bus, 2), Value: f64s(bus)},
		}}
		row.Formula = []string{
			"winner: the smallest time among the usable pairs (" + pr.String() + "); ties go to the lower algorithm, then protocol index (enqueue.cc topoGetAlgoInfo)",
			timeFormula(m, f, c.Algo, c.Proto, c.NBytes, c.TimeUs),
			"algbw = nBytes / time = " + strconv.FormatUint(c.NBytes, 10) + " B / " + figure.Short(float64(c.TimeUs), 3) + " µs / 1000 = " + figure.Fixed(alg, 3) + " GB/s",
			"busbw = algbw × " + busFactorText(f, nr) + " = " + figure.Fixed(alg, 3) + " × " + figure.Short(factor, 4) + " = " + figure.Fixed(bus, 3) + " GB/s",
			channelsText(m, c),
		}
		spec.Rows = append(spec.Rows, row)
	}
	return figure.Table(spec)
}

// busFactorText is the nccl-tests bus bandwidth factor in words.
func busFactorText(f tune.Func, n string) string {
	switch f {
	case tune.AllReduce:
		return "2(n−1)/n with n = " + n
	case tune.AllGather, tune.ReduceScatter:
		return "(n−1)/n with n = " + n
	}
	return "1"
}

// channelsText explains the channel and thread counts of a choice
// (enqueue.cc:2070-2115).
func channelsText(m *tune.Model, c tune.Choice) string {
	a, p := c.Algo, c.Proto
	thr := strconv.FormatInt(m.ThreadThresholds[a][p], 10)
	switch a {
	case tune.NVLS, tune.NVLSTree:
		return "channels = the NVLS channel count (" + strconv.Itoa(m.NVLSChannels) + "); threads = " + strconv.Itoa(c.NThreads)
	case tune.CollNetDirect:
		return "channels: the CollNet Direct rule of enqueue.cc; threads = " + strconv.Itoa(c.NThreads)
	}
	s := "channels: start from the communicator's " + strconv.Itoa(m.CommNChannels) + " and drop one while nBytes < channels × threads (" + strconv.Itoa(m.MaxThreads[a][p]) + ") × threshold (" + thr + "), keeping at least 1 → " + strconv.Itoa(c.NChannels)
	switch {
	case a == tune.Tree || a == tune.PAT:
		s += "; threads are always " + strconv.Itoa(tune.MaxNThreads) + " for " + a.String()
	default:
		s += "; threads: halved while the same test holds, then "
		if p == tune.Simple && a == tune.Ring {
			s += "+1 warp for Ring/Simple, "
		}
		s += "at least 3 warps → " + strconv.Itoa(c.NThreads)
	}
	return s
}

// cellsTable lists the tuning table cells of the collective with how each
// was computed.
func cellsTable(m *tune.Model, f tune.Func) string {
	spec := figure.TableSpec{
		Caption: f.String() + ": latency and bandwidth of each algorithm × protocol cell of the tuning table (0 bandwidth: unusable)",
		Head:    []string{"algorithm/protocol", "latency (µs)", "bandwidth (GB/s)", "max threads", "usable"},
		Class:   "pg-cells",
	}
	for a := tune.Algorithm(0); a < tune.NumAlgorithms; a++ {
		for p := tune.Protocol(0); p < tune.NumProtocols; p++ {
			if !m.Computed[f][a][p] {
				continue
			}
			lat, bw := m.Latencies[f][a][p], m.Bandwidths[f][a][p]
			use := "no"
			if bw > 0 {
				use = "yes"
			}
			pr := pair{a, p}
			spec.Rows = append(spec.Rows, figure.Row{Attr: pr.String(), Cells: []figure.Cell{
				{Text: pr.String()},
				{Text: figure.Fixed(float64(lat), 1), Value: f32s(lat)},
				{Text: figure.Fixed(float64(bw), 1), Value: f32s(bw)},
				{Text: strconv.Itoa(m.MaxThreads[a][p])},
				{Text: use},
			}, Formula: cellFormula(m, f, a, p)})
		}
	}
	return figure.Table(spec)
}

// cellFormula explains a cell of ncclTopoTuneModel (tuning.cc:259-438):
// the graph inputs, the refinements that apply, the bus-to-algorithm
// bandwidth ratio and the latency sum.
func cellFormula(m *tune.Model, f tune.Func, a tune.Algorithm, p tune.Protocol) []string {
	s := m.Sys
	g := m.Graphs.For(a)
	agrs := f == tune.AllGather || f == tune.ReduceScatter
	nsteps := s.NRanks
	switch f {
	case tune.AllReduce:
		nsteps = 2 * (s.NRanks - 1)
	case tune.AllGather, tune.ReduceScatter:
		nsteps = s.NRanks - 1
	}
	bwName, bwv := "bwIntra", g.BwIntra
	if s.NNodes > 2 && a != tune.CollNetDirect && a != tune.CollNetChain {
		bwName, bwv = "bwInter", g.BwInter
	}
	var out []string
	out = append(out, "graph "+a.String()+": "+strconv.Itoa(g.NChannels)+" channels, "+bwName+" "+figure.Short(bwv, 2)+" GB/s per channel; busBw = channels × bw = "+figure.Short(float64(g.NChannels)*bwv, 2)+" GB/s")
	var rules []string
	switch {
	case a == tune.Ring && p == tune.LL:
		rules = append(rules, "Ring/LL: min(llMaxBw, busBw × 0.5)")
	case a == tune.Ring && p == tune.LL128:
		rules = append(rules, "Ring/LL128: min(busBw × 0.92, channels × per-channel LL128 cap)")
	}
	if a == tune.Tree && f == tune.AllReduce {
		rules = append(rules, "Tree AllReduce: min(busBw × 0.92, channels × per-channel tree cap)")
	}
	if a == tune.Tree && p == tune.LL {
		rules = append(rules, "Tree/LL: min(busBw / 3.8, llMaxBw)")
	}
	if a == tune.Tree && p == tune.LL128 {
		rules = append(rules, "Tree/LL128: min(busBw × 120/128 (7/9 on one node), channels × per-channel cap)")
	}
	if a == tune.PAT {
		rules = append(rules, "PAT: busBw × 0.75")
	}
	if a == tune.NVLS || a == tune.NVLSTree {
		rules = append(rules, "NVLS: min(intra bw × efficiency × (channels−1)/channels × (2 for AllReduce, else (ppn−1)/ppn), inter bw)")
	}
	if len(rules) > 0 {
		out = append(out, "refinement: "+strings.Join(rules, "; "))
	}
	if !(a != tune.Ring && agrs) {
		if a == tune.Ring || a == tune.NVLS || a == tune.NVLSTree {
			out = append(out, "algorithm bandwidth = busBw × nRanks / nsteps = busBw × "+strconv.Itoa(s.NRanks)+"/"+strconv.Itoa(nsteps))
		} else {
			out = append(out, "algorithm bandwidth = busBw × 0.5")
		}
	}
	if m.Bandwidths[f][a][p] == 0 {
		out = append(out, "bandwidth 0: the cell is disabled (NCCL_ALGO/NCCL_PROTO, the LL128 rule for this hardware, or a built-in disable such as NVLSTree on one node)")
	}
	c := m.Consts
	base := c.BaseLatencies[a][p]
	intra := c.HWLatencies[m.IntraHW[a]][a][p]
	lat := "latency = base " + figure.Short(base, 2) + " µs"
	switch a {
	case tune.Ring:
		lat += " + steps × hardware latency (" + m.IntraHW[a].String() + " " + figure.Short(intra, 2) + " µs inside a node, NET between nodes; " + strconv.Itoa(nsteps) + " steps)"
	case tune.Tree:
		lat += " + 2 × ((ranks per node − 1) × " + figure.Short(intra, 2) + " µs + log2(nodes) × inter-node latency) for AllReduce"
	case tune.NVLS:
		lat = "latency = NVLS hardware latency " + figure.Short(intra, 2) + " µs (+ inter-node latency across nodes)"
	default:
		lat += " + hardware terms for " + a.String()
	}
	out = append(out, lat+" = "+figure.Short(float64(m.Latencies[f][a][p]), 2)+" µs (tuning.cc ncclTopoTuneModel)")
	return out
}
