package doctor

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/distributed-nav/distributed-nav/playground/controls"
	"github.com/distributed-nav/distributed-nav/playground/ncclmsg"
)

// Rules of the PyTorch, container and runtime family (issue 15), keyed to
// PyTorch v2.6.0's message templates and NCCL's formats of every release
// rather than to one log's words: a GPU the process never selected, a rank
// waiting for rank 0's unique id, a worker killed by a signal, NCCL refused
// in a CUDA graph, a refused kernel launch, a /dev/shm segment a rank could
// not attach to, a Blackwell GPU on an NCCL before 2.26, and the
// ncclResult_t class of an NCCL error as PyTorch, nccl-tests, Horovod or an
// inference server reports it.

func init() {
	lineRules = append(lineRules, torchLineRules...)
	logRules = append(logRules, (*diagnoser).blackwellOldNCCL)
}

var torchLineRules = []Rule{
	{
		ID: "device-not-set", Title: "The process never told PyTorch which GPU it uses", Severity: Warning,
		// ProcessGroupNCCL.cpp (v2.6.0, barrier): "using GPU N to perform
		// barrier as devices used by this process are currently unknown";
		// later releases: "using GPU N as device used by this process is
		// currently unknown".
		Any:         []string{"used by this process are currently unknown", "used by this process is currently unknown"},
		Explanation: "PyTorch had to guess this rank's GPU (global rank modulo the GPUs it sees) because neither torch.cuda.set_device nor device_id= told it. The guess is wrong whenever ranks are not numbered that way on a host (a scheduler that assigns ranks across nodes cyclically, fewer processes than GPUs, one GPU per process through CUDA_VISIBLE_DEVICES), and then two ranks share a GPU (\"Duplicate GPU detected\") or a barrier or the first collective hangs.",
		Fix:         "Call `torch.cuda.set_device(int(os.environ[\"LOCAL_RANK\"]))` before `init_process_group`, or pass `device_id=torch.device(\"cuda\", local_rank)` to it; for a barrier before any collective, `dist.barrier(device_ids=[local_rank])`.",
		Check:       "Print RANK, LOCAL_RANK, CUDA_VISIBLE_DEVICES and `torch.cuda.current_device()` on every rank right before init_process_group.",
		Links:       []Link{linkTroubleshoot},
	},
	{
		ID: "store-uniqueid-timeout", Title: "A rank waited in vain for rank 0's NCCL unique id", Severity: Error,
		// ProcessGroupNCCL.cpp (v2.6.0, broadcastUniqueNCCLID): "[r] is setting
		// up NCCL communicator and retrieving ncclUniqueId from [0] via c10d
		// key-value store by key 'K', but store->get('K') got error: ...".
		// Older releases spelled it "retreiving" (PyTorch 1.x logs in
		// NVIDIA/nccl#708 and pytorch/pytorch#82091 show it).
		Any:         []string{"retrieving ncclUniqueId from [0] via c10d key-value store", "retreiving ncclUniqueId from [0] via c10d key-value store"},
		Explanation: "Creating an NCCL communicator, this rank waited for rank 0 of the group to publish the communicator's unique id in the c10d store, and it never came. Rank 0 did not create that communicator: it crashed or exited first, is stuck or slow elsewhere (downloading, loading or tokenising data while the others wait in a barrier such as Hugging Face's main_process_first, compiling, another collective), or reached a different process group or collective first, because ranks create groups (new_group, device meshes) or call their first collective on them in a different order, or set up their devices differently (device_id= on some groups only, a device guessed from rank % GPU count). A store that cannot be reached gives the same error.",
		Fix:         "Read rank 0's log for its own error first. Then make every rank create its process groups in the same order and run the first collective of each in the same order, and give each rank its device before init_process_group (`torch.cuda.set_device(local_rank)` or `device_id=`, the same way for every group). Raise the timeout only if rank 0 is legitimately slow (the store waits as long as the group: init_process_group(timeout=...), deepspeed.init_distributed(timeout=...), --ddp_timeout), or preprocess the data once beforehand.",
		Check:       "Rank 0's output around the same time, TORCH_DISTRIBUTED_DEBUG=DETAIL (checks collective order), and that MASTER_ADDR:MASTER_PORT is reachable from this rank (`nc -zv $MASTER_ADDR $MASTER_PORT`).",
		Links:       []Link{linkTimeout, linkTroubleshoot},
	},
	{
		ID: "worker-signal", Title: "A worker process was ended by a signal", Severity: Error,
		// torchrun's summary (torch/distributed/elastic/multiprocessing/
		// errors/__init__.py: "Signal {n} ({name}) received by PID {pid}",
		// "exitcode  : -6 (pid: ...)") and its log line (api.py: "failed
		// (exitcode: -6) local_rank: 0 (pid: ...)").
		// UCX's and libSegFault's handlers print "Caught signal 7 (Bus
		// error: ...)" with a backtrace; the shell "Bus error (core dumped)".
		Any:         []string{") received by PID ", "failed (exitcode: -", "exitcode  : -", "Caught signal ", "Bus error (core dumped)"},
		Explanation: "torchrun reports that a worker died from a signal, not from a Python exception: the worker's own output before the summary holds the cause. The signal says where to look.",
		Fix:         "SIGABRT (-6): read the worker's last lines: PyTorch's NCCL watchdog aborts the process after a collective timeout or an NCCL error (\"taking the entire process down\"), a C++ exception does too (\"terminate called after throwing\"). SIGKILL (-9): host memory (the kernel's OOM killer, a Kubernetes OOMKilled or Slurm memory limit): lower host-memory use (DataLoader workers, pinned memory, checkpoint loading) or raise the limit. SIGBUS (-7): shared memory ran out, /dev/shm too small in a container: --shm-size=8g or --ipc=host (Kubernetes: emptyDir medium Memory at /dev/shm). SIGSEGV (-11): a crash in native code, often two builds of one library loaded together (NCCL, CUDA): check what the process loads. SIGTERM (-15): stopped from outside, usually because another rank failed first: find that rank's error.",
		Check:       "`dmesg -T | grep -i -E 'killed process|out of memory'` and the scheduler's reason (`kubectl describe pod`, `sacct -j JOB -o State,ExitCode`) for -9; `df -h /dev/shm` in the container for -7; the first error of every rank's log for -6 and -15.",
		Links:       []Link{linkTimeout, linkDevShm, linkTroubleshoot},
		Explain:     explainSignal,
	},
	{
		ID: "graph-capture-unsupported", Title: "NCCL refused to be captured in a CUDA graph", Severity: Error,
		// ncclCudaGetCapturingGraph (src/misc/strongstream.cc): the stream is
		// being captured but libnccl was built with CUDA < 11.3 or the
		// driver's CUDA version is < 11.3 (cudaDriverVersion < 11030).
		Any:      []string{"NCCL cannot be captured in a graph"},
		Messages: []string{"NCCL cannot be captured in a graph if either it wasn't built with CUDA runtime >= 11.3 or if the installed CUDA driver < R465."},
		Explanation: "A collective was issued while its stream was being captured into a CUDA graph (PyTorch's CUDA graphs, vLLM's and SGLang's graph capture, torch.compile's cudagraphs mode), and the NCCL library in use cannot be captured: it was built with a CUDA runtime older than 11.3, or the driver supports CUDA older than 11.3 (R465), so NCCL returns invalid usage. " +
			"The libnccl loaded is often not the one expected: a second copy (a system libnccl on LD_LIBRARY_PATH, a framework's own bundled NCCL built for an older CUDA) shadows the PyTorch wheel's.",
		Fix:   "Load a libnccl built with CUDA 11.3 or later (remove or reorder the older copy on the library path; in vLLM, VLLM_NCCL_SO_PATH names the one it loads) and use a driver of R465 or later; as a workaround run without CUDA graphs (vLLM --enforce-eager, SGLang --disable-cuda-graph).",
		Check: "The \"NCCL version 2.x.y+cudaZ\" and \"cudaDriverVersion\" lines of an NCCL_DEBUG=INFO log, `nvidia-smi` (driver), and `lsof -p PID | grep libnccl` (or `ldd`) for the library actually loaded.",
		Links: []Link{linkVersions, envLink("NCCL_DEBUG")},
		Explain: func(lines []LineRef, s *Summary) string {
			var parts []string
			for _, v := range s.Versions {
				if maj, min, ok := cudaRelease(v.CUDA); ok && (maj < 11 || maj == 11 && min < 3) {
					parts = append(parts, "NCCL "+v.Version+" here was built with CUDA "+v.CUDA+", older than 11.3.")
				}
			}
			if d, ok := leadingInt(s.CUDADriver); ok && d > 0 && d < 11030 {
				parts = append(parts, fmt.Sprintf("The driver supports CUDA %d.%d only (cudaDriverVersion %d).", d/1000, d%1000/10, d))
			}
			return strings.Join(parts, " ")
		},
	},
	{
		ID: "kernel-launch-refused", Title: "CUDA refused to launch NCCL's kernel", Severity: Error,
		// CUDACHECK/CUCHECK around cudaLaunchKernel(ExC) / cuLaunchKernelEx
		// in src/enqueue.cc (v2.19.3-1 enqueue.cc:1085-1090, v2.25.1-1
		// enqueue.cc:1500, v2.30.7-1 enqueue.cc:1839) print "Cuda failure
		// N '...'" there.
		// Only "invalid argument": 2.19's enqueue.cc also sets kernel
		// attributes at init, where "out of memory" and the "invalid
		// resource handle" after it (NVIDIA/TensorRT-LLM#1670) are
		// cuda-oom-nccl's.
		Any: []string{"enqueue.cc"},
		All: []string{"Cuda failure", "'invalid argument'"},
		// Out of memory is cuda-oom-nccl's; no code for the architecture
		// ("invalid device function", "no kernel image") gpu-arch-not-built's.
		None:        []string{"out of memory", "invalid device function", "no kernel image"},
		Explanation: "CUDA refused the launch of NCCL's collective kernel (enqueue.cc) with \"invalid argument\": the launch does not fit this GPU, because the NCCL build is older than the GPU and asks for more shared memory per block than it has, as NCCL 2.25 and older do on Blackwell (RTX 5090, RTX PRO 6000; \"ncclMaxSharedMem ... exceeds device/fn maxSharedMem\" at init).",
		Fix:         "Use an NCCL release that supports the GPU: 2.26 or later for Blackwell (a newer PyTorch or framework wheel, or `pip install -U nvidia-nccl-cu12` and make sure that copy is loaded).",
		Check:       "`python -c \"import torch; print(torch.cuda.get_device_name(), torch.cuda.get_device_capability(), torch.cuda.nccl.version())\"`, the \"NCCL version\" line of an NCCL_DEBUG=INFO log, and `grep ncclMaxSharedMem` in it.",
		Links:       []Link{linkVersions, linkTroubleshoot, envLink("NCCL_DEBUG")},
	},
	{
		ID: "shm-attach-failed", Title: "A rank could not open the shared-memory segment of its peer", Severity: Error,
		// "Error while %s shared memory segment %s (size %ld)" with
		// "attaching to" (shmutils.cc up to 2.29, os/linux.cc in 2.30):
		// the peer created the segment, this rank could not open it.
		Any: []string{"Error while attaching to shared memory segment"},
		Explanation: "A rank could not open a host-memory segment a peer of its host created for it; /dev/shm is not full (that fails while creating). " +
			"Either the ranks share host memory in different ways: since NCCL 2.24 host buffers are cuMem allocations by default (with a driver for CUDA 12.6 or later), and since 2.26.3 a process whose probe of them fails falls back to /dev/shm files (\"cuMem host allocations do not appear to be working\"), as on hosts with memoryless NUMA nodes or containers that hide NUMA; a rank then reads its peer's cuMem handle as a file name, empty or garbled, of size 0. " +
			"Or the ranks do not see one /dev/shm (separate containers or pods without a shared IPC namespace), or the peer already exited.",
		Fix:   "Set NCCL_CUMEM_HOST_ENABLE=0 on every rank (all ranks then use /dev/shm files, as releases before 2.24 do), or fix the NUMA layout (populate the memory channels, one NUMA node per socket in the BIOS); run the ranks of a host in one container, or start the containers with --ipc=host (Kubernetes: one pod, or hostIPC); look for an earlier error on the peer if it exited first.",
		Check: "`numactl -H` (a node with CPUs and 0 MB, or memory without CPUs), `grep -i cumem` in an NCCL_DEBUG=INFO log of every rank (which ranks fell back to /dev/shm), `ls -la /dev/shm` in each container, and a rerun with NCCL_CUMEM_HOST_ENABLE=0.",
		Links: []Link{envLink("NCCL_CUMEM_HOST_ENABLE"), linkDevShm, linkSHM},
		Explain: func(lines []LineRef, s *Summary) string {
			for _, l := range lines {
				if strings.Contains(l.Text, "(size 0)") || garbledShmName(l.Text) {
					return "Here the name is empty or garbled and the size 0: the ranks disagree on cuMem host memory; set NCCL_CUMEM_HOST_ENABLE=0 everywhere."
				}
			}
			return ""
		},
	},
	{
		ID: "collective-mismatch", Title: "TORCH_DISTRIBUTED_DEBUG=DETAIL caught ranks calling different collectives", Severity: Error,
		// ProcessGroupWrapper.cpp (v2.6.0, verify_tensors): "Detected
		// mismatch between collectives on ranks. Rank %d is running
		// collective: %s, but Rank %d is running collective: %s." and
		// compute_collective_diff's "Collectives differ in the following
		// aspects: ..."; before PyTorch 1.13 "Rank %d is running
		// inconsistent collective: %s".
		Any:         []string{"Detected mismatch between collectives on ranks"},
		Explanation: "With TORCH_DISTRIBUTED_DEBUG=DETAIL every collective is first compared across the ranks of its group (op type, sequence number, tensor shapes, dtypes and devices, through a Gloo all-gather), and this one differs: without the check the ranks would hang in NCCL until the watchdog's timeout, or exchange buffers of different sizes. The error is raised where the collective was called, so the traceback of each named rank shows the line that made it.",
		Fix:         "Make every rank issue the same collectives in the same order with the same shapes and dtypes: no collective inside a branch taken on some ranks only (rank 0's logging, evaluation or checkpointing, an early exit, uneven numbers of batches: DistributedSampler with drop_last, or Join), process groups created and used in the same order everywhere, inputs padded to one size before all_gather and all_reduce, one model and precision configuration on every rank (parameters unused or frozen on some ranks change DDP's buckets).",
		Check:       "The traceback of both named ranks (which call of which line differs); print the tensor shape and a per-rank call counter before the collective; turn DETAIL off again afterwards (its extra all-gather per collective slows training).",
		Links:       []Link{linkMismatched, envLink("TORCH_DISTRIBUTED_DEBUG")},
		Explain:     explainCollectiveMismatch,
	},
}

// fingerprint is one rank's side of ProcessGroupWrapper's report: its
// CollectiveFingerPrint(SequenceNumber=.., OpType=.., TensorShape=[..],
// TensorDtypes=.., TensorDeviceTypes=..), "" or -1 for what it leaves out.
type fingerprint struct {
	rank              int
	seq               int64
	op, shape, dtype  string
	device            string
	tensors, complete bool
}

// readFingerprint reads the rank number at s and the fingerprint after it
// (up to end).
func readFingerprint(s string) fingerprint {
	f := fingerprint{rank: -1, seq: -1}
	if n, ok := leadingInt(s); ok {
		f.rank = n
	}
	_, fp, ok := strings.Cut(s, "CollectiveFingerPrint(")
	if !ok {
		return f
	}
	f.complete = true
	if v, ok := int64After(fp, "SequenceNumber="); ok {
		f.seq = v
	}
	field := func(key string, stop string) string {
		_, v, ok := strings.Cut(fp, key)
		if !ok {
			return ""
		}
		if i := strings.Index(v, stop); i >= 0 {
			return v[:i]
		}
		return strings.TrimRight(v, ")")
	}
	f.op = field("OpType=", ",")
	if i := strings.IndexByte(f.op, ')'); i >= 0 {
		f.op = f.op[:i]
	}
	f.tensors = strings.Contains(fp, "TensorShape=[")
	f.shape = field("TensorShape=[", "]")
	f.dtype = field("TensorDtypes=", ", TensorDeviceTypes=")
	f.device = field("device=", ",")
	return f
}

// ddpBufferBroadcast reads a BROADCAST whose size differs between ranks
// as DDP's buffer broadcast (modelscope/ms-swift#10183, fixed by #10187).
const ddpBufferBroadcast = "In a DDP job a BROADCAST during training is most often DDP's broadcast of the module's buffers from rank 0 (broadcast_buffers=True, before each forward): a buffer that differs in size between ranks, such as one registered or resized on some ranks only (a cache grown from each rank's inputs), gives this. Give the buffer one shape on every rank, or keep it out of DDP's broadcast (broadcast_buffers=False, or its name in DistributedDataParallel._set_params_and_buffers_to_ignore_for_model before wrapping)."

// mismatchMark starts ProcessGroupWrapper's report of a mismatch.
const mismatchMark = "Detected mismatch between collectives on ranks. Rank "

// explainCollectiveMismatch gives the reading of the report's first line.
func explainCollectiveMismatch(_ []LineRef, s *Summary) string { return s.mismatch }

// readCollectiveMismatch names the two ranks of ProcessGroupWrapper's
// report on one line, what each ran and the fields in which they differ,
// and says what those differences usually mean; "" if it names no rank.
func readCollectiveMismatch(line string) string {
	_, rest, _ := strings.Cut(line, mismatchMark)
	if i := strings.Index(rest, ".Collectives differ"); i >= 0 {
		rest = rest[:i]
	}
	first, second, _ := strings.Cut(rest, ", but Rank ")
	a := readFingerprint(first)
	if a.rank < 0 {
		return ""
	}
	if second == "" {
		return fmt.Sprintf("Rank %d reports it (%s); the log does not show the other rank's side.", a.rank, a.describe())
	}
	b := readFingerprint(second)
	out := fmt.Sprintf("Rank %d runs %s, rank %d %s.", a.rank, a.describe(), b.rank, b.describe())
	if !a.complete || !b.complete {
		return out
	}
	var diff []string
	add := func(name, x, y string) {
		if x != y {
			if x == "" {
				x = "none"
			}
			if y == "" {
				y = "none"
			}
			diff = append(diff, fmt.Sprintf("%s (%s vs %s)", name, x, y))
		}
	}
	add("sequence number", strconv.FormatInt(a.seq, 10), strconv.FormatInt(b.seq, 10))
	add("op type", a.op, b.op)
	add("tensor shape", a.shapeText(), b.shapeText())
	add("dtype", a.dtype, b.dtype)
	add("device", a.device, b.device)
	if len(diff) == 0 {
		return out
	}
	out += " They differ in " + strings.Join(diff, ", ") + "."
	switch {
	case a.op != b.op || a.seq != b.seq:
		out += " Different op types or sequence numbers: the two ranks have not made the same calls on this group, one has called more collectives than the other (a call on some ranks only, an extra step or batch) or they reached different calls."
		for _, f := range []fingerprint{a, b} {
			// broadcast_object_list (and broadcast_object) starts with a
			// BROADCAST of the objects' sizes, one Long each.
			if f.op == "BROADCAST" && f.dtype == "Long" && a.op != b.op {
				out += fmt.Sprintf(" Rank %d's BROADCAST of Long sizes is most often the start of broadcast_object_list: Python objects (a checkpoint directory, a decision, metrics) broadcast on a path the other rank does not take, such as a save or log run on the main process only whose code broadcasts; call it on every rank.", f.rank)
				break
			}
		}
	case a.shapeText() != b.shapeText():
		out += " The same collective with tensors of different shapes: the data or the model differs between the ranks (uneven batches or sequence lengths, a buffer or parameter whose size depends on the rank's inputs)."
		if a.op == "BROADCAST" {
			out += " " + ddpBufferBroadcast
		}
	case a.dtype != b.dtype:
		out += " The same collective with different dtypes: the ranks run different precision settings or cast differently."
	}
	return out
}

// shapeText is the first tensor's shape in brackets, "" with no tensors.
func (f fingerprint) shapeText() string {
	if !f.tensors {
		return ""
	}
	return "[" + f.shape + "]"
}

// describe says what one rank's fingerprint ran: "#3104 ALLREDUCE of
// [195812480] BFloat16".
func (f fingerprint) describe() string {
	if !f.complete {
		return "a collective the log cuts off"
	}
	out := f.op
	if f.seq >= 0 {
		out = fmt.Sprintf("#%d %s", f.seq, f.op)
	}
	if f.tensors {
		out += " of " + f.shapeText()
		if f.dtype != "" {
			out += " " + f.dtype
		}
	} else {
		out += " (no tensors)"
	}
	return out
}

// garbledShmName reports whether the /dev/shm/nccl- name on the line is
// not the six letters and digits mkstemp makes (an empty or binary suffix).
func garbledShmName(text string) bool {
	i := strings.Index(text, "/dev/shm/nccl-")
	if i < 0 {
		return false
	}
	name := text[i+len("/dev/shm/nccl-"):]
	n := 0
	for n < len(name) && n < 6 {
		c := name[n]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			break
		}
		n++
	}
	return n < 6
}

// errorClass is what an ncclResult_t usually means in the field, with the
// fix or variable to check for each common cause: the text the nccl-error
// diagnosis adds when it knows the class.
type errorClass struct {
	name   string // ncclResult_t name (nccl.h)
	causes string
}

// errorClasses are keyed by ncclResult_t code (data/messages/nccl-results.tsv).
var errorClasses = map[int]errorClass{
	1: {"ncclUnhandledCudaError", "A CUDA call inside NCCL failed (\"unhandled cuda error\"); the \"Cuda failure '...'\" line of NCCL_DEBUG=WARN names it. Common causes: GPU memory exhausted when the communicator allocates its buffers, by this job or by another process on the same GPUs (`nvidia-smi` lists them; leave headroom, NCCL_BUFFSIZE=2097152, NCCL_NVLS_ENABLE=0); no kernel image for this GPU in the NCCL or PyTorch build (compare `torch.cuda.get_device_capability()` with `torch.cuda.get_arch_list()`; a GPU newer than the release needs a newer NCCL); a CUDA driver older than the runtime, or an NCCL package built for a newer CUDA than the system's (`nvidia-smi` against `torch.version.cuda` and the +cudaX.Y of the libnccl package); CUDA initialised before the processes were forked (use the spawn start method); an earlier GPU fault (`dmesg | grep -i xid`); or, with NCCL 2.18.1-2.18.5, a bug fixed in 2.18.6 (\"Cuda failure 'invalid argument'\" while connecting channels): use 2.18.6 or later."},
	2: {"ncclSystemError", "A system call or library call failed (\"unhandled system error\"); NCCL_DEBUG=WARN prints which. The most common cause inside a container is a /dev/shm too small for NCCL's shared-memory segments (Docker's default is 64 MB): start the container with --ipc=host or --shm-size=1g (Kubernetes: an emptyDir with medium: Memory at /dev/shm) and check with `df -h /dev/shm`; NCCL_SHM_DISABLE=1 as a test. Others: the locked-memory limit for RDMA registrations (`ulimit -l` must be unlimited; Docker --ulimit memlock=-1), no usable network interface (NCCL_SOCKET_IFNAME), too few file descriptors (`ulimit -n`), or a missing libibverbs/net plugin."},
	3: {"ncclInternalError", "NCCL hit a state it does not expect (\"internal error\"). In practice: two NCCL releases in one job or process (one libnccl everywhere: `pip list | grep nccl`, `torch.cuda.nccl.version()` on every node), a topology or tuner/net plugin file that does not fit the machine (NCCL_TOPO_FILE, NCCL_NET_PLUGIN, NCCL_TUNER_PLUGIN), a peer that sent garbage because it crashed, or an NCCL bug; the WARN lines of NCCL_DEBUG=INFO just before it say which. \"Please report this issue\" is every internal error's wording since 2.18; with 2.18 it often stands for another failure (an NCCL maintainer's advice: rerun with NCCL_DEBUG=WARN), and another NCCL release may not fail."},
	4: {"ncclInvalidArgument", "A call passed an argument NCCL refuses (\"invalid argument\"): a buffer on another device than the communicator's GPU (set the device before allocating: `torch.cuda.set_device(local_rank)`), a count or datatype the operation does not take, or a communicator already destroyed or aborted; NCCL_DEBUG=WARN prints which argument."},
	5: {"ncclInvalidUsage", "NCCL refused how it is used (\"invalid usage\"). Common causes: two ranks on one GPU (call `torch.cuda.set_device(int(os.environ[\"LOCAL_RANK\"]))` before init_process_group, or pass device_id=; cudaSetDevice(local rank) before ncclCommInitRank in C/C++; check CUDA_VISIBLE_DEVICES per rank), ranks running different NCCL releases (one libnccl everywhere), a GPU or driver the release does not support, or collectives issued in a different order or from two threads on one communicator. NCCL_DEBUG=WARN prints the reason (\"Duplicate GPU detected\", \"Mismatched NCCL version\")."},
	6: {"ncclRemoteError", "A peer went away or the network failed (\"remote process exited or there was a network error\"): this rank is usually a victim; find the first error in the logs of all ranks (a crash, an out-of-memory kill, a timeout elsewhere). If all ranks report it together, suspect the network: NCCL_SOCKET_IFNAME, NCCL_IB_TIMEOUT, link errors (`ibv_devinfo`, `dmesg`)."},
	8: {"ncclTimeout", "An NCCL operation timed out (\"timeout\"): a peer never joined it (crashed, stuck, or took another code path) or the network stalled; compare the last collective of every rank (flight recorder: TORCH_NCCL_TRACE_BUFFER_SIZE=2000, TORCH_NCCL_DUMP_ON_TIMEOUT=1)."},
}

var (
	resultKeysOnce sync.Once
	resultKeys     []resultKey
)

// resultKey is the lower-case ncclGetErrorString text of one result without
// its "(run with NCCL_DEBUG=... for details)" or " - please report ..." tail:
// the part every release since 2.4 prints, however the caller re-raises it.
type resultKey struct {
	code       int
	text, name string
}

// resultTexts returns the result keys from the catalog (ncclSuccess and
// ncclInProgress left out: neither is an error a user pastes).
func resultTexts() []resultKey {
	resultKeysOnce.Do(func() {
		cat, err := ncclmsg.Default()
		if err != nil {
			return
		}
		for _, r := range cat.Results {
			if r.Code == 0 || r.Code == 7 {
				continue
			}
			t := strings.ToLower(r.Text)
			if i := strings.Index(t, " ("); i > 0 {
				t = t[:i]
			}
			if i := strings.Index(t, " - "); i > 0 {
				t = t[:i]
			}
			resultKeys = append(resultKeys, resultKey{code: r.Code, text: t, name: strings.ToLower(r.Name)})
		}
	})
	return resultKeys
}

// errorReportContexts are the ways callers report an ncclResult_t, lower
// case: PyTorch's C10D_NCCL_CHECK ("NCCL error in: ..., unhandled system
// error") and torch.cuda.nccl ("NCCL Error 2: unhandled system error"),
// nccl-tests ("Test NCCL failure common.cu:777 'unhandled system error'"),
// Horovod and NCCL's own API users ("ncclCommInitRank failed: invalid
// usage"), vLLM's pynccl ("NCCL error: unhandled cuda error"), and the
// second half of PyTorch's message when a paste breaks it after the file
// name ("internal error - please report ..., NCCL version 2.19.3").
var errorReportContexts = []string{"nccl error", "nccl failure", "failed: ", "failed with error", "nccl version ", "ncclunhandledcudaerror",
	"ncclsystemerror", "ncclinternalerror", "ncclinvalidargument", "ncclinvalidusage", "ncclremoteerror"}

// ncclErrorClass returns the ncclResult_t code a non-NCCL line reports
// (PyTorch, nccl-tests, Horovod, vLLM output), or 0. NCCL's own WARN and
// INFO lines are left to their rules: "NCCL WARN Cuda failure 'invalid
// argument'" is a CUDA error, not an NCCL one.
func ncclErrorClass(raw string) int {
	if len(raw) > 4096 || strings.Contains(raw, "NCCL WARN") || strings.Contains(raw, "NCCL INFO") || strings.Contains(raw, "NCCL TRACE") {
		return 0
	}
	low := strings.ToLower(raw)
	if !strings.Contains(low, "nccl") {
		return 0
	}
	if i := strings.Index(low, "nccl error "); i >= 0 {
		// "NCCL Error 2: unhandled system error" (torch.cuda.nccl).
		if n, ok := leadingInt(low[i+len("nccl error "):]); ok && n > 0 && n < 9 {
			if _, known := errorClasses[n]; known {
				return n
			}
		}
	}
	if !containsAny(low, errorReportContexts) {
		return 0
	}
	for _, k := range resultTexts() {
		// "timeout" alone is every watchdog line's word: only the name.
		if strings.Contains(low, k.name) || (k.code != 8 && strings.Contains(low, k.text)) {
			return k.code
		}
	}
	return 0
}

// scanTorchRules files the lines that report an NCCL error class but that
// the NCCL-keyed filter skips ("ncclCommInitRank failed: unhandled system
// error" holds no upper-case NCCL).
func (p *parser) scanTorchRules(n int, raw string) {
	if p.s.newGPU.Count < 4 && namesBlackwell(raw) {
		p.add(&p.s.newGPU, n, raw)
	}
	if strings.Contains(raw, "Test NCCL failure") || strings.Contains(raw, "Test CUDA failure") {
		p.add(&p.s.testFailure, n, raw)
	}
	if p.s.mismatch == "" && strings.Contains(raw, mismatchMark) {
		p.s.mismatch = readCollectiveMismatch(controls.Prefix(raw, 8192))
	}
	if strings.Contains(raw, "NCCL") || ncclErrorClass(raw) == 0 {
		return
	}
	p.add(&p.s.NCCLErrors, n, raw)
}

// blackwellNames are lower-case marks of a Blackwell GPU (compute
// capability 10.x or 12.x) in device lists, nvidia-smi output, PyTorch's
// capability warnings and issue text.
var blackwellNames = []string{"blackwell", "sm_120", "sm_100", "sm_101", "rtx pro 6000", "gb200", "gb300", "nvidia b200", "nvidia b300"}

// namesBlackwell reports whether a line names a Blackwell GPU: one of
// blackwellNames or a GeForce "RTX 50x0".
func namesBlackwell(raw string) bool {
	if len(raw) > 4096 {
		return false
	}
	low := strings.ToLower(raw)
	if containsAny(low, blackwellNames) {
		return true
	}
	for i := strings.Index(low, "rtx 50"); i >= 0; {
		t := low[i+len("rtx 50"):]
		if len(t) >= 2 && t[0] >= '5' && t[0] <= '9' && t[1] == '0' && (len(t) == 2 || t[2] < '0' || t[2] > '9') {
			return true
		}
		j := strings.Index(t, "rtx 50")
		if j < 0 {
			break
		}
		i += len("rtx 50") + j
	}
	return false
}

// ncclErrorCauses explains the error classes of the lines PyTorch and other
// callers reported: the common causes of each, with their fixes, and, for a
// CUDA or usage error on a log that names a Blackwell GPU, the releases it
// needs.
func ncclErrorCauses(s *Summary) string {
	lines := s.NCCLErrors.Lines
	seen := map[int]bool{}
	var codes []int
	for _, l := range lines {
		if c := ncclErrorClass(l.Text); c > 0 && !seen[c] {
			seen[c] = true
			codes = append(codes, c)
		}
	}
	var b strings.Builder
	told := false
	for _, c := range codes {
		ec := errorClasses[c]
		fmt.Fprintf(&b, " %s (%s): %s", ec.name, strconv.Itoa(c), ec.causes)
		if (c == 1 || c == 4 || c == 5) && !s.newGPU.Empty() && !told {
			told = true
			b.WriteString(" The log names a Blackwell GPU (compute capability 10.x/12.x, e.g. RTX 5090, RTX PRO 6000, B200): that needs CUDA 12.8 builds, PyTorch 2.7 or later (https://download.pytorch.org/whl/cu128) and NCCL 2.26 or later; older wheels fail exactly like this.")
		}
	}
	return b.String()
}

// explainDriverVersion reads PyTorch's "(found version 11000)": the CUDA
// version the driver supports, as cudaDriverGetVersion returns it
// (1000*major + 10*minor).
func explainDriverVersion(lines []LineRef, s *Summary) string {
	for _, l := range lines {
		i := strings.Index(l.Text, "(found version ")
		if i < 0 {
			continue
		}
		if v, ok := leadingInt(l.Text[i+len("(found version "):]); ok && v >= 1000 {
			return fmt.Sprintf("The driver supports CUDA up to %d.%d (found version %d); the PyTorch build needs its own CUDA version or newer (torch.version.cuda): install a driver for that CUDA release, or a PyTorch build for CUDA %d.%d or older.", v/1000, v%1000/10, v, v/1000, v%1000/10)
		}
	}
	return ""
}

// cudaRelease reads "11.0" (VersionSeen.CUDA, from "NCCL version
// 2.18.1+cuda11.0"), with or without the "cuda" prefix.
func cudaRelease(s string) (major, minor int, ok bool) {
	return majorMinor(strings.TrimPrefix(s, "cuda"))
}

// signalNames are the signals torchrun reports most (Linux numbers).
var signalNames = map[int]string{6: "SIGABRT", 7: "SIGBUS", 9: "SIGKILL", 11: "SIGSEGV", 15: "SIGTERM"}

// explainSignal names the signal of the first evidence line that gives
// one, and ties SIGABRT to a watchdog timeout when the log has one.
func explainSignal(lines []LineRef, s *Summary) string {
	for _, l := range lines {
		n := 0
		if strings.Contains(l.Text, "Bus error") {
			n = 7
		}
		for _, key := range []string{"Signal ", "signal ", "exitcode: -", "exitcode  : -"} {
			if n != 0 {
				break
			}
			if i := strings.Index(l.Text, key); i >= 0 {
				if v, ok := leadingInt(l.Text[i+len(key):]); ok {
					n = v
					break
				}
			}
		}
		name, ok := signalNames[n]
		if !ok {
			continue
		}
		out := fmt.Sprintf("Here the signal is %d (%s).", n, name)
		if n == 7 {
			out += " A bus error on shared memory means the file behind it could not get pages: in a container, /dev/shm is full (64 MB by default in Docker); start it with --shm-size or --ipc=host."
		}
		if n == 6 && (len(s.Timeouts) > 0 || !s.TimeoutLines.Empty() || !s.TearDown.Empty()) {
			out += " The log also shows the NCCL watchdog's timeout or teardown: that abort is its doing, and the collective timeout is the failure to explain."
		}
		return out
	}
	return ""
}

// timeoutOrigin names the ranks whose watchdog detected the timeout, as
// the heartbeat monitors of the other ranks report it ("Received a dump
// signal due to a collective timeout from rank 3 ..."; "from this local
// rank" on the rank itself). It returns "" when no line says.
func timeoutOrigin(lines []LineRef) string {
	// v2.6.0 writes "from " + " rank N" (two spaces); 2.3-2.4 "Received a
	// timeout signal from this local rank".
	const key = "collective timeout from"
	seen := map[int]bool{}
	var ranks []string
	self := 0
	for _, l := range lines {
		if strings.Contains(l.Text, "from this local rank") {
			self++
		}
		i := strings.Index(l.Text, key)
		if i < 0 {
			continue
		}
		rest, ok := strings.CutPrefix(strings.TrimLeft(l.Text[i+len(key):], " "), "rank ")
		if !ok {
			continue
		}
		if r, ok := leadingInt(rest); ok && !seen[r] && len(ranks) < 8 {
			seen[r] = true
			ranks = append(ranks, strconv.Itoa(r))
		}
	}
	switch {
	case len(ranks) > 0:
		return " The timeout was detected first by rank " + strings.Join(ranks, ", rank ") + "; the other ranks were told through the store and dumped their state: start reading at that rank's log, and at the ranks its collective was waiting for."
	case self > 0:
		return fmt.Sprintf(" %d line(s) say the timeout was detected on the rank that printed them (\"from this local rank\").", self)
	}
	return ""
}

// dataLoaderShm reports whether the /dev/shm failures are all PyTorch
// DataLoader messages (torch/csrc/DataLoader.cpp) rather than NCCL's.
func dataLoaderShm(lines []LineRef) bool {
	for _, l := range lines {
		if !strings.Contains(l.Text, "DataLoader worker") && !strings.Contains(l.Text, "bus error encountered in worker") {
			return false
		}
	}
	return len(lines) > 0
}

// blackwellOldNCCL names gpu-newer-than-nccl from the versions alone: the
// log names a Blackwell GPU and an NCCL release before 2.26, the first to
// support it (RTX 5090, RTX PRO 6000), even when the "ncclMaxSharedMem ...
// exceeds" line that the line rule reads is missing (NCCL_DEBUG=WARN, or an
// excerpt). It stays silent when that line rule fired.
func (d *diagnoser) blackwellOldNCCL() (Diagnosis, bool) {
	s := d.s
	if s.newGPU.Empty() || s.ruleHits["gpu-newer-than-nccl"] != nil {
		return Diagnosis{}, false
	}
	var old []VersionSeen
	for _, v := range s.Versions {
		if releaseBefore(v.Version, 2, 26) {
			old = append(old, v)
		}
	}
	if len(old) == 0 {
		return Diagnosis{}, false
	}
	var ev evidence
	ev.add(s.newGPU.Lines[0])
	for _, v := range old {
		ev.add(v.Line)
	}
	return Diagnosis{ID: "gpu-newer-than-nccl", Severity: Error, Title: "The GPU is newer than this NCCL release",
		Explanation: "The log names a Blackwell GPU and NCCL " + old[0].Version + ", a release before 2.26, the first that supports Blackwell GeForce and RTX PRO boards (sm_120): its kernels ask for more shared memory than the GPU has, so collectives fail (\"invalid argument\") or hang. Fix: upgrade NCCL to 2.26 or later (PyTorch 2.7+ cu128 wheels bring it, or `pip install -U nvidia-nccl-cu12` and make sure that copy is loaded). Check: `python -c \"import torch; print(torch.cuda.nccl.version(), torch.cuda.get_device_capability())\"` and the \"NCCL version\" line of every rank.",
		Evidence:    ev.list(), Links: links(linkVersions, envLink("NCCL_DEBUG"))}, true
}

// releaseBefore reports whether version "2.25.1" is older than
// major.minor.
func releaseBefore(version string, major, minor int) bool {
	ma, mi, ok := majorMinor(version)
	return ok && (ma < major || ma == major && mi < minor)
}
