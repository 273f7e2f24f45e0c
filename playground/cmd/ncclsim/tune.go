package main

// This file implements `ncclsim tune`, and buildTuneModel, which runs
// NCCL's model on the system the shared flags (system.go) name for tune,
// estimate, step and export-tuner.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/model"
	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
	"github.com/distributed-nav/distributed-nav/playground/tune"
	"github.com/distributed-nav/distributed-nav/playground/units"
)

// tuneRun is a loaded system with NCCL's model built on it.
type tuneRun struct {
	*loadedSystem
	res *model.Result
}

// buildTuneModel loads the system sf names (see systemFlags.load) and runs
// the model pipeline on it, replicated over --nodes.
func buildTuneModel(ctx context.Context, sf *systemFlags, stdin io.Reader, stderr io.Writer) (*tuneRun, error) {
	l, err := sf.load(stdin, stderr)
	if err != nil {
		return nil, err
	}
	res, err := model.Build(ctx, l.host, l.nodes, l.env)
	if err != nil {
		return nil, err
	}
	return &tuneRun{loadedSystem: l, res: res}, nil
}

// tuneSelectionRow is one size of the selection sweep.
type tuneSelectionRow struct {
	Bytes     uint64  `json:"bytes"`
	Algo      string  `json:"algo"`
	Proto     string  `json:"proto"`
	NChannels int     `json:"nchannels"`
	NThreads  int     `json:"nthreads"`
	TimeUs    float64 `json:"time_us"`
	AlgBw     float64 `json:"algbw_GBps"`
	BusBw     float64 `json:"busbw_GBps"`
}

// tuneCell is one (function, algorithm, protocol) cell of the tables.
type tuneCell struct {
	Func      string  `json:"func"`
	Algo      string  `json:"algo"`
	Proto     string  `json:"proto"`
	LatencyUs float64 `json:"latency_us"`
	BwGBps    float64 `json:"bandwidth_GBps"`
	Usable    bool    `json:"usable"`
}

// tuneOutput is the JSON form of `ncclsim tune`.
type tuneOutput struct {
	Topology      string             `json:"topology"`
	Nodes         int                `json:"nodes"`
	NRanks        int                `json:"nranks"`
	NCCL          string             `json:"nccl"`
	Env           map[string]string  `json:"env"`
	Problems      []tuneProblem      `json:"problems"`
	CommNChannels int                `json:"comm_nchannels"`
	NVLSChannels  int                `json:"nvls_channels"`
	MaxThreads    map[string][]int   `json:"max_threads"`
	Thresholds    string             `json:"thread_thresholds"`
	Cells         []tuneCell         `json:"cells"`
	TableText     []string           `json:"tuning_log"`
	EnableMatrix  string             `json:"enable_matrix,omitempty"`
	Coll          string             `json:"coll"`
	Selection     []tuneSelectionRow `json:"selection"`
	Notes         []string           `json:"notes"`
}

// tuneProblem is an ncclenv.Problem for JSON output.
type tuneProblem struct {
	Name        string   `json:"name"`
	Severity    string   `json:"severity"`
	Kind        string   `json:"kind"`
	Message     string   `json:"message"`
	Suggestions []string `json:"suggestions,omitempty"`
}

func tuneProblems(ps []ncclenv.Problem) []tuneProblem {
	out := []tuneProblem{}
	for _, p := range ps {
		out = append(out, tuneProblem{p.Name, p.Severity.String(), p.Kind.String(), p.Message, p.Suggestions})
	}
	return out
}

func tuneEnvMap(e ncclenv.Env) map[string]string {
	m := map[string]string{}
	for _, n := range e.Names() {
		v, _ := e.Lookup(n)
		m[n] = v
	}
	return m
}

// tuneSweepSizes are the message sizes of the selection table: every power
// of two from 8 B to 8 GiB.
var tuneSweepSizes = tune.Sizes(8, 8<<30)

// runTune implements `ncclsim tune`; stdin is read for "-" file names.
func runTune(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("tune", stderr)
	var sf systemFlags
	sf.register(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	coll := fs.String("coll", "allreduce", "collective for the selection table: broadcast, reduce, allgather, reducescatter, allreduce")
	prefix := fs.String("prefix", "", "text put before each NCCL-format log line (e.g. 'NCCL INFO ')")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: ncclsim tune (--preset NAME | --xml FILE) [--nodes N] [--p2p MODE] [--env NAME=VALUE]... [--coll allreduce] [--json]")
		fmt.Fprintln(stderr, "Prints NCCL's tuning table (as NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING logs it) and the chosen algorithm/protocol per size.")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	f, err := tune.LookupFunc(*coll)
	if err != nil {
		return usagef("--coll: %v", err)
	}
	run, err := buildTuneModel(ctx, &sf, stdin, stderr)
	if err != nil {
		return err
	}
	m := run.res.Tune
	choices, err := m.Sweep(ctx, f, tuneSweepSizes, tune.Request{})
	if err != nil {
		return fmt.Errorf("selection: %w", err)
	}
	rows := make([]tuneSelectionRow, len(choices))
	for i, c := range choices {
		alg := c.AlgBwGBps()
		rows[i] = tuneSelectionRow{c.NBytes, c.Algo.String(), c.Proto.String(), c.NChannels, c.NThreads,
			float64(c.TimeUs), alg, alg * tune.BusBwFactor(f, m.Sys.NRanks)}
	}
	if *asJSON {
		out := tuneOutput{
			Topology: run.name, Nodes: run.nodes, NRanks: m.Sys.NRanks, NCCL: "v2.30.7-1",
			Env: tuneEnvMap(run.env), Problems: tuneProblems(run.problems),
			CommNChannels: m.CommNChannels, NVLSChannels: m.NVLSChannels,
			MaxThreads: map[string][]int{}, Thresholds: m.ThresholdsLine(),
			TableText: m.TuningTableLines(), Coll: f.String(), Selection: rows,
			Notes: append([]string{}, run.res.Notes...),
		}
		if out.TableText == nil {
			out.TableText = []string{}
		}
		if s, ok := m.EnableMatrix(); ok {
			out.EnableMatrix = s
		}
		for a := tune.Algorithm(0); a < tune.NumAlgorithms; a++ {
			out.MaxThreads[a.String()] = m.MaxThreads[a][:]
		}
		for fn := tune.Func(0); fn < tune.NumFuncs; fn++ {
			for a := tune.Algorithm(0); a < tune.NumAlgorithms; a++ {
				for p := tune.Protocol(0); p < tune.NumProtocols; p++ {
					out.Cells = append(out.Cells, tuneCell{fn.String(), a.String(), p.String(),
						float64(m.Latencies[fn][a][p]), float64(m.Bandwidths[fn][a][p]), m.Bandwidths[fn][a][p] > 0})
				}
			}
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return fmt.Errorf("write JSON: %w", err)
		}
		return nil
	}
	return writeTuneText(stdout, run, f, rows, *prefix)
}

func writeTuneText(w io.Writer, run *tuneRun, f tune.Func, rows []tuneSelectionRow, prefix string) error {
	m := run.res.Tune
	var b strings.Builder
	fmt.Fprintf(&b, "# %s on %d node(s): %d ranks, compute capability %d-%d, NCCL v2.30.7-1 tuning model\n",
		run.name, run.nodes, m.Sys.NRanks, m.Sys.MinCompCap, m.Sys.MaxCompCap)
	if kv := envWords(run.env); len(kv) > 0 {
		fmt.Fprintf(&b, "# env: %s\n", strings.Join(kv, " "))
	}
	fmt.Fprintf(&b, "# channels: %d (nvls %d); graphs: ring %d x %.1f/%.1f GB/s %v/%v, tree %d x %.1f/%.1f GB/s\n",
		m.CommNChannels, m.NVLSChannels,
		m.Graphs.Ring.NChannels, m.Graphs.Ring.BwIntra, m.Graphs.Ring.BwInter, m.Graphs.Ring.TypeIntra, m.Graphs.Ring.TypeInter,
		m.Graphs.Tree.NChannels, m.Graphs.Tree.BwIntra, m.Graphs.Tree.BwInter)
	for _, n := range run.res.Notes {
		fmt.Fprintf(&b, "# note: %s\n", n)
	}
	b.WriteString("#\n# NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING lines (latency us / algorithm bandwidth GB/s); strip\n")
	b.WriteString("# \"host:pid:tid [dev] NCCL INFO \" from your log to diff:\n")
	if s, ok := m.EnableMatrix(); ok {
		for _, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
			b.WriteString(prefix + l + "\n")
		}
	}
	for _, l := range m.TuningTableLines() {
		b.WriteString(prefix + l + "\n")
	}
	b.WriteString(prefix + m.ThresholdsLine() + "\n")
	fmt.Fprintf(&b, "\n# %s: chosen algorithm/protocol per size (bytes as NCCL counts them", f)
	if f == tune.AllGather || f == tune.ReduceScatter {
		fmt.Fprintf(&b, ": the whole %d-rank buffer", m.Sys.NRanks)
	}
	b.WriteString("; busbw as nccl-tests)\n")
	fmt.Fprintf(&b, "%12s  %-13s %-6s %4s %5s %12s %11s %11s\n", "bytes", "algorithm", "proto", "nch", "nthr", "time_us", "algbw_GBps", "busbw_GBps")
	for _, r := range rows {
		fmt.Fprintf(&b, "%12s  %-13s %-6s %4d %5d %12.2f %11.2f %11.2f\n", tuneHumanBytes(r.Bytes), r.Algo, r.Proto, r.NChannels, r.NThreads, r.TimeUs, r.AlgBw, r.BusBw)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

// tuneHumanBytes prints a power-of-two size with a binary unit.
func tuneHumanBytes(n uint64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	u := 0
	v := n
	for v >= 1024 && v%1024 == 0 && u < len(units)-1 {
		v /= 1024
		u++
	}
	return fmt.Sprintf("%d %s", v, units[u])
}

// parseByteCount reads a byte count as nccl-tests' -b/-e do (units.ParseBytes).
func parseByteCount(s string) (uint64, error) {
	n, err := units.ParseBytes(s)
	if err != nil {
		return 0, fmt.Errorf("bytes %q: %w", s, err)
	}
	return n, nil
}
