package doctor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/ncclmsg"
)

// TestExplainOldReleaseLines ties lines that NCCL 2.7 to 2.17 printed, read
// from the published logs under data/logs, to the wording of the releases
// that print them. The expected range, file and line were read from the
// source (git show TAG:FILE at the newest tag of the range; the oldest tag
// is the oldest scanned release with that format). Before the catalog
// scanned 2.7-2.17 the first eight were unknown and the last three tied to
// a later wording (2.19's, 2.29's) or to v2.30.7-1's os/windows.cc.
func TestExplainOldReleaseLines(t *testing.T) {
	cases := []struct {
		fixture string
		line    int    // 1-based line of the fixture
		has     string // part of the line, so that an edited fixture fails here
		// releases, file and line of the call the line is tied to
		releases, file string
		at             int
	}{
		// 2.7-2.9 wording without the peer; net_ib.cc:846 at v2.9.9-1
		{"nvidia-nccl-426-ib-error-12-gid.log", 5, "Got completion with error 12, opcode 1",
			"v2.7.8-1..v2.9.9-1", "src/transport/net_ib.cc", 846},
		{"nvidia-nccl-709-ib-error-12-mtu.log", 5, "Got completion with error 12, opcode 32736",
			"v2.7.8-1..v2.9.9-1", "src/transport/net_ib.cc", 846},
		{"nvidia-nccl-902-ib-error-12-timeout.log", 5, "Got completion with error 12, opcode 0",
			"v2.7.8-1..v2.9.9-1", "src/transport/net_ib.cc", 846},
		// init.cc:76 at v2.10.3-1
		{"nvidia-nccl-799-ibv-modify-qp-no-device.log", 6, "NET/Plugin : No plugin found (libnccl-net.so), using internal implementation",
			"v2.7.8-1..v2.10.3-1", "src/init.cc", 76},
		{"pytorch-pytorch-68893-veth-interface.log", 8, "NET/Plugin : No plugin found",
			"v2.7.8-1..v2.10.3-1", "src/init.cc", 76},
		// graph/tuning.cc:252 at v2.13.4-1 (232 at v2.7.8-1)
		{"pytorch-pytorch-68893-veth-interface.log", 18, "threadThresholds 8/8/64 | 16/8/64 | 8/8/64",
			"v2.7.8-1..v2.13.4-1", "src/graph/tuning.cc", 252},
		// a 2.7.8 log: 2.7.8's "via NET/%s/%d%s" (net.cc:147), not
		// 2.8-2.11's "%d%s%s", which matches the text alike
		{"pytorch-pytorch-68893-veth-interface.log", 20, "[receive] via NET/Socket/0",
			"v2.7.8-1..v2.7.8-1", "src/transport/net.cc", 147},
		// transport/shm.cc:73 at v2.12.12-1
		{"dmlc-xgboost-5963-posix-fallocate-dev-shm.log", 5, "via direct shared memory",
			"v2.7.8-1..v2.12.12-1", "src/transport/shm.cc", 73},
		// "Got completion from peer" without 2.18's "(%s)" tail:
		// net_ib.cc:1261 at v2.17.1-1
		{"pytorch-pytorch-81628-ib-error-12.log", 5, "Got completion from peer 192.168.17.147<38560> with error 12",
			"v2.10.3-1..v2.17.1-1", "src/transport/net_ib.cc", 1261},
		// the WARN names misc/ibvwrap.cc:63, the call of 2.7-2.10 (not
		// gdrwrap.cc's "Failed to open %s")
		{"nvidia-nccl-444-k40-invalid-device-function.log", 5, "misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]",
			"v2.7.8-1..v2.10.3-1", "src/misc/ibvwrap.cc", 63},
		// the WARN names include/shm.h:48, 2.7.8's call (2.8 and later
		// dropped the "\n" of its format)
		{"nvidia-nccl-342-shm-posix-fallocate.log", 6, "include/shm.h:48 NCCL WARN Error while creating shared memory segment",
			"v2.7.8-1..v2.7.8-1", "src/include/shm.h", 48},
	}
	for _, c := range cases {
		path := filepath.Join(logsDir, c.fixture)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		if c.line > len(lines) || !strings.Contains(lines[c.line-1], c.has) {
			t.Errorf("%s:%d does not contain %q", c.fixture, c.line, c.has)
			continue
		}
		s := parseFile(t, path)
		x := ExplainLine(lines[c.line-1], s.Version())
		if !x.Known || x.Releases != c.releases || x.File != c.file || x.Line != c.at {
			t.Errorf("%s:%d (NCCL %q): tied to %v %q %s:%d, want %s %s:%d", c.fixture, c.line, s.Version(), x.Known, x.Releases, x.File, x.Line, c.releases, c.file, c.at)
			continue
		}
		_, newest, _ := strings.Cut(c.releases, "..")
		if !strings.HasPrefix(x.Permalink, "https://github.com/NVIDIA/nccl/blob/"+newest+"/"+c.file+"#L") {
			t.Errorf("%s:%d: permalink %s", c.fixture, c.line, x.Permalink)
		}
		if !strings.Contains(strings.Join(x.Notes, " "), "comes from NCCL "+c.releases) {
			t.Errorf("%s:%d: no note naming %s: %q", c.fixture, c.line, c.releases, x.Notes)
		}
	}
}

// TestExplainOldPathTypes reads "distance N" with the numbering of the
// log's release: the PATH_* defines of src/graph/topo.h at v2.7.8-1 (SYS
// = 5, PXB = 3), v2.8.4-1 (SYS = 6, PXB = 4) and v2.12.12-1 (SYS = 7, and
// PATH_DIS = 7 an alias, not the name printed).
func TestExplainOldPathTypes(t *testing.T) {
	cases := []struct{ line, version, distance, limit string }{
		{"h:1:2 [0] NCCL INFO GPU Direct RDMA Disabled for GPU 18000 / HCA 0 (distance 5 > 3)", "2.7.8", "SYS in NCCL 2.7.8", "PXB in NCCL 2.7.8"},
		{"h:1:2 [0] NCCL INFO GPU Direct RDMA Disabled for GPU 18000 / HCA 0 (distance 6 > 4)", "2.8.4", "SYS in NCCL 2.8.4", "PXB in NCCL 2.8.4"},
		{"h:1:2 [0] NCCL INFO GPU Direct RDMA Disabled for GPU 18000 / HCA 0 (distance 7 > 4)", "2.12.12", "SYS in NCCL 2.12.12", "PXB in NCCL 2.12.12"},
		{"h:1:2 [0] NCCL INFO GPU Direct RDMA Disabled for GPU 18000 / HCA 0 (distance 7 > 4)", "2.16.2", "SYS in NCCL 2.16.2", "PXB in NCCL 2.16.2"},
	}
	for _, c := range cases {
		x := ExplainLine(c.line, c.version)
		if !x.Known || len(x.Fields) != 4 {
			t.Fatalf("%q: %+v", c.line, x)
		}
		if x.Fields[2].Meaning != c.distance || !strings.HasPrefix(x.Fields[3].Meaning, c.limit) {
			t.Errorf("%s %q: distance %q, limit %q; want %q, %q", c.version, c.line, x.Fields[2].Meaning, x.Fields[3].Meaning, c.distance, c.limit)
		}
		// The wording of the log's release: "GPU %lx / HCA %d" of
		// 2.7-2.20, not 2.24's "GPU %d / HCA %lx".
		if x.Releases != "v2.7.8-1..v2.20.5-1" {
			t.Errorf("%s %q: tied to %s %s:%d", c.version, c.line, x.Releases, x.File, x.Line)
		}
	}
	cat, err := ncclmsg.Default()
	if err != nil {
		t.Fatal(err)
	}
	if got := cat.PathName("v2.12.12-1", 7); got != "SYS" {
		t.Errorf("path type 7 in v2.12.12-1: %q, want SYS", got)
	}
}
