package main

// This file implements `ncclsim tune`.

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/service"
	"github.com/distributed-nav/distributed-nav/playground/tune"
)

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
	req, err := sf.request(stdin)
	if err != nil {
		return err
	}
	req.Coll = *coll
	out, err := service.New().Tune(ctx, req)
	if err != nil {
		return cliError(err, req, stderr)
	}
	report(stderr, out.Checked)
	if *asJSON {
		return writeJSON(stdout, out)
	}
	return writeTuneText(stdout, out, envWords(out.Env), *prefix)
}

// envWords renders an environment as NAME=VALUE words in name order.
func envWords(env map[string]string) []string {
	names := make([]string, 0, len(env))
	for n := range env {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n + "=" + env[n]
	}
	return out
}

// writeTuneText writes the tuning answer as text; prefix goes before each
// line in NCCL's log format.
func writeTuneText(w io.Writer, r *service.TuneResult, env []string, prefix string) error {
	m := r.Model
	f, _ := tune.LookupFunc(r.Coll)
	rows := r.Selection
	var b strings.Builder
	fmt.Fprintf(&b, "# %s on %d node(s): %d ranks, compute capability %d-%d, NCCL v2.30.7-1 tuning model\n",
		r.Topology, r.Nodes, m.Sys.NRanks, m.Sys.MinCompCap, m.Sys.MaxCompCap)
	if kv := env; len(kv) > 0 {
		fmt.Fprintf(&b, "# env: %s\n", strings.Join(kv, " "))
	}
	fmt.Fprintf(&b, "# channels: %d (nvls %d); graphs: ring %d x %.1f/%.1f GB/s %v/%v, tree %d x %.1f/%.1f GB/s\n",
		m.CommNChannels, m.NVLSChannels,
		m.Graphs.Ring.NChannels, m.Graphs.Ring.BwIntra, m.Graphs.Ring.BwInter, m.Graphs.Ring.TypeIntra, m.Graphs.Ring.TypeInter,
		m.Graphs.Tree.NChannels, m.Graphs.Tree.BwIntra, m.Graphs.Tree.BwInter)
	for _, n := range r.Notes {
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
	for _, row := range rows {
		fmt.Fprintf(&b, "%12s  %-13s %-6s %4d %5d %12.2f %11.2f %11.2f\n", tuneHumanBytes(row.Bytes), row.Algo, row.Proto, row.NChannels, row.NThreads, row.TimeUs, row.AlgBwGBps, row.BusBwGBps)
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
