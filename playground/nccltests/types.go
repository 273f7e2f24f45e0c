package nccltests

import (
	"fmt"

	"github.com/distributed-nav/distributed-nav/playground/tune"
)

// Bounds on what Parse reads.
const (
	// MaxInputBytes is the largest input accepted (a console log with
	// NCCL_DEBUG=INFO lines of a few runs fits many times over).
	MaxInputBytes = 16 << 20
	// MaxLineBytes is the longest line looked at; longer lines are
	// skipped with a warning (no table line is anywhere near it).
	MaxLineBytes = 64 << 10
	// MaxRows bounds the table rows of all runs together.
	MaxRows = 8192
	// MaxRuns bounds the number of tables.
	MaxRuns = 128
	// MaxWarnings bounds the warnings kept; the count of the rest is
	// reported in the last one.
	MaxWarnings = 50
	// MaxRanks is the largest rank count accepted or inferred.
	MaxRanks = 1 << 16
)

// Collective is an nccl-tests benchmark, named like NCCL's collectives
// without separators: "allreduce", "allgather", ...
type Collective string

// The benchmarks of nccl-tests (src/*.cu at 2.19.6).
const (
	AllReduce     Collective = "allreduce"
	AllGather     Collective = "allgather"
	ReduceScatter Collective = "reducescatter"
	Broadcast     Collective = "broadcast"
	Reduce        Collective = "reduce"
	AlltoAll      Collective = "alltoall"
	AlltoAllv     Collective = "alltoallv"
	SendRecv      Collective = "sendrecv"
	Gather        Collective = "gather"
	Scatter       Collective = "scatter"
	HyperCube     Collective = "hypercube"
)

// programs maps each benchmark binary's name to its collective.
var programs = []struct {
	name string
	c    Collective
}{
	{"all_reduce_perf", AllReduce},
	{"all_gather_perf", AllGather},
	{"reduce_scatter_perf", ReduceScatter},
	{"broadcast_perf", Broadcast},
	{"reduce_perf", Reduce},
	{"alltoallv_perf", AlltoAllv},
	{"alltoall_perf", AlltoAll},
	{"sendrecv_perf", SendRecv},
	{"gather_perf", Gather},
	{"scatter_perf", Scatter},
	{"hypercube_perf", HyperCube},
}

// ParseCollective reads a collective name: NCCL's spelling in any case,
// with or without '_' or '-' ("all_reduce", "AllReduce"), or a benchmark
// binary's name ("all_reduce_perf").
func ParseCollective(s string) (Collective, error) {
	n := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_' || c == '-' || c == ' ':
			continue
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		}
		n = append(n, c)
	}
	k := string(n)
	if len(k) > 4 && k[len(k)-4:] == "perf" {
		k = k[:len(k)-4]
	}
	for _, p := range programs {
		if string(p.c) == k {
			return p.c, nil
		}
	}
	return "", fmt.Errorf("unknown collective %s (nccl-tests has allreduce, allgather, reducescatter, broadcast, reduce, alltoall, alltoallv, sendrecv, gather, scatter, hypercube)", quoted(s))
}

// Func returns the collective as a function of NCCL's tuning model; false
// for the benchmarks NCCL does not model as one collective (alltoall,
// sendrecv, gather, scatter, hypercube are point-to-point operations).
func (c Collective) Func() (tune.Func, bool) {
	switch c {
	case AllReduce:
		return tune.AllReduce, true
	case AllGather:
		return tune.AllGather, true
	case ReduceScatter:
		return tune.ReduceScatter, true
	case Broadcast:
		return tune.Broadcast, true
	case Reduce:
		return tune.Reduce, true
	}
	return 0, false
}

// BusFactor is nccl-tests' busbw / algbw for the collective on n ranks
// (the GetBw function of each src/*.cu): 2(n-1)/n for AllReduce, (n-1)/n
// for AllGather, ReduceScatter, AlltoAll, Gather and Scatter, 1 for the
// others. It is 0 when n < 1.
func (c Collective) BusFactor(n int) float64 {
	if n < 1 {
		return 0
	}
	switch c {
	case AllReduce:
		return 2 * float64(n-1) / float64(n)
	case AllGather, ReduceScatter, AlltoAll, Gather, Scatter:
		return float64(n-1) / float64(n)
	}
	return 1
}

// wholeBuffer reports whether nccl-tests prints the size of c as the
// per-rank count × nranks × element size (the gathered or scattered
// buffer), so that size / (count × element size) is the rank count.
func (c Collective) wholeBuffer() bool {
	switch c {
	case AllGather, ReduceScatter, AlltoAll, Gather, Scatter:
		return true
	}
	return false
}

// typeSizes are the element types nccl-tests prints (test_typenames in
// src/common.cu, and "char"/"int" of builds against NCCL 1) with their
// sizes and the name tune.LookupDatatype knows them by.
var typeSizes = []struct {
	name, dtype string
	size        int
}{
	{"int8", "int8", 1}, {"uint8", "uint8", 1}, {"char", "int8", 1},
	{"int32", "int32", 4}, {"uint32", "uint32", 4}, {"int", "int32", 4},
	{"int64", "int64", 8}, {"uint64", "uint64", 8},
	{"half", "float16", 2}, {"float", "float32", 4}, {"double", "float64", 8},
	{"bfloat16", "bfloat16", 2}, {"f8e4m3", "float8e4m3", 1}, {"f8e5m2", "float8e5m2", 1},
}

// TypeSize is the element size of an nccl-tests type name, 0 if unknown.
func TypeSize(name string) int {
	for _, t := range typeSizes {
		if t.name == name {
			return t.size
		}
	}
	return 0
}

// Datatype maps an nccl-tests type name to the tuning model's datatype.
func Datatype(name string) (tune.Datatype, error) {
	for _, t := range typeSizes {
		if t.name == name {
			return tune.LookupDatatype(t.dtype)
		}
	}
	return 0, fmt.Errorf("unknown nccl-tests type %s", quoted(name))
}

// File is everything Parse found.
type File struct {
	Runs     []*Run    `json:"runs"`
	Warnings []Warning `json:"warnings"`
}

// Warning is something Parse skipped or had to assume, with the line it
// concerns (0 when it concerns the whole input).
type Warning struct {
	Line    int    `json:"line"`
	Message string `json:"message"`
}

func (w Warning) String() string {
	if w.Line > 0 {
		return fmt.Sprintf("line %d: %s", w.Line, w.Message)
	}
	return w.Message
}

// Run is one results table with what the log says about its run.
type Run struct {
	// Collective and where it came from: "flag", "header" (# Collective
	// test starting), "command" (a command line naming the binary) or
	// "columns" (inferred from redop, root and the size/count ratio).
	Collective     Collective `json:"coll"`
	CollectiveFrom string     `json:"coll_from"`
	// NRanks and where it came from: "flag", "size/count" (exact),
	// "rank lines" or "busbw/algbw".
	NRanks     int    `json:"nranks"`
	NRanksFrom string `json:"nranks_from"`
	// Type is the nccl-tests element type of the rows ("float", ...).
	Type string `json:"type"`
	// Env holds the NCCL_* assignments the log shows for this run: on its
	// command line, earlier persistent lines, or NCCL's "set by
	// environment" messages.
	Env map[string]string `json:"env"`
	// Devices are the device names of the Rank lines, in rank order.
	Devices []string `json:"devices"`
	// NCCLVersion is what "NCCL version" or "# nccl-tests version ...
	// nccl-library=" printed; empty if neither appears.
	NCCLVersion string `json:"nccl_version"`
	// HeaderLine is the line of the column header (the first row's line
	// for a headerless table).
	HeaderLine int   `json:"header_line"`
	Rows       []Row `json:"rows"`
	// AvgBusBwGBps is the "# Avg bus bandwidth" line, nil if absent.
	AvgBusBwGBps *float64 `json:"avg_busbw_GBps"`

	// hasRedop and hasRoot say whether the table has those columns.
	hasRedop, hasRoot bool
}

// Row is one line of the table, every number as printed.
type Row struct {
	Line  int    `json:"line"`
	Bytes uint64 `json:"bytes"`
	Count uint64 `json:"count"`
	Type  string `json:"type"`
	Redop string `json:"redop"`
	// Root is the root column, -1 when the table has none.
	Root       int    `json:"root"`
	OutOfPlace Result `json:"out_of_place"`
	InPlace    Result `json:"in_place"`
}

// Result is one half of a row: out-of-place or in-place.
type Result struct {
	// Present is false when the half was not printed (nccl-tests leaves
	// out-of-place blank when replaying a trace).
	Present   bool    `json:"present"`
	TimeUs    float64 `json:"time_us"`
	AlgBwGBps float64 `json:"algbw_GBps"`
	BusBwGBps float64 `json:"busbw_GBps"`
	// Wrong is the error column as printed: a count of wrong elements
	// (#wrong), a maximum deviation (error, res) or N/A.
	Wrong string `json:"wrong"`

	// algErr and busErr are half the last printed digit of algbw and
	// busbw: the rounding the printed values carry.
	algErr, busErr float64
}

// Func returns the run's collective as a function of NCCL's tuning model.
func (r *Run) Func() (tune.Func, bool) { return r.Collective.Func() }
