package main

// This file implements `ncclsim compare`: a user's nccl-tests output next
// to NCCL's model and the calibrated estimate of the system the flags
// name, per size, with what the gap means (service.CompareResult).

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/service"
)

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
	fabric := fs.String("fabric", "auto", "network between nodes: auto, rdma or tcp")
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
	svc, err := newService(*calPath)
	if err != nil {
		return err
	}
	req, err := sf.request(stdin)
	if err != nil {
		return err
	}
	req.Fabric = *fabric
	r, closeFn, err := openInput(*file, stdin)
	if err != nil {
		return err
	}
	defer closeFn()
	out, err := svc.Compare(ctx, req, service.CompareRequest{Run: *which,
		NCCLTests: service.NCCLTestsInput{Text: r, Name: *file, Coll: *coll, NRanks: *nranks}})
	if err != nil {
		return cliError(err, req, stderr)
	}
	report(stderr, out.Checked)
	if *asJSON {
		return writeJSON(stdout, out)
	}
	if _, err := io.WriteString(stdout, formatCompare(out)); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

// formatCompare renders a comparison as text.
func formatCompare(o *service.CompareResult) string {
	var b strings.Builder
	r := o.Result
	fmt.Fprintf(&b, "%s of %s on %s x %d node(s), %d ranks: run %d of %d (table at line %d; collective from the %s, rank count from the %s)\n",
		r.Coll, r.Dtype, o.Topology, r.NNodes, r.NRanks, o.Run, o.Runs, r.HeaderLine, r.CollFrom, r.NRanksFrom)
	if len(r.Env) > 0 {
		fmt.Fprintf(&b, "modelled with the run's %s\n", strings.Join(envWords(r.Env), " "))
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
	for i, x := range o.Others {
		if i == maxOtherRuns {
			fmt.Fprintf(&b, "and %d more run(s) in the file (--json lists them all; --run N compares run N)\n", len(o.Others)-i)
			break
		}
		fmt.Fprintf(&b, "the file also holds run %d: %s on %d ranks (line %d); --run %d compares it\n", x.Run, x.Coll, x.NRanks, x.HeaderLine, x.Run)
	}
	return b.String()
}

// maxOtherRuns is how many of a file's other runs the text output names
// one per line; a file may hold up to nccltests.MaxRuns of them.
const maxOtherRuns = 10

func pctText(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", *v)
}

func medText(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", *v)
}
