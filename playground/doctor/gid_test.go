package doctor

import (
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
)

// GID tables in the two layouts users paste (show_gids, `ibv_devinfo -v`)
// and NCCL's own queue-pair line, read only where an RDMA connection
// failed. The rows follow the layouts of NVIDIA/nccl#1573 and #769; the
// queue-pair line is the one NVIDIA/nccl#1657 published (NCCL 2.21.5).
func TestGIDTables(t *testing.T) {
	const (
		showGids = "DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV\n" +
			"mlx5_0\t1\t4\tfe80:0000:0000:0000:a4ed:ccff:fe8b:1994\t\t\tv1\tnet1\n" +
			"mlx5_0\t1\t5\tfe80:0000:0000:0000:a4ed:ccff:fe8b:1994\t\t\tv2\tnet1\n" +
			"mlx5_0\t1\t6\t0000:0000:0000:0000:0000:ffff:0a98:000c\t10.152.0.12  \tv1\tnet1\n" +
			"mlx5_0\t1\t7\t0000:0000:0000:0000:0000:ffff:0a98:000c\t10.152.0.12  \tv2\tnet1\n"
		devinfo = "hca_id:\tmlx5_bond_0\n" +
			"\t\t\tGID[  0]:\t\tfe80:0000:0000:0000:0ac0:ebff:feda:1cfb, RoCE v1\n" +
			"\t\t\tGID[  1]:\t\tfe80::ac0:ebff:feda:1cfb, RoCE v2\n" +
			"\t\t\tGID[  2]:\t\t0000:0000:0000:0000:0000:ffff:c800:d106, RoCE v1\n" +
			"\t\t\tGID[  3]:\t\t::ffff:200.0.209.6, RoCE v2\n"
		noDevice  = "h1:1:2 [0] misc/ibvwrap.cc:206 NCCL WARN Call to ibv_modify_qp failed with error No such device errno 19\n"
		status12  = "h1:1:2 [6] transport/net_ib.cc:2244 NCCL WARN NET/IB: Got completion from peer 192.168.3.5<53908> with status=12 opcode=129 len=1048576 vendor err 129 (Recv) localGid ::ffff:192.168.6.3 remoteGids::ffff:192.168.6.5 hca mlx5_10\n"
		status5   = "h1:1:2 [6] transport/net_ib.cc:2244 NCCL WARN NET/IB: Got completion from peer 192.168.3.5<53908> with status=5 opcode=129 len=1048576 vendor err 249 (Recv) localGid ::ffff:192.168.6.3 remoteGids::ffff:192.168.6.5 hca mlx5_10\n"
		qpLinkLoc = "aigc-maas-instance-leader-0:1639:1915 [0] NCCL INFO NET/IB: NCCL Dev 0 IbDev 0 Port 1 qpn 1040 mtu 5 query_ece={supported=1, vendor_id=0x15b3, options=0x0, comp_mask=0x0} GID 0 (80FE/1A8A41FEFF21A75E) fifoRkey=0x15d3b2 fifoLkey=0x15d3b2\n"
		qpMapped  = "node2:14159:14172 [0] NCCL INFO NET/IB: NCCL Dev 0 IbDev 0 Port 1 qpn 58 mtu 5 query_ece={supported=1, vendor_id=0x15b3, options=0x0, comp_mask=0x0} GID 3 (0/A10B0A0AFFFF0000) fifoRkey=0x15d3b2 fifoLkey=0x15d3b2\n"
	)
	cases := []struct {
		name, log string
		fires     bool
		has, not  []string
	}{
		{"container table and No such device", showGids + noDevice, true,
			[]string{"starts at index 4", "link-local (fe80::) entries 4, 5", "entry is 7 (10.152.0.12)", "NCCL_IB_GID_INDEX=7"}, nil},
		{"ibv_devinfo and status 12", devinfo + status12, true,
			[]string{"GID table of mlx5_bond_0 the IPv4 RoCE v2 entry is 3", "entries 0, 1 do not", "NCCL_IB_GID_INDEX=3"}, []string{"starts at index"}},
		{"a prefixed paste", strings.ReplaceAll("[rank0]: "+strings.TrimSuffix(showGids, "\n"), "\n", "\n[rank0]: ") + "\n" + noDevice, true,
			[]string{"NCCL_IB_GID_INDEX=7"}, nil},
		{"a table and no failure", showGids, false, nil, nil},
		{"a table and a status 5 completion", devinfo + status5, false, nil, nil},
		{"NCCL's queue pair on a link-local GID", qpLinkLoc + noDevice, true,
			[]string{"used GID 0, a link-local entry"}, []string{"GID table of"}},
		{"NCCL's queue pair on an IPv4 GID", qpMapped + noDevice, false, nil, nil},
		{"two devices: the first is read", showGids + strings.ReplaceAll(strings.ReplaceAll(showGids, "mlx5_0", "mlx5_1"), "\t7\t", "\t9\t") + noDevice, true,
			[]string{"NCCL_IB_GID_INDEX=7 for mlx5_0", "check the other devices'"}, []string{"=9"}},
		{"NCCL cannot read a GID's RoCE version", "h:1:2 [0] transport/net_ib.cc:330 NCCL WARN NET/IB: read failed in ncclIbRoceGetVersionNum: Invalid argument\n", true,
			[]string{"(\"Invalid argument\")", "2.26 skips such entries"}, []string{"GID table of"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ds := Diagnose(parseString(t, c.log), ncclenv.Env{})
			d := find(ds, "roce-gid-index")
			if (d.ID != "") != c.fires {
				t.Fatalf("roce-gid-index fired = %v, want %v (diagnoses %v)", d.ID != "", c.fires, ids(ds))
			}
			for _, h := range c.has {
				if !strings.Contains(d.Explanation, h) {
					t.Errorf("explanation lacks %q: %q", h, d.Explanation)
				}
			}
			for _, h := range c.not {
				if strings.Contains(d.Explanation, h) {
					t.Errorf("explanation has %q: %q", h, d.Explanation)
				}
			}
		})
	}
}

// The watchdog's work line quoted without its head, on one line or with
// "ran for" on the next, and the reading of a one-element all-reduce as
// the first collective (PyTorch's barrier), or as a later barrier that one
// rank's solitary work outlasted (the timeout to raise). The first case is
// the excerpt of yiqiao-yin/deepspeed-course#17.
func TestWorkLineTimeouts(t *testing.T) {
	const barrierHint = "call torch.cuda.set_device(local_rank) before the barrier"
	const laterHint = "--ddp_timeout of Hugging Face's TrainingArguments"
	cases := []struct {
		name, log   string
		seq, numel  int64
		timeouts    int
		barrierText bool
		laterText   bool
	}{
		{"wrapped", "WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000)\n  ran for 721595 milliseconds before timing out\n", 1, 1, 1, true, false},
		{"one line", "WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 721595 milliseconds before timing out\n", 1, 1, 1, true, false},
		{"wrapped under torchrun tags", "[rank0]: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000)\n[rank1]:   ran for 721595 milliseconds before timing out\n", 1, 1, 1, true, false},
		{"a large first all-reduce", "WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=4096, NumelOut=4096, Timeout(ms)=600000) ran for 600013 milliseconds before timing out\n", 1, 4096, 1, false, false},
		{"a later one-element all-reduce", "WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600013 milliseconds before timing out\n", 5, 1, 1, false, true},
		{"a later large all-reduce", "WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=4096, NumelOut=4096, Timeout(ms)=600000) ran for 600013 milliseconds before timing out\n", 5, 4096, 1, false, false},
		{"a later one-element broadcast", "WorkNCCL(SeqNum=5, OpType=BROADCAST, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600013 milliseconds before timing out\n", 5, 1, 1, false, false},
		{"the work line alone", "WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000)\nsomething else\n", 0, 0, 0, false, false},
		{"the tail under another tag", "[rank0]: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000)\n(Worker pid=7) ran for 721595 milliseconds before timing out\n", 0, 0, 0, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := parseString(t, c.log)
			if len(s.Timeouts) != c.timeouts {
				t.Fatalf("timeouts = %+v, want %d", s.Timeouts, c.timeouts)
			}
			if c.timeouts > 0 && (s.Timeouts[0].SeqNum != c.seq || s.Timeouts[0].numelIn != c.numel || s.Timeouts[0].RanForMs <= 0) {
				t.Errorf("timeout = %+v", s.Timeouts[0])
			}
			d := find(Diagnose(s, ncclenv.Env{}), "collective-timeout")
			if got := strings.Contains(d.Explanation, barrierHint); got != c.barrierText {
				t.Errorf("barrier reading = %v, want %v: %q", got, c.barrierText, d.Explanation)
			}
			if got := strings.Contains(d.Explanation, laterHint); got != c.laterText {
				t.Errorf("later-barrier reading = %v, want %v: %q", got, c.laterText, d.Explanation)
			}
		})
	}
}
