package main

// This file implements `ncclsim estimate`: the time of one collective as
// NCCL's tuning model predicts it and as the calibrated estimator expects
// nccl-tests to measure it (service.EstimateResult).

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/estimate"
	"github.com/distributed-nav/distributed-nav/playground/service"
	"github.com/distributed-nav/distributed-nav/playground/tune"
)

// runEstimate implements `ncclsim estimate`; stdin is read for "-" file names.
func runEstimate(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("estimate", stderr)
	var sf systemFlags
	sf.register(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	coll := fs.String("coll", "", "collective: broadcast, reduce, allgather, reducescatter, allreduce (required)")
	bytesFlag := fs.String("bytes", "", "message size in bytes, suffixes K/M/G allowed; for allgather/reducescatter the whole buffer of all ranks, as nccl-tests' size (required)")
	dtype := fs.String("dtype", "float32", "element type (float32, float16, bfloat16, float64, int8, ..., float8e4m3)")
	fabricFlag := fs.String("fabric", "auto", "network between nodes: auto (from the NIC names), rdma (InfiniBand/RoCE) or tcp (sockets, TCPXO)")
	calPath := fs.String("calibration", "", "calibration file (default: the copy of data/calibration.yaml built into ncclsim)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: ncclsim estimate (--preset NAME | --xml FILE) [--nodes N] [--p2p MODE] [--env NAME=VALUE]... --coll C --bytes N [--dtype T] [--fabric F] [--calibration FILE] [--json]")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *coll == "" || *bytesFlag == "" {
		return usagef("--coll and --bytes are required")
	}
	svc, err := newService(*calPath)
	if err != nil {
		return err
	}
	req, err := sf.request(stdin)
	if err != nil {
		return err
	}
	req.Coll, req.Bytes, req.Dtype, req.Fabric = *coll, *bytesFlag, *dtype, *fabricFlag
	out, err := svc.Estimate(ctx, req)
	if err != nil {
		return cliError(err, req, stderr)
	}
	report(stderr, out.Checked)
	if *asJSON {
		return writeJSON(stdout, out)
	}
	var b strings.Builder
	mb := out.Model
	fmt.Fprintf(&b, "%s of %d bytes (%s) on %s x %d node(s), %d ranks\n", out.Coll, out.Bytes, out.Datatype, out.Topology, out.NNodes, out.NRanks)
	if f, _ := tune.LookupFunc(out.Coll); f == tune.AllGather || f == tune.ReduceScatter {
		fmt.Fprintf(&b, "  (%d bytes per rank; NCCL and nccl-tests count the whole buffer)\n", out.BytesPerRank)
	}
	fmt.Fprintf(&b, "NCCL tuning model (%s), what NCCL believes: %s/%s on %d channels x %d threads\n", service.NCCLVersion, mb.Algo, mb.Proto, mb.NChannels, mb.NThreads)
	fmt.Fprintf(&b, "  time %.2f us = %.1f us latency + size / %.1f GB/s (with the size corrections of ncclTopoGetAlgoTime)\n",
		mb.TimeUs, mb.LatencyUs, mb.BandwidthGBps)
	fmt.Fprintf(&b, "  algbw %.2f GB/s, busbw %.2f GB/s\n", mb.AlgBwGBps, mb.BusBwGBps)
	writeCalibratedText(&b, out.Calibrated)
	if _, err := io.WriteString(stdout, b.String()); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

// newService returns the service, with the calibration file calPath in
// place of the built-in one when it is given.
func newService(calPath string) (*service.Service, error) {
	svc := service.New()
	if calPath == "" {
		return svc, nil
	}
	// readInput stops one byte past the limit, so an endless stream (a
	// FIFO, /dev/zero) ends there and a file over it is refused by size.
	text, err := readInput(calPath, nil, estimate.MaxCalibrationBytes)
	if err != nil {
		return nil, fmt.Errorf("read calibration: %w", err)
	}
	c, err := estimate.ParseCalibration([]byte(text))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", calPath, err)
	}
	svc.Calibration = c
	return svc, nil
}

// writeCalibratedText describes the calibrated estimate in a few lines.
func writeCalibratedText(b *strings.Builder, c *estimate.Calibrated) {
	if c.Class == "" {
		fmt.Fprintf(b, "calibrated estimate: %s\n", c.Support)
		return
	}
	fmt.Fprintf(b, "calibrated estimate, what nccl-tests would measure (path class %s: %s):\n", c.Class, c.Class.Describe())
	if c.RampBusBytes == 0 {
		fmt.Fprintf(b, "  time %.2f us: NCCL's model (latency %.1f us, busbw %.2f GB/s), see support below\n", c.TimeUs, c.LatencyUs, c.PlateauBusBwGBps)
	} else {
		fmt.Fprintf(b, "  time %.2f us: latency floor %.1f us, plateau busbw %.2f GB/s, 63%% of the plateau at %.3g bus bytes\n",
			c.TimeUs, c.LatencyUs, c.PlateauBusBwGBps, c.RampBusBytes)
	}
	fmt.Fprintf(b, "  algbw %.2f GB/s, busbw %.2f GB/s", c.AlgBwGBps, c.BusBwGBps)
	if c.BusBwHighGBps != nil {
		fmt.Fprintf(b, " (measured runs of this class: %.2f-%.2f GB/s)\n", c.BusBwLowGBps, *c.BusBwHighGBps)
	} else {
		fmt.Fprintf(b, " (measured runs of this class: at least %.2f GB/s)\n", c.BusBwLowGBps)
	}
	fmt.Fprintf(b, "  error band of the class (out-of-sample: each point predicted without its own source): -%.1f%% .. +%.1f%%, median %.1f%%, max %.1f%% over %d points of %d datasets from %d sources (sizes >= %d bytes)\n",
		c.Band.UnderPct, c.Band.OverPct, c.Band.MedianPct, c.Band.MaxPct, c.Band.Points, c.Band.Datasets, c.Band.Sources, c.Band.MinBytes)
	fmt.Fprintf(b, "  independent sources behind the class's efficiency: %d\n", c.NSources)
	if c.Held {
		fmt.Fprintf(b, "  held at the time of %d bytes: NCCL's switch to %s/%s makes the calibrated curve drop there\n", c.HeldFromBytes, c.Algo, c.Proto)
	}
	fmt.Fprintf(b, "  support: %s\n", c.Support)
}
