package estimate

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sort"
	"strings"
	"sync"

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
	// modelEnd is NCCL's model time (µs) at end (0 for the last segment).
	modelEnd float64
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
		sg := pseg{c: c, end: end}
		if end != math.MaxUint64 {
			req.NBytes = end
			ch, err := m.Select(req)
			if err != nil {
				return nil, fmt.Errorf("dataset %s, %d bytes: %w", d.ID, end, err)
			}
			sg.modelEnd = float64(ch.TimeUs)
		}
		p.segs = append(p.segs, sg)
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
		p.rows = append(p.rows, prow{bytes: r.Bytes, tMeas: r.TimeUs, busbw: r.BusBwGBps,
			c: ce, seg: seg, model: float64(c.TimeUs), mAlgo: c.Algo, mProto: c.Proto})
	}
	if len(p.rows) == 0 {
		return nil, fmt.Errorf("dataset %s: no row with a positive size", d.ID)
	}
	p.class = rt.Algo[p.rows[len(p.rows)-1].c.a]
	return p, nil
}

// numClasses is the length of Classes().
const numClasses = 9

// classIndex numbers the classes for the parameter arrays.
func classIndex(c Class) int { return c.slowness() }

// paramSet holds one value of every parameter, indexed by classIndex.
// eff is the class's bandwidth efficiency (for shm-xsocket the fraction of
// NCCL's inter-socket bandwidth; unused for shm); host is the host-memory
// staging bandwidth of an SHM hop (GB/s).
type paramSet struct {
	eff, lam, rho, gamma [numClasses]float64
	// host and host5 are the host staging rates (GB/s) of SHM hops over
	// GPU links below and from PCIe Gen5 x16 (hostFor).
	host, host5 float64
	// nccl marks the classes whose rows take NCCL's model time
	// (ClassParams.NCCLModel).
	nccl [numClasses]bool
}

// Gen5LinkGBps is NCCL's bandwidth of a PCIe Gen5 x16 link (32 GT/s x 16
// lanes, as NCCL's topology reads it): an SHM hop whose GPU links reach it
// stages through host memory at the Gen5 rate (host_staging_gen5_GBps).
const Gen5LinkGBps = 48

// hostFor is the host staging rate of an SHM hop whose narrower GPU link
// is link GB/s. The published SHM plateaus split by the PCIe generation of
// the GPUs' links, not by their width or the GPU's link rate: Gen3 and
// Gen4 hosts stage 2-6 GB/s of bus bandwidth whatever the GPU (RTX 2080
// Ti, A40, A100 SXM, RTX 4090: 4.0, 4.0, 5.2, 2.2-3.9 GB/s), the Gen5
// hosts 24-27 GB/s (DGX H100 with P2P disabled 24.3 GB/s, four RTX 5090 on
// a Genoa host 27.3 GB/s). An SHM hop is the sender's PCIe writes into
// host memory and the receiver's PCIe reads from it (src/transport/shm.cc);
// what bounds the reads is the platform's host-memory read path, which the
// topology does not describe, but the link generation tells the two groups
// apart.
func (ps *paramSet) hostFor(link float64) float64 {
	if link >= Gen5LinkGBps {
		return ps.host5
	}
	return ps.host
}

// shmLink is the GPU link (GB/s) an SHM hop crosses twice: the narrower
// of the two GPUs' PCIe links, or the path's bandwidth where the topology
// did not give them.
func shmLink(h Hop) float64 {
	if h.PCIeBw > 0 {
		return h.PCIeBw
	}
	return h.PathBw
}

// onModel reports whether cell c's class takes NCCL's model time.
func (ps *paramSet) onModel(c cell, rt *Routing) bool {
	return ps.nccl[classIndex(rt.Algo[c.a])]
}

func (ps *paramSet) terms(c cell, rt *Routing, n int) terms {
	i := classIndex(rt.Algo[c.a])
	return terms{lat: ps.lam[i] * c.lat, plateau: ps.plateau(c, rt), ramp: ps.rho[i] * RampRanks(c.a, n) * RampScale(c.p), gamma: ps.gamma[i]}
}

// plateau is the calibrated bus bandwidth (GB/s) large messages of cell c
// reach. On one node it is the slowest hop's physical bandwidth (hopBw)
// times the cell's share of its graph's bandwidth in NCCL's model, which
// carries NCCL's protocol and algorithm factors (LL moves half the bytes
// of a line as data, Tree's and LL128's factors, ...); for NVLS in one
// node NCCL's own bandwidth of the cell (switchReduced); elsewhere the
// class efficiency times NCCL's own bandwidth of the cell.
func (ps *paramSet) plateau(c cell, rt *Routing) float64 {
	if switchReduced(c.a, rt) {
		return c.bus
	}
	hops, gbw := rt.Hops[c.a], rt.GraphBw[c.a]
	if len(hops) == 0 || gbw <= 0 {
		return ps.eff[classIndex(rt.Algo[c.a])] * c.bus
	}
	bound := math.Inf(1)
	for _, h := range hops {
		bound = math.Min(bound, ps.hopBw(h))
	}
	return c.bus / gbw * bound
}

// switchReduced reports whether algorithm a of rt runs NVLink SHARP inside
// one node (NVLS or NVLS Tree through the node's NVSwitches). Its plateau
// is NCCL's own NVLS bandwidth: NCCL derives it from the GPU's NVLink
// bandwidth times an NVLS efficiency measured per GPU generation
// (nvlsEfficiency, 0.85 for sm90,
// https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/tuning.cc#L139-L144,
// applied at tuning.cc#L307-L312), and the traffic is multimem loads and
// stores reduced in the switch, not the P2P copies between GPU pairs that
// the nvlink efficiency is fitted on; scaling NCCL's figure by that
// efficiency would count a copy engine's overhead on a path that has none
// and a derating NCCL already applied. Across nodes NVLS is bounded by the
// network, whose class keeps its efficiency.
func switchReduced(a tune.Algorithm, rt *Routing) bool {
	return (a == tune.NVLS || a == tune.NVLSTree) && rt.Algo[a] == ClassNVLink
}

// hopBw is the bandwidth one hop sustains:
//   - NVLink P2P: nvlink efficiency × NVLink links × per-link bandwidth;
//   - PCIe P2P: pcie efficiency × the narrowest PCIe link of the path;
//     across the sockets (P2P forced with NCCL_P2P_LEVEL=SYS, class
//     pcie-xsocket, whose writes cross the inter-socket link and have an
//     efficiency of their own) the GPUs' own links, not NCCL's
//     inter-socket constant (16 GB/s for AMD, 10-20
//     for Intel in src/graph/topo.h), which measured P2P across the
//     sockets of a dual EPYC 9575F exceeds severalfold
//     (rtx5090-8gpu-p2p-2socket: 55.6 GB/s P2P writes within and across
//     the sockets; one source, unproven elsewhere);
//   - SHM: the sender's GPU writes into host memory and the receiver's GPU
//     reads it back (src/transport/shm.cc: the buffer sits on the
//     receiver's side, NCCL_SHM_LOCALITY default 2), two copies over the
//     GPUs' own PCIe links, so the pcie efficiency × the narrower link
//     bounds it, and so does the rate at which host memory stages the
//     traffic (host, fitted in GB/s: real SHM throughput follows the CPU
//     and memory, not the GPU's link);
//   - SHM across sockets: also the shm-xsocket efficiency × NCCL's
//     inter-socket bandwidth (src/graph/topo.cc, ncclTopoGetInterCpuBw).
func (ps *paramSet) hopBw(h Hop) float64 {
	pcie := ps.eff[classIndex(ClassPCIe)]
	switch h.Class {
	case ClassNVLink, ClassNVLinkDirect:
		return ps.eff[classIndex(h.Class)] * h.PathBw
	case ClassPCIe:
		return pcie * h.PathBw
	case ClassPCIeXSocket:
		link := h.PCIeBw
		if link <= 0 {
			link = h.PathBw
		}
		return ps.eff[classIndex(ClassPCIeXSocket)] * link
	case ClassSHM, ClassSHMXSocket:
		link := shmLink(h)
		b := math.Min(pcie*link, ps.hostFor(link))
		if h.Class == ClassSHMXSocket {
			b = math.Min(b, ps.eff[classIndex(ClassSHMXSocket)]*h.PathBw)
		}
		return b
	}
	return ps.eff[classIndex(h.Class)] * h.PathBw
}

// RampRanks is how the ramp scale grows with the rank count n for
// algorithm a. Ring and PAT cut the message into n pieces, each moving
// through the pipeline in chunks of a channel's buffer, so the message
// that fills the pipeline grows with n; Tree, NVLS, NVLSTree and CollNet
// stream the whole message down a chain or through the switch in
// buffer-sized chunks, so it does not.
func RampRanks(a tune.Algorithm, n int) float64 {
	switch a {
	case tune.Ring, tune.PAT:
		return float64(n)
	}
	return 1
}

// predict fills out with the calibrated time of every row under ps,
// including the hold at segment boundaries.
func (p *prepared) predict(ps *paramSet, out []float64) {
	prefMax := make([]float64, len(p.segs))
	for i := 1; i < len(p.segs); i++ {
		prev := p.segs[i-1]
		t := prev.modelEnd
		if !ps.onModel(prev.c, &p.route) {
			t = calTime(ps.terms(prev.c, &p.route, p.n), float64(prev.end)*p.bf)
		}
		prefMax[i] = math.Max(prefMax[i-1], t)
	}
	for i, r := range p.rows {
		t := r.model
		if !ps.onModel(r.c, &p.route) {
			t = calTime(ps.terms(r.c, &p.route, p.n), float64(r.bytes)*p.bf)
		}
		if r.seg >= 0 && r.seg < len(prefMax) && prefMax[r.seg] > t {
			t = prefMax[r.seg]
		}
		out[i] = t
	}
}

// onPlateau reports whether row r identifies the bandwidth parameter of
// class cl: at least PlateauMinBytes, its cell routed through cl, and not
// NVLink SHARP in one node, whose plateau is NCCL's own (switchReduced).
func (p *prepared) onPlateau(r prow, cl Class) bool {
	return r.bytes >= PlateauMinBytes && p.route.Algo[r.c.a] == cl && !switchReduced(r.c.a, &p.route)
}

// plateauRatios are the dataset's measured plateau bus bandwidths of class
// cl (the rows onPlateau takes) over their plateau bound under bound.
func (p *prepared) plateauRatios(cl Class, bound *paramSet) []float64 {
	var out []float64
	for _, r := range p.rows {
		if !p.onPlateau(r, cl) {
			continue
		}
		if b := bound.plateau(r.c, &p.route); b > 0 {
			out = append(out, float64(r.bytes)*p.bf/r.tMeas/1e3/b)
		}
	}
	return out
}

// constrains reports which parameters of class cl the dataset has data for.
func (p *prepared) constrains(cl Class) map[string]bool {
	var plateau, small, ramp int
	for _, r := range p.rows {
		if p.route.Algo[r.c.a] != cl {
			continue
		}
		if p.onPlateau(r, cl) {
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

// objective is the fit's loss: every dataset weighs w (1 when w is nil),
// every row of a dataset the same, and each row contributes
// softL1(log(predicted time / measured time)).
func objective(sets []*prepared, ps *paramSet, buf [][]float64, w []float64) float64 {
	return objectiveOn(sets, ps, buf, w, nil)
}

// objectiveOn is objective restricted to the rows keep selects (every row
// when keep is nil); a dataset without such rows adds nothing.
func objectiveOn(sets []*prepared, ps *paramSet, buf [][]float64, w []float64, keep func(*prepared, prow) bool) float64 {
	var total float64
	for k, p := range sets {
		p.predict(ps, buf[k])
		var s float64
		n := 0
		for i, r := range p.rows {
			if keep == nil || keep(p, r) {
				s += softL1(math.Log(buf[k][i]/r.tMeas), lossDelta)
				n++
			}
		}
		if n == 0 {
			continue
		}
		wk := 1.0
		if w != nil {
			wk = w[k]
		}
		total += wk * s / float64(n)
	}
	return total
}

// systemWeights gives each dataset of sets the weight 1 / (the number of
// datasets in sets of its source on the same modelled system: preset,
// nodes, environment and fabric). The bandwidth is fitted with these
// weights: the collectives one source ran on one machine are repeated
// observations of the same path's bound, while its runs on different
// paths (GPUDirect RDMA on and off) are different bounds.
func systemWeights(sets []*prepared) []float64 {
	key := func(p *prepared) string {
		r := p.d.System
		env := make([]string, 0, len(r.Env))
		for k, v := range r.Env {
			env = append(env, k+"="+v)
		}
		sort.Strings(env)
		return fmt.Sprintf("%s|%s|%d|%s|%s", p.d.SourceKey(), r.Preset, r.Nodes, strings.Join(env, ","), r.Fabric)
	}
	n := map[string]int{}
	for _, p := range sets {
		n[key(p)]++
	}
	w := make([]float64, len(sets))
	for k, p := range sets {
		w[k] = 1 / float64(n[key(p)])
	}
	return w
}

// sourceWeights gives each dataset of sets the weight 1 / (the number of
// datasets of its source in sets). The latency factor and the ramp are
// fitted with these weights: they describe a platform and its software
// (NCCL version, launcher, per-step costs), which every run of one source
// shares, so a source that published three collectives of one machine is
// one observation of them, not three. The bandwidth is fitted with
// systemWeights instead: a source's runs on different paths (GPUDirect
// RDMA on and off, one node and two) are different hardware bounds.
func sourceWeights(sets []*prepared) []float64 {
	n := map[string]int{}
	for _, p := range sets {
		n[p.d.SourceKey()]++
	}
	w := make([]float64, len(sets))
	for k, p := range sets {
		w[k] = 1 / float64(n[p.d.SourceKey()])
	}
	return w
}

// FitObjective describes the fit in words (written to the calibration).
const FitObjective = "minimise over the fitted datasets, each of its rows weighing the same, the soft-L1 loss (delta 0.1) of log(calibrated time / measured out-of-place time); every class fits its bandwidth parameter (efficiency on its physical bound; for shm the host staging rate in GB/s, one for GPU links below PCIe Gen5 x16 and one, fitted on its own, for Gen5 x16 links) on its plateau rows (>= 64 MiB) alone, then its latency factor and ramp (scale and gamma) on every row with the bandwidth held and every independent source weighing the same (in the bandwidth fit every modelled system of a source weighs the same: preset, nodes, environment, fabric), the two stages alternating three times, where its datasets have rows in that regime (latency: >= 3 rows <= 64 KiB; ramp: >= 3 rows in 1-256 MiB; bandwidth: a row >= 64 MiB); a class fits its bandwidth, latency factor and ramp only where at least two independent sources have rows in that regime, and otherwise keeps the physical bound (efficiency 1, host staging unbounded) and NCCL's own latency (factor 1) with no ramp beyond it; a bandwidth parameter without data falls back to its physical bound (efficiency 1, host staging unbounded; without single-socket SHM runs the host staging rate is fitted on the cross-socket ones with the inter-socket efficiency at 1); bounds: efficiency from 0.01 up to the raw link rate over NCCL's figure (network 1: NCCL's bandwidth is the line rate; pcie-xsocket: the highest plateau share of the GPU link among the datasets, a ceiling, its latency and ramp as fitted together with the fitted efficiency; PCIe 1.313: 128/130 encoding against NCCL's 1.5 GB/s per Gen4 lane; NVLink 1.25 (nvlink and nvlink-direct): 25 GB/s per link against NCCL's 20-20.6; nvlink-direct with plateau rows from fewer than two sources takes the nvlink efficiency (the same links), not the bound; shm-xsocket 4), host staging 0.05-200 GB/s, latency factor 0.25-20, ramp 1 KiB-256 MiB per rank, gamma 0.5-1; error bands: 5 and 95 % quantiles of the errors of leave-one-source-out fits"

// Formula is the calibrated model in one line.
const Formula = "t = lambda*L(a,p) + Sbus/P / (1 - exp(-(Sbus/(rho*n_a*k_p))^gamma)), Sbus = size*busfactor, n_a = n for Ring and PAT, 1 for the other algorithms; one node: P = B(a,p)/G(a) * min over the graph's hops of the hop bandwidth (nvlink: eta_nvlink*links*per-link bw; nvlink-direct, without an NVSwitch: eta_nvlink-direct*links*per-link bw times the graph's channels over the channels on that pair; pcie: eta_pcie*narrowest PCIe link, across sockets the GPUs' own links; shm: min(eta_pcie*GPU PCIe link, host_staging, host_staging_gen5 where both GPUs of the hop have PCIe Gen5 x16 links); shm-xsocket: also eta_xsocket*inter-socket bw), G(a): NCCL's channels*per-channel bandwidth of the graph; NVLS and NVLS Tree in one node: P = B(a,p), NCCL's NVLS bandwidth with its own NVLS efficiency; several nodes: P = eta*B(a,p), eta per network class (net-rdma, net-host: RDMA through a CPU, net-tcp); L, B: NCCL's latency and bus bandwidth of the chosen cell (a,p), in one node a ring AllGather or ReduceScatter taking the AllReduce latency of its cell; k_p: protocol buffer / Simple buffer; never below the time of a smaller message"

// Fit fits the calibration on the datasets marked fit and measures the
// error bands on all of them. The result is deterministic.
func Fit(ctx context.Context, sets []*Dataset, build Builder) (*Calibration, error) {
	all, fitted, err := prepareAll(ctx, sets, build)
	if err != nil {
		return nil, err
	}
	if len(fitted) == 0 {
		return nil, fmt.Errorf("fit: no dataset is marked fit")
	}
	fr, err := fitParams(ctx, fitted)
	if err != nil {
		return nil, err
	}
	cal := assemble(fr, all)
	if err := cal.check(); err != nil {
		return nil, fmt.Errorf("fit: %w", err)
	}
	oos, err := outOfSample(ctx, all, fitted)
	if err != nil {
		return nil, err
	}
	fallBack(cal, all, oos)
	setBands(cal, all, oos)
	return cal, nil
}

// FallBackMarginPct is the smallest excess (percentage points) of a class's
// out-of-sample error over NCCL's model's that makes Fit hand the class to
// the model (fallBack); `ncclsim validate` flags a class past it.
const FallBackMarginPct = 0.05

// fallBack hands to NCCL's model every class whose calibrated estimate does
// worse out of sample than the model on the class's own datasets: the
// median over those datasets of each dataset's median busbw error (sizes of
// at least BandMinBytes), the figure `ncclsim validate` prints per class,
// is compared, and a difference below FallBackMarginPct (the precision
// validate prints) keeps the fit. Calibration exists to improve on
// the model on systems it has not seen; a class where leaving a source out
// shows that it does not is better served by NCCL's own numbers, and its
// band then measures the model's error. It marks the classes in cal and
// rewrites their rows of oos to the model's time.
//
// The decision itself is taken with every source present (one choice per
// class, not refitted per left-out source), so the out-of-sample figure of
// a class that falls back is the model's error, which is what the
// estimator then reports.
func fallBack(cal *Calibration, all []*prepared, oos [][]float64) {
	type tally struct {
		cal, model []float64
		srcs       map[string]bool
	}
	by := map[Class]*tally{}
	for k, p := range all {
		if p.d.Anomaly != "" {
			continue
		}
		var ec, em []float64
		for i, r := range p.rows {
			if r.bytes < BandMinBytes || r.busbw <= 0 {
				continue
			}
			ec = append(ec, 100*math.Abs(AlgBwGBps(r.bytes, oos[k][i])*p.bf-r.busbw)/r.busbw)
			em = append(em, 100*math.Abs(AlgBwGBps(r.bytes, r.model)*p.bf-r.busbw)/r.busbw)
		}
		if len(ec) == 0 {
			continue
		}
		t := by[p.class]
		if t == nil {
			t = &tally{srcs: map[string]bool{}}
			by[p.class] = t
		}
		t.cal, t.model = append(t.cal, median(ec)), append(t.model, median(em))
		t.srcs[p.d.SourceKey()] = true
	}
	var use [numClasses]bool
	for i := range cal.Classes {
		c := cal.Classes[i].Class
		t := by[c]
		if t == nil {
			continue
		}
		mc, mm := median(t.cal), median(t.model)
		if mc-mm < FallBackMarginPct {
			continue
		}
		use[classIndex(c)] = true
		cal.Classes[i].NCCLModel = fmt.Sprintf("with each source left out, the fit was off by %.1f%% (median over %d datasets of %d sources), NCCL's model by %.1f%%: NCCL's model is used", mc, len(t.cal), len(t.srcs), mm)
	}
	useModel(all, oos, use)
}

// useModel rewrites the rows of oos whose class is marked in use to NCCL's
// model time, held at segment boundaries as predict and the estimator hold
// it (NCCL's model is not monotonic in the size). The hold of a row after a
// segment of another class takes that segment at its default parameters,
// not at the fold's: no committed dataset mixes a class on NCCL's model
// with another.
func useModel(all []*prepared, oos [][]float64, use [numClasses]bool) {
	ps := defaultParams()
	ps.nccl = use
	for k, p := range all {
		var out []float64
		for i, r := range p.rows {
			if !ps.onModel(r.c, &p.route) {
				continue
			}
			if out == nil {
				out = make([]float64, len(p.rows))
				p.predict(ps, out)
			}
			oos[k][i] = out[i]
		}
	}
}

// prepareAll prepares every dataset and returns them with the subset marked
// fit.
func prepareAll(ctx context.Context, sets []*Dataset, build Builder) (all, fitted []*prepared, err error) {
	for _, d := range sets {
		p, err := prepare(ctx, d, build)
		if err != nil {
			return nil, nil, err
		}
		all = append(all, p)
		if d.Fit {
			fitted = append(fitted, p)
		}
	}
	return all, fitted, nil
}

// support lists, per parameter of one class, the datasets that constrain
// it; effWeak, lamWeak and rhoWeak hold the datasets of a plateau, latency or ramp regime
// that too few independent sources cover to fit it (MinShapeSources).
type support struct{ eff, lam, rho, effWeak, lamWeak, rhoWeak []string }

// MinShapeSources is the number of independent sources a class needs in
// a regime (large messages for the bandwidth, small ones for the latency
// factor, mid sizes for the ramp) before it fits that regime's
// parameters.
const MinShapeSources = 2

// Physical baseline of the latency and ramp: NCCL's own latency and no
// ramp beyond it (the scale at its lower bound, 1 KiB per rank, linear).
const (
	baseLatencyFactor = 1
	baseRampBytes     = 1 << 10
	baseRampGamma     = 1
)

// sourceCount is the number of independent sources among the datasets ids.
func sourceCount(ids []string, sources map[string]string) int {
	m := map[string]bool{}
	for _, id := range ids {
		m[sources[id]] = true
	}
	return len(m)
}

// fitResult is a fitted parameter set with the evidence behind each value.
type fitResult struct {
	ps      *paramSet
	sup     map[Class]*support
	sources map[string]string // dataset id -> source key
	// hostPooled is set when the host staging rate was fitted on
	// cross-socket runs only.
	hostPooled bool
	// nvlinkShared is set when direct NVLink took the link efficiency
	// fitted through NVSwitches.
	nvlinkShared bool
	// host5 and host5Weak are the datasets whose SHM plateau rows run over
	// PCIe Gen5 links (they set host5, not host): host5 when they come
	// from at least MinShapeSources sources, host5Weak otherwise.
	host5, host5Weak []string
}

// defaultParams is the parameter set of a fit that saw no data: NCCL's own
// model (efficiency and latency factor 1) with the default ramp.
func defaultParams() *paramSet {
	ps := &paramSet{host: math.Inf(1), host5: math.Inf(1)}
	for i := range ps.eff {
		ps.eff[i], ps.lam[i], ps.rho[i], ps.gamma[i] = 1, 1, 1<<20, 0.75
	}
	return ps
}

// fitParams fits the parameters on the datasets fitted (which may be
// empty: every parameter then keeps its default).
func fitParams(ctx context.Context, fitted []*prepared) (*fitResult, error) {
	fr := &fitResult{sup: map[Class]*support{}, sources: map[string]string{}}
	for _, c := range Classes() {
		fr.sup[c] = &support{}
	}
	for _, p := range fitted {
		fr.sources[p.d.ID] = p.d.SourceKey()
		for _, c := range Classes() {
			k := p.constrains(c)
			if k[paramEfficiency] {
				fr.sup[c].eff = append(fr.sup[c].eff, p.d.ID)
			}
			if k[paramLatency] {
				fr.sup[c].lam = append(fr.sup[c].lam, p.d.ID)
			}
			if k[paramRamp] {
				fr.sup[c].rho = append(fr.sup[c].rho, p.d.ID)
			}
		}
	}
	// SHM plateaus over Gen5 links set their own host staging rate
	// (hostFor); they leave the shm class's bandwidth support, whose
	// parameter is the rate of the older hosts, but keep supporting its
	// latency factor and ramp.
	gen5 := map[string]bool{}
	for _, p := range fitted {
		if p.shmOnGen5() {
			gen5[p.d.ID] = true
		}
	}
	var older []string
	for _, id := range fr.sup[ClassSHM].eff {
		if gen5[id] {
			fr.host5 = append(fr.host5, id)
		} else {
			older = append(older, id)
		}
	}
	fr.sup[ClassSHM].eff = older
	if sourceCount(fr.host5, fr.sources) < MinShapeSources {
		fr.host5Weak, fr.host5 = fr.host5, nil
	}
	// A latency factor or ramp is a property of the software and the
	// platform's per-step costs, not of a bound the topology gives: one
	// source cannot tell it apart from that source's own setup (NCCL
	// version, launcher, CPU). A class fits them only where at least
	// MinShapeSources independent sources have rows in the regime;
	// otherwise it keeps NCCL's own latency (factor 1) and no ramp beyond
	// it, the physical baseline, rather than another class's values.
	//
	// The same holds for the bandwidth: one source's plateau is that
	// machine's, and a class whose plateau only one source shows keeps its
	// physical bound (efficiency 1, host staging unbounded) instead of a
	// factor fitted on it; without a bandwidth it fits nothing else.
	for _, c := range Classes() {
		sup := fr.sup[c]
		if sourceCount(sup.eff, fr.sources) < MinShapeSources {
			sup.effWeak, sup.eff = sup.eff, nil
			sup.lamWeak, sup.lam = append(sup.lamWeak, sup.lam...), nil
			sup.rhoWeak, sup.rho = append(sup.rhoWeak, sup.rho...), nil
		}
		if sourceCount(sup.lam, fr.sources) < MinShapeSources {
			sup.lamWeak, sup.lam = sup.lam, nil
		}
		if sourceCount(sup.rho, fr.sources) < MinShapeSources {
			sup.rhoWeak, sup.rho = sup.rho, nil
		}
	}

	// Starting point: efficiency from the largest rows, λ 1.5, ρ 1 MiB,
	// γ 0.75.
	ps := defaultParams()
	for i := range ps.lam {
		ps.lam[i] = 1.5
	}
	// Starting bandwidths: the median ratio of measured to bound plateau
	// on the largest rows, the bound taken with every efficiency at 1
	// and the host staging unbounded (for shm, the median measured
	// plateau itself).
	bound := defaultParams()
	for _, c := range Classes() {
		var ratios []float64
		for _, p := range fitted {
			ratios = append(ratios, p.plateauRatios(c, bound)...)
		}
		if len(ratios) == 0 {
			continue
		}
		m := median(ratios)
		if c == ClassSHM {
			// The bound with an unlimited host is the PCIe link: the ratio
			// times it is the measured plateau.
			ps.host = math.Max(0.2, m*24)
			continue
		}
		ps.eff[classIndex(c)] = m
	}
	if math.IsInf(ps.host, 1) && (len(fr.sup[ClassSHM].eff) > 0 || len(fr.sup[ClassSHMXSocket].eff) > 0) {
		ps.host = 2
	}
	// The classes are independent: each is fitted on the datasets that
	// touch it, its latency factor and ramp only where enough sources
	// cover them (the others stay at NCCL's own latency without a ramp).
	for _, c := range Classes() {
		ci := classIndex(c)
		if len(fr.sup[c].lam) == 0 {
			ps.lam[ci] = baseLatencyFactor
		}
		if len(fr.sup[c].rho) == 0 {
			ps.rho[ci], ps.gamma[ci] = baseRampBytes, baseRampGamma
		}
	}
	// The Gen5 host staging rate is fitted before the shm class (whose
	// latency factor and ramp the Gen5 runs also constrain) and again
	// after it, with the class's final latency and ramp.
	if len(fr.host5) > 0 {
		ps.host5 = 24
		if err := fitHost5(ctx, fitted, ps); err != nil {
			return nil, err
		}
	}
	for _, c := range Classes() {
		if len(fr.sup[c].eff) == 0 {
			continue
		}
		if _, err := fitClass(ctx, fitted, ps, c, len(fr.sup[c].lam) > 0, len(fr.sup[c].rho) > 0); err != nil {
			return nil, err
		}
	}
	if len(fr.host5) > 0 {
		if err := fitHost5(ctx, fitted, ps); err != nil {
			return nil, err
		}
	}
	// Without a single-socket SHM run the host staging rate is fitted on
	// the cross-socket runs with the inter-socket efficiency held at its
	// bound (the two cannot be told apart there); without any SHM run it
	// is unbounded.
	xs := ClassSHMXSocket
	switch {
	case len(fr.sup[ClassSHM].eff) > 0:
	case len(fr.sup[xs].eff) > 0:
		ps.eff[classIndex(xs)] = 1
		if _, err := fitBandwidth(ctx, fitted, ps, ClassSHM, xs); err != nil {
			return nil, err
		}
		fr.hostPooled = true
	default:
		ps.host = math.Inf(1)
	}
	// P2P across the sockets: the efficiency is a ceiling, the highest
	// plateau share of the GPU link any training dataset reaches. The
	// inter-socket fabric (one NCCL figure for every AMD generation,
	// src/graph/topo.h AMD_BW) does not tell the sources apart, and a run
	// below the ceiling is held back by what the topology does not show
	// (driver, BAR1 P2P, NCCL version), so the mean of the sources
	// mispredicts each of them.
	if xe := envelopeEfficiency(fitted, ClassPCIeXSocket); xe > 0 && len(fr.sup[ClassPCIeXSocket].eff) > 0 {
		ps.eff[classIndex(ClassPCIeXSocket)] = xe
	}
	// Classes without any dataset take the physical bound (efficiency 1).
	for _, c := range Classes() {
		if len(fr.sup[c].eff) == 0 {
			ps.eff[classIndex(c)] = 1
		}
	}
	// Direct NVLink and NVLink through NVSwitches run the same links and
	// link protocol (payload per flit, 25 GB/s per link and direction for
	// NVLink 2-4); what differs is the path, which the topology gives (the
	// pair's links against the GPU's). Where direct NVLink has plateau
	// rows from fewer than MinShapeSources sources, it takes the link
	// efficiency fitted through NVSwitches instead of the bound 1; its
	// latency factor and ramp stay NCCL's own (they belong to the path).
	if len(fr.sup[ClassNVLinkDirect].eff) == 0 && len(fr.sup[ClassNVLink].eff) > 0 {
		ps.eff[classIndex(ClassNVLinkDirect)] = ps.eff[classIndex(ClassNVLink)]
		fr.nvlinkShared = true
	}
	ps.eff[classIndex(ClassSHM)] = 1
	fr.ps = ps
	return fr, nil
}

// assemble writes a fit result as a calibration with rounded values.
func assemble(fr *fitResult, all []*prepared) *Calibration {
	ps := fr.ps
	cal := &Calibration{Version: CalibrationVersion, Formula: Formula, NCCLModel: "v2.30.7-1", Objective: FitObjective}
	for _, c := range Classes() {
		ci := classIndex(c)
		sup := fr.sup[c]
		cp := ClassParams{Class: c}
		switch {
		case c == ClassSHM:
			cp.Efficiency = Param{Value: 1, Source: "structural", Datasets: []string{}, Note: "SHM has no efficiency of its own: an SHM hop sustains min(pcie efficiency x the narrower GPU PCIe link, host_staging_GBps), or host_staging_gen5_GBps where both GPUs have PCIe Gen5 x16 links"}
			h := Param{Value: 0, Source: "default", Datasets: nonNil(sup.effWeak), Note: "no SHM run: host staging is not bounded, SHM hops run at the PCIe bound"}
			if len(sup.effWeak) > 0 {
				h.Note = weakNote("plateau", sup.effWeak, fr.sources) + "host staging is not bounded, SHM hops run at the PCIe bound"
			}
			switch {
			case len(sup.eff) > 0:
				h = Param{Value: round4(ps.host), Source: "fitted", Datasets: sup.eff, Note: supportNote(sup.eff, fr.sources) + hostBox.boundNote(ps.host)}
			case fr.hostPooled:
				xs := fr.sup[ClassSHMXSocket].eff
				h = Param{Value: round4(ps.host), Source: "pooled", Datasets: xs, Note: "no single-socket SHM run: fitted on the cross-socket runs with the inter-socket efficiency at its bound 1; " + supportNote(xs, fr.sources)}
			}
			cp.HostStagingGBps = &h
			h5 := Param{Value: 0, Source: "bound", Datasets: nonNil(fr.host5Weak), Note: "no SHM run over PCIe Gen5 links: host staging there is not bounded, such hops run at the PCIe bound"}
			if len(fr.host5Weak) > 0 {
				h5.Note = weakNote("Gen5 plateau", fr.host5Weak, fr.sources) + "host staging over Gen5 links is not bounded, such hops run at the PCIe bound"
			}
			if len(fr.host5) > 0 {
				h5 = Param{Value: round4(ps.host5), Source: "fitted", Datasets: fr.host5, Note: supportNote(fr.host5, fr.sources) + hostBox.boundNote(ps.host5)}
			}
			cp.HostStagingGen5GBps = &h5
		case c == ClassSHMXSocket && fr.hostPooled:
			cp.Efficiency = Param{Value: 1, Source: "bound", Datasets: sup.eff, Note: "held at the physical bound: without a single-socket SHM run the cross-socket runs fit the host staging rate instead"}
		case c == ClassNVLinkDirect && fr.nvlinkShared:
			nv := fr.sup[ClassNVLink].eff
			note := "no direct-NVLink plateau rows: "
			if len(sup.effWeak) > 0 {
				note = weakNote("plateau", sup.effWeak, fr.sources)
			}
			cp.Efficiency = Param{Value: round4(ps.eff[ci]), Source: "pooled", Datasets: nv, Note: note + "the NVLink link efficiency fitted through NVSwitches (the same links and link protocol) is used; " + supportNote(nv, fr.sources)}
		case c == ClassPCIeXSocket && len(sup.eff) > 0:
			// fitParams set it to envelopeEfficiency, not to a fitted value.
			cp.Efficiency = Param{Value: round4(ps.eff[ci]), Source: "fitted", Datasets: sup.eff, Note: "the highest plateau share of the GPU link among " + strings.TrimPrefix(supportNote(sup.eff, fr.sources), "fitted on ") + " (a ceiling, not a fitted centre: the sources disagree in ways the topology cannot show)"}
		case len(sup.eff) > 0:
			cp.Efficiency = Param{Value: round4(ps.eff[ci]), Source: "fitted", Datasets: sup.eff, Note: supportNote(sup.eff, fr.sources) + effBoxFor(c).boundNote(ps.eff[ci])}
		case len(sup.effWeak) > 0:
			cp.Efficiency = Param{Value: 1, Source: "bound", Datasets: sup.effWeak, Note: weakNote("plateau", sup.effWeak, fr.sources) + "the physical bound (efficiency 1) is used"}
		default:
			cp.Efficiency = Param{Value: 1, Source: "bound", Datasets: []string{}, Note: "no dataset of this class: the physical bound (efficiency 1) is used"}
		}
		if len(sup.lam) > 0 {
			cp.LatencyFactor = Param{Value: round4(ps.lam[ci]), Source: "fitted", Datasets: sup.lam, Note: supportNote(sup.lam, fr.sources) + lamBox.boundNote(ps.lam[ci])}
		} else {
			cp.LatencyFactor = Param{Value: baseLatencyFactor, Source: "bound", Datasets: nonNil(sup.lamWeak), Note: weakNote("small-message", sup.lamWeak, fr.sources) + "NCCL's own latency (factor 1)"}
		}
		if len(sup.rho) > 0 {
			cp.RampBytesPerRank = Param{Value: round4(ps.rho[ci]), Source: "fitted", Datasets: sup.rho, Note: supportNote(sup.rho, fr.sources) + rhoBox.boundNote(ps.rho[ci])}
			cp.RampGamma = Param{Value: round4(ps.gamma[ci]), Source: "fitted", Datasets: sup.rho, Note: supportNote(sup.rho, fr.sources) + gammaBox.boundNote(ps.gamma[ci])}
		} else {
			cp.RampBytesPerRank = Param{Value: baseRampBytes, Source: "bound", Datasets: nonNil(sup.rhoWeak), Note: weakNote("mid-size", sup.rhoWeak, fr.sources) + "no ramp beyond NCCL's latency (the scale at its lower bound)"}
			cp.RampGamma = Param{Value: baseRampGamma, Source: "bound", Datasets: nonNil(sup.rhoWeak), Note: weakNote("mid-size", sup.rhoWeak, fr.sources) + "no ramp beyond NCCL's latency (linear)"}
		}
		cal.Classes = append(cal.Classes, cp)
	}
	for _, p := range all {
		use := DatasetUse{ID: p.d.ID, Source: p.d.SourceKey(), Class: p.class, Fitted: p.d.Fit, Reason: p.d.FitReason, Constrains: []string{}}
		k := p.constrains(p.class)
		for _, name := range []string{paramEfficiency, paramLatency, paramRamp} {
			if k[name] {
				use.Constrains = append(use.Constrains, name)
			}
		}
		cal.Datasets = append(cal.Datasets, use)
	}
	return cal
}

// outOfSample predicts every row of every dataset with parameters fitted
// without the dataset's source (leave one source out: every fitted dataset
// with the same SourceKey is dropped from the fit). The result is indexed
// like all and holds calibrated times in µs.
func outOfSample(ctx context.Context, all, fitted []*prepared) ([][]float64, error) {
	bySource := map[string][]int{}
	var keys []string
	for i, p := range all {
		k := p.d.SourceKey()
		if _, ok := bySource[k]; !ok {
			keys = append(keys, k)
		}
		bySource[k] = append(bySource[k], i)
	}
	// The fits are independent (each reads the prepared rows and writes
	// only the rows of its own source), so they run on every core:
	// `ncclsim validate` took 8.2 s on one of this machine's two.
	out := make([][]float64, len(all))
	errs := make([]error, len(keys))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for n, k := range keys {
		var rest []*prepared
		for _, p := range fitted {
			if p.d.SourceKey() != k {
				rest = append(rest, p)
			}
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			fr, err := fitParams(ctx, rest)
			if err != nil {
				errs[n] = fmt.Errorf("leave out %s: %w", k, err)
				return
			}
			for _, i := range bySource[k] {
				out[i] = make([]float64, len(all[i].rows))
				all[i].predict(fr.ps, out[i])
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// BandCoverage is the share of out-of-sample errors an error band spans:
// its ends are the BandQuantileLow and BandQuantileHigh quantiles of the
// signed busbw errors of the class's rows (sizes of at least BandMinBytes)
// predicted without their own source.
const (
	BandQuantileLow  = 0.05
	BandQuantileHigh = 0.95
)

// setBands fills each class's error band from the out-of-sample
// predictions oos of all.
func setBands(cal *Calibration, all []*prepared, oos [][]float64) {
	errs := map[Class][]float64{}
	dsets := map[Class]map[string]bool{}
	srcs := map[Class]map[string]bool{}
	for k, p := range all {
		if p.d.Anomaly != "" {
			continue
		}
		for i, r := range p.rows {
			if r.bytes < BandMinBytes || r.busbw <= 0 {
				continue
			}
			c := p.route.Algo[r.c.a]
			bus := AlgBwGBps(r.bytes, oos[k][i]) * p.bf
			errs[c] = append(errs[c], 100*(bus-r.busbw)/r.busbw)
			if dsets[c] == nil {
				dsets[c], srcs[c] = map[string]bool{}, map[string]bool{}
			}
			dsets[c][p.d.ID] = true
			srcs[c][p.d.SourceKey()] = true
		}
	}
	for i := range cal.Classes {
		c := cal.Classes[i].Class
		e := errs[c]
		b := Band{MinBytes: BandMinBytes, Datasets: len(dsets[c]), Sources: len(srcs[c]), Points: len(e), OutOfSample: true}
		if len(e) > 0 {
			abs := make([]float64, len(e))
			for k, v := range e {
				abs[k] = math.Abs(v)
			}
			b.MedianPct = round4(median(abs))
			b.MaxPct = round4(maxOf(abs))
			b.OverPct = round4(math.Max(0, quantile(e, BandQuantileHigh)))
			b.UnderPct = round4(math.Min(99, math.Max(0, -quantile(e, BandQuantileLow))))
		}
		cal.Classes[i].Band = b
	}
}

// quantile is the q-quantile of v by linear interpolation between order
// statistics; v is not modified.
func quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	x := q * float64(len(s)-1)
	i := int(math.Floor(x))
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[i] + (x-float64(i))*(s[i+1]-s[i])
}

// fitClass fits class c's bandwidth parameter (and its latency factor and
// ramp when freeLam, freeRho) on the datasets with rows of class c,
// updating ps; it returns the loss over those datasets.
func fitClass(ctx context.Context, fitted []*prepared, ps *paramSet, c Class, freeLam, freeRho bool) (float64, error) {
	return fitOn(ctx, fitted, ps, c, c, freeLam, freeRho)
}

// fitBandwidth fits only class target's bandwidth parameter on the
// datasets with rows of class touch.
func fitBandwidth(ctx context.Context, fitted []*prepared, ps *paramSet, target, touch Class) (float64, error) {
	return fitOn(ctx, fitted, ps, target, touch, false, false)
}

// fitHost5 fits the Gen5 host staging rate (hostFor) on the plateau rows
// of the SHM datasets, the other parameters held: an SHM hop over an older
// link does not depend on it, so only the Gen5 runs move the loss. It
// scans the rate's range on a log grid and refines the best point.
func fitHost5(ctx context.Context, fitted []*prepared, ps *paramSet) error {
	var touching []*prepared
	var buf [][]float64
	for _, p := range fitted {
		if p.shmOnGen5() {
			touching = append(touching, p)
			buf = append(buf, make([]float64, len(p.rows)))
		}
	}
	if len(touching) == 0 {
		return nil
	}
	wsys := systemWeights(touching)
	onPlateau := func(p *prepared, r prow) bool { return p.onPlateau(r, ClassSHM) || p.onPlateau(r, ClassSHMXSocket) }
	loss := func(v float64) float64 {
		q := *ps
		q.host5 = v
		return objectiveOn(touching, &q, buf, wsys, onPlateau)
	}
	v, err := scanMinimize(ctx, loss, ps.host5, hostBox)
	if err != nil {
		return fmt.Errorf("host staging (Gen5): %w", err)
	}
	ps.host5 = v
	return nil
}

// scanMinimize minimises the one-parameter loss over the range bb: it
// starts at the best of start and a log-spaced scan of the range (above a
// hop's other bounds the loss is flat in the parameter, and the simplex
// could drift there instead of finding the minimum), then refines it.
func scanMinimize(ctx context.Context, loss func(float64) float64, start float64, bb box) (float64, error) {
	start = math.Min(math.Max(start, bb.lo), bb.hi)
	best := loss(start)
	for k := 0; k <= 48; k++ {
		v := bb.lo * math.Pow(bb.hi/bb.lo, float64(k)/48)
		if l := loss(v); l < best {
			start, best = v, l
		}
	}
	xb, _, err := minimize(ctx, func(x []float64) float64 { return loss(bb.of(x[0])) }, []float64{bb.inv(start)}, 0.5, 1e-12, 2000)
	if err != nil {
		return 0, err
	}
	if v := bb.of(xb[0]); loss(v) <= best {
		start = v
	}
	return start, nil
}

// shmOnGen5 reports whether the dataset has SHM plateau rows whose hops
// run over GPU links of PCIe Gen5 x16 or faster (hostFor).
func (p *prepared) shmOnGen5() bool {
	for _, r := range p.rows {
		if !p.onPlateau(r, ClassSHM) && !p.onPlateau(r, ClassSHMXSocket) {
			continue
		}
		if shmGen5(p.route.Hops[r.c.a]) {
			return true
		}
	}
	return false
}

// bwVar is how the optimiser sees a class's bandwidth parameter: the host
// staging rate for shm, the efficiency otherwise.
func bwVar(c Class) (get func(*paramSet) float64, set func(*paramSet, float64), b box) {
	if c == ClassSHM {
		return func(q *paramSet) float64 { return q.host }, func(q *paramSet, v float64) { q.host = v }, hostBox
	}
	ci := classIndex(c)
	return func(q *paramSet) float64 { return q.eff[ci] }, func(q *paramSet, v float64) { q.eff[ci] = v }, effBoxFor(c)
}

func fitOn(ctx context.Context, fitted []*prepared, ps *paramSet, c, touch Class, freeLam, freeRho bool) (float64, error) {
	ci := classIndex(c)
	var touching []*prepared
	var buf [][]float64
	for _, p := range fitted {
		for _, r := range p.rows {
			if p.route.Algo[r.c.a] == touch {
				touching = append(touching, p)
				buf = append(buf, make([]float64, len(p.rows)))
				break
			}
		}
	}
	w, wsys := sourceWeights(touching), systemWeights(touching)
	get, set, bb := bwVar(c)
	// The bandwidth parameter is identified by the plateau alone: rows of
	// at least PlateauMinBytes whose chosen cell is of class touch. Fitting
	// it on every row would let it absorb a ramp or latency that the
	// class does not fit (too few sources), and a system of another shape
	// would inherit that distortion.
	onPlateau := func(p *prepared, r prow) bool { return p.onPlateau(r, touch) }
	fitBw := func() error {
		fb := func(v float64) float64 {
			q := *ps
			set(&q, v)
			return objectiveOn(touching, &q, buf, wsys, onPlateau)
		}
		v, err := scanMinimize(ctx, fb, get(ps), bb)
		if err != nil {
			return err
		}
		set(ps, v)
		return nil
	}
	full := func(q *paramSet) float64 { return objective(touching, q, buf, w) }
	if err := fitBw(); err != nil {
		return 0, err
	}
	if !freeLam && !freeRho {
		return full(ps), nil
	}
	// The latency factor and the ramp are then fitted on every row with
	// the bandwidth held, and the two stages alternate a few times (the
	// ramp's tail reaches into the plateau rows).
	apply := func(x []float64, q *paramSet) {
		k := 0
		if freeLam {
			q.lam[ci] = lamBox.of(x[k])
			k++
		}
		if freeRho {
			q.rho[ci] = rhoBox.of(x[k])
			q.gamma[ci] = gammaBox.of(x[k+1])
		}
	}
	f := func(x []float64) float64 {
		q := *ps
		apply(x, &q)
		return full(&q)
	}
	for round := 0; round < 3; round++ {
		var x []float64
		if freeLam {
			x = append(x, lamBox.inv(ps.lam[ci]))
		}
		if freeRho {
			x = append(x, rhoBox.inv(ps.rho[ci]), gammaBox.inv(ps.gamma[ci]))
		}
		xb, _, err := minimize(ctx, f, x, 0.5, 1e-12, 5000)
		if err != nil {
			return 0, err
		}
		apply(xb, ps)
		if err := fitBw(); err != nil {
			return 0, err
		}
	}
	return full(ps), nil
}

// paramSetOf copies a calibration into the fit's parameter arrays.
func paramSetOf(cal *Calibration) *paramSet {
	ps := &paramSet{host: math.Inf(1), host5: math.Inf(1)}
	gen5Given := false
	for _, cp := range cal.Classes {
		i := classIndex(cp.Class)
		if i < 0 {
			continue
		}
		ps.eff[i], ps.lam[i], ps.rho[i], ps.gamma[i] = cp.Efficiency.Value, cp.LatencyFactor.Value, cp.RampBytesPerRank.Value, cp.RampGamma.Value
		ps.nccl[i] = cp.NCCLModel != ""
		if h := cp.HostStagingGBps; h != nil && h.Value > 0 {
			ps.host = h.Value
		}
		if h := cp.HostStagingGen5GBps; h != nil {
			gen5Given = true
			if h.Value > 0 {
				ps.host5 = h.Value
			}
		}
	}
	// A calibration written before the Gen5 rate existed staged every SHM
	// hop at one rate.
	if !gen5Given {
		ps.host5 = ps.host
	}
	return ps
}

// weakNote says why a latency or ramp parameter was not fitted: no rows
// of its regime, or rows from too few independent sources.
func weakNote(regime string, ids []string, sources map[string]string) string {
	if len(ids) == 0 {
		return "no " + regime + " rows of this class: "
	}
	if len(ids) == 1 {
		return fmt.Sprintf("%s rows from one dataset only (%s), fewer than the %d independent sources that identify it: ", regime, ids[0], MinShapeSources)
	}
	return fmt.Sprintf("%s rows from %d independent source(s) only, fewer than the %d that identify it: ", regime, sourceCount(ids, sources), MinShapeSources)
}

// nonNil returns ids, or an empty list for nil (the YAML lists every
// parameter's datasets).
func nonNil(ids []string) []string {
	if ids == nil {
		return []string{}
	}
	return ids
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

func logit(p float64) float64   { return math.Log(p / (1 - p)) }
func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// box maps an unbounded fit variable onto [lo, hi] log-uniformly, keeping
// every parameter physically meaningful whatever the optimiser tries.
type box struct{ lo, hi float64 }

// Bounds of the fitted parameters.
var (
	hostBox = box{0.05, 200}        // GB/s of host staging per SHM hop
	lamBox  = box{0.25, 20}         // factor on NCCL's latency
	rhoBox  = box{1 << 10, 1 << 28} // bytes per rank
	// gammaBox starts at 0.5: with more gradual ramps the fitted plateaus
	// exceed line rate (at 0.3 the TCPXO class needs 1.47x NCCL's NVLSTree
	// bandwidth, more than its eight 200 Gb/s NICs carry).
	gammaBox = box{0.5, 1}
)

// Upper ends of the efficiencies: the raw signalling rate of the link over
// the bandwidth NCCL's topology gives it, so that a fitted efficiency
// never claims more than the wire carries.
const (
	// maxEffNet: NCCL's network bandwidth is the NIC's line rate (speed in
	// Mb/s / 8000,
	// https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/topo.cc#L416-L418),
	// which no payload exceeds.
	maxEffNet = 1.0
	// maxEffPCIe: NCCL counts width × 1.5 GB/s per lane at 16 GT/s (speed
	// in 100 Mb/s / 80,
	// https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/topo.cc#L651-L657);
	// a Gen3-Gen5 lane carries GT/s × 128/130 / 8 (1.969 GB/s at 16 GT/s).
	maxEffPCIe = (128.0 / 130.0) * 8 / 6
	// maxEffNVLink: 25 GB/s per link and direction for NVLink 2-4 against
	// NCCL's 20.0-20.6 (SM70-SM90_NVLINK_BW,
	// https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/topo.h#L19-L24),
	// 50 against 40.1 for NVLink 5: at most 1.25.
	maxEffNVLink = 1.25
	// maxEffOther bounds the cross-socket SHM efficiency, a fraction of
	// NCCL's inter-socket constants (topo.h AMD_BW, *_QPI_BW), which are
	// not link rates.
	maxEffOther = 4.0
)

// effBoxFor is the range of class c's efficiency.
func effBoxFor(c Class) box {
	switch c {
	case ClassNetRDMA, ClassNetHost, ClassNetTCP:
		return box{0.01, maxEffNet}
	case ClassPCIe, ClassPCIeXSocket:
		return box{0.01, maxEffPCIe}
	case ClassNVLink, ClassNVLinkDirect:
		return box{0.01, maxEffNVLink}
	}
	return box{0.01, maxEffOther}
}

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

// envelopeEfficiency is the highest, over the datasets of fitted, of each
// dataset's median ratio of measured plateau bus bandwidth (the rows
// onPlateau takes for class c) to the physical bound at efficiency 1; 0
// without such rows.
func envelopeEfficiency(fitted []*prepared, c Class) float64 {
	best := 0.0
	bound := defaultParams() // efficiency 1: the physical bound
	for _, p := range fitted {
		if rs := p.plateauRatios(c, bound); len(rs) > 0 {
			best = math.Max(best, median(rs))
		}
	}
	return best
}
