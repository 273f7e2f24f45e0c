package main

// This file implements `ncclsim estimate`: the time of one collective as
// NCCL's tuning model predicts it (the algorithm/protocol NCCL would pick,
// its channel and thread counts, and the model time) and as the calibrated
// estimator expects nccl-tests to measure it (package estimate), in the
// JSON shape the design fixes. The top-level values are the calibrated
// ones.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/estimate"
	"github.com/distributed-nav/distributed-nav/playground/tune"
)

// estimateBlock is one estimator's answer.
type estimateBlock struct {
	Algo      string  `json:"algo"`
	Proto     string  `json:"proto"`
	NChannels int     `json:"nchannels"`
	NThreads  int     `json:"nthreads"`
	TimeUs    float64 `json:"time_us"`
	AlgBw     float64 `json:"algbw_GBps"`
	BusBw     float64 `json:"busbw_GBps"`
}

// modelBlock adds the tuning model's own terms to estimateBlock.
type modelBlock struct {
	estimateBlock
	// LatencyUs and BandwidthGBps are the table cell of the chosen pair
	// (before the size-dependent corrections of ncclTopoGetAlgoTime).
	LatencyUs     float64 `json:"latency_us"`
	BandwidthGBps float64 `json:"bandwidth_GBps"`
	// Costs is the cost table NCCL compared (µs; -1 unusable, absent when
	// the pair was not considered).
	Costs map[string]float64 `json:"costs"`
}

// estimateOutput is the JSON form of `ncclsim estimate`. The top-level
// fields repeat the block named by Source.
type estimateOutput struct {
	Coll         string `json:"coll"`
	Bytes        uint64 `json:"bytes"`
	BytesPerRank uint64 `json:"bytes_per_rank"`
	Datatype     string `json:"dtype"`
	NRanks       int    `json:"nranks"`
	NNodes       int    `json:"nnodes"`
	Topology     string `json:"topology"`
	estimateBlock
	Source string     `json:"source"`
	Model  modelBlock `json:"model"`
	// Calibrated is the calibrated estimate with the terms it is made of,
	// its path class, the error band observed for that class and how many
	// datasets support it.
	Calibrated *estimate.Calibrated `json:"calibrated"`
	Env        map[string]string    `json:"env"`
	Problems   []tuneProblem        `json:"problems"`
}

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
	f, err := tune.LookupFunc(*coll)
	if err != nil {
		return usagef("--coll: %v", err)
	}
	nBytes, err := parseByteCount(*bytesFlag)
	if err != nil {
		return usagef("--bytes: %v", err)
	}
	dt, err := tune.LookupDatatype(*dtype)
	if err != nil {
		return usagef("--dtype: %v", err)
	}
	fabric, err := estimate.ParseFabric(*fabricFlag)
	if err != nil {
		return usagef("--fabric: %v", err)
	}
	cal, err := loadCalibration(*calPath)
	if err != nil {
		return err
	}
	run, err := buildTuneModel(ctx, &sf, stdin, stderr)
	if err != nil {
		return err
	}
	sys, err := estimate.NewSystem(run.res, fabric, cal)
	if err != nil {
		return err
	}
	m := run.res.Tune
	e, err := sys.Estimate(tune.Request{Func: f, NBytes: nBytes, Datatype: dt})
	if err != nil {
		return err
	}
	mb := modelBlock{estimateBlock: blockOf(e.Model),
		LatencyUs:     e.ModelLatencyUs,
		BandwidthGBps: e.ModelBandwidthGBps,
		Costs:         map[string]float64{}}
	for a := tune.Algorithm(0); a < tune.NumAlgorithms; a++ {
		for p := tune.Protocol(0); p < tune.NumProtocols; p++ {
			if v := e.Costs[a][p]; v != tune.Ignore {
				mb.Costs[a.String()+"/"+p.String()] = float64(v)
			}
		}
	}
	cb := e.Calibrated
	out := estimateOutput{
		Coll: f.String(), Bytes: nBytes, Datatype: dt.String(), NRanks: m.Sys.NRanks, NNodes: m.Sys.NNodes, Topology: run.name,
		estimateBlock: blockOf(cb.Prediction), Source: "calibrated", Model: mb, Calibrated: &cb,
		Env: tuneEnvMap(run.env), Problems: tuneProblems(run.problems),
	}
	out.BytesPerRank = nBytes
	if f == tune.AllGather || f == tune.ReduceScatter {
		out.BytesPerRank = nBytes / uint64(m.Sys.NRanks)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return fmt.Errorf("write JSON: %w", err)
		}
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s of %d bytes (%s) on %s x %d node(s), %d ranks\n", out.Coll, nBytes, dt, run.name, m.Sys.NNodes, m.Sys.NRanks)
	if f == tune.AllGather || f == tune.ReduceScatter {
		fmt.Fprintf(&b, "  (%d bytes per rank; NCCL and nccl-tests count the whole buffer)\n", out.BytesPerRank)
	}
	fmt.Fprintf(&b, "NCCL tuning model (v2.30.7-1), what NCCL believes: %s/%s on %d channels x %d threads\n", mb.Algo, mb.Proto, mb.NChannels, mb.NThreads)
	fmt.Fprintf(&b, "  time %.2f us = %.1f us latency + size / %.1f GB/s (with the size corrections of ncclTopoGetAlgoTime)\n",
		mb.TimeUs, mb.LatencyUs, mb.BandwidthGBps)
	fmt.Fprintf(&b, "  algbw %.2f GB/s, busbw %.2f GB/s\n", mb.AlgBw, mb.BusBw)
	writeCalibratedText(&b, &cb)
	if _, err := io.WriteString(stdout, b.String()); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

// blockOf converts an estimator prediction to the JSON block.
func blockOf(p estimate.Prediction) estimateBlock {
	return estimateBlock{p.Algo, p.Proto, p.NChannels, p.NThreads, p.TimeUs, p.AlgBwGBps, p.BusBwGBps}
}

// writeCalibratedText describes the calibrated estimate in a few lines.
func writeCalibratedText(b *strings.Builder, c *estimate.Calibrated) {
	if c.Class == "" {
		fmt.Fprintf(b, "calibrated estimate: %s\n", c.Support)
		return
	}
	fmt.Fprintf(b, "calibrated estimate, what nccl-tests would measure (path class %s: %s):\n", c.Class, c.Class.Describe())
	fmt.Fprintf(b, "  time %.2f us: latency floor %.1f us, plateau busbw %.2f GB/s, 63%% of the plateau at %.3g bus bytes\n",
		c.TimeUs, c.LatencyUs, c.PlateauBusBwGBps, c.RampBusBytes)
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
