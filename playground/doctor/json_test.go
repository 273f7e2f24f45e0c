package doctor

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
)

// mustMarshal encodes r as ncclsim doctor --json does and checks that the
// bytes decode back to the same report: no value the parser stores is one
// JSON cannot carry, and every key has a field to land in.
func mustMarshal(t testing.TB, name string, r *Report) []byte {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatalf("%s: encoding/json: %v", name, err)
	}
	var back Report
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&back); err != nil {
		t.Fatalf("%s: decoding the report back: %v", name, err)
	}
	again, err := json.Marshal(&back)
	if err != nil || string(again) != string(b) {
		t.Fatalf("%s: the report does not survive a round trip (%v)", name, err)
	}
	return b
}

// envDumps are pasted environments: plain, hostile, and empty.
var envDumps = []string{
	"",
	"NCCL_P2P_DISABLE=1\nNCCL_ALGOO=Ring\nNCCL_SOCKET_IFNAME=eth0\n",
	"export NCCL_IB_HCA='<mlx5_0>&\"x\"'\nNCCL_DEBUG=INFO\x01\nNCCL_PROTO=LL\u2028\nTORCH_NCCL_BLOCKING_WAIT=1\n",
	"NCCL_\xff=\xfe\nNCCL_MAX_NRINGS=4\nNCCL_P2P_LEVEL=PHB\nNCCL_NTHREADS=9999999999999999999999\n=\n</script>=<b>\n",
	"declare -x NCCL_ALGO=\"^Tree;allreduce:ring\"\nNCCL_NET_GDR_LEVEL=5\nTORCH_NCCL_ASYNC_ERROR_HANDLING=2\n",
}

// buildReport assembles a Report as ncclsim doctor and the playground do.
func buildReport(t testing.TB, logText, envText string, opts Options) *Report {
	t.Helper()
	r := &Report{Diagnoses: []Diagnosis{}}
	env := ncclenv.Env{}
	if envText != "" {
		entries, _ := ParseEnvText(envText)
		kv := make(map[string]string, len(entries))
		for _, e := range entries {
			kv[e.Name] = e.Value
		}
		env = ncclenv.New(kv)
		r.EnvFindings = LintEnv(envText)
	}
	if logText != "" {
		s, err := ParseLogContext(context.Background(), strings.NewReader(logText), opts)
		if err != nil {
			t.Fatal(err)
		}
		r.Summary = s
	}
	r.Diagnoses = Diagnose(r.Summary, env)
	return r
}

// TestReportJSONOnFixtures encodes the report of every published log with
// each environment dump: encoding/json must accept it and the keys the
// CLI documents must be there.
func TestReportJSONOnFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(logsDir, "*.log"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no logs under %s: %v", logsDir, err)
	}
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, env := range envDumps {
			b := mustMarshal(t, filepath.Base(f), buildReport(t, string(text), env, Options{}))
			var top map[string]any
			if err := json.Unmarshal(b, &top); err != nil {
				t.Fatal(err)
			}
			// The keys of `ncclsim doctor --json` that scripts read
			// (README; checked against the CLI of the session's start).
			for _, k := range []string{"summary", "diagnoses"} {
				if _, ok := top[k]; !ok {
					t.Errorf("%s env %d: no %q key", filepath.Base(f), i, k)
				}
			}
			sum := top["summary"].(map[string]any)
			for _, k := range []string{"lines", "bytes", "nranks", "nnodes", "local_ranks", "ib_no_device", "total_connections", "warnings", "messages", "timeout_lines", "binary_lines"} {
				if _, ok := sum[k]; !ok {
					t.Errorf("%s: summary has no %q key", filepath.Base(f), k)
				}
			}
		}
	}
}

// NCCL never prints NaN or infinities; numbers that read as such are
// dropped by the parser (finiteFloat), so the JSON always exists. Before
// finiteFloat, "bw NaN/inf" made `ncclsim doctor --json` fail with
// "json: unsupported value: NaN".
func TestNonFiniteNumbersDropped(t *testing.T) {
	const pre = "host:1:2 [0] NCCL INFO "
	log := strings.Join([]string{
		pre + "Pattern 4, crossNic 0, nChannels 16, bw NaN/inf, type NVL/PIX, sameChannels 1",
		pre + "Pattern 2, crossNic 0, nChannels 2, bw 1e999/-Infinity, type NVL/PIX, sameChannels 1",
		pre + "1048576 Bytes -> Algo 1 proto 2 time NaN",
		pre + "GPU/0-18000 :GPU/0-1b000 (1/Inf/NVL) NET/0-0 (3/12.0/PHB)",
		pre + "  Algorithm   |   Tree   |   Ring   |",
		pre + "  Protocol    | LL | LL128 | Simple | LL | LL128 | Simple |",
		pre + "   AllReduce  | NaN/1.0 | 2.0/+Inf | 3.0/4.0 | 5.0/6.0 | 7.0/8.0 | 9.0/10.0 |",
	}, "\n") + "\n"
	r := buildReport(t, log, "", Options{})
	s := r.Summary
	if len(s.Graphs) != 2 || s.Graphs[0].BwIntra != 0 || s.Graphs[0].BwInter != 0 || s.Graphs[1].BwIntra != 0 {
		t.Errorf("graphs = %+v, want 2 with zero bandwidths", s.Graphs)
	}
	if len(s.AlgoChoices) != 1 || s.AlgoChoices[0].TimeUs != 0 {
		t.Errorf("algo choices = %+v, want one without a time", s.AlgoChoices)
	}
	if len(s.Paths) != 0 {
		t.Errorf("paths = %+v, want none (the line's first entry has bw Inf)", s.Paths)
	}
	if s.Tuning != nil {
		for _, c := range s.Tuning.Cells {
			if math.IsNaN(c.LatencyUs) || math.IsInf(c.BwGBps, 0) {
				t.Errorf("tuning cell %+v kept a non-finite value", c)
			}
		}
	}
	mustMarshal(t, "non-finite", r)
}

// TestSeverityJSONNames: severities travel as their names.
func TestSeverityJSONNames(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Severity
		ok   bool
	}{
		{`"info"`, Info, true},
		{` "WARNING"` + "\n", Warning, true},
		{`"\u0065rror"`, Error, true},
		{`"fatal"`, 0, false},
		{`2`, 0, false},
		{`"info`, 0, false},
	} {
		var s Severity
		err := json.Unmarshal([]byte(c.in), &s)
		if (err == nil) != c.ok || (c.ok && s != c.want) {
			t.Errorf("Unmarshal(%q) = %v, %v; want %v, ok %v", c.in, s, err, c.want, c.ok)
		}
	}
	b, err := json.Marshal(struct{ S Severity }{Warning})
	if err != nil || string(b) != `{"S":"warning"}` {
		t.Errorf("Marshal = %s, %v", b, err)
	}
}

// fuzzLogs seeds FuzzDoctorJSON with the published logs.
func fuzzLogs(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(logsDir, "*.log"))
	for i, p := range files {
		b, err := os.ReadFile(p)
		if err == nil {
			f.Add(string(b), envDumps[i%len(envDumps)])
		}
	}
}

// FuzzDoctorJSON: whatever the log and environment, the report encodes.
func FuzzDoctorJSON(f *testing.F) {
	fuzzLogs(f)
	opts := Options{MaxItems: 16, MaxEvidence: 4}
	f.Fuzz(func(t *testing.T, logText, envText string) {
		mustMarshal(t, "fuzzed", buildReport(t, logText, envText, opts))
	})
}

func BenchmarkEncodingJSON(b *testing.B) {
	text, err := os.ReadFile(filepath.Join(logsDir, "nvidia-nccl-1453-h100-rings.log"))
	if err != nil {
		b.Fatal(err)
	}
	r := buildReport(b, string(text), envDumps[1], Options{})
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := json.Marshal(r); err != nil {
			b.Fatal(err)
		}
	}
}
