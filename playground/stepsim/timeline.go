package stepsim

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
