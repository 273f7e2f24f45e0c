// Command ncclsim models NCCL v2.30.7-1's view of a system: topology, paths
// and transports, the channel graphs its search builds, and (with the tuning
// commands) the algorithm and protocol it picks.
//
// Usage:
//
//	ncclsim presets [--json]
//	ncclsim topo SYSTEM [--timeout D] [--json]
//	ncclsim tune SYSTEM [--coll C] [--json]
//	ncclsim estimate SYSTEM --coll C --bytes N [--dtype T] [--fabric auto|rdma|tcp] [--json]
//	ncclsim calibrate [--data DIR] [--out FILE|-] [--check]
//	ncclsim validate [--data DIR] [--calibration FILE] [--min-bytes N] [--points] [--json]
//	ncclsim step SYSTEM --model ddp|fsdp --params N [--dtype T] --forward-ms F --backward-ms B
//	             [--bucket-cap-mb MB] [--first-iteration] [--layers L] [--reshard-after-forward=false] [--solve-speedup S,...] [--json]
//	ncclsim compare SYSTEM --nccl-tests FILE [--coll C] [--nranks N] [--run K] [--json]
//	ncclsim export-tuner SYSTEM [--coll LIST] [--keep-nccl-channels] [--any-shape] [--out FILE]
//	ncclsim export-tuner --nccl-tests FILE [--out FILE]
//	ncclsim doctor [--log FILE] [--env FILE] [--json]         ("-" reads standard input)
//
// where SYSTEM is (--preset NAME | --xml FILE) [--nodes N] [--env K=V]...
// [--p2p auto|all|none|nvlink], the same flags for every command (system.go);
// --xml - reads standard input.
//
// estimate prints NCCL's model time next to the calibrated estimate (what
// nccl-tests would measure, fitted on data/measurements); calibrate refits
// data/calibration.yaml and validate compares both with every published
// run; compare puts a user's own nccl-tests output next to both; step
// projects a DDP or FSDP2 step; export-tuner writes NCCL's choices, or the
// measured winners of nccl-tests runs, for NCCL_TUNER_CONFIG_FILE.
//
// Every command but calibrate is a thin caller of package service: the
// flags become a service request, the service validates them and answers
// with a typed result, and the command prints it as text or, with --json,
// as the result itself (encoding/json). The browser's wasm calls the same
// service functions, so both print the same numbers.
//
// Errors go to standard error with exit status 1; usage errors (an input
// the service refused included) exit with 2.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/distributed-nav/distributed-nav/playground/controls"
)

// command is one subcommand. To add one, write its run function in its own
// file and add a line to commands.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error
}

var commands = []command{
	{"presets", "list the built-in systems", runPresets},
	{"topo", "show GPUs, NICs, paths, transports and searched graphs of a system", runTopo},
	{"tune", "NCCL's tuning table and the algorithm/protocol it picks per message size", runTune},
	{"estimate", "time of one collective: NCCL's tuning model and the calibrated estimate", runEstimate},
	{"calibrate", "fit the calibrated estimator on data/measurements and write data/calibration.yaml", runCalibrate},
	{"validate", "busbw error of the model and the calibrated estimate against every published run", runValidate},
	{"step", "one DDP or FSDP2 training step: overlap timeline, exposed communication, speedup, memory", runStep},
	{"compare", "a measured nccl-tests run next to NCCL's model and the calibrated estimate, and what the gap means", runCompare},
	{"export-tuner", "NCCL's choices (or the measured winners of nccl-tests runs) per size range as a CSV for NCCL's example tuner plugin", runExportTuner},
	{"doctor", "read an NCCL/PyTorch log and an environment dump: summary, topology, diagnoses", runDoctor},
}

// usageError marks errors caused by bad command-line arguments (exit 2).
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes the command line and returns the exit status; stdin is
// what "--xml -" and the other "-" file names read.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		printUsage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, args[1:], stdin, stdout, stderr)
		code := exitStatus(err)
		if code != 0 {
			fmt.Fprintf(stderr, "ncclsim %s: %s\n", c.name, controls.Escape(err.Error(), '\n', '\t'))
		}
		return code
	}
	fmt.Fprintf(stderr, "ncclsim: unknown command %q\n", args[0])
	printUsage(stderr)
	return 2
}

// exitStatus is the exit status for a command's error: 0 for none or a
// help request, 2 for a usage error, 1 for any other failure.
func exitStatus(err error) int {
	var ue usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		return 2
	}
	return 1
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: ncclsim COMMAND [flags]")
	fmt.Fprintln(w, "commands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "run 'ncclsim COMMAND -h' for the flags of a command")
}

// newFlagSet returns a flag set that reports errors instead of exiting.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("ncclsim "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parseFlags parses args and turns flag errors into usage errors.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	return nil
}
