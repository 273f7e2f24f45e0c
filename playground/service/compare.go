package service

// This file answers the compare question: a user's nccl-tests output
// (package nccltests) next to NCCL's model and the calibrated estimate of
// the system the request names, per size, with what the gap means
// (package compare); and the measured-winners form of the tuner export.

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/compare"
	"github.com/distributed-nav/distributed-nav/playground/estimate"
	"github.com/distributed-nav/distributed-nav/playground/nccltests"
)

// NCCLTestsInput is nccl-tests output to read: a console log or only the
// table.
type NCCLTestsInput struct {
	// Text is read; Name names it in messages ("-" for standard input).
	Text io.Reader
	Name string
	// Coll and NRanks override what the file says or implies ("" and 0:
	// from the file).
	Coll   string
	NRanks int
}

// ReadNCCLTests parses in. A problem with an override is an error of the
// field "coll" or "nranks"; a problem with the text is an error of the
// field "nccl_tests" whose message starts with the input's name.
func (s *Service) ReadNCCLTests(in NCCLTestsInput) (*nccltests.File, error) {
	var opts nccltests.Options
	if in.Coll != "" {
		c, err := nccltests.ParseCollective(in.Coll)
		if err != nil {
			return nil, fieldErr("coll", err.Error())
		}
		opts.Collective = c
	}
	if in.NRanks < 0 || in.NRanks > nccltests.MaxRanks {
		return nil, fieldErr("nranks", "want 1.."+strconv.Itoa(nccltests.MaxRanks)+", not "+strconv.Itoa(in.NRanks))
	}
	opts.NRanks = in.NRanks
	f, err := nccltests.Parse(in.Text, opts)
	if err != nil {
		return nil, fieldErr("nccl_tests", in.Name+": "+err.Error())
	}
	return f, nil
}

// CompareRequest is the compare question: nccl-tests output and which of
// its runs to compare (Run 1 = the first; 0 = the first run of a
// collective NCCL's tuning model describes).
type CompareRequest struct {
	NCCLTests NCCLTestsInput
	Run       int
}

// CompareResult is the answer to the compare question, the object
// `ncclsim compare --json` prints: the comparison of the chosen run, plus
// what the file held.
type CompareResult struct {
	Checked `json:"-"`
	*compare.Result
	Topology string              `json:"topology"`
	Run      int                 `json:"run"`
	Runs     int                 `json:"runs_in_file"`
	Warnings []nccltests.Warning `json:"warnings"`
	Problems []Problem           `json:"problems"`
	Others   []CompareRunSummary `json:"other_runs,omitempty"`
}

// CompareRunSummary names a run of the file not compared.
type CompareRunSummary struct {
	Run        int               `json:"run"`
	Coll       string            `json:"coll"`
	NRanks     int               `json:"nranks"`
	HeaderLine int               `json:"header_line"`
	Env        map[string]string `json:"env"`
}

// Compare answers the compare question for the system of req (system
// fields and Fabric) and the runs of c.
func (s *Service) Compare(ctx context.Context, req *Request, c CompareRequest) (*CompareResult, error) {
	if _, err := estimate.ParseFabric(req.Fabric); err != nil {
		return nil, fieldErr("fabric", err.Error())
	}
	if _, err := s.calibration(); err != nil {
		return nil, err
	}
	base, err := s.build(ctx, req)
	if err != nil {
		return nil, err
	}
	nf, err := s.ReadNCCLTests(c.NCCLTests)
	if err != nil {
		return nil, err
	}
	k := c.Run
	if k < 0 || k > len(nf.Runs) {
		return nil, fieldErr("run", "the file holds "+strconv.Itoa(len(nf.Runs))+" run(s), not "+strconv.Itoa(k))
	}
	if k == 0 {
		for i, r := range nf.Runs {
			if _, ok := r.Func(); ok {
				k = i + 1
				break
			}
		}
		if k == 0 {
			return nil, fieldErr("nccl_tests", fmt.Sprintf("%s: no run of a collective NCCL's tuning model describes (first: %s at line %d)", c.NCCLTests.Name, nf.Runs[0].Collective, nf.Runs[0].HeaderLine))
		}
	}
	res, err := compare.Compare(ctx, nf.Runs[k-1], s.builderFor(req))
	if err != nil {
		return nil, err
	}
	out := &CompareResult{Checked: base.checked(), Result: res, Topology: base.host.name, Run: k, Runs: len(nf.Runs),
		Warnings: nf.Warnings, Problems: problems(base.problems)}
	if out.Warnings == nil {
		out.Warnings = []nccltests.Warning{}
	}
	for i, r := range nf.Runs {
		if i != k-1 {
			out.Others = append(out.Others, CompareRunSummary{Run: i + 1, Coll: string(r.Collective), NRanks: r.NRanks, HeaderLine: r.HeaderLine, Env: r.Env})
		}
	}
	return out, nil
}

// builderFor models the system of req with extra NCCL variables under the
// request's own (the request's win), through the service's pipeline.
func (s *Service) builderFor(req *Request) compare.Builder {
	return func(ctx context.Context, extra map[string]string) (*estimate.System, error) {
		own := map[string]bool{}
		for _, a := range req.Env {
			if name, _, ok := strings.Cut(strings.TrimSpace(a), "="); ok {
				own[strings.TrimSpace(name)] = true
			}
		}
		r := *req
		r.Env = nil
		for _, name := range sortedKeys(extra) {
			if !own[name] {
				r.Env = append(r.Env, name+"="+extra[name])
			}
		}
		r.Env = append(r.Env, req.Env...)
		_, es, err := s.modelAndEstimator(ctx, &r)
		return es, err
	}
}

// MeasuredTuner answers the export-tuner question from measured runs
// instead of NCCL's model: per size range, the NCCL_ALGO/NCCL_PROTO pair
// whose run was fastest (compare.TunerFromRuns).
func (s *Service) MeasuredTuner(in NCCLTestsInput) (*TunerConfig, error) {
	nf, err := s.ReadNCCLTests(in)
	if err != nil {
		return nil, err
	}
	ranges, notes, err := compare.TunerFromRuns(nf.Runs)
	if err != nil {
		return nil, fieldErr("nccl_tests", in.Name+": "+err.Error())
	}
	c := &TunerConfig{}
	c.Comments = append(c.Comments,
		fmt.Sprintf("NCCL tuner configuration written by `ncclsim export-tuner --nccl-tests` from %d measured run(s) in %s.", len(nf.Runs), in.Name),
		"Each range holds the NCCL_ALGO/NCCL_PROTO pair whose run had the highest out-of-place busbw at the measured sizes inside it;",
		"ranges meet at the geometric midpoint between measured sizes. Channels and nNodes are -1 (NCCL's own); nRanks is the runs'.")
	for _, n := range notes {
		c.Comments = append(c.Comments, "left out: "+n)
	}
	c.Comments = append(c.Comments,
		"Use: NCCL_TUNER_PLUGIN=<path to the example plugin> NCCL_TUNER_CONFIG_FILE=<this file>",
		"collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,regBuff")
	for _, r := range ranges {
		var won []string
		for i, size := range r.Sizes {
			won = append(won, fmt.Sprintf("%d B: %.2f GB/s", size, r.BusBwGBps[i]))
		}
		row := TunerRow{Func: r.Func, Min: r.Min, Max: r.Max, Algo: r.Algo, Proto: r.Proto, Channels: -1, NNodes: -1, NRanks: r.NRanks, NumPipeOps: 1, RegBuff: -1,
			Comment: "measured: " + strings.Join(won, ", ")}
		if line := row.String(); len(line) > TunerMaxLine {
			return nil, fmt.Errorf("export-tuner: line longer than the plugin's %d characters: %s", TunerMaxLine, line)
		}
		c.Rows = append(c.Rows, row)
	}
	return c, nil
}
