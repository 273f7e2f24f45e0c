package stepsim

import "fmt"

// Lanes of a timeline.
const (
	LaneCompute = "compute"
	LaneComm    = "comm"
)

// Span kinds.
const (
	KindForward       = "forward"
	KindBackward      = "backward"
	KindOptimizer     = "optimizer"
	KindAllReduce     = "allreduce"
	KindAllGather     = "allgather"
	KindReduceScatter = "reducescatter"
)

// Span is one interval of work on one lane, in milliseconds from the start
// of the step.
type Span struct {
	Lane    string  `json:"lane"`
	Kind    string  `json:"kind"`
	Label   string  `json:"label"`
	StartMs float64 `json:"start_ms"`
	EndMs   float64 `json:"end_ms"`
	// Bytes is the collective's size (0 for compute).
	Bytes uint64 `json:"bytes,omitempty"`
	Algo  string `json:"algo,omitempty"`
	Proto string `json:"proto,omitempty"`
	// ExposedMs is the part of a collective during which the compute lane
	// is idle waiting for communication.
	ExposedMs float64 `json:"exposed_ms,omitempty"`
}

// Timeline is a step drawn as spans.
type Timeline struct {
	Spans  []Span  `json:"spans"`
	StepMs float64 `json:"step_ms"`
}

// markExposed sets ExposedMs of every comm span: the part of it during
// which no compute span runs. Both lists must be sorted by start and each
// must be free of overlaps; the work is linear in their lengths.
func markExposed(compute, comm []Span) {
	j := 0
	for i := range comm {
		c := &comm[i]
		for j < len(compute) && compute[j].EndMs <= c.StartMs {
			j++
		}
		covered := 0.0
		for k := j; k < len(compute) && compute[k].StartMs < c.EndMs; k++ {
			lo, hi := max(compute[k].StartMs, c.StartMs), min(compute[k].EndMs, c.EndMs)
			if hi > lo {
				covered += hi - lo
			}
		}
		c.ExposedMs = max(0, c.EndMs-c.StartMs-covered)
	}
}

// Summary returns tl with at most limit spans per lane (at least 3): the
// first and last spans of a lane with more are kept and those between
// become one span labelled with how many it stands for, running from the
// first one's start to the last one's end, with their bytes and exposed
// time summed. A drawing of tens of thousands of buckets shows nothing a
// reader can use that this does not; the full list stays in tl.
func (tl Timeline) Summary(limit int) Timeline {
	limit = max(limit, 3)
	byLane := map[string][]Span{}
	var lanes []string
	for _, s := range tl.Spans {
		if _, ok := byLane[s.Lane]; !ok {
			lanes = append(lanes, s.Lane)
		}
		byLane[s.Lane] = append(byLane[s.Lane], s)
	}
	out := Timeline{StepMs: tl.StepMs}
	for _, lane := range lanes {
		spans := byLane[lane]
		if len(spans) <= limit {
			out.Spans = append(out.Spans, spans...)
			continue
		}
		head := (limit - 1) / 2
		tail := limit - 1 - head
		mid := spans[head : len(spans)-tail]
		m := Span{Lane: lane, Kind: mid[0].Kind, StartMs: mid[0].StartMs, EndMs: mid[len(mid)-1].EndMs,
			Label: fmt.Sprintf("%d more spans (%s … %s)", len(mid), mid[0].Label, mid[len(mid)-1].Label)}
		for _, s := range mid {
			m.Bytes += s.Bytes
			m.ExposedMs += s.ExposedMs
		}
		out.Spans = append(out.Spans, spans[:head]...)
		out.Spans = append(out.Spans, m)
		out.Spans = append(out.Spans, spans[len(spans)-tail:]...)
	}
	return out
}
