package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/distributed-nav/distributed-nav/playground/doctor"
	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
)

// maxEnvFileBytes bounds how much of an --env file is read.
const maxEnvFileBytes = 16 << 20

// doctorJSON is the shape of "ncclsim doctor --json": doctor.Report,
// encoded with encoding/json (the wasm playground returns the same bytes).
type doctorJSON = doctor.Report

// runDoctor implements `ncclsim doctor`; stdin is read for "-" file names.
func runDoctor(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("doctor", stderr)
	logFile := fs.String("log", "", "NCCL/PyTorch log to read (NCCL_DEBUG=INFO output); - reads stdin")
	envFile := fs.String("env", "", "`env | grep -E 'NCCL|TORCH'` output or an nccl.conf file to check; - reads stdin")
	asJSON := fs.Bool("json", false, "print JSON")
	explain := fs.String("explain", "", "one log `LINE` to tie to the NCCL source line that prints it (field meanings, permalink)")
	version := fs.String("nccl-version", "", "NCCL `VERSION` the --explain line comes from (reads release-dependent numbers such as path types)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *explain != "" {
		if *logFile != "" || *envFile != "" {
			return usagef("--explain takes one line; give it without --log and --env")
		}
		x := doctor.ExplainLine(*explain, *version)
		if *asJSON {
			b, err := json.MarshalIndent(x, "", "  ")
			if err != nil {
				return fmt.Errorf("doctor: %w", err)
			}
			_, err = stdout.Write(append(b, '\n'))
			return err
		}
		return doctor.WriteExplanation(stdout, x)
	}
	if *logFile == "" && *envFile == "" {
		return usagef("give --log FILE, --env FILE, both, or --explain LINE")
	}
	if *logFile == "-" && *envFile == "-" {
		return usagef("only one of --log and --env can read stdin")
	}
	out := doctorJSON{Diagnoses: []doctor.Diagnosis{}}
	env := ncclenv.Env{}
	if *envFile != "" {
		text, err := readInput(*envFile, stdin, maxEnvFileBytes)
		if err != nil {
			return err
		}
		entries, _ := doctor.ParseEnvText(text)
		kv := make(map[string]string, len(entries))
		for _, e := range entries {
			kv[e.Name] = e.Value
		}
		env = ncclenv.New(kv)
		out.EnvFindings = doctor.LintEnv(text)
	}
	if *logFile != "" {
		r, closeFn, err := openInput(*logFile, stdin)
		if err != nil {
			return err
		}
		s, err := doctor.ParseLogContext(ctx, r, doctor.Options{})
		closeFn()
		if err != nil {
			return fmt.Errorf("%s: %w", *logFile, err)
		}
		out.Summary = s
		out.Diagnoses = doctor.Diagnose(s, env)
	} else {
		// Without a log, the environment rules still give diagnoses.
		out.Diagnoses = doctor.Diagnose(nil, env)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(&out); err != nil {
			return fmt.Errorf("doctor: encode JSON: %w", err)
		}
		return nil
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

// openInput opens name, or returns stdin for "-".
func openInput(name string, stdin io.Reader) (io.Reader, func(), error) {
	if name == "-" {
		return stdin, func() {}, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, err
	}
	return f, func() { f.Close() }, nil
}

// readInput reads up to limit bytes of name (or stdin for "-").
func readInput(name string, stdin io.Reader, limit int64) (string, error) {
	r, closeFn, err := openInput(name, stdin)
	if err != nil {
		return "", err
	}
	defer closeFn()
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	if int64(len(b)) > limit {
		return "", fmt.Errorf("%s: larger than %d bytes", name, limit)
	}
	return string(b), nil
}
