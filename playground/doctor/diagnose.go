package doctor

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
	"github.com/distributed-nav/distributed-nav/playground/topo"
)

// maxDiagnosisEvidence caps the evidence lines of one Diagnosis.
const maxDiagnosisEvidence = 12

// Diagnose explains a Summary in the light of the environment the job ran
// with (env may be empty; the log's own "set by environment" echoes are used
// too). Diagnoses come most serious first; each names its evidence lines and
// links to the troubleshooting notes and the variable reference.
func Diagnose(s *Summary, env ncclenv.Env) []Diagnosis {
	if s == nil {
		s = &Summary{}
	}
	d := &diagnoser{s: s, env: env}
	out := []Diagnosis{} // an empty list, never null, in the JSON
	for _, rule := range logRules {
		if dg, ok := rule(d); ok {
			out = append(out, dg)
		}
	}
	out = append(out, d.lineDiagnoses()...)
	for i := range out {
		if unproven[out[i].ID] {
			out[i].Explanation += unprovenNote
		}
	}
	out = append(out, d.envDiagnoses()...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Severity > out[j].Severity })
	// The generic readings come after every rule whatever their severity:
	// they are never louder than a rule.
	return append(out, d.genericReadings(out)...)
}

// logRules is the registry of log diagnoses, tried in this order.
var logRules = []func(*diagnoser) (Diagnosis, bool){
	(*diagnoser).versionMismatch,
	(*diagnoser).collectiveTimeout,
	(*diagnoser).timeoutDesync,
	(*diagnoser).heartbeatAbort,
	(*diagnoser).devShm,
	(*diagnoser).ncclError,
	(*diagnoser).peerLost,
	(*diagnoser).p2pUnavailable,
	(*diagnoser).intraNodeNet,
	(*diagnoser).netSocket,
	(*diagnoser).nicWrongSocket,
	(*diagnoser).noGDR,
	(*diagnoser).fewChannels,
	(*diagnoser).flightRecorderOff,
	(*diagnoser).nvlsSetupHang,
	(*diagnoser).p2pHang,
	(*diagnoser).benchResult,
	(*diagnoser).ncclWarn,
	(*diagnoser).envNotApplied,
}

type diagnoser struct {
	s   *Summary
	env ncclenv.Env
}

// evidence collects distinct lines for one diagnosis.
type evidence struct {
	refs []LineRef
	seen map[LineRef]bool
}

// add keeps each non-empty ref not seen before, up to maxDiagnosisEvidence
// lines. It stays out of line (go:noinline): inlined with its map code at
// ~40 call sites it grew the wasm playground noticeably.
//
//go:noinline
func (e *evidence) add(refs ...LineRef) {
	for _, r := range refs {
		if r.Text == "" && r.Line == 0 {
			continue
		}
		if e.seen == nil {
			e.seen = map[LineRef]bool{}
		}
		if e.seen[r] || len(e.refs) >= maxDiagnosisEvidence {
			continue
		}
		e.seen[r] = true
		e.refs = append(e.refs, r)
	}
}

func (e *evidence) list() []LineRef {
	out := append([]LineRef(nil), e.refs...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	return out
}

// setting returns the value of an environment variable: the environment
// given to Diagnose first, else the last echo in the log. The LineRef is the
// log line, or Line 0 for the given environment.
func (d *diagnoser) setting(name string) (string, LineRef, bool) {
	if v, ok := d.env.Lookup(name); ok {
		return v, LineRef{Line: 0, Text: name + "=" + v}, true
	}
	if e, ok := d.s.Env(name); ok {
		return e.Value, e.Line, true
	}
	return "", LineRef{}, false
}

// p2pLevel returns the P2P level in force and the evidence for a user
// setting (nil for the default PXB).
func (d *diagnoser) p2pLevel() (topo.PathType, []LineRef) {
	if v, ref, ok := d.setting("NCCL_P2P_DISABLE"); ok && isOne(v) {
		return topo.PathLOC, []LineRef{ref}
	}
	if v, ref, ok := d.setting("NCCL_P2P_LEVEL"); ok {
		// NCCL compares the names case-sensitively and ignores anything
		// else that does not start with a digit.
		v = strings.TrimSpace(v)
		if t, err := topo.ParsePathType(v); err == nil && v == strings.ToUpper(v) && t <= topo.PathSYS {
			return t, []LineRef{ref}
		}
		if c := ncclenv.ParseCInt(v); c.Digits && v != "" && v[0] >= '0' && v[0] <= '9' {
			old := []topo.PathType{topo.PathLOC, topo.PathPIX, topo.PathPXB, topo.PathPHB, topo.PathSYS, topo.PathSYS}
			i := min(max(int(c.Value), 0), len(old)-1)
			return old[i], []LineRef{ref}
		}
	}
	return topo.PathPXB, nil
}

func (d *diagnoser) p2pUnavailable() (Diagnosis, bool) {
	s := d.s
	var ev evidence
	var parts []string
	shm := 0
	for _, t := range s.Transports {
		if family(t.Kind) == "SHM" {
			shm += t.Count
			ev.add(t.First)
		}
	}
	for _, c := range s.Connections {
		if c.Transport == "SHM" && len(ev.refs) < 4 {
			ev.add(LineRef{c.Line, c.text})
		}
	}
	if shm > 0 {
		parts = append(parts, fmt.Sprintf("%d connection line(s) inside a host use the SHM transport: every transfer is copied through pinned host memory instead of going from GPU to GPU.", shm))
	}
	if !s.P2PDisabled.Empty() {
		ev.add(s.P2PDisabled.Lines...)
		parts = append(parts, "NCCL reports that P2P is disabled between GPUs that look connected: the driver (NVML) refuses peer access, as it does on GeForce cards or when PCIe ACS/IOMMU settings block peer traffic.")
	}
	level, levelRefs := d.p2pLevel()
	beyond := 0
	worst := ""
	for _, p := range s.Paths {
		if !strings.HasPrefix(strings.ToUpper(p.From), "GPU/") || !strings.HasPrefix(strings.ToUpper(p.To), "GPU/") {
			continue
		}
		t, err := topo.ParsePathType(p.Type)
		if err != nil || t <= level || t == topo.PathLOC {
			continue
		}
		beyond++
		if worst == "" || p.Type == "SYS" {
			worst = p.Type
		}
		if len(ev.refs) < 4 {
			ev.add(LineRef{p.Line, p.text})
		}
	}
	if beyond > 0 {
		parts = append(parts, fmt.Sprintf("The GRAPH dump lists %d GPU-to-GPU path(s) beyond the P2P level %s (the worst is %s: PHB crosses a CPU host bridge, SYS the link between CPU sockets), so NCCL will not use P2P between those GPUs.", beyond, level, worst))
	}
	envOff := level == topo.PathLOC && levelRefs != nil
	if envOff && s.LocalRanks != 1 && !s.HasTransport("P2P") {
		ev.add(levelRefs...)
		parts = append(parts, "The environment turns P2P off (NCCL_P2P_DISABLE=1 or NCCL_P2P_LEVEL=LOC), so GPUs of one host fall back to SHM or the network.")
	}
	if len(parts) == 0 {
		return Diagnosis{}, false
	}
	parts = append(parts, "Check `nvidia-smi topo -m` and `nvidia-smi topo -p2p r`; keep the GPUs of a job under one socket or switch; raise NCCL_P2P_LEVEL only where the platform really supports cross-socket P2P, and measure.")
	ls := []Link{linkP2P}
	if shm > 0 {
		ls = append(ls, linkPCIe4090)
	}
	if beyond > 0 {
		ls = append(ls, linkCrossSocket)
	}
	ls = append(ls, linkTransportSel, envLink("NCCL_P2P_LEVEL"), envLink("NCCL_P2P_DISABLE"))
	return Diagnosis{ID: "p2p-unavailable", Severity: Warning, Title: "GPUs of one host do not use P2P",
		Explanation: strings.Join(parts, " "), Evidence: ev.list(), Links: links(ls...)}, true
}

func (d *diagnoser) intraNodeNet() (Diagnosis, bool) {
	s := d.s
	rankHost := map[int]string{}
	for _, r := range s.Ranks {
		if r.Host != "" {
			rankHost[r.Rank] = r.Host
		}
	}
	var ev evidence
	n := 0
	for _, c := range s.Connections {
		if c.Transport != "NET" || c.To < 0 {
			continue
		}
		hf, okF := rankHost[c.From]
		ht, okT := rankHost[c.To]
		if s.NNodes == 1 || (okF && okT && hf == ht) {
			n++
			ev.add(LineRef{c.Line, c.text})
		}
	}
	if n == 0 {
		return Diagnosis{}, false
	}
	expl := fmt.Sprintf("%d connection(s) between ranks of the same host go through the network transport. NCCL does this when neither P2P nor SHM is possible: SHM disabled, or the ranks see different /dev/shm (separate containers).", n)
	if v, ref, ok := d.setting("NCCL_SHM_DISABLE"); ok && isOne(v) {
		ev.add(ref)
		expl += " NCCL_SHM_DISABLE=1 is set; unset it."
	}
	return Diagnosis{ID: "intra-node-net", Severity: Warning, Title: "Traffic inside a host goes through the network",
		Explanation: expl, Evidence: ev.list(), Links: links(linkSHM, linkP2P, linkDevShm, envLink("NCCL_SHM_DISABLE"))}, true
}

func (d *diagnoser) netSocket() (Diagnosis, bool) {
	s := d.s
	var ev evidence
	conns := 0
	for _, t := range s.Transports {
		if t.Kind == "NET/Socket" {
			conns += t.Count
			ev.add(t.First)
		}
	}
	chosen := strings.EqualFold(s.Network, "Socket") || !s.NetSocket.Empty() || (s.Network == "" && s.HasNetDevices("Socket"))
	// NCCL_IB_DISABLE=0 or an NCCL_IB_HCA list says InfiniBand/RoCE was
	// meant to carry the traffic: "No device found" is then the failure,
	// whether or not the excerpt shows the socket transport taking over.
	var wanted []LineRef
	if v, ref, ok := d.setting("NCCL_IB_DISABLE"); ok && isOff(v) {
		wanted = append(wanted, ref)
	}
	if _, ref, ok := d.setting("NCCL_IB_HCA"); ok {
		wanted = append(wanted, ref)
	}
	ibMissing := len(wanted) > 0 && !s.IBNoDevice.Empty()
	// A verbs device NCCL cannot open, or no IP interface for the IB
	// transport's own connections, is a failure of the IB setup whatever
	// the environment says (a host without RDMA NICs prints neither).
	for _, k := range []string{"open-failed", "no-ip-if"} {
		if e := s.netCues[k]; e != nil && !e.Empty() {
			ibMissing = true
		}
	}
	if conns == 0 && !chosen && !ibMissing {
		return Diagnosis{}, false
	}
	ev.add(wanted...)
	ev.add(s.IBNoDevice.Lines...)
	ev.add(s.NetSocket.Lines...)
	causes := d.netCauses(&ev)
	multi := s.NNodes > 1 || len(s.Hosts) > 1 || conns > 0
	sev := Info
	expl := "NCCL found no usable InfiniBand/RoCE device and chose its TCP socket transport."
	if !s.IBNoDevice.Empty() {
		expl = "NCCL reports no InfiniBand device (or cannot load libibverbs) and chose its TCP socket transport."
	}
	if ibMissing && !multi {
		sev = Warning
		expl += " The log shows InfiniBand/RoCE was meant to carry the traffic (NCCL_IB_DISABLE=0, an NCCL_IB_HCA list, or an RDMA device NCCL found but could not use): between hosts this runs over TCP."
	}
	if multi {
		sev = Warning
		if conns > 0 {
			expl += fmt.Sprintf(" %d connection line(s) between hosts run over NET/Socket, which reaches a fraction of what RDMA NICs deliver and costs CPU time.", conns)
		} else {
			expl += " The job spans several hosts, so inter-node traffic runs over TCP."
		}
		expl += " Pass the RDMA devices into the container, install libibverbs, and check NCCL_IB_DISABLE, NCCL_IB_HCA and NCCL_SOCKET_IFNAME on every node."
	} else if !ibMissing {
		expl += " Inside one host this is harmless (P2P or SHM carry the traffic), but a multi-node run with the same setup would use TCP between hosts."
	}
	if len(causes) > 0 {
		expl += " Why, from the log: " + strings.Join(causes, " ")
	} else {
		expl += " The log does not say why (NCCL_DEBUG=INFO with NCCL_DEBUG_SUBSYS=INIT,NET prints the IB device search)."
	}
	return Diagnosis{ID: "net-socket", Severity: sev, Title: "NET/Socket instead of InfiniBand",
		Explanation: expl, Evidence: ev.list(),
		Links: links(linkNIC, linkNetSocketHW, envLink("NCCL_IB_HCA"), envLink("NCCL_SOCKET_IFNAME"), envLink("NCCL_IB_DISABLE"))}, true
}

func (d *diagnoser) nicWrongSocket() (Diagnosis, bool) {
	s := d.s
	var ev evidence
	n := 0
	for _, p := range s.Paths {
		if strings.HasPrefix(strings.ToUpper(p.From), "GPU/") && strings.HasPrefix(strings.ToUpper(p.To), "NET/") && p.Type == "SYS" {
			n++
			ev.add(LineRef{p.Line, p.text})
		}
	}
	for _, g := range s.Graphs {
		if g.TypeInter == "SYS" && (s.NNodes > 1 || len(s.Hosts) > 1) {
			n++
			ev.add(g.Line)
		}
	}
	if n == 0 {
		return Diagnosis{}, false
	}
	return Diagnosis{ID: "nic-wrong-socket", Severity: Warning, Title: "GPUs reach their NIC across the CPU sockets",
		Links: links(linkNIC, linkGPUNIC, linkTopologyNote, envLink("NCCL_NET_GDR_LEVEL")), Evidence: ev.list(),
		Explanation: "The path from some GPUs to the network card is of type SYS: the NIC hangs under the other CPU socket. Such paths are beyond the default GPUDirect RDMA distance, so data is staged through host memory, and they share the inter-socket link. Check which CPU each NIC is attached to (NCCL_TOPO_DUMP_FILE), prefer NICs on the GPU's own socket, and on NVLink systems let PXN route through a closer GPU.",
	}, true
}

func (d *diagnoser) noGDR() (Diagnosis, bool) {
	s := d.s
	var ev evidence
	rdma, gdr := 0, 0
	for _, c := range s.Connections {
		if c.Transport != "NET" || strings.HasPrefix(c.Via, "NET/Socket") {
			continue
		}
		rdma++
		if strings.Contains(c.Via, "GDRDMA") {
			gdr++
		} else if len(ev.refs) < 4 {
			ev.add(LineRef{c.Line, c.text})
		}
	}
	if hca := s.gdrNoModule; !hca.Empty() && gdr == 0 {
		ev.add(hca.Lines...)
		expl := fmt.Sprintf("%d line(s) say GPUDirect RDMA is disabled for a whole HCA: the NIC cannot reach GPU memory, so network transfers are staged through host memory. That needs a peer-memory module (nvidia-peermem, formerly nv_peer_mem) or DMA-BUF. NCCL up to 2.22 looks only for nv_peer_mem (/sys/kernel/mm/memory_peers/nv_mem/version); 2.23 also recognises nvidia-peermem (/sys/module/nvidia_peermem/version), so after an upgrade that swaps the modules an older NCCL disables it although nvidia-peermem is loaded. Up to 2.22 every path NCCL checks is under /sys/kernel/mm/memory_peers, which only a module that registered with MLNX_OFED's peer-memory interface creates: with the directory missing (a driver or MLNX_OFED not built for the running kernel) GDR stays off although lsmod lists the module, unless the kernel offers DMA-BUF.", hca.Count)
		return Diagnosis{ID: "no-gdrdma", Severity: Warning, Title: "Network transfers without GPUDirect RDMA",
			Links: links(linkNIC, linkGPUNIC, envLink("NCCL_NET_GDR_LEVEL"), envLink("NCCL_DMABUF_ENABLE")), Evidence: ev.list(),
			Explanation: expl + " Fix: `sudo modprobe nvidia-peermem` on every node (and at boot); if it is loaded, NCCL 2.23 or later, or DMA-BUF (NCCL_DMABUF_ENABLE=1); if it loads without registering, reinstall the driver after MLNX_OFED for the running kernel, or run a kernel both support. Check: `lsmod | grep -e nvidia_peermem -e nv_peer_mem`, `ls /sys/kernel/mm/memory_peers`, `dmesg | grep -i peermem` and the NCCL version line; NET connection lines then end in /GDRDMA.",
		}, true
	}
	if rdma == 0 || gdr > 0 {
		return Diagnosis{}, false
	}
	return Diagnosis{ID: "no-gdrdma", Severity: Info, Title: "Network transfers without GPUDirect RDMA",
		Links: links(linkNIC, linkGPUNIC, envLink("NCCL_NET_GDR_LEVEL")), Evidence: ev.list(),
		Explanation: fmt.Sprintf("None of the %d network connection line(s) carries /GDRDMA: the NIC reads and writes host memory and NCCL copies between it and the GPU. That is expected for one GPU per node without a nearby NIC or without the nvidia-peermem module, and costs bandwidth on fast networks. Check the GPU-NIC distance in the topology and whether the peer-memory kernel module is loaded.", rdma),
	}, true
}

func (d *diagnoser) fewChannels() (Diagnosis, bool) {
	s := d.s
	var ev evidence
	var parts []string
	sev := Info
	count := s.ChannelCount()
	for _, name := range []string{"NCCL_MAX_NCHANNELS", "NCCL_MAX_NRINGS", "NCCL_MAX_CTAS"} {
		v, ref, ok := d.setting(name)
		if !ok {
			continue
		}
		c := ncclenv.ParseCInt(v)
		if !c.Digits || c.Value <= 0 {
			continue
		}
		if count == 0 || int64(count) <= c.Value {
			ev.add(ref)
			sev = Warning
			parts = append(parts, fmt.Sprintf("%s=%d caps the number of channels; on NVLink machines NCCL would otherwise use many more.", name, c.Value))
		}
	}
	values := map[int]bool{}
	for _, c := range s.Channels {
		values[c.Coll] = true
	}
	if len(values) > 1 && len(s.NRankSizes) <= 1 {
		var vs []int
		for v := range values {
			vs = append(vs, v)
		}
		sort.Ints(vs)
		for _, c := range s.Channels {
			ev.add(c.Line)
		}
		sev = Warning
		parts = append(parts, fmt.Sprintf("Ranks of what looks like one communicator report different channel counts (%s); every rank uses the minimum, so one rank with a worse topology or a stray cap slows everyone.", joinInts(vs)))
	}
	nvlink := !s.NVLSComms.Empty() || !s.NVLSSupported.Empty()
	for _, g := range s.Graphs {
		if g.TypeIntra == "NVL" {
			nvlink = true
		}
	}
	if nvlink && count > 0 && count <= 4 && s.NRanks > 1 {
		for _, c := range s.Channels {
			ev.add(c.Line)
		}
		for _, r := range s.Rings {
			if len(ev.refs) < 4 {
				ev.add(LineRef{r.Line, fmt.Sprintf("Channel %02d/%02d", r.Channel, r.Of)})
			}
		}
		parts = append(parts, fmt.Sprintf("The GPUs are NVLink-connected but only %d collective channel(s) are in use; NVLink systems normally get 16 or more.", count))
		sev = max(sev, Warning)
	}
	if len(parts) == 0 {
		return Diagnosis{}, false
	}
	parts = append(parts, "Remove stale caps and compare the GRAPH lines (Pattern ..., nChannels ...) across ranks.")
	return Diagnosis{ID: "few-channels", Severity: sev, Title: "Fewer channels than the hardware supports",
		Explanation: strings.Join(parts, " "), Evidence: ev.list(),
		Links: links(linkChannels, linkChannelsRings, envLink("NCCL_MAX_NCHANNELS"), envLink("NCCL_MIN_NCHANNELS"))}, true
}

func joinInts(vs []int) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ", ")
}

func (d *diagnoser) versionMismatch() (Diagnosis, bool) {
	s := d.s
	if len(s.Versions) < 2 && s.VersionMismatch.Empty() {
		return Diagnosis{}, false
	}
	var ev evidence
	var vs []string
	for _, v := range s.Versions {
		ev.add(v.Line)
		vs = append(vs, v.Version)
	}
	ev.add(s.VersionMismatch.Lines...)
	expl := "Ranks of the job run different NCCL releases"
	if len(vs) > 1 {
		expl += " (" + strings.Join(vs, ", ") + ")"
	}
	expl += ". NCCL compares the version of every rank at initialisation and fails with invalid usage when they differ; far-apart versions can even hang before the check. Use one image, one PyTorch build and one libnccl everywhere, and check which libnccl the dynamic loader picks (a system copy can shadow the one in the PyTorch wheel)."
	return Diagnosis{ID: "nccl-version-mismatch", Severity: Error, Title: "Mismatched NCCL versions",
		Explanation: expl, Evidence: ev.list(), Links: links(linkVersions)}, true
}

// errorHandlingNames are PyTorch's ErrorHandlingMode values
// (https://github.com/pytorch/pytorch/blob/v2.6.0/torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp#L142-L147).
var errorHandlingNames = map[int]string{0: "NoHandling", 1: "TearDown", 2: "CleanUpOnly", 3: "SkipCleanUp"}

var errorHandlingEffect = map[int]string{
	0: "nothing is done, so the job keeps hanging",
	1: "the communicators are aborted (ncclCommAbort) and the process is ended",
	2: "the communicators are aborted but the process keeps running",
	3: "the process is ended without aborting the communicators",
}

// errorHandling explains which TORCH_NCCL_ASYNC_ERROR_HANDLING mode applied.
func (d *diagnoser) errorHandling(ev *evidence) string {
	s := d.s
	if v, ref, ok := d.setting("TORCH_NCCL_BLOCKING_WAIT"); ok && !isOff(v) {
		ev.add(ref)
		return "TORCH_NCCL_BLOCKING_WAIT is on: there is no watchdog thread and the timeout surfaces as an exception from wait(), so TORCH_NCCL_ASYNC_ERROR_HANDLING does not apply."
	}
	if s.BlockingWait != nil && s.BlockingWait.Mode != 0 {
		ev.add(s.BlockingWait.Line)
		return "The process group logged blocking wait as on: the timeout surfaces as an exception from wait() and the asynchronous error handling does not apply."
	}
	describe := func(mode int, where string) string {
		name, ok := errorHandlingNames[mode]
		if !ok {
			return fmt.Sprintf("TORCH_NCCL_ASYNC_ERROR_HANDLING is %d (%s), not one of the modes 0-3.", mode, where)
		}
		return fmt.Sprintf("Error handling was mode %d (%s, %s): %s.", mode, name, where, errorHandlingEffect[mode])
	}
	for _, name := range []string{"TORCH_NCCL_ASYNC_ERROR_HANDLING", "NCCL_ASYNC_ERROR_HANDLING"} {
		if v, ok := d.env.Lookup(name); ok {
			if m, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
				ev.add(LineRef{Text: name + "=" + v})
				return describe(m, "from "+name+" in the environment")
			}
		}
	}
	if s.ErrorHandling != nil {
		ev.add(s.ErrorHandling.Line)
		return describe(s.ErrorHandling.Mode, "as the process group logged it")
	}
	if !s.TearDown.Empty() {
		ev.add(s.TearDown.Lines...)
		return "The watchdog took the whole process down, so error handling was mode 1 (TearDown: abort the communicators, then end the process) or 3 (SkipCleanUp: end it without aborting them). Plain `python` launches default to 3, torchrun sets 1 for its workers."
	}
	return "The log does not say which TORCH_NCCL_ASYNC_ERROR_HANDLING mode applied: PyTorch v2.6.0 defaults to 3 (SkipCleanUp: end the process without aborting the communicators) for a plain `python` launch, and torchrun sets 1 (TearDown: abort them, then end the process)."
}

func (d *diagnoser) collectiveTimeout() (Diagnosis, bool) {
	s := d.s
	if len(s.Timeouts) == 0 && s.TimeoutLines.Empty() {
		return Diagnosis{}, false
	}
	var ev evidence
	ops := map[string]bool{}
	ranks := map[int]bool{}
	procs := map[int]bool{}
	var timeoutMs, ranFor int64 = -1, -1
	for _, t := range s.Timeouts {
		if t.OpType != "" {
			ops[t.OpType] = true
		}
		if t.Rank >= 0 {
			ranks[t.Rank] = true
		}
		if t.proc >= 0 {
			procs[t.proc] = true
		}
		timeoutMs = max(timeoutMs, t.TimeoutMs)
		ranFor = max(ranFor, t.RanForMs)
	}
	ev.add(s.TimeoutLines.Lines...)
	var b strings.Builder
	if len(s.Timeouts) > 0 {
		fmt.Fprintf(&b, "The PyTorch watchdog found %d collective(s) that did not finish in time", len(s.Timeouts))
		if len(ops) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(sortedKeys(ops), ", "))
		}
		if len(procs) > len(ranks) {
			// Launcher tags name processes; "[Rank N]" is the rank in
			// each process group, and several groups can share N.
			fmt.Fprintf(&b, " on %d process(es)", len(procs))
		} else if len(ranks) > 0 {
			fmt.Fprintf(&b, " on %d rank(s)", len(ranks))
		}
		if timeoutMs > 0 {
			fmt.Fprintf(&b, "; the process-group timeout was %s", humanMs(timeoutMs))
		}
		b.WriteString(".")
		if timeoutMs > 0 && ranFor > 2*timeoutMs {
			fmt.Fprintf(&b, " One collective ran for %s before it was reported, far past the timeout: the watchdog itself was held up (a blocked CUDA or NCCL call).", humanMs(ranFor))
		}
	} else {
		b.WriteString("PyTorch reports failed or timed-out NCCL work.")
	}
	b.WriteString(timeoutOrigin(s.TimeoutLines.Lines))
	b.WriteString(d.progressSummary(&ev))
	b.WriteString(d.exitTeardown(s.TimeoutLines.Lines, &ev))
	b.WriteString(firstCollective(s.Timeouts))
	if d.groupsFailing() > 1 {
		b.WriteString(" When several process groups of one job fail together, check the order in which each process issues collectives: NCCL needs every rank to call the collectives of a communicator in the same order, so collectives issued from two threads at once on one communicator, or groups entered in a different order on different ranks, hang.")
	}
	b.WriteString(" The rank that reports a timeout is usually a victim: another rank never entered the matching collective (it crashed, is stuck in data loading or I/O, or took a different code path: work done by rank 0 alone, such as evaluation, plotting or saving a checkpoint at the end of an epoch, while the other ranks already wait in the next collective; run such work on all ranks or make it shorter than the timeout). ")
	b.WriteString(d.errorHandling(&ev))
	b.WriteString(" Turn on the flight recorder (TORCH_NCCL_TRACE_BUFFER_SIZE=2000, TORCH_NCCL_DUMP_ON_TIMEOUT=1) and compare the last sequence numbers of all ranks.")
	return Diagnosis{ID: "collective-timeout", Severity: Error, Title: "Collective timeout",
		Explanation: b.String(), Evidence: ev.list(),
		Links: links(linkTimeout, linkWatchdogNote, envLink("TORCH_NCCL_ASYNC_ERROR_HANDLING"), envLink("TORCH_NCCL_TRACE_BUFFER_SIZE"))}, true
}

// firstCollective explains a timeout of a process group's first
// collective (SeqNum 0 or 1): nothing had run on the group yet, so the
// ranks reached it at different times or one never did. Failing that, a
// later one-element all-reduce reads as a barrier that one rank's solitary
// work outlasted. It returns "" when the log has neither.
func firstCollective(ts []Timeout) string {
	for _, t := range ts {
		if t.SeqNum < 0 || t.SeqNum > 1 {
			continue
		}
		msg := fmt.Sprintf(" The collective that timed out is #%d, the first of its process group: the ranks reached it at different times, or one never did. Ranks that start slowly (loading a large checkpoint or shards, preprocessing or scanning data, compiling) keep the others waiting here past the timeout (10 minutes for NCCL in PyTorch v2.6.0). If the slow start is legitimate, pass init_process_group(timeout=datetime.timedelta(minutes=N)) above the slowest start; otherwise find the rank that never arrived.", t.SeqNum)
		if t.OpType == "ALLREDUCE" && t.numelIn == 1 && t.numelOut == 1 {
			// ProcessGroupNCCL::barrier all-reduces a one-element tensor
			// on the device it infers (PyTorch v2.6.0 ProcessGroupNCCL.cpp).
			msg += " A one-element all-reduce first is what dist.barrier() issues, on the GPU PyTorch infers when the process named none; if every rank reached it, they ran it on the wrong GPUs: call torch.cuda.set_device(local_rank) before the barrier, or pass init_process_group(device_id=...) or dist.barrier(device_ids=[local_rank])."
		}
		return msg
	}
	for _, t := range ts {
		if t.OpType == "ALLREDUCE" && t.numelIn == 1 && t.numelOut == 1 {
			return " The collective is a one-element all-reduce, what dist.barrier() issues (Hugging Face's main_process_first and accelerate's wait_for_everyone are barriers): the other ranks waited there while one rank, usually rank 0, worked alone for longer than the timeout (tokenising or caching a dataset, clustering, downloading, saving). If that work is legitimate, raise the group's timeout (init_process_group(timeout=...), --ddp_timeout of Hugging Face's TrainingArguments, accelerate's InitProcessGroupKwargs(timeout=...)) or run it once beforehand and load its result."
		}
	}
	return ""
}

// groupsFailing counts the distinct process groups named by the
// watchdogs' progress reports.
func (d *diagnoser) groupsFailing() int {
	seen := map[string]bool{}
	for _, p := range d.s.Progress {
		seen[pgKey(p.PG)] = true
	}
	return len(seen)
}

// pgKey identifies a process group from its tag: PyTorch 2.4+ writes
// "PG ID 11 PG GUID 119(name)", where the GUID is unique in the job and
// the ID only per process; older releases wrote "PG 119" with that same
// unique number.
func pgKey(tag string) string {
	if i := strings.Index(tag, "GUID "); i >= 0 {
		if n, ok := leadingInt(tag[i+len("GUID "):]); ok {
			return strconv.Itoa(n)
		}
	}
	if n, ok := leadingInt(strings.TrimPrefix(tag, "PG ")); ok && strings.HasPrefix(tag, "PG ") {
		return strconv.Itoa(n)
	}
	return tag
}

func humanMs(ms int64) string {
	switch {
	case ms >= 3600000 && ms%60000 == 0:
		return fmt.Sprintf("%d min", ms/60000)
	case ms >= 3600000:
		return fmt.Sprintf("%.1f h", float64(ms)/3600000)
	case ms >= 60000 && ms%60000 == 0:
		return fmt.Sprintf("%d min", ms/60000)
	case ms >= 1000:
		return fmt.Sprintf("%.0f s", float64(ms)/1000)
	}
	return fmt.Sprintf("%d ms", ms)
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// timeoutDesync flags timeouts in which ranks of one process group are
// stuck in different collectives (different sequence numbers or op types),
// the signature of mismatched collectives, and ranks stuck in the same
// collective with different element counts: one call made with tensors of
// different sizes on different ranks. Ranks that report several timeouts
// are left out: they may belong to several groups.
func (d *diagnoser) timeoutDesync() (Diagnosis, bool) {
	type key struct {
		pg   string
		rank int
	}
	per := map[key][]Timeout{}
	for _, t := range d.s.Timeouts {
		if t.Rank >= 0 {
			k := key{t.PG, t.Rank}
			per[k] = append(per[k], t)
		}
	}
	groups := map[string]map[string]Timeout{}
	// same holds, per group and collective, every rank that waits in it.
	same := map[string]map[string][]Timeout{}
	for k, ts := range per {
		if len(ts) != 1 {
			continue
		}
		if groups[k.pg] == nil {
			groups[k.pg] = map[string]Timeout{}
			same[k.pg] = map[string][]Timeout{}
		}
		// Ranks that share a collective are named by the lowest one, not
		// by the map's iteration order.
		key := strconv.FormatInt(ts[0].SeqNum, 10) + "/" + ts[0].OpType
		if old, ok := groups[k.pg][key]; !ok || ts[0].Rank < old.Rank {
			groups[k.pg][key] = ts[0]
		}
		same[k.pg][key] = append(same[k.pg][key], ts[0])
	}
	var ev evidence
	var found, sizes []string
	broadcast := false
	for _, pg := range sortedGroupKeys(groups) {
		g := groups[pg]
		name := pg
		if name == "" {
			name = "the process group"
		}
		for _, k := range sortedTimeoutKeys(g) {
			if pg == "" && subgroupRanks(same[pg][k]) {
				// Lines without a group tag from ranks numbered
				// differently in the job and in their group may come
				// from different groups, whose sizes may differ.
				continue
			}
			if m, ok := sizeMismatch(same[pg][k]); ok {
				sizes = append(sizes, m)
				broadcast = broadcast || g[k].OpType == "BROADCAST"
				for _, t := range same[pg][k] {
					ev.add(d.timeoutLine(t))
				}
			}
		}
		if len(g) < 2 {
			continue
		}
		var what []string
		for _, k := range sortedTimeoutKeys(g) {
			t := g[k]
			what = append(what, fmt.Sprintf("rank %d at #%d %s", t.Rank, t.SeqNum, t.OpType))
			ev.add(d.timeoutLine(t))
		}
		found = append(found, name+": "+strings.Join(what, "; "))
	}
	if len(found) == 0 && len(sizes) == 0 {
		return Diagnosis{}, false
	}
	title, expl := "Ranks time out in different collectives", ""
	if len(found) > 0 {
		expl = "The timed-out collectives disagree between ranks of one process group (" + strings.Join(found, " | ") + "). NCCL matches collectives by order, so ranks that issue different sequences wait for each other forever. Look for collectives called on some ranks only, uneven data, or metrics all-reduced conditionally. "
	} else {
		title = "Ranks time out in one collective called with different sizes"
	}
	if len(sizes) > 0 {
		expl += "Ranks wait in the same collective with different sizes (" + strings.Join(sizes, " | ") + "): one call made with tensors of different sizes on different ranks, which NCCL does not check. "
		if broadcast {
			expl += ddpBufferBroadcast + " "
		}
	}
	expl += "TORCH_DISTRIBUTED_DEBUG=DETAIL checks every collective across ranks (op type, shapes) and names the ranks that differ."
	return Diagnosis{ID: "timeout-desync", Severity: Warning, Title: title,
		Explanation: expl,
		Evidence:    ev.list(), Links: links(linkMismatched, linkTimeout, envLink("TORCH_DISTRIBUTED_DEBUG"))}, true
}

// subgroupRanks reports whether a timeout's rank in its group differs
// from its rank in the job (the launcher's "[rank13]:" tag).
func subgroupRanks(ts []Timeout) bool {
	for _, t := range ts {
		if t.proc >= 0 && t.proc != t.Rank {
			return true
		}
	}
	return false
}

// sizeMismatch describes the ranks of one collective (same group,
// sequence number and op type) that report different element counts, for
// the op types whose counts every rank must share: "#7219 BROADCAST:
// NumelIn 24084544 on rank 2, 64 on rank 3".
func sizeMismatch(ts []Timeout) (string, bool) {
	if len(ts) < 2 {
		return "", false
	}
	switch ts[0].OpType {
	case "ALLREDUCE", "BROADCAST", "REDUCE", "ALLGATHER", "_ALLGATHER_BASE", "REDUCE_SCATTER", "_REDUCE_SCATTER_BASE":
	default:
		// Gather, scatter, all-to-all and point-to-point counts differ
		// between ranks by design.
		return "", false
	}
	ts = append([]Timeout(nil), ts...)
	sort.Slice(ts, func(i, j int) bool { return ts[i].Rank < ts[j].Rank })
	field := func(name string, n func(Timeout) int64) string {
		var parts []string
		first, differ := int64(-1), false
		for _, t := range ts {
			if n(t) < 0 {
				continue
			}
			if first < 0 {
				first = n(t)
			}
			differ = differ || n(t) != first
			parts = append(parts, fmt.Sprintf("%d on rank %d", n(t), t.Rank))
		}
		if !differ {
			return ""
		}
		return name + " " + strings.Join(parts, ", ")
	}
	m := field("NumelIn", func(t Timeout) int64 { return t.numelIn })
	if m == "" {
		m = field("NumelOut", func(t Timeout) int64 { return t.numelOut })
	}
	if m == "" {
		return "", false
	}
	return fmt.Sprintf("#%d %s: %s", ts[0].SeqNum, ts[0].OpType, m), true
}

func sortedGroupKeys(m map[string]map[string]Timeout) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sortedTimeoutKeys(m map[string]Timeout) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return m[out[i]].Rank < m[out[j]].Rank })
	return out
}

// timeoutLine finds the evidence line of a timeout.
func (d *diagnoser) timeoutLine(t Timeout) LineRef {
	for _, l := range d.s.TimeoutLines.Lines {
		if l.Line == t.Line {
			return l
		}
	}
	return LineRef{Line: t.Line, Text: fmt.Sprintf("[Rank %d] timeout of WorkNCCL(SeqNum=%d, OpType=%s)", t.Rank, t.SeqNum, t.OpType)}
}

func (d *diagnoser) heartbeatAbort() (Diagnosis, bool) {
	s := d.s
	if s.Heartbeat.Empty() {
		return Diagnosis{}, false
	}
	var ev evidence
	ev.add(s.Heartbeat.Lines...)
	expl := "The heartbeat monitor found the watchdog thread stuck"
	for _, l := range s.WatchdogStuck.Lines {
		if i := strings.Index(l.Text, "stuck for "); i >= 0 {
			if n, ok := leadingInt(l.Text[i+len("stuck for "):]); ok {
				expl += fmt.Sprintf(" for %d s", n)
				break
			}
		}
	}
	expl += " and terminated the process after trying to dump debug information." + heartbeatScope(s.Heartbeat.Lines) +
		" The watchdog hangs inside a CUDA or NCCL call (often ncclCommAbort or a CUDA event call blocked by another thread holding the GIL or the CUDA context)."
	if len(s.Timeouts) > 0 || !s.TimeoutLines.Empty() {
		expl += " A collective timeout came first, so the hang is in the clean-up after it; SkipCleanUp (TORCH_NCCL_ASYNC_ERROR_HANDLING=3) exists for exactly that case."
	}
	expl += d.exitTeardown(s.Heartbeat.Lines, &ev)
	expl += " Enable the flight recorder so the dump holds data; raise TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC only if dumps legitimately take longer, and keep TORCH_NCCL_ENABLE_MONITORING on in production."
	return Diagnosis{ID: "watchdog-heartbeat-abort", Severity: Error, Title: "Watchdog hang: the heartbeat monitor aborted the process",
		Explanation: expl, Evidence: ev.list(),
		Links: links(linkHeartbeat, linkHeartbeatNote, envLink("TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC"), envLink("TORCH_NCCL_ENABLE_MONITORING"))}, true
}

// exitTeardown names the cause when the processes were already exiting
// with live process groups (an exitMarks line before the failure lines):
// groups left to the garbage collector, or destroyed in a different order
// on different ranks, are torn down with no agreement across ranks, and a
// communicator whose peers are gone hangs in its clean-up. It returns ""
// when the log shows no such exit.
func (d *diagnoser) exitTeardown(failure []LineRef, ev *evidence) string {
	w := d.s.exiting.Lines
	if len(w) == 0 || len(failure) == 0 || w[0].Line > failure[0].Line {
		return ""
	}
	ev.add(w[0])
	return " It happened while the program was exiting: process groups left to garbage collection, or destroyed in a different order on different ranks (MoE runs have many), hang in NCCL's clean-up once their peers are gone. Call torch.distributed.destroy_process_group() on every rank at the end of the program, destroying the groups in the same order on every rank."
}

// exitMarks are parts of lines printed when a program ends: PyTorch's
// warning about live process groups, GoogleTest's closing banner, and
// Python's atexit handlers.
var exitMarks = []string{"destroy_process_group() was not called before program exit", "Global test environment tear-down", "in atexit"}

// heartbeatScope says which process groups and how many processes the
// heartbeat lines name, and how many collectives the watchdog still held
// ("workMetaList_.size()=N"): work it had not yet checked off.
func heartbeatScope(lines []LineRef) string {
	pgs := map[string]bool{}
	var names []string
	procs := map[int]bool{}
	pending := -1
	for _, l := range lines {
		if pg := torchPG(l.Text); pg != "" && !pgs[pgKey(pg)] && len(names) < 8 {
			pgs[pgKey(pg)] = true
			names = append(names, pg)
		}
		if r := launcherRank(l.Text); r >= 0 {
			procs[r] = true
		}
		if i := strings.Index(l.Text, "workMetaList_.size()="); i >= 0 {
			if n, ok := leadingInt(l.Text[i+len("workMetaList_.size()="):]); ok {
				pending = max(pending, n)
			}
		}
	}
	var parts []string
	if len(names) > 0 {
		p := "It happened in " + strings.Join(names, ", ")
		if len(procs) > 0 {
			p += fmt.Sprintf(" on %d process(es) of the log", len(procs))
		}
		parts = append(parts, p+".")
	}
	if pending > 0 {
		parts = append(parts, fmt.Sprintf("The watchdog's list still held %d collective(s) (workMetaList_: enqueued work it had not yet checked off; a stuck watchdog checks off nothing, so some may have finished): the flight recorder dump, or the last completed sequence number of each rank, tells which one hung first.", pending))
	}
	if len(parts) == 0 {
		return ""
	}
	return " " + strings.Join(parts, " ")
}

func (d *diagnoser) flightRecorderOff() (Diagnosis, bool) {
	if d.s.FlightRecorder.Empty() {
		return Diagnosis{}, false
	}
	var ev evidence
	ev.add(d.s.FlightRecorder.Lines...)
	return Diagnosis{ID: "flight-recorder-off", Severity: Info, Title: "The flight recorder was off",
		Explanation: "PyTorch could not show the stack of the failed collective because its flight recorder records nothing by default in v2.6.0. Set TORCH_NCCL_TRACE_BUFFER_SIZE=2000 (and TORCH_NCCL_DUMP_ON_TIMEOUT=1) before the next run so a timeout leaves per-rank dumps to compare.",
		Evidence:    ev.list(), Links: links(linkTimeout, envLink("TORCH_NCCL_TRACE_BUFFER_SIZE"), envLink("TORCH_NCCL_DUMP_ON_TIMEOUT"))}, true
}

func (d *diagnoser) peerLost() (Diagnosis, bool) {
	if d.s.PeerLost.Empty() && d.s.peerLostText.Empty() {
		return Diagnosis{}, false
	}
	var ev evidence
	ev.add(d.s.PeerLost.Lines...)
	ev.add(d.s.peerLostText.Lines...)
	return Diagnosis{ID: "peer-connection-lost", Severity: Warning, Title: "A peer closed its connection",
		Explanation: fmt.Sprintf("%d NCCL warning(s) say the other end of a connection went away (closed socket, failed receive, or an RDMA completion error). That is usually the echo of another rank that crashed or was killed first: find the earliest error in the logs of all ranks. If every rank reports it at once, suspect the network (link flaps, wrong interface in NCCL_SOCKET_IFNAME, RDMA timeouts, a node whose InfiniBand/RoCE port is unhealthy: `ibstat` state Active and the port error counters on every node).", d.s.PeerLost.Count+d.s.peerLostText.Count),
		Evidence:    ev.list(), Links: links(linkTimeout, linkNIC, envLink("NCCL_SOCKET_IFNAME"), envLink("NCCL_IB_TIMEOUT"))}, true
}

func (d *diagnoser) devShm() (Diagnosis, bool) {
	if d.s.ShmFailure.Empty() {
		return Diagnosis{}, false
	}
	var ev evidence
	ev.add(d.s.ShmFailure.Lines...)
	expl := "NCCL keeps host-memory buffers as files under /dev/shm and failed to create or grow one."
	if dataLoaderShm(d.s.ShmFailure.Lines) {
		expl = "PyTorch's DataLoader workers hand batches over through /dev/shm, and a worker died of a bus error or could not write its shared-memory file: /dev/shm is full."
	}
	for _, l := range d.s.ShmFailure.Lines {
		if i := strings.Index(l.Text, "(size "); i >= 0 {
			if n, ok := leadingInt(l.Text[i+len("(size "):]); ok && n > 0 {
				expl += fmt.Sprintf(" This segment is %.1f MiB; NCCL makes one per shared-memory connection, so the total grows with the GPUs.", float64(n)/(1<<20))
				break
			}
		}
	}
	expl += " Containers start with a small /dev/shm (64 MB in Docker) that DataLoader workers also use. Start the container with --shm-size=1g or --ipc=host; in Kubernetes mount an emptyDir with medium: Memory at /dev/shm; all ranks of a host must share one /dev/shm. Segments of crashed jobs stay behind and fill it too (`ls -la /dev/shm/nccl-*`, remove them when no job runs). NCCL_SHM_DISABLE=1 is a test, not a fix: the run then goes through P2P or the network transport, slower. Check: `df -h /dev/shm` in the container."
	return Diagnosis{ID: "dev-shm-full", Severity: Error, Title: "NCCL could not create its /dev/shm buffers",
		Explanation: expl,
		Evidence:    ev.list(), Links: links(linkDevShm, linkSHM, envLink("NCCL_CUMEM_HOST_ENABLE"), envLink("NCCL_SHM_DISABLE"))}, true
}

func (d *diagnoser) ncclError() (Diagnosis, bool) {
	if d.s.NCCLErrors.Empty() {
		return Diagnosis{}, false
	}
	var ev evidence
	ev.add(d.s.NCCLErrors.Lines...)
	return Diagnosis{ID: "nccl-error", Severity: Error, Title: "An NCCL call returned an error",
		Explanation: "A collective or communicator call returned an NCCL error to its caller (PyTorch, nccl-tests, Horovod, an inference server). The message names the class (invalid usage, system error, internal error, remote error); the cause is in the NCCL WARN lines just before it, on this rank or another. Rerun with NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=INIT,ENV (plus NET or P2P as needed) if they are missing." + ncclErrorCauses(d.s),
		Evidence:    ev.list(), Links: links(linkTroubleshoot, envLink("NCCL_DEBUG"), envLink("NCCL_DEBUG_SUBSYS"))}, true
}

// explainedLines returns the line numbers some rule's evidence holds.
func (d *diagnoser) explainedLines() map[int]bool {
	s := d.s
	explained := map[int]bool{}
	for _, e := range []Evidence{s.VersionMismatch, s.PeerLost, s.ShmFailure, s.P2PDisabled} {
		for _, l := range e.Lines {
			explained[l.Line] = true
		}
	}
	for _, e := range s.ruleHits {
		for _, l := range e.Lines {
			explained[l.Line] = true
		}
	}
	for _, e := range s.netCues {
		for _, l := range e.Lines {
			explained[l.Line] = true
		}
	}
	return explained
}

// ncclWarn lists the WARN lines no other diagnosis explains.
func (d *diagnoser) ncclWarn() (Diagnosis, bool) {
	s := d.s
	explained := d.explainedLines()
	rest := s.Warnings.Count - s.VersionMismatch.Count - s.PeerLost.Count - s.ShmFailure.Count
	var ev evidence
	for _, l := range s.Warnings.Lines {
		if !explained[l.Line] {
			ev.add(l)
		}
	}
	if rest <= 0 || len(ev.refs) == 0 {
		return Diagnosis{}, false
	}
	return Diagnosis{ID: "nccl-warn", Severity: Warning, Title: "NCCL warnings",
		Explanation: fmt.Sprintf("NCCL printed %d warning line(s) that none of the other diagnoses explains. NCCL warns right where an operation fails; the first warning in time is usually the cause and the rest are its consequences (the INFO lines that follow, such as \"file.cc:123 -> 3\", trace the error back up the call stack).", rest),
		Evidence:    ev.list(), Links: links(linkTroubleshoot, envLink("NCCL_DEBUG_SUBSYS"))}, true
}

// envNotApplied compares the environment handed to Diagnose with what the
// log shows NCCL did: a variable that should have changed the transports or
// the echoed value but did not, never reached NCCL (set after the first
// communicator, set in another shell, or ignored by a network plugin).
func (d *diagnoser) envNotApplied() (Diagnosis, bool) {
	s := d.s
	var ev evidence
	var parts []string
	ls := []Link{linkIgnoredEnv}
	given := func(name string) (string, bool) { return d.env.Lookup(name) }
	if v, ok := given("NCCL_P2P_DISABLE"); ok && isOne(v) && s.HasTransport("P2P") {
		ev.add(LineRef{Text: "NCCL_P2P_DISABLE=" + v}, d.firstTransport("P2P"))
		parts = append(parts, "NCCL_P2P_DISABLE=1 is in the environment, yet the log shows P2P connections.")
		ls = append(ls, linkP2P, envLink("NCCL_P2P_DISABLE"))
	}
	if v, ok := given("NCCL_SHM_DISABLE"); ok && isOne(v) && s.HasTransport("SHM") {
		ev.add(LineRef{Text: "NCCL_SHM_DISABLE=" + v}, d.firstTransport("SHM"))
		parts = append(parts, "NCCL_SHM_DISABLE=1 is in the environment, yet the log shows SHM connections.")
		ls = append(ls, linkSHM, envLink("NCCL_SHM_DISABLE"))
	}
	if v, ok := given("NCCL_IB_DISABLE"); ok && isOne(v) && (strings.HasPrefix(s.Network, "IB") || s.HasTransport("NET/IB")) {
		ev.add(LineRef{Text: "NCCL_IB_DISABLE=" + v})
		for _, t := range s.Transports {
			if strings.HasPrefix(t.Kind, "NET/IB") {
				ev.add(t.First)
			}
		}
		parts = append(parts, fmt.Sprintf("NCCL_IB_DISABLE=1 is in the environment, yet the network in use is %q: the variable only turns off NCCL's built-in IB transport, and an external net plugin (such as the HPC-X IBext plugin) decides for itself.", s.Network))
		ls = append(ls, linkNIC, envLink("NCCL_IB_DISABLE"))
	}
	for _, e := range s.EnvSettings {
		v, ok := given(e.Name)
		if ok && strings.TrimSpace(v) != e.Value && !(e.Name == "NCCL_P2P_DISABLE" && isOne(v) && e.Value == "1") {
			ev.add(LineRef{Text: e.Name + "=" + v}, e.Line)
			parts = append(parts, fmt.Sprintf("The environment sets %s=%s but NCCL read %s.", e.Name, v, e.Value))
			ls = append(ls, envLink(e.Name))
		}
	}
	if len(parts) == 0 {
		return Diagnosis{}, false
	}
	parts = append(parts, "Check that the environment you pasted is the one the ranks started with (launchers and containers often drop or override variables), that it is set before the first communicator is created, and the config files ~/.nccl.conf and /etc/nccl.conf.")
	return Diagnosis{ID: "env-not-applied", Severity: Warning, Title: "The environment and the log disagree",
		Explanation: strings.Join(parts, " "), Evidence: ev.list(), Links: links(ls...)}, true
}

// firstTransport returns the first connection line of a transport family.
func (d *diagnoser) firstTransport(fam string) LineRef {
	for _, t := range d.s.Transports {
		if family(t.Kind) == fam {
			return t.First
		}
	}
	return LineRef{}
}

// envTitles names the environment diagnoses.
var envTitles = map[string]string{
	"env-unknown":       "Unknown environment variables",
	"env-deprecated":    "Deprecated environment variables",
	"env-bad-value":     "Values NCCL or PyTorch read differently than written",
	"env-no-effect":     "Variables this release ignores",
	"env-debug-knob":    "Debugging settings left on",
	"env-contradiction": "Settings that contradict each other",
	"env-default":       "Settings that repeat the default",
	"env-container":     "Container metadata variables",
}

// envDiagnoses applies the environment rules to the given environment and
// the log's echoes, one Diagnosis per rule.
func (d *diagnoser) envDiagnoses() []Diagnosis {
	c, err := defaultChecker()
	if err != nil {
		return []Diagnosis{{ID: "env-tables", Severity: Error, Title: "Variable tables unavailable", Explanation: err.Error()}}
	}
	var entries []EnvEntry
	given := map[string]bool{}
	for _, name := range d.env.Names() {
		v, _ := d.env.Lookup(name)
		given[name] = true
		entries = append(entries, EnvEntry{Name: name, Value: v, Text: name + "=" + v})
	}
	for _, e := range d.s.EnvSettings {
		if !given[e.Name] {
			entries = append(entries, EnvEntry{Line: e.Line.Line, Name: e.Name, Value: e.Value, Text: e.Line.Text})
		}
	}
	byID := map[string]*Diagnosis{}
	var order []string
	evs := map[string]*evidence{}
	// Each diagnosis explains at most maxEnvLines settings in its text and
	// counts the rest, so that a dump of thousands of unknown names gives a
	// readable diagnosis and costs linear work.
	const maxEnvLines = 20
	shown, more := map[string]int{}, map[string]int{}
	add := func(id string, sev Severity, ref LineRef, line string, ls []Link) {
		dg, ok := byID[id]
		if !ok {
			dg = &Diagnosis{ID: id, Severity: sev, Title: envTitles[id]}
			byID[id] = dg
			evs[id] = &evidence{}
			order = append(order, id)
		}
		dg.Severity = max(dg.Severity, sev)
		evs[id].add(ref)
		if shown[id] >= maxEnvLines {
			more[id]++
			return
		}
		shown[id]++
		if dg.Explanation != "" {
			dg.Explanation += " "
		}
		dg.Explanation += line
		dg.Links = links(append(dg.Links, ls...)...)
	}
	for _, is := range c.check(entries) {
		line := fmt.Sprintf("%s=%s: %s", is.entry.Name, is.entry.Value, is.msg)
		if len(is.suggestions) > 0 {
			line += " (did you mean " + strings.Join(is.suggestions, ", ") + "?)"
		}
		if !strings.HasSuffix(line, ".") {
			line += "."
		}
		add(is.id, is.sev, LineRef{Line: is.entry.Line, Text: is.entry.Text}, line, is.links)
		for _, a := range is.also {
			evs[is.id].add(LineRef{Line: a.Line, Text: a.Text})
		}
	}
	seenDeprecated := map[string]bool{}
	for _, l := range d.s.DeprecatedTorch.Lines {
		old, repl := deprecatedNames(l.Text)
		key := old + "/" + repl
		if seenDeprecated[key] {
			evs["env-deprecated"].add(l)
			continue
		}
		seenDeprecated[key] = true
		msg := "PyTorch warned about a deprecated variable name; switch to the TORCH_-prefixed name it names."
		ls := []Link{linkIgnoredEnv}
		if old != "" && repl != "" {
			msg = "PyTorch warned that " + old + " is deprecated: set " + repl + " instead (and unset " + old + "; when both are set the TORCH_ name wins)."
			ls = append(ls, envLink(repl))
		}
		add("env-deprecated", Warning, l, msg, ls)
	}
	out := make([]Diagnosis, 0, len(order))
	for _, id := range order {
		dg := byID[id]
		if n := more[id]; n > 0 {
			dg.Explanation += fmt.Sprintf(" And %d more of the same kind.", n)
		}
		dg.Evidence = evs[id].list()
		if id != "env-debug-knob" && id != "env-default" && id != "env-container" {
			dg.Links = links(append(dg.Links, linkIgnoredEnv)...)
		}
		out = append(out, *dg)
	}
	return out
}

// deprecatedNames reads PyTorch's "Environment variable NCCL_X is
// deprecated; use TORCH_NCCL_X instead" warning.
func deprecatedNames(t string) (old, repl string) {
	_, rest, ok := strings.Cut(t, "Environment variable ")
	if !ok {
		return "", ""
	}
	f := strings.Fields(rest)
	if len(f) > 0 && isEnvName(f[0]) {
		old = f[0]
	}
	if _, after, ok := strings.Cut(rest, "; use "); ok {
		if g := strings.Fields(after); len(g) > 0 && isEnvName(g[0]) {
			repl = g[0]
		}
	}
	return old, repl
}

// nvlsSetupHang: the log ends on an NVLS setup line of a communicator that
// never completed its init and no error was printed, which is how a hang
// in NVLink SHARP setup looks (the Fabric Manager or NVSwitch state).
func (d *diagnoser) nvlsSetupHang() (Diagnosis, bool) {
	s := d.s
	last := s.LastNCCL
	msg := last.Text
	if i := strings.Index(msg, "NCCL INFO "); i >= 0 {
		msg = msg[i+len("NCCL INFO "):]
	}
	if last.Line == 0 || !strings.HasPrefix(msg, "NVLS ") || s.InitComplete > 0 || s.Warnings.Count > 0 || len(s.Timeouts) > 0 {
		return Diagnosis{}, false
	}
	var ev evidence
	ev.add(last)
	return Diagnosis{ID: "nvls-setup-hang", Severity: Warning, Title: "The log stops inside NVLS setup",
		Explanation: "The last NCCL line is part of NVLink SHARP (NVLS) setup, no communicator reported Init COMPLETE and nothing failed: if the job hangs here, the NVSwitch multicast setup is what waits (Fabric Manager not running or out of sync, GPUs that need a reset). Fix: rerun with NCCL_NVLS_ENABLE=0 to confirm (the job then runs without NVLS), then repair the Fabric Manager / NVSwitch state. Check: `systemctl status nvidia-fabricmanager` and `nvidia-smi -q | grep -A3 Fabric` on the node.",
		Evidence:    ev.list(), Links: links(envLink("NCCL_NVLS_ENABLE"), linkTroubleshoot)}, true
}

// maxProgressRanks bounds the ranks a timeout explanation lists.
const maxProgressRanks = 16

// progressSummary says, from the watchdogs' "last enqueued / last
// completed" reports, where each rank stood and which ranks are behind.
// Sequence numbers count per process group, so ranks are compared only
// with ranks of the same group.
func (d *diagnoser) progressSummary(ev *evidence) string {
	if len(d.s.Progress) == 0 {
		return ""
	}
	ps := append([]WorkProgress(nil), d.s.Progress...) // sorted here, not in the summary
	sort.SliceStable(ps, func(i, j int) bool {
		if ki, kj := pgKey(ps[i].PG), pgKey(ps[j].PG); ki != kj {
			return ki < kj
		}
		return ps[i].Rank < ps[j].Rank
	})
	var groups [][]WorkProgress
	for i, p := range ps {
		if i == 0 || pgKey(p.PG) != pgKey(ps[i-1].PG) {
			groups = append(groups, nil)
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], p)
	}
	var parts []string
	listed := 0
	for _, g := range groups {
		var ranks []string
		for _, p := range g {
			if listed >= maxProgressRanks {
				break
			}
			listed++
			s := "rank " + strconv.Itoa(p.Rank)
			if p.Failed >= 0 {
				s += " failed at #" + strconv.FormatInt(p.Failed, 10)
			}
			if p.Enqueued >= 0 {
				s += ", enqueued up to #" + strconv.FormatInt(p.Enqueued, 10)
			}
			if p.Completed >= 0 {
				s += ", completed up to #" + strconv.FormatInt(p.Completed, 10)
			}
			ranks = append(ranks, s)
		}
		if len(ranks) == 0 {
			continue
		}
		if len(groups) > 1 {
			name := g[0].PG
			if name == "" {
				name = "no group named"
			}
			parts = append(parts, name+": "+strings.Join(ranks, "; "))
		} else {
			parts = append(parts, strings.Join(ranks, "; "))
		}
	}
	out := " Per rank, from the watchdog reports: " + strings.Join(parts, " | ")
	if extra := len(ps) - listed; extra > 0 {
		out += "; and " + strconv.Itoa(extra) + " more rank(s)"
	}
	out += "."
	if len(groups) > 1 {
		out += " " + strconv.Itoa(len(groups)) + " process groups report failed work; their sequence numbers count separately and are not compared."
	}
	for _, g := range groups {
		out += d.behind(g, ev, len(groups) > 1)
	}
	if n := d.s.NRanks; n > 0 && len(groups) == 1 && len(ps) < n && len(ps) < 1<<16 {
		out += " " + strconv.Itoa(len(ps)) + " of " + strconv.Itoa(n) + " ranks reported."
	}
	return out
}

// behind names the ranks of one process group that completed the fewest
// collectives.
func (d *diagnoser) behind(g []WorkProgress, ev *evidence, named bool) string {
	minDone, maxDone := int64(-1), int64(-1)
	for _, p := range g {
		if p.Completed >= 0 {
			if minDone < 0 || p.Completed < minDone {
				minDone = p.Completed
			}
			maxDone = max(maxDone, p.Completed)
		}
	}
	where := ""
	if named && g[0].PG != "" {
		where = " of " + g[0].PG
	}
	switch {
	case minDone >= 0 && maxDone > minDone:
		var behind []string
		for _, p := range g {
			if p.Completed == minDone && len(behind) < maxProgressRanks {
				behind = append(behind, strconv.Itoa(p.Rank))
				ev.add(LineRef{Line: p.Line, Text: d.lineText(p.Line)})
			}
		}
		return " Rank(s) " + strings.Join(behind, ", ") + where + " completed the fewest collectives (#" + strconv.FormatInt(minDone, 10) + " against #" + strconv.FormatInt(maxDone, 10) + "): look at them first."
	case minDone >= 0 && len(g) > 1:
		return " Every reporting rank" + where + " completed the same collectives, so the late rank is one that printed no timeout (look for a rank missing from these lines, or the log of another host)."
	}
	return ""
}

// lineText returns the evidence text of a timeout line, "" if not kept.
func (d *diagnoser) lineText(n int) string {
	for _, l := range d.s.TimeoutLines.Lines {
		if l.Line == n {
			return l.Text
		}
	}
	return ""
}
