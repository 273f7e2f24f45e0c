package main

// This file implements `ncclsim tune` and the flag handling it shares with
// `ncclsim estimate`: choosing a topology (--preset or --xml), the node
// count, and NCCL environment variables (--env), which are validated the way
// the release would read them before the model runs.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/model"
	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
	"github.com/distributed-nav/distributed-nav/playground/presets"
	"github.com/distributed-nav/distributed-nav/playground/topo"
	"github.com/distributed-nav/distributed-nav/playground/tune"
	"github.com/distributed-nav/distributed-nav/playground/units"
)

// tuneEnvFlag collects repeated --env NAME=VALUE flags.
type tuneEnvFlag []string

func (e *tuneEnvFlag) String() string { return strings.Join(*e, " ") }

func (e *tuneEnvFlag) Set(v string) error {
	*e = append(*e, v)
	return nil
}

// tuneModelArgs are the flags common to the tune and estimate commands.
type tuneModelArgs struct {
	preset string
	xml    string
	nodes  int
	p2p    string
	env    tuneEnvFlag
	json   bool
}

func (m *tuneModelArgs) register(fs *flag.FlagSet) {
	fs.StringVar(&m.preset, "preset", "", "built-in system (see `ncclsim presets`)")
	fs.StringVar(&m.xml, "xml", "", "topology XML file, as NCCL_TOPO_DUMP_FILE writes it (- for standard input)")
	fs.IntVar(&m.nodes, "nodes", 1, "number of identical nodes")
	fs.StringVar(&m.p2p, "p2p", "auto", "GPU peer-to-peer support the driver reports: auto (from the XML), all, none or nvlink")
	fs.Var(&m.env, "env", "NCCL variable as NAME=VALUE (repeatable)")
	fs.BoolVar(&m.json, "json", false, "print JSON")
}

// tuneRun is a built model with what the user asked for.
type tuneRun struct {
	name     string
	env      ncclenv.Env
	problems []ncclenv.Problem
	res      *model.Result
}

// buildTuneModel validates the environment, loads the topology and runs the
// pipeline. Unknown variable names and values NCCL would misread are usage
// errors; deprecated names are reported on stderr and still applied, as
// NCCL does.
func buildTuneModel(ctx context.Context, a tuneModelArgs, stdin io.Reader, stderr io.Writer) (*tuneRun, error) {
	if (a.preset == "") == (a.xml == "") {
		return nil, usagef("give exactly one of --preset NAME or --xml FILE")
	}
	if a.nodes < 1 {
		return nil, usagef("--nodes %d: want at least 1", a.nodes)
	}
	env, err := ncclenv.ParseAssignments(a.env)
	if err != nil {
		return nil, usagef("--env: %v", err)
	}
	problems := ncclenv.Validate(env)
	for _, p := range problems {
		fmt.Fprintf(stderr, "ncclsim: --env %s\n", p)
	}
	if ncclenv.HasErrors(problems) {
		return nil, usagef("--env has errors (listed above)")
	}

	var host *topo.System
	var warns []topo.Warning
	name := a.preset
	switch {
	case a.preset != "":
		p, err := presets.Get(a.preset)
		if err != nil {
			return nil, usageError{err}
		}
		if host, warns, err = p.System(); err != nil {
			return nil, err
		}
	default:
		var r io.Reader
		if a.xml == "-" {
			r, name = stdin, "stdin"
		} else {
			f, err := os.Open(a.xml)
			if err != nil {
				return nil, fmt.Errorf("open topology: %w", err)
			}
			defer f.Close()
			r, name = f, a.xml
		}
		if host, warns, err = topo.ParseXML(r); err != nil {
			return nil, fmt.Errorf("parse topology %s: %w", name, err)
		}
	}
	for _, w := range warns {
		fmt.Fprintf(stderr, "ncclsim: topology: %v\n", w)
	}
	if a.p2p != "auto" {
		p2p, err := topo.ParseP2PSupport(a.p2p)
		if err != nil {
			return nil, usagef("--p2p: %v", err)
		}
		c := *host
		c.P2P = p2p
		host = &c
	}
	res, err := model.Build(ctx, host, a.nodes, env)
	if err != nil {
		return nil, err
	}
	return &tuneRun{name: name, env: env, problems: problems, res: res}, nil
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

// runTune implements `ncclsim tune`.
func runTune(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runTuneIO(ctx, args, os.Stdin, stdout, stderr)
}

// runTuneIO is runTune with an explicit standard input (for --xml -).
func runTuneIO(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("tune", stderr)
	var a tuneModelArgs
	a.register(fs)
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
	run, err := buildTuneModel(ctx, a, stdin, stderr)
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
	if a.json {
		out := tuneOutput{
			Topology: run.name, Nodes: a.nodes, NRanks: m.Sys.NRanks, NCCL: "v2.30.7-1",
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
	return writeTuneText(stdout, run, a.nodes, f, rows, *prefix)
}

func writeTuneText(w io.Writer, run *tuneRun, nodes int, f tune.Func, rows []tuneSelectionRow, prefix string) error {
	m := run.res.Tune
	var b strings.Builder
	fmt.Fprintf(&b, "# %s on %d node(s): %d ranks, compute capability %d-%d, NCCL v2.30.7-1 tuning model\n",
		run.name, nodes, m.Sys.NRanks, m.Sys.MinCompCap, m.Sys.MaxCompCap)
	if names := run.env.Names(); len(names) > 0 {
		var kv []string
		for _, n := range names {
			v, _ := run.env.Lookup(n)
			kv = append(kv, n+"="+v)
		}
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
