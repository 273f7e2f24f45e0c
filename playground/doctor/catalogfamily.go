package doctor

import (
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/ncclmsg"
)

// msgFamily is the generic reading of the warnings one part of NCCL's
// source prints: what a failure there usually means, the setting to look
// at and the command that confirms it. The doctor falls back on it for a
// WARN (or error-return) line the catalog ties to a call but no rule
// explains, so that such a line never gets only "NCCL printed a warning".
// The readings are general; they rank below every rule.
type msgFamily struct {
	key  string // the diagnosis ID is "generic-" + key
	name string
	// files are path prefixes under src/ ("transport/net_ib" covers
	// transport/net_ib.cc of 2.18-2.22 and transport/net_ib/*.cc since).
	files []string
	// echo marks a family whose warnings are mostly the consequence of
	// another failure: its reading is given only when no rule found an
	// error and no other family has a reading.
	echo    bool
	cause   string
	setting string
	check   string
	env     []string
}

// msgFamilies is tried in order; the first whose file prefix matches names
// the family. The file decides, not the catalog's subsystem flags: every
// WARN call of v2.30.7-1 logs with NCCL_ALL (692 of 692 in
// data/messages/nccl-v2.30.7-1.tsv). Files of the pinned
// release v2.30.7-1 and of 2.7-2.29 where they moved.
var msgFamilies = []msgFamily{
	{key: "shm", name: "host shared memory (SHM)",
		files:   []string{"transport/shm.cc", "misc/shmutils.cc", "include/shm.h", "include/shmutils.h"},
		cause:   "a host-memory segment failed: /dev/shm full or small (64 MB in Docker), stale segments, ranks in separate /dev/shm, or (2.26+) cuMem host memory without NUMA support.",
		setting: "--shm-size or --ipc=host; NCCL_SHM_DISABLE=1 only as a test; NCCL_CUMEM_HOST_ENABLE=0",
		check:   "`df -h /dev/shm; ls -la /dev/shm/nccl-*` where each rank runs",
		env:     []string{"NCCL_SHM_DISABLE", "NCCL_CUMEM_HOST_ENABLE"}},
	{key: "ib", name: "InfiniBand/RoCE verbs (NET/IB)",
		files:   []string{"transport/net_ib", "misc/ibvwrap.cc", "misc/ibvsymbols.cc", "misc/mlx5dv", "include/ibvwrap.h", "include/ibvcore.h", "include/mlx5"},
		cause:   "a verbs call failed: no /dev/infiniband or IPC_LOCK in the container, a low locked-memory limit, a port down, or GID, MTU or queue-pair settings that do not fit the fabric.",
		setting: "NCCL_IB_HCA, NCCL_IB_GID_INDEX (RoCE), `ulimit -l`, the devices passed to the container",
		check:   "`ibv_devinfo -v` (PORT_ACTIVE, link_layer, active_mtu) and `show_gids` on every node",
		env:     []string{"NCCL_IB_HCA", "NCCL_IB_GID_INDEX", "NCCL_IB_DISABLE"}},
	{key: "socket", name: "TCP sockets",
		files:   []string{"misc/socket.cc", "transport/net_socket.cc", "include/socket.h", "os/linux_socket", "os/linux_ipcsocket", "misc/ipcsocket.cc"},
		cause:   "a TCP connection between ranks failed: an interface that does not reach the peer (docker0, virtual, down), a firewall, or a peer that died first.",
		setting: "NCCL_SOCKET_IFNAME (one reachable interface on all nodes), the firewall",
		check:   "`ip -br addr` against the \"Bootstrap : Using\" lines, `nc -zv HOST PORT` from the other node",
		env:     []string{"NCCL_SOCKET_IFNAME", "NCCL_SOCKET_FAMILY"}},
	{key: "bootstrap", name: "bootstrap",
		files:   []string{"bootstrap.cc", "include/bootstrap.h"},
		cause:   "the ranks could not meet at init: a rank never arrived (crashed, late, another unique id) or the interface does not reach the others.",
		setting: "NCCL_SOCKET_IFNAME, the rendezvous (MASTER_ADDR/MASTER_PORT, NCCL_COMM_ID)",
		check:   "every rank's log for an earlier error; `nc -zv MASTER_ADDR MASTER_PORT` from each node",
		env:     []string{"NCCL_SOCKET_IFNAME", "NCCL_COMM_ID"}},
	{key: "p2p", name: "GPU peer-to-peer (P2P)",
		files:   []string{"transport/p2p.cc"},
		cause:   "peer access or CUDA IPC between two GPUs failed: PCIe ACS or the IOMMU, containers without --ipc=host, or a driver refusing P2P.",
		setting: "ACS and the IOMMU (iommu=pt), --ipc=host; NCCL_P2P_DISABLE=1 or NCCL_P2P_LEVEL only as a test",
		check:   "`nvidia-smi topo -p2p r`, p2pBandwidthLatencyTest, `lspci -vvv | grep ACSCtl`",
		env:     []string{"NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL"}},
	{key: "nvls", name: "NVLink SHARP and multi-node NVLink",
		files:   []string{"transport/nvls.cc", "mnnvl.cc"},
		cause:   "NVSwitch multicast or multi-node NVLink setup failed: Fabric Manager (or IMEX) down or out of step with the driver, a GPU needing a reset, or no /dev/nvidia-caps in the container.",
		setting: "the Fabric Manager; NCCL_NVLS_ENABLE=0 (NCCL_MNNVL_ENABLE=0) to confirm",
		check:   "`nvidia-smi -q | grep -A 3 -i fabric` (Completed, Success), `systemctl status nvidia-fabricmanager`",
		env:     []string{"NCCL_NVLS_ENABLE", "NCCL_MNNVL_ENABLE"}},
	{key: "net-plugin", name: "plugins, the network transport and GPU-initiated networking",
		files:   []string{"plugin/", "transport/net.cc", "transport/coll_net.cc", "include/net.h", "net.cc", "misc/tuner.cc", "gin/", "rma/", "transport/net_ib/gdaki", "transport/gdaki/", "devcomm/", "scheduler/", "ce_coll.cc"},
		cause:   "a network, tuner or profiler plugin failed to load or initialise, or a network, GIN or RMA operation failed (the message before it, here or on the peer, names which; the device API needs NIC, driver and plugin support).",
		setting: "NCCL_NET_PLUGIN and NCCL_NET, the plugin's library path and version",
		check:   "the \"NET/Plugin\" and \"Using network\" lines of every rank, `ldd` on the plugin",
		env:     []string{"NCCL_NET_PLUGIN", "NCCL_NET"}},
	{key: "proxy", name: "proxy threads", echo: true,
		files:   []string{"proxy.cc", "include/proxy.h"},
		cause:   "the proxy thread failed or lost a local rank: the echo of an earlier error or of an exited rank.",
		setting: "the first WARN before it on this host; NCCL_DEBUG_SUBSYS=INIT,NET,PROXY",
		check:   "the earliest error of the host's ranks, and whether they are all alive",
		env:     []string{"NCCL_DEBUG_SUBSYS"}},
	{key: "memory", name: "memory allocation and registration",
		files:   []string{"include/alloc.h", "allocator.cc", "mem_manager.cc", "register/", "misc/cudawrap.cc", "include/cudawrap.h", "misc/gdrwrap.cc", "include/gdrwrap.h"},
		cause:   "an allocation, cuMem mapping, registration or GDRCopy call failed: GPU memory exhausted (buffers grow with channels and peers, NVLS adds more), a low locked-memory limit, a driver (VM, vGPU, old) without cuMem, or no gdrdrv module for NCCL_GDRCOPY_ENABLE.",
		setting: "free GPU memory at init, NCCL_BUFFSIZE, NCCL_NVLS_ENABLE, NCCL_CUMEM_ENABLE=0 without cuMem",
		check:   "`nvidia-smi --query-gpu=memory.used,memory.total --format=csv` at init, `ulimit -l`",
		env:     []string{"NCCL_BUFFSIZE", "NCCL_NVLS_ENABLE", "NCCL_CUMEM_ENABLE"}},
	{key: "topology", name: "topology detection",
		files:   []string{"graph/"},
		cause:   "the topology could not be read from /sys, NVML or an XML file: hidden /sys entries, a wrong topology file, an unknown bridge, or a release older than the machine (GPUs or links it does not know).",
		setting: "NCCL_TOPO_FILE, the container's /sys mounts, a newer NCCL release",
		check:   "`nvidia-smi topo -m` against NCCL_TOPO_DUMP_FILE=/tmp/topo.xml",
		env:     []string{"NCCL_TOPO_FILE", "NCCL_TOPO_DUMP_FILE"}},
	{key: "init", name: "communicator setup and argument checks",
		files:   []string{"init.cc", "misc/argcheck.cc", "param/", "include/param/", "group.cc", "enqueue.cc", "collectives.cc", "transport.cc", "channel.cc", "dev_runtime"},
		cause:   "a communicator or collective was refused: an argument NCCL does not allow (rank, device, count, datatype), calls in an unsupported order, or a failed CUDA call.",
		setting: "the failing call's arguments and the order of collectives on every rank",
		check:   "NCCL_DEBUG_SUBSYS=INIT,COLL on all ranks; TORCH_DISTRIBUTED_DEBUG=DETAIL under PyTorch",
		env:     []string{"NCCL_DEBUG_SUBSYS"}},
	{key: "cuda", name: "CUDA calls",
		files:   []string{"include/checks.h", "misc/strongstream.cc"},
		cause:   "a CUDA call failed, as the error text says (out of memory, invalid argument, an illegal address after a kernel fault); \"operation not supported\" comes from VMs, vGPUs or drivers without the feature.",
		setting: "driver and runtime versions, the GPU's state, NCCL_CUMEM_ENABLE=0 without cuMem",
		check:   "`nvidia-smi` and `dmesg | grep -i xid` on the node",
		env:     []string{"NCCL_CUMEM_ENABLE"}},
	{key: "os", name: "system calls, NVML and RAS",
		files:   []string{"os/", "misc/utils.cc", "include/utils.h", "misc/nvmlwrap.cc", "include/nvmlwrap.h", "ras/"},
		cause:   "a system call (/sys or /proc, a thread, an mmap) or NVML query failed: the container restricts it, a limit is reached, or libnvidia-ml does not match the kernel module (\"Driver/library version mismatch\" in nvidia-smi: reboot); NCCL's RAS thread rarely stops a job (NCCL_RAS_ENABLE=0).",
		setting: "the container's capabilities and mounts, `ulimit -a`, the driver",
		check:   "the errno text of the line, `nvidia-smi` in the same container",
		env:     []string{"NCCL_RAS_ENABLE"}},
}

// familyOf names the family of a line: the file the WARN line prints (the
// caller of a macro like CUDACHECK: "transport/nvls.cc:244 ... Cuda
// failure" is an NVLS failure), else the file of its catalog entry; where
// the caller is the catch-all setup code (init.cc, transport.cc, ...) the
// entry's own family, when it has one, is the more specific. -1 means none.
func familyOf(place string, e *ncclmsg.Entry) int {
	at, own := -1, familyByFile(e.File)
	if place != "" {
		at = familyByFile(place)
	}
	switch {
	case at >= 0 && (own < 0 || msgFamilies[at].key != "init"):
		return at
	case own >= 0:
		return own
	}
	return at
}

// familyByFile matches a path under src/ ("transport/net_ib.cc",
// "misc/socket.cc:49" cut at the colon) against the families' prefixes.
func familyByFile(file string) int {
	file, _, _ = strings.Cut(file, ":")
	if k := strings.Index(file, "/src/"); k >= 0 {
		file = file[k+len("/src/"):]
	}
	file = strings.TrimPrefix(file, "src/")
	for i, fam := range msgFamilies {
		for _, p := range fam.files {
			if strings.HasPrefix(file, p) {
				return i
			}
		}
	}
	return -1
}

// catalogHit is one WARN or error-return line the catalog tied to a call.
type catalogHit struct {
	ref    LineRef
	entry  *ncclmsg.Entry
	family int
	// ret marks an error-return line ("file.cc:123 -> 2"), the head of
	// its chain (the deepest call that failed).
	ret bool
}

// famIB is the index of the InfiniBand/RoCE verbs family in msgFamilies
// (TestFamilyIBIndex holds the two together).
const famIB = 1

// maxCatalogHits caps the lines the generic readings keep.
const maxCatalogHits = 256

// errReturnFormat is the catalog format of NCCL's error-return trace lines
// (src/include/checks.h: "%s:%d -> %d", printed by NCCLCHECK and its kin).
const errReturnFormat = "%s:%d -> %d"

// noteCatalogHit keeps a matched WARN line, or the first line of an
// error-return chain, with the family of the code that printed it.
func (p *parser) noteCatalogHit(n int, o origin, sev, raw string, m ncclmsg.Match) {
	ret := strings.HasPrefix(m.Entry.Format, errReturnFormat)
	head := false
	if ret {
		if p.inReturn == nil {
			p.inReturn = map[string]bool{}
		}
		k := o.Host + "\x00" + o.PID + "\x00" + o.Dev
		head = !p.inReturn[k]
		if len(p.inReturn) < maxCatalogHits || p.inReturn[k] {
			p.inReturn[k] = true
		}
	} else if p.inReturn != nil {
		delete(p.inReturn, o.Host+"\x00"+o.PID+"\x00"+o.Dev)
	}
	if (sev != "WARN" && !head) || len(p.s.catalogHits) >= maxCatalogHits {
		return
	}
	fam := -1
	if ret && len(m.Fields) > 0 {
		fam = familyByFile(m.Fields[0].Value)
	} else {
		fam = familyOf(warnPlace(raw), m.Entry)
	}
	if fam < 0 {
		return
	}
	p.s.catalogHits = append(p.s.catalogHits, catalogHit{ref: p.ref(n, raw), entry: m.Entry, family: fam, ret: ret})
}

// genericOff turns the generic readings off (for the tests that compare
// the rules' diagnoses with and without them).
var genericOff bool

// isGeneric reports whether a diagnosis is a generic reading.
func isGeneric(id string) bool { return strings.HasPrefix(id, "generic-") }

// genericReadings reads the WARN and error-return lines no rule explains
// by the family of the code that printed them: one diagnosis per family,
// marked as a generic reading and ranked below every rule. Error-return
// chains count only in a log without any WARN line and without an error a
// rule found (a WARN says more than the trace of its return code, which
// also reaches other threads). A line in the evidence of a diagnosis already made (rules is the
// list so far; the list of unexplained warnings, nccl-warn, and the
// caller's error, nccl-error, aside) is explained.
func (d *diagnoser) genericReadings(rules []Diagnosis) []Diagnosis {
	hits := d.s.catalogHits
	if len(hits) == 0 || genericOff {
		return nil
	}
	// The socket-fallback cues are read by net-socket where it fires, and
	// "Failed to open libibverbs" alone is harmless on a host without RDMA
	// NICs: neither gets a generic reading.
	explained := d.explainedLines()
	for _, r := range rules {
		// Neither the list of unexplained warnings nor the caller's
		// "an NCCL call returned an error" explains the NCCL text the
		// caller quotes on its own line (quoted.go).
		if r.ID == "nccl-warn" || r.ID == "nccl-error" {
			continue
		}
		for _, l := range r.Evidence {
			if l.Line > 0 {
				explained[l.Line] = true
			}
		}
	}
	serious, socket := false, false
	for _, r := range rules {
		serious = serious || r.Severity == Error
		socket = socket || r.ID == "net-socket"
	}
	// Error-return traces are read only when nothing else speaks: no WARN
	// line and no rule that found an error (the trace is then its echo).
	// Where net-socket fired, the IB transport's failed init is the
	// fallback it explains, not a verbs failure.
	traces := d.s.Warnings.Count == 0 && !serious
	// The lines of each family, in the table's order, and the first call
	// that printed one (a slice, not a map: the wasm playground pays for
	// every map type it links).
	lines := make([][]LineRef, len(msgFamilies))
	first := make([]*ncclmsg.Entry, len(msgFamilies))
	nFam := 0
	for _, h := range hits {
		if explained[h.ref.Line] || (h.ret && (!traces || socket && h.family == famIB)) {
			continue
		}
		if first[h.family] == nil {
			first[h.family] = h.entry
			nFam++
		}
		lines[h.family] = append(lines[h.family], h.ref)
	}
	var out []Diagnosis
	for f, e := range first {
		fam := &msgFamilies[f]
		if e == nil || (fam.echo && (serious || nFam > 1)) {
			continue
		}
		r := Rule{ID: "generic-" + fam.key, Title: "Generic reading: a failure in " + fam.name, Severity: Warning,
			Explanation: "Generic reading (no rule covers these lines of NCCL's " + fam.name + " code; what a failure there usually means; the first is printed by " +
				e.Permalink() + "): " + fam.cause,
			Fix: "look at " + fam.setting + ".", Check: fam.check + ".", Links: []Link{linkTroubleshoot}}
		for _, v := range fam.env {
			r.Links = append(r.Links, envLink(v))
		}
		out = append(out, ruleDiagnosis(&r, lines[f], len(lines[f])))
	}
	return out
}
