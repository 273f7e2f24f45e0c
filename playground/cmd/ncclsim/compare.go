package main

// This file implements `ncclsim compare`: a user's nccl-tests output
// (package nccltests) next to NCCL's model and the calibrated estimate of
// the system the flags name, per size, with what the gap means (package
// compare).

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/compare"
	"github.com/distributed-nav/distributed-nav/playground/estimate"
	"github.com/distributed-nav/distributed-nav/playground/model"
	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
	"github.com/distributed-nav/distributed-nav/playground/nccltests"
)

// compareOutput is the JSON form of `ncclsim compare`: the comparison of
// the chosen run, plus what the file held.
type compareOutput struct {
	*compare.Result
	Topology string              `json:"topology"`
	Run      int                 `json:"run"`
	Runs     int                 `json:"runs_in_file"`
	Warnings []nccltests.Warning `json:"warnings"`
	Problems []tuneProblem       `json:"problems"`
	Others   []compareRunSummary `json:"other_runs,omitempty"`
}

// compareRunSummary names a run of the file not compared.
type compareRunSummary struct {
	Run        int               `json:"run"`
	Coll       string            `json:"coll"`
	NRanks     int               `json:"nranks"`
	HeaderLine int               `json:"header_line"`
	Env        map[string]string `json:"env"`
}

// readNCCLTests parses the nccl-tests output in file name ("-" = stdin)
// with the --coll/--nranks overrides.
func readNCCLTests(name string, stdin io.Reader, coll string, nranks int) (*nccltests.File, error) {
	var opts nccltests.Options
	if coll != "" {
		c, err := nccltests.ParseCollective(coll)
		if err != nil {
			return nil, usagef("--coll: %v", err)
		}
		opts.Collective = c
	}
	if nranks < 0 || nranks > nccltests.MaxRanks {
		return nil, usagef("--nranks %d: want 1..%d", nranks, nccltests.MaxRanks)
	}
	opts.NRanks = nranks
	r := stdin
	if name != "-" {
		fh, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer fh.Close()
		r = fh
	}
	f, err := nccltests.Parse(r, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return f, nil
}

// builderFor models the loaded system with extra NCCL variables under the
// flags' own (the flags win).
func builderFor(l *loadedSystem, fabric estimate.Fabric, cal *estimate.Calibration) compare.Builder {
	return func(ctx context.Context, extra map[string]string) (*estimate.System, error) {
		env := map[string]string{}
		for k, v := range extra {
			env[k] = v
		}
		for _, n := range l.env.Names() {
			env[n], _ = l.env.Lookup(n)
		}
		res, err := model.Build(ctx, l.host, l.nodes, ncclenv.New(env))
		if err != nil {
			return nil, err
		}
		return estimate.NewSystem(res, fabric, cal)
	}
}

// runCompare implements `ncclsim compare`.
func runCompare(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("compare", stderr)
	var sf systemFlags
	sf.register(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	file := fs.String("nccl-tests", "", "nccl-tests output (a console log or only the table); - reads standard input (required)")
	coll := fs.String("coll", "", "collective of the runs (default: from the file)")
	nranks := fs.Int("nranks", 0, "rank count of the runs (default: from the file)")
	which := fs.Int("run", 0, "which run of the file to compare, 1 = the first (default: the first NCCL models)")
	fabricFlag := fs.String("fabric", "auto", "network between nodes: auto, rdma or tcp")
	calPath := fs.String("calibration", "", "calibration file (default: the one built into ncclsim)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: ncclsim compare (--preset NAME | --xml FILE) [--nodes N] [--p2p MODE] [--env NAME=VALUE]... --nccl-tests FILE [--coll C] [--nranks N] [--run K] [--fabric F] [--json]")
		fmt.Fprintln(stderr, "Puts a measured nccl-tests run next to NCCL's model and the calibrated estimate of the system, per size, and says what the gap means.")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *file == "" {
		return usagef("--nccl-tests FILE is required")
	}
	if *file == "-" && sf.xml == "-" {
		return usagef("--nccl-tests - and --xml - cannot both read standard input")
	}
	fabric, err := estimate.ParseFabric(*fabricFlag)
	if err != nil {
		return usagef("--fabric: %v", err)
	}
	cal, err := loadCalibration(*calPath)
	if err != nil {
		return err
	}
	l, err := sf.load(stdin, stderr)
	if err != nil {
		return err
	}
	nf, err := readNCCLTests(*file, stdin, *coll, *nranks)
	if err != nil {
		return err
	}
	k := *which
	if k < 0 || k > len(nf.Runs) {
		return usagef("--run %d: the file holds %d run(s)", k, len(nf.Runs))
	}
	if k == 0 {
		for i, r := range nf.Runs {
			if _, ok := r.Func(); ok {
				k = i + 1
				break
			}
		}
		if k == 0 {
			return fmt.Errorf("%s: no run of a collective NCCL's tuning model describes (first: %s at line %d)", *file, nf.Runs[0].Collective, nf.Runs[0].HeaderLine)
		}
	}
	res, err := compare.Compare(ctx, nf.Runs[k-1], builderFor(l, fabric, cal))
	if err != nil {
		return err
	}
	out := compareOutput{Result: res, Topology: l.name, Run: k, Runs: len(nf.Runs), Warnings: nf.Warnings, Problems: tuneProblems(l.problems)}
	if out.Warnings == nil {
		out.Warnings = []nccltests.Warning{}
	}
	for i, r := range nf.Runs {
		if i != k-1 {
			out.Others = append(out.Others, compareRunSummary{Run: i + 1, Coll: string(r.Collective), NRanks: r.NRanks, HeaderLine: r.HeaderLine, Env: r.Env})
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return fmt.Errorf("write JSON: %w", err)
		}
		return nil
	}
	if _, err := io.WriteString(stdout, formatCompare(&out)); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

// formatCompare renders a comparison as text.
func formatCompare(o *compareOutput) string {
	var b strings.Builder
	r := o.Result
	fmt.Fprintf(&b, "%s of %s on %s x %d node(s), %d ranks: run %d of %d (table at line %d; collective from the %s, rank count from the %s)\n",
		r.Coll, r.Dtype, o.Topology, r.NNodes, r.NRanks, o.Run, o.Runs, r.HeaderLine, r.CollFrom, r.NRanksFrom)
	if len(r.Env) > 0 {
		var kv []string
		for _, k := range sortedKeys(r.Env) {
			kv = append(kv, k+"="+r.Env[k])
		}
		fmt.Fprintf(&b, "modelled with the run's %s\n", strings.Join(kv, " "))
	}
	if len(r.Ignored) > 0 {
		fmt.Fprintf(&b, "in the log but not modelled: %s\n", strings.Join(r.Ignored, " "))
	}
	fmt.Fprintf(&b, "calibrated path class %s: %s\n\n", r.Class, r.Support)
	fmt.Fprintf(&b, "%14s %10s %10s %11s %17s %9s %9s  %s\n", "BYTES", "MEASURED", "MODEL", "CALIBRATED", "BAND", "ERROR", "MODEL ERR", "MODEL ALGO/PROTO")
	for _, x := range r.Rows {
		band := fmt.Sprintf("%.2f-", x.BandLow)
		if x.BandHigh != nil {
			band += fmt.Sprintf("%.2f", *x.BandHigh)
		} else {
			band += "inf"
		}
		if x.InBand {
			band += " *"
		} else {
			band += "  "
		}
		fmt.Fprintf(&b, "%14d %10.2f %10.2f %11.2f %17s %9s %9s  %s/%s\n", x.Bytes, x.MeasuredBusBw, x.ModelBusBw, x.CalibratedBusBw, band, pctText(x.ErrorPct), pctText(x.ModelErrorPct), x.ModelAlgo, x.ModelProto)
	}
	b.WriteString("(busbw in GB/s, out-of-place; error = (predicted - measured) / measured; * = measured within the calibrated band)\n")
	s := r.Summary
	if s.Points > 0 {
		fmt.Fprintf(&b, "\nat sizes >= 1 MiB: calibrated median error %s, NCCL model %s, %d of %d points within the band\n", medText(s.MedianErrorPct), medText(s.ModelMedianErrorPct), s.InBand, s.Points)
	}
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "\n%s: %s\n  %s\n", f.Severity, f.Title, f.Text)
		for _, id := range f.DoctorRules {
			fmt.Fprintf(&b, "  doctor rule: %s (ncclsim doctor --log LOG reads it from an NCCL_DEBUG=INFO log)\n", id)
		}
		for _, l := range f.Links {
			fmt.Fprintf(&b, "  see: %s (%s)\n", l.Title, l.URL)
		}
	}
	for _, w := range o.Warnings {
		fmt.Fprintf(&b, "note: %s\n", w)
	}
	for _, x := range o.Others {
		fmt.Fprintf(&b, "the file also holds run %d: %s on %d ranks (line %d); --run %d compares it\n", x.Run, x.Coll, x.NRanks, x.HeaderLine, x.Run)
	}
	return b.String()
}

func pctText(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", *v)
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func medText(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", *v)
}
