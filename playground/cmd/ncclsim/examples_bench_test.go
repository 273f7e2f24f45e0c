package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/topo/topotest"
)

// issue18Example is one of the inputs issue 18 names, with how it must end.
type issue18Example struct {
	name  string
	args  []string
	stdin string // file contents given on standard input ("-")
	code  int    // exit status the bounded answer has
}

// issue18Examples are the five examples of issue 18 as command lines, at
// the sizes the issue gives and at the input caps. Each ends with a clear
// message (status 1 or 2) or a bounded result (status 0).
func issue18Examples() []issue18Example {
	ddp := []string{"step", "--preset", "h100-sxm-8x", "--forward-ms", "50", "--backward-ms", "100",
		"--model", "ddp", "--layers", "1024", "--tensors-per-layer", "1024", "--bucket-cap-mb", "0.000001", "--params", "1e15"}
	flood := func(n int) string { return `<system version="1">` + strings.Repeat("x<!---->", n/8) + `</system>` }
	var env5k, env40k strings.Builder
	for i := range 40000 {
		fmt.Fprintf(&env40k, "NCCL_NOT_A_KNOB_%d=1\n", i)
		if i < 5000 {
			fmt.Fprintf(&env5k, "NCCL_NOT_A_KNOB_%d=1\n", i)
		}
	}
	// An NCCL log line in colour with a title-setting OSC sequence, as a
	// terminal recording holds it, repeated to the log cap of the page.
	esc := "\x1b]0;rank0\x07\x1b[32mnode1:1234:1234 [0] NCCL INFO\x1b[0m NCCL version 2.21.5+cuda12.4\r\n"
	escLog := strings.Repeat(esc, (8<<20)/len(esc))
	// Attack A1 of session 7: 52 MB of INFO and WARN lines, which the
	// doctor read whole in 10 s; --max-log-mb (8) now bounds it.
	mixed := "node1:1234:1234 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM\n" +
		"node1:1234:1234 [0] transport/net_ib.cc:1004 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<5432> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid ::ffff:10.0.0.1 remoteGids::ffff:10.0.0.2 hca mlx5_0\n"
	bigLog := strings.Repeat(mixed, 52_000_000/len(mixed))
	binary := make([]byte, 5<<20)
	for i := range binary {
		binary[i] = byte(i*2654435761>>13) | 0x80
	}
	return []issue18Example{
		{name: "1-ddp-million-buckets", args: ddp, code: 2},
		{name: "1-ddp-million-buckets-json", args: append(ddp[:len(ddp):len(ddp)], "--json"), code: 2},
		{name: "2-comment-flood-2MiB", args: []string{"topo", "--xml", "-"}, stdin: flood(2 << 20), code: 1},
		{name: "2-comment-flood-15MiB", args: []string{"topo", "--xml", "-"}, stdin: flood(15 << 20), code: 1},
		{name: "3-env-5000-unknown", args: []string{"doctor", "--env", "-"}, stdin: env5k.String()},
		{name: "3-env-40000-unknown", args: []string{"doctor", "--env", "-"}, stdin: env40k.String()},
		{name: "4-escapes-log-8MiB", args: []string{"doctor", "--log", "-"}, stdin: escLog},
		{name: "5-topo-512-gpus", args: []string{"topo", "--xml", "-"}, stdin: topotest.Host{Sockets: 8, Switches: 8, GPUs: 8}.XML(), code: 1},
		// The largest host the model searches: NCCL_MAX_LOCAL_RANKS GPUs.
		{name: "5-topo-72-gpus", args: []string{"topo", "--xml", "-"}, stdin: topotest.Host{Sockets: 2, Switches: 4, GPUs: 9}.XML()},
		// The most NICs a host may have (MAX_IB_VDEVS is 256) on that host:
		// the GPU-NIC path work was 3.4 GB of garbage and 3.7 s of CPU.
		{name: "5-topo-72-gpus-252-nics", args: []string{"topo", "--xml", "-"}, stdin: topotest.WithNICs(topotest.Host{Sockets: 2, Switches: 4, GPUs: 9}.XML(), 252)},
		// The same host without P2P on two nodes: the inter-node search
		// scores every candidate against a NIC at each step.
		{name: "5-topo-72-gpus-252-nics-no-p2p-2-nodes", args: []string{"topo", "--p2p", "none", "--nodes", "2", "--xml", "-"}, stdin: topotest.WithNICs(topotest.Host{Sockets: 2, Switches: 4, GPUs: 9}.XML(), 252)},
		{name: "5-binary-5MB-log", args: []string{"doctor", "--log", "-"}, stdin: string(binary)},
		{name: "a1-mixed-log-52MB", args: []string{"doctor", "--log", "-"}, stdin: bigLog},
	}
}

// BenchmarkIssue18Examples builds ncclsim, runs each example of issue 18 as
// its own process, as a user runs it, and reports its wall time (ns/op),
// its peak resident memory (peak-MB, from GNU time's %M: the rusage Go's
// own os/exec returns would count this benchmark's memory too, because Go
// starts children with vfork and Linux carries the parent's high-water mark
// across the exec) and its output (out-bytes). The issue
// asks for under 2 s and 200 MB each on the project's 2-core machine;
// `make bench` prints this as one table. It fails only when an example
// ends differently from its bounded answer, never on a time.
func BenchmarkIssue18Examples(b *testing.B) {
	const gnuTime = "/usr/bin/time" // Debian's time package; make bench installs it
	if _, err := os.Stat(gnuTime); err != nil {
		b.Fatalf("%v: install Debian's time package (make sysdeps)", err)
	}
	dir := b.TempDir()
	rss := filepath.Join(dir, "maxrss")
	self := filepath.Join(dir, "ncclsim")
	if out, err := exec.Command("go", "build", "-o", self, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	for _, ex := range issue18Examples() {
		args := ex.args
		if ex.stdin != "" {
			// A file rather than a pipe, as a user's saved log or dump is.
			f := filepath.Join(dir, ex.name)
			if err := os.WriteFile(f, []byte(ex.stdin), 0o644); err != nil {
				b.Fatal(err)
			}
			args = append(args[:len(args)-1:len(args)-1], f)
		}
		b.Run(ex.name, func(b *testing.B) {
			var peak int64
			var out int
			for b.Loop() {
				cmd := exec.Command(gnuTime, append([]string{"-f", "%M", "-o", rss, self}, args...)...)
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				err := cmd.Run()
				code := 0
				if ee, ok := err.(*exec.ExitError); ok {
					code = ee.ExitCode()
				} else if err != nil {
					b.Fatal(err)
				}
				if code != ex.code {
					b.Fatalf("exit %d, want %d; stderr %.300q", code, ex.code, stderr.String())
				}
				kib, err := readKiB(rss)
				if err != nil {
					b.Fatal(err)
				}
				peak = max(peak, kib)
				out = stdout.Len() + stderr.Len()
			}
			b.ReportMetric(float64(peak)/1024, "peak-MB")
			b.ReportMetric(float64(out), "out-bytes")
		})
	}
}

// readKiB reads the number GNU time's "%M" format wrote to file: the peak
// resident set size in KiB. A child killed by a signal makes time write a
// "Command terminated" line first; the number is on the last line.
func readKiB(file string) (int64, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, fmt.Errorf("peak memory: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	n, err := strconv.ParseInt(lines[len(lines)-1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("peak memory from %s: %w", file, err)
	}
	return n, nil
}
