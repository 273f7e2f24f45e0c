package service

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/figure"
	"github.com/distributed-nav/distributed-nav/playground/topo"
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

// SelectionRow is one size of the selection sweep.
type SelectionRow struct {
	Bytes uint64 `json:"bytes"`
	Prediction
}

// TuneCell is one (function, algorithm, protocol) cell of the tables.
type TuneCell struct {
	Func      string  `json:"func"`
	Algo      string  `json:"algo"`
	Proto     string  `json:"proto"`
	LatencyUs float64 `json:"latency_us"`
	BwGBps    float64 `json:"bandwidth_GBps"`
	Usable    bool    `json:"usable"`
}

// TuneResult is the answer to the tuning question, the object `ncclsim
// tune --json` prints: NCCL's latency and bandwidth of every function ×
// algorithm × protocol, its TUNING log lines, and the choice per size
// from 8 B to 8 GiB for one collective.
type TuneResult struct {
	Checked `json:"-"`
	// Model is the tuning model the result was read from (for text output).
	Model         *tune.Model       `json:"-"`
	Topology      string            `json:"topology"`
	Nodes         int               `json:"nodes"`
	NRanks        int               `json:"nranks"`
	NCCL          string            `json:"nccl"`
	Env           map[string]string `json:"env"`
	Problems      []Problem         `json:"problems"`
	CommNChannels int               `json:"comm_nchannels"`
	NVLSChannels  int               `json:"nvls_channels"`
	MaxThreads    map[string][]int  `json:"max_threads"`
	Thresholds    string            `json:"thread_thresholds"`
	Cells         []TuneCell        `json:"cells"`
	TableText     []string          `json:"tuning_log"`
	EnableMatrix  string            `json:"enable_matrix,omitempty"`
	Coll          string            `json:"coll"`
	Selection     []SelectionRow    `json:"selection"`
	Notes         []string          `json:"notes"`
}

// Tune answers the tuning question for req (system fields and Coll,
// default allreduce).
func (s *Service) Tune(ctx context.Context, req *Request) (*TuneResult, error) {
	b, f, choices, err := s.sweep(ctx, req)
	if err != nil {
		return nil, err
	}
	return newTuneResult(b, f, choices), nil
}

// sweep builds the model for req and NCCL's choice at every SweepSizes
// size for req.Coll.
func (s *Service) sweep(ctx context.Context, req *Request) (*built, tune.Func, []tune.Choice, error) {
	f, err := lookupColl(req.Coll, "allreduce")
	if err != nil {
		return nil, 0, nil, err
	}
	b, err := s.tuned(ctx, req)
	if err != nil {
		return nil, 0, nil, err
	}
	choices, err := b.res.Tune.Sweep(ctx, f, SweepSizes(), tune.Request{})
	if err != nil {
		return nil, 0, nil, selectField(b.res.Tune, err)
	}
	return b, f, choices, nil
}

// tuned builds (or reuses) the model for req and fails when the
// environment leaves no tuning model, naming the variable.
func (s *Service) tuned(ctx context.Context, req *Request) (*built, error) {
	b, err := s.build(ctx, req)
	if err != nil {
		return nil, err
	}
	if b.tuneErr != nil {
		return nil, tuneField(b.tuneErr)
	}
	if err := needsNetwork(b); err != nil {
		return nil, err
	}
	return b, nil
}

// needsNetwork refuses a job of several nodes on a host without a NET
// device. NCCL reaches other hosts only through a NET transport (an IB or
// socket device, which its topology lists as NET), so there every graph
// falls back to one channel at 0.1 GB/s (search.cc's last resort) and,
// from three nodes, no algorithm is usable at all: numbers for a network
// the topology does not have would only mislead. The topology question
// still answers, with that note.
func needsNetwork(b *built) error {
	if b.nodes <= 1 || len(b.host.sys.Nodes[topo.NET]) > 0 {
		return nil
	}
	return fieldErr("nodes", fmt.Sprintf("%d nodes need a network between them, and this topology has no NET device (no NIC): NCCL reaches other hosts only through its network transports (InfiniBand/RoCE or sockets). Use 1 node, or a topology that lists the hosts' NICs (NCCL_TOPO_DUMP_FILE on a real host writes one).", b.nodes))
}

// newTuneResult assembles the TuneResult of b for f from the sweep.
func newTuneResult(b *built, f tune.Func, choices []tune.Choice) *TuneResult {
	m := b.res.Tune
	rows := make([]SelectionRow, len(choices))
	for i, c := range choices {
		alg := c.AlgBwGBps()
		rows[i] = SelectionRow{c.NBytes, Prediction{Algo: c.Algo.String(), Proto: c.Proto.String(), NChannels: c.NChannels, NThreads: c.NThreads,
			TimeUs: float64(c.TimeUs), AlgBwGBps: alg, BusBwGBps: alg * tune.BusBwFactor(f, m.Sys.NRanks)}}
	}
	out := &TuneResult{
		Checked: b.checked(), Model: m,
		Topology: b.host.name, Nodes: b.nodes, NRanks: m.Sys.NRanks, NCCL: NCCLVersion,
		Env: envMap(b.env), Problems: problems(b.problems),
		CommNChannels: m.CommNChannels, NVLSChannels: m.NVLSChannels,
		MaxThreads: map[string][]int{}, Thresholds: m.ThresholdsLine(),
		TableText: m.TuningTableLines(), Coll: f.String(), Selection: rows,
		Notes: append([]string{}, b.res.Notes...),
	}
	if out.TableText == nil {
		out.TableText = []string{}
	}
	if s, ok := m.EnableMatrix(); ok {
		out.EnableMatrix = s
	}
	for a := tune.Algorithm(0); a < tune.NumAlgorithms; a++ {
		out.MaxThreads[a.String()] = m.MaxThreads[a][:]
	}
	for fn := tune.Func(0); fn < tune.NumFuncs; fn++ {
		for a := tune.Algorithm(0); a < tune.NumAlgorithms; a++ {
			for p := tune.Protocol(0); p < tune.NumProtocols; p++ {
				out.Cells = append(out.Cells, TuneCell{fn.String(), a.String(), p.String(),
					float64(m.Latencies[fn][a][p]), float64(m.Bandwidths[fn][a][p]), m.Bandwidths[fn][a][p] > 0})
			}
		}
	}
	return out
}

// TunePage is the algorithm page's answer: Result; the sweep sizes; the
// model's time of every usable algorithm × protocol at each size (null
// where unusable); the exact byte counts where NCCL's choice changes
// (found by bisection between sweep sizes); the winner band; the
// environment problems and the ncclsim line. The figures are "chart",
// "selection" (the choice per size) and "cells" (the collective's cells),
// each number with its formula.
type TunePage struct {
	Result     *TuneResult `json:"result"`
	Sizes      []uint64    `json:"sizes"`
	Curves     []Curve     `json:"curves"`
	Crossovers []Crossover `json:"crossovers"`
	Segments   []Segment   `json:"segments"`
	Problems   []Problem   `json:"problems"`
	Command    string      `json:"command"`
	ElapsedMs  float64     `json:"elapsed_ms"`
	Figures    []Figure    `json:"-"`
}

// Curve is the predicted time of one algorithm × protocol per sweep size.
type Curve struct {
	Algo   string     `json:"algo"`
	Proto  string     `json:"proto"`
	TimeUs []*float64 `json:"time_us"`
}

// Crossover is a size from which NCCL picks a different pair.
type Crossover struct {
	Bytes uint64 `json:"bytes"`
	From  string `json:"from"`
	To    string `json:"to"`
}

// Segment is one stretch of the winner band.
type Segment struct {
	From   uint64 `json:"from"`
	To     uint64 `json:"to"`
	Winner string `json:"winner"`
}

// TunePage answers the algorithm page for req.
func (s *Service) TunePage(ctx context.Context, req *Request) (*TunePage, error) {
	b, f, choices, err := s.sweep(ctx, req)
	if err != nil {
		return nil, err
	}
	m := b.res.Tune
	p := &TunePage{Result: newTuneResult(b, f, choices), Sizes: SweepSizes(), Curves: []Curve{}, Crossovers: []Crossover{}, Segments: []Segment{},
		Problems: problems(b.problems), Command: commandLine("tune", req, nil), ElapsedMs: float64(b.elapsed.Microseconds()) / 1000}
	// Curves: every pair some size can use.
	var pairs []pair
	for a := tune.Algorithm(0); a < tune.NumAlgorithms; a++ {
		for pr := tune.Protocol(0); pr < tune.NumProtocols; pr++ {
			for _, c := range choices {
				if c.Costs[a][pr] >= 0 {
					pairs = append(pairs, pair{a, pr})
					break
				}
			}
		}
	}
	for _, pr := range pairs {
		c := Curve{Algo: pr.a.String(), Proto: pr.p.String(), TimeUs: make([]*float64, len(choices))}
		for i, ch := range choices {
			if v := ch.Costs[pr.a][pr.p]; v >= 0 {
				t := float64(v)
				c.TimeUs[i] = &t
			}
		}
		p.Curves = append(p.Curves, c)
	}
	cross := crossovers(m, f, choices)
	for _, x := range cross {
		p.Crossovers = append(p.Crossovers, Crossover{x.bytes, x.from.String(), x.to.String()})
	}
	segs := segments(choices, cross)
	for _, sg := range segs {
		p.Segments = append(p.Segments, Segment{sg.from, sg.to, sg.p.String()})
	}
	p.Figures = []Figure{
		{"chart", tuneChart(m, f, pairs, choices, cross, segs)},
		{"selection", selectionTable(m, f, choices)},
		{"cells", cellsTable(m, f)},
	}
	return p, nil
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
func f32s(v float32) string { return jsonNumber(float64(v), 32) }

// f64s formats a float64 as JSON does.
func f64s(v float64) string { return jsonNumber(v, 64) }

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
