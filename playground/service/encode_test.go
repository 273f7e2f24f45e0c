package service

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestRepliesMatchEncodingJSON: the browser's answers are encoded by
// package jsonenc (to keep encoding/json out of the wasm) and ncclsim's
// --json by encoding/json; both must write the same bytes. Every page
// question on every preset, the estimator with a pasted run, the doctor on
// every published log, and the error object are compared with what
// json.Marshal writes for the same typed answer.
func TestRepliesMatchEncodingJSON(t *testing.T) {
	ctx := context.Background()
	s := New()
	list, err := s.Presets()
	if err != nil {
		t.Fatal(err)
	}
	compared := 0
	check := func(name string, r Reply, v any) {
		t.Helper()
		compared++
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("%s: encoding/json: %v", name, err)
		}
		if r.JSON != string(want) {
			t.Errorf("%s: the reply differs from encoding/json's encoding\n got %.400s\nwant %.400s", name, r.JSON, want)
		}
	}
	for _, p := range list {
		req := &Request{Preset: p.Name, Coll: "allreduce", Bytes: "64M", Step: StepInputs{Params: "1B", ForwardMs: "50", BackwardMs: "100"}}
		if tp, err := s.TopoPage(ctx, req); err == nil {
			check(p.Name+" topo", s.AnswerTopo(ctx, req), tp)
		}
		if tp, err := s.TunePage(ctx, req); err == nil {
			check(p.Name+" tune", s.AnswerTune(ctx, req), tp)
		}
		if ep, err := s.EstimatePage(ctx, req); err == nil {
			check(p.Name+" estimate", s.AnswerEstimate(ctx, req), ep)
		}
		if ep, err := s.EstimatorPage(ctx, req); err == nil {
			check(p.Name+" estimator", s.AnswerEstimator(ctx, req), ep)
		}
		if sp, err := s.StepPage(ctx, req); err == nil {
			check(p.Name+" step", s.AnswerStep(ctx, req), sp)
		}
	}
	// Every preset answers the topology, algorithms and estimator pages.
	if compared < 3*len(list) {
		t.Fatalf("only %d answers compared for %d presets", compared, len(list))
	}
	req := &Request{Preset: EstimatorDefaultPreset, Coll: "allreduce", Bytes: "64M", NCCLTests: pastedRun(t)}
	ep, err := s.EstimatorPage(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	check("estimator with a pasted run", s.AnswerEstimator(ctx, req), ep)

	logs, err := filepath.Glob(filepath.Join("..", "..", "data", "logs", "*.log"))
	if err != nil || len(logs) == 0 {
		t.Fatalf("no published logs (%v)", err)
	}
	for _, f := range logs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dp, err := s.DoctorPage(ctx, string(b), "NCCL_DEBUG=INFO\nNCCL_IB_HCA=mlx5_0\nNCCL_BOGUS=1\n")
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		check(filepath.Base(f), s.AnswerDoctor(ctx, string(b), "NCCL_DEBUG=INFO\nNCCL_IB_HCA=mlx5_0\nNCCL_BOGUS=1\n"), dp)
	}

	bad := s.AnswerTopo(ctx, &Request{Preset: "no <such> preset"})
	var e struct {
		Error *FieldError `json:"error"`
	}
	if err := json.Unmarshal([]byte(bad.JSON), &e); err != nil || e.Error == nil {
		t.Fatalf("error reply %s: %v", bad.JSON, err)
	}
	check("error object", bad, e)
	t.Logf("%d answers compared", compared)
}
