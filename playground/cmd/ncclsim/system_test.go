package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/distributed-nav/distributed-nav/playground/service"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/data"
	"github.com/distributed-nav/distributed-nav/playground/topo"
)

// systemCommand is a command that takes the system flags, with the other
// arguments it needs to get as far as loading the system.
type systemCommand struct {
	name  string
	extra []string
}

var systemCommands = []systemCommand{
	{"topo", nil},
	{"tune", nil},
	{"estimate", []string{"--coll", "allreduce", "--bytes", "1M"}},
	{"step", []string{"--params", "1B", "--forward-ms", "10", "--backward-ms", "20"}},
	{"export-tuner", nil},
}

// runSystemCommand runs c through the dispatcher with args after its extra
// arguments and returns the exit status, stdout and stderr.
func runSystemCommand(c systemCommand, stdin string, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	argv := append(append([]string{c.name}, c.extra...), args...)
	code := run(context.Background(), argv, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// writeFile writes a file under dir and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSystemFlagErrors runs every error of the shared loader through every
// command that models a system: the same exit status, error and stderr
// lines for each shows that they share it.
func TestSystemFlagErrors(t *testing.T) {
	dir := t.TempDir()
	// <cpu> opened on line 2 is closed by </system> on line 3.
	bad := writeFile(t, dir, "bad.xml", "<system version=\"1\">\n  <cpu numaid=\"0\">\n</system>\n")
	missing := filepath.Join(dir, "missing.xml")
	tests := []struct {
		name   string
		args   []string
		code   int
		err    string   // the error, as run prints it after "ncclsim CMD: "
		stderr []string // lines the loader prints before failing
	}{
		{"both", []string{"--preset", "rtx4090-2x", "--xml", "x.xml"}, 2,
			"give exactly one of --preset NAME or --xml FILE", nil},
		{"none", nil, 2, "give exactly one of --preset NAME or --xml FILE", nil},
		{"nodes 0", []string{"--preset", "rtx4090-2x", "--nodes", "0"}, 2,
			fmt.Sprintf("--nodes 0: want 1..%d", topo.MaxHosts), nil},
		{"nodes above MaxHosts", []string{"--preset", "rtx4090-2x", "--nodes", fmt.Sprint(topo.MaxHosts + 1)}, 2,
			fmt.Sprintf("--nodes: want a whole number of nodes from 1 to %d", topo.MaxHosts), nil},
		{"unknown env name", []string{"--preset", "rtx4090-2x", "--env", "NCCL_P2P_LEVL=PHB"}, 2,
			"--env has errors (listed above)",
			[]string{"ncclsim: --env error: NCCL_P2P_LEVL: not a variable NCCL v2.30.7-1 reads (did you mean NCCL_P2P_LEVEL?)"}},
		{"env without =", []string{"--preset", "rtx4090-2x", "--env", "NOEQUALS"}, 2,
			`--env: env assignment "NOEQUALS": want NAME=VALUE`, nil},
		{"bad p2p", []string{"--preset", "rtx4090-2x", "--p2p", "maybe"}, 2, "--p2p: ", nil},
		{"unknown preset", []string{"--preset", "nope"}, 2, `unknown preset "nope" (available: `, nil},
		{"missing XML file", []string{"--xml", missing}, 1, "open " + missing + ": no such file or directory", nil},
		{"malformed XML", []string{"--xml", bad}, 1,
			"parse topology " + bad + ": line 3: element <cpu> from line 2 closed by </system>", nil},
		{"malformed XML on stdin", []string{"--xml", "-"}, 1,
			"parse topology -: line 1: unexpected EOF", nil},
	}
	for _, c := range systemCommands {
		for _, tt := range tests {
			t.Run(c.name+"/"+tt.name, func(t *testing.T) {
				stdin := ""
				if tt.name == "malformed XML on stdin" {
					stdin = "<system>"
				}
				code, out, stderr := runSystemCommand(c, stdin, tt.args...)
				if want := "ncclsim " + c.name + ": " + tt.err; code != tt.code || !strings.Contains(stderr, want) {
					t.Fatalf("exit %d, stderr %q; want exit %d, stderr containing %q", code, stderr, tt.code, want)
				}
				if out != "" {
					t.Errorf("stdout %q, want nothing", out)
				}
				for _, l := range tt.stderr {
					if !strings.Contains(stderr, l+"\n") {
						t.Errorf("stderr %q lacks the line %q", stderr, l)
					}
				}
			})
		}
	}
}

// TestSystemFlagsApplied checks what the loader passes on, through topo
// and tune: the system's name, a deprecated --env name warned about and
// applied, and topology warnings printed.
func TestSystemFlagsApplied(t *testing.T) {
	raw, err := data.Topologies.ReadFile("topologies/rtx4090-2x.xml")
	if err != nil {
		t.Fatal(err)
	}
	// An attribute NCCL's XML does not have makes a warning at its line.
	odd := strings.Replace(string(raw), `<system version="1"`, `<system version="1" foo="bar"`, 1)
	oddLine := 1 + strings.Count(odd[:strings.Index(odd, "foo=")], "\n")
	// name and channels read a command's JSON.
	type result struct {
		name     string
		channels int
	}
	decode := map[string]func(string) (result, error){
		"topo": func(s string) (result, error) {
			var v service.TopoResult
			err := json.Unmarshal([]byte(s), &v)
			return result{v.System.Name, v.Comm.NChannels}, err
		},
		"tune": func(s string) (result, error) {
			var v service.TuneResult
			err := json.Unmarshal([]byte(s), &v)
			return result{v.Topology, v.CommNChannels}, err
		},
	}
	tests := []struct {
		name     string
		stdin    string
		args     []string
		want     result // channels 0: not checked
		stderr   string
		noStderr bool
	}{
		// NCCL_MAX_NRINGS is the old name of NCCL_MAX_NCHANNELS, which caps
		// the channels after ncclTopoPostset: 24 on h100-sxm-8x otherwise
		// (TestTopoJSON), 2 with it.
		{"deprecated name", "", []string{"--preset", "h100-sxm-8x", "--env", "NCCL_MAX_NRINGS=2"},
			result{"h100-sxm-8x", 2},
			"ncclsim: --env warning: NCCL_MAX_NRINGS: deprecated name; use NCCL_MAX_NCHANNELS (NCCL still reads it)\n", false},
		{"clean preset", "", []string{"--preset", "h100-sxm-8x"}, result{"h100-sxm-8x", 24}, "", true},
		{"XML warning on stdin", odd, []string{"--xml", "-"}, result{"-", 0},
			fmt.Sprintf("ncclsim: topology: line %d: unknown attribute foo=\"bar\" on <system> kept but not modelled\n", oddLine), false},
	}
	for _, c := range systemCommands[:2] {
		for _, tt := range tests {
			t.Run(c.name+"/"+tt.name, func(t *testing.T) {
				code, out, stderr := runSystemCommand(c, tt.stdin, append(tt.args, "--json")...)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				if tt.noStderr && stderr != "" {
					t.Errorf("stderr %q, want nothing", stderr)
				}
				if !strings.Contains(stderr, tt.stderr) {
					t.Errorf("stderr %q lacks %q", stderr, tt.stderr)
				}
				got, err := decode[c.name](out)
				if err != nil {
					t.Fatalf("bad JSON: %v", err)
				}
				if got.name != tt.want.name || (tt.want.channels != 0 && got.channels != tt.want.channels) {
					t.Errorf("got %+v, want %+v", got, tt.want)
				}
			})
		}
	}
}

// TestSystemFlagsRequest checks what the flags become: the service's
// answer names the system as given, replicates it over --nodes and applies
// --p2p, with the XML's description.
func TestSystemFlagsRequest(t *testing.T) {
	raw, err := data.Topologies.ReadFile("topologies/rtx4090-2x.xml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args  []string
		stdin string
		name  string
		nodes int
		p2p   topo.P2PSupport
	}{
		{[]string{"--preset", "rtx4090-2x", "--nodes", "3", "--p2p", "all"}, "", "rtx4090-2x", 3, topo.P2PAll},
		{[]string{"--xml", "-", "--p2p", "nvlink"}, string(raw), "-", 1, topo.P2PNVLink},
		// The preset's XML says dn:p2p="none" (GeForce: NVML reports no P2P).
		{[]string{"--preset", "rtx4090-2x"}, "", "rtx4090-2x", 1, topo.P2PNone},
	}
	for _, tt := range tests {
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		var sf systemFlags
		sf.register(fs)
		if err := fs.Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		req, err := sf.request(strings.NewReader(tt.stdin))
		if err != nil {
			t.Fatalf("%q: %v", tt.args, err)
		}
		r, err := service.New().Topo(context.Background(), req)
		if err != nil {
			t.Fatalf("%q: %v", tt.args, err)
		}
		s := r.System
		if s.Name != tt.name || s.Hosts != tt.nodes || s.P2PSupport != tt.p2p.String() ||
			!strings.HasPrefix(s.Description, "2x GeForce RTX 4090") || len(r.Checked.Warnings) != 0 {
			t.Errorf("%q: name %q hosts %d p2p %v description %q warnings %v", tt.args, s.Name, s.Hosts, s.P2PSupport, s.Description, r.Checked.Warnings)
		}
	}
}

// TestTimeoutOnlyOnTopo: --timeout bounds topo's graph search; the
// commands that build the model do not take it.
func TestTimeoutOnlyOnTopo(t *testing.T) {
	for _, c := range systemCommands {
		code, _, stderr := runSystemCommand(c, "", "--preset", "rtx4090-2x", "--timeout", "1m")
		switch {
		case c.name == "topo" && code != 0:
			t.Errorf("topo --timeout: exit %d: %s", code, stderr)
		case c.name != "topo" && (code != 2 || !strings.Contains(stderr, "flag provided but not defined: -timeout")):
			t.Errorf("%s --timeout: exit %d (%s), want 2 for an unknown flag", c.name, code, stderr)
		}
	}
}
