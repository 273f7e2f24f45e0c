package doctor

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
)

// The logs below are made up, line by line in the formats of the release
// named in each case, to reach the rules no published fixture shows.
func TestDiagnoseSynthetic(t *testing.T) {
	tests := []struct {
		name  string
		log   string
		env   map[string]string
		want  []string
		check func(t *testing.T, ds []Diagnosis)
	}{
		{name: "two releases in one job",
			log:  "a:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\nb:2:2 [0] NCCL INFO NCCL version 2.30.7+cuda13.0\n",
			want: []string{"nccl-version-mismatch"},
			check: func(t *testing.T, ds []Diagnosis) {
				d := ds[0]
				if d.Severity != Error || !strings.Contains(d.Explanation, "2.21.5, 2.30.7") || len(d.Evidence) != 2 {
					t.Errorf("%+v", d)
				}
			}},
		{name: "init.cc version check",
			log:  "a:1:1 [0] init.cc:1043 (initTransportsRank) NCCL WARN Mismatched NCCL version detected : rank 8 version 22105 rank 0 version 23007\n",
			want: []string{"nccl-version-mismatch"}},
		// The same WARN as PyTorch re-raises it (a DistBackendError whose
		// "Last error:" line carries NCCL's text) and as a bare RuntimeError:
		// constructed from the WARN's format string at init.cc#L1043, since
		// no published log of a real mismatch was found.
		{name: "version check re-raised by PyTorch",
			log: "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.20.5\n" +
				"ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\n" +
				"Last error:\n" +
				"Mismatched NCCL version detected : rank 1 version 22005 rank 0 version 21903\n",
			want: []string{"nccl-version-mismatch", "nccl-error"},
			check: func(t *testing.T, ds []Diagnosis) {
				// 22005 and 21903 are NCCL_VERSION_CODE values: 2.20.5 and 2.19.3.
				if !strings.Contains(ds[0].Explanation, "(2.20.5, 2.19.3)") || len(ds[0].Evidence) != 2 {
					t.Errorf("versions not read from the codes: %+v", ds[0])
				}
			}},
		{name: "version check on a RuntimeError line",
			log:  "RuntimeError: Mismatched NCCL version detected : rank 3 version 22703 rank 0 version 22705\n",
			want: []string{"nccl-version-mismatch"}},
		{name: "network inside one node",
			log: "h:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0 MNNVL 0\n" +
				"h:1:1 [0] NCCL INFO NCCL_SHM_DISABLE set by environment to 1\n" +
				"h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] [send] via NET/IB/0\n",
			want: []string{"intra-node-net", "no-gdrdma"},
			check: func(t *testing.T, ds []Diagnosis) {
				if !strings.Contains(ds[0].Explanation, "NCCL_SHM_DISABLE=1") || !hasEvidence(ds[0], 2) {
					t.Errorf("%+v", ds[0])
				}
			}},
		{name: "cap on channels from the environment",
			log:  "h:1:1 [0] NCCL INFO 4 coll channels, 0 collnet channels, 0 nvls channels, 4 p2p channels, 2 p2p channels per peer\n",
			env:  map[string]string{"NCCL_MAX_NRINGS": "4"},
			want: []string{"few-channels", "env-deprecated"},
			check: func(t *testing.T, ds []Diagnosis) {
				if ds[0].Severity != Warning || !strings.Contains(ds[0].Explanation, "NCCL_MAX_NRINGS=4") || !hasEvidence(ds[0], 0) {
					t.Errorf("%+v", ds[0])
				}
			}},
		{name: "ranks disagree on channels",
			log: "a:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0\n" +
				"a:1:1 [0] NCCL INFO 16 coll channels, 16 collnet channels, 0 nvls channels, 32 p2p channels, 32 p2p channels per peer\n" +
				"b:2:2 [0] NCCL INFO 8 coll channels, 8 collnet channels, 0 nvls channels, 32 p2p channels, 32 p2p channels per peer\n",
			want: []string{"few-channels"}},
		{name: "NVLink with two channels",
			log: "h:1:1 [0] NCCL INFO Pattern 4, crossNic 0, nChannels 1, bw 20.000000/20.000000, type NVL/PIX, sameChannels 1\n" +
				"h:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 8 nNodes 1 localRanks 8 localRank 0 MNNVL 0\n" +
				"h:1:1 [0] NCCL INFO 2 coll channels, 0 collnet channels, 0 nvls channels, 2 p2p channels, 2 p2p channels per peer\n",
			want: []string{"few-channels"}},
		{name: "NIC under the other socket",
			log: "a:1:1 [0] NCCL INFO GPU/0-18000 :GPU/0-18000 (0/5000.0/LOC) NET/0-0 (4/12.0/SYS)\n" +
				"a:1:1 [0] NCCL INFO Channel 00/0 : 8[0] -> 0[0] [receive] via NET/IB/0/GDRDMA\n",
			want: []string{"nic-wrong-socket"}},
		{name: "P2P level raised to SYS lets SYS paths through",
			log: "h:1:1 [0] NCCL INFO NCCL_P2P_LEVEL set by environment to SYS\n" +
				"h:1:1 [0] NCCL INFO GPU/0-18000 :GPU/0-18000 (0/5000.0/LOC) GPU/0-af000 (4/10.0/SYS)\n",
			want: nil},
		{name: "P2P disabled between connected GPUs",
			log:  "h:1:1 [0] NCCL INFO P2P is disabled between connected GPUs 0 and 1. You can repress this message with NCCL_IGNORE_DISABLED_P2P=1.\n",
			want: []string{"p2p-unavailable"}},
		{name: "ranks stuck in different collectives",
			log: "[rank0]:[E ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1021, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600010 milliseconds before timing out.\n" +
				"[rank1]:[E ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1021, OpType=BROADCAST, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600012 milliseconds before timing out.\n",
			want: []string{"collective-timeout", "timeout-desync"}},
		{name: "error handling from the environment",
			log:  "[rank0]:[E ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600013 milliseconds before timing out.\n",
			env:  map[string]string{"TORCH_NCCL_ASYNC_ERROR_HANDLING": "2"},
			want: []string{"collective-timeout"},
			check: func(t *testing.T, ds []Diagnosis) {
				if !strings.Contains(ds[0].Explanation, "mode 2 (CleanUpOnly") || !hasEvidence(ds[0], 0) {
					t.Errorf("%s", ds[0].Explanation)
				}
			}},
		{name: "error handling as logged",
			log: "[rank0]:[I ProcessGroupNCCL.cpp:900] [PG 0 Rank 0] ProcessGroupNCCL initialization options: size: 8, global rank: 0, TIMEOUT(ms): 600000, NCCL_ASYNC_ERROR_HANDLING: 3, NCCL_DESYNC_DEBUG: 0\n" +
				"[rank0]:[E ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600013 milliseconds before timing out.\n",
			want: []string{"collective-timeout"},
			check: func(t *testing.T, ds []Diagnosis) {
				if !strings.Contains(ds[0].Explanation, "mode 3 (SkipCleanUp") || !hasEvidence(ds[0], 1) {
					t.Errorf("%s", ds[0].Explanation)
				}
			}},
		{name: "blocking wait",
			log:  "[rank0]:[E ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600013 milliseconds before timing out.\n",
			env:  map[string]string{"TORCH_NCCL_BLOCKING_WAIT": "1"},
			want: []string{"collective-timeout"},
			check: func(t *testing.T, ds []Diagnosis) {
				if !strings.Contains(ds[0].Explanation, "no watchdog thread") {
					t.Errorf("%s", ds[0].Explanation)
				}
			}},
		{name: "peer gone and deprecated name in the log",
			log: "a:1:1 [0] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer b<1234>\n" +
				"a:1:1 [0] proxy.cc:1143 NCCL WARN Socket recv failed while polling for opId=0x1\n" +
				"[rank7]:[W Utils.hpp:108] Warning: Environment variable NCCL_ASYNC_ERROR_HANDLING is deprecated; use TORCH_NCCL_ASYNC_ERROR_HANDLING instead (function getCvarString)\n" +
				"[rank0]:[E ProcessGroupNCCL.cpp:670] Stack trace of the failed collective not found, potentially because FlightRecorder is disabled. You can enable it by setting TORCH_NCCL_TRACE_BUFFER_SIZE to a non-zero value.\n",
			want: []string{"peer-connection-lost", "env-deprecated", "flight-recorder-off"}},
		{name: "environment the log contradicts",
			log: "h:1:1 [0] NCCL INFO Using network IBext_v8\n" +
				"h:1:1 [0] NCCL INFO NCCL_P2P_LEVEL set by environment to PHB\n" +
				"h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n",
			env:  map[string]string{"NCCL_IB_DISABLE": "1", "NCCL_P2P_DISABLE": "1", "NCCL_P2P_LEVEL": "SYS"},
			want: []string{"env-not-applied", "env-contradiction"},
			check: func(t *testing.T, ds []Diagnosis) {
				ex := ds[0].Explanation
				for _, want := range []string{"NCCL_P2P_DISABLE=1 is in the environment", "IBext_v8", "NCCL_P2P_LEVEL=SYS but NCCL read PHB"} {
					if !strings.Contains(ex, want) {
						t.Errorf("explanation lacks %q: %s", want, ex)
					}
				}
				if !hasEvidence(ds[0], 2) || !hasEvidence(ds[0], 3) || !hasEvidence(ds[0], 0) {
					t.Errorf("evidence = %+v", ds[0].Evidence)
				}
			}},
		// PyTorch's start-up warning (torch/cuda/__init__.py, _check_cubins)
		// with the capability above, below and inside the build's list.
		{name: "GPU newer than the PyTorch build",
			log:  "NVIDIA B200 with CUDA capability sm_100 is not compatible with the current PyTorch installation.\nThe current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.\n",
			want: []string{"gpu-arch-not-built"},
			check: func(t *testing.T, ds []Diagnosis) {
				if !strings.Contains(ds[0].Explanation, "stops at sm_90") {
					t.Errorf("%s", ds[0].Explanation)
				}
			}},
		{name: "GPU older than the PyTorch build",
			log:  "Tesla K80 with CUDA capability sm_37 is not compatible with the current PyTorch installation.\nThe current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.\n",
			want: []string{"gpu-arch-not-built"},
			check: func(t *testing.T, ds []Diagnosis) {
				if !strings.Contains(ds[0].Explanation, "starts at sm_50") {
					t.Errorf("%s", ds[0].Explanation)
				}
			}},
		{name: "GPU inside the range but not listed",
			log:  "NVIDIA GeForce GTX 1080 with CUDA capability sm_61 is not compatible with the current PyTorch installation.\nThe current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.\n",
			want: []string{"gpu-arch-not-built"},
			check: func(t *testing.T, ds []Diagnosis) {
				if !strings.Contains(ds[0].Explanation, "not in the build's list") {
					t.Errorf("%s", ds[0].Explanation)
				}
			}},
		// The exit warning of ProcessGroupNCCL (v2.6.0 ProcessGroupNCCL.cpp
		// line 1497) names the cause only when it comes before the hang.
		{name: "heartbeat abort while exiting",
			log: "[rank0]:[W205 18:00:34.9 ProcessGroupNCCL.cpp:1538] Warning: WARNING: destroy_process_group() was not called before program exit, which can leak resources.\n" +
				"[rank0]:[E205 18:11:06.3 ProcessGroupNCCL.cpp:1870] [PG ID 1 PG GUID 1 Rank 0] ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in monitoring enqueued collectives.\n",
			want: []string{"watchdog-heartbeat-abort"},
			check: func(t *testing.T, ds []Diagnosis) {
				if !strings.Contains(ds[0].Explanation, "while the program was exiting") || !hasEvidence(ds[0], 1) {
					t.Errorf("%+v", ds[0])
				}
			}},
		{name: "heartbeat abort, exit warning only after it",
			log: "[rank0]:[E205 18:11:06.3 ProcessGroupNCCL.cpp:1870] [PG ID 1 PG GUID 1 Rank 0] ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in monitoring enqueued collectives.\n" +
				"[rank0]:[W205 18:20:34.9 ProcessGroupNCCL.cpp:1538] Warning: WARNING: destroy_process_group() was not called before program exit, which can leak resources.\n",
			want: []string{"watchdog-heartbeat-abort"},
			check: func(t *testing.T, ds []Diagnosis) {
				if strings.Contains(ds[0].Explanation, "while the program was exiting") {
					t.Errorf("%s", ds[0].Explanation)
				}
			}},
		// cudaGetErrorString(cudaErrorSystemNotReady) as PyTorch 1.x's THC
		// check quoted it (pytorch/pytorch#35710) and as NCCL's CUDACHECK
		// prints it; the error name as a C++ program logs it.
		{name: "CUDA system not ready, PyTorch's runtime error",
			log:  "RuntimeError: cuda runtime error (802) : system not yet initialized at /opt/conda/conda-bld/pytorch_1579022034529/work/aten/src/THC/THCGeneral.cpp:50\n",
			want: []string{"cuda-system-not-ready"}},
		{name: "CUDA system not ready, NCCL's CUDA check",
			log:  "h:1:1 [0] misc/cudawrap.cc:33 NCCL WARN Cuda failure 'system not yet initialized'\n",
			want: []string{"cuda-system-not-ready"}},
		{name: "CUDA system not ready, by its error name",
			log:  "CUDA error at bandwidthTest.cu:256 code=802(cudaErrorSystemNotReady) \"cudaSetDevice(currentDevice)\"\n",
			want: []string{"cuda-system-not-ready"}},
		// GoogleTest prints this banner when a test binary ends: a hang
		// after it is one of teardown (NVIDIA/Fuser#3055's shape).
		{name: "heartbeat abort after a test binary's teardown banner",
			log: "[----------] Global test environment tear-down\n" +
				"[E929 22:14:53.1 ProcessGroupNCCL.cpp:1487] [PG ID 0 PG GUID  Rank 3] ProcessGroupNCCL's watchdog got stuck for 10 seconds without making progress in monitoring enqueued collectives.\n",
			want: []string{"watchdog-heartbeat-abort"},
			check: func(t *testing.T, ds []Diagnosis) {
				if !strings.Contains(ds[0].Explanation, "same order on every rank") || !hasEvidence(ds[0], 1) {
					t.Errorf("%+v", ds[0])
				}
			}},
		// PyTorch v2.6.0's watchdog wording; SeqNum 1 is a group's first
		// collective, SeqNum 812 one in the middle of training.
		{name: "first collective times out",
			log:  "[rank3]:[E1016 03:31:38.9 ProcessGroupNCCL.cpp:607] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=BROADCAST, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600071 milliseconds before timing out.\n",
			want: []string{"collective-timeout"},
			check: func(t *testing.T, ds []Diagnosis) {
				if !strings.Contains(ds[0].Explanation, "the first of its process group") {
					t.Errorf("%s", ds[0].Explanation)
				}
			}},
		{name: "a later collective times out",
			log:  "[rank3]:[E1016 03:31:38.9 ProcessGroupNCCL.cpp:607] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=812, OpType=BROADCAST, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600071 milliseconds before timing out.\n",
			want: []string{"collective-timeout"},
			check: func(t *testing.T, ds []Diagnosis) {
				if strings.Contains(ds[0].Explanation, "the first of its process group") {
					t.Errorf("%s", ds[0].Explanation)
				}
			}},
		// The HCA-level message (net_ib.cc up to v2.12, and network
		// plugins since) next to IB connections without /GDRDMA.
		{name: "GPUDirect RDMA disabled for the HCA",
			log: "h:1:2 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'\n" +
				"h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0\n",
			want: []string{"no-gdrdma"},
			check: func(t *testing.T, ds []Diagnosis) {
				if ds[0].Severity != Warning || !strings.Contains(ds[0].Explanation, "nvidia-peermem") || !hasEvidence(ds[0], 1) {
					t.Errorf("%+v", ds[0])
				}
			}},
		// Release 2.30's wording of the duplicate-GPU check (init.cc at
		// v2.30.7-1, line 1057), reached through the catalog format.
		{name: "two ranks on one GPU, 2.30 wording",
			log:  "h:1:2 [0] init.cc:1057 NCCL WARN Multiple Ranks are using the same GPU/Partition. Set NCCL_MULTI_RANK_GPU_ENABLE=1 to enable this configuration.\n",
			want: []string{"duplicate-gpu"},
			check: func(t *testing.T, ds []Diagnosis) {
				if !strings.Contains(ds[0].Explanation, "NCCL_MULTI_RANK_GPU_ENABLE") || !hasEvidence(ds[0], 1) {
					t.Errorf("%+v", ds[0])
				}
			}},
		{name: "environment only",
			env:  map[string]string{"NCCL_P2P_DISABLE": "1", "NCCL_P2P_LEVEL": "PHB", "NCCL_DEBUG": "INFO", "NCCL_VERSION": "2.21.5-1"},
			want: []string{"p2p-unavailable", "env-contradiction", "env-debug-knob", "env-container"},
			check: func(t *testing.T, ds []Diagnosis) {
				if !hasEvidence(ds[0], 0) || !strings.Contains(ds[0].Explanation, "turns P2P off") {
					t.Errorf("%+v", ds[0])
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := parseString(t, tc.log)
			ds := Diagnose(s, ncclenv.New(tc.env))
			if got := ids(ds); !slices.Equal(got, append([]string{}, tc.want...)) {
				t.Fatalf("diagnoses = %v, want %v", got, tc.want)
			}
			for i := 1; i < len(ds); i++ {
				if ds[i].Severity > ds[i-1].Severity {
					t.Errorf("not ordered by severity: %v", ids(ds))
				}
			}
			if tc.check != nil {
				tc.check(t, ds)
			}
		})
	}
	if ds := Diagnose(nil, ncclenv.Env{}); len(ds) != 0 {
		t.Errorf("Diagnose(nil) = %v", ids(ds))
	}
}

// TestTimeoutDesyncStable: when several ranks time out in the same
// collective, timeout-desync names the lowest of them every time (it once
// took whichever the map iteration gave).
func TestTimeoutDesyncStable(t *testing.T) {
	line := func(rank, seq int, op string) string {
		return fmt.Sprintf("[rank%d]:[E ProcessGroupNCCL.cpp:616] [Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=%s, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600010 milliseconds before timing out.\n", rank, rank, seq, op)
	}
	log := line(3, 7219, "BROADCAST") + line(2, 7219, "BROADCAST") + line(5, 7219, "BROADCAST") + line(0, 7221, "ALLREDUCE")
	s := parseString(t, log)
	for i := 0; i < 20; i++ {
		d := find(Diagnose(s, ncclenv.Env{}), "timeout-desync")
		if !strings.Contains(d.Explanation, "rank 0 at #7221 ALLREDUCE; rank 2 at #7219 BROADCAST") {
			t.Fatalf("run %d: %q", i, d.Explanation)
		}
	}
}

// TestTimeoutDesyncSizes: ranks that time out in the same collective (one
// SeqNum and OpType) with different element counts ran one call with
// tensors of different sizes, and timeout-desync says so with the numbers;
// the first case is ms-swift#10183's lines 5 and 7 (data/logs), a DDP
// buffer broadcast whose size differed between ranks.
func TestTimeoutDesyncSizes(t *testing.T) {
	const swift3 = "Train:  20%|█▉        | 375/1881 [3:40:16<14:52:25, 35.55s/it][rank3]:[E918 19:29:24.436955737 ProcessGroupNCCL.cpp:689] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7219, OpType=BROADCAST, NumelIn=64, NumelOut=64, Timeout(ms)=3000000) ran for 3000097 milliseconds before timing out.\n"
	const swift2 = "2026-09-18 19:29:25 [rank2]:[E918 19:29:25.950601628 ProcessGroupNCCL.cpp:689] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7219, OpType=BROADCAST, NumelIn=24084544, NumelOut=24084544, Timeout(ms)=3000000) ran for 3000074 milliseconds before timing out.\n"
	line := func(rank int, op string, in, out int) string {
		return fmt.Sprintf("[rank%d]:[E ProcessGroupNCCL.cpp:616] [Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=40, OpType=%s, NumelIn=%d, NumelOut=%d, Timeout(ms)=600000) ran for 600010 milliseconds before timing out.\n", rank, rank, op, in, out)
	}
	for _, tc := range []struct {
		name, log string
		fires     bool
		has, not  []string
	}{
		{name: "ms-swift#10183: one BROADCAST, 64 and 24084544 elements", log: swift3 + swift2, fires: true,
			has: []string{"Ranks time out in one collective called with different sizes", "#7219 BROADCAST: NumelIn 24084544 on rank 2, 64 on rank 3",
				"broadcast of the module's buffers", "broadcast_buffers=False", "TORCH_DISTRIBUTED_DEBUG=DETAIL"},
			not: []string{"disagree between ranks"}},
		{name: "an all-reduce of different sizes", log: line(0, "ALLREDUCE", 1024, 1024) + line(1, "ALLREDUCE", 2048, 2048), fires: true,
			has: []string{"#40 ALLREDUCE: NumelIn 1024 on rank 0, 2048 on rank 1"}, not: []string{"module's buffers"}},
		{name: "only the output counts differ", log: line(0, "_ALLGATHER_BASE", 8, 16) + line(1, "_ALLGATHER_BASE", 8, 24), fires: true,
			has: []string{"#40 _ALLGATHER_BASE: NumelOut 16 on rank 0, 24 on rank 1"}},
		{name: "the same sizes", log: line(0, "BROADCAST", 64, 64) + line(1, "BROADCAST", 64, 64)},
		{name: "all-to-all counts differ by design", log: line(0, "ALLTOALL_BASE", 10, 30) + line(1, "ALLTOALL_BASE", 20, 40)},
		{name: "scatter counts differ by design", log: line(0, "SCATTER", 64, 32) + line(1, "SCATTER", 0, 32)},
		{name: "untagged lines of ranks numbered differently in the job", log: strings.Replace(line(0, "ALLREDUCE", 1024, 1024), "[rank0]", "[rank4]", 1) +
			strings.Replace(line(1, "ALLREDUCE", 2048, 2048), "[rank1]", "[rank9]", 1)},
		{name: "other process groups", log: strings.Replace(line(0, "ALLREDUCE", 1024, 1024), "[Rank 0]", "[PG ID 1 PG GUID 1 Rank 0]", 1) +
			strings.Replace(line(1, "ALLREDUCE", 2048, 2048), "[Rank 1]", "[PG ID 2 PG GUID 2 Rank 1]", 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds := Diagnose(parseString(t, tc.log), ncclenv.Env{})
			d := find(ds, "timeout-desync")
			if fired := d.ID != ""; fired != tc.fires {
				t.Fatalf("timeout-desync fired = %v, want %v (diagnoses %v)", fired, tc.fires, ids(ds))
			}
			text := d.Title + " " + d.Explanation
			for _, h := range tc.has {
				if !strings.Contains(text, h) {
					t.Errorf("no %q in %q", h, text)
				}
			}
			for _, h := range tc.not {
				if strings.Contains(text, h) {
					t.Errorf("%q in %q", h, text)
				}
			}
			if tc.fires && len(d.Evidence) < 2 {
				t.Errorf("evidence %v: want both ranks' lines", d.Evidence)
			}
		})
	}
}
