package main

// This file implements `ncclsim export-tuner`: NCCL's algorithm, protocol
// and channel choices per message-size range, written in the CSV format of
// the example tuner plugin of NCCL v2.30.7-1
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/plugins/tuner/example/README.md),
// so that a job can load them with NCCL_TUNER_PLUGIN and
// NCCL_TUNER_CONFIG_FILE.
//
// The plugin reads one configuration per line,
// collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,regBuff,
// skips lines starting with '#', parses the sizes with strtoull and matches
// min_bytes <= nBytes <= max_bytes, the first matching line winning
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/plugins/tuner/example/plugin.c#L353-L460,
// pluginGetCollInfo; lines are read into a 256-byte buffer, loadConfig
// #L151-L292). nBytes is NCCL's own count: the whole gathered buffer for
// AllGather and ReduceScatter.

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/compare"
	"github.com/distributed-nav/distributed-nav/playground/estimate"
	"github.com/distributed-nav/distributed-nav/playground/tune"
)

// tunerAlgoNames and tunerProtoNames are the spellings the example plugin
// parses (plugin.c, parseAlgorithm and parseProtocol), in NCCL's index
// order.
var (
	tunerAlgoNames  = [tune.NumAlgorithms]string{"tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"}
	tunerProtoNames = [tune.NumProtocols]string{"ll", "ll128", "simple"}
	tunerFuncNames  = [tune.NumFuncs]string{"broadcast", "reduce", "allgather", "reducescatter", "allreduce"}
)

// tunerMaxLine is one less than the plugin's line buffer (MAX_LINE_LENGTH).
const tunerMaxLine = 255

// tunerRow is one configuration line.
type tunerRow struct {
	Func       tune.Func
	Min, Max   uint64
	Algo       tune.Algorithm
	Proto      tune.Protocol
	Channels   int // -1 keeps NCCL's count
	NNodes     int
	NRanks     int
	NumPipeOps int
	RegBuff    int
}

func (r tunerRow) String() string {
	return fmt.Sprintf("%s,%d,%d,%s,%s,%d,%d,%d,%d,%d", tunerFuncNames[r.Func], r.Min, r.Max, tunerAlgoNames[r.Algo], tunerProtoNames[r.Proto],
		r.Channels, r.NNodes, r.NRanks, r.NumPipeOps, r.RegBuff)
}

// runExportTuner implements `ncclsim export-tuner`; stdin is read for "-" file names.
func runExportTuner(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("export-tuner", stderr)
	var sf systemFlags
	sf.register(fs)
	asJSON := fs.Bool("json", false, "not supported: export-tuner writes CSV")
	colls := fs.String("coll", "all", "collectives to export: all, or a comma list of broadcast, reduce, allgather, reducescatter, allreduce")
	dtype := fs.String("dtype", "float32", "element type the choices are made for (NVLS and the FP8 ring penalty depend on it)")
	keepChannels := fs.Bool("keep-nccl-channels", false, "write -1 in the channels column (keep NCCL's own channel count) instead of the modelled count")
	anyShape := fs.Bool("any-shape", false, "write -1 for nNodes and nRanks so the lines match any communicator (default: this system's counts only)")
	out := fs.String("out", "-", "file to write, - for standard output")
	measured := fs.String("nccl-tests", "", "write the measured winners of the nccl-tests runs in this file (runs pinned to different NCCL_ALGO/NCCL_PROTO) instead of NCCL's model; - reads standard input")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: ncclsim export-tuner (--preset NAME | --xml FILE) [--nodes N] [--p2p MODE] [--env NAME=VALUE]... [--coll LIST] [--dtype T] [--keep-nccl-channels] [--any-shape] [--out FILE]")
		fmt.Fprintln(stderr, "       ncclsim export-tuner --nccl-tests FILE [--out FILE]")
		fmt.Fprintln(stderr, "Writes NCCL's choice per size range in the CSV format of NCCL's example tuner plugin (load it with NCCL_TUNER_CONFIG_FILE).")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *asJSON {
		return usagef("export-tuner writes CSV; --json is not supported")
	}
	var b strings.Builder
	if *measured != "" {
		if sf.preset != "" || sf.xml != "" {
			return usagef("--nccl-tests writes the measured winners; it takes no --preset or --xml")
		}
		if err := measuredTuner(&b, *measured, stdin); err != nil {
			return err
		}
		return writeTunerFile(b.String(), *out, stdout, stderr)
	}
	funcs, err := parseFuncList(*colls)
	if err != nil {
		return usagef("--coll: %v", err)
	}
	dt, err := tune.LookupDatatype(*dtype)
	if err != nil {
		return usagef("--dtype: %v", err)
	}
	run, err := buildTuneModel(ctx, &sf, stdin, stderr)
	if err != nil {
		return err
	}
	m := run.res.Tune
	fmt.Fprintf(&b, "# NCCL tuner configuration written by `ncclsim export-tuner` for %s x %d node(s), %d ranks, %s.\n", run.name, m.Sys.NNodes, m.Sys.NRanks, dt)
	fmt.Fprintf(&b, "# Choices of NCCL v2.30.7-1's own tuning model (the same as without the plugin, unless the system differs from the model).\n")
	if len(run.env.Names()) > 0 {
		fmt.Fprintf(&b, "# NCCL environment modelled: %s\n", strings.Join(envWords(run.env), " "))
	}
	fmt.Fprintf(&b, "# Sizes are NCCL's nBytes (AllGather/ReduceScatter: the whole gathered buffer); ranges include both ends.\n")
	fmt.Fprintf(&b, "# Use: NCCL_TUNER_PLUGIN=<path to the example plugin> NCCL_TUNER_CONFIG_FILE=<this file>\n")
	fmt.Fprintf(&b, "# collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,regBuff\n")
	for _, f := range funcs {
		rows, err := tunerRows(m, f, dt, *keepChannels, *anyShape)
		if err != nil {
			return err
		}
		for _, r := range rows {
			line := r.String()
			if len(line) > tunerMaxLine {
				return fmt.Errorf("export-tuner: line longer than the plugin's %d characters: %s", tunerMaxLine, line)
			}
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return writeTunerFile(b.String(), *out, stdout, stderr)
}

// writeTunerFile writes text to out ("-" = stdout).
func writeTunerFile(text, out string, stdout, stderr io.Writer) error {
	if out == "-" {
		if _, err := io.WriteString(stdout, text); err != nil {
			return fmt.Errorf("write: %w", err)
		}
		return nil
	}
	if err := os.WriteFile(out, []byte(text), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	fmt.Fprintf(stderr, "wrote %s\n", out)
	return nil
}

// measuredTuner writes the plugin lines of the measured winners of the
// nccl-tests runs in file name (compare.TunerFromRuns).
func measuredTuner(b *strings.Builder, name string, stdin io.Reader) error {
	nf, err := readNCCLTests(name, stdin, "", 0)
	if err != nil {
		return err
	}
	ranges, notes, err := compare.TunerFromRuns(nf.Runs)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	fmt.Fprintf(b, "# NCCL tuner configuration written by `ncclsim export-tuner --nccl-tests` from %d measured run(s) in %s.\n", len(nf.Runs), name)
	b.WriteString("# Each range holds the NCCL_ALGO/NCCL_PROTO pair whose run had the highest out-of-place busbw at the measured sizes inside it;\n")
	b.WriteString("# ranges meet at the geometric midpoint between measured sizes. Channels and nNodes are -1 (NCCL's own); nRanks is the runs'.\n")
	for _, n := range notes {
		fmt.Fprintf(b, "# left out: %s\n", n)
	}
	b.WriteString("# Use: NCCL_TUNER_PLUGIN=<path to the example plugin> NCCL_TUNER_CONFIG_FILE=<this file>\n")
	b.WriteString("# collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,regBuff\n")
	for _, r := range ranges {
		var won []string
		for i, s := range r.Sizes {
			won = append(won, fmt.Sprintf("%d B: %.2f GB/s", s, r.BusBwGBps[i]))
		}
		fmt.Fprintf(b, "# measured: %s\n", strings.Join(won, ", "))
		line := tunerRow{Func: r.Func, Min: r.Min, Max: r.Max, Algo: r.Algo, Proto: r.Proto, Channels: -1, NNodes: -1, NRanks: r.NRanks, NumPipeOps: 1, RegBuff: -1}.String()
		if len(line) > tunerMaxLine {
			return fmt.Errorf("export-tuner: line longer than the plugin's %d characters: %s", tunerMaxLine, line)
		}
		b.WriteString(line + "\n")
	}
	return nil
}

// tunerRows turns the model's choices for f into plugin lines covering
// every size from 0 to the largest size_t.
func tunerRows(m *tune.Model, f tune.Func, dt tune.Datatype, keepChannels, anyShape bool) ([]tunerRow, error) {
	segs, err := estimate.Segments(m, tune.Request{Func: f, Datatype: dt}, uint64(1)<<44)
	if err != nil {
		return nil, fmt.Errorf("export-tuner %s: %w", f, err)
	}
	nNodes, nRanks := m.Sys.NNodes, m.Sys.NRanks
	if anyShape {
		nNodes, nRanks = -1, -1
	}
	rows := make([]tunerRow, 0, len(segs))
	for i, s := range segs {
		r := tunerRow{Func: f, Min: s.MinBytes, Max: s.MaxBytes, Algo: s.Algo, Proto: s.Proto, Channels: s.NChannels,
			NNodes: nNodes, NRanks: nRanks, NumPipeOps: 1, RegBuff: -1}
		if keepChannels {
			r.Channels = -1
		}
		if i == len(segs)-1 {
			r.Max = math.MaxUint64
		}
		// Ranges that differ only in a column not written merge.
		if k := len(rows) - 1; k >= 0 && rows[k].Algo == r.Algo && rows[k].Proto == r.Proto && rows[k].Channels == r.Channels {
			rows[k].Max = r.Max
			continue
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// parseFuncList reads "all" or a comma list of collective names.
func parseFuncList(s string) ([]tune.Func, error) {
	if strings.TrimSpace(strings.ToLower(s)) == "all" {
		return []tune.Func{tune.Broadcast, tune.Reduce, tune.AllGather, tune.ReduceScatter, tune.AllReduce}, nil
	}
	var out []tune.Func
	seen := map[tune.Func]bool{}
	for _, name := range strings.Split(s, ",") {
		f, err := tune.LookupFunc(name)
		if err != nil {
			return nil, err
		}
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out, nil
}
