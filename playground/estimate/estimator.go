package estimate

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"

	"github.com/distributed-nav/distributed-nav/playground/model"
	"github.com/distributed-nav/distributed-nav/playground/tune"
)

// MaxBytes bounds the message sizes the estimator accepts (1 PiB).
const MaxBytes = uint64(1) << 50

// curveTop is the largest size at which the protocol switches are searched
// (16 TiB); beyond it the choice is taken as fixed.
const curveTop = uint64(1) << 44

// Prediction is one estimator's answer.
type Prediction struct {
	Algo      string  `json:"algo"`
	Proto     string  `json:"proto"`
	NChannels int     `json:"nchannels"`
	NThreads  int     `json:"nthreads"`
	TimeUs    float64 `json:"time_us"`
	AlgBwGBps float64 `json:"algbw_GBps"`
	BusBwGBps float64 `json:"busbw_GBps"`
}

// Calibrated is the calibrated prediction with the terms it is made of and
// the evidence behind it.
type Calibrated struct {
	Prediction
	Class Class `json:"class"`
	// LatencyUs is λ·L: the small-message floor of the chosen cell.
	LatencyUs float64 `json:"latency_us"`
	// PlateauBusBwGBps is η·B: the bus bandwidth large messages reach.
	PlateauBusBwGBps float64 `json:"plateau_busbw_GBps"`
	// RampBusBytes is ρ·n_a·k_p (RampRanks): the bus size at which the bandwidth reaches
	// 1 − 1/e (63 %) of the plateau; 0 when the class is on NCCL's own
	// model (ClassParams.NCCLModel), whose latency and bandwidth LatencyUs
	// and PlateauBusBwGBps then are.
	RampBusBytes float64 `json:"ramp_bus_bytes"`
	// Held is set when the time was raised to that of a smaller message
	// (HeldFromBytes): NCCL's protocol or algorithm switch there would
	// otherwise make the calibrated time drop, a sign that NCCL switches
	// earlier than this system rewards.
	Held          bool   `json:"held"`
	HeldFromBytes uint64 `json:"held_from_bytes,omitempty"`
	// Band is the busbw error observed on the class's datasets; BusBwLow
	// and BusBwHigh are the measured busbw the band allows (High is nil
	// when the band reaches 100 %).
	Band          Band     `json:"error_band"`
	BusBwLowGBps  float64  `json:"busbw_low_GBps"`
	BusBwHighGBps *float64 `json:"busbw_high_GBps"`
	// NDatasets is the number of datasets the class's efficiency was
	// fitted on, Datasets their ids, NSources the number of independent
	// sources (Dataset.SourceKey) among them; Support says in words how
	// solid the class's parameters are.
	NDatasets int      `json:"n_datasets"`
	Datasets  []string `json:"datasets"`
	NSources  int      `json:"n_sources"`
	Support   string   `json:"support"`
}

// Estimate is the answer to one request: NCCL's model and the calibrated
// estimator side by side.
type Estimate struct {
	Func   string     `json:"coll"`
	Bytes  uint64     `json:"bytes"`
	NRanks int        `json:"nranks"`
	NNodes int        `json:"nnodes"`
	Model  Prediction `json:"model"`
	// ModelLatencyUs and ModelBandwidthGBps are the chosen cell of NCCL's
	// tables (µs, algorithm bandwidth in GB/s).
	ModelLatencyUs     float64 `json:"model_latency_us"`
	ModelBandwidthGBps float64 `json:"model_bandwidth_GBps"`
	// Costs is the cost table NCCL compared (indexed [algorithm][protocol],
	// -1 for unusable cells).
	Costs      [tune.NumAlgorithms][tune.NumProtocols]float32 `json:"costs"`
	Calibrated Calibrated                                     `json:"calibrated"`
}

// System is a built communicator with the calibration applied: the cheap
// object every estimate goes through. It is safe for concurrent use.
type System struct {
	res    *model.Result
	route  Routing
	cal    *Calibration
	params map[Class]ClassParams
	ps     *paramSet

	mu     sync.Mutex
	curves map[curveKey]*curve
}

// NewSystem prepares estimates for the communicator res. fabric chooses the
// network class of multi-node jobs (FabricAuto guesses from NIC names).
func NewSystem(res *model.Result, fabric Fabric, cal *Calibration) (*System, error) {
	if res == nil || res.Tune == nil {
		return nil, fmt.Errorf("estimate: no model")
	}
	if cal == nil {
		return nil, fmt.Errorf("estimate: no calibration")
	}
	if err := cal.check(); err != nil {
		return nil, fmt.Errorf("estimate: %w", err)
	}
	rt, err := Route(res, fabric)
	if err != nil {
		return nil, fmt.Errorf("estimate: %w", err)
	}
	s := &System{res: res, route: rt, cal: cal, params: map[Class]ClassParams{}, curves: map[curveKey]*curve{}}
	for _, cp := range cal.Classes {
		s.params[cp.Class] = cp
	}
	s.ps = paramSetOf(cal)
	return s, nil
}

// Model returns NCCL's tuning model of the communicator.
func (s *System) Model() *tune.Model { return s.res.Tune }

// Result returns the built communicator.
func (s *System) Result() *model.Result { return s.res }

// Routing returns the path class of every algorithm.
func (s *System) Routing() Routing { return s.route }

// Calibration returns the calibration in use.
func (s *System) Calibration() *Calibration { return s.cal }

// cell holds the model terms of one (algorithm, protocol) cell for one
// function: latency L (µs) and bus bandwidth B (GB/s).
type cell struct {
	a   tune.Algorithm
	p   tune.Protocol
	lat float64
	bus float64
}

func (s *System) cellOf(f tune.Func, a tune.Algorithm, p tune.Protocol, pipeOps int) cell {
	return cellFor(s.res.Tune, f, a, p, pipeOps)
}

// cellFor reads cell (a, p) of function f from NCCL's tables: the latency
// is the model's latency term for large messages (latency × latCount, with
// the multi-node ring Simple AllReduce factor NCCL applies once a rank's
// share of a channel reaches 64 bytes, tuning.cc ncclTopoGetAlgoTime: with
// every parameter at its bound the calibrated latency is NCCL's) and the
// bus bandwidth the model's algorithm bandwidth times nccl-tests' bus
// factor (callers apply the routing's link factor). In one node a ring
// AllGather or ReduceScatter takes the latency of the AllReduce cell
// (latencyFunc).
func cellFor(m *tune.Model, f tune.Func, a tune.Algorithm, p tune.Protocol, pipeOps int) cell {
	return cell{a: a, p: p,
		lat: float64(m.LatencyTime(latencyFunc(m, f, a, p), a, p, math.MaxUint64, pipeOps)),
		bus: float64(m.Bandwidths[f][a][p]) * BusBwFactor(f, m.Sys.NRanks)}
}

// latencyFunc is the collective whose latency term the calibrated cell (a,
// p) of f starts from. NCCL counts n-1 ring steps for AllGather and
// ReduceScatter against 2(n-1) for AllReduce (tuning.cc:289-291), each at
// the link's hwLatencies; but in one node the measured small-message floor
// of AllGather and ReduceScatter is that of AllReduce on the same
// communicator (data/measurements/README.md, change 9: 34.8/34.8 against
// 35.4 µs on the togethercomputer NVSwitch H100s, 16.9/18.4 against 16.9
// on the Snellius NVLink board, 14.5/18.9 against 17.0 on the RTX 4090
// SHM pair, where NCCL's model gives AllGather 10.8, 8.4 and 7.6 against
// 15.0, 10.2 and 8.6), so there the ring's latency is AllReduce's and λ
// scales one latency for the three. Across nodes each network step does
// cost (AllGather's floor is below AllReduce's on the two-node Snellius and
// Polaris runs), and NCCL's own term is kept.
func latencyFunc(m *tune.Model, f tune.Func, a tune.Algorithm, p tune.Protocol) tune.Func {
	if m.Sys.NNodes == 1 && a == tune.Ring && (f == tune.AllGather || f == tune.ReduceScatter) &&
		m.Bandwidths[tune.AllReduce][a][p] > 0 {
		return tune.AllReduce
	}
	return f
}

// terms are the calibrated parameters resolved for one cell.
type terms struct {
	lat, plateau, ramp, gamma float64
}

func (s *System) termsOf(c cell) (terms, Class, error) {
	cl := s.route.Algo[c.a]
	if cl == "" {
		return terms{}, "", errNoClass
	}
	if _, ok := s.params[cl]; !ok {
		return terms{}, cl, fmt.Errorf("calibration has no class %q", cl)
	}
	return s.ps.terms(c, &s.route, s.res.Tune.Sys.NRanks), cl, nil
}

// Default per-channel buffer sizes of NCCL's protocols
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/init.cc#L810-L813):
// LL 8 lines × 512 threads × 8 steps × 16 bytes, LL128 120 elements × 640
// threads × 8 steps × 8 bytes, Simple 4 MiB.
const (
	buffSizeLL     = 8 * 512 * 8 * 16
	buffSizeLL128  = 120 * 640 * 8 * 8
	buffSizeSimple = 1 << 22
)

// RampScale is the ratio of protocol p's buffer to Simple's: the pipeline
// of a protocol with smaller buffers fills with smaller messages, so its
// ramp scale shrinks in proportion.
func RampScale(p tune.Protocol) float64 {
	switch p {
	case tune.LL:
		return buffSizeLL / float64(buffSizeSimple)
	case tune.LL128:
		return buffSizeLL128 / float64(buffSizeSimple)
	}
	return 1
}

// calTime is the calibrated time (µs) of bus bytes sbus with terms t.
func calTime(t terms, sbus float64) float64 {
	if sbus <= 0 || t.plateau <= 0 {
		return t.lat
	}
	return t.lat + sbus/(1e3*t.plateau)/(-math.Expm1(-math.Pow(sbus/t.ramp, t.gamma)))
}

// Estimate answers one request; req.NBytes is nccl-tests' size (the whole
// buffer for AllGather and ReduceScatter, as NCCL's own nBytes).
func (s *System) Estimate(req tune.Request) (Estimate, error) {
	if req.NBytes > MaxBytes {
		return Estimate{}, fmt.Errorf("estimate: %d bytes exceeds the limit of %d", req.NBytes, MaxBytes)
	}
	cv, err := s.curveFor(req)
	if err != nil {
		return Estimate{}, err
	}
	return s.estimate(req, cv)
}

// Sweep estimates every size of sizes for the request template tmpl.
func (s *System) Sweep(ctx context.Context, f tune.Func, sizes []uint64, tmpl tune.Request) ([]Estimate, error) {
	tmpl.Func = f
	cv, err := s.curveFor(tmpl)
	if err != nil {
		return nil, err
	}
	out := make([]Estimate, 0, len(sizes))
	for _, n := range sizes {
		if err := ctx.Err(); err != nil {
			return out, fmt.Errorf("sweep: %w", err)
		}
		if n > MaxBytes {
			return out, fmt.Errorf("sweep: %d bytes exceeds the limit of %d", n, MaxBytes)
		}
		tmpl.NBytes = n
		e, err := s.estimate(tmpl, cv)
		if err != nil {
			return out, err
		}
		out = append(out, e)
	}
	return out, nil
}

func (s *System) estimate(req tune.Request, cv *curve) (Estimate, error) {
	m := s.res.Tune
	c, err := m.Select(req)
	if err != nil {
		return Estimate{}, fmt.Errorf("estimate: %w", err)
	}
	n := m.Sys.NRanks
	bf := BusBwFactor(req.Func, n)
	e := Estimate{Func: req.Func.String(), Bytes: req.NBytes, NRanks: n, NNodes: m.Sys.NNodes, Costs: c.Costs,
		ModelLatencyUs:     float64(m.Latencies[req.Func][c.Algo][c.Proto]),
		ModelBandwidthGBps: float64(m.Bandwidths[req.Func][c.Algo][c.Proto])}
	e.Model = Prediction{Algo: c.Algo.String(), Proto: c.Proto.String(), NChannels: c.NChannels, NThreads: c.NThreads,
		TimeUs: float64(c.TimeUs)}
	e.Model.AlgBwGBps = AlgBwGBps(req.NBytes, e.Model.TimeUs)
	e.Model.BusBwGBps = e.Model.AlgBwGBps * bf
	cal := Calibrated{Prediction: e.Model}
	if n <= 1 {
		// One rank moves nothing: NCCL's own cost is zero.
		cal.Support = "single rank: no communication"
		e.Calibrated = cal
		return e, nil
	}
	ce := s.cellOf(req.Func, c.Algo, c.Proto, req.NumPipeOps)
	t, cl, err := s.termsOf(ce)
	if err != nil {
		return Estimate{}, fmt.Errorf("estimate: %w", err)
	}
	sbus := float64(req.NBytes) * bf
	cp := s.params[cl]
	tc := calTime(t, sbus)
	if cp.NCCLModel != "" {
		tc = e.Model.TimeUs
	}
	if i := cv.segment(req.NBytes); i >= 0 && cv.prefMax[i] > tc {
		tc, cal.Held, cal.HeldFromBytes = cv.prefMax[i], true, cv.prefFrom[i]
	}
	cal.Class = cl
	cal.TimeUs = tc
	cal.AlgBwGBps = AlgBwGBps(req.NBytes, tc)
	cal.BusBwGBps = cal.AlgBwGBps * bf
	cal.LatencyUs = t.lat
	cal.PlateauBusBwGBps = t.plateau
	cal.RampBusBytes = t.ramp
	cal.Band = cp.Band
	bw := cp.bandwidthParamFor(shmGen5(s.route.Hops[c.Algo]))
	cal.Datasets = append([]string(nil), bw.Datasets...)
	cal.NDatasets = len(cal.Datasets)
	cal.NSources = s.cal.sourcesOf(cal.Datasets)
	cal.Support = supportText(cp, bw, cal.NSources)
	if cp.NCCLModel != "" {
		// NCCL's own terms: its latency and bandwidth, no ramp.
		cal.Support = cp.NCCLModel
		cal.LatencyUs, cal.PlateauBusBwGBps, cal.RampBusBytes = e.ModelLatencyUs, e.ModelBandwidthGBps*bf, 0
	}
	e.Calibrated = applyBand(cal)
	return e, nil
}

// Contains reports whether a measured busbw lies inside the band drawn
// around an estimate: estimate/(1 + over) <= measured <= estimate/(1 -
// under).
func (b Band) Contains(estimate, measured float64) bool {
	lo := estimate / (1 + b.OverPct/100)
	if measured < lo*(1-1e-9) {
		return false
	}
	if u := b.UnderPct / 100; u < 1 {
		return measured <= estimate/(1-u)*(1+1e-9)
	}
	return true
}

// applyBand fills the busbw range that the class's observed errors allow:
// with estimate = measured * (1 + x) and x between -UnderPct/100 and
// OverPct/100, measured lies between estimate/(1 + over) and
// estimate/(1 - under). The upper end is nil only if a band were to claim
// an under-estimate of 100 % or more, which positive busbw values exclude.
func applyBand(c Calibrated) Calibrated {
	over, under := c.Band.OverPct/100, c.Band.UnderPct/100
	c.BusBwLowGBps = c.BusBwGBps / (1 + over)
	if under < 1 {
		hi := c.BusBwGBps / (1 - under)
		c.BusBwHighGBps = &hi
	}
	return c
}

// shmGen5 reports whether one of hops is an SHM hop over GPU links of
// PCIe Gen5 x16 or faster, whose plateau the Gen5 host staging rate sets.
func shmGen5(hops []Hop) bool {
	for _, h := range hops {
		if (h.Class == ClassSHM || h.Class == ClassSHMXSocket) && shmLink(h) >= Gen5LinkGBps {
			return true
		}
	}
	return false
}

// supportText says how solid a class's parameters are; bw is the
// parameter that sets the cell's plateau and nsrc the number of
// independent sources among its datasets.
func supportText(cp ClassParams, bw Param, nsrc int) string {
	n := len(bw.Datasets)
	band := ""
	if cp.Band.Points > 0 {
		band = fmt.Sprintf("; the band spans %g%% of the errors on %d points of %d sources predicted without their own source", 100*(BandQuantileHigh-BandQuantileLow), cp.Band.Points, cp.Band.Sources)
	}
	switch {
	case n == 0:
		return "no measurement of this class: the physical bound with default efficiency, treat the calibrated value as a guess" + band
	case bw.Source == "bound" || bw.Source == "default":
		return fmt.Sprintf("one independent source (%d dataset(s): %s) has %s runs, fewer than the %d a fitted bandwidth needs: the physical bound is used, treat the calibrated value as a guess", n, strings.Join(bw.Datasets, ", "), cp.Class, MinShapeSources) + band
	case nsrc <= 1:
		return fmt.Sprintf("one independent source (%d dataset(s): %s) supports the %s bandwidth: unproven on other systems", n, strings.Join(bw.Datasets, ", "), cp.Class) + band
	}
	return fmt.Sprintf("%d datasets from %d independent sources support the %s bandwidth", n, nsrc, cp.Class) + band
}

// curveKey identifies the selection inputs of a curve.
type curveKey struct {
	f    tune.Func
	dt   tune.Datatype
	op   tune.Op
	pipe int
}

// curve records where NCCL's choice changes with the message size and, per
// segment, the largest calibrated time of all smaller messages.
type curve struct {
	starts   []uint64 // first size of each segment, ascending, starts[0] = 0
	prefMax  []float64
	prefFrom []uint64
}

// segment returns the index of the segment holding size n.
func (c *curve) segment(n uint64) int {
	return sort.Search(len(c.starts), func(i int) bool { return c.starts[i] > n }) - 1
}

func (s *System) curveFor(req tune.Request) (*curve, error) {
	if !req.Func.Valid() {
		return nil, fmt.Errorf("estimate: invalid collective %d", int(req.Func))
	}
	k := curveKey{req.Func, req.Datatype, req.Op, max(req.NumPipeOps, 1)}
	s.mu.Lock()
	defer s.mu.Unlock()
	if cv, ok := s.curves[k]; ok {
		return cv, nil
	}
	cv, err := s.buildCurve(req)
	if err != nil {
		return nil, err
	}
	s.curves[k] = cv
	return cv, nil
}

// pick is one (algorithm, protocol) choice.
type pick struct {
	a tune.Algorithm
	p tune.Protocol
}

// segmentsOf returns the first size of every range of constant
// (algorithm, protocol) choice for req up to curveTop (starts[0] = 0) and
// the choice in it.
func segmentsOf(m *tune.Model, req tune.Request) ([]uint64, []pick, error) {
	segs, err := Segments(m, req, curveTop)
	if err != nil {
		return nil, nil, fmt.Errorf("estimate: %w", err)
	}
	var starts []uint64
	var picks []pick
	for _, sg := range segs {
		pk := pick{sg.Algo, sg.Proto}
		if len(picks) > 0 && picks[len(picks)-1] == pk {
			continue
		}
		starts, picks = append(starts, sg.MinBytes), append(picks, pk)
	}
	return starts, picks, nil
}

// buildCurve finds the segments of req and accumulates the running maximum
// of the calibrated time at each segment's last size.
func (s *System) buildCurve(req tune.Request) (*curve, error) {
	m := s.res.Tune
	cv := &curve{starts: []uint64{0}, prefMax: []float64{0}, prefFrom: []uint64{0}}
	if m.Sys.NRanks <= 1 {
		return cv, nil
	}
	starts, picks, err := segmentsOf(m, req)
	if err != nil {
		return nil, err
	}
	cv.starts = starts
	bf := BusBwFactor(req.Func, m.Sys.NRanks)
	for i := 1; i < len(starts); i++ {
		end := starts[i] - 1 // last size of segment i-1
		ce := s.cellOf(req.Func, picks[i-1].a, picks[i-1].p, req.NumPipeOps)
		t, cl, err := s.termsOf(ce)
		if err != nil {
			return nil, fmt.Errorf("estimate: %w", err)
		}
		tEnd := calTime(t, float64(end)*bf)
		if s.params[cl].NCCLModel != "" {
			// The class takes NCCL's own time (ClassParams.NCCLModel).
			r := req
			r.NBytes = end
			ch, err := m.Select(r)
			if err != nil {
				return nil, fmt.Errorf("estimate: %w", err)
			}
			tEnd = float64(ch.TimeUs)
		}
		pm, pf := cv.prefMax[i-1], cv.prefFrom[i-1]
		if tEnd > pm {
			pm, pf = tEnd, end
		}
		cv.prefMax = append(cv.prefMax, pm)
		cv.prefFrom = append(cv.prefFrom, pf)
	}
	return cv, nil
}
