package compare

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/nccltests"
	"github.com/distributed-nav/distributed-nav/playground/tune"
)

// TunerRange is one size range of a tuner configuration built from
// measurements: the algorithm and protocol of the run that was fastest
// there.
type TunerRange struct {
	Func     tune.Func
	NRanks   int
	Min, Max uint64
	Algo     tune.Algorithm
	Proto    tune.Protocol
	// Sizes are the measured sizes the range covers and BusBwGBps the
	// winner's busbw at each.
	Sizes     []uint64
	BusBwGBps []float64
}

// ErrNoChoice is wrapped when the runs of a file cannot tell which
// algorithm and protocol is fastest.
var ErrNoChoice = errors.New("no measured choice")

// pinned is one run whose NCCL_ALGO and NCCL_PROTO each name a single
// algorithm and protocol.
type pinned struct {
	run   *nccltests.Run
	algo  tune.Algorithm
	proto tune.Protocol
}

// TunerFromRuns picks, for every collective and rank count of runs and
// every size measured by at least two runs with different NCCL_ALGO /
// NCCL_PROTO, the pair whose run had the highest out-of-place busbw (the
// shortest time), and returns the winners as size ranges. A range reaches
// from the geometric midpoint between a size and the one below to the
// midpoint to the one above; the first starts at 0 and the last ends at
// the largest size. Runs that do not pin one algorithm and one protocol
// are left out and named in notes; if nothing is left to compare, the
// error says why.
func TunerFromRuns(runs []*nccltests.Run) (ranges []TunerRange, notes []string, err error) {
	type key struct {
		f tune.Func
		n int
	}
	groups := map[key][]pinned{}
	var order []key
	for _, r := range runs {
		f, ok := r.Func()
		if !ok {
			notes = append(notes, fmt.Sprintf("table at line %d: %s is not a collective NCCL's tuner chooses for", r.HeaderLine, r.Collective))
			continue
		}
		p, why := pin(r)
		if why != "" {
			notes = append(notes, fmt.Sprintf("table at line %d (%s): %s", r.HeaderLine, r.Collective, why))
			continue
		}
		k := key{f, r.NRanks}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], p)
	}
	for _, k := range order {
		g := groups[k]
		distinct := map[[2]int]bool{}
		for _, p := range g {
			distinct[[2]int{int(p.algo), int(p.proto)}] = true
		}
		if len(distinct) < 2 {
			notes = append(notes, fmt.Sprintf("%s on %d ranks: only one algorithm/protocol pair was run (%s/%s); a choice needs at least two", k.f, k.n, g[0].algo, g[0].proto))
			continue
		}
		rs := winners(k.f, k.n, g)
		if len(rs) == 0 {
			notes = append(notes, fmt.Sprintf("%s on %d ranks: no size was measured by two different pairs", k.f, k.n))
			continue
		}
		ranges = append(ranges, rs...)
	}
	if len(ranges) == 0 {
		msg := "the file holds no two runs of the same collective and rank count with different NCCL_ALGO/NCCL_PROTO, each pinned to one value (run nccl-tests once per pair, e.g. NCCL_ALGO=Ring NCCL_PROTO=Simple, then NCCL_ALGO=Tree NCCL_PROTO=LL128, and paste the runs together with their command lines)"
		if len(notes) > 0 {
			msg += ": " + strings.Join(notes, "; ")
		}
		return nil, notes, fmt.Errorf("%w: %s", ErrNoChoice, msg)
	}
	return ranges, notes, nil
}

// pin reads the single algorithm and protocol a run was forced to.
func pin(r *nccltests.Run) (pinned, string) {
	av, aok := r.Env["NCCL_ALGO"]
	pv, pok := r.Env["NCCL_PROTO"]
	if !aok || !pok {
		return pinned{}, "its log does not show both NCCL_ALGO and NCCL_PROTO, so which pair NCCL ran is not known"
	}
	a, err := tune.LookupAlgorithm(av)
	if err != nil {
		return pinned{}, fmt.Sprintf("NCCL_ALGO=%s does not name one algorithm", av)
	}
	p, err := tune.LookupProtocol(pv)
	if err != nil {
		return pinned{}, fmt.Sprintf("NCCL_PROTO=%s does not name one protocol", pv)
	}
	return pinned{run: r, algo: a, proto: p}, ""
}

// winners builds the ranges of one collective and rank count.
func winners(f tune.Func, n int, g []pinned) []TunerRange {
	best := map[uint64]struct {
		p   pinned
		bw  float64
		cnt int
	}{}
	for _, p := range g {
		for _, row := range p.run.Rows {
			o := row.OutOfPlace
			if !o.Present || o.TimeUs <= 0 || row.Bytes == 0 {
				continue
			}
			b := best[row.Bytes]
			b.cnt++
			if b.cnt == 1 || o.BusBwGBps > b.bw || o.BusBwGBps == b.bw && o.TimeUs < bestTime(b.p, row.Bytes) {
				b.p, b.bw = p, o.BusBwGBps
			}
			best[row.Bytes] = b
		}
	}
	var sizes []uint64
	for s, b := range best {
		if b.cnt >= 2 {
			sizes = append(sizes, s)
		}
	}
	sort.Slice(sizes, func(i, j int) bool { return sizes[i] < sizes[j] })
	var out []TunerRange
	for i, s := range sizes {
		b := best[s]
		lo := uint64(0)
		if i > 0 {
			lo = geoMid(sizes[i-1], s) + 1
		}
		hi := uint64(math.MaxUint64)
		if i+1 < len(sizes) {
			hi = geoMid(s, sizes[i+1])
		}
		if k := len(out) - 1; k >= 0 && out[k].Algo == b.p.algo && out[k].Proto == b.p.proto {
			out[k].Max = hi
			out[k].Sizes = append(out[k].Sizes, s)
			out[k].BusBwGBps = append(out[k].BusBwGBps, b.bw)
			continue
		}
		out = append(out, TunerRange{Func: f, NRanks: n, Min: lo, Max: hi, Algo: b.p.algo, Proto: b.p.proto,
			Sizes: []uint64{s}, BusBwGBps: []float64{b.bw}})
	}
	return out
}

func bestTime(p pinned, bytes uint64) float64 {
	for _, r := range p.run.Rows {
		if r.Bytes == bytes {
			return r.OutOfPlace.TimeUs
		}
	}
	return math.Inf(1)
}

// geoMid is the geometric midpoint of a < b, rounded down, at least a.
func geoMid(a, b uint64) uint64 {
	m := uint64(math.Sqrt(float64(a) * float64(b)))
	return min(max(m, a), b-1)
}
