package main

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/distributed-nav/distributed-nav/playground/service"
	"strings"
	"testing"
)

// runNcclsim runs the command line and returns the exit status and output.
func runNcclsim(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestPresetsCommand(t *testing.T) {
	code, out, errs := runNcclsim("presets")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if !strings.HasPrefix(out, "NAME") || !strings.Contains(out, "rtx4090-8x") || !strings.Contains(out, "NVML reports P2P unsupported") {
		t.Fatalf("output:\n%s", out)
	}
	code, out, _ = runNcclsim("presets", "--json")
	var list []service.PresetInfo
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) < 7 {
		t.Fatalf("exit %d, json %q", code, out)
	}
	for _, p := range list {
		if p.Name == "" || p.Description == "" {
			t.Errorf("incomplete entry %+v", p)
		}
	}
}

func TestTopoJSON(t *testing.T) {
	code, out, errs := runNcclsim("topo", "--preset", "h100-sxm-8x", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var got service.TopoResult
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	// 8 GPUs: 8*7 ordered pairs, all P2P over NVLink through the NVSwitch.
	if len(got.GPUs) != 8 || len(got.GPUPairs) != 56 || got.GPUPairs[0].Transport != "P2P" || got.GPUPairs[0].Via != "NVLink" {
		t.Fatalf("gpus %d pairs %d first %+v", len(got.GPUs), len(got.GPUPairs), got.GPUPairs[0])
	}
	// Same graphs as the package golden test: 12 rings at 30, NVLS present,
	// 24 channels after ncclTopoPostset.
	if len(got.Graphs) != 3 || got.Graphs[0].Pattern != "RING" || got.Graphs[0].NChannels != 12 || got.Graphs[2].Pattern != "NVLS" || got.Comm.NChannels != 24 {
		t.Fatalf("graphs %+v comm %+v", got.Graphs, got.Comm)
	}
	if got.System.Inter || got.Remote != nil {
		t.Fatalf("single host reported as inter-node")
	}
}

func TestTopoMultiNode(t *testing.T) {
	code, out, errs := runNcclsim("topo", "--preset", "h100-8x-ib", "--nodes", "2", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var got service.TopoResult
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if !got.System.Inter || got.System.Ranks != 16 || len(got.Remote) != 8 || got.Remote[3].NIC != 3 || got.Remote[3].Transport != "NET" {
		t.Fatalf("system %+v remote %+v", got.System, got.Remote)
	}
	ring := got.Graphs[0]
	if ring.Channels[0].NetIn == nil || ring.Channels[0].NetOut == nil {
		t.Fatalf("inter-node ring without NICs: %+v", ring.Channels[0])
	}
}

func TestTopoText(t *testing.T) {
	code, out, errs := runNcclsim("topo", "--preset", "rtx4090-8x", "--env", "NCCL_P2P_LEVEL=PHB")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"System rtx4090-8x",
		"P2P support none, P2P level PHB",
		"0     1   PHB   24.0  SHM        driver reports no P2P (NVML) (direct path PIX, rerouted through CPU)",
		"RING (id 0): 1 channels",
		"Communicator: 2 channels",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// --p2p=all turns the same-switch pairs into P2P over PCIe at PHB level.
	_, out, _ = runNcclsim("topo", "--preset", "rtx4090-8x", "--p2p", "all", "--env", "NCCL_P2P_LEVEL=PHB")
	if !strings.Contains(out, "0     1   PIX   24.0  P2P        PCIe") {
		t.Errorf("--p2p all output:\n%s", out)
	}
}

func TestTopoErrors(t *testing.T) {
	tests := []struct {
		args []string
		code int
		msg  string
	}{
		// The system flags' own errors are TestSystemFlagErrors'.
		{[]string{"topo", "--preset", "rtx4090-2x", "extra"}, 2, "unexpected argument"},
		{[]string{"topo", "--bogus"}, 2, "flag provided but not defined"},
		{[]string{"topo", "--preset", "rtx4090-2x", "--timeout", "soon"}, 2, "invalid value"},
		{[]string{"topo", "--xml", "../../topo/testdata/azure-ndv4-topo.xml"}, 1, "no GPU"},
		{[]string{"topo", "--preset", "h100-sxm-8x", "--p2p", "none"}, 2, "NCCL_IGNORE_DISABLED_P2P"},
		{[]string{"presets", "extra"}, 2, "unexpected argument"},
	}
	for _, tt := range tests {
		code, _, errs := runNcclsim(tt.args...)
		if code != tt.code || !strings.Contains(errs, tt.msg) {
			t.Errorf("%v: exit %d stderr %q, want exit %d containing %q", tt.args, code, errs, tt.code, tt.msg)
		}
	}
}
