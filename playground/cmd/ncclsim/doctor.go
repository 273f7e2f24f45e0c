package main

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/distributed-nav/distributed-nav/playground/controls"
	"github.com/distributed-nav/distributed-nav/playground/doctor"
	"github.com/distributed-nav/distributed-nav/playground/service"
)

// runDoctor implements `ncclsim doctor`; stdin is read for "-" file names.
func runDoctor(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("doctor", stderr)
	logFile := fs.String("log", "", "NCCL/PyTorch log to read (NCCL_DEBUG=INFO output); - reads stdin")
	envFile := fs.String("env", "", "`env | grep -E 'NCCL|TORCH'` output or an nccl.conf file to check; - reads stdin")
	asJSON := fs.Bool("json", false, "print JSON")
	explain := fs.String("explain", "", "one log `LINE` to tie to the NCCL source line that prints it (field meanings, permalink)")
	maxLog := fs.Float64("max-log-mb", defaultLogMiB, "read at most this many MiB of the log: over it, its first and last halves (0: all of it; the time grows with the log)")
	version := fs.String("nccl-version", "", "NCCL `VERSION` the --explain line comes from (reads release-dependent numbers such as path types)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *explain != "" {
		if *logFile != "" || *envFile != "" {
			return usagef("--explain takes one line; give it without --log and --env")
		}
		x := service.New().Explain(*explain, *version)
		if *asJSON {
			return writeJSON(stdout, x)
		}
		return doctor.WriteExplanation(stdout, x)
	}
	if *logFile == "" && *envFile == "" {
		return usagef("give --log FILE, --env FILE, both, or --explain LINE")
	}
	if *logFile == "-" && *envFile == "-" {
		return usagef("only one of --log and --env can read stdin")
	}
	req := service.DoctorRequest{LogName: *logFile}
	if *envFile != "" {
		text, err := readInput(*envFile, stdin, service.MaxEnvFileBytes)
		if err != nil {
			return err
		}
		req.Env, req.HasEnv = text, true
	}
	if *logFile != "" {
		if !(*maxLog >= 0 && *maxLog <= 1<<20) { // NaN fails both
			return usagef("--max-log-mb %g: give 0 (no limit) to %d", *maxLog, 1<<20)
		}
		r, closeFn, err := openInput(*logFile, stdin)
		if err != nil {
			return err
		}
		defer closeFn()
		text, cut, err := capLog(r, int64(*maxLog*(1<<20)))
		if err != nil {
			return fmt.Errorf("read %s: %w", *logFile, err)
		}
		if cut != nil {
			fmt.Fprintf(stderr, "ncclsim doctor: %s: %v\n", controls.Escape(*logFile), cut)
		}
		req.Log = bytes.NewReader(text)
	}
	svc := service.New()
	out, err := svc.Doctor(ctx, req)
	if err != nil {
		return cliError(err, nil, stderr)
	}
	// The terminal has the estimator: an nccl-tests table gets the busbw
	// the model expects of the system it ran on (the page links it).
	if err := svc.DoctorExpectation(ctx, out); err != nil {
		fmt.Fprintf(stderr, "ncclsim doctor: %v\n", err)
	}
	if *asJSON {
		return writeJSON(stdout, out)
	}
	if out.Summary != nil {
		if err := doctor.WriteText(stdout, out.Summary, out.Diagnoses); err != nil {
			return err
		}
	}
	if *envFile != "" {
		if _, err := fmt.Fprintf(stdout, "\nEnvironment (%s)\n", *envFile); err != nil {
			return err
		}
		return doctor.WriteFindings(stdout, out.EnvFindings)
	}
	return nil
}
