package estimate

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/model"
	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
	"github.com/distributed-nav/distributed-nav/playground/presets"
	"github.com/distributed-nav/distributed-nav/playground/tune"
)

// Regimes that decide which parameters a dataset can constrain.
const (
	// PlateauMinBytes: rows at least this large constrain the efficiency.
	PlateauMinBytes = 64 << 20
	// LatencyMaxBytes: rows at most this large constrain the latency factor.
	LatencyMaxBytes = 64 << 10
	// RampMinBytes and RampMaxBytes bound the rows that constrain the ramp.
	RampMinBytes = 1 << 20
	RampMaxBytes = 256 << 20
	// BandMinBytes is the smallest size counted in error bands and in
	// Validate's summary.
	BandMinBytes = 1 << 20
	// minRegimeRows is how many rows a regime needs before a dataset
	// counts as constraining the parameter.
	minRegimeRows = 3
)

// Parameter names as they appear in the calibration file.
const (
	paramEfficiency = "efficiency"
	paramLatency    = "latency_factor"
	paramRamp       = "ramp_bytes_per_rank"
)

// Builder builds the communicator a dataset ran on.
type Builder func(ctx context.Context, ref SystemRef) (*model.Result, error)

// BuildPreset builds ref from the embedded presets with ref's environment.
func BuildPreset(ctx context.Context, ref SystemRef) (*model.Result, error) {
	p, err := presets.Get(ref.Preset)
	if err != nil {
		return nil, fmt.Errorf("build %s: %w", ref.Preset, err)
	}
	host, _, err := p.System()
	if err != nil {
		return nil, fmt.Errorf("build %s: %w", ref.Preset, err)
	}
	res, err := model.Build(ctx, host, ref.Nodes, ncclenv.New(ref.Env))
	if err != nil {
		return nil, fmt.Errorf("build %s x%d: %w", ref.Preset, ref.Nodes, err)
	}
	return res, nil
}

// CachedBuilder wraps b so that identical system references are built once.
// The cache lives as long as the returned function.
func CachedBuilder(b Builder) Builder {
	cache := map[string]*model.Result{}
	return func(ctx context.Context, ref SystemRef) (*model.Result, error) {
		keys := make([]string, 0, len(ref.Env))
		for k, v := range ref.Env {
			keys = append(keys, k+"="+v)
		}
		sort.Strings(keys)
		key := fmt.Sprintf("%s|%d|%s", ref.Preset, ref.Nodes, strings.Join(keys, ","))
		if r, ok := cache[key]; ok {
			return r, nil
		}
		r, err := b(ctx, ref)
		if err != nil {
			return nil, err
		}
		cache[key] = r
		return r, nil
	}
}

// FabricOf maps a dataset's fabric to the estimator's.
func FabricOf(ref SystemRef) Fabric {
	switch ref.Fabric {
	case "ib", "roce":
		return FabricRDMA
	case "tcp":
		return FabricTCP
	}
	return FabricAuto
}

// prepared is a dataset with every row's model terms worked out; the
// calibration parameters are all that is left to apply.
type prepared struct {
	d     *Dataset
	f     tune.Func
	n     int
	bf    float64
	route Routing
	// segs are the segments of constant choice and their last sizes.
	segs []pseg
	rows []prow
	// class is the class of the choice for the largest row.
	class Class
}

type pseg struct {
	c   cell
	end uint64 // last size of the segment (MaxUint64 for the last)
}

type prow struct {
	bytes  uint64
	tMeas  float64
	busbw  float64 // printed busbw
	c      cell
	seg    int
	model  float64 // NCCL's model time (µs)
	mAlgo  tune.Algorithm
	mProto tune.Protocol
}

func prepare(ctx context.Context, d *Dataset, build Builder) (*prepared, error) {
	res, err := build(ctx, d.System)
	if err != nil {
		return nil, fmt.Errorf("dataset %s: %w", d.ID, err)
	}
	m := res.Tune
	if m.Sys.NRanks != d.NRanks() {
		return nil, fmt.Errorf("dataset %s: preset %s x%d has %d ranks, the run %d", d.ID, d.System.Preset, d.System.Nodes, m.Sys.NRanks, d.NRanks())
	}
	rt, err := Route(res, FabricOf(d.System))
	if err != nil {
		return nil, fmt.Errorf("dataset %s: %w", d.ID, err)
	}
	f, err := d.Func()
	if err != nil {
		return nil, err
	}
	dt, err := d.Datatype()
	if err != nil {
		return nil, err
	}
	req := tune.Request{Func: f, Datatype: dt}
	starts, picks, err := segmentsOf(m, req)
	if err != nil {
		return nil, fmt.Errorf("dataset %s: %w", d.ID, err)
	}
	p := &prepared{d: d, f: f, n: m.Sys.NRanks, bf: BusBwFactor(f, m.Sys.NRanks), route: rt}
	for i, pk := range picks {
		end := uint64(math.MaxUint64)
		if i+1 < len(starts) {
			end = starts[i+1] - 1
		}
		c := cellFor(m, f, pk.a, pk.p, 1)
		c.bus *= rt.LinkFactor[pk.a]
		p.segs = append(p.segs, pseg{c: c, end: end})
	}
	for _, r := range d.Rows {
		if r.Bytes == 0 {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("dataset %s: %w", d.ID, err)
		}
		req.NBytes = r.Bytes
		c, err := m.Select(req)
		if err != nil {
			return nil, fmt.Errorf("dataset %s, %d bytes: %w", d.ID, r.Bytes, err)
		}
		seg := sort.Search(len(starts), func(i int) bool { return starts[i] > r.Bytes }) - 1
		ce := cellFor(m, f, c.Algo, c.Proto, 1)
		ce.bus *= rt.LinkFactor[c.Algo]
		p.rows = append(p.rows, prow{bytes: r.Bytes, tMeas: r.TimeUs, busbw: r.BusBwGBps,
			c: ce, seg: seg, model: float64(c.TimeUs), mAlgo: c.Algo, mProto: c.Proto})
	}
	if len(p.rows) == 0 {
		return nil, fmt.Errorf("dataset %s: no row with a positive size", d.ID)
	}
	p.class = rt.Algo[p.rows[len(p.rows)-1].c.a]
	return p, nil
}

// classIndex numbers the classes for the parameter arrays.
func classIndex(c Class) int { return c.slowness() }

// paramSet holds one value of every parameter, indexed by classIndex.
type paramSet struct {
	eff, lam, rho, gamma [6]float64
}

func (ps *paramSet) terms(c cell, cl Class, n int) terms {
	i := classIndex(cl)
	return terms{lat: ps.lam[i] * c.lat, plateau: ps.eff[i] * c.bus, ramp: ps.rho[i] * float64(n) * RampScale(c.p), gamma: ps.gamma[i]}
}

// predict fills out with the calibrated time of every row under ps,
// including the hold at segment boundaries.
func (p *prepared) predict(ps *paramSet, out []float64) {
	prefMax := make([]float64, len(p.segs))
	for i := 1; i < len(p.segs); i++ {
		prev := p.segs[i-1]
		t := calTime(ps.terms(prev.c, p.route.Algo[prev.c.a], p.n), float64(prev.end)*p.bf)
		prefMax[i] = math.Max(prefMax[i-1], t)
	}
	for i, r := range p.rows {
		t := calTime(ps.terms(r.c, p.route.Algo[r.c.a], p.n), float64(r.bytes)*p.bf)
		if r.seg >= 0 && r.seg < len(prefMax) && prefMax[r.seg] > t {
			t = prefMax[r.seg]
		}
		out[i] = t
	}
}

// constrains reports which parameters of class cl the dataset has data for.
func (p *prepared) constrains(cl Class) map[string]bool {
	var plateau, small, ramp int
	for _, r := range p.rows {
		if p.route.Algo[r.c.a] != cl {
			continue
		}
		switch {
		case r.bytes >= PlateauMinBytes:
			plateau++
		}
		if r.bytes <= LatencyMaxBytes {
			small++
		}
		if r.bytes >= RampMinBytes && r.bytes <= RampMaxBytes {
			ramp++
		}
	}
	return map[string]bool{paramEfficiency: plateau > 0, paramLatency: small >= minRegimeRows, paramRamp: ramp >= minRegimeRows}
}

// softL1 is the robust loss applied to the log error: quadratic below
// delta, linear above, so that one noisy row cannot dominate a fit.
func softL1(e, delta float64) float64 {
	z := e / delta
	return 2 * delta * delta * (math.Sqrt(1+z*z) - 1)
}

const lossDelta = 0.1

// objective is the fit's loss: every dataset weighs the same, every row of
// a dataset the same, and each row contributes softL1(log(predicted time /
// measured time)).
func objective(sets []*prepared, ps *paramSet, buf [][]float64) float64 {
	var total float64
	for k, p := range sets {
		p.predict(ps, buf[k])
		var s float64
		for i, r := range p.rows {
			s += softL1(math.Log(buf[k][i]/r.tMeas), lossDelta)
		}
		total += s / float64(len(p.rows))
	}
	return total
}

// FitObjective describes the fit in words (written to the calibration).
const FitObjective = "minimise over the fitted datasets, each weighing the same and each of its rows the same, the soft-L1 loss (delta 0.1) of log(calibrated time / measured out-of-place time); every class fits its own efficiency, and its latency factor and ramp (scale and gamma) where its datasets have rows in that regime (latency: >= 3 rows <= 64 KiB; ramp: >= 3 rows in 1-256 MiB; efficiency: a row >= 64 MiB); classes without such rows take the mean of the classes that have them; bounds: efficiency 0.01-4, latency factor 0.25-20, ramp 1 KiB-256 MiB per rank, gamma 0.5-1 (more gradual ramps would put the plateaus above line rate)"

// Formula is the calibrated model in one line.
const Formula = "t = lambda*L(a,p) + Sbus/(eta*B(a,p)) / (1 - exp(-(Sbus/(rho*n*k_p))^gamma)), Sbus = size*busfactor; L, B: NCCL's latency and bus bandwidth of the chosen cell (a,p); k_p: protocol buffer / Simple buffer; never below the time of a smaller message"

// Fit fits the calibration on the datasets marked fit and measures the
// error bands on all of them. The result is deterministic.
func Fit(ctx context.Context, sets []*Dataset, build Builder) (*Calibration, error) {
	var all, fitted []*prepared
	for _, d := range sets {
		p, err := prepare(ctx, d, build)
		if err != nil {
			return nil, err
		}
		all = append(all, p)
		if d.Fit {
			fitted = append(fitted, p)
		}
	}
	if len(fitted) == 0 {
		return nil, fmt.Errorf("fit: no dataset is marked fit")
	}
	// Which datasets constrain what.
	type support struct{ eff, lam, rho []string }
	sup := map[Class]*support{}
	for _, c := range Classes() {
		sup[c] = &support{}
	}
	var poolLam, poolRho []string
	for _, p := range fitted {
		for _, c := range Classes() {
			k := p.constrains(c)
			if k[paramEfficiency] {
				sup[c].eff = append(sup[c].eff, p.d.ID)
			}
			if k[paramLatency] {
				sup[c].lam = append(sup[c].lam, p.d.ID)
				poolLam = append(poolLam, p.d.ID)
			}
			if k[paramRamp] {
				sup[c].rho = append(sup[c].rho, p.d.ID)
				poolRho = append(poolRho, p.d.ID)
			}
		}
	}
	poolLam, poolRho = uniq(poolLam), uniq(poolRho)

	// Starting point: efficiency from the largest rows, λ 1.5, ρ 1 MiB,
	// γ 0.75.
	ps := &paramSet{}
	for i := range ps.eff {
		ps.eff[i], ps.lam[i], ps.rho[i], ps.gamma[i] = 1, 1.5, 1<<20, 0.75
	}
	for _, c := range Classes() {
		var ratios []float64
		for _, p := range fitted {
			for _, r := range p.rows {
				if r.bytes >= PlateauMinBytes && p.route.Algo[r.c.a] == c && r.c.bus > 0 {
					ratios = append(ratios, float64(r.bytes)*p.bf/r.tMeas/1e3/r.c.bus)
				}
			}
		}
		if len(ratios) > 0 {
			ps.eff[classIndex(c)] = median(ratios)
		}
	}
	// The classes are independent: each is fitted on the datasets that
	// touch it. Classes with their own latency or ramp rows go first; the
	// others then take the pooled values (geometric mean of λ and ρ,
	// arithmetic mean of γ over the classes that fitted them).
	var lams, rhos, gammas []float64
	lamPool, rhoPool, gammaPool := 1.5, float64(1<<20), 0.75
	for pass := 0; pass < 2; pass++ {
		if pass == 1 {
			lamPool, rhoPool, gammaPool = geomean(lams, lamPool), geomean(rhos, rhoPool), mean(gammas, gammaPool)
			for _, c := range Classes() {
				ci := classIndex(c)
				if len(sup[c].lam) == 0 {
					ps.lam[ci] = lamPool
				}
				if len(sup[c].rho) == 0 {
					ps.rho[ci], ps.gamma[ci] = rhoPool, gammaPool
				}
			}
		}
		for _, c := range Classes() {
			own := len(sup[c].lam) > 0 || len(sup[c].rho) > 0
			if len(sup[c].eff) == 0 || own != (pass == 0) {
				continue
			}
			if _, err := fitClass(ctx, fitted, ps, c, len(sup[c].lam) > 0, len(sup[c].rho) > 0); err != nil {
				return nil, err
			}
			ci := classIndex(c)
			if len(sup[c].lam) > 0 {
				lams = append(lams, ps.lam[ci])
			}
			if len(sup[c].rho) > 0 {
				rhos, gammas = append(rhos, ps.rho[ci]), append(gammas, ps.gamma[ci])
			}
		}
	}

	// Assemble the calibration with rounded values.
	cal := &Calibration{Version: CalibrationVersion, Formula: Formula, NCCLModel: "v2.30.7-1", Objective: FitObjective}
	sources := map[string]string{}
	for _, p := range all {
		sources[p.d.ID] = p.d.Source.URL + "|" + p.d.Source.Title
	}
	for _, c := range Classes() {
		ci := classIndex(c)
		cp := ClassParams{Class: c}
		if len(sup[c].eff) > 0 {
			cp.Efficiency = Param{Value: round4(ps.eff[ci]), Source: "fitted", Datasets: sup[c].eff, Note: supportNote(sup[c].eff, sources) + effBox.boundNote(ps.eff[ci])}
		} else {
			cp.Efficiency = Param{Value: 1, Source: "default", Datasets: []string{}, Note: "no dataset of this class: NCCL's own bandwidth is used"}
		}
		if len(sup[c].lam) > 0 {
			cp.LatencyFactor = Param{Value: round4(ps.lam[ci]), Source: "fitted", Datasets: sup[c].lam, Note: supportNote(sup[c].lam, sources) + lamBox.boundNote(ps.lam[ci])}
		} else {
			cp.LatencyFactor = Param{Value: round4(lamPool), Source: "pooled", Datasets: poolLam, Note: "no small-message rows of this class: the geometric mean of the classes that have them"}
		}
		if len(sup[c].rho) > 0 {
			cp.RampBytesPerRank = Param{Value: round4(ps.rho[ci]), Source: "fitted", Datasets: sup[c].rho, Note: supportNote(sup[c].rho, sources) + rhoBox.boundNote(ps.rho[ci])}
			cp.RampGamma = Param{Value: round4(ps.gamma[ci]), Source: "fitted", Datasets: sup[c].rho, Note: supportNote(sup[c].rho, sources) + gammaBox.boundNote(ps.gamma[ci])}
		} else {
			cp.RampBytesPerRank = Param{Value: round4(rhoPool), Source: "pooled", Datasets: poolRho, Note: "no mid-size rows of this class: the geometric mean of the classes that have them"}
			cp.RampGamma = Param{Value: round4(gammaPool), Source: "pooled", Datasets: poolRho, Note: "no mid-size rows of this class: the mean of the classes that have them"}
		}
		cal.Classes = append(cal.Classes, cp)
	}
	for _, p := range all {
		use := DatasetUse{ID: p.d.ID, Class: p.class, Fitted: p.d.Fit, Reason: p.d.FitReason, Constrains: []string{}}
		k := p.constrains(p.class)
		for _, name := range []string{paramEfficiency, paramLatency, paramRamp} {
			if k[name] {
				use.Constrains = append(use.Constrains, name)
			}
		}
		cal.Datasets = append(cal.Datasets, use)
	}
	// Error bands, measured with the rounded parameters on every dataset.
	if err := cal.check(); err != nil {
		return nil, fmt.Errorf("fit: %w", err)
	}
	fin := paramSetOf(cal)
	errs := map[Class][]float64{}
	dsets := map[Class]map[string]bool{}
	for _, p := range all {
		out := make([]float64, len(p.rows))
		p.predict(fin, out)
		for i, r := range p.rows {
			if r.bytes < BandMinBytes || r.busbw <= 0 {
				continue
			}
			c := p.route.Algo[r.c.a]
			bus := AlgBwGBps(r.bytes, out[i]) * p.bf
			errs[c] = append(errs[c], 100*(bus-r.busbw)/r.busbw)
			if dsets[c] == nil {
				dsets[c] = map[string]bool{}
			}
			dsets[c][p.d.ID] = true
		}
	}
	for i := range cal.Classes {
		c := cal.Classes[i].Class
		e := errs[c]
		b := Band{MinBytes: BandMinBytes, Datasets: len(dsets[c]), Points: len(e)}
		if len(e) > 0 {
			abs := make([]float64, len(e))
			for k, v := range e {
				abs[k] = math.Abs(v)
				b.OverPct = max(b.OverPct, v)
				b.UnderPct = max(b.UnderPct, -v)
			}
			b.MedianPct = round4(median(abs))
			b.MaxPct = round4(maxOf(abs))
			b.OverPct, b.UnderPct = round4(b.OverPct), round4(b.UnderPct)
		}
		cal.Classes[i].Band = b
	}
	return cal, nil
}

// fitClass fits class c's efficiency (and its latency factor and ramp
// when freeLam, freeRho) on the datasets with rows of class c, updating ps;
// it returns the loss over those datasets.
func fitClass(ctx context.Context, fitted []*prepared, ps *paramSet, c Class, freeLam, freeRho bool) (float64, error) {
	ci := classIndex(c)
	var touching []*prepared
	var buf [][]float64
	for _, p := range fitted {
		for _, r := range p.rows {
			if p.route.Algo[r.c.a] == c {
				touching = append(touching, p)
				buf = append(buf, make([]float64, len(p.rows)))
				break
			}
		}
	}
	apply := func(x []float64, q *paramSet) {
		q.eff[ci] = effBox.of(x[0])
		k := 1
		if freeLam {
			q.lam[ci] = lamBox.of(x[k])
			k++
		}
		if freeRho {
			q.rho[ci] = rhoBox.of(x[k])
			q.gamma[ci] = gammaBox.of(x[k+1])
		}
	}
	x := []float64{effBox.inv(ps.eff[ci])}
	if freeLam {
		x = append(x, lamBox.inv(ps.lam[ci]))
	}
	if freeRho {
		x = append(x, rhoBox.inv(ps.rho[ci]), gammaBox.inv(ps.gamma[ci]))
	}
	f := func(x []float64) float64 {
		q := *ps
		apply(x, &q)
		return objective(touching, &q, buf)
	}
	xb, loss, err := minimize(ctx, f, x, 0.5, 1e-12, 5000)
	if err != nil {
		return 0, err
	}
	apply(xb, ps)
	return loss, nil
}

// geomean is the geometric mean of v, or def when v is empty.
// mean is the arithmetic mean of v, or def when v is empty.
func mean(v []float64, def float64) float64 {
	if len(v) == 0 {
		return def
	}
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func geomean(v []float64, def float64) float64 {
	if len(v) == 0 {
		return def
	}
	var s float64
	for _, x := range v {
		s += math.Log(x)
	}
	return math.Exp(s / float64(len(v)))
}

// paramSetOf copies a calibration into the fit's parameter arrays.
func paramSetOf(cal *Calibration) *paramSet {
	ps := &paramSet{}
	for _, cp := range cal.Classes {
		i := classIndex(cp.Class)
		if i < 0 {
			continue
		}
		ps.eff[i], ps.lam[i], ps.rho[i], ps.gamma[i] = cp.Efficiency.Value, cp.LatencyFactor.Value, cp.RampBytesPerRank.Value, cp.RampGamma.Value
	}
	return ps
}

// supportNote flags parameters that rest on one dataset or one source.
func supportNote(ids []string, sources map[string]string) string {
	src := map[string]bool{}
	for _, id := range ids {
		src[sources[id]] = true
	}
	switch {
	case len(ids) == 1:
		return "fitted on one dataset only (" + ids[0] + "): a single run supports this value"
	case len(src) == 1:
		return fmt.Sprintf("fitted on %d datasets that all come from one published source: a single system supports this value", len(ids))
	}
	return fmt.Sprintf("fitted on %d datasets from %d sources", len(ids), len(src))
}

func uniq(s []string) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

func logit(p float64) float64   { return math.Log(p / (1 - p)) }
func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// box maps an unbounded fit variable onto [lo, hi] log-uniformly, keeping
// every parameter physically meaningful whatever the optimiser tries.
type box struct{ lo, hi float64 }

// Bounds of the fitted parameters.
var (
	effBox = box{0.01, 4}          // fraction of NCCL's bandwidth
	lamBox = box{0.25, 20}         // factor on NCCL's latency
	rhoBox = box{1 << 10, 1 << 28} // bytes per rank
	// gammaBox starts at 0.5: with more gradual ramps the fitted plateaus
	// exceed line rate (at 0.3 the TCPXO class needs 1.47x NCCL's NVLSTree
	// bandwidth, more than its eight 200 Gb/s NICs carry).
	gammaBox = box{0.5, 1}
)

// boundNote flags a fitted value that sits at an end of its range: the
// data would push it further.
func (b box) boundNote(v float64) string {
	switch {
	case v <= b.lo*1.001:
		return fmt.Sprintf("; at the lower bound %g of its range", b.lo)
	case v >= b.hi/1.001:
		return fmt.Sprintf("; at the upper bound %g of its range", b.hi)
	}
	return ""
}

func (b box) of(x float64) float64 { return b.lo * math.Pow(b.hi/b.lo, sigmoid(x)) }

func (b box) inv(v float64) float64 {
	v = math.Min(math.Max(v, b.lo*1.0001), b.hi/1.0001)
	return logit(math.Log(v/b.lo) / math.Log(b.hi/b.lo))
}

// median returns the median of v (the mean of the middle two for an even
// count); v is not modified.
func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func maxOf(v []float64) float64 {
	m := math.Inf(-1)
	for _, x := range v {
		m = math.Max(m, x)
	}
	return m
}
