package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/distributed-nav/distributed-nav/playground/service"
	"io"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/data"
)

// testPreset returns an embedded preset name, preferring an 8-GPU NVLink
// system.
func testPreset(t *testing.T) string {
	t.Helper()
	ents, err := data.Topologies.ReadDir("topologies")
	if err != nil || len(ents) == 0 {
		t.Fatalf("no embedded topologies: %v", err)
	}
	for _, e := range ents {
		if e.Name() == "h100-sxm-8x.xml" {
			return "h100-sxm-8x"
		}
	}
	return strings.TrimSuffix(ents[0].Name(), ".xml")
}

// runCmd runs one command's function with an empty standard input.
func runCmd(t *testing.T, fn func(context.Context, []string, io.Reader, io.Writer, io.Writer) error, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := fn(context.Background(), args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), err
}

func TestTuneText(t *testing.T) {
	out, _, err := runCmd(t, runTune, "--preset", testPreset(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"  Algorithm   |                            Tree                  |                            Ring                  |                   CollNetDirect                  |",
		"  Protocol    |             LL |          LL128 |         Simple |",
		" Max NThreads |",
		"    AllReduce |",
		"threadThresholds ",
		"# AllReduce: chosen algorithm/protocol per size",
		"       8 B  ",
		"       8 GiB  ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// 31 sizes from 8 B to 8 GiB follow the selection header and its column line.
	sel := out[strings.Index(out, "# AllReduce: chosen"):]
	lines := strings.Split(strings.TrimSpace(sel), "\n")
	if len(lines) != 2+31 {
		t.Errorf("%d selection lines, want 33:\n%s", len(lines), sel)
	}
}

func TestTuneJSON(t *testing.T) {
	// h100-8x-ib lists its NICs: several nodes need them (needsNetwork).
	out, _, err := runCmd(t, runTune, "--preset", "h100-8x-ib", "--nodes", "2", "--coll", "allgather", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var v service.TuneResult
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	if v.Nodes != 2 || v.Coll != "AllGather" || len(v.Selection) != 31 || len(v.Cells) != 105 || len(v.TableText) != 24 {
		t.Errorf("nodes %d coll %s selection %d cells %d table %d", v.Nodes, v.Coll, len(v.Selection), len(v.Cells), len(v.TableText))
	}
	for _, r := range v.Selection {
		// busbw = algbw × (n-1)/n for AllGather.
		n := float64(v.NRanks)
		if d := r.BusBwGBps - r.AlgBwGBps*(n-1)/n; d > 1e-9 || d < -1e-9 {
			t.Errorf("busbw %v vs algbw %v", r.BusBwGBps, r.AlgBwGBps)
		}
	}
}

func TestTuneEnv(t *testing.T) {
	p := testPreset(t)
	// An unknown name is an error that names the closest variable.
	_, stderr, err := runCmd(t, runTune, "--preset", p, "--env", "NCCL_ALGOS=ring")
	if !isUsage(err) || !strings.Contains(stderr, "NCCL_ALGO") {
		t.Errorf("unknown name: err %v, stderr %q", err, stderr)
	}
	// A bad value too.
	if _, stderr, err := runCmd(t, runTune, "--preset", p, "--env", "NCCL_PROTO=LL,Fast"); err == nil || !strings.Contains(stderr, `"Fast"`) {
		t.Errorf("bad NCCL_PROTO: err %v, stderr %q", err, stderr)
	}
	// A deprecated name is reported and applied.
	out, stderr, err := runCmd(t, runTune, "--preset", p, "--env", "NCCL_MAX_NRINGS=2", "--json")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, "deprecated") || !strings.Contains(stderr, "NCCL_MAX_NCHANNELS") {
		t.Errorf("no deprecation warning: %q", stderr)
	}
	var v service.TuneResult
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if v.CommNChannels != 2 {
		t.Errorf("NCCL_MAX_NRINGS=2 gave %d channels", v.CommNChannels)
	}
	for _, r := range v.Selection {
		// NVLS runs on comm->nvlsChannels, which ncclNvlsTuning clamps with
		// NCCL_MIN/MAX_CTAS only (nvls.cc:232-233), not NCCL_MAX_NCHANNELS.
		if r.NChannels > 2 && r.Algo != "NVLS" && r.Algo != "NVLSTree" {
			t.Errorf("%d B on %d channels (%s)", r.Bytes, r.NChannels, r.Algo)
		}
	}
	// NCCL_PROTO=Simple shows the ENV matrix and never picks LL/LL128.
	out, _, err = runCmd(t, runTune, "--preset", p, "--env", "NCCL_PROTO=Simple")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "Enabled NCCL Func/Proto/Algo Matrix:") {
		t.Error("no enable matrix")
	}
	sel := strings.Split(strings.TrimSpace(out[strings.Index(out, "# AllReduce: chosen"):]), "\n")[2:]
	for _, l := range sel {
		if f := strings.Fields(l); len(f) < 4 || f[3] != "Simple" {
			t.Errorf("selection row %q is not Simple under NCCL_PROTO=Simple", l)
		}
	}
}

func TestTuneUsageErrors(t *testing.T) {
	p := testPreset(t)
	// The system flags' errors are TestSystemFlagErrors'.
	for _, args := range [][]string{
		{"--preset", p, "--coll", "alltoall"},
		{"--preset", p, "extra"},
	} {
		if _, _, err := runCmd(t, runTune, args...); !isUsage(err) {
			t.Errorf("%q: err %v, want a usage error", args, err)
		}
	}
}

func TestTuneXMLStdin(t *testing.T) {
	raw, err := data.Topologies.ReadFile("topologies/" + testPreset(t) + ".xml")
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if err := runTune(context.Background(), []string{"--xml", "-"}, bytes.NewReader(raw), &out, &errb); err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	// The system is named as --xml names it ("-"), as the playground names a
	// pasted topology.
	if !strings.Contains(out.String(), "# - on 1 node(s)") {
		t.Errorf("header: %s", out.String()[:200])
	}
}

// isUsage reports whether err is a command-line error (exit status 2).
func isUsage(err error) bool {
	var u usageError
	return errors.As(err, &u)
}

func TestParseBytes(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"8", 8, true}, {"1K", 1024, true}, {"256M", 256 << 20, true}, {"8GiB", 8 << 30, true}, {"1gb", 1 << 30, true},
		{"64 KiB", 64 << 10, true}, {"0", 0, true}, {"12B", 12, true},
		{"", 0, false}, {"1.5M", 3 << 19, true}, {"1e9", 1000000000, true}, {"1.3K", 0, false}, {"-1", 0, false}, {"M", 0, false}, {"99999999999999999999", 0, false}, {"9999999999T", 0, false},
	}
	for _, tt := range tests {
		got, err := service.ParseBytes(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("service.ParseBytes(%q) = %d, %v", tt.in, got, err)
		}
	}
}

func FuzzParseBytes(f *testing.F) {
	for _, s := range []string{"8", "1K", "8GiB", "x", "1e9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := service.ParseBytes(s)
		if err == nil && n > 1<<63 {
			t.Fatalf("service.ParseBytes(%q) = %d", s, n)
		}
	})
}

// TestRunExitCodes goes through main's dispatcher: usage errors (an unknown
// --env name included) exit 2, other failures 1.
func TestRunExitCodes(t *testing.T) {
	p := testPreset(t)
	tests := []struct {
		args []string
		code int
	}{
		{[]string{"tune", "--preset", p, "--json"}, 0},
		{[]string{"estimate", "--preset", p, "--coll", "allreduce", "--bytes", "1M"}, 0},
		{[]string{"tune", "--preset", p, "--env", "NCCL_BOGUS_VAR=1"}, 2},
		{[]string{"estimate", "--preset", p, "--coll", "allreduce"}, 2},
		{[]string{"estimate", "--xml", "/nonexistent.xml", "--coll", "allreduce", "--bytes", "1"}, 1},
		{[]string{"tune", "-h"}, 0},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		if got := run(context.Background(), tt.args, strings.NewReader(""), &out, &errb); got != tt.code {
			t.Errorf("%q: exit %d, want %d (stderr %q)", tt.args, got, tt.code, errb.String())
		}
	}
}
