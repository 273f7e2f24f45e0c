package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCapLog: a log up to the cap is read whole; over it, its first and
// last halves, each cut at a line end, are read and the rest counted as
// skipped. Lines here are "lNNNNNNNN\n", 10 bytes each.
func TestCapLog(t *testing.T) {
	log := func(n int) []byte {
		var b bytes.Buffer
		for i := range n {
			fmt.Fprintf(&b, "l%08d\n", i)
		}
		return b.Bytes()
	}
	for _, c := range []struct {
		name       string
		lines      int
		limit      int64
		whole      bool
		first, end string // first and last line read
	}{
		{"under the cap", 50, 1000, true, "l00000000", "l00000049"},
		{"at the cap", 100, 1000, true, "l00000000", "l00000099"},
		{"no cap", 100_000, 0, true, "l00000000", "l00099999"},
		// 1,000 lines, cap 1,000 bytes: the head is the first 500 bytes (50
		// whole lines), the tail the last 500 (50 whole lines).
		{"over the cap", 1000, 1000, false, "l00000000", "l00000999"},
		// cap 999: 499 bytes each, so 49 whole lines each.
		{"over an odd cap", 1000, 999, false, "l00000000", "l00000999"},
		{"far over the cap", 200_000, 1000, false, "l00000000", "l00199999"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := log(c.lines)
			got, cut, err := capLog(bytes.NewReader(in), c.limit)
			if err != nil {
				t.Fatal(err)
			}
			if c.whole != (cut == nil) || c.whole && !bytes.Equal(got, in) {
				t.Fatalf("cut %v, read %d of %d bytes", cut, len(got), len(in))
			}
			lines := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
			if lines[0] != c.first || lines[len(lines)-1] != c.end {
				t.Errorf("first %q last %q, want %q and %q", lines[0], lines[len(lines)-1], c.first, c.end)
			}
			for _, l := range lines {
				if len(l) != 9 || l[0] != 'l' {
					t.Fatalf("a line was cut: %q", l)
				}
			}
			if cut != nil {
				if int64(len(got)) > c.limit || cut.Total != int64(len(in)) || cut.Skipped != cut.Total-int64(len(got)) {
					t.Errorf("read %d bytes (cap %d), cut %+v of %d", len(got), c.limit, cut, len(in))
				}
				if want := 2 * int(c.limit/2/10); len(lines) != want {
					t.Errorf("%d lines read, want %d (two halves of whole lines)", len(lines), want)
				}
			}
		})
	}
}

// TestDoctorLogCap: a log over --max-log-mb still gets the diagnosis of
// the failure at its end (the /dev/shm WARN NCCL prints, shm.cc's
// wording), says on stderr what it skipped, and --max-log-mb 0 reads all.
func TestDoctorLogCap(t *testing.T) {
	var b strings.Builder
	b.WriteString("host:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n")
	for b.Len() < 3<<20 {
		b.WriteString("host:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM\n")
	}
	b.WriteString("host:1:1 [0] include/shm.h:28 NCCL WARN Error while creating shared memory segment /dev/shm/nccl-abc (size 9637888)\n")
	path := filepath.Join(t.TempDir(), "big.log")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := runCmd(t, runDoctor, "--log", path, "--max-log-mb", "1", "--json")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, "bytes between were skipped (--max-log-mb 0 reads all of it)") {
		t.Errorf("stderr %q does not say what was skipped", stderr)
	}
	if !strings.Contains(out, `"dev-shm-full"`) || !strings.Contains(out, `"2.21.5`) {
		t.Errorf("the head's version or the tail's /dev/shm diagnosis is missing: %.400s", out)
	}
	if _, stderr, err := runCmd(t, runDoctor, "--log", path, "--max-log-mb", "0"); err != nil || stderr != "" {
		t.Errorf("--max-log-mb 0: err %v, stderr %q", err, stderr)
	}
	for _, bad := range []string{"-1", "NaN", "1e30"} {
		if _, _, err := runCmd(t, runDoctor, "--log", path, "--max-log-mb", bad); !isUsage(err) {
			t.Errorf("--max-log-mb %s: %v, want a usage error", bad, err)
		}
	}
}
