package main

// This file implements `ncclsim export-tuner`: NCCL's choices per size
// range, or the measured winners of nccl-tests runs, in the CSV format of
// NCCL's example tuner plugin (service.TunerConfig, which documents the
// format).

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/distributed-nav/distributed-nav/playground/service"
)

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
	svc := service.New()
	var c *service.TunerConfig
	if *measured != "" {
		if sf.preset != "" || sf.xml != "" {
			return usagef("--nccl-tests writes the measured winners; it takes no --preset or --xml")
		}
		r, closeFn, err := openInput(*measured, stdin)
		if err != nil {
			return err
		}
		defer closeFn()
		if c, err = svc.MeasuredTuner(service.NCCLTestsInput{Text: r, Name: *measured}); err != nil {
			return cliError(err, nil, stderr)
		}
	} else {
		req, err := sf.request(stdin)
		if err != nil {
			return err
		}
		req.Dtype = *dtype
		if c, err = svc.ExportTuner(ctx, req, service.TunerExport{Colls: *colls, KeepNCCLChannels: *keepChannels, AnyShape: *anyShape}); err != nil {
			return cliError(err, req, stderr)
		}
		report(stderr, c.Checked)
	}
	text := c.CSV()
	if *out == "-" {
		if _, err := io.WriteString(stdout, text); err != nil {
			return fmt.Errorf("write: %w", err)
		}
		return nil
	}
	if err := os.WriteFile(*out, []byte(text), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", *out, err)
	}
	fmt.Fprintf(stderr, "wrote %s\n", *out)
	return nil
}
