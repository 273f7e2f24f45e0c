package doctor

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExplainEveryFixtureLine: each NCCL line of every published log that
// the parser tied to the catalog is explained with a permalink at the
// release that prints it; the others are reported unknown, never dropped.
func TestExplainEveryFixtureLine(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(logsDir, "*.log"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no logs: %v", err)
	}
	known, unknown := 0, 0
	for _, path := range files {
		s := parseFile(t, path)
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		n, k, u := 0, 0, 0
		for sc.Scan() {
			n++
			line := sc.Text()
			if strings.HasPrefix(line, CommentPrefix) {
				continue
			}
			if _, lvl, _ := splitNCCL(line); lvl == levelNone {
				continue
			}
			x := ExplainLine(line, s.Version())
			if !x.Known {
				u++
				continue
			}
			k++
			if !strings.HasPrefix(x.Permalink, "https://github.com/NVIDIA/nccl/blob/v2.") || !strings.Contains(x.Permalink, "#L") {
				t.Errorf("%s:%d: permalink %q", filepath.Base(path), n, x.Permalink)
			}
		}
		f.Close()
		// ExplainLine and the parser read a line the same way.
		if k != s.Messages.Matched || u != s.Messages.Unknown.Count {
			t.Errorf("%s: explained %d known %d unknown; the summary has %d matched %d unknown", filepath.Base(path), k, u, s.Messages.Matched, s.Messages.Unknown.Count)
		}
		known += k
		unknown += u
	}
	t.Logf("%d NCCL lines tied to their source line, %d unknown", known, unknown)
	if known == 0 {
		t.Fatal("no line explained")
	}
}

// TestExplainNumbers checks what the numbers are said to mean. Expected
// names come from the catalog's tables: ibvcore.h (status 12 =
// IBV_WC_RETRY_EXC_ERR), nccl.h.in (2 = ncclSystemError) and the PATH_*
// defines (7 = SYS in 2.19, PXN in 2.30).
func TestExplainNumbers(t *testing.T) {
	cases := []struct {
		line, version string
		want          []string
	}{
		{"h:1:2 [0] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<1> with error 12, opcode 0, len 0, vendor err 129 (Send)", "",
			[]string{"IBV_WC_RETRY_EXC_ERR", "NCCL_IB_GID_INDEX", "0x81", "net_ib.cc#L"}},
		{"h:1:2 [0] NCCL INFO GPU Direct RDMA Disabled for GPU 18000 / HCA 0 (distance 7 > 4)", "2.19.3",
			[]string{"SYS in NCCL 2.19.3", "PXB in NCCL 2.19.3", "paths.cc#L"}},
		{"h:1:2 [3] NCCL INFO transport/shm.cc:114 -> 2", "", []string{"ncclSystemError", "checks.h#L"}},
		{"h:1:2 [0] init.cc:1043 NCCL WARN Mismatched NCCL version detected : rank 8 version 22105 rank 0 version 23007", "",
			[]string{"NCCL 2.21.5", "NCCL 2.30.7", "blob/v2.30.7-1/src/init.cc#L1043"}},
		{"  \x1b[31mhost:1:2 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\x1b[0m", "", []string{"src/init.cc#L"}},
		// The same WARN without its prefix, after a Python exception's
		// name or alone, is init.cc's WARN, not a version banner.
		{"RuntimeError: Mismatched NCCL version detected : rank 1 version 22705 rank 0 version 22703", "",
			[]string{"NCCL 2.27.5", "NCCL 2.27.3", "blob/v2.30.7-1/src/init.cc#L1043", "(WARN"}},
		{"Mismatched NCCL version detected : rank 1 version 22705 rank 0 version 22703", "",
			[]string{"NCCL 2.27.3", "blob/v2.30.7-1/src/init.cc#L1043"}},
	}
	for _, c := range cases {
		x := ExplainLine(c.line, c.version)
		var b strings.Builder
		if err := WriteExplanation(&b, x); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%q: output lacks %q:\n%s", c.line, w, out)
			}
		}
		if strings.ContainsAny(out, "\x1b\x07") {
			t.Errorf("%q: control bytes in the output", c.line)
		}
	}
	if x := ExplainLine("P2P plugin IBext_v8", ""); x.Known {
		t.Errorf("a plugin's line was tied to %s:%d", x.File, x.Line)
	}
}
