package doctor

import (
	"strconv"
	"strings"

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
	// Explanation says what the evidence means.
	Explanation string
	Fix         string
	Check       string
	Links       []Link
	// Explain, when set, returns extra sentences computed from the
	// evidence lines (in order) and the summary.
	Explain func(lines []LineRef, s *Summary) string
}

// Rules returns the line rules in the order they are tried.
func Rules() []Rule { return append([]Rule(nil), lineRules...) }

var lineRules = []Rule{
	{
		ID: "gpu-newer-than-nccl", Title: "The GPU is newer than this NCCL release", Severity: Error,
		Any:         []string{"exceeds device/fn maxSharedMem", "no kernel image is available for execution on the device"},
		Explanation: "NCCL's kernels were built for GPU architectures older than this one: they ask for more shared memory per block than the device allows (\"ncclMaxSharedMem ... exceeds device/fn maxSharedMem\") or have no code for its compute capability, so every collective fails or hangs. This is what an RTX 5090 / RTX PRO 6000 (Blackwell, sm_120) shows with NCCL 2.25 and older.",
		Fix:         "Upgrade NCCL to a release that supports the GPU (2.26 or later for Blackwell GeForce/RTX PRO: a newer PyTorch wheel, or `pip install -U nvidia-nccl-cu12` and make sure that copy is the one loaded).",
		Check:       "`python -c \"import torch; print(torch.cuda.nccl.version(), torch.cuda.get_device_capability())\"` and the \"NCCL version\" line of the log against the GPU's compute capability.",
		Links:       []Link{linkVersions, envLink("NCCL_DEBUG")},
	},
	{
		ID: "duplicate-gpu", Title: "Two ranks on one GPU", Severity: Error,
		Any:         []string{"Duplicate GPU detected"},
		Explanation: "NCCL found two ranks of one communicator on the same GPU (the number is its PCI bus id) and refused with invalid usage. The ranks did not select their own device before the first collective: every process used the default cuda:0, or CUDA_VISIBLE_DEVICES/the launcher gave several ranks the same GPU, or a device mesh mapped ranks to devices wrongly.",
		Fix:         "Call `torch.cuda.set_device(int(os.environ[\"LOCAL_RANK\"]))` before `init_process_group` (or pass `device_id=torch.device(\"cuda\", local_rank)`), build device meshes from the local rank, and give each process its own GPU in CUDA_VISIBLE_DEVICES.",
		Check:       "Print LOCAL_RANK, CUDA_VISIBLE_DEVICES and `torch.cuda.current_device()` on every rank before the first collective; the busId values of the \"comm ... rank ... busId\" lines must all differ on one host.",
		Links:       []Link{linkTroubleshoot},
	},
	{
		ID: "ib-completion-error", Title: "InfiniBand/RoCE completion error", Severity: Error,
		Any:         []string{"Got completion from peer", "Got completion with error", "wc->status="},
		Explanation: "The RDMA NIC reported a failed work completion: data stopped flowing between two NICs.",
		Fix:         "Make the NICs reach each other over RDMA outside NCCL first (ib_write_bw / perftest with the same device, GID index and traffic class), then run NCCL with the same settings.",
		Check:       "`ibv_devinfo` (port state ACTIVE, link layer), `show_gids` on both hosts, and ib_write_bw between the two hosts of the failing pair.",
		Links:       []Link{linkNIC, envLink("NCCL_IB_GID_INDEX"), envLink("NCCL_IB_TIMEOUT"), envLink("NCCL_IB_HCA")},
		Explain:     explainCompletion,
	},
	{
		ID: "gdr-disabled-distance", Title: "GPUDirect RDMA disabled by the GPU-NIC distance", Severity: Warning,
		Any:         []string{"GPU Direct RDMA Disabled for GPU"},
		Explanation: "NCCL will not let the NIC read and write GPU memory directly because the path between them is longer than NCCL_NET_GDR_LEVEL allows (by default PXB: the GPU and NIC must share a PCIe switch). Transfers are staged through host memory instead.",
		Fix:         "Use a NIC on the GPU's own PCIe switch or socket (NCCL_IB_HCA), or, where the platform supports peer traffic across the host bridge, raise NCCL_NET_GDR_LEVEL (PHB or SYS) and measure.",
		Check:       "`nvidia-smi topo -m` (the GPU-NIC entry: PIX/PXB allow GDR by default, PHB/NODE/SYS do not) and `lsmod | grep nvidia_peermem`.",
		Links:       []Link{linkGPUNIC, linkNIC, envLink("NCCL_NET_GDR_LEVEL"), envLink("NCCL_IB_HCA")},
		Explain:     explainDistance,
	},
	{
		ID: "nvls-failure", Title: "NVLink SHARP (NVLS) failed", Severity: Error,
		Any:         []string{"Failed to bind NVLink SHARP", "NVLS) Multicast", "transport/nvls.cc"},
		Explanation: "Setting up NVLink SHARP multicast memory through the NVSwitches failed. That is a system state, not your program: the Fabric Manager is not running or not in sync with the driver, a GPU or NVSwitch needs a reset, or the switches ran out of multicast resources.",
		Fix:         "Check and restart nvidia-fabricmanager (same version as the driver), reset the GPUs or reboot the node; set NCCL_NVLS_ENABLE=0 to confirm (the job then runs without NVLS) and as a stopgap.",
		Check:       "`systemctl status nvidia-fabricmanager`, `nvidia-smi -q | grep -A3 Fabric` (State Completed, Status Success), and a rerun with NCCL_NVLS_ENABLE=0.",
		Links:       []Link{envLink("NCCL_NVLS_ENABLE"), linkTroubleshoot},
	},
	{
		ID: "cuda-oom-nccl", Title: "NCCL ran out of GPU memory", Severity: Error,
		Any:         []string{"Cuda failure 'out of memory'", "Cuda failure 2 'out of memory'", "Failed to CUDA calloc", "Failed to CUDA malloc", "CUDA error 2 'out of memory'"},
		None:        []string{"NVLS", "Multicast"},
		Explanation: "NCCL could not allocate GPU memory for its buffers. It allocates them when a communicator is created and when it first connects to a peer: one buffer per channel, peer and protocol (NCCL_BUFFSIZE, 4 MiB for Simple by default), plus NVLS buffers on NVSwitch systems, so the need grows with channels, peers and communicators, and a framework that reserved almost all memory leaves it none.",
		Fix:         "Leave headroom (lower the framework's memory fraction or batch), create fewer communicators, or shrink NCCL's share: NCCL_BUFFSIZE=2097152, NCCL_NVLS_ENABLE=0 on NVSwitch systems, fewer channels (NCCL_MAX_NCHANNELS).",
		Check:       "`nvidia-smi` memory use at the moment of the failure, and whether the error goes away with NCCL_BUFFSIZE=2097152 or NCCL_NVLS_ENABLE=0.",
		Links:       []Link{envLink("NCCL_BUFFSIZE"), envLink("NCCL_NVLS_ENABLE"), envLink("NCCL_MAX_NCHANNELS")},
	},
	{
		ID: "socket-address", Title: "NCCL cannot reach a peer's socket address", Severity: Error,
		Any:         []string{"no socket interface found", "No usable listening interface found", "is neither AF_INET(2) nor AF_INET6(10)", "Bootstrap : no NCCL_SOCKET_IFNAME"},
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
				case strings.Contains(l.Text, "Bad address"):
					return "\"Bad address\" means the kernel could not pin the pages: for GPU buffers, GPUDirect RDMA is not available (nvidia-peermem not loaded, no DMA-BUF support)."
				}
			}
			return ""
		},
	},
	{
		ID: "cuda-driver-too-old", Title: "The CUDA driver is older than the CUDA runtime", Severity: Error,
		Any:         []string{"CUDA driver version is insufficient", "cudaErrorInsufficientDriver", "driver version is insufficient for CUDA runtime"},
		Explanation: "The NVIDIA driver is older than the CUDA runtime that PyTorch and NCCL were built with, so CUDA calls fail before NCCL can start.",
		Fix:         "Upgrade the driver, or use a PyTorch/NCCL build for an older CUDA (or the CUDA forward-compatibility package on data-center GPUs).",
		Check:       "`nvidia-smi` (Driver Version, CUDA Version) against `python -c \"import torch; print(torch.version.cuda)\"`.",
		Links:       []Link{linkTroubleshoot},
	},
}

// scanRules records, for every line, the rules it matches.
func (p *parser) scanRules(n int, raw string) {
	for i := range lineRules {
		r := &lineRules[i]
		hit := false
		for _, k := range r.Any {
			if strings.Contains(raw, k) {
				hit = true
				break
			}
		}
		for _, k := range r.All {
			hit = hit && strings.Contains(raw, k)
		}
		for _, k := range r.None {
			hit = hit && !strings.Contains(raw, k)
		}
		if !hit {
			continue
		}
		if p.s.ruleHits == nil {
			p.s.ruleHits = map[string]*Evidence{}
		}
		e := p.s.ruleHits[r.ID]
		if e == nil {
			e = &Evidence{}
			p.s.ruleHits[r.ID] = e
		}
		p.add(e, n, raw)
	}
	if !strings.Contains(raw, "NCCL WARN") && isShmFailure(raw) {
		// PyTorch's re-raise ("Last error: Error while creating shared
		// memory segment ...") and launcher output carry no WARN prefix.
		p.add(&p.s.ShmFailure, n, raw)
	}
}

// lineDiagnoses turns the rule hits into diagnoses.
func (d *diagnoser) lineDiagnoses() []Diagnosis {
	var out []Diagnosis
	for _, r := range lineRules {
		e := d.s.ruleHits[r.ID]
		if e == nil || e.Empty() {
			continue
		}
		var ev evidence
		ev.add(e.Lines...)
		parts := []string{r.Explanation}
		if r.Explain != nil {
			if x := r.Explain(e.Lines, d.s); x != "" {
				parts = append(parts, x)
			}
		}
		if e.Count > 1 {
			parts = append(parts, strconv.Itoa(e.Count)+" line(s) show it.")
		}
		parts = append(parts, "Fix: "+r.Fix, "Check: "+r.Check)
		out = append(out, Diagnosis{ID: r.ID, Severity: r.Severity, Title: r.Title,
			Explanation: strings.Join(parts, " "), Evidence: ev.list(), Links: links(r.Links...)})
	}
	return out
}

// wcMeaning says what an IB work-completion status means for NCCL.
var wcMeaning = map[int]string{
	4:  "a local protection error: the NIC could not access the registered memory, which for GPU buffers points at GPUDirect RDMA (nvidia-peermem or dma-buf missing, PCIe ACS/IOMMU redirecting peer traffic)",
	5:  "the work request was flushed: the queue pair had already failed, so look for the first, different error",
	9:  "the remote side rejected the request",
	10: "a remote access error: the peer's memory registration does not allow the access (GPUDirect RDMA on the other host)",
	11: "a remote operation error",
	12: "the transport retry counter was exceeded: the peer never acknowledged, a timeout. Right at the start of a job this means the two NICs cannot reach each other over RDMA: for RoCE the GID index (NCCL_IB_GID_INDEX: a RoCE v2 IPv4 entry, not the link-local fe80 one) or the routing between subnets; later in a job a link flap, a congested fabric or a dead peer",
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
		if st == 12 && (strings.Contains(l.Text, "localGid fe80:") || strings.Contains(l.Text, "remoteGid fe80:") || strings.Contains(l.Text, "remoteGids fe80:")) {
			b.WriteString(" The GIDs shown are link-local (fe80::), which do not route between subnets: pick a routable RoCE v2 GID with NCCL_IB_GID_INDEX.")
		}
		return b.String()
	}
	return ""
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
	return numberAfter(t, "with error ", "completion with error ")
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
// release the log comes from (the path types were renumbered in 2.26 and
// 2.27).
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
