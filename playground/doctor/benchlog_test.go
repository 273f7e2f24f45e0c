package doctor

import (
	"fmt"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
)

// benchHead is the start of an all_reduce_perf run on two PCIe boards, as
// nccl-tests prints it (the format of its src/common.cu).
const benchHead = `./build/all_reduce_perf -b 8 -e 128M -f 2 -g 2
# nThread 1 nGpus 2 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid   9822 on host device  0 [0000:2c:00] NVIDIA GeForce RTX 4090
#  Rank  1 Group  0 Pid   9822 on host device  1 [0000:2d:00] NVIDIA GeForce RTX 4090
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
`

// Two rows: busbw 0.00 at 8 B and 21.50 (in place) at 128 MiB, so the peak
// is 21.50 GB/s at 128 MiB.
const benchRows = `           8             2     float     sum      -1     8.49    0.00    0.00      0     8.37    0.00    0.00      0
   134217728      33554432     float     sum      -1   6300.0   21.30   21.30      0   6243.0   21.50   21.50      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 10.70
`

func TestNCCLTestsRun(t *testing.T) {
	s := parseString(t, benchHead+benchRows)
	r := s.NCCLTests
	if r == nil {
		t.Fatal("no nccl-tests run")
	}
	if len(r.Devices) != 2 || r.Devices[0] != "NVIDIA GeForce RTX 4090" || r.HeaderLine != 9 || r.Rows != 2 || !r.Finished ||
		r.MaxBytes != 134217728 || r.LastBytes != 134217728 || r.Collective != "allreduce" || r.NRanks != 2 ||
		r.PeakBusBwGBps != 21.5 || r.PeakBytes != 134217728 {
		t.Fatalf("run = %+v", r)
	}
	ds := Diagnose(s, ncclenv.Env{})
	d := find(ds, "nccl-tests-result")
	// The estimator link carries what the log says of the run (two GPUs on
	// one host, all_reduce_perf, the 128 MiB peak row); the preset is
	// chosen by ncclsim doctor (service.DoctorExpectation), not here.
	for _, want := range []string{"peak bus bandwidth 21.50 GB/s at 128 MiB", "estimator page (link below) opens with this run's collective", "`ncclsim compare SYSTEM --nccl-tests FILE`"} {
		if !strings.Contains(d.Explanation, want) {
			t.Errorf("result lacks %q: %s", want, d.Explanation)
		}
	}
	if r.EstimatorURL != "/playground/estimator/?coll=allreduce&bytes=134217728" || len(d.Links) == 0 || d.Links[0].URL != r.EstimatorURL ||
		r.GPUsPerNode != 2 || r.Nodes != 1 || r.Coll != "allreduce" || r.System != nil {
		t.Errorf("run %+v, links %v", r, d.Links)
	}
	// Sixteen H100 over two hosts: two nodes of eight, in the link too.
	var b strings.Builder
	b.WriteString("# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n# Using devices\n")
	for i := 0; i < 16; i++ {
		fmt.Fprintf(&b, "#  Rank %2d Group  0 Pid %d on node%d device %d [0x%02x] NVIDIA H100 80GB HBM3\n", i, 100+i, i/8, i%8, 0x18+i%8)
	}
	b.WriteString("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n")
	b.WriteString("  8589934592    2147483648     float     sum      -1    48000  178.96  335.55      0    47900  179.33  336.25      0\n")
	r2 := parseString(t, b.String()).NCCLTests
	if r2.Nodes != 2 || r2.GPUsPerNode != 8 || r2.Coll != "" || r2.EstimatorURL != "/playground/estimator/?nodes=2&bytes=8589934592" ||
		r2.EstimatorLink("h100-8x-ib") != "/playground/estimator/?preset=h100-8x-ib&nodes=2&bytes=8589934592" {
		t.Errorf("16 H100 on 2 hosts: %+v", r2)
	}
	if find(ds, "p2p-pcie-hang").ID != "" {
		t.Errorf("a finished run was called a hang")
	}
}

func TestP2PHang(t *testing.T) {
	tests := []struct {
		name, log string
		hang      bool
	}{
		{"header and no row", benchHead, true},
		{"stops mid-way", benchHead + strings.SplitN(benchRows, "\n", 2)[0] + "\n", true},
		{"finished", benchHead + benchRows, false},
		{"P2P disabled", "NCCL_P2P_DISABLE=1 x\nh:1:2 [0] NCCL INFO NCCL_P2P_DISABLE set by environment to 1\n" + benchHead, false},
		{"an error explains it", benchHead + "h:1:2 [0] enqueue.cc:1 NCCL WARN Cuda failure 'out of memory'\n", false},
		{"NVLink paths", "h:1:2 [0] NCCL INFO GPU/0 :GPU/1 (1/48.0/NVL) \n" + benchHead, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := parseString(t, tt.log)
			d := find(Diagnose(s, ncclenv.Env{}), "p2p-pcie-hang")
			if (d.ID != "") != tt.hang {
				t.Fatalf("hang = %v, want %v (%+v)", d.ID != "", tt.hang, s.NCCLTests)
			}
			if tt.hang && !strings.Contains(d.Explanation, "NCCL_P2P_DISABLE=1 as a test, not a fix") {
				t.Errorf("explanation: %s", d.Explanation)
			}
		})
	}
}

// TestNetCauses: each line that explains a socket fallback is named, in
// the catalog's wording of 2.30 and in older ones.
func TestNetCauses(t *testing.T) {
	tests := []struct {
		name, line, want string
	}{
		{"no libibverbs (2.18-2.29)", "h:1:2 [0] NCCL INFO Failed to open libibverbs.so[.1]", "libibverbs could not be loaded"},
		{"no libibverbs (2.30)", "h:1:2 [0] NCCL INFO Count not open libibverbs.so.1", "libibverbs could not be loaded"},
		{"device not opened", "h:1:2 [0] transport/net_ib/init.cc:334 NCCL WARN NET/IB : Unable to open device mlx5_0", "cannot be opened"},
		{"HCA filter", "h:1:2 [0] NCCL INFO NCCL_IB_HCA set to mlx5_9\nh:1:2 [0] NCCL INFO NET/IB : No device found.", "NCCL_IB_HCA selects"},
		{"IB disabled", "h:1:2 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 1.", "NCCL_IB_DISABLE=1"},
		{"nothing said", "h:1:2 [0] NCCL INFO NET/IB : No device found.", "no active InfiniBand/RoCE port"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := parseString(t, tt.line+"\nh:1:2 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\nh:1:2 [0] NCCL INFO Using network Socket\n")
			d := find(Diagnose(s, ncclenv.Env{}), "net-socket")
			if !strings.Contains(d.Explanation, tt.want) {
				t.Errorf("net-socket lacks %q: %s", tt.want, d.Explanation)
			}
		})
	}
}

// TestNCCLTestsThroughLaunchers: the same run relayed by Open MPI
// ("[1,0]<stdout>:") and torchrun ("[rank0]:") reads like the bare one.
func TestNCCLTestsThroughLaunchers(t *testing.T) {
	for _, tag := range []string{"[1,0]<stdout>:", "[rank0]:", "[0] "} {
		var b strings.Builder
		for _, l := range strings.Split(strings.TrimSuffix(benchHead+benchRows, "\n"), "\n") {
			b.WriteString(tag + l + "\n")
		}
		r := parseString(t, b.String()).NCCLTests
		if r == nil || r.Rows != 2 || len(r.Devices) != 2 || !r.Finished || r.PeakBusBwGBps != 21.5 {
			t.Errorf("%q: run = %+v", tag, r)
		}
	}
	for _, tt := range []struct{ in, want string }{
		{"[1,0]<stdout>:# nThread 1", "# nThread 1"},
		{"[rank3]:  8 2 float", "8 2 float"},
		{"[0] 8 2 float", "8 2 float"},
		{"[E602 11:17] x", "[E602 11:17] x"},
		{"# Using devices", "# Using devices"},
	} {
		if got := dropLauncherTag(tt.in); got != tt.want {
			t.Errorf("dropLauncherTag(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
