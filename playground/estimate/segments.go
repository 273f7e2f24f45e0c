package estimate

import (
	"fmt"
	"math"

	"github.com/distributed-nav/distributed-nav/playground/tune"
)

// Segment is a range of message sizes over which NCCL's choice (algorithm,
// protocol and channel count) does not change.
type Segment struct {
	// MinBytes and MaxBytes bound the range, both included.
	MinBytes  uint64
	MaxBytes  uint64
	Algo      tune.Algorithm
	Proto     tune.Protocol
	NChannels int
}

// Segments lists NCCL's choices for req from 0 bytes to hi: the choice is
// sampled four times per octave and every change is bisected to the exact
// size. The last segment ends at hi. A choice that appears and disappears
// between two samples (within a quarter octave) can be missed.
func Segments(m *tune.Model, req tune.Request, hi uint64) ([]Segment, error) {
	type key struct {
		a  tune.Algorithm
		p  tune.Protocol
		nc int
	}
	choose := func(n uint64) (key, error) {
		r := req
		r.NBytes = n
		c, err := m.Select(r)
		if err != nil {
			return key{}, fmt.Errorf("segments: %w", err)
		}
		return key{c.Algo, c.Proto, c.NChannels}, nil
	}
	cur, err := choose(0)
	if err != nil {
		return nil, err
	}
	var out []Segment
	start, lo := uint64(0), uint64(0)
	add := func(end uint64) {
		out = append(out, Segment{MinBytes: start, MaxBytes: end, Algo: cur.a, Proto: cur.p, NChannels: cur.nc})
	}
	// advance walks every change of choice between lo and x.
	advance := func(x uint64) error {
		kx, err := choose(x)
		if err != nil {
			return err
		}
		for kx != cur {
			a, b := lo, x
			for b-a > 1 {
				mid := a + (b-a)/2
				km, err := choose(mid)
				if err != nil {
					return err
				}
				if km == cur {
					a = mid
				} else {
					b = mid
				}
			}
			add(b - 1)
			nb, err := choose(b)
			if err != nil {
				return err
			}
			cur, start, lo = nb, b, b
		}
		lo = x
		return nil
	}
	for k := 0; ; k++ {
		s := math.Round(math.Exp2(float64(k) / 4))
		if s >= float64(hi) {
			break
		}
		if x := uint64(s); x > lo {
			if err := advance(x); err != nil {
				return nil, err
			}
		}
	}
	if hi > lo {
		if err := advance(hi); err != nil {
			return nil, err
		}
	}
	add(hi)
	return out, nil
}
