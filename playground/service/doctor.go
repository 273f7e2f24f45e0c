//go:build !nodoctor

// The doctor question. The model pages' wasm binaries are built with the
// tag nodoctor, which leaves this file, and with it package doctor's
// tables and their initialisation, out of them (about 11 KB gzip each);
// every other build has it.

package service

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/doctor"
	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
	"github.com/distributed-nav/distributed-nav/playground/presetmatch"
)

// DoctorRequest is a log and/or an environment listing to diagnose.
type DoctorRequest struct {
	// Log is an NCCL_DEBUG=INFO log (nil: none); LogName names it in
	// errors.
	Log     io.Reader
	LogName string
	// Env is `env | grep NCCL` output or an nccl.conf file; HasEnv says
	// one was given (an empty file is still checked).
	Env    string
	HasEnv bool
}

// DoctorResult is the answer to the doctor question, the object `ncclsim
// doctor --json` prints.
type DoctorResult = doctor.Report

// Doctor diagnoses the log and the environment of req.
func (s *Service) Doctor(ctx context.Context, req DoctorRequest) (*DoctorResult, error) {
	if req.Log == nil && !req.HasEnv {
		return nil, fieldErr("log", "paste an NCCL_DEBUG=INFO log, an environment listing, or both")
	}
	out := &doctor.Report{Diagnoses: []doctor.Diagnosis{}}
	env := ncclenv.Env{}
	if req.HasEnv {
		entries, _ := doctor.ParseEnvText(req.Env)
		kv := make(map[string]string, len(entries))
		for _, e := range entries {
			kv[e.Name] = e.Value
		}
		env = ncclenv.New(kv)
		out.EnvFindings = doctor.LintEnv(req.Env)
	}
	if req.Log != nil {
		sum, err := doctor.ParseLogContext(ctx, req.Log, doctor.Options{})
		if err != nil {
			msg := err.Error()
			if req.LogName != "" {
				msg = req.LogName + ": " + msg
			}
			return nil, &FieldError{Field: "log", Message: msg}
		}
		out.Summary = sum
		out.Diagnoses = doctor.Diagnose(sum, env)
	} else {
		// Without a log, the environment rules still give diagnoses.
		out.Diagnoses = doctor.Diagnose(nil, env)
	}
	return out, nil
}

// DoctorExpectation adds, for a log whose nccl-tests table runs on GPUs a
// built-in system names, that preset (package presetmatch) and what NCCL's
// model and the calibrated estimate expect at the table's peak size there,
// to the summary (Summary.NCCLTests.System) and to the nccl-tests
// diagnosis. ncclsim doctor calls it; the doctor page does not, and links
// the estimator page with the run's settings instead, which keeps the
// presets table and the estimator out of the doctor's WebAssembly binary.
// A log without such a table is left alone.
func (s *Service) DoctorExpectation(ctx context.Context, r *DoctorResult) error {
	if r == nil || r.Summary == nil || r.Summary.NCCLTests == nil {
		return nil
	}
	run := r.Summary.NCCLTests
	if run.Rows == 0 || len(run.Devices) == 0 {
		return nil
	}
	c, ok := presetmatch.Best(run.Devices[0], run.GPUsPerNode, run.Nodes)
	if !ok {
		return nil
	}
	sys := &doctor.BenchSystem{Preset: c.Name, Title: c.Title, Exact: c.Exact, EstimatorURL: run.EstimatorLink(c.Name),
		CompareCommand: "ncclsim compare --preset " + c.Name}
	if run.Nodes > 1 {
		sys.CompareCommand += " --nodes " + strconv.Itoa(run.Nodes)
	}
	sys.CompareCommand += " --nccl-tests FILE"
	run.System = sys
	var err error
	if run.Coll != "" && run.PeakBytes > 0 {
		var e *EstimateResult
		e, err = s.Estimate(ctx, &Request{Preset: c.Name, Nodes: max(run.Nodes, 1), Coll: run.Coll, Bytes: strconv.FormatUint(run.PeakBytes, 10)})
		if err == nil {
			x := &doctor.BusBwExpectation{ModelBusBwGBps: e.Model.BusBwGBps, MeasuredGBps: run.PeakBusBwGBps, Algo: e.Model.Algo, Proto: e.Model.Proto}
			if cb := e.Calibrated; cb != nil {
				x.CalibratedBusBwGBps, x.LowGBps, x.HighGBps = cb.BusBwGBps, cb.BusBwLowGBps, cb.BusBwHighGBps
				if cb.BusBwGBps > 0 {
					x.Ratio = run.PeakBusBwGBps / cb.BusBwGBps
				}
			}
			sys.Expected = x
		} else {
			err = fmt.Errorf("expected busbw on %s: %w", c.Name, err)
		}
	}
	doctor.AddSystem(r.Diagnoses, run)
	return err
}

// Explanation is the answer to "which NCCL source line printed this log
// line, and what do its fields mean" (ncclsim doctor --explain LINE).
type Explanation = doctor.LineExplanation

// Explain ties one log line to the NCCL call that prints it; version, when
// set, is the NCCL release the line comes from (for release-dependent
// numbers such as path types).
func (s *Service) Explain(line, version string) Explanation {
	return doctor.ExplainLine(line, version)
}

// DoctorPage is the log doctor page's answer: Result and the ncclsim
// line; the figure "report" is the doctor's HTML report (every log text
// escaped).
type DoctorPage struct {
	Result  *DoctorResult `json:"result"`
	Command string        `json:"command"`
	Figures []Figure      `json:"-"`
}

// FileBytes counts text as the bytes of the file it was read from, the
// measure `ncclsim doctor` caps: a browser decoding a file replaces each
// invalid UTF-8 sequence (one to three bytes) by U+FFFD, three bytes in
// UTF-8, so each U+FFFD counts as one byte. The count is at most the file's
// size (File.size, what the page checks), and the text at most three times
// the count.
func FileBytes(text string) int {
	return len(text) - 2*strings.Count(text, "\uFFFD")
}

// DoctorPage answers the log doctor page for pasted texts, refusing texts
// whose FileBytes are over MaxLogBytes and MaxEnvDumpSize.
func (s *Service) DoctorPage(ctx context.Context, logText, envText string) (*DoctorPage, error) {
	if strings.TrimSpace(logText) == "" && strings.TrimSpace(envText) == "" {
		return nil, fieldErr("log", "paste an NCCL_DEBUG=INFO log, an environment listing, or both")
	}
	if n := FileBytes(logText); n > MaxLogBytes {
		return nil, fieldErr("log", "the log is "+strconv.Itoa(n)+" bytes; the limit here is "+strconv.Itoa(MaxLogBytes>>20)+" MiB (ncclsim doctor --max-log-mb 0 reads any size)")
	}
	if n := FileBytes(envText); n > MaxEnvDumpSize {
		return nil, fieldErr("envdump", "the environment text is "+strconv.Itoa(n)+" bytes; the limit is "+strconv.Itoa(MaxEnvDumpSize>>20)+" MiB")
	}
	req := DoctorRequest{Env: envText, HasEnv: envText != ""}
	if logText != "" {
		req.Log = strings.NewReader(logText)
	}
	r, err := s.Doctor(ctx, req)
	if err != nil {
		return nil, err
	}
	var report bytes.Buffer
	if err := doctor.WriteHTML(&report, r.Summary, r.Diagnoses); err != nil {
		return nil, err
	}
	cmd := "ncclsim doctor"
	if logText != "" {
		cmd += " --log nccl.log"
	}
	if envText != "" {
		cmd += " --env env.txt"
	}
	return &DoctorPage{Result: r, Command: cmd + " --json", Figures: []Figure{{"report", report.String()}}}, nil
}

// AnswerDoctor answers the log doctor page as a Reply.
func (s *Service) AnswerDoctor(ctx context.Context, logText, envText string) Reply {
	p, err := s.DoctorPage(ctx, logText, envText)
	if err != nil {
		return reply(nil, nil, err)
	}
	return reply(p, p.Figures, nil)
}
