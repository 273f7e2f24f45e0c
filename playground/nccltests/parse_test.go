package nccltests

import (
	"errors"
	"strings"
	"testing"
)

// The fixtures below are laid out as the nccl-tests version named in each
// case prints (the header strings and field widths of its src/common.cu or
// src/util.cu and src/*.cu print_header); the numbers are made up but
// consistent (busbw = algbw × the bus factor of the rank count).

const multi = `# nccl-tests version 2.17.6 nccl-headers=22705 nccl-library=22705
# Collective test starting: all_reduce_perf
# nThread 1 nGpus 1 minBytes 1048576 maxBytes 4194304 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid   4242 on     node01 device  0 [0000:2c:00] NVIDIA L40S
#  Rank  1 Group  0 Pid   4243 on     node01 device  1 [0000:41:00] NVIDIA L40S
#  Rank  2 Group  0 Pid   4244 on     node01 device  2 [0000:a1:00] NVIDIA L40S
#  Rank  3 Group  0 Pid   4245 on     node01 device  3 [0000:c1:00] NVIDIA L40S
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
     1048576        262144     float     sum      -1    104.9   10.00   15.00      0    104.9   10.00   15.00      0
     2097152        524288     float     sum      -1    209.7   10.00   15.00      0    209.7   10.00   15.00      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 15
#
# Collective test concluded: all_reduce_perf
# nccl-tests version 2.17.6 nccl-headers=22705 nccl-library=22705
# Collective test starting: all_gather_perf
# nThread 1 nGpus 1 minBytes 1048576 maxBytes 4194304 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
     1048576         65536     float    none      -1    52.43   20.00   15.00      0    52.43   20.00   15.00    N/A
# Avg bus bandwidth    : 15
`

func TestParseMulti(t *testing.T) {
	f, err := Parse(strings.NewReader(multi), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Runs) != 2 {
		t.Fatalf("%d runs", len(f.Runs))
	}
	ar, ag := f.Runs[0], f.Runs[1]
	if ar.Collective != AllReduce || ar.CollectiveFrom != "header" || ar.NRanks != 4 || ar.NRanksFrom != "rank lines" {
		t.Errorf("allreduce run: %s from %s, %d ranks from %s", ar.Collective, ar.CollectiveFrom, ar.NRanks, ar.NRanksFrom)
	}
	if len(ar.Devices) != 4 || ar.Devices[0] != "NVIDIA L40S" || ar.NCCLVersion != "2.27.5" {
		t.Errorf("devices %q, version %q", ar.Devices, ar.NCCLVersion)
	}
	// The all_gather run printed no Rank lines: its rank count is
	// size / (count × 4 bytes) = 1048576 / 262144 = 4.
	if ag.Collective != AllGather || ag.NRanks != 4 || ag.NRanksFrom != "size/count" {
		t.Errorf("allgather run: %s, %d ranks from %s", ag.Collective, ag.NRanks, ag.NRanksFrom)
	}
	if len(ar.Rows) != 2 || ar.Rows[1].OutOfPlace.BusBwGBps != 15 || ar.Rows[1].Line != 15 || ag.Rows[0].InPlace.Wrong != "N/A" {
		t.Errorf("rows %+v %+v", ar.Rows, ag.Rows)
	}
	if ar.AvgBusBwGBps == nil || *ar.AvgBusBwGBps != 15 {
		t.Errorf("avg %v", ar.AvgBusBwGBps)
	}
}

func TestParseVariants(t *testing.T) {
	cases := []struct {
		name   string
		in     string
		opts   Options
		coll   Collective
		nranks int
		from   string
		bytes  uint64
		bus    float64
		timeUs float64
		env    map[string]string
	}{
		{name: "2.0-2.12: error column, no root (busbw/algbw = 1.75: 8 ranks)", in: `
#                                                       out-of-place                       in-place
#       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw  error
#        (B)    (elements)                       (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
    33554432       8388608     float     sum    335.5  100.00  175.00  5e-07    335.6   99.99  174.98  5e-07
`, coll: AllReduce, nranks: 8, from: "busbw/algbw", bytes: 33554432, bus: 175, timeUs: 335.5},
		{name: "1.x: bytes N type op, time in ms", in: `
# NCCL Tests compiled with NCCL 2.1
# Using devices
#   Rank  0 on  host device  0 [0x1a] Tesla V100
#   Rank  1 on  host device  1 [0x1b] Tesla V100
#                                  out-of-place                    in-place
#      bytes            N    type      op     time  algbw  busbw      res     time  algbw  busbw      res
    16777216      4194304   float     sum    1.678  10.00  10.00    0e+00    1.679  9.99  9.99    0e+00
`, coll: AllReduce, nranks: 2, from: "rank lines", bytes: 16777216, bus: 10, timeUs: 1678},
		{name: "2.10 broadcast: root without redop", in: `
./build/broadcast_perf -b 64M -e 64M -g 4
#                                                     out-of-place                       in-place
#       size         count      type    root     time   algbw   busbw  error     time   algbw   busbw  error
#        (B)    (elements)                       (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
    67108864      16777216     float       0   3355.4   20.00   20.00  0e+00   3355.4   20.00   20.00  0e+00
`, opts: Options{NRanks: 4}, coll: Broadcast, nranks: 4, from: "flag", bytes: 67108864, bus: 20, timeUs: 3355.4},
		{name: "Open MPI tag and timestamp, srun label, per-run NCCL_ALGO on the command line", in: `
Tue Mar  4 10:00:00 2025[1,0]<stdout>:# Collective test starting: all_reduce_perf
Tue Mar  4 10:00:00 2025[1,0]<stdout>:# Using devices
0: node1:123:123 [0] NCCL INFO NCCL_PROTO set by environment to Simple
Tue Mar  4 10:00:00 2025[1,0]<stdout>:#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
Tue Mar  4 10:00:01 2025[1,0]<stdout>:   268435456      67108864     float     sum      -1   5592.4   48.00   90.00      0   5592.4   48.00   90.00      0
`, opts: Options{}, coll: AllReduce, nranks: 16, from: "busbw/algbw", bytes: 268435456, bus: 90, timeUs: 5592.4, env: map[string]string{"NCCL_PROTO": "Simple"}},
		{name: "headerless rows, PRRTE tag", in: `
[prterun-host-1234@1,0]<stdout>:   4194304       1048576     float     sum      -1    419.4   10.00   15.00      0    419.4   10.00   15.00      0
[prterun-host-1234@1,0]<stdout>:   8388608       2097152     float     sum      -1    838.9   10.00   15.00      0    838.9   10.00   15.00      0
`, coll: AllReduce, nranks: 4, from: "busbw/algbw", bytes: 4194304, bus: 15, timeUs: 419.4},
		{name: "per-iteration and timestamp columns", in: `
mpirun -np 2 -x NCCL_ALGO=Ring ./all_reduce_perf -b 1G -e 1G -R 1
#       size         count      type   redop    root     time   algbw   busbw #wrong    i_min    i_max    i_p99    i_cv%     time   algbw   busbw #wrong    i_min    i_max    i_p99    i_cv%           timestamp
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)     (us)     (us)      (%)     (us)  (GB/s)  (GB/s)             (us)     (us)     (us)      (%)   %Y-%m-%d %H:%M:%S
  1073741824     268435456     float     sum      -1    21475   50.00   50.00      0    21400    21550    21540     0.20    21475   50.00   50.00      0    21400    21550    21540     0.20 2025-03-04 10:00:00
`, opts: Options{NRanks: 2}, coll: AllReduce, nranks: 2, from: "flag", bytes: 1073741824, bus: 50, timeUs: 21475, env: map[string]string{"NCCL_ALGO": "Ring"}},
		{name: "time printed in exponent form, flag overrides the collective", in: `
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
 17179869184    4294967296     float     sum      -1  1.2e+05  143.17  143.17      0  1.2e+05  143.17  143.17      0
`, opts: Options{Collective: Reduce, NRanks: 8}, coll: Reduce, nranks: 8, from: "flag", bytes: 17179869184, bus: 143.17, timeUs: 1.2e5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := Parse(strings.NewReader(c.in), c.opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Runs) != 1 {
				t.Fatalf("%d runs", len(f.Runs))
			}
			r := f.Runs[0]
			if r.Collective != c.coll || r.NRanks != c.nranks || r.NRanksFrom != c.from {
				t.Errorf("%s on %d ranks (from %s), want %s on %d (from %s); warnings %v", r.Collective, r.NRanks, r.NRanksFrom, c.coll, c.nranks, c.from, f.Warnings)
			}
			row := r.Rows[0]
			if row.Bytes != c.bytes || row.OutOfPlace.BusBwGBps != c.bus || row.OutOfPlace.TimeUs != c.timeUs || !row.InPlace.Present {
				t.Errorf("row %+v", row)
			}
			for k, v := range c.env {
				if r.Env[k] != v {
					t.Errorf("env %s = %q, want %q (env %v)", k, r.Env[k], v, r.Env)
				}
			}
		})
	}
}

// TestEnvPerRun: an assignment on a line that names the benchmark holds
// for that run only; one on its own line (export) holds from there on.
func TestEnvPerRun(t *testing.T) {
	table := `#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
    67108864      16777216     float     sum      -1   6710.9   10.00   15.00      0   6710.9   10.00   15.00      0
`
	in := "export NCCL_PROTO=Simple\n$ NCCL_ALGO=Ring ./build/all_reduce_perf -g 4\n" + table + "$ NCCL_ALGO=Tree ./build/all_reduce_perf -g 4\n" + table + "$ ./build/all_reduce_perf -g 4\n" + table
	f, err := Parse(strings.NewReader(in), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Ring", "Tree", ""}
	if len(f.Runs) != 3 {
		t.Fatalf("%d runs", len(f.Runs))
	}
	for i, r := range f.Runs {
		if r.Env["NCCL_ALGO"] != want[i] || r.Env["NCCL_PROTO"] != "Simple" || r.CollectiveFrom != "command" {
			t.Errorf("run %d: env %v, collective from %s", i, r.Env, r.CollectiveFrom)
		}
	}
}

func TestParseErrors(t *testing.T) {
	header := "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
	cases := []struct {
		name string
		in   string
		opts Options
		want string
	}{
		{"empty", "", Options{}, "no nccl-tests results table found"},
		{"prose", "hello\nthis is not a benchmark\n", Options{}, "no nccl-tests results table found"},
		{"binary", "\x00\x01\x02\xff\xfe", Options{}, "no nccl-tests results table found"},
		{"only bad row", header + "  1048576  262144  float  sum  -1  abc  1.0  1.5  0  1.0  1.0  1.5  0\n", Options{NRanks: 4}, "line 2: no nccl-tests results table found: row skipped: time \"abc\" is not a number"},
		{"short row", "x\n" + header + "  1048576  262144  float  sum  -1  104.9\n", Options{NRanks: 4}, "line 3: no nccl-tests results table found: row skipped: 6 fields where the table has 13"},
		// A 300-digit size overflows uint64; the message repeats the first
		// maxQuoted (40) bytes of the field and says how long it was.
		{"huge field", header + "  " + strings.Repeat("9", 300) + "  262144  float  sum  -1  104.9  10.00  15.00  0  104.9  10.00  15.00  0\n", Options{NRanks: 4}, "size \"" + strings.Repeat("9", 40) + "\"… (300 bytes) is not a whole number"},
		{"negative", header + "  1048576  262144  float  sum  -1  104.9  -10.00  15.00  0  104.9  10.00  15.00  0\n", Options{NRanks: 4}, "line 2:"},
		{"collective unknown", "#  size  count  type  time  algbw  busbw  error  time  algbw  busbw  error\n  1048576  1048576  int8  100.0  10.00  10.00  0  100.0  10.00  10.00  0\n", Options{}, "line 1: which benchmark printed this table"},
		{"ranks unknown", "./broadcast_perf\n" + "#  size  count  type  redop  root  time  algbw  busbw  #wrong  time  algbw  busbw  #wrong\n  1048576  262144  float  none  0  100.0  10.49  10.49  0  100.0  10.49  10.49  0\n", Options{}, "line 2: the file lists no complete set of Rank lines"},
		{"ranks flag range", header, Options{NRanks: -1}, "rank count -1"},
		{"too big", strings.Repeat("x", MaxInputBytes+1), Options{}, "input larger than"},
		{"too many rows", header + strings.Repeat("  1048576  262144  float  sum  -1  104.9  10.00  15.00  0  104.9  10.00  15.00  0\n", MaxRows+1), Options{NRanks: 4}, "more than 8192 table rows"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(c.in), c.opts)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
	_, err := Parse(strings.NewReader("nothing"), Options{})
	if !errors.Is(err, ErrNoTable) {
		t.Errorf("%v does not wrap ErrNoTable", err)
	}
}

// TestSkippedRowWarns: a malformed row among good ones is skipped and
// named by its line.
func TestSkippedRowWarns(t *testing.T) {
	in := `#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
     1048576        262144     float     sum      -1    104.9   10.00   15.00      0    104.9   10.00   15.00      0
     2097152        524288     floa[... truncated]
`
	f, err := Parse(strings.NewReader(in), Options{NRanks: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Runs[0].Rows) != 1 || len(f.Warnings) != 1 || f.Warnings[0].Line != 3 {
		t.Fatalf("rows %d, warnings %v", len(f.Runs[0].Rows), f.Warnings)
	}
}

func TestStripLauncher(t *testing.T) {
	cases := map[string]string{
		"[1,0]<stdout>:#  Rank  0":                             "#  Rank  0",
		"[1,12]<stderr>:   8   2 float":                        "8   2 float",
		"Mon Dec  1 19:40:32 2025[1,0]<stdout>:x":              "x",
		"Mon Dec 11 19:40:32 2025<stdout>:x":                   "x",
		"[2025-03-04 10:00:00]<stdout>:x":                      "x",
		"[job,3]:x":                                            "x",
		"[ns,3][host:77]<stdout>:x":                            "x",
		"12: x":                                                "x",
		"[root@host ~]# ./all_reduce_perf":                     "[root@host ~]# ./all_reduce_perf",
		"host:1:2 [0] NCCL INFO x":                             "host:1:2 [0] NCCL INFO x",
		"  \t indented":                                        "indented",
		"1048576  262144  float  sum  -1  104.9  10.00  15.00": "1048576  262144  float  sum  -1  104.9  10.00  15.00",
		// Open MPI tags each write; nccl-tests writes a row in three parts
		// (KeitaW/p5-nccl-test-2024-07-19, nccl-test-output-v2.22.3-1.log).
		"[1,0]<stdout>:   8   2   float   sum   -1[1,0]<stdout>:    85.70    0.00    0.00      0[1,0]<stdout>:    74.97    0.00    0.00      0": "8   2   float   sum   -1     85.70    0.00    0.00      0     74.97    0.00    0.00      0",
		// Only the tag found at the start is removed elsewhere on the line.
		"[1,0]<stdout>:x [1,1]<stdout>: y": "x [1,1]<stdout>: y",
		"[job,3]:x [job,3]:y":              "x [job,3]:y",
	}
	for in, want := range cases {
		if got := stripLauncher(in); got != want {
			t.Errorf("stripLauncher(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseCollective(t *testing.T) {
	for in, want := range map[string]Collective{"all_reduce_perf": AllReduce, "AllGather": AllGather, "reduce-scatter": ReduceScatter, "alltoall": AlltoAll, "sendrecv_perf": SendRecv} {
		if got, err := ParseCollective(in); err != nil || got != want {
			t.Errorf("ParseCollective(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseCollective("allsum"); err == nil {
		t.Error("allsum accepted")
	}
}
