//go:build !(js && wasm)

package api

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/presets"
)

// ncclsimBin is the CLI built once for the package's tests: the playground
// must print the same numbers as `ncclsim ... --json`, so every comparison
// below runs the real command.
var ncclsimBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ncclsim")
	if err != nil {
		panic(err)
	}
	ncclsimBin = filepath.Join(dir, "ncclsim")
	cmd := exec.Command("go", "build", "-o", ncclsimBin, "github.com/distributed-nav/distributed-nav/playground/cmd/ncclsim")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		panic("build ncclsim: " + err.Error())
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// runCLI runs ncclsim with args (stdin for --xml -) and decodes its JSON.
func runCLI(t *testing.T, stdin string, args ...string) any {
	t.Helper()
	cmd := exec.Command(ncclsimBin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("ncclsim %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	var v any
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatalf("ncclsim output: %v", err)
	}
	return v
}

// decode parses a playground answer and returns its "result" member.
func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("playground output is not JSON: %v\n%.400s", err, s)
	}
	if e, ok := v["error"]; ok {
		t.Fatalf("playground error: %v", e)
	}
	return v
}

// diff returns the first path where a and b differ, or "".
func diff(path string, a, b any) string {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return path + ": object vs " + typeName(b)
		}
		var keys []string
		for k := range x {
			keys = append(keys, k)
		}
		for k := range y {
			if _, ok := x[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			if d := diff(path+"."+k, x[k], y[k]); d != "" {
				return d
			}
		}
		return ""
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return path + ": arrays differ in length or type"
		}
		for i := range x {
			if d := diff(path+"["+itoa(i)+"]", x[i], y[i]); d != "" {
				return d
			}
		}
		return ""
	}
	if !reflect.DeepEqual(a, b) {
		j1, _ := json.Marshal(a)
		j2, _ := json.Marshal(b)
		return path + ": playground " + string(j1) + ", ncclsim " + string(j2)
	}
	return ""
}

func typeName(v any) string {
	if v == nil {
		return "null"
	}
	return reflect.TypeOf(v).String()
}

// cases are the inputs compared with the CLI: every preset with defaults,
// plus environment, node-count and P2P variations.
func cases(t *testing.T) []Request {
	list, err := presets.List()
	if err != nil {
		t.Fatal(err)
	}
	var out []Request
	for _, p := range list {
		out = append(out, Request{Preset: p.Name})
	}
	out = append(out,
		Request{Preset: "h100-8x-ib", Nodes: 4},
		Request{Preset: "h100-sxm-8x", Env: []string{"NCCL_ALGO=^NVLS", "NCCL_PROTO=Simple"}},
		Request{Preset: "a100-sxm-8x", Env: []string{"NCCL_MAX_NCHANNELS=4", "NCCL_P2P_DISABLE=1"}},
		Request{Preset: "rtx4090-8x", P2P: "all"},
		Request{Preset: "rtx3090-4x-nvlink", Env: []string{"NCCL_P2P_LEVEL=PHB"}},
	)
	return out
}

// cliArgs turns a request into ncclsim's system flags.
func cliArgs(r Request) []string {
	args := []string{"--preset", r.Preset}
	if r.Nodes > 1 {
		args = append(args, "--nodes", itoa(r.Nodes))
	}
	if r.P2P != "" {
		args = append(args, "--p2p", r.P2P)
	}
	for _, e := range r.Env {
		args = append(args, "--env", e)
	}
	return args
}

func name(r Request) string {
	return r.Preset + "/" + itoa(r.Nodes) + "/" + r.P2P + "/" + strings.Join(r.Env, ",")
}

func TestTopoMatchesCLI(t *testing.T) {
	s := NewSession()
	for _, r := range cases(t) {
		t.Run(name(r), func(t *testing.T) {
			got := decode(t, s.Topo(context.Background(), &r).JSON)
			want := runCLI(t, "", append(append([]string{"topo"}, cliArgs(r)...), "--json")...)
			if d := diff("topo", got["result"], want); d != "" {
				t.Fatal(d)
			}
			if !strings.HasPrefix(got["command"].(string), "ncclsim topo --preset "+r.Preset) {
				t.Errorf("command = %q", got["command"])
			}
		})
	}
}

func TestTuneMatchesCLI(t *testing.T) {
	s := NewSession()
	for _, r := range cases(t) {
		for _, coll := range []string{"allreduce", "allgather"} {
			r := r
			r.Coll = coll
			t.Run(name(r)+"/"+coll, func(t *testing.T) {
				got := decode(t, s.Tune(context.Background(), &r).JSON)
				want := runCLI(t, "", append(append([]string{"tune"}, cliArgs(r)...), "--coll", coll, "--json")...)
				if d := diff("tune", got["result"], want); d != "" {
					t.Fatal(d)
				}
			})
		}
	}
}

func TestEstimateMatchesCLI(t *testing.T) {
	s := NewSession()
	for _, r := range cases(t) {
		for _, q := range []struct{ coll, bytes, dtype string }{
			{"allreduce", "64M", ""}, {"allgather", "1K", "bf16"}, {"reducescatter", "0", ""}, {"allreduce", "123457", "float8e4m3"},
		} {
			r := r
			r.Coll, r.Bytes, r.Dtype = q.coll, q.bytes, q.dtype
			t.Run(name(r)+"/"+q.coll+"/"+q.bytes, func(t *testing.T) {
				got := decode(t, s.Estimate(context.Background(), &r).JSON)
				args := append(append([]string{"estimate"}, cliArgs(r)...), "--coll", q.coll, "--bytes", q.bytes, "--json")
				if q.dtype != "" {
					args = append(args, "--dtype", q.dtype)
				}
				want := runCLI(t, "", args...)
				if d := diff("estimate", got["result"], want); d != "" {
					t.Fatal(d)
				}
			})
		}
	}
}

// TestXMLMatchesCLI feeds a preset's XML as a pasted topology and checks it
// against `ncclsim topo --xml -`.
func TestXMLMatchesCLI(t *testing.T) {
	s := NewSession()
	p, err := presets.Get("a100-sxm-8x")
	if err != nil {
		t.Fatal(err)
	}
	r := Request{XML: string(p.XML()), XMLName: "-"}
	got := decode(t, s.Topo(context.Background(), &r).JSON)
	want := runCLI(t, string(p.XML()), "topo", "--xml", "-", "--json")
	if d := diff("topo", got["result"], want); d != "" {
		t.Fatal(d)
	}
}

// TestCrossoversAreExact checks each reported crossover against the
// selection one byte below and at the crossover, with the CLI.
func TestCrossoversAreExact(t *testing.T) {
	s := NewSession()
	r := Request{Preset: "h100-sxm-8x", Coll: "allreduce"}
	got := decode(t, s.Tune(context.Background(), &r).JSON)
	cross := got["crossovers"].([]any)
	if len(cross) == 0 {
		t.Fatal("no crossovers on h100-sxm-8x AllReduce")
	}
	for _, c := range cross[:min(3, len(cross))] {
		x := c.(map[string]any)
		n := uint64(x["bytes"].(float64))
		for _, q := range []struct {
			n    uint64
			want string
		}{{n - 1, x["from"].(string)}, {n, x["to"].(string)}} {
			v := runCLI(t, "", "estimate", "--preset", "h100-sxm-8x", "--coll", "allreduce", "--bytes", itoa(int(q.n)), "--json").(map[string]any)
			if g := v["algo"].(string) + "/" + v["proto"].(string); g != q.want {
				t.Errorf("at %d bytes ncclsim picks %s, playground says %s", q.n, g, q.want)
			}
		}
	}
}

func TestEstimatorMatchesCLI(t *testing.T) {
	s := NewSession()
	for _, r := range []Request{
		{Preset: EstimatorDefaultPreset, Coll: "allreduce", Bytes: "64M"},
		{Preset: EstimatorDefaultPreset, Coll: "allgather", Bytes: "1K"},
		{Preset: "h100-8x-ib", Nodes: 2, Coll: "reducescatter", Bytes: "1G", Fabric: "tcp"},
	} {
		t.Run(name(r)+"/"+r.Coll, func(t *testing.T) {
			rep := s.Estimator(context.Background(), &r)
			got := decode(t, rep.JSON)
			args := append(append([]string{"estimate"}, cliArgs(r)...), "--coll", r.Coll, "--bytes", r.Bytes, "--json")
			if r.Fabric != "" {
				args = append(args, "--fabric", r.Fabric)
			}
			if d := diff("estimate", got["result"], runCLI(t, "", args...)); d != "" {
				t.Fatal(d)
			}
			// Each sweep point equals the CLI at that size.
			sw := got["sweep"].(map[string]any)
			sizes := sw["sizes"].([]any)
			for _, i := range []int{0, 10, len(sizes) - 1} {
				n := uint64(sizes[i].(float64))
				want := runCLI(t, "", append(append([]string{"estimate"}, cliArgs(r)...), "--coll", r.Coll, "--bytes", strconv.FormatUint(n, 10), "--fabric", or(r.Fabric, "auto"), "--json")...).(map[string]any)
				if g, w := sw["calibrated_busbw_GBps"].([]any)[i], want["busbw_GBps"]; g != w {
					t.Errorf("%d bytes: calibrated busbw %v, ncclsim %v", n, g, w)
				}
				if g, w := sw["model_time_us"].([]any)[i], want["model"].(map[string]any)["time_us"]; g != w {
					t.Errorf("%d bytes: model time %v, ncclsim %v", n, g, w)
				}
			}
			if rep.Figure("busbw") == "" || rep.Figure("estimate") == "" {
				t.Error("figures missing")
			}
		})
	}
	// The default system has published runs of each of the three collectives.
	for _, c := range []string{"allreduce", "allgather", "reducescatter"} {
		r := Request{Preset: EstimatorDefaultPreset, Coll: c, Bytes: "1M"}
		got := decode(t, s.Estimator(context.Background(), &r).JSON)
		if m := got["measurements"].([]any); len(m) == 0 {
			t.Errorf("%s: no measurements for %s", c, EstimatorDefaultPreset)
		}
	}
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func TestStepMatchesCLI(t *testing.T) {
	s := NewSession()
	for _, r := range []Request{
		{Preset: "rtx4090-8x", Step: StepInputs{Params: "1.5B", ForwardMs: "60", BackwardMs: "120", OptimizerMs: "10"}},
		{Preset: "h100-sxm-8x", Dtype: "fp16", Step: StepInputs{Params: "350M", BucketCapMB: "50", FirstIteration: true, Layers: "24", TensorsPerLayer: "12", ForwardMs: "20", BackwardMs: "40", Timing: "model"}},
		{Preset: "a100-sxm-8x", Nodes: 2, Step: StepInputs{Mode: "fsdp", Params: "7B", Layers: "32", ForwardMs: "100", BackwardMs: "200", OptimizerMs: "5", Reshard: "false", ReduceDtype: "fp32", ShardDtype: "fp32"}},
	} {
		t.Run(name(r)+"/"+r.Step.Mode, func(t *testing.T) {
			rep := s.Step(context.Background(), &r)
			got := decode(t, rep.JSON)
			cmd := strings.Fields(got["command"].(string))
			if cmd[0] != "ncclsim" || cmd[1] != "step" {
				t.Fatalf("command %v", cmd)
			}
			if d := diff("step", got["result"], runCLI(t, "", cmd[1:]...)); d != "" {
				t.Fatal(d)
			}
			if !strings.HasPrefix(rep.Figure("timeline"), "<svg") {
				t.Error("no timeline")
			}
		})
	}
}

func TestDoctorMatchesCLI(t *testing.T) {
	s := NewSession()
	dir := filepath.Join("..", "..", "..", "data", "logs")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	env := "NCCL_P2P_DISABLE=1\nNCCL_ALGOO=Ring\nNCCL_SOCKET_IFNAME=eth0\n"
	envFile := filepath.Join(t.TempDir(), "env.txt")
	if err := os.WriteFile(envFile, []byte(env), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, e := range entries {
		if i >= 4 {
			break
		}
		t.Run(e.Name(), func(t *testing.T) {
			log, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			rep := s.Doctor(context.Background(), string(log), env)
			got := decode(t, rep.JSON)
			want := runCLI(t, "", "doctor", "--log", filepath.Join(dir, e.Name()), "--env", envFile, "--json")
			if d := diff("doctor", got["result"], want); d != "" {
				t.Fatal(d)
			}
			if !strings.Contains(rep.Figure("report"), "doctor-report") {
				t.Error("no HTML report")
			}
		})
	}
}
