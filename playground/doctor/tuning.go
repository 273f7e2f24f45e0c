package doctor

import (
	"strconv"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/tune"
)

// tuningState follows the TUNING table NCCL prints on rank 0 of each
// communicator (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/tuning.cc#L543-L585):
// blocks of three algorithms, each with an "Algorithm" row, a "Protocol"
// row, a "Max NThreads" row and one "latency/bandwidth" row per function.
type tuningState struct {
	algos  []string // algorithms of the current block, one per protocol column
	protos []string // protocol of each column
	first  string   // first algorithm of the first block, marks a new table
	done   bool     // the first table is complete; later ones are only counted
}

// tuningRow handles one line containing '|'.
func (p *parser) tuningRow(n int, t string) {
	cells := strings.Split(t, "|")
	label := strings.TrimSpace(cells[0])
	cols := cells[1:]
	if len(cols) > 0 && strings.TrimSpace(cols[len(cols)-1]) == "" {
		cols = cols[:len(cols)-1]
	}
	st := &p.tuning
	switch label {
	case "Algorithm":
		var algos []string
		for _, c := range cols {
			if a := strings.TrimSpace(c); a != "" {
				algos = append(algos, algoName(a))
			}
		}
		if len(algos) == 0 {
			return
		}
		if st.first == "" {
			st.first = algos[0]
		}
		if algos[0] == st.first {
			// A new table begins.
			if p.s.Tuning == nil {
				p.s.Tuning = &Tuning{MaxThreads: map[string][]int{}, Line: n, byKey: map[tuningKey]int{}}
			} else {
				st.done = true
			}
			p.s.Tuning.Tables++
		}
		st.algos, st.protos = algos, nil
		if !st.done {
			for _, a := range algos {
				if !contains(p.s.Tuning.Algorithms, a) {
					p.s.Tuning.Algorithms = append(p.s.Tuning.Algorithms, a)
				}
			}
		}
	case "Protocol":
		if p.s.Tuning == nil && len(st.algos) == 0 {
			// The excerpt starts below the Algorithm row: assume NCCL's
			// order, whose first block is Tree, Ring, CollNetDirect.
			st.algos = []string{tune.Tree.String(), tune.Ring.String(), tune.CollNetDirect.String()}
			st.first = st.algos[0]
			p.s.Tuning = &Tuning{Algorithms: append([]string(nil), st.algos...), MaxThreads: map[string][]int{}, Line: n, Tables: 1, byKey: map[tuningKey]int{}}
			p.note("the TUNING table starts without its Algorithm row; NCCL's algorithm order (Tree, Ring, CollNetDirect, ...) was assumed")
		}
		st.protos = st.protos[:0]
		for _, c := range cols {
			st.protos = append(st.protos, protoName(strings.TrimSpace(c)))
		}
		if p.s.Tuning != nil && !st.done {
			for _, pr := range st.protos {
				if !contains(p.s.Tuning.Protocols, pr) {
					p.s.Tuning.Protocols = append(p.s.Tuning.Protocols, pr)
				}
			}
		}
	case "Max NThreads":
		if p.s.Tuning == nil || st.done || len(st.protos) == 0 {
			return
		}
		for i, c := range cols {
			a, ok := st.column(i)
			if !ok {
				break
			}
			v, err := strconv.Atoi(strings.TrimSpace(c))
			if err != nil {
				return
			}
			p.s.Tuning.MaxThreads[a] = append(p.s.Tuning.MaxThreads[a], v)
		}
	default:
		fn, err := tune.LookupFunc(label)
		if err != nil || p.s.Tuning == nil || st.done || len(st.protos) == 0 {
			return
		}
		for i, c := range cols {
			a, ok := st.column(i)
			if !ok || i >= len(st.protos) {
				break
			}
			ls, bs, ok := strings.Cut(c, "/")
			if !ok {
				return
			}
			lat, err1 := finiteFloat(strings.TrimSpace(ls))
			bw, err2 := finiteFloat(strings.TrimSpace(bs))
			if err1 != nil || err2 != nil {
				return
			}
			tu := p.s.Tuning
			key := tuningKey{fn.String(), a, st.protos[i]}
			if _, dup := tu.byKey[key]; dup || len(tu.Cells) >= p.opts.MaxItems {
				continue
			}
			tu.byKey[key] = len(tu.Cells)
			tu.Cells = append(tu.Cells, TuningCell{Func: fn.String(), Algorithm: a, Protocol: st.protos[i], LatencyUs: lat, BwGBps: bw})
		}
	}
}

// column returns the algorithm of protocol column i of the current block.
func (st *tuningState) column(i int) (string, bool) {
	if len(st.algos) == 0 || len(st.protos) == 0 {
		return "", false
	}
	// NCCL prints three protocol columns per algorithm, and the protocol
	// row of the last block has columns even for missing algorithms, so the
	// group width is the distance to the first repeated protocol name.
	per := len(st.protos)
	for j := 1; j < len(st.protos); j++ {
		if st.protos[j] == st.protos[0] {
			per = j
			break
		}
	}
	k := i / per
	if k >= len(st.algos) {
		return "", false
	}
	return st.algos[k], true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Cell returns the TUNING entry of one function, algorithm and protocol.
func (t *Tuning) Cell(fn, algo, proto string) (TuningCell, bool) {
	for _, c := range t.Cells {
		if c.Func == fn && c.Algorithm == algo && c.Protocol == proto {
			return c, true
		}
	}
	return TuningCell{}, false
}
