package doctor

import (
	"bufio"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
)

// logsDir holds the published logs (data/logs), each starting with a "#|"
// header that names its source.
const logsDir = "../../data/logs"

// fixture is what a published log must yield. Every expected value was read
// off the log file by hand; the comments name the lines it comes from.
type fixture struct {
	file       string
	version    string   // "NCCL version X+cuda..." line, "" if the excerpt has none
	nranks     int      // largest "nranks"/"nRanks" of the init lines
	transports []string // kinds of the "via ..." lines, first-seen order
	channels   int      // Summary.ChannelCount
	diagnoses  []string // Diagnosis IDs, most serious first
	check      func(t *testing.T, s *Summary, ds []Diagnosis)
}

var fixtures = []fixture{
	{file: "nvidia-nccl-1154-h800-tuning-tree.log", diagnoses: []string{"env-debug-knob"},
		check: func(t *testing.T, s *Summary, ds []Diagnosis) {
			// line 6: "NCCL_ALGO set by environment to Tree"
			if e, ok := s.Env("NCCL_ALGO"); !ok || e.Value != "Tree" || e.Line.Line != 6 {
				t.Errorf("NCCL_ALGO echo = %+v, %v; want Tree on line 6", e, ok)
			}
			// lines 7-9: Algorithm row Tree|Ring|CollNetDirect, Max NThreads 512 640 512 ...
			if s.Tuning == nil || !slices.Equal(s.Tuning.Algorithms, []string{"Tree", "Ring", "CollNetDirect"}) {
				t.Fatalf("tuning algorithms = %+v", s.Tuning)
			}
			if got := s.Tuning.MaxThreads["CollNetDirect"]; !slices.Equal(got, []int{0, 0, 640}) {
				t.Errorf("CollNetDirect max threads = %v, want [0 0 640]", got)
			}
		}},
	{file: "nvidia-nccl-1232-socket-closed.log", transports: []string{"NET/Socket", "SHM/direct"}, channels: 2,
		diagnoses: []string{"p2p-unavailable", "net-socket"},
		check: func(t *testing.T, s *Summary, ds []Diagnosis) {
			// "[0] node0:..." and "[1] node2:..." prefixes
			if !slices.Equal(s.Hosts, []string{"node0", "node2"}) {
				t.Errorf("hosts = %v", s.Hosts)
			}
			// line 29: "Channel 00 : 2[1] -> 0[0] via SHM/direct/direct" (2.18-2.21 spelling)
			if !slices.Contains(s.Pairs, Pair{From: 2, To: 0, Kind: "SHM/direct"}) {
				t.Errorf("pairs = %v, want 2->0 over SHM/direct", s.Pairs)
			}
			if d := find(ds, "net-socket"); d.Severity != Warning {
				t.Errorf("net-socket severity = %v, want warning (connections between hosts)", d.Severity)
			}
		}},
	{file: "nvidia-nccl-1267-single-rank-socket.log", version: "2.19.3", nranks: 1, channels: 32,
		diagnoses: []string{"net-socket"},
		check: func(t *testing.T, s *Summary, ds []Diagnosis) {
			// lines 18-20: "Channel 00/32 :    0" ... "Channel 02/32 :    0"
			if len(s.Rings) != 3 || s.Rings[2].Channel != 2 || s.Rings[2].Of != 32 || !slices.Equal(s.Rings[2].Ranks, []int{0}) {
				t.Errorf("rings = %+v", s.Rings)
			}
			if s.IBNoDevice.Count != 1 || find(ds, "net-socket").Severity != Info {
				t.Errorf("IB missing %d, net-socket %+v; want one line and info (a single rank)", s.IBNoDevice.Count, find(ds, "net-socket"))
			}
		}},
	{file: "nvidia-nccl-1453-h100-rings.log", nranks: 24, channels: 16,
		check: func(t *testing.T, s *Summary, ds []Diagnosis) {
			// line 6: "Channel 05/16 :    0   7   6  13 ..."
			want := []int{0, 7, 6, 13, 12, 11, 10, 9, 8, 15, 14, 21, 20, 19, 18, 17, 16, 23, 22, 5}
			if len(s.Rings) != 9 || s.Rings[0].Channel != 5 || !slices.Equal(s.Rings[0].Ranks, want) {
				t.Errorf("rings = %d, first %+v", len(s.Rings), s.Rings[0])
			}
			// line 27: "8589934592 Bytes -> Algo 1 proto 2 time 86069.968750": Ring=1, Simple=2
			if len(s.AlgoChoices) != 1 || s.AlgoChoices[0] != (AlgoChoice{Bytes: 8589934592, Algorithm: "Ring", Protocol: "Simple", TimeUs: 86069.96875, Line: 27}) {
				t.Errorf("algo choices = %+v", s.AlgoChoices)
			}
		}},
	{file: "nvidia-nccl-1466-shm-disable.log", nranks: 4,
		check: func(t *testing.T, s *Summary, ds []Diagnosis) {
			// lines 15 and 19: "Trees [0] -1/-1/-1->3->2 ..." and "Trees [0] 3/-1/-1->2->1 ..."
			want := []TreeLink{{0, 2, nil, 3, 15}, {1, 2, nil, 3, 15}, {0, 1, []int{3}, 2, 19}, {1, 1, []int{3}, 2, 19}}
			if !reflect.DeepEqual(s.Trees, want) {
				t.Errorf("trees = %+v", s.Trees)
			}
			if s.NNodes != 1 || s.LocalRanks != 4 || s.NVLSUnsupported.Count != 4 || len(s.Hosts) != 1 || s.Hosts[0] != "pod-id" {
				t.Errorf("nodes %d local %d nvls-unsupported %d hosts %v", s.NNodes, s.LocalRanks, s.NVLSUnsupported.Count, s.Hosts)
			}
		}},
	{file: "nvidia-nccl-1519-h100-tuning.log",
		check: func(t *testing.T, s *Summary, ds []Diagnosis) {
			// line 10: "AllGather | ... | 23.3/ 5.3 | 44.6/ 0.0 | 70.0/ 21.3 | ..." (Ring columns)
			c, ok := s.Tuning.Cell("AllGather", "Ring", "Simple")
			if !ok || c.LatencyUs != 70.0 || c.BwGBps != 21.3 {
				t.Errorf("AllGather/Ring/Simple = %+v, %v; want 70.0/21.3", c, ok)
			}
			// line 12 ends inside the AllReduce row after "43.4/   2.7 |": Ring/LL read, Ring/LL128 not
			if c, ok := s.Tuning.Cell("AllReduce", "Ring", "LL"); !ok || c.LatencyUs != 43.4 || c.BwGBps != 2.7 {
				t.Errorf("AllReduce/Ring/LL = %+v, %v", c, ok)
			}
			if _, ok := s.Tuning.Cell("AllReduce", "Ring", "LL128"); ok {
				t.Error("the cut AllReduce/Ring/LL128 cell was read")
			}
		}},
	{file: "nvidia-nccl-1609-h800-nvls.log", nranks: 4, channels: 16, diagnoses: []string{"net-socket"},
		check: func(t *testing.T, s *Summary, ds []Diagnosis) {
			// lines 21-24: "NVLS comm ..."; line 26: "16 coll channels, 0 collnet channels, 16 nvls channels, ..."
			if s.NVLSComms.Count != 4 || len(s.Channels) != 1 || s.Channels[0].NVLS != 16 || s.Channels[0].CollNet != 0 {
				t.Errorf("nvls comms %d channels %+v", s.NVLSComms.Count, s.Channels)
			}
		}},
	{file: "nvidia-nccl-1637-rtx5090-socket.log", version: "2.25.1", nranks: 2, diagnoses: []string{"gpu-newer-than-nccl", "net-socket"},
		check: func(t *testing.T, s *Summary, ds []Diagnosis) {
			// line 17: "NET/Socket : Using [0]eno1:10.201.24.89<0> [1]CloudflareWARP:172.16.0.2<0>"
			if s.Network != "Socket" || len(s.NetDevices) != 2 || s.Versions[0].CUDA != "12.2" {
				t.Errorf("network %q devices %v cuda %q", s.Network, s.NetDevices, s.Versions[0].CUDA)
			}
		}},
	{file: "nvidia-nccl-1817-l20-p2p.log", version: "2.20.5", transports: []string{"P2P/direct pointer"}, channels: 2,
		diagnoses: []string{"net-socket"},
		check: func(t *testing.T, s *Summary, ds []Diagnosis) {
			// line 9: the bare VERSION-level line "NCCL version 2.20.5+cuda12.4"; line 10: "Failed to open libibverbs.so[.1]"
			if s.Versions[0].Line.Line != 9 || s.IBNoDevice.Count != 1 || !s.ConnectedRings {
				t.Errorf("version line %d, libibverbs %d, rings connected %v", s.Versions[0].Line.Line, s.IBNoDevice.Count, s.ConnectedRings)
			}
		}},
	{file: "nvidia-nccl-957-warn-cuda-invalid.log", diagnoses: []string{"nccl-warn", "generic-cuda"},
		check: func(t *testing.T, s *Summary, ds []Diagnosis) {
			// six "NCCL WARN" lines behind "Fri Aug 11 12:31:45 2023[1,N]<stdout>:" prefixes
			if s.Warnings.Count != 6 || !slices.Equal(s.Hosts, []string{"tomte401"}) {
				t.Errorf("warnings %d hosts %v", s.Warnings.Count, s.Hosts)
			}
		}},
	{file: "nvidia-nccl-tests-166-shm-segment.log", transports: []string{"SHM/direct"}, channels: 22,
		// nccl-error: the test's own "Test NCCL failure ... 'unhandled
		// system error'" line (ncclSystemError).
		diagnoses: []string{"dev-shm-full", "nccl-error", "p2p-unavailable"},
		check: func(t *testing.T, s *Summary, ds []Diagnosis) {
			// line 6: "Error while creating shared memory segment /dev/shm/nccl-zTYolS"
			if s.ShmFailure.Count != 1 || s.ShmFailure.Lines[0].Line != 6 {
				t.Errorf("shm failure = %+v", s.ShmFailure)
			}
		}},
	{file: "nvidia-nccl-tests-307-rtx4090-paths.log", nranks: 8, diagnoses: []string{"p2p-unavailable"},
		check: func(t *testing.T, s *Summary, ds []Diagnosis) {
			// lines 6-9: four GPU path lines with 10 entries each; lines 16-21: six complete init lines
			if len(s.Paths) != 40 || len(s.Ranks) != 6 || s.InitComplete != 6 {
				t.Errorf("paths %d ranks %d init complete %d", len(s.Paths), len(s.Ranks), s.InitComplete)
			}
			if !strings.Contains(find(ds, "p2p-unavailable").Explanation, "worst is SYS") {
				t.Errorf("explanation = %q", find(ds, "p2p-unavailable").Explanation)
			}
		}},
	{file: "nvidia-nccl-tests-373-p2p-level-loc.log", nranks: 3, transports: []string{"NET/IBext_v8"}, channels: 2,
		diagnoses: []string{"no-gdrdma"},
		check: func(t *testing.T, s *Summary, ds []Diagnosis) {
			// line 14: "NCCL_P2P_LEVEL set by environment to LOC"; line 16: "nNodes 3 localRanks 1"
			if e, ok := s.Env("NCCL_P2P_LEVEL"); !ok || e.Value != "LOC" || s.NNodes != 3 || s.LocalRanks != 1 {
				t.Errorf("env %+v nodes %d local %d", e, s.NNodes, s.LocalRanks)
			}
		}},
	{file: "pytorch-pytorch-118369-watchdog-timeout.log", diagnoses: []string{"collective-timeout"},
		check: func(t *testing.T, s *Summary, ds []Diagnosis) {
			// lines 6-10: five timeout lines, lines 8 and 9 identical; line 11 is cut
			if len(s.Timeouts) != 4 || s.Timeouts[3] != (Timeout{Rank: 7, SeqNum: 64088, OpType: "ALLREDUCE", TimeoutMs: 1800000, RanForMs: 25625251, Line: 10, proc: -1, numelIn: -1, numelOut: -1}) {
				t.Errorf("timeouts = %+v", s.Timeouts)
			}
			ex := find(ds, "collective-timeout").Explanation
			if !strings.Contains(ex, "30 min") || !strings.Contains(ex, "watchdog itself was held up") || !strings.Contains(ex, "defaults to 3") {
				t.Errorf("explanation = %q", ex)
			}
		}},
	{file: "sgl-project-sglang-1691-heartbeat.log", diagnoses: []string{"watchdog-heartbeat-abort"},
		check: func(t *testing.T, s *Summary, ds []Diagnosis) {
			if s.Heartbeat.Count != 7 || s.WatchdogStuck.Count != 1 || !strings.Contains(find(ds, "watchdog-heartbeat-abort").Explanation, "for 600 s") {
				t.Errorf("heartbeat %d stuck %d", s.Heartbeat.Count, s.WatchdogStuck.Count)
			}
		}},
	{file: "sgl-project-sglang-3836-p2p-ipc-timeout.log", transports: []string{"P2P/IPC", "NET/IBext_v8"}, channels: 16,
		diagnoses: []string{"collective-timeout"},
		check: func(t *testing.T, s *Summary, ds []Diagnosis) {
			// line 12: PyTorch's timeout between NCCL connection lines; line 19: "... via NET/IBext_v8/7/GDRDMA"
			if len(s.Timeouts) != 1 || s.Timeouts[0].SeqNum != 5653 || s.Timeouts[0].Rank != 7 {
				t.Errorf("timeouts = %+v", s.Timeouts)
			}
		}},
	{file: "vllm-project-vllm-5484-watchdog-teardown.log", diagnoses: []string{"collective-timeout"},
		check: func(t *testing.T, s *Summary, ds []Diagnosis) {
			// line 9: "To avoid data inconsistency, we are taking the entire process down."
			d := find(ds, "collective-timeout")
			if s.TearDown.Count != 1 || !strings.Contains(d.Explanation, "mode 1 (TearDown") || !hasEvidence(d, 9) {
				t.Errorf("teardown %d, diagnosis %+v", s.TearDown.Count, d)
			}
			if len(s.Timeouts) != 1 || s.Timeouts[0].OpType != "GATHER" || s.WatchdogEx.Count != 1 {
				t.Errorf("timeouts %+v, watchdog exceptions %d", s.Timeouts, s.WatchdogEx.Count)
			}
		}},
}

func find(ds []Diagnosis, id string) Diagnosis {
	for _, d := range ds {
		if d.ID == id {
			return d
		}
	}
	return Diagnosis{}
}

func hasEvidence(d Diagnosis, line int) bool {
	for _, e := range d.Evidence {
		if e.Line == line {
			return true
		}
	}
	return false
}

func ids(ds []Diagnosis) []string {
	out := []string{}
	for _, d := range ds {
		out = append(out, d.ID)
	}
	return out
}

func parseFile(t *testing.T, path string) *Summary {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := ParseLog(f, Options{})
	if err != nil {
		t.Fatalf("ParseLog(%s): %v", path, err)
	}
	return s
}

func TestFixtures(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.file, func(t *testing.T) {
			s := parseFile(t, filepath.Join(logsDir, fx.file))
			ds := Diagnose(s, ncclenv.Env{})
			if got := s.Version(); got != fx.version {
				t.Errorf("version = %q, want %q", got, fx.version)
			}
			if s.NRanks != fx.nranks {
				t.Errorf("nranks = %d, want %d", s.NRanks, fx.nranks)
			}
			if got := s.TransportKinds(); !slices.Equal(got, fx.transports) && len(got)+len(fx.transports) > 0 {
				t.Errorf("transports = %v, want %v", got, fx.transports)
			}
			if got := s.ChannelCount(); got != fx.channels {
				t.Errorf("channels = %d, want %d", got, fx.channels)
			}
			if got := ids(ds); !slices.Equal(got, append([]string{}, fx.diagnoses...)) {
				t.Errorf("diagnoses = %v, want %v", got, fx.diagnoses)
			}
			// Every fixture is NCCL output: the "was the job run with
			// NCCL_DEBUG=INFO?" note must not appear (it did for a log of
			// only the TUNING table and an env echo).
			for _, n := range s.Notes {
				if strings.Contains(n, "NCCL_DEBUG=INFO?") {
					t.Errorf("note %q on a log of NCCL output", n)
				}
			}
			for _, d := range ds {
				if len(d.Evidence) == 0 || len(d.Links) == 0 || d.Explanation == "" || d.Title == "" {
					t.Errorf("diagnosis %s lacks evidence, links, title or explanation: %+v", d.ID, d)
				}
			}
			if fx.check != nil {
				fx.check(t, s, ds)
			}
		})
	}
}

// TestFixtureHeaders checks that every committed log names its source and
// that the table above covers every file.
func TestFixtureHeaders(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(logsDir, "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 8 {
		t.Fatalf("%d logs under %s, want at least 8", len(files), logsDir)
	}
	covered := map[string]bool{}
	for _, fx := range fixtures {
		covered[fx.file] = true
	}
	for _, f := range files {
		// A log is covered by the table above or by a note file with its
		// confirmed diagnosis (TestConfirmedLogs).
		_, noteErr := os.Stat(strings.TrimSuffix(f, ".log") + ".note")
		if !covered[filepath.Base(f)] && noteErr != nil {
			t.Errorf("%s has no entry in the fixtures table and no .note file", filepath.Base(f))
		}
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		var head []string
		for sc.Scan() && strings.HasPrefix(sc.Text(), CommentPrefix) {
			head = append(head, sc.Text())
		}
		fh.Close()
		joined := strings.Join(head, "\n")
		for _, key := range []string{"#| source: https://github.com/", "#| nccl: ", "#| shows: "} {
			if !strings.Contains(joined, key) {
				t.Errorf("%s: header lacks %q", filepath.Base(f), key)
			}
		}
		if n := countLines(t, f); n >= 300 {
			t.Errorf("%s: %d lines, keep excerpts under 300", filepath.Base(f), n)
		}
	}
}

func countLines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// TestNotNCCLOutputNote: text with no line in NCCL's message format and no
// PyTorch distributed message gets the "run with NCCL_DEBUG=INFO?" note; one
// NCCL INFO line of any kind is enough to drop it.
func TestNotNCCLOutputNote(t *testing.T) {
	hasNote := func(text string) bool {
		s, err := ParseLog(strings.NewReader(text), Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range s.Notes {
			if strings.Contains(n, "NCCL_DEBUG=INFO?") {
				return true
			}
		}
		return false
	}
	if !hasNote("Epoch 1 loss 2.3\nNCCL is mentioned here but this is not its output\n") {
		t.Error("plain training output got no note")
	}
	if hasNote("h:1:1 [0] NCCL INFO NCCL_ALGO set by environment to Tree\n") {
		t.Error("an NCCL INFO line still got the note")
	}
}
