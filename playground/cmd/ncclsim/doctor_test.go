package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/distributed-nav/distributed-nav/playground/service"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const doctorLogs = "../../../data/logs"

func doctorCmd(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := runDoctor(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), err
}

func TestDoctorLogText(t *testing.T) {
	out, _, err := doctorCmd(t, "", "--log", filepath.Join(doctorLogs, "nvidia-nccl-1232-socket-closed.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Transports: NET/Socket ×9, SHM/direct ×2", "(p2p-unavailable)", "(net-socket)",
		"/notes/troubleshooting/#nic-wrong-socket", "line 29: [2] node0:13572:13572 [1] NCCL INFO Channel 00 : 2[1] -> 0[0] via SHM/direct/direct"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestDoctorJSONFromStdinWithEnv(t *testing.T) {
	log, err := os.ReadFile(filepath.Join(doctorLogs, "vllm-project-vllm-5484-watchdog-teardown.log"))
	if err != nil {
		t.Fatal(err)
	}
	envFile := filepath.Join(t.TempDir(), "env.txt")
	if err := os.WriteFile(envFile, []byte("TORCH_NCCL_ASYNC_ERROR_HANDLING=2\nNCCL_P2P_DISABLED=1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, err := doctorCmd(t, string(log), "--log", "-", "--env", envFile, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var got service.DoctorResult
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if got.Summary == nil || len(got.Summary.Timeouts) != 1 || got.Summary.Timeouts[0].OpType != "GATHER" {
		t.Errorf("summary = %+v", got.Summary)
	}
	var idList []string
	for _, d := range got.Diagnoses {
		idList = append(idList, d.ID)
	}
	if strings.Join(idList, ",") != "collective-timeout,env-unknown" {
		t.Errorf("diagnoses = %v", idList)
	}
	// The mode comes from the environment file, not from the tear-down line.
	if !strings.Contains(got.Diagnoses[0].Explanation, "mode 2 (CleanUpOnly") {
		t.Errorf("explanation = %s", got.Diagnoses[0].Explanation)
	}
	if len(got.EnvFindings) != 1 || got.EnvFindings[0].ID != "env-unknown" || got.EnvFindings[0].Line != 2 ||
		len(got.EnvFindings[0].Suggestions) == 0 || got.EnvFindings[0].Suggestions[0] != "NCCL_P2P_DISABLE" {
		t.Errorf("env findings = %+v", got.EnvFindings)
	}
}

func TestDoctorEnvOnly(t *testing.T) {
	out, _, err := doctorCmd(t, "export NCCL_MAX_NRINGS=4\nexport NCCL_P2P_DISABLE=1\nexport NCCL_P2P_LEVEL=PHB\n", "--env", "-")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"line 1: warning: NCCL_MAX_NRINGS: deprecated name", "line 3: warning: NCCL_P2P_LEVEL: ignored"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestDoctorUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--log", "-", "--env", "-"},
		{"--bogus"},
		{"--log", "x", "extra"},
	} {
		_, _, err := doctorCmd(t, "", args...)
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("args %q: err %v, want a usage error", args, err)
		}
	}
	if _, _, err := doctorCmd(t, "", "--log", filepath.Join(t.TempDir(), "missing.log")); err == nil || errors.As(err, new(usageError)) {
		t.Errorf("missing file: err %v, want a plain error", err)
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"doctor"}, strings.NewReader(""), &out, &errb); code != 2 {
		t.Errorf("exit status %d for a usage error, want 2", code)
	}
}
