package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/service"
)

func TestEstimateJSON(t *testing.T) {
	p := testPreset(t)
	for _, tc := range []struct {
		coll   string
		factor func(n float64) float64
	}{
		{"allreduce", func(n float64) float64 { return 2 * (n - 1) / n }},
		{"all_gather", func(n float64) float64 { return (n - 1) / n }},
		{"reducescatter", func(n float64) float64 { return (n - 1) / n }},
		{"broadcast", func(float64) float64 { return 1 }},
		{"reduce", func(float64) float64 { return 1 }},
	} {
		out, _, err := runCmd(t, runEstimate, "--preset", p, "--coll", tc.coll, "--bytes", "256M", "--json")
		if err != nil {
			t.Fatal(err)
		}
		var raw map[string]any
		if err := json.Unmarshal([]byte(out), &raw); err != nil {
			t.Fatalf("bad JSON: %v", err)
		}
		for _, k := range []string{"coll", "bytes", "nranks", "algo", "proto", "nchannels", "time_us", "algbw_GBps", "busbw_GBps", "model", "calibrated"} {
			if _, ok := raw[k]; !ok {
				t.Errorf("%s: key %q missing", tc.coll, k)
			}
		}
		cal, ok := raw["calibrated"].(map[string]any)
		if !ok {
			t.Fatalf("%s: calibrated block is %T, want an object", tc.coll, raw["calibrated"])
		}
		for _, k := range []string{"class", "error_band", "n_datasets", "latency_us", "plateau_busbw_GBps"} {
			if _, ok := cal[k]; !ok {
				t.Errorf("%s: calibrated key %q missing", tc.coll, k)
			}
		}
		var v service.EstimateResult
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatal(err)
		}
		n := float64(v.NRanks)
		// algbw = bytes / time (µs → GB/s: bytes / µs / 1000).
		if alg := float64(v.Bytes) / v.TimeUs / 1000; math.Abs(alg-v.AlgBwGBps) > 1e-9*alg {
			t.Errorf("%s: algbw %v, bytes/time %v", tc.coll, v.AlgBwGBps, alg)
		}
		if want := v.AlgBwGBps * tc.factor(n); math.Abs(want-v.BusBwGBps) > 1e-9*want {
			t.Errorf("%s: busbw %v, want %v", tc.coll, v.BusBwGBps, want)
		}
		if v.Calibrated.TimeUs != v.TimeUs || v.Calibrated.Algo != v.Algo || v.Source != "calibrated" {
			t.Errorf("%s: top level %+v differs from the calibrated block %+v", tc.coll, v.Prediction, v.Calibrated.Prediction)
		}
		// Both estimators time the same chosen cell.
		if v.Model.Algo != v.Algo || v.Model.Proto != v.Proto {
			t.Errorf("%s: model picked %s/%s, calibrated %s/%s", tc.coll, v.Model.Algo, v.Model.Proto, v.Algo, v.Proto)
		}
		if alg := float64(v.Bytes) / v.Model.TimeUs / 1000; math.Abs(alg-v.Model.AlgBwGBps) > 1e-9*alg {
			t.Errorf("%s: model algbw %v, bytes/time %v", tc.coll, v.Model.AlgBwGBps, alg)
		}
		if v.Model.Costs[v.Algo+"/"+v.Proto] != v.Model.TimeUs {
			t.Errorf("%s: cost table %v lacks the chosen pair", tc.coll, v.Model.Costs)
		}
		if v.Bytes != 256<<20 {
			t.Errorf("bytes %d", v.Bytes)
		}
		if (tc.coll == "all_gather" || tc.coll == "reducescatter") && v.BytesPerRank != v.Bytes/uint64(v.NRanks) {
			t.Errorf("%s: bytes per rank %d", tc.coll, v.BytesPerRank)
		}
	}
}

func TestEstimateEnvAndText(t *testing.T) {
	p := testPreset(t)
	out, _, err := runCmd(t, runEstimate, "--preset", p, "--coll", "allreduce", "--bytes", "1K", "--env", "NCCL_PROTO=Simple", "--env", "NCCL_ALGO=Ring", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var v service.EstimateResult
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if v.Algo != "Ring" || v.Proto != "Simple" {
		t.Errorf("forced Ring/Simple, got %s/%s", v.Algo, v.Proto)
	}
	txt, _, err := runCmd(t, runEstimate, "--preset", p, "--coll", "allreduce", "--bytes", "1G")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"AllReduce of 1073741824 bytes", "NCCL tuning model (v2.30.7-1)", "busbw", "calibrated estimate, what nccl-tests would measure", "error band of the class"} {
		if !strings.Contains(txt, want) {
			t.Errorf("text lacks %q:\n%s", want, txt)
		}
	}
}

func TestEstimateErrors(t *testing.T) {
	p := testPreset(t)
	for _, args := range [][]string{
		{"--preset", p, "--bytes", "1M"},
		{"--preset", p, "--coll", "allreduce"},
		{"--preset", p, "--coll", "sendrecv", "--bytes", "1M"},
		{"--preset", p, "--coll", "allreduce", "--bytes", "lots"},
		{"--preset", p, "--coll", "allreduce", "--bytes", "1M", "--dtype", "complex"},
		{"--preset", p, "--coll", "allreduce", "--bytes", "1M", "--env", "NCCL_P2P_LEVL=PHB"},
		{"--preset", p, "--coll", "allreduce", "--bytes", "1M", "--fabric", "carrier-pigeon"},
	} {
		if _, _, err := runCmd(t, runEstimate, args...); !isUsage(err) {
			t.Errorf("%q: err %v, want a usage error", args, err)
		}
	}
	// NCCL_ALGO leaving nothing for the collective: NCCL's ncclInvalidUsage.
	if _, _, err := runCmd(t, runEstimate, "--preset", p, "--coll", "allgather", "--bytes", "1M", "--env", "NCCL_ALGO=Tree"); err == nil {
		t.Error("AllGather with NCCL_ALGO=Tree accepted")
	}
}

// TestEstimateErrorKeepsWarnings: an estimate refused after the topology
// parsed still prints the parser's warnings (they often say why); before,
// only the error reached stderr.
func TestEstimateErrorKeepsWarnings(t *testing.T) {
	gpu := func(bus string, dev int) string {
		return fmt.Sprintf(`<pci busid="0000:%s:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16"><gpu dev="%d" sm="90" rank="%d" gdr="1"/></pci>`, bus, dev, dev)
	}
	xml := "<system version=\"1\">\n<cpu numaid=\"0\" arch=\"x86_64\" vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"143\" bogus=\"1\">\n" +
		gpu("17", 0) + gpu("18", 1) + "\n</cpu>\n</system>\n"
	path := filepath.Join(t.TempDir(), "two.xml")
	if err := os.WriteFile(path, []byte(xml), 0o644); err != nil {
		t.Fatal(err)
	}
	// NVLS needs NVSwitches: on two PCIe GPUs NCCL_ALGO=NVLS leaves no
	// algorithm (NCCL's ncclInvalidUsage).
	_, stderr, err := runCmd(t, runEstimate, "--xml", path, "--coll", "allreduce", "--bytes", "1M", "--env", "NCCL_ALGO=NVLS")
	if err == nil {
		t.Fatal("NCCL_ALGO=NVLS on two PCIe GPUs accepted")
	}
	if want := `ncclsim: topology: line 2: unknown attribute bogus="1" on <cpu>`; !strings.Contains(stderr, want) {
		t.Errorf("stderr %q lacks the topology warning %q (error %v)", stderr, want, err)
	}
}
