package doctor

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func parseString(t *testing.T, log string) *Summary {
	t.Helper()
	s, err := ParseLog(strings.NewReader(log), Options{})
	if err != nil {
		t.Fatalf("ParseLog: %v", err)
	}
	return s
}

// The line prefixes below follow NCCL's logger
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/debug.cc#L327-L357):
// "host:pid:tid [dev] NCCL INFO msg", WARN lines with "file:line (func)"
// (2.30) or "file:line" (2.18-2.2x) and an optional time stamp in front.
func TestSplitNCCL(t *testing.T) {
	tests := []struct {
		name, line     string
		host, pid, dev string
		lvl            level
		msg            string
	}{
		{"info", "gpu01:123:456 [3] NCCL INFO Using network IB", "gpu01", "123", "3", levelInfo, "Using network IB"},
		{"warn 2.30 with func and time stamp", "[2025-01-02 10:11:12] gpu01:123:456 [0] transport/net.cc:1204 (ncclNetConnect) NCCL WARN NET/IB : Got completion", "gpu01", "123", "0", levelWarn, "NET/IB : Got completion"},
		{"warn 2.18", "gpu01:123:456 [1] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer x<1>", "gpu01", "123", "1", levelWarn, "socketProgress: Connection closed by remote peer x<1>"},
		{"trace", "gpu01:1:2 [0] 12.345000 ncclGroupEnd:42 NCCL TRACE done", "gpu01", "1", "0", levelTrace, "done"},
		{"mpirun tag", "[3] node2:22556:22556 [1] NCCL INFO Connected all trees", "node2", "22556", "1", levelInfo, "Connected all trees"},
		{"open mpi timestamp tag", "Fri Aug 11 12:31:45 2023[1,0]<stdout>:tomte401:1850301:1881341 [0] transport.cc:154 NCCL WARN Cuda failure 'invalid argument'", "tomte401", "1850301", "0", levelWarn, "Cuda failure 'invalid argument'"},
		{"torchrun tag", "[rank4]: node-7:88:99 [4] NCCL INFO Trees [0] -1/-1/-1->4->3", "node-7", "88", "4", levelInfo, "Trees [0] -1/-1/-1->4->3"},
		{"bare version", "NCCL version 2.30.7+cuda13.0", "", "", "", levelVersion, "NCCL version 2.30.7+cuda13.0"},
		{"not nccl", "ProcessGroupNCCL.cpp:458 Watchdog caught", "", "", "", levelNone, ""},
		{"NCCL word in prose", "the NCCL library was loaded", "", "", "", levelNone, ""},
		{"no prefix", "NCCL INFO Channel 00/02 :    0   1", "", "", "", levelInfo, "Channel 00/02 :    0   1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, lvl, msg := splitNCCL(tc.line)
			if o.Host != tc.host || o.PID != tc.pid || o.Dev != tc.dev || lvl != tc.lvl || msg != tc.msg {
				t.Errorf("splitNCCL = %+v %v %q; want host %q pid %q dev %q %v %q", o, lvl, msg, tc.host, tc.pid, tc.dev, tc.lvl, tc.msg)
			}
		})
	}
}

// Connection lines of every release from 2.18 to 2.30: the P2P formats of
// p2p.cc, SHM's "via SHM/direct/direct" (2.18-2.2x) and "via SHM/direct"
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/transport/shm.cc#L116-L117),
// NET send/receive with GDRDMA flags
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/transport/net.cc#L324-L330)
// and CollNet's single-rank lines.
func TestConnections(t *testing.T) {
	log := strings.Join([]string{
		"h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read",
		"h:1:1 [0] NCCL INFO Channel 01/1 : 0[0] -> 1[1] via P2P/IPC",
		"h:1:1 [0] NCCL INFO Channel 02/0 : 0[18000] -> 1[1b000] via P2P/direct pointer/read",
		"h:1:1 [0] NCCL INFO Channel 03/0 : 0[0] -> 2[2] via P2P/indirect/1[1]",
		"h:1:1 [0] NCCL INFO Channel 04 : 0[0] -> 1[1] via SHM/direct/direct",
		"h:1:1 [0] NCCL INFO Channel 05 : 1[1] -> 0[0] via SHM/direct",
		"h:1:1 [0] NCCL INFO Channel 06/0 : 8[0] -> 0[0] [receive] via NET/IB/0/GDRDMA",
		"h:1:1 [0] NCCL INFO Channel 06/0 : 0[0] -> 8[0] [send] via NET/IB/0(1)/GDRDMA/Shared",
		"h:1:1 [0] NCCL INFO Channel 07/0 : 0[0] -> 8[0] [send] via NET/Socket/1",
		"h:1:1 [0] NCCL INFO CollNet 00/0 : 0 [send] via COLLNET/SHARP/0/GDRDMA",
	}, "\n")
	s := parseString(t, log)
	wantKinds := []string{"P2P/CUMEM", "P2P/IPC", "P2P/direct pointer", "P2P/indirect", "SHM/direct", "NET/IB", "NET/Socket", "COLLNET/SHARP"}
	if got := s.TransportKinds(); !slices.Equal(got, wantKinds) {
		t.Errorf("kinds = %v, want %v", got, wantKinds)
	}
	if s.TotalConnections != 10 {
		t.Errorf("connections = %d, want 10", s.TotalConnections)
	}
	c := s.Connections[6]
	if c.From != 8 || c.To != 0 || c.Dir != "receive" || c.Via != "NET/IB/0/GDRDMA" || c.Transport != "NET" || c.Channel != 6 {
		t.Errorf("receive line = %+v", c)
	}
	if c := s.Connections[9]; c.Transport != "COLLNET" || c.From != 0 || c.To != -1 || c.Dir != "send" {
		t.Errorf("collnet line = %+v", c)
	}
	if c := s.Connections[2]; c.FromDev != "18000" || c.ToDev != "1b000" {
		t.Errorf("bus-id endpoints = %+v", c)
	}
	if !s.HasTransport("SHM") || !s.HasTransport("NET/Socket") || s.HasTransport("NVLS") {
		t.Error("HasTransport disagrees with the lines")
	}
}

// Init lines of 2.18 ("comm %p rank %d nranks %d cudaDev %d nvmlDev %d busId
// %lx commId 0x%llx - Init COMPLETE") and 2.30 (with the API name in front)
// and the "nRanks nNodes localRanks" line
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/init.cc#L1422-L1423).
func TestInitLines(t *testing.T) {
	s := parseString(t, strings.Join([]string{
		"a:1:1 [0] NCCL INFO comm 0x5555 rank 0 nranks 16 cudaDev 0 nvmlDev 0 busId 18000 commId 0xabc - Init START",
		"a:1:1 [0] NCCL INFO comm 0x5555 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0",
		"a:1:1 [0] NCCL INFO ncclCommInitRankConfig comm 0x5555 rank 0 nranks 16 cudaDev 0 nvmlDev 0 busId 18000 commId 0xabc - Init COMPLETE",
		"b:2:2 [1] NCCL INFO [Rank 9] ncclCommSplit comm 0x6666 rank 1 nranks 8 cudaDev 1 nvmlDev 1 busId 1b000 commId 0xdef - Init COMPLETE",
	}, "\n"))
	if s.NRanks != 16 || s.NNodes != 2 || s.LocalRanks != 8 || s.InitComplete != 2 {
		t.Errorf("nranks %d nodes %d local %d complete %d", s.NRanks, s.NNodes, s.LocalRanks, s.InitComplete)
	}
	if !slices.Equal(s.NRankSizes, []int{16, 8}) {
		t.Errorf("communicator sizes = %v", s.NRankSizes)
	}
	want := []Rank{
		{Rank: 0, NRanks: 16, Host: "a", CUDADev: 0, NVMLDev: 0, BusID: "18000", CommID: "0xabc", Line: 1},
		{Rank: 1, NRanks: 8, Host: "b", CUDADev: 1, NVMLDev: 1, BusID: "1b000", CommID: "0xdef", Line: 4},
	}
	if !slices.Equal(s.Ranks, want) {
		t.Errorf("ranks = %+v", s.Ranks)
	}
}

func TestVersions(t *testing.T) {
	s := parseString(t, strings.Join([]string{
		"a:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4",
		"b:2:2 [0] NCCL INFO NCCL version 2.30.7+cuda13.0",
		"NCCL version 2.26.2 compiled with CUDA 12.6",
		"a:1:1 [0] NCCL INFO NCCL version garbage",
		// init.cc's check; codes are major*10000+minor*100+patch since 2.9
		"c:3:3 [0] init.cc:1043 NCCL WARN Mismatched NCCL version detected : rank 8 version 21803 rank 0 version 23007",
	}, "\n"))
	var got []string
	for _, v := range s.Versions {
		got = append(got, v.Version+"/"+v.CUDA)
	}
	if want := []string{"2.21.5/12.4", "2.30.7/13.0", "2.26.2/12.6", "2.18.3/"}; !slices.Equal(got, want) {
		t.Errorf("versions = %v, want %v", got, want)
	}
	if s.VersionMismatch.Count != 1 {
		t.Errorf("mismatch lines = %d", s.VersionMismatch.Count)
	}
	for code, want := range map[int]string{23007: "2.30.7", 21805: "2.18.5", 2803: "2.8.3", 2708: "2.7.8"} {
		if got := decodeVersionCode(code); got != want {
			t.Errorf("decodeVersionCode(%d) = %s, want %s", code, got, want)
		}
	}
}

func TestRingsTreesAndCounts(t *testing.T) {
	s := parseString(t, strings.Join([]string{
		"h:1:1 [0] NCCL INFO Channel 00/02 :    0   1   2   3",
		"h:1:1 [0] NCCL INFO Channel 01/02 :    0   3   2   1",
		"h:1:1 [0] NCCL INFO Channel 00/0 : 1",         // a cut connection line, not a ring
		"h:1:1 [0] NCCL INFO Channel 02/02 :    0   x", // not numbers
		"h:1:1 [0] NCCL INFO Trees [0] 1/-1/-1->0->-1 [1] 2/3/-1->0->-1",
		"h:1:1 [0] NCCL INFO 2 coll channels, 2 collnet channels, 0 nvls channels, 4 p2p channels, 2 p2p channels per peer",
		"h:1:1 [0] NCCL INFO 2 coll channels, 4 p2p channels, 2 p2p channels per peer",
		"h:1:1 [0] NCCL INFO Pattern 4, crossNic 0, nChannels 2, bw 10.000000/10.000000, type SYS/PIX, sameChannels 1",
	}, "\n"))
	if len(s.Rings) != 2 || !slices.Equal(s.Rings[1].Ranks, []int{0, 3, 2, 1}) || s.Rings[1].Of != 2 {
		t.Errorf("rings = %+v", s.Rings)
	}
	if len(s.Trees) != 2 || !slices.Equal(s.Trees[1].Down, []int{2, 3}) || s.Trees[1].Up != -1 {
		t.Errorf("trees = %+v", s.Trees)
	}
	if len(s.Channels) != 2 || s.Channels[0].CollNet != 2 || s.Channels[1].CollNet != -1 || s.Channels[1].P2P != 4 {
		t.Errorf("channel counts = %+v", s.Channels)
	}
	if s.ChannelCount() != 2 {
		t.Errorf("ChannelCount = %d", s.ChannelCount())
	}
	g := s.Graphs[0]
	if g.Pattern != 4 || g.NChannels != 2 || g.BwIntra != 10 || g.TypeIntra != "SYS" || g.TypeInter != "PIX" {
		t.Errorf("graph = %+v", g)
	}
}

// A ring line keeps its first MaxRingRanks ranks and counts them all; a
// Trees entry of more children than NCCL_MAX_TREE_ARITY (3) is no line
// NCCL prints and is not read.
func TestLongRingAndWideTree(t *testing.T) {
	var ring strings.Builder
	for r := range 3 * MaxRingRanks {
		fmt.Fprintf(&ring, " %d", r)
	}
	s := parseString(t, "h:1:1 [0] NCCL INFO Channel 00/01 :"+ring.String()+"\n"+
		"h:1:1 [0] NCCL INFO Trees [0] 1/2/3/4->0->-1\n")
	if len(s.Rings) != 1 || len(s.Rings[0].Ranks) != MaxRingRanks || s.Rings[0].RankCount != 3*MaxRingRanks || s.Rings[0].MoreRanks() != 2*MaxRingRanks {
		t.Errorf("ring: %d ranks kept, rank_count %d", len(s.Rings[0].Ranks), s.Rings[0].RankCount)
	}
	if len(s.Trees) != 0 {
		t.Errorf("trees = %+v, want none", s.Trees)
	}
}

// A TUNING table in the 2.30 layout: three blocks (Tree/Ring/CollNetDirect,
// CollNetChain/NVLS/NVLSTree, PAT), each with nine protocol columns even
// where the block has fewer algorithms
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/tuning.cc#L543-L585).
// The numbers are made up; only the layout matters.
func TestTuningTable230(t *testing.T) {
	pre := "h:1:1 [0] NCCL INFO "
	proto := "  Protocol    |             LL |          LL128 |         Simple |             LL |          LL128 |         Simple |             LL |          LL128 |         Simple |"
	log := strings.Join([]string{
		pre + "  Algorithm   |                            Tree                  |                            Ring                  |                   CollNetDirect                  |",
		pre + proto,
		pre + " Max NThreads |            512 |            640 |            512 |            512 |            640 |            512 |              0 |              0 |            640 |",
		pre + "    AllReduce |    10.0/  1.0 |    11.0/  2.0 |    12.0/  3.0 |    13.0/  4.0 |    14.0/  5.0 |    15.0/  6.0 |     0.0/  0.0 |     0.0/  0.0 |     0.0/  0.0 |",
		pre + "  Algorithm   |                    CollNetChain                  |                             NVLS                  |                        NVLSTree                  |",
		pre + proto,
		pre + "    AllReduce |     0.0/  0.0 |     0.0/  0.0 |    20.0/  7.0 |     0.0/  0.0 |     0.0/  0.0 |    25.0/  8.0 |     0.0/  0.0 |     0.0/  0.0 |    26.0/  9.0 |",
		pre + "  Algorithm   |                             PAT                  |",
		pre + proto,
		pre + "    AllGather |     0.0/  0.0 |     0.0/  0.0 |     8.0/ 30.0 |",
		// a second communicator's table is counted, not merged
		pre + "  Algorithm   |                            Tree                  |                            Ring                  |                   CollNetDirect                  |",
		pre + proto,
		pre + "    AllReduce |    99.0/ 99.0 |    99.0/ 99.0 |    99.0/ 99.0 |    99.0/ 99.0 |    99.0/ 99.0 |    99.0/ 99.0 |     0.0/  0.0 |     0.0/  0.0 |     0.0/  0.0 |",
	}, "\n")
	s := parseString(t, log)
	tu := s.Tuning
	if tu == nil {
		t.Fatal("no tuning table")
	}
	if want := []string{"Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"}; !slices.Equal(tu.Algorithms, want) {
		t.Errorf("algorithms = %v", tu.Algorithms)
	}
	for _, c := range []struct {
		f, a, p string
		lat, bw float64
	}{
		{"AllReduce", "Ring", "Simple", 15, 6},
		{"AllReduce", "Tree", "LL", 10, 1},
		{"AllReduce", "NVLS", "Simple", 25, 8},
		{"AllReduce", "NVLSTree", "Simple", 26, 9},
		{"AllGather", "PAT", "Simple", 8, 30},
	} {
		got, ok := tu.Cell(c.f, c.a, c.p)
		if !ok || got.LatencyUs != c.lat || got.BwGBps != c.bw {
			t.Errorf("%s/%s/%s = %+v %v, want %v/%v", c.f, c.a, c.p, got, ok, c.lat, c.bw)
		}
	}
	if tu.Tables != 2 {
		t.Errorf("tables = %d, want 2", tu.Tables)
	}
	if !slices.Equal(tu.MaxThreads["Ring"], []int{512, 640, 512}) {
		t.Errorf("Ring max threads = %v", tu.MaxThreads["Ring"])
	}
}

// Algorithm choices: "%s: %ld Bytes -> Algo %s proto %s channel{Lo..Hi}=..."
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/enqueue.cc#L821-L824) and
// the numeric "%ld Bytes -> Algo %d proto %d time %f" of 2.21.
func TestAlgoChoices(t *testing.T) {
	s := parseString(t, strings.Join([]string{
		"h:1:1 [0] NCCL INFO AllReduce: 1048576 Bytes -> Algo RING proto LL128 channel{Lo..Hi}={0..15}",
		"h:1:1 [0] NCCL INFO AllGather: 4096 Bytes -> Algo NVLS_TREE proto SIMPLE channel{Lo..Hi}={0..3}",
		"h:1:1 [0] NCCL INFO 65536 Bytes -> Algo 0 proto 0 time 12.500000",
		"h:1:1 [0] NCCL INFO 65536 Bytes -> Algo 0 proto 0 time 12.600000", // same choice again
	}, "\n"))
	want := []AlgoChoice{
		{Func: "AllReduce", Bytes: 1048576, Algorithm: "Ring", Protocol: "LL128", Line: 1},
		{Func: "AllGather", Bytes: 4096, Algorithm: "NVLSTree", Protocol: "Simple", Line: 2},
		{Bytes: 65536, Algorithm: "Tree", Protocol: "LL", TimeUs: 12.5, Line: 3},
	}
	if !slices.Equal(s.AlgoChoices, want) {
		t.Errorf("choices = %+v", s.AlgoChoices)
	}
}

func TestEnvEchoesAndNetwork(t *testing.T) {
	s := parseString(t, strings.Join([]string{
		"h:1:1 [0] NCCL INFO NCCL_NSOCKS_PERTHREAD set by environment to 8.",
		"h:1:1 [0] NCCL INFO NCCL_P2P_LEVEL set by environment to PHB",
		"h:1:1 [0] NCCL INFO NCCL_P2P_LEVEL set by environment to PHB",
		"h:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE [RO]; OOB ib0:10.0.0.1<0>",
		"h:1:1 [0] NCCL INFO Using network IB",
		"h:1:1 [0] NCCL INFO NVLS multicast support is available on dev 0",
		"h:1:1 [0] NCCL INFO Communicator has 1 nodes which is less than CollNet node threshold 2, disabling CollNet",
	}, "\n"))
	if e, _ := s.Env("NCCL_NSOCKS_PERTHREAD"); e.Value != "8" {
		t.Errorf("trailing period kept: %+v", e)
	}
	if len(s.EnvSettings) != 2 {
		t.Errorf("env settings = %+v (duplicates should collapse)", s.EnvSettings)
	}
	if !slices.Equal(s.NetDevices, []string{"IB mlx5_0:1/IB", "IB mlx5_1:1/RoCE"}) || s.Network != "IB" {
		t.Errorf("devices %v network %q", s.NetDevices, s.Network)
	}
	if s.NVLSSupported.Count != 1 || s.CollNetDisabled.Count != 1 {
		t.Errorf("nvls %d collnet disabled %d", s.NVLSSupported.Count, s.CollNetDisabled.Count)
	}
}

// The devices of "NET/... : Using" lines, with the addresses posters
// often elide ("[0]ib0.<ip>" in sglang#1427) and the flags NCCL appends.
func TestNetDeviceLists(t *testing.T) {
	for _, tt := range []struct {
		line string
		want []string
	}{
		{"h:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0> [1]eth1:10.0.1.1<0>", []string{"Socket eth0:10.0.0.1<0>", "Socket eth1:10.0.1.1<0>"}},
		{"NCCL INFO NET/Socket : Using [0]ib0.<ip>", []string{"Socket ib0.<ip>"}},
		{"h:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [RO]; OOB ib0:10.0.0.1<0>", []string{"IB mlx5_0:1/IB"}},
		{"h:1:1 [0] NCCL INFO NET/Socket : Using", nil},
	} {
		s := parseString(t, tt.line+"\n")
		if !slices.Equal(s.NetDevices, tt.want) {
			t.Errorf("%q: devices %q, want %q", tt.line, s.NetDevices, tt.want)
		}
	}
}

// PyTorch lines of v2.6.0 and earlier releases.
func TestTorchLines(t *testing.T) {
	s := parseString(t, strings.Join([]string{
		"[rank3]:[E1206 18:44:12.715 ProcessGroupNCCL.cpp:607] [PG ID 0 PG GUID 0(default_pg) Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7753, OpType=_REDUCE_SCATTER_BASE, NumelIn=544997376, NumelOut=68124672, Timeout(ms)=600000) ran for 600061 milliseconds before timing out.",
		"[rank0]:[I ProcessGroupNCCL.cpp:900] [PG ID 0 PG GUID 0 Rank 0] ProcessGroupNCCL environments: NCCL version: 2.21.5, TORCH_NCCL_ASYNC_ERROR_HANDLING: 1, TORCH_NCCL_DUMP_ON_TIMEOUT: 0, TORCH_NCCL_BLOCKING_WAIT: 0, TORCH_NCCL_ENABLE_MONITORING: 1",
		"[rank7]:[W Utils.hpp:108] Warning: Environment variable NCCL_ASYNC_ERROR_HANDLING is deprecated; use TORCH_NCCL_ASYNC_ERROR_HANDLING instead (function getCvarString)",
		"[rank0]:[E ProcessGroupNCCL.cpp:670] Stack trace of the failed collective not found, potentially because FlightRecorder is disabled. You can enable it by setting TORCH_NCCL_TRACE_BUFFER_SIZE to a non-zero value.",
		"torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1691, internal error - please report this issue to the NCCL developers, NCCL version 2.19.3",
	}, "\n"))
	// proc 3: the torchrun tag "[rank3]:" of line 1.
	want := Timeout{Rank: 3, PG: "PG ID 0 PG GUID 0(default_pg)", SeqNum: 7753, OpType: "_REDUCE_SCATTER_BASE", TimeoutMs: 600000, RanForMs: 600061, Line: 1, proc: 3, numelIn: 544997376, numelOut: 68124672}
	if len(s.Timeouts) != 1 || s.Timeouts[0] != want {
		t.Errorf("timeouts = %+v", s.Timeouts)
	}
	if s.ErrorHandling == nil || s.ErrorHandling.Mode != 1 || s.BlockingWait == nil || s.BlockingWait.Mode != 0 || s.MonitoringOn == nil || s.MonitoringOn.Mode != 1 {
		t.Errorf("error handling %+v blocking %+v monitoring %+v", s.ErrorHandling, s.BlockingWait, s.MonitoringOn)
	}
	if s.DeprecatedTorch.Count != 1 || s.FlightRecorder.Count != 1 || s.NCCLErrors.Count != 1 {
		t.Errorf("deprecated %d flight recorder %d errors %d", s.DeprecatedTorch.Count, s.FlightRecorder.Count, s.NCCLErrors.Count)
	}
	var vs []string
	for _, v := range s.Versions {
		vs = append(vs, v.Version)
	}
	if !slices.Equal(vs, []string{"2.21.5", "2.19.3"}) {
		t.Errorf("versions = %v", vs)
	}
}

// GRAPH path dumps: "%s/%lx-%lx (%d/%.1f/%s) " per target
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/paths.cc#L132-L170).
func TestPaths(t *testing.T) {
	s := parseString(t, "h:1:1 [0] NCCL INFO GPU/0-18000 :GPU/0-18000 (0/5000.0/LOC) GPU/0-1b000 (1/20.0/NVL) NET/0-0 (3/12.0/SYS) CPU/0-0 (1/24.0/PHB) \n"+
		"h:1:1 [0] NCCL INFO GPU/0-18000 :GPU/0-1b000 (1/20.0/NVL)\n"+ // a repeat from another rank
		"h:1:1 [0] NCCL INFO junk :x (a/b/c)\n")
	want := []PathLine{
		{From: "GPU/0-18000", To: "GPU/0-18000", Hops: 0, Bw: 5000, Type: "LOC", Line: 1},
		{From: "GPU/0-18000", To: "GPU/0-1b000", Hops: 1, Bw: 20, Type: "NVL", Line: 1},
		{From: "GPU/0-18000", To: "NET/0-0", Hops: 3, Bw: 12, Type: "SYS", Line: 1},
		{From: "GPU/0-18000", To: "CPU/0-0", Hops: 1, Bw: 24, Type: "PHB", Line: 1},
	}
	got := make([]PathLine, len(s.Paths))
	for i, p := range s.Paths {
		p.text = ""
		got[i] = p
	}
	if !slices.Equal(got, want) {
		t.Errorf("paths = %+v", got)
	}
}
