package doctor

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/distributed-nav/distributed-nav/playground/ncclmsg"
)

// Rule is one failure the doctor names from the text of a log, in the
// manner of a lexer registry: a small value per rule, listed in lineRules.
// Any (substrings, any of which marks a line) and All (substrings the line
// must also hold) select the evidence lines; every line of the log is
// tried, NCCL's own lines and what PyTorch, launchers and tracebacks print
// around them alike, so a message re-raised by PyTorch after "Last error:"
// is found too. Explain may refine the explanation from the evidence (the
// IB status number, the distance); Fix is what to change and Check the
// command that confirms the cause. All three end up in the diagnosis text.
type Rule struct {
	ID       string
	Title    string
	Severity Severity
	Any      []string
	All      []string
	// None are substrings that exclude a line (another rule explains it).
	None []string
	// Match, when set, is a further test a line may pass instead of
	// Any/All/None, for wordings substrings cannot express.
	Match func(line string) bool
	// Messages are catalog formats (package ncclmsg, any release): an NCCL
	// line the catalog ties to one of them is evidence whatever its
	// wording in the release that printed it. TestRuleMessagesInCatalog
	// checks that each names a real entry.
	Messages []string
	// Explanation says what the evidence means.
	Explanation string
	Fix         string
	Check       string
	Links       []Link
	// Explain, when set, returns extra sentences computed from the
	// evidence lines (in order) and the summary.
	Explain func(lines []LineRef, s *Summary) string
}

// unproven lists the diagnoses that fewer than two published logs with a
// confirmed cause (data/logs/*.note) support so far. Their explanation
// says so, in the CLI and on the page alike; TestRuleSupport keeps the list
// in step with the notes, so a new note that makes a rule proven fails the
// test until the rule leaves the list. The environment checks (env-*) rest
// on the variable tables, and nccl-warn only lists what nothing explains,
// so neither is counted.
var unproven = map[string]bool{
	"nvls-setup-hang":       true,
	"nccl-version-mismatch": true, "timeout-desync": true, "flight-recorder-off": true,
	"peer-connection-lost": true, "intra-node-net": true, "nic-wrong-socket": true,
	"few-channels": true, "env-not-applied": true, "nccl-tests-result": true,
	"kernel-launch-refused": true, "graph-capture-unsupported": true, "worker-signal": true,
}

// unprovenNote is appended to the explanation of an unproven diagnosis.
const unprovenNote = " (Unproven: fewer than two published logs with a confirmed cause support this diagnosis so far.)"

// Unproven reports whether a diagnosis ID rests on fewer than two published
// logs with a confirmed cause.
func Unproven(id string) bool { return unproven[id] }

// Rules returns the line rules in the order they are tried.
func Rules() []Rule { return append([]Rule(nil), lineRules...) }

var lineRules = []Rule{
	{
		ID: "gpu-newer-than-nccl", Title: "The GPU is newer than this NCCL release", Severity: Error,
		Any: []string{"exceeds device/fn maxSharedMem"},
		Messages: []string{"cudaArch %d dynamic smem %d exceeds device/fn maxSharedMem %d",
			"cudaArch %d ncclMaxSharedMem %d exceeds device/fn maxSharedMem %zu", "ncclMaxSharedMem %d exceeds device/fn maxSharedMem %zu"},
		Explanation: "NCCL's kernels were built for GPU architectures older than this one: they ask for more shared memory per block than the device allows (\"ncclMaxSharedMem ... exceeds device/fn maxSharedMem\"), so every collective fails or hangs. This is what an RTX 5090 / RTX PRO 6000 (Blackwell, sm_120) shows with NCCL 2.25 and older.",
		Fix:         "Upgrade NCCL to a release that supports the GPU (2.26 or later for Blackwell GeForce/RTX PRO: a newer PyTorch wheel, or `pip install -U nvidia-nccl-cu12` and make sure that copy is the one loaded).",
		Check:       "`python -c \"import torch; print(torch.cuda.nccl.version(), torch.cuda.get_device_capability())\"` and the \"NCCL version\" line of the log against the GPU's compute capability.",
		Links:       []Link{linkVersions, envLink("NCCL_DEBUG")},
	},
	{
		ID: "gpu-arch-not-built", Title: "NCCL or PyTorch has no GPU code for this GPU's architecture", Severity: Error,
		// "named symbol not found" (cudaErrorSymbolNotFound): NCCL's queries
		// of its own kernels' attributes at init (enqueue.cc) find no code
		// for the device.
		Any: []string{"invalid device function", "no kernel image is available for execution on the device", "cudaErrorNoKernelImageForDevice", "cudaErrorInvalidDeviceFunction", "named symbol not found",
			// PyTorch's own checks at CUDA start (torch/cuda/__init__.py,
			// _check_cubins and _check_capability).
			"is not compatible with the current PyTorch installation", "The current PyTorch install supports CUDA capabilities",
			"PyTorch no longer supports this GPU because it is too old"},
		Explanation: "A CUDA kernel could not be launched because the library holds no code for the GPU's compute capability: CUDA answers \"invalid device function\", \"no kernel image is available\" or, when NCCL looks up its kernels at init, \"named symbol not found\" (an NCCL built with an NVCC_GENCODE that leaves this GPU out). Either the GPU is older than the architectures the NCCL/PyTorch build still targets (Kepler sm_35/sm_37 left the prebuilt wheels with CUDA 11, Maxwell and Pascal leave later ones), or it is newer than the build (Blackwell sm_100/sm_120 before CUDA 12.8 builds and NCCL 2.26).",
		Fix:         "Use a build compiled for this compute capability: for an old GPU an older PyTorch/NCCL release that still ships its architecture, or build NCCL from source with NVCC_GENCODE=\"-gencode=arch=compute_35,code=sm_35\" (your GPU's value); for a new GPU a newer release (Blackwell, sm_100/sm_120, needs a CUDA 12.8 build: PyTorch 2.7 or later from https://download.pytorch.org/whl/cu128, and NCCL 2.26 or later).",
		Check:       "`python -c \"import torch; print(torch.cuda.get_device_capability(), torch.cuda.get_arch_list(), torch.cuda.nccl.version())\"`: the capability must be in the arch list; `cuobjdump --list-elf libnccl.so.2` lists the architectures NCCL was built for.",
		Links:       []Link{linkVersions, linkTroubleshoot},
		Explain:     explainArchList,
	},
	{
		ID: "ib-async-event", Title: "The RDMA NIC reported an asynchronous error", Severity: Error,
		Any: []string{"Got async event", "async fatal event"},
		Messages: []string{"NET/IB : Got async event : %s", "NET/IB : %s:%d Got async event : %s", "NET/IB : %s:%d async fatal event: %s",
			"NET/IB : %s:%d async fatal event on QP (%p): %s", "NET/IB : %s:%d async fatal event on CQ (%p): %s",
			"NET/IB : %s:%d async fatal event on QP (%p) qpn=%u handle=%u send_cq=%u recv_cq=%u state=%d sq_psn=%u rq_psn=%u: %s",
			"NET/IB : %s:%d async fatal event on CQ (%p) handle=%u cqe=%d: %s", "NET/IB : %s:%d Got non-fatal async event: %s(%d)"},
		Explanation: "The verbs library delivered an asynchronous event for an RDMA port, queue pair or the whole NIC: something failed outside any one transfer, and the completion errors and timeouts that follow are its consequences.",
		Fix:         "Port errors: repair the link of the host and port that print them (reseat or replace the cable or transceiver, check the switch port and the subnet manager). Access or request errors on a queue pair: give the ports of both hosts and the switches one MTU, and check PCIe ACS for GPUDirect RDMA. Catastrophic errors: the NIC itself (firmware update, adapter reset, dmesg).",
		Check:       "`ibv_devinfo -v | grep -E 'state|active_mtu'` on both hosts, `ibqueryerrors` or `perfquery -x` (LinkDownedCounter, SymbolErrorCounter, PortRcvErrors) and `dmesg | grep -i -E 'mlx5|link'` on the host that prints the event.",
		Links:       []Link{linkNIC, envLink("NCCL_IB_TIMEOUT"), envLink("NCCL_IB_HCA")},
		Explain:     explainAsyncEvent,
	},
	{
		ID: "transfer-size-mismatch", Title: "The two ends of a transfer disagree on its size", Severity: Error,
		Any: []string{"collective mismatch error", "message truncated : receiving", "Message truncated : received"},
		Messages: []string{"NET/IB : req %d/%d tag %x peer %s collective mismatch error, local size %d remote size %d",
			"NET/Socket : peer %s message truncated : receiving %d bytes instead of %d. If you believe your socket network is in a healthy state, there may be a mismatch in collective sizes or environment settings (e.g. NCCL_PROTO, NCCL_ALGO) between ranks",
			bootstrapTruncated},
		Explanation: "A rank received more or less data than its peer sent: the two sides of one connection cut the transfer differently. Either the ranks are not running the same collective with the same size (calls in a different order, tensors of different shapes), or a setting that decides how NCCL splits the data differs between ranks: NCCL_PROTO, NCCL_ALGO, NCCL_BUFFSIZE, chunk sizes, or two NCCL releases in one job.",
		Fix:         "Give every rank the same NCCL_* environment and one NCCL release (compare `env | grep NCCL` and the loaded libnccl on every node, including /etc/nccl.conf and ~/.nccl.conf), then check that all ranks issue the same collectives with the same sizes.",
		Check:       "Run with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=ENV,INIT on all nodes and compare the \"set by environment\" lines and NCCL versions; TORCH_DISTRIBUTED_DEBUG=DETAIL checks collective shapes across ranks.",
		Links:       []Link{linkMismatched, linkIgnoredEnv, envLink("NCCL_PROTO"), envLink("NCCL_ALGO"), envLink("NCCL_BUFFSIZE")},
		Explain:     explainTruncation,
	},
	{
		ID: "duplicate-gpu", Title: "Two ranks on one GPU", Severity: Error,
		// "Last error:" re-raises carry the text without NCCL's prefix.
		Any: []string{"Duplicate GPU detected", "Multiple Ranks are using the same GPU"},
		Messages: []string{"Duplicate GPU detected : rank %d and rank %d both on CUDA device %lx",
			"Multiple Ranks are using the same GPU/Partition. Set NCCL_MULTI_RANK_GPU_ENABLE=1 to enable this configuration."},
		Explanation: "NCCL found two ranks of one communicator on the same GPU (releases up to 2.29 print its PCI bus id; 2.30 says \"Multiple Ranks are using the same GPU/Partition\") and refused with invalid usage. NCCL_MULTI_RANK_GPU_ENABLE=1 (2.30) lets it run that way on purpose, which is rarely what a training job wants. The ranks did not select their own device before the first collective: every process used the default cuda:0, or the launcher started more processes on a host than it has GPUs (torchrun --nproc_per_node, mpirun -np, srun --ntasks-per-node above the count nvidia-smi lists), or CUDA_VISIBLE_DEVICES/the launcher gave several ranks the same GPU, or a device mesh, Ray placement group or a trainer's device list out of ascending order (PyTorch Lightning's devices=[2, 1]) mapped ranks to devices wrongly. CUDA reads CUDA_VISIBLE_DEVICES once, at initialisation: set inside a process after anything touched CUDA (an import, a torch.cuda call, a parent that initialised CUDA before spawning), it has no effect.",
		Fix:         "Start at most one process per GPU of the host; call `torch.cuda.set_device(int(os.environ[\"LOCAL_RANK\"]))` before `init_process_group` (or pass `device_id=torch.device(\"cuda\", local_rank)`), build device meshes from the local rank, and give each process its own GPU in CUDA_VISIBLE_DEVICES; under Ray, one worker per GPU (num_gpus=1, max_colocate_count=1 in verl-style resource pools).",
		Check:       "Print LOCAL_RANK, CUDA_VISIBLE_DEVICES and `torch.cuda.current_device()` on every rank before the first collective; the busId values of the \"comm ... rank ... busId\" lines must all differ on one host.",
		Links:       []Link{linkTroubleshoot},
	},
	{
		ID: "ib-completion-error", Title: "InfiniBand/RoCE completion error", Severity: Error,
		Any: []string{"Got completion from peer", "Got completion with error", "wc->status=", "Got completion error"},
		Messages: []string{"NET/IB : Got completion from peer %s with error %d, opcode %d, len %d, vendor err %d (%s)%s%s%s%s",
			"NET/IB : Got completion from peer %s with status=%d opcode=%d len=%d vendor err %d (%s)%s%s%s%s",
			"NET/IB: Got completion from peer %s with status=%d opcode=%d len=%u vendor err %u (%s)%s%s%s%s hca %s",
			"NET/IB: Got completion from peer %s with status=%s(%d) opcode=%s(%d) reqSize=%d vendor_err=%u req_type=%s%s%s%s%s hca %s"},
		Explanation: "The RDMA NIC reported a failed work completion: data stopped flowing between two NICs.",
		Fix:         "Make the NICs reach each other over RDMA outside NCCL first (ib_write_bw / perftest with the same device, GID index, traffic class and MTU), then run NCCL with the same settings: on RoCE NCCL_IB_GID_INDEX set to the RoCE v2 IPv4 entry `show_gids` lists, NCCL_IB_HCA limited to NICs that reach the peers (NCCL_CROSS_NIC=0 on rail-only fabrics); for status 4, PCIe ACS off (NCCL_NET_GDR_LEVEL=0 confirms it).",
		Check:       "`ibv_devinfo` (port state ACTIVE, link layer, active_mtu equal on both hosts), `show_gids` on both hosts, and ib_write_bw between the two hosts of the failing pair.",
		Links:       []Link{linkNIC, envLink("NCCL_IB_GID_INDEX"), envLink("NCCL_IB_TIMEOUT"), envLink("NCCL_IB_HCA"), envLink("NCCL_CROSS_NIC")},
		Explain:     explainCompletion,
	},
	{
		ID: "gdr-disabled-distance", Title: "GPUDirect RDMA disabled by the GPU-NIC distance", Severity: Warning,
		Any: []string{"GPU Direct RDMA Disabled for GPU"},
		Messages: []string{"GPU Direct RDMA Disabled for GPU %d / HCA %lx (distance %d > %d)", "GPU Direct RDMA Disabled for GPU %lx / HCA %lx (distance %d > %d)",
			"GPU Direct RDMA Disabled for GPU %lx / HCA %d (distance %d > %d)"},
		Explanation: "NCCL will not let the NIC read and write GPU memory directly because the path between them is longer than NCCL_NET_GDR_LEVEL allows (by default PXB: the GPU and NIC must share a PCIe switch). Transfers are staged through host memory instead.",
		Fix:         "Use a NIC on the GPU's own PCIe switch or socket (NCCL_IB_HCA), or, where the platform supports peer traffic across the host bridge, raise NCCL_NET_GDR_LEVEL (PHB or SYS) and measure.",
		Check:       "`nvidia-smi topo -m` (the GPU-NIC entry: PIX/PXB allow GDR by default, PHB/NODE/SYS do not) and `lsmod | grep nvidia_peermem`.",
		Links:       []Link{linkGPUNIC, linkNIC, envLink("NCCL_NET_GDR_LEVEL"), envLink("NCCL_IB_HCA")},
		Explain:     explainDistance,
	},
	{
		ID: "nvls-failure", Title: "NVLink SHARP (NVLS) failed", Severity: Error,
		Any: []string{"Failed to bind NVLink SHARP", "NVLS) Multicast", "transport/nvls.cc"},
		Messages: []string{"Failed to bind NVLink SHARP (NVLS) Multicast memory of size %ld : CUDA error %d '%s'.\nThis is usually caused by a system or configuration error in the Fabric Manager or NVSwitches.\nDisable NVLS (NCCL_NVLS_ENABLE=0) if you wish to avoid this error in the future.",
			"Failed to bind NVLink SHARP (NVLS) Multicast memory of size %ld : CUDA error %d '%s'.\nThis is usually caused by a system or configuration error in the Fabric Manager or NVSwitches.\nDo not force-enable NVLS (NCCL_NVLS_ENABLE=1) if you wish to avoid this error in the future.",
			"Failed to bind NVLink SHARP (NVLS) Multicast memory of size %ld : CUDA error %d '%s'. Proceeding without NVLS support."},
		Explanation: "Setting up NVLink SHARP multicast memory through the NVSwitches failed. That is a system state, not your program: the Fabric Manager is not running or not in sync with the driver, a GPU or NVSwitch needs a reset, or the switches ran out of multicast resources.",
		Fix:         "Check and restart nvidia-fabricmanager (same version as the driver), reset the GPUs or reboot the node; set NCCL_NVLS_ENABLE=0 to confirm (the job then runs without NVLS) and as a stopgap.",
		Check:       "`systemctl status nvidia-fabricmanager`, `nvidia-smi -q | grep -A3 Fabric` (State Completed, Status Success), and a rerun with NCCL_NVLS_ENABLE=0.",
		Links:       []Link{envLink("NCCL_NVLS_ENABLE"), linkTroubleshoot},
		Explain:     explainNVLS,
	},
	{
		// cudaErrorSystemNotReady (802); cudaGetErrorString's text is what
		// NCCL's "Cuda failure", nccl-tests and PyTorch quote.
		ID: "cuda-system-not-ready", Title: "CUDA is not ready: the NVSwitch fabric is not set up", Severity: Error,
		Any:         []string{"system not yet initialized", "cudaErrorSystemNotReady", "CUDA_ERROR_SYSTEM_NOT_READY"},
		Explanation: "CUDA answered \"system not yet initialized\" (cudaErrorSystemNotReady, 802): on an NVSwitch machine (HGX/DGX A100, H100, H200, B200) no GPU runs work until the Fabric Manager has set up the NVLink fabric and the GPUs have registered with it.",
		Fix:         "Enable and start nvidia-fabricmanager, the driver's version (`systemctl enable --now nvidia-fabricmanager`; NVLink 5 systems also need NVLSM); without enable the error returns after a reboot.",
		Check:       "`systemctl status nvidia-fabricmanager` and `nvidia-smi -q | grep -A 2 -i fabric` (State Completed).",
		Links:       []Link{linkTroubleshoot},
	},
	{
		ID: "cuda-oom-nccl", Title: "NCCL ran out of GPU memory", Severity: Error,
		Any:         []string{"Cuda failure 'out of memory'", "Cuda failure 2 'out of memory'", "Failed to CUDA calloc", "Failed to CUDA malloc", "CUDA error 2 'out of memory'"},
		None:        []string{"NVLS", "Multicast"},
		Messages:    []string{"Failed to CUDA malloc %ld bytes", "Failed to CUDA calloc %ld bytes", "Failed to CUDA calloc async %ld bytes"},
		Explanation: "NCCL could not allocate GPU memory for its buffers. It allocates them when a communicator is created and when it first connects to a peer: one buffer per channel, peer and protocol (NCCL_BUFFSIZE, 4 MiB for Simple by default), plus NVLS buffers on NVSwitch systems, so the need grows with channels, peers and communicators, and a framework that reserved almost all memory leaves it none.",
		Fix:         "Leave headroom (lower the framework's memory fraction or batch), create fewer communicators, or shrink NCCL's share: NCCL_BUFFSIZE=2097152, NCCL_NVLS_ENABLE=0 on NVSwitch systems, fewer channels (NCCL_MAX_NCHANNELS).",
		Check:       "`nvidia-smi` memory use at the moment of the failure, and whether the error goes away with NCCL_BUFFSIZE=2097152 or NCCL_NVLS_ENABLE=0.",
		Links:       []Link{envLink("NCCL_BUFFSIZE"), envLink("NCCL_NVLS_ENABLE"), envLink("NCCL_MAX_NCHANNELS")},
		Explain:     explainAllocSize,
	},
	{
		ID: "socket-address", Title: "NCCL cannot reach a peer's socket address", Severity: Error,
		Any: []string{"no socket interface found", "No usable listening interface found", "is neither AF_INET(2) nor AF_INET6(10)", "Bootstrap : no NCCL_SOCKET_IFNAME",
			"Socket creation failed : Address family not supported"},
		Messages: []string{"NET/Socket : No usable listening interface found", "Bootstrap : no socket interface found",
			"ncclSocketInit: connecting to address %s with family %d is neither AF_INET(%d) nor AF_INET6(%d)",
			"no device found matching %s%s, verify NCCL_OOB_NET_IFNAME", "no device found after excluding %s%s, verify NCCL_OOB_NET_IFNAME",
			"no device found matching NCCL_OOB_NET_IFNAME=%s, ignoring"},
		Explain:     explainSocketAddress,
		Explanation: "NCCL has no usable IP address to reach a peer: either no interface matches NCCL_SOCKET_IFNAME (or none besides loopback exists) for its bootstrap and socket traffic, or, when it complains about an address \"with family N\", the address it received from another rank is garbage, which is what ranks running different NCCL releases (their bootstrap messages differ in layout) produce.",
		Fix:         "Set NCCL_SOCKET_IFNAME to an interface that exists and routes between the hosts on every node (a prefix such as `eth`, `=name` for an exact name, `^docker,lo` to exclude), or unset it; and run one NCCL release on every node (check for a second libnccl: pip nvidia-nccl-cu* packages, a system copy under /usr/lib or /usr/local).",
		Check:       "`ip -br addr` on every node, the \"Bootstrap: Using\" line of each rank, and `python -c \"import torch; print(torch.cuda.nccl.version())\"` plus `pip list | grep nccl` on every node.",
		Links:       []Link{envLink("NCCL_SOCKET_IFNAME"), linkNIC},
	},
	{
		ID: "ib-register-memory", Title: "The RDMA NIC could not register memory", Severity: Error,
		Any:         []string{"ibv_reg_mr", "ibv_reg_dmabuf_mr"},
		All:         []string{"failed"},
		Explanation: "NCCL asked the verbs library to register a buffer with the NIC (pin it and give the NIC its address) and the kernel refused.",
		Fix:         "\"Cannot allocate memory\": raise the locked-memory limit of the processes (`ulimit -l unlimited`; `* soft memlock unlimited` and `* hard memlock unlimited` in /etc/security/limits.conf, then log in again; `--ulimit memlock=-1` for Docker; LimitMEMLOCK=infinity for a systemd unit). \"Bad address\" on GPU buffers: load nvidia-peermem (or use a DMA-BUF capable driver and kernel) so the NIC can register GPU memory.",
		Check:       "`ulimit -l` run through the same launcher (`mpirun ... bash -c 'ulimit -l'`, inside the container) must print unlimited; `lsmod | grep nvidia_peermem`.",
		Links:       []Link{linkNIC, linkGPUNIC},
		Explain: func(lines []LineRef, s *Summary) string {
			for _, l := range lines {
				switch {
				case strings.Contains(l.Text, "Cannot allocate memory"):
					return "\"Cannot allocate memory\" from a registration is the locked-memory limit (ulimit -l, often 64 KB or 8 MB by default), not a lack of RAM."
				case strings.Contains(l.Text, "ibv_reg_dmabuf_mr") && strings.Contains(l.Text, "not supported"):
					return "\"Operation not supported\" from ibv_reg_dmabuf_mr means the NIC driver or kernel cannot register DMA-BUF memory: NCCL_DMABUF_ENABLE=0 makes NCCL use nvidia-peermem instead, or update MOFED/rdma-core and the kernel."
				case strings.Contains(l.Text, "Bad address"):
					return "\"Bad address\" means the kernel could not pin the pages: for GPU buffers, GPUDirect RDMA is not available (nvidia-peermem not loaded, no DMA-BUF support)."
				}
			}
			return ""
		},
	},
	{
		ID: "ib-qp-setup", Title: "An RDMA queue pair or completion queue could not be set up", Severity: Error,
		// Posts often quote the error without "Call to".
		Any:         []string{"ibv_modify_qp failed", "ibv_create_qp failed", "ibv_create_cq failed"},
		None:        []string{", retrying ", "UCX"}, // NCCL 2.30 retries before it warns; UCX is MPI's
		Explanation: "NCCL asked the verbs library to create or connect a queue pair (or its completion queue) on the RDMA device it chose, and the kernel refused: the connection to the peer cannot be built on that device.",
		Fix:         "Keep NCCL to the devices and ports that work: NCCL_IB_HCA lists them (`=NAME,NAME` for exact names, `^NAME` to leave one out); give a RoCE port an IP address and a routable GID (NCCL_IB_GID_INDEX); use the same MOFED/rdma-core in the container as on the host. On a single host NCCL_IB_DISABLE=1 takes the network out altogether.",
		Check:       "`ibv_devinfo -v` (port state PORT_ACTIVE, link layer) and `show_gids` for the device the log names, `ulimit -l` inside the job, and `ib_write_bw -d DEVICE` between two hosts.",
		Links:       []Link{linkNIC, envLink("NCCL_IB_HCA"), envLink("NCCL_IB_GID_INDEX"), envLink("NCCL_IB_DISABLE")},
		Explain: func(lines []LineRef, s *Summary) string {
			for _, l := range lines {
				switch {
				case strings.Contains(l.Text, "No such device"):
					return "\"No such device\" means the device or port NCCL picked cannot carry connections from this process: a RoCE port without an IP address (so no usable GID), a virtual function or port that belongs to another network namespace (macvlan or SR-IOV containers), an NCCL_IB_GID_INDEX this port's table lacks (pods sharing a NIC see different indices: set the index per pod from show_gids, or leave it unset with NCCL 2.21+, which picks it per device), or a port that is down; when one device of several is at fault, NCCL_IB_HCA can leave it out." + ibDevices(s)
				case strings.Contains(l.Text, "Cannot allocate memory"):
					return "\"Cannot allocate memory\" here is the locked-memory limit (ulimit -l) or the NIC's own limits on queues, not a lack of RAM: raise the limit to unlimited for the processes (limits.conf, --ulimit memlock=-1 for Docker), and at very large scale fewer connections per peer (NCCL_NCHANNELS_PER_NET_PEER, NCCL_IB_QPS_PER_CONNECTION)."
				case strings.Contains(l.Text, "Network is unreachable") || strings.Contains(l.Text, "Connection timed out"):
					// NCCL 2.30 hints the same after ETIMEDOUT (printIbModifyQpHint).
					return "\"" + qpErrno(l.Text) + "\" when a queue pair is connected means the port cannot reach the peer's GID: NICs of different rails that are not cross-connected (NCCL_CROSS_NIC=0 confirms it, NCCL's own hint), an NCCL_IB_HCA list that names ports of another network (NCCL pairs the listed devices across ranks, so list only the ports that reach the peers), RoCE ports in subnets without routing between them, or a GID index (NCCL_IB_GID_INDEX) whose address does not reach the peer." + ibDevices(s)
				case strings.Contains(l.Text, "Invalid argument"):
					return "\"Invalid argument\" when a queue pair is connected usually names a GID index the port does not have, forced by NCCL_IB_GID_INDEX (unset it or set -1 for NCCL's own choice, as NCCL 2.30 hints), or attributes the two ends disagree on (MTU, traffic class)."
				}
			}
			return ibDevices(s)
		},
	},
	{
		ID: "topology-file", Title: "A topology or graph file does not fit this machine", Severity: Error,
		// PyTorch's "Last error:" re-raise carries the text alone.
		Any:         []string{"Attribute "},
		All:         []string{" of node ", " not found"},
		Messages:    []string{"Attribute %s of node %s not found", "XML Import Channel : dev %d not found.", "XML Import Channel : dev %ld not found."},
		Explanation: "NCCL read its topology (or its rings) from a file instead of the machine, and the file lacks what NCCL needs: an attribute of a node, or a GPU the job does not have. The file comes from NCCL_TOPO_FILE or NCCL_GRAPH_FILE, set in the environment, in /etc/nccl.conf or ~/.nccl.conf, or by a network plugin (aws-ofi-nccl before 1.11 pointed NCCL to a static XML per instance type); such files are written for the whole machine and break when a job uses a subset of its GPUs. Releases before 2.8 also failed this way on an injected topology whose unused socket's CPU node NCCL did not read.",
		Fix:         "Unset NCCL_TOPO_FILE and NCCL_GRAPH_FILE (also in /etc/nccl.conf and ~/.nccl.conf) so NCCL detects the machine, or give it a file written for this machine and these GPUs (NCCL_TOPO_DUMP_FILE of a run that works); update aws-ofi-nccl to 1.11 or later, which generates the topology, and NCCL to 2.8 or later.",
		Check:       "The \"NCCL_TOPO_FILE set by environment to\" line of the log, `env | grep -e NCCL_TOPO_FILE -e NCCL_GRAPH_FILE`, `cat /etc/nccl.conf ~/.nccl.conf`, and the node the warning names in that file.",
		Links:       []Link{linkTopologyNote, envLink("NCCL_TOPO_FILE"), envLink("NCCL_GRAPH_FILE")},
		Explain: func(lines []LineRef, s *Summary) string {
			for _, name := range []string{"NCCL_TOPO_FILE", "NCCL_GRAPH_FILE"} {
				if e, ok := s.Env(name); ok {
					return "The log shows " + name + "=" + e.Value + "."
				}
			}
			return ""
		},
	},
	{
		ID: "cuda-driver-too-old", Title: "The CUDA driver is older than the CUDA runtime", Severity: Error,
		// PyTorch's own check (c10/cuda/CUDAFunctions.cpp, v2.6.0): "The
		// NVIDIA driver on your system is too old (found version N)".
		Any:         []string{"CUDA driver version is insufficient", "cudaErrorInsufficientDriver", "driver version is insufficient for CUDA runtime", "The NVIDIA driver on your system is too old"},
		Explanation: "The NVIDIA driver is older than the CUDA runtime that PyTorch and NCCL were built with, so CUDA calls fail before NCCL can start.",
		Fix:         "Upgrade the driver, or use a PyTorch/NCCL build for an older CUDA (or the CUDA forward-compatibility package on data-center GPUs).",
		Check:       "`nvidia-smi` (Driver Version, CUDA Version) against `python -c \"import torch; print(torch.version.cuda)\"`.",
		Links:       []Link{linkTroubleshoot},
		Explain:     explainDriverVersion,
	},
}

// scanRules records, for every line, the rules it matches.
func (p *parser) scanRules(n int, raw string) {
	p.matchLineRules(n, raw, raw)
	p.scanNetCues(n, raw)
	p.scanSockIfs(n, raw)
	p.scanPeerLostText(n, raw)
	p.scanTorchRules(n, raw)
	if strings.Contains(raw, "GID[") || strings.Contains(raw, "hca_id:") || strings.Contains(raw, "fe80") || strings.Contains(raw, "ffff") || strings.Contains(raw, "80FE/") {
		p.scanGIDs(n, raw)
	}
	if containsAny(raw, exitMarks) {
		// Not NCCL's or the watchdog's lines: read before the filter.
		p.add(&p.s.exiting, n, raw)
	}
	if isShmFailure(raw) {
		// Every line, NCCL's WARN as well as PyTorch's re-raise ("Last
		// error: Error while creating shared memory segment ...") and
		// launcher output, which carry no WARN prefix or one NCCL's
		// format does not parse.
		p.add(&p.s.ShmFailure, n, raw)
	}
}

// matchLineRules tries the line rules on text and records line n, raw, as
// evidence of those it matches.
func (p *parser) matchLineRules(n int, text, raw string) {
	for i := range lineRules {
		r := &lineRules[i]
		hit := containsAny(text, r.Any)
		for _, k := range r.All {
			hit = hit && strings.Contains(text, k)
		}
		for _, k := range r.None {
			hit = hit && !strings.Contains(text, k)
		}
		if !hit && r.Match != nil {
			hit = r.Match(text)
		}
		if hit {
			p.hitRule(r, n, raw)
		}
	}
}

// hitRule adds line n to a rule's evidence, once per line.
func (p *parser) hitRule(r *Rule, n int, raw string) { p.hitID(r.ID, n, raw) }

// hitID adds line n to the evidence of the line rule id, once per line.
func (p *parser) hitID(id string, n int, raw string) {
	if p.s.ruleHits == nil {
		p.s.ruleHits = map[string]*Evidence{}
		p.s.ruleLast = map[string]int{}
	}
	if last, ok := p.s.ruleLast[id]; ok && last == n {
		return
	}
	p.s.ruleLast[id] = n
	e := p.s.ruleHits[id]
	if e == nil {
		e = &Evidence{}
		p.s.ruleHits[id] = e
	}
	p.add(e, n, raw)
}

// rulesByFormat maps each catalog format a rule lists in Messages to the
// indexes of those rules in lineRules.
//
// It is built on first use inside a function rather than by a package-level
// sync.OnceValue: an initialiser would keep the rules, and through them
// NCCL's message catalog, in every binary that links the package (the
// model pages' wasm grew by about 90 KB gzip that way).
func rulesByFormat() map[string][]int {
	rulesIndex.once.Do(func() {
		rulesIndex.m = byFormat(lineRules, func(r Rule) []string { return r.Messages })
	})
	return rulesIndex.m
}

var rulesIndex struct {
	once sync.Once
	m    map[string][]int
}

// byFormat maps each catalog format that formats gives for an item to the
// indexes of the items that list it.
func byFormat[T any](items []T, formats func(T) []string) map[string][]int {
	m := map[string][]int{}
	for i, it := range items {
		for _, f := range formats(it) {
			m[f] = append(m[f], i)
		}
	}
	return m
}

// lineDiagnoses turns the rule hits into diagnoses.
func (d *diagnoser) lineDiagnoses() []Diagnosis {
	var out []Diagnosis
	for i := range lineRules {
		r := &lineRules[i]
		e := d.s.ruleHits[r.ID]
		if e == nil || e.Empty() {
			continue
		}
		if r.Explain != nil {
			if x := r.Explain(e.Lines, d.s); x != "" {
				rr := *r
				rr.Explanation += " " + x
				r = &rr
			}
		}
		out = append(out, ruleDiagnosis(r, e.Lines, e.Count))
	}
	return out
}

// ruleDiagnosis assembles the diagnosis of a rule from its evidence lines
// (count of them in the log): the explanation, how many lines show it, the
// fix and the check.
func ruleDiagnosis(r *Rule, lines []LineRef, count int) Diagnosis {
	var ev evidence
	ev.add(lines...)
	expl := r.Explanation
	if count > 1 {
		expl += " " + strconv.Itoa(count) + " line(s) show it."
	}
	return Diagnosis{ID: r.ID, Severity: r.Severity, Title: r.Title,
		Explanation: expl + " Fix: " + r.Fix + " Check: " + r.Check, Evidence: ev.list(), Links: links(r.Links...)}
}

// explainArchList compares the GPU's architecture with the ones PyTorch's
// start-up warning says the build carries ("... with CUDA capability
// sm_120 is not compatible ..." and "... supports CUDA capabilities sm_50
// sm_60 ... sm_90.").
func explainArchList(lines []LineRef, s *Summary) string {
	gpu, lo, hi := -1, -1, -1
	for _, l := range lines {
		if i := strings.Index(l.Text, "with CUDA capability sm_"); i >= 0 {
			if n, ok := leadingInt(l.Text[i+len("with CUDA capability sm_"):]); ok {
				gpu = n
			}
		}
		if i := strings.Index(l.Text, "supports CUDA capabilities "); i >= 0 {
			for _, f := range strings.Fields(l.Text[i+len("supports CUDA capabilities "):]) {
				n, ok := leadingInt(strings.TrimPrefix(f, "sm_"))
				if !ok || !strings.HasPrefix(f, "sm_") {
					continue
				}
				if lo < 0 || n < lo {
					lo = n
				}
				hi = max(hi, n)
			}
		}
	}
	switch {
	case gpu < 0 || hi < 0:
		return ""
	case gpu > hi:
		return fmt.Sprintf("The GPU is sm_%d; this PyTorch build stops at sm_%d: install one that lists sm_%d in torch.cuda.get_arch_list().", gpu, hi, gpu)
	case gpu < lo:
		return fmt.Sprintf("The GPU is sm_%d; this PyTorch build starts at sm_%d.", gpu, lo)
	}
	return fmt.Sprintf("The GPU is sm_%d, within sm_%d..sm_%d but not in the build's list.", gpu, lo, hi)
}

// ibDevices names the RDMA devices the log says NCCL uses, "" if none.
func ibDevices(s *Summary) string {
	var devs []string
	for _, d := range s.NetDevices {
		if name, ok := strings.CutPrefix(d, "IB "); ok {
			devs = append(devs, name)
		}
	}
	if len(devs) == 0 {
		return ""
	}
	first, _, _ := strings.Cut(devs[0], ":")
	return " The log lists " + strings.Join(devs[:min(len(devs), 8)], ", ") + " as NCCL's devices; NCCL_IB_HCA=^" + first + " would leave out the first of them."
}

// bootstrapTruncated is the catalog format of bootstrap.cc's own size
// check, which guards setup messages rather than collective data.
const bootstrapTruncated = "Message truncated : received %d bytes instead of %d"

// explainTruncation tells a truncated bootstrap message (setup data the
// ranks exchange while they connect) from truncated collective data.
func explainTruncation(lines []LineRef, s *Summary) string {
	fixed, _, _ := strings.Cut(bootstrapTruncated, "%")
	for _, l := range lines {
		if strings.Contains(l.Text, fixed) {
			return "This is NCCL's bootstrap (setup data exchanged while communicators are created), where NCCL_PROTO, NCCL_ALGO and collective sizes play no part: ranks on different NCCL releases, or creating communicators (new_group, ncclCommSplit) in a different order, disagree on it. With one release everywhere the release itself is the suspect: reports with 2.19.3 and 2.20.5 went away with another NCCL release."
		}
	}
	return ""
}

// wcMeaning says what an IB work-completion status means for NCCL.
var wcMeaning = map[int]string{
	1:  "a local length error: a message did not fit the receive buffer or the path MTU, which for NCCL points at ports configured with different MTUs",
	4:  "a local protection error: the NIC could not access the registered memory, which for GPU buffers points at GPUDirect RDMA (nvidia-peermem or dma-buf missing, PCIe ACS/IOMMU redirecting peer traffic); a rerun with NCCL_NET_GDR_LEVEL=0 that works confirms it",
	5:  "the work request was flushed: the queue pair had already failed, so look for the first, different error",
	9:  "the remote side rejected the request",
	10: "a remote access error: the peer's memory registration does not allow the access (GPUDirect RDMA on the other host)",
	11: "a remote operation error",
	12: "the transport retry counter was exceeded: the peer never acknowledged, a timeout. Right at the start of a job this means the two NICs cannot reach each other over RDMA: for RoCE the GID index (NCCL_IB_GID_INDEX: a RoCE v2 IPv4 entry, not the link-local fe80 one) or the routing between subnets, or an MTU the path cannot carry (a port MTU above a switch's, or different MTUs on the two hosts); later in a job a link flap, a congested fabric or a dead peer (on a congested fabric a longer NCCL_IB_TIMEOUT, 4.096 µs × 2^value per try, and NCCL_IB_RETRY_CNT ride out the stalls; they cannot help NICs that never reach each other)",
	13: "the receiver-not-ready retry counter was exceeded: the peer posted no receive in time",
}

// explainCompletion reads "status=12", "error 12" or
// "status=IBV_WC_RETRY_EXC_ERR(12)" and "vendor err 129" from the first
// evidence line that has them.
func explainCompletion(lines []LineRef, s *Summary) string {
	cat, _ := ncclmsg.Default()
	for _, l := range lines {
		st, ok := completionStatus(l.Text)
		if !ok {
			continue
		}
		var b strings.Builder
		b.WriteString("Status " + strconv.Itoa(st))
		if cat != nil && cat.WCStatus[st] != "" {
			b.WriteString(" is " + cat.WCStatus[st])
		}
		if m, ok := wcMeaning[st]; ok {
			b.WriteString(": " + m)
		}
		b.WriteString(".")
		if v, ok := numberAfter(l.Text, "vendor err ", "vendor_err="); ok {
			b.WriteString(" Vendor error " + strconv.Itoa(v) + " (0x" + strconv.FormatInt(int64(v), 16) + ") is the NIC's own syndrome")
			if v == 129 && st == 12 {
				b.WriteString("; 0x81 with status 12 is the mlx5 transport-retry timeout, the classic sign of a RoCE GID index or route that does not reach the peer")
			}
			b.WriteString(".")
		}
		// "localGid fe80:..." is the RoCE GID in use; an fe80 address
		// before "<port>" is only the peer's IPoIB socket address.
		if st == 12 {
			b.WriteString(gidDefault(s))
		}
		if st == 12 && (strings.Contains(l.Text, "localGid fe80:") || strings.Contains(l.Text, "remoteGid fe80:") || strings.Contains(l.Text, "remoteGids fe80:")) {
			b.WriteString(" The GIDs shown are link-local (fe80::), which do not route between subnets: pick a routable RoCE v2 GID with NCCL_IB_GID_INDEX.")
		}
		b.WriteString(mtuMismatch(s))
		return b.String()
	}
	return mtuMismatch(s)
}

// mtuMismatch names the different MTUs the log's IB connection lines show
// (the "mtu" field of NCCL's queue-pair INFO lines), or "".
func mtuMismatch(s *Summary) string {
	vals, hosts := s.factValues("mtu")
	if len(vals) < 2 {
		return ""
	}
	var parts []string
	for _, v := range vals {
		p := "mtu " + v
		if name := ibMTUName(v); name != "" {
			p += " (" + name + ")"
		}
		if hs := hosts[v]; len(hs) > 0 {
			p += " on " + strings.Join(hs[:min(len(hs), 4)], ", ")
		}
		parts = append(parts, p)
	}
	return " The IB connection lines show different MTUs: " + strings.Join(parts, "; ") + ". Queue pairs between ports of different MTU fail; configure one MTU on every host and switch."
}

// ibMTUName turns the verbs MTU enum NCCL prints into bytes.
func ibMTUName(v string) string {
	switch v {
	case "1":
		return "256 B"
	case "2":
		return "512 B"
	case "3":
		return "1024 B"
	case "4":
		return "2048 B"
	case "5":
		return "4096 B"
	}
	return ""
}

// asyncMeaning says what each verbs async event (as libibverbs names it in
// ibv_event_type_str) means for NCCL.
var asyncMeaning = []struct{ event, meaning string }{
	{"port error", "the port went down: a link flap (cable, transceiver, switch port or subnet manager). Every queue pair on it fails afterwards, which is what completion errors (status 12 or 5) and timeouts after it are"},
	{"local access violation work queue error", "the NIC refused an access of a queue pair: most often a packet larger than the receiving port's MTU (hosts configured with different MTUs; NCCL 2.20-2.23 no longer lowered a queue pair's MTU to the peer's), or memory the NIC may not reach (GPUDirect RDMA through PCIe ACS/IOMMU)"},
	{"invalid request local work queue error", "the NIC received a request it cannot serve on that queue pair: a length beyond the MTU or the registered memory, or an opcode the peer's setup does not allow"},
	{"local work queue catastrophic error", "a queue pair broke inside the NIC: look at dmesg for the mlx5 health report"},
	{"local catastrophic error", "the NIC itself failed (firmware fault, overheating, PCIe error): it needs a reset or a firmware update, and jobs on it cannot continue"},
	{"CQ error", "a completion queue overflowed or broke"},
	{"GID table change", "the port's GID table changed (an IP address of a RoCE interface was added or removed) under a running job"},
}

// explainAsyncEvent names the event of the first evidence line it knows.
func explainAsyncEvent(lines []LineRef, s *Summary) string {
	for _, l := range lines {
		for _, a := range asyncMeaning {
			if strings.Contains(l.Text, a.event) {
				return "\"" + a.event + "\" means " + a.meaning + "." + mtuMismatch(s)
			}
		}
	}
	return mtuMismatch(s)
}

// completionStatus finds the status number of a completion error line.
func completionStatus(t string) (int, bool) {
	if i := strings.Index(t, "status="); i >= 0 {
		rest := t[i+len("status="):]
		if j := strings.IndexByte(rest, '('); j >= 0 && j < 32 && !strings.HasPrefix(rest, "(") {
			if n, ok := leadingInt(rest[j+1:]); ok {
				return n, true
			}
		}
		if n, ok := leadingInt(strings.TrimLeft(rest, "(")); ok {
			return n, true
		}
	}
	return numberAfter(t, "with error ", "completion with error ", "completion error ")
}

// numberAfter returns the number after the first of the keys found in t.
func numberAfter(t string, keys ...string) (int, bool) {
	for _, k := range keys {
		if i := strings.Index(t, k); i >= 0 {
			if n, ok := leadingInt(t[i+len(k):]); ok {
				return n, true
			}
		}
	}
	return 0, false
}

// explainDistance reads "(distance 7 > 4)" and names both numbers in the
// release the log comes from (the path types were renumbered in 2.8,
// 2.12, 2.26 and 2.27).
// explainAllocSize reads the size of a failed "Failed to CUDA calloc N
// bytes": NCCL's per-channel buffers take a few MiB each, so one request of
// 256 MiB or more is a pool, such as the 512 MiB NET shared buffer NCCL
// 2.28.9 sets up even for a communicator of one rank
// (https://github.com/NVIDIA/nccl/issues/2363).
func explainAllocSize(lines []LineRef, _ *Summary) string {
	for _, l := range lines {
		_, rest, ok := strings.Cut(l.Text, "alloc ")
		if n, num := leadingInt(rest); ok && num && n >= 256<<20 {
			return strconv.Itoa(n>>20) + " MiB in one request is a pool, not a per-channel buffer: NCCL 2.28.9 allocates a 512 MiB NET shared buffer even for a one-rank communicator (NVIDIA/nccl#2363); avoid one-rank NCCL groups or create them before the GPU fills."
		}
	}
	return ""
}

func explainDistance(lines []LineRef, s *Summary) string {
	cat, err := ncclmsg.Default()
	if err != nil {
		return ""
	}
	for _, l := range lines {
		i := strings.Index(l.Text, "distance ")
		if i < 0 {
			continue
		}
		a, ok1 := leadingInt(l.Text[i+len("distance "):])
		j := strings.Index(l.Text[i:], "> ")
		if !ok1 || j < 0 {
			continue
		}
		b, ok2 := leadingInt(l.Text[i+j+2:])
		if !ok2 {
			continue
		}
		if v := s.Version(); v != "" {
			if rel := cat.ReleaseFor(v); rel != "" && cat.PathName(rel, a) != "" {
				return "In NCCL " + v + " distance " + strconv.Itoa(a) + " is path type " + cat.PathName(rel, a) +
					" and the limit " + strconv.Itoa(b) + " is " + cat.PathName(rel, b) + "."
			}
		}
		return "The log does not print its NCCL version; by release, distance " + strconv.Itoa(a) + " is " + namings(cat, a) +
			" and the limit " + strconv.Itoa(b) + " is " + namings(cat, b) + "."
	}
	return ""
}

// namings lists the names of a path type value across releases.
func namings(cat *ncclmsg.Catalog, v int) string {
	var parts []string
	for _, n := range cat.PathNamings(v) {
		r := shortRelease(n.First)
		if n.Last != n.First {
			r += "-" + shortRelease(n.Last)
		}
		parts = append(parts, n.Name+" in "+r)
	}
	return strings.Join(parts, ", ")
}

// shortRelease turns "v2.21.5-1" into "2.21".
func shortRelease(r string) string {
	r = strings.TrimPrefix(r, "v")
	f := strings.SplitN(r, ".", 3)
	if len(f) < 2 {
		return r
	}
	return f[0] + "." + f[1]
}
