package doctor

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
)

// netFormCase is the key line of a published log of the network family and
// what the doctor must say about it in every form users paste it in.
type netFormCase struct {
	log   string   // data/logs file the lines come from
	lines []string // the key lines, as in that file
	// msg is the text NCCL keeps as its last error (the WARN message
	// without NCCL's prefix), which PyTorch re-raises after "Last error:";
	// "" when the key line is INFO or the message alone names nothing.
	msg    string
	id     string // the rule that must fire
	needle string // a fix or variable the explanation must name
}

var netFormCases = []netFormCase{
	{log: "nvidia-nccl-426-ib-error-12-gid.log",
		lines: []string{"-worker-1:946:988 [0] transport/net_ib.cc:839 NCCL WARN NET/IB : Got completion with error 12, opcode 1, len 0, vendor err 129"},
		msg:   "NET/IB : Got completion with error 12, opcode 1, len 0, vendor err 129", id: "ib-completion-error", needle: "NCCL_IB_GID_INDEX"},
	{log: "nvidia-nccl-1524-ib-mtu-mismatch.log",
		lines: []string{"ubuntu20-server-2:94639:94652 [0] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer 192.168.1.2<57888> with status=5 opcode=1 len=0 vendor err 249 (Recv) localGid fe80::e61d:2dff:fef2:9c94 remoteGidsfe80::e61d:2dff:fef2:9fa0"},
		msg:   "NET/IB : Got completion from peer 192.168.1.2<57888> with status=5 opcode=1 len=0 vendor err 249 (Recv) localGid fe80::e61d:2dff:fef2:9c94 remoteGidsfe80::e61d:2dff:fef2:9fa0",
		id:    "ib-completion-error", needle: "first, different error"},
	{log: "nvidia-nccl-928-ib-error-4-acs.log",
		lines: []string{"H100-2:19989:20082 [1] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer fe80::966d:ae03:8b:df78%ib0<53249> with error 4, opcode 32564, len 32564, vendor err 81 (Send)"},
		msg:   "NET/IB : Got completion from peer fe80::966d:ae03:8b:df78%ib0<53249> with error 4, opcode 32564, len 32564, vendor err 81 (Send)",
		id:    "ib-completion-error", needle: "ACS"},
	{log: "nvidia-nccl-1170-completion-error-12.log",
		lines: []string{"Distributed model training with nccl error：NCCL WARN NET/IB Got completion error 12"},
		msg:   "NET/IB Got completion error 12", id: "ib-completion-error", needle: "NCCL_IB_GID_INDEX"},
	{log: "nvidia-nccl-1524-ib-mtu-mismatch.log",
		lines: []string{"ubuntu20-server-2:94639:94647 [0] transport/net_ib.cc:100 NCCL WARN NET/IB : mlx5_0:1 Got async event : local access violation work queue error"},
		msg:   "NET/IB : mlx5_0:1 Got async event : local access violation work queue error", id: "ib-async-event", needle: "MTU"},
	{log: "horovod-horovod-666-socket-ifname-docker0.log",
		lines: []string{`"WARN Connection closed by remote peer " or "NCCL WARN Call to connect timeout : Connection refused" and freeze`},
		msg:   "Call to connect timeout : Connection refused", id: "socket-connect", needle: "NCCL_SOCKET_IFNAME"},
	{log: "nvidia-nccl-tests-14-container-no-interface.log",
		lines: []string{"e66aa18dc444:3171:3171 [0] include/socket.h:311 WARN Socket creation failed : Address family not supported by protocol"},
		msg:   "Socket creation failed : Address family not supported by protocol", id: "socket-address", needle: "--net=host"},
	{log: "nvidia-nccl-1837-socket-ifname-missing.log",
		lines: []string{"[trainer0|0]:ncclSocketInit: connecting to address  with family 59936 is neither AF_INET(2) nor AF_INET6(10)"},
		msg:   "ncclSocketInit: connecting to address  with family 59936 is neither AF_INET(2) nor AF_INET6(10)", id: "socket-address", needle: "NCCL_SOCKET_IFNAME"},
	{log: "nvidia-nccl-925-macvlan-modify-qp.log",
		lines: []string{"ibvwrap.c:160 NCCL WARN Call to ibv_modify_qp failed with error No such device"},
		msg:   "Call to ibv_modify_qp failed with error No such device", id: "ib-qp-setup", needle: "NCCL_IB_HCA"},
	{log: "nvidia-nccl-tests-206-memlock.log",
		lines: []string{"misc/ibvwrap.cc:278 NCCL WARN Call to ibv_reg_mr_iova2 failed with error Cannot allocate memory"},
		msg:   "Call to ibv_reg_mr_iova2 failed with error Cannot allocate memory", id: "ib-register-memory", needle: "ulimit -l"},
	{log: "nvidia-nccl-1151-gdr-distance.log",
		lines: []string{"NCCL INFO GPU Direct RDMA Disabled for GPU ca000 / HCA 0 (distance 7 > 4)"},
		id:    "gdr-disabled-distance", needle: "NCCL_NET_GDR_LEVEL"},
	{log: "pytorch-pytorch-177472-nvls-fabric-manager.log",
		lines: []string{"Failed to bind NVLink SHARP (NVLS) Multicast memory of size 2097152 : CUDA error 401 'the operation cannot be performed in the present state'. "},
		msg:   "Failed to bind NVLink SHARP (NVLS) Multicast memory of size 2097152 : CUDA error 401 'the operation cannot be performed in the present state'. ",
		id:    "nvls-failure", needle: "NCCL_NVLS_ENABLE=0"},
	{log: "pie-project-pie-500-nvls-invalid-argument.log",
		lines: []string{"transport/nvls.cc:251 NCCL WARN Cuda failure 1 'invalid argument'"},
		id:    "nvls-failure", needle: "/dev/nvidia-caps"},
	{log: "aws-aws-ofi-nccl-1020-efa-devices-container.log",
		lines: []string{"[2025-10-16 22:16:08] ip-172-31-3-90:1929:1937 [0] nccl_net_ofi_rdma_init:7978 NCCL WARN NET/OFI OFI fi_getinfo() call failed: No data available"},
		msg:   "NET/OFI OFI fi_getinfo() call failed: No data available", id: "net-plugin-failed", needle: "/dev/infiniband"},
	{log: "aws-aws-ofi-nccl-584-efa-register-memory.log",
		lines: []string{"register_mr_buffers:544 NCCL WARN NET/OFI Unable to register memory (type = 2) for device 0. RC: -22, Error: Invalid argument"},
		msg:   "NET/OFI Unable to register memory (type = 2) for device 0. RC: -22, Error: Invalid argument", id: "net-plugin-failed", needle: "FI_EFA_SET_CUDA_SYNC_MEMOPS=0"},
	{log: "getainode-ainode-87-no-infiniband-devices.log",
		lines: []string{"First real mp launch on 0.5.9 (DeepSeek V4 Flash, Spark-2 head + Spark-3 worker): both ranks met at the rendezvous, then died in `ncclCommInitRank` with `NCCL error: invalid usage` after `NCCL WARN Failed to initialize any NET plugin`. `docker inspect` on both engine containers showed `Devices: []`."},
		msg:   "Failed to initialize any NET plugin", id: "net-init-failed", needle: "/dev/infiniband"},
	{log: "getainode-ainode-89-ib-hca-other-ports.log",
		lines: []string{"Second real mp launch (0.5.10, DeepSeek V4 Flash on Spark-2 + Spark-3): the IB plugin initialised, then both ranks died in `ncclCommInitRank` with `NCCL error: unhandled system error` and `ibv_modify_qp failed with 110 Connection timed out, on dev rocep1s0f0:1` (head) / `rocep1s0f1:1` (worker)."},
		msg:   "ibv_modify_qp failed with 110 Connection timed out, on dev rocep1s0f0:1",
		id:    "ib-qp-setup", needle: "NCCL_IB_HCA"},
	{log: "aws-samples-aws-do-eks-50-gloo-loopback.log",
		lines: []string{"[rank8] Gloo connectFullMesh failed ... timed out connecting: SO_ERROR: Connection refused,"},
		id:    "gloo-interface", needle: "GLOO_SOCKET_IFNAME"},
	{log: "aws-samples-aws-do-eks-51-gloo-ifname-syntax.log",
		lines: []string{"  ifa != nullptr. Unable to find address for: ^lo"},
		id:    "gloo-interface", needle: "no \"^\" exclusions"},
	{log: "novasky-ai-skyrl-108-p2p-unsupported.log",
		lines: []string{"Cuda failure 217 'peer access is not supported between these two devices'"},
		msg:   "Cuda failure 217 'peer access is not supported between these two devices'", id: "p2p-access-unsupported", needle: "NCCL_P2P_DISABLE=1"},
	{log: "sgl-project-sglang-1427-libibverbs-socket.log",
		lines: []string{"NCCL INFO Failed to open libibverbs.so[.1]", "NCCL INFO NET/Socket : Using [0]ib0.<ip>"},
		id:    "net-socket", needle: "libibverbs"},
}

// reraise is PyTorch 2.6's DistBackendError for a failed NCCL call
// (NCCLUtils.hpp C10D_NCCL_CHECK: "NCCL error in: FILE:LINE, TEXT, NCCL
// version V", then "ncclSystemError: ..." and "Last error:" with NCCL's
// last WARN message).
func reraise(msg string) []string {
	return []string{
		"torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:2042, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5",
		"ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. ",
		"Last error:",
		msg,
	}
}

// childFailed is torchrun's ChildFailedError summary with the rank's
// traceback indented inside it.
func childFailed(msg string) []string {
	out := []string{
		"torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
		"============================================================",
		"train.py FAILED",
		"------------------------------------------------------------",
		"Root Cause (first observed failure):",
		"[0]:",
		"  time      : 2025-03-01_10:00:00",
		"  host      : node1",
		"  rank      : 3 (local_rank: 3)",
		"  exitcode  : 1 (pid: 4242)",
		"  traceback : Traceback (most recent call last):",
		"    File \"train.py\", line 10, in <module>",
	}
	for _, l := range reraise(msg) {
		out = append(out, "  "+l)
	}
	return append(out, "============================================================")
}

// netForms are the shapes a log reaches the doctor in.
var netForms = []struct {
	name string
	make func(c netFormCase) []string // nil when the form does not apply
	crlf bool
}{
	{name: "as posted", make: func(c netFormCase) []string { return c.lines }},
	{name: "torchrun rank prefix", make: func(c netFormCase) []string { return prefixed(c.lines, "[rank3]:") }},
	{name: "mpirun prefix", make: func(c netFormCase) []string { return prefixed(c.lines, "[1,3]<stderr>:") }},
	{name: "slurm prefix", make: func(c netFormCase) []string { return prefixed(c.lines, "3: ") }},
	{name: "timestamp", make: func(c netFormCase) []string { return prefixed(c.lines, "2025-11-24T03:20:21.001125857Z ") }},
	{name: "ANSI colours", make: func(c netFormCase) []string {
		var out []string
		for _, l := range c.lines {
			out = append(out, "\x1b[1;31m"+l+"\x1b[0m")
		}
		return out
	}},
	{name: "CRLF", make: func(c netFormCase) []string { return c.lines }, crlf: true},
	{name: "PyTorch re-raise", make: func(c netFormCase) []string {
		if c.msg == "" {
			return nil
		}
		return reraise(c.msg)
	}},
	{name: "re-raise with rank prefix", make: func(c netFormCase) []string {
		if c.msg == "" {
			return nil
		}
		return prefixed(reraise(c.msg), "[rank3]: ")
	}},
	{name: "ChildFailedError", make: func(c netFormCase) []string {
		if c.msg == "" {
			return nil
		}
		return childFailed(c.msg)
	}},
	{name: "message only", make: func(c netFormCase) []string {
		if c.msg == "" {
			return nil
		}
		return []string{c.msg}
	}},
}

func prefixed(lines []string, p string) []string {
	var out []string
	for _, l := range lines {
		out = append(out, p+l)
	}
	return out
}

// TestNetRuleForms takes the key lines of published logs through the forms
// users paste them in (NCCL's own line, PyTorch's re-raise, torchrun's
// summary, launcher and timestamp prefixes, colours, CRLF, the message
// alone): the same rule must fire and name the same fix each time.
func TestNetRuleForms(t *testing.T) {
	for _, c := range netFormCases {
		// The key lines are the published ones.
		b := readLog(t, c.log)
		for _, l := range c.lines {
			if !strings.Contains(b, l) {
				t.Fatalf("%s does not hold %q", c.log, l)
			}
		}
		for _, f := range netForms {
			lines := f.make(c)
			if lines == nil {
				continue
			}
			sep := "\n"
			if f.crlf {
				sep = "\r\n"
			}
			text := "Epoch 1 starting" + sep + strings.Join(lines, sep) + sep
			t.Run(c.id+"/"+c.log+"/"+f.name, func(t *testing.T) {
				ds := Diagnose(parseString(t, text), ncclenv.Env{})
				d := find(ds, c.id)
				if d.ID == "" {
					t.Fatalf("%s did not fire; diagnoses %v\n%s", c.id, ids(ds), text)
				}
				if !strings.Contains(d.Explanation, c.needle) {
					t.Errorf("%s does not name %q: %s", c.id, c.needle, d.Explanation)
				}
			})
		}
	}
}

func readLog(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(logsDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestNetRulesQuiet: lines that share words with the network rules but have
// another cause, or none, fire none of them.
func TestNetRulesQuiet(t *testing.T) {
	quiet := []struct{ name, log string }{
		{"PyTorch's store, not NCCL", "[W socket.cpp:663] [c10d] The client socket has failed to connect to [node0]:29500 (errno: 111 - Connection refused).\n"},
		{"TCPStore timeout", "torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. TCPStore connect timeout: Connection refused\n"},
		{"NCCL retrying while the peer starts", "h1:1:2 [0] NCCL INFO Call to connect returned Connection refused, retrying\n"},
		{"no plugin installed", "h1:1:2 [0] NCCL INFO NET/Plugin: Plugin load returned 2 : libnccl-net.so: cannot open shared object file: No such file or directory : when loading libnccl-net.so\n"},
		// nccl-tests#185: a verbs call failing with a connect errno is the
		// IB transport's queue pair (ib-qp-setup), not a TCP connection.
		{"verbs call with a connect errno", "dgxh100-3:225140:225355 [0] misc/ibvwrap.cc:187 NCCL WARN Call to ibv_modify_qp failed with error Network is unreachable\n"},
		{"an environment listing naming Gloo's variable", "GLOO_SOCKET_IFNAME=eth0\nNCCL_SOCKET_IFNAME=eth0\n"},
		{"aws-ofi-nccl starting", "h1:1:2 [0] NCCL INFO NET/OFI Selected Provider is efa (found 4 nics)\n"},
		{"docker0 listed on one host", "h1:1:2 [0] NCCL INFO Bootstrap : Using [0]eth0:10.0.0.1<0> [1]docker0:172.17.0.1<0>\n" +
			"h1:1:2 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via P2P/IPC\n"},
	}
	for _, q := range quiet {
		t.Run(q.name, func(t *testing.T) {
			got := ids(Diagnose(parseString(t, q.log), ncclenv.Env{}))
			for _, id := range []string{"socket-connect", "socket-interface", "net-plugin-failed", "gloo-interface"} {
				if slices.Contains(got, id) {
					t.Errorf("%s fired on %q", id, q.log)
				}
			}
		})
	}
}

// TestSocketInterfaces: which interfaces count as unlikely to route, and
// the fix names the first ordinary one; an NCCL_SOCKET_IFNAME that still
// selects them is called out.
func TestSocketInterfaces(t *testing.T) {
	cases := []struct {
		name, log string
		want      []string // in the explanation; nil: no diagnosis
	}{
		{"loopback across hosts", "a:1:2 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to lo\n" +
			"a:1:2 [0] NCCL INFO Bootstrap : Using [0]lo:127.0.0.1<0>\n" +
			"a:1:2 [0] NCCL INFO Call to connect returned Connection refused, retrying\n" +
			"a:1:2 [0] misc/socket.cc:485 NCCL WARN socketStartConnect: Connect to 10.0.0.2<40123> failed : Connection refused\n" +
			"b:3:4 [0] NCCL INFO Bootstrap : Using [0]lo:127.0.0.1<0>\n",
			[]string{"lo (127.0.0.1) (loopback", "NCCL_SOCKET_IFNAME=lo is set and still selects them"}},
		{"link-local IPv4 of a second NIC", "a:1:2 [0] NCCL INFO NET/Socket : Using [0]enp1s0:10.1.1.5<0> [1]enp2s0:169.254.3.1<0>\n" +
			"a:1:2 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/Socket/1\n",
			[]string{"enp2s0 (169.254.3.1)", "NCCL_SOCKET_IFNAME=enp1s0"}},
		{"only ordinary interfaces", "a:1:2 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n" +
			"a:1:2 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/Socket/0\n", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := find(Diagnose(parseString(t, c.log), ncclenv.Env{}), "socket-interface")
			if c.want == nil {
				if d.ID != "" {
					t.Fatalf("socket-interface fired: %s", d.Explanation)
				}
				return
			}
			if d.ID == "" {
				t.Fatal("socket-interface did not fire")
			}
			for _, w := range c.want {
				if !strings.Contains(d.Explanation, w) {
					t.Errorf("explanation lacks %q: %s", w, d.Explanation)
				}
			}
		})
	}
}

// TestRoCEGIDAndQPHints: the status-12 explanation names the GID index NCCL
// used by release (0 before 2.21, net_ib.cc's NCCL_PARAM default), and the
// queue-pair failures carry NCCL 2.30's own hints (printIbModifyQpHint:
// ETIMEDOUT -> NCCL_CROSS_NIC=0, EINVAL -> NCCL_IB_GID_INDEX=-1); NCCL's
// retry notices alone are no failure.
func TestRoCEGIDAndQPHints(t *testing.T) {
	const wc = "h1:1:2 [0] transport/net_ib.cc:1 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<4000> with status=12 opcode=0 len=0 vendor err 129 (Recv)\n"
	cases := []struct {
		name, log, id string
		has, hasNot   string
	}{
		{"2.20 default GID 0", "h1:1:2 [0] NCCL INFO NCCL version 2.20.5+cuda12.4\n" + wc, "ib-completion-error", "NCCL 2.20.5 uses GID index 0", ""},
		{"2.21 picks its own", "h1:1:2 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n" + wc, "ib-completion-error", "NCCL_IB_GID_INDEX", "uses GID index 0"},
		{"index set", "h1:1:2 [0] NCCL INFO NCCL_IB_GID_INDEX set by environment to 1.\n" + wc, "ib-completion-error", "The log sets NCCL_IB_GID_INDEX=1", ""},
		{"2.30 modify_qp timeout", "h1:1:2 [0] misc/ibvwrap.cc:376 NCCL WARN Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_0:1, curr state INIT, next state RTR, local GID index 3, local GID ::ffff:10.0.0.1, remote GID ::ffff:10.1.0.2\n",
			"ib-qp-setup", "NCCL_CROSS_NIC=0", ""},
		{"2.30 modify_qp EINVAL", "h1:1:2 [0] misc/ibvwrap.cc:376 NCCL WARN Call to ibv_modify_qp failed with 22 Invalid argument, on dev mlx5_0:1, curr state INIT, next state RTR, local GID index 7, local GID N/A, remote GID N/A\n",
			"ib-qp-setup", "NCCL_IB_GID_INDEX", ""},
		{"retry notice only", "h1:1:2 [0] NCCL INFO Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_0:1, curr state INIT, next state RTR, local GID index 3, local GID a, remote GID b, retrying 1/5 after 100 msec of sleep\n",
			"", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ds := Diagnose(parseString(t, c.log), ncclenv.Env{})
			if c.id == "" {
				for _, id := range []string{"ib-qp-setup", "socket-connect"} {
					if find(ds, id).ID != "" {
						t.Errorf("%s fired: %v", id, ids(ds))
					}
				}
				return
			}
			d := find(ds, c.id)
			if d.ID == "" {
				t.Fatalf("%s did not fire: %v", c.id, ids(ds))
			}
			if !strings.Contains(d.Explanation, c.has) {
				t.Errorf("explanation lacks %q: %s", c.has, d.Explanation)
			}
			if c.hasNot != "" && strings.Contains(d.Explanation, c.hasNot) {
				t.Errorf("explanation has %q: %s", c.hasNot, d.Explanation)
			}
		})
	}
}

// TestPeerLostReraised: NCCL's lost-peer message (socket.cc's
// "socketProgress: Connection closed by remote peer %s") and the
// ncclRemoteError text reach peer-connection-lost in PyTorch's re-raise too,
// and each line counts once; PyTorch's own store errors do not.
func TestPeerLostReraised(t *testing.T) {
	msg := "socketProgress: Connection closed by remote peer node-2<53322>"
	re := strings.Join(reraise(msg), "\n")
	re = strings.Replace(re, "unhandled system error (run with NCCL_DEBUG=INFO for details)", "remote process exited or there was a network error", 1)
	for name, log := range map[string]string{
		"re-raise":          re + "\n",
		"ChildFailedError":  strings.Join(childFailed(msg), "\n") + "\n",
		"WARN and re-raise": "h:1:2 [0] misc/socket.cc:58 NCCL WARN " + msg + "\n" + re + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			d := find(Diagnose(parseString(t, log), ncclenv.Env{}), "peer-connection-lost")
			if d.ID == "" {
				t.Fatalf("peer-connection-lost did not fire on\n%s", log)
			}
			if n := len(d.Evidence); n < 1 || n > 3 {
				t.Errorf("%d evidence lines: %v", n, d.Evidence)
			}
		})
	}
	store := "RuntimeError: [c10d] TCPStore: Connection reset by peer (errno 104) while talking to node0:29500\n"
	if d := find(Diagnose(parseString(t, store), ncclenv.Env{}), "peer-connection-lost"); d.ID != "" {
		t.Errorf("peer-connection-lost fired on PyTorch's store: %s", d.Explanation)
	}
}

// TestNetSocketHCAEcho: NCCL_IB_HCA known only from its "set by
// environment" echo (or the given environment) still explains "No device
// found"; without the variable the generic cause stays.
func TestNetSocketHCAEcho(t *testing.T) {
	base := "h:1:2 [0] NCCL INFO NET/IB : No device found.\nh:1:2 [0] NCCL INFO Using network Socket\n"
	for _, c := range []struct {
		name, log string
		env       ncclenv.Env
		want      string
	}{
		{"echo", "h:1:2 [0] NCCL INFO NCCL_IB_HCA set by environment to mlx5_9\n" + base, ncclenv.Env{}, "NCCL_IB_HCA=mlx5_9 matched no active port"},
		{"environment", base, ncclenv.New(map[string]string{"NCCL_IB_HCA": "=mlx5_2"}), "NCCL_IB_HCA==mlx5_2 matched no active port"},
		{"unset", base, ncclenv.Env{}, "NCCL found no active InfiniBand/RoCE port"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := find(Diagnose(parseString(t, c.log), c.env), "net-socket")
			if !strings.Contains(d.Explanation, c.want) {
				t.Errorf("net-socket lacks %q: %q", c.want, d.Explanation)
			}
		})
	}
}

// TestConnectTarget: the failed address is read from every release's
// capitalisation, and text whose lower case has another byte length (U+0130
// lowers to three bytes, the Kelvin sign U+212A to one) cannot move the
// index off the address or out of the line.
func TestConnectTarget(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{"misc/socket.cc:485 NCCL WARN socketStartConnect: Connect to 10.0.0.2<45763> failed : Software caused connection abort", "10.0.0.2<45763>"},
		{"NCCL WARN ncclSocketConnect: connect to 10.1.0.3<1234> failed : Connection refused", "10.1.0.3<1234>"},
		{"\u212a\u212a\u212a\u212a NCCL WARN Connect to 10.0.0.9<1> failed : Connection refused", "10.0.0.9<1>"},
		{"\u0130\u0130\u0130 NCCL WARN Connect to 10.0.0.8<2> failed : Connection refused", "10.0.0.8<2>"},
		{"\u0130\u0130 connect to nowhere", ""},
		{"NCCL WARN Call to connect failed : Connection timed out", ""},
	} {
		if got := connectTarget(c.line); got != c.want {
			t.Errorf("connectTarget(%q) = %q, want %q", c.line, got, c.want)
		}
	}
}

// TestShmPeerAccess: a 217 from transport/shm.cc (the SHM transport's cuMem
// host buffers, nccl#1838) names those buffers; one from the P2P transport
// does not.
func TestShmPeerAccess(t *testing.T) {
	const msg = " NCCL WARN Cuda failure 217 'peer access is not supported between these two devices'\n"
	for _, c := range []struct {
		file string
		shm  bool
	}{{"transport/shm.cc:590", true}, {"transport/p2p.cc:303", false}} {
		ds := Diagnose(parseString(t, "h1:1:2 [0] "+c.file+msg), ncclenv.Env{})
		d := find(ds, "p2p-access-unsupported")
		if d.ID == "" {
			t.Fatalf("%s: p2p-access-unsupported did not fire: %v", c.file, ids(ds))
		}
		if got := strings.Contains(d.Explanation, "cuMem host memory"); got != c.shm {
			t.Errorf("%s: names the cuMem host buffers = %v: %s", c.file, got, d.Explanation)
		}
	}
}
