package main

// This file implements `ncclsim estimate`: the time of one collective as
// NCCL's tuning model predicts it (the algorithm/protocol NCCL would pick,
// its channel and thread counts, and the model time), in the JSON shape the
// design fixes. The "calibrated" block is reserved for the calibrated
// estimator (measurements vs model), which is a separate piece of work.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

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
	// Calibrated is reserved for the calibrated estimator; until it exists
	// it is null and CalibratedNote says why.
	Calibrated     *estimateBlock    `json:"calibrated"`
	CalibratedNote string            `json:"calibrated_note,omitempty"`
	Env            map[string]string `json:"env"`
	Problems       []tuneProblem     `json:"problems"`
}

// calibratedPending explains the null calibrated block.
const calibratedPending = "calibrated estimator not implemented yet; the top-level values are the NCCL tuning model's"

// runEstimate implements `ncclsim estimate`.
func runEstimate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runEstimateIO(ctx, args, os.Stdin, stdout, stderr)
}

// runEstimateIO is runEstimate with an explicit standard input (for --xml -).
func runEstimateIO(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("estimate", stderr)
	var a tuneModelArgs
	a.register(fs)
	coll := fs.String("coll", "", "collective: broadcast, reduce, allgather, reducescatter, allreduce (required)")
	bytesFlag := fs.String("bytes", "", "message size in bytes, suffixes K/M/G allowed; for allgather/reducescatter the whole buffer of all ranks, as nccl-tests' size (required)")
	dtype := fs.String("dtype", "float32", "element type (float32, float16, bfloat16, float64, int8, ..., float8e4m3)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: ncclsim estimate (--preset NAME | --xml FILE) [--nodes N] [--p2p MODE] [--env NAME=VALUE]... --coll C --bytes N [--dtype T] [--json]")
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
	run, err := buildTuneModel(ctx, a, stdin, stderr)
	if err != nil {
		return err
	}
	m := run.res.Tune
	c, err := m.Select(tune.Request{Func: f, NBytes: nBytes, Datatype: dt})
	if err != nil {
		return fmt.Errorf("estimate: %w", err)
	}
	alg := c.AlgBwGBps()
	if nBytes == 0 {
		alg = 0
	}
	blk := estimateBlock{c.Algo.String(), c.Proto.String(), c.NChannels, c.NThreads, float64(c.TimeUs), alg, alg * tune.BusBwFactor(f, m.Sys.NRanks)}
	mb := modelBlock{estimateBlock: blk,
		LatencyUs:     float64(m.Latencies[f][c.Algo][c.Proto]),
		BandwidthGBps: float64(m.Bandwidths[f][c.Algo][c.Proto]),
		Costs:         map[string]float64{}}
	for a := tune.Algorithm(0); a < tune.NumAlgorithms; a++ {
		for p := tune.Protocol(0); p < tune.NumProtocols; p++ {
			if v := c.Costs[a][p]; v != tune.Ignore {
				mb.Costs[a.String()+"/"+p.String()] = float64(v)
			}
		}
	}
	out := estimateOutput{
		Coll: f.String(), Bytes: nBytes, Datatype: dt.String(), NRanks: m.Sys.NRanks, NNodes: m.Sys.NNodes, Topology: run.name,
		estimateBlock: blk, Source: "model", Model: mb, Calibrated: nil, CalibratedNote: calibratedPending,
		Env: tuneEnvMap(run.env), Problems: tuneProblems(run.problems),
	}
	out.BytesPerRank = nBytes
	if f == tune.AllGather || f == tune.ReduceScatter {
		out.BytesPerRank = nBytes / uint64(m.Sys.NRanks)
	}
	if a.json {
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
	fmt.Fprintf(&b, "NCCL tuning model (v2.30.7-1): %s/%s on %d channels x %d threads\n", blk.Algo, blk.Proto, blk.NChannels, blk.NThreads)
	fmt.Fprintf(&b, "  time %.2f us = %.1f us latency + size / %.1f GB/s (with the size corrections of ncclTopoGetAlgoTime)\n",
		blk.TimeUs, mb.LatencyUs, mb.BandwidthGBps)
	fmt.Fprintf(&b, "  algbw %.2f GB/s, busbw %.2f GB/s\n", blk.AlgBw, blk.BusBw)
	fmt.Fprintf(&b, "calibrated estimate: not available yet\n")
	if _, err := io.WriteString(stdout, b.String()); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}
