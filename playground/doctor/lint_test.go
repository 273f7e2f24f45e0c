package doctor

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// findingKey is what the lint tests compare: line, name, rule and severity.
type findingKey struct {
	line int
	name string
	id   string
	sev  Severity
}

func keys(fs []Finding) []findingKey {
	out := []findingKey{}
	for _, f := range fs {
		out = append(out, findingKey{f.Line, f.Name, f.ID, f.Severity})
	}
	return out
}

func findingFor(fs []Finding, name, id string) (Finding, bool) {
	for _, f := range fs {
		if f.Name == name && f.ID == id {
			return f, true
		}
	}
	return Finding{}, false
}

func TestLintEnv(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []findingKey
	}{
		{"clean", "NCCL_SOCKET_IFNAME=eth0\nTORCH_NCCL_ASYNC_ERROR_HANDLING=1\n", nil},
		{"typo", "NCCL_P2P_DISABLED=1\n", []findingKey{{1, "NCCL_P2P_DISABLED", "env-unknown", Error}}},
		// The skill card's RTX 4090 recipe, line by line.
		{"skill card recipe", strings.Join([]string{
			"export NCCL_P2P_DISABLE=1",
			"export NCCL_IGNORE_DISABLED_P2P=1",
			"export NCCL_SHM_DISABLE=0",
			"export NCCL_MAX_NRINGS=4",
			"export NCCL_ALGO=RING",
			"export NCCL_PROTO=Simple",
			"export NCCL_DEBUG=WARN",
			"export NCCL_ASYNC_ERROR_HANDLING=1",
			"export NCCL_ENABLE_MONITORING=1",
		}, "\n"), []findingKey{
			{2, "NCCL_IGNORE_DISABLED_P2P", "env-contradiction", Info},
			{2, "NCCL_IGNORE_DISABLED_P2P", "env-debug-knob", Info},
			{3, "NCCL_SHM_DISABLE", "env-default", Info},
			{4, "NCCL_MAX_NRINGS", "env-deprecated", Warning},
			{5, "NCCL_ALGO", "env-debug-knob", Info},
			{6, "NCCL_PROTO", "env-debug-knob", Info},
			{8, "NCCL_ASYNC_ERROR_HANDLING", "env-deprecated", Warning},
			{9, "NCCL_ENABLE_MONITORING", "env-unknown", Error},
		}},
		{"p2p disable with level", "NCCL_P2P_LEVEL=NVL\nNCCL_P2P_DISABLE=1\n", []findingKey{{1, "NCCL_P2P_LEVEL", "env-contradiction", Warning}}},
		{"p2p disable true is not 1", "NCCL_P2P_DISABLE=true\nNCCL_P2P_LEVEL=NVL\n", []findingKey{{1, "NCCL_P2P_DISABLE", "env-bad-value", Error}}},
		{"both transports off", "NCCL_P2P_DISABLE=1\nNCCL_SHM_DISABLE=1\n", []findingKey{{2, "NCCL_SHM_DISABLE", "env-contradiction", Warning}}},
		{"min above max", "NCCL_MIN_NCHANNELS=16\nNCCL_MAX_NCHANNELS=8\n", []findingKey{{1, "NCCL_MIN_NCHANNELS", "env-contradiction", Warning}}},
		{"old and new names disagree", "NCCL_ASYNC_ERROR_HANDLING=1\nTORCH_NCCL_ASYNC_ERROR_HANDLING=3\n", []findingKey{
			{1, "NCCL_ASYNC_ERROR_HANDLING", "env-contradiction", Warning}, {1, "NCCL_ASYNC_ERROR_HANDLING", "env-deprecated", Warning}}},
		{"blocking wait disables the watchdog", "TORCH_NCCL_BLOCKING_WAIT=1\nTORCH_NCCL_ASYNC_ERROR_HANDLING=1\n", []findingKey{{2, "TORCH_NCCL_ASYNC_ERROR_HANDLING", "env-contradiction", Warning}}},
		{"monitoring off", "TORCH_NCCL_ENABLE_MONITORING=0\nTORCH_NCCL_HEARTBEAT_TIMEOUT_SEC=900\n", []findingKey{
			{1, "TORCH_NCCL_ENABLE_MONITORING", "env-debug-knob", Warning}, {2, "TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC", "env-contradiction", Info}}},
		{"debugging switches", "NCCL_DEBUG=INFO\nNCCL_DEBUG_SUBSYS=INIT,ENV\nTORCH_DISTRIBUTED_DEBUG=DETAIL\nCUDA_LAUNCH_BLOCKING=1\nTORCH_NCCL_TRACE_BUFFER_SIZE=2000\n", []findingKey{
			{1, "NCCL_DEBUG", "env-debug-knob", Info}, {3, "TORCH_DISTRIBUTED_DEBUG", "env-debug-knob", Info}, {4, "CUDA_LAUNCH_BLOCKING", "env-debug-knob", Warning}}},
		{"bad values", "NCCL_P2P_LEVEL=phb\nNCCL_NTHREADS=100\nNCCL_ALGO=Ring,Tre\n", []findingKey{
			{1, "NCCL_P2P_LEVEL", "env-bad-value", Error}, {2, "NCCL_NTHREADS", "env-bad-value", Warning}, {3, "NCCL_ALGO", "env-bad-value", Error}, {3, "NCCL_ALGO", "env-debug-knob", Info}}},
		{"removed name", "NCCL_SHM_USE_CUDA_MEMCPY=1\n", []findingKey{{1, "NCCL_SHM_USE_CUDA_MEMCPY", "env-no-effect", Warning}}},
		{"container metadata", "NCCL_VERSION=2.15.5-1\nNV_LIBNCCL_PACKAGE_VERSION=2.15.5-1\nLD_LIBRARY_PATH=/usr/local/nccl/lib\n", []findingKey{
			{1, "NCCL_VERSION", "env-container", Info}, {2, "NV_LIBNCCL_PACKAGE_VERSION", "env-container", Info}}},
		{"nccl.conf syntax", "# /etc/nccl.conf\nNCCL_SOCKET_IFNAME = eth0\nNCCL_IB_HCA=mlx5_0\nNCCL_IB_HCA=mlx5_1\nnot an assignment\n", []findingKey{
			{2, "", "env-parse", Warning}, {4, "NCCL_IB_HCA", "env-duplicate", Warning}, {5, "", "env-parse", Warning}}},
		{"shell forms", "declare -x NCCL_IB_DISABLE=\"1\"\nexport NCCL_IB_HCA='mlx5_0'\n", []findingKey{{2, "NCCL_IB_HCA", "env-contradiction", Info}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := keys(LintEnv(tc.text))
			want := append([]findingKey{}, tc.want...)
			if !slices.Equal(got, want) {
				t.Errorf("LintEnv =\n  %v\nwant\n  %v", got, want)
			}
		})
	}
}

func TestLintEnvDetails(t *testing.T) {
	fs := LintEnv("NCCL_P2P_DISABLED=1\nNCCL_ENABLE_MONITORING=1\nNCCL_MAX_NRINGS=4\n")
	f, ok := findingFor(fs, "NCCL_P2P_DISABLED", "env-unknown")
	if !ok || len(f.Suggestions) == 0 || f.Suggestions[0] != "NCCL_P2P_DISABLE" {
		t.Errorf("typo finding = %+v", f)
	}
	if f, _ := findingFor(fs, "NCCL_ENABLE_MONITORING", "env-unknown"); len(f.Suggestions) == 0 || f.Suggestions[0] != "TORCH_NCCL_ENABLE_MONITORING" {
		t.Errorf("missing-prefix finding = %+v", f)
	}
	f, _ = findingFor(fs, "NCCL_MAX_NRINGS", "env-deprecated")
	if !strings.Contains(f.Message, "NCCL_MAX_NCHANNELS") || !hasLink(f.Links, "/env/#NCCL_MAX_NCHANNELS") || !hasLink(f.Links, "/notes/troubleshooting/#ignored-env-vars") {
		t.Errorf("deprecated finding = %+v", f)
	}
	if s := f.String(); !strings.HasPrefix(s, "line 3: warning: NCCL_MAX_NRINGS: ") {
		t.Errorf("String() = %q", s)
	}
	entries, bad := ParseEnvText("export A_B=\"x y\"\n\n=oops\n")
	if len(entries) != 1 || entries[0].Value != "x y" || entries[0].Line != 1 || len(bad) != 1 || bad[0].Line != 3 {
		t.Errorf("ParseEnvText = %+v, %+v", entries, bad)
	}
}

func hasLink(ls []Link, url string) bool {
	for _, l := range ls {
		if l.URL == url {
			return true
		}
	}
	return false
}

// TestLintEnvCapsEachKind: a dump of 5,000 unknown names (and 30 lines that
// are no assignment) returns MaxEnvFindingsPerKind findings of each kind
// plus one finding per kind counting the rest, whatever the dump's size.
func TestLintEnvCapsEachKind(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(&b, "NCCL_NOT_A_KNOB_%d=1\n", i)
	}
	for i := 0; i < 30; i++ {
		b.WriteString("garbage line\n")
	}
	fs := LintEnv(b.String())
	per := map[string]int{}
	var closing []Finding
	for _, f := range fs {
		if strings.HasPrefix(f.Message, "and ") {
			closing = append(closing, f)
			continue
		}
		per[f.ID]++
	}
	if per["env-unknown"] != MaxEnvFindingsPerKind || per["env-parse"] != MaxEnvFindingsPerKind {
		t.Fatalf("findings per kind = %v, want %d each", per, MaxEnvFindingsPerKind)
	}
	// 5,000 - 20 unknown names on lines 21..5000; 30 - 20 bad lines up to
	// line 5,030.
	want := map[string]string{
		"env-unknown": "and 4980 more of the same kind (env-unknown), up to line 5000",
		"env-parse":   "and 10 more of the same kind (env-parse), up to line 5030",
	}
	if len(closing) != len(want) {
		t.Fatalf("closing findings = %+v", closing)
	}
	for _, f := range closing {
		if f.Message != want[f.ID] {
			t.Errorf("closing %s = %q, want %q", f.ID, f.Message, want[f.ID])
		}
	}
	// A dump under the cap is returned whole.
	if fs := LintEnv("NCCL_NOT_A_KNOB=1\n"); len(fs) != 1 || strings.HasPrefix(fs[0].Message, "and ") {
		t.Errorf("small dump = %+v", fs)
	}
}
