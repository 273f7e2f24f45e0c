package nccltests

import (
	"fmt"
)

// finish settles the collective, rank count and type of a run.
func (p *parser) finish(r *Run) error {
	r.Type = r.Rows[0].Type
	for _, row := range r.Rows {
		if row.Type != r.Type {
			p.warn(row.Line, fmt.Sprintf("type %s differs from the table's first row (%s)", row.Type, r.Type))
			break
		}
	}
	if p.opts.Collective != "" {
		r.Collective, r.CollectiveFrom = p.opts.Collective, "flag"
	}
	if p.opts.NRanks > 0 {
		r.NRanks, r.NRanksFrom = p.opts.NRanks, "flag"
	}
	if r.Collective == "" {
		c, why, ok := inferCollective(r)
		if !ok {
			return &Error{Line: r.HeaderLine, Msg: "which benchmark printed this table is not in the file (no '# Collective test starting:' line or command naming all_reduce_perf, all_gather_perf, ...) and the columns do not tell: " + why + "; name it (--coll)"}
		}
		r.Collective, r.CollectiveFrom = c, "columns"
		if why != "" {
			p.warn(r.HeaderLine, why)
		}
	}
	if r.NRanks == 0 {
		n, from, err := inferRanks(r)
		if err != nil {
			return &Error{Line: r.HeaderLine, Msg: err.Error() + "; give the rank count (--nranks)"}
		}
		r.NRanks, r.NRanksFrom = n, from
	}
	if lo, hi, ok := ratioRange(r, r.Collective); ok && r.Collective.BusFactor(r.NRanks) > 0 && (r.NRanks < lo || r.NRanks > hi) {
		p.warn(r.HeaderLine, fmt.Sprintf("busbw/algbw of the table fits %s on %s ranks, not the %d used", r.Collective, rangeText(lo, hi), r.NRanks))
	}
	return nil
}

func rangeText(lo, hi int) string {
	if lo == hi {
		return fmt.Sprint(lo)
	}
	if hi >= MaxRanks {
		return fmt.Sprintf("%d or more", lo)
	}
	return fmt.Sprintf("%d-%d", lo, hi)
}

// inferCollective guesses the benchmark from the columns. The reduction
// operator is "none" for the benchmarks that reduce nothing (nccl-tests
// 2.13 and later print it), root is -1 for the rootless ones, and size =
// count × element size × nranks for those whose size is the whole buffer.
func inferCollective(r *Run) (Collective, string, bool) {
	hasRedop, hasRoot := r.hasRedop, r.hasRoot
	reduces, rooted := false, false
	for _, row := range r.Rows {
		if row.Redop != "" && row.Redop != "none" {
			reduces = true
		}
		// The root column holds -1 for rootless collectives.
		if row.Root >= 0 {
			rooted = true
		}
	}
	whole, per := sizeCountRatio(r)
	switch {
	case rooted && reduces:
		return Reduce, "", true
	case rooted:
		return Broadcast, "", true
	case reduces && whole:
		return ReduceScatter, "", true
	case reduces && per:
		return AllReduce, "", true
	case hasRedop && whole:
		return AllGather, "taken as allgather from the columns (alltoall prints the same ones; name the collective if this was alltoall_perf)", true
	case !hasRedop && !hasRoot && whole:
		return AllGather, "taken as allgather from the columns (older nccl-tests printed alltoall, gather and scatter alike; name the collective if it was one of those)", true
	}
	return "", "the rows have neither a reduction operator nor a root nor a size that is a multiple of the count", false
}

// sizeCountRatio says whether size = count × element size on every row
// with a count (per), or size = count × element size × k for one k > 1
// (whole).
func sizeCountRatio(r *Run) (whole, per bool) {
	k, _ := wholeRanks(r)
	if k == 1 {
		return false, true
	}
	return k > 1, false
}

// wholeRanks returns size / (count × element size) if it is the same whole
// number on every row with a non-zero count, else 0; ok says rows were
// there to compare.
func wholeRanks(r *Run) (int, bool) {
	k := uint64(0)
	seen := false
	for _, row := range r.Rows {
		es := uint64(TypeSize(row.Type))
		if row.Count == 0 || es == 0 {
			continue
		}
		d := row.Count * es
		if d/es != row.Count || row.Bytes%d != 0 {
			return 0, true
		}
		q := row.Bytes / d
		if seen && q != k {
			return 0, true
		}
		k, seen = q, true
	}
	if !seen || k > MaxRanks {
		return 0, seen
	}
	return int(k), true
}

// inferRanks finds the rank count of r (collective known).
func inferRanks(r *Run) (int, string, error) {
	c := r.Collective
	if c.wholeBuffer() {
		if k, _ := wholeRanks(r); k >= 1 {
			return k, "size/count", nil
		}
	}
	lo, hi, ok := ratioRange(r, c)
	lines := len(r.Devices)
	switch {
	case lines > 0 && (!ok || lines >= lo && lines <= hi):
		return lines, "rank lines", nil
	case ok && lo == hi:
		return lo, "busbw/algbw", nil
	case ok && lo <= hi:
		return 0, "", fmt.Errorf("the busbw/algbw ratio fits %s on %s ranks and the file lists no complete set of Rank lines", c, rangeText(lo, hi))
	case ok:
		return 0, "", fmt.Errorf("no rank count fits the busbw/algbw ratio of every row for %s", c)
	}
	if c.BusFactor(2) == c.BusFactor(MaxRanks) {
		return 0, "", fmt.Errorf("the file lists no complete set of Rank lines and %s's busbw equals its algbw, so it does not tell the rank count", c)
	}
	return 0, "", fmt.Errorf("the file lists no complete set of Rank lines and no row has an algbw of 0.1 GB/s or more to read the busbw/algbw ratio from")
}

// ratioRange returns the rank counts n for which c's bus factor lies
// within the printed rounding of busbw/algbw on every row with algbw of at
// least 0.1 GB/s. ok is false when no row tells (the factor is 1, or all
// rows are too small).
func ratioRange(r *Run, c Collective) (lo, hi int, ok bool) {
	if c.BusFactor(2) == 1 && c.BusFactor(MaxRanks) == 1 {
		return 0, 0, false
	}
	rmin, rmax := 0.0, 1e9
	for _, row := range r.Rows {
		for _, h := range []Result{row.OutOfPlace, row.InPlace} {
			if !h.Present || h.AlgBwGBps < 0.1 {
				continue
			}
			aLo, aHi := h.AlgBwGBps-h.algErr, h.AlgBwGBps+h.algErr
			bLo, bHi := h.BusBwGBps-h.busErr, h.BusBwGBps+h.busErr
			if aLo <= 0 {
				continue
			}
			ok = true
			rmin = max(rmin, max(bLo, 0)/aHi)
			rmax = min(rmax, bHi/aLo)
		}
	}
	if !ok {
		return 0, 0, false
	}
	lo, hi = MaxRanks+1, 0
	// The factor grows with n: scan up to the first n beyond rmax.
	for n := 1; n <= MaxRanks; n++ {
		f := c.BusFactor(n)
		if f > rmax {
			break
		}
		if f >= rmin {
			lo, hi = min(lo, n), n
		}
	}
	if hi == 0 {
		return 1, 0, true
	}
	return lo, hi, true
}
