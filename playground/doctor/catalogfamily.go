package doctor

import (
	"fmt"
	"sort"
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
// release v2.30.7-1 and of 2.18-2.29 where they moved.
var msgFamilies = []msgFamily{
	{key: "shm", name: "host shared memory (SHM transport)",
		files:   []string{"transport/shm.cc", "misc/shmutils.cc", "include/shm.h", "include/shmutils.h"},
		cause:   "NCCL could not create, grow or map a host-memory segment: /dev/shm is full or small (64 MB in Docker by default), segments of crashed jobs fill it, or the ranks of one host see different /dev/shm (separate containers); since 2.26 the buffers may come from cuMem host allocations instead, which need NUMA-aware driver support.",
		setting: "the container's /dev/shm (--shm-size, --ipc=host); NCCL_SHM_DISABLE=1 only as a test; NCCL_CUMEM_HOST_ENABLE=0 to go back to /dev/shm files",
		check:   "`df -h /dev/shm` and `ls -la /dev/shm/nccl-*` in the container of every rank",
		env:     []string{"NCCL_SHM_DISABLE", "NCCL_CUMEM_HOST_ENABLE"}},
	{key: "ib", name: "InfiniBand/RoCE verbs (NET/IB)",
		files:   []string{"transport/net_ib", "misc/ibvwrap.cc", "misc/ibvsymbols.cc", "misc/mlx5dv", "include/ibvwrap.h", "include/ibvcore.h", "include/mlx5"},
		cause:   "a verbs call on an RDMA NIC failed: the device is not usable from this process (the container lacks /dev/infiniband or IPC_LOCK, locked-memory limit too low), the port is down or of another link layer, or the GID, MTU or queue-pair settings do not match the fabric.",
		setting: "NCCL_IB_HCA (which devices and ports), NCCL_IB_GID_INDEX for RoCE, `ulimit -l` (unlimited) and the devices passed into the container",
		check:   "`ibv_devinfo -v` (state PORT_ACTIVE, link_layer, active_mtu) and `show_gids` on every node, `ulimit -l` inside the container",
		env:     []string{"NCCL_IB_HCA", "NCCL_IB_GID_INDEX", "NCCL_IB_DISABLE"}},
	{key: "socket", name: "TCP sockets (bootstrap, proxy and NET/Socket connections)",
		files:   []string{"misc/socket.cc", "transport/net_socket.cc", "include/socket.h", "os/linux_socket", "os/linux_ipcsocket", "misc/ipcsocket.cc"},
		cause:   "a TCP connection between ranks failed or closed: the interface NCCL picked does not reach the peer (docker0, a virtual or down interface), a firewall drops the ports, or the peer process died first.",
		setting: "NCCL_SOCKET_IFNAME (the interface every rank uses, the same network on all nodes) and the firewall between the nodes",
		check:   "`ip -br addr` on every node, compare with the \"Bootstrap : Using\" and \"NET/Socket : Using\" lines, and test the address with `ping` or `nc -zv HOST PORT` from the other node",
		env:     []string{"NCCL_SOCKET_IFNAME", "NCCL_SOCKET_FAMILY"}},
	{key: "bootstrap", name: "bootstrap (ranks finding each other at init)",
		files:   []string{"bootstrap.cc", "include/bootstrap.h"},
		cause:   "the ranks could not exchange their addresses at communicator creation: a rank never arrived (crashed, started late, another job's unique id), or the bootstrap interface does not reach the others.",
		setting: "NCCL_SOCKET_IFNAME, the rendezvous address and port (MASTER_ADDR/MASTER_PORT, NCCL_COMM_ID) and the launch of every rank",
		check:   "the logs of every rank for an earlier error, and `nc -zv MASTER_ADDR MASTER_PORT` from each node",
		env:     []string{"NCCL_SOCKET_IFNAME", "NCCL_COMM_ID"}},
	{key: "p2p", name: "GPU peer-to-peer (P2P transport)",
		files:   []string{"transport/p2p.cc"},
		cause:   "CUDA peer access or a CUDA IPC handle between two GPUs of one host failed: PCIe ACS or the IOMMU blocks peer traffic, the GPUs are in different containers or processes that cannot share memory, or the driver refuses P2P between them.",
		setting: "PCIe ACS and the IOMMU in the BIOS or kernel (iommu=pt), --ipc=host for containers; NCCL_P2P_DISABLE=1 or NCCL_P2P_LEVEL only to test",
		check:   "`nvidia-smi topo -p2p r` and the CUDA sample p2pBandwidthLatencyTest; `lspci -vvv | grep ACSCtl` for enabled ACS",
		env:     []string{"NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL"}},
	{key: "nvls", name: "NVLink SHARP and multi-node NVLink (NVLS, MNNVL)",
		files:   []string{"transport/nvls.cc", "mnnvl.cc"},
		cause:   "setting up NVSwitch multicast or multi-node NVLink memory failed: the Fabric Manager (and IMEX for multi-node NVLink) is not running or out of step with the driver, a GPU or switch needs a reset, or the container lacks the devices (/dev/nvidia-caps) the multicast objects need.",
		setting: "the Fabric Manager service and the GPUs' fabric state; NCCL_NVLS_ENABLE=0 (and NCCL_MNNVL_ENABLE=0) to confirm the job runs without it",
		check:   "`nvidia-smi -q | grep -A 3 -i fabric` (State Completed, Status Success) and `systemctl status nvidia-fabricmanager`",
		env:     []string{"NCCL_NVLS_ENABLE", "NCCL_MNNVL_ENABLE"}},
	{key: "gdrcopy", name: "GDRCopy",
		files:   []string{"misc/gdrwrap.cc", "include/gdrwrap.h"},
		cause:   "the GDRCopy library or its gdrdrv kernel module failed; NCCL only uses it when asked to.",
		setting: "NCCL_GDRCOPY_ENABLE (unset it to do without) and the gdrdrv module",
		check:   "`lsmod | grep gdrdrv` and `ls -l /dev/gdrdrv`",
		env:     []string{"NCCL_GDRCOPY_ENABLE"}},
	{key: "net-plugin", name: "plugins (network, tuner, profiler) and the network transport",
		files:   []string{"plugin/", "transport/net.cc", "transport/coll_net.cc", "include/net.h", "net.cc", "misc/tuner.cc"},
		cause:   "a network plugin could not be loaded or initialised, or an operation of the network transport failed (the message right before it, on this or the peer rank, usually names which).",
		setting: "NCCL_NET_PLUGIN and NCCL_NET (which plugin, which network), the plugin's own library path and version",
		check:   "the \"NET/Plugin\" and \"Using network\" lines of every rank, and `ldd` on the plugin library",
		env:     []string{"NCCL_NET_PLUGIN", "NCCL_NET"}},
	{key: "proxy", name: "proxy threads", echo: true,
		files:   []string{"proxy.cc", "include/proxy.h"},
		cause:   "NCCL's proxy thread, which drives the network and some P2P transfers, failed an operation or lost its connection to a local rank: nearly always the echo of a transport error just before it or of a local rank that exited.",
		setting: "the first WARN before it (on this rank or its local peers); NCCL_DEBUG_SUBSYS=INIT,NET,PROXY for more",
		check:   "the earliest error of all ranks of the host, and whether every local rank is still alive (`ps`, the launcher's exit codes)",
		env:     []string{"NCCL_DEBUG_SUBSYS"}},
	{key: "memory", name: "memory allocation and registration",
		files:   []string{"include/alloc.h", "allocator.cc", "mem_manager.cc", "register/", "misc/cudawrap.cc", "include/cudawrap.h"},
		cause:   "a host or GPU allocation, a cuMem mapping or a buffer registration failed: the GPU is out of memory (NCCL's buffers grow with channels and peers, NVLS adds more), the locked-memory limit is low, or the driver (a VM, vGPU or an old driver) lacks the cuMem feature NCCL asked for.",
		setting: "free GPU memory before init, NCCL_BUFFSIZE and NCCL_NVLS_ENABLE (less NCCL memory), NCCL_CUMEM_ENABLE=0 where cuMem is not supported",
		check:   "`nvidia-smi --query-gpu=memory.used,memory.total --format=csv` at the time of init, and `ulimit -l`",
		env:     []string{"NCCL_BUFFSIZE", "NCCL_NVLS_ENABLE", "NCCL_CUMEM_ENABLE"}},
	{key: "topology", name: "topology detection and graph search",
		files:   []string{"graph/"},
		cause:   "NCCL could not read or make sense of the machine's topology (PCI tree, NICs, NVLink) from /sys, NVML or an XML file: a container hides /sys entries, a topology file is wrong, or a device sits behind a bridge NCCL does not know.",
		setting: "NCCL_TOPO_FILE (a wrong or stale file), the /sys mounts of the container; NCCL_TOPO_DUMP_FILE writes what NCCL detected",
		check:   "`nvidia-smi topo -m` against the log's topology lines, and NCCL_TOPO_DUMP_FILE=/tmp/topo.xml to compare",
		env:     []string{"NCCL_TOPO_FILE", "NCCL_TOPO_DUMP_FILE"}},
	{key: "nvml", name: "NVML",
		files:   []string{"misc/nvmlwrap.cc", "include/nvmlwrap.h"},
		cause:   "an NVML query failed: the driver's libnvidia-ml does not match the kernel module (after a driver update without reboot), or the container has no NVML.",
		setting: "the driver installation inside and outside the container",
		check:   "`nvidia-smi` in the same container (\"Driver/library version mismatch\" means reboot or reload the module)",
		env:     nil},
	{key: "init", name: "communicator setup and argument checks",
		files:   []string{"init.cc", "misc/argcheck.cc", "param/", "include/param/", "group.cc", "enqueue.cc", "collectives.cc", "transport.cc", "channel.cc", "dev_runtime"},
		cause:   "creating a communicator or launching a collective was refused or failed: arguments differ from what NCCL allows (a rank, device, count or datatype), a call came in an order NCCL does not support, or a CUDA call of the setup failed.",
		setting: "the arguments of the failing call on every rank (the same count, datatype and order of collectives), and CUDA's own error for a \"Cuda failure\"",
		check:   "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL on all ranks, and TORCH_DISTRIBUTED_DEBUG=DETAIL under PyTorch for collective shapes",
		env:     []string{"NCCL_DEBUG_SUBSYS"}},
	{key: "cuda", name: "CUDA calls",
		files:   []string{"include/checks.h", "misc/strongstream.cc"},
		cause:   "a CUDA runtime or driver call failed: the error text names it (out of memory, invalid argument, operation not supported, an illegal address after a kernel fault); \"operation not supported\" comes from VMs, vGPUs or drivers without the feature NCCL asked for.",
		setting: "the CUDA driver and runtime versions, the GPU's state (Xid errors), NCCL_CUMEM_ENABLE=0 where the driver lacks cuMem",
		check:   "`nvidia-smi` and `dmesg | grep -i xid` on the node, and the CUDA error's name in the WARN line",
		env:     []string{"NCCL_CUMEM_ENABLE"}},
	{key: "os", name: "operating-system calls",
		files:   []string{"os/", "misc/utils.cc", "include/utils.h"},
		cause:   "a system call failed (a file under /sys or /proc, a thread, an mmap): the container restricts it, a limit is reached (open files, locked memory), or the file does not exist on this kernel.",
		setting: "the container's capabilities and mounts, `ulimit -a`",
		check:   "the errno text in the WARN line, and `ulimit -a` in the job's environment",
		env:     nil},
	{key: "ras", name: "RAS (NCCL's reliability service)",
		files:   []string{"ras/"},
		cause:   "NCCL's RAS thread, which watches the other ranks, hit an error; it rarely stops a job by itself.",
		setting: "NCCL_RAS_ENABLE=0 to turn the service off if it is the only thing failing",
		check:   "whether the job goes on after the warning, and `ncclras` against the RAS port",
		env:     []string{"NCCL_RAS_ENABLE"}},
	{key: "gin", name: "GPU-initiated networking and RMA (GIN, device API)",
		files:   []string{"gin/", "rma/", "transport/net_ib/gdaki", "transport/gdaki/", "devcomm/", "scheduler/", "ce_coll.cc"},
		cause:   "the device-side networking or RMA path (GPU-initiated communication, copy-engine collectives) failed to set up or progress: the NIC, driver or plugin lacks the feature.",
		setting: "the plugin and driver versions that the device API needs",
		check:   "the \"GIN\" and \"Assigned ... plugin\" lines of every rank",
		env:     nil},
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
			p.inReturn = map[origin]bool{}
		}
		head = !p.inReturn[o]
		if len(p.inReturn) < maxCatalogHits || p.inReturn[o] {
			p.inReturn[o] = true
		}
	} else if p.inReturn != nil {
		delete(p.inReturn, o)
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

// reraised handles a line that is not in NCCL's own format: after PyTorch's
// "Last error:" line comes the text of NCCL's last WARN without its prefix
// ("Last error:\nDuplicate GPU detected : ..."). That text is tied to its
// catalog entry, as a WARN line would be, when it matches one whole and the
// entry is specific (at least minReraiseLiteral bytes of literal text, so
// that a format like "%s" claims nothing).
func (p *parser) reraised(n int, raw string) {
	t := strings.TrimSpace(raw)
	if i := strings.Index(t, "]:"); i >= 0 && strings.HasPrefix(t, "[rank") {
		t = strings.TrimSpace(t[i+2:]) // torchrun's "[rank3]:" tag
	}
	after := p.lastErrorAt == n-1 && n > 1
	if strings.HasSuffix(t, "Last error:") {
		p.lastErrorAt = n
		return
	}
	if !after || t == "" || len(p.s.catalogHits) >= maxCatalogHits {
		return
	}
	cat, err := ncclmsg.Default()
	if err != nil {
		return
	}
	m, ok := cat.Match("WARN", t, "")
	if !ok || m.Partial || literalLen(m.Entry.Format) < minReraiseLiteral {
		return
	}
	if fam := familyOf("", m.Entry); fam >= 0 {
		p.s.catalogHits = append(p.s.catalogHits, catalogHit{ref: p.ref(n, raw), entry: m.Entry, family: fam})
	}
}

// minReraiseLiteral is the literal text a format needs before a re-raised
// message is tied to it.
const minReraiseLiteral = 12

// literalLen counts the bytes of a format that are not conversions (a
// conversion is taken as "%" and the letters, digits and flags after it).
func literalLen(f string) int {
	n := 0
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			n++
			continue
		}
		for i+1 < len(f) && strings.IndexByte("0123456789.-+ #*lhzjtL", f[i+1]) >= 0 {
			i++
		}
		i++ // the conversion letter
	}
	return n
}

// genericOff turns the generic readings off (for the tests that compare
// the rules' diagnoses with and without them).
var genericOff bool

// genericID is the diagnosis ID of a family's reading.
func genericID(fam int) string { return "generic-" + msgFamilies[fam].key }

// isGeneric reports whether a diagnosis is a generic reading.
func isGeneric(id string) bool { return strings.HasPrefix(id, "generic-") }

// genericReadings reads the WARN and error-return lines no rule explains
// by the family of the code that printed them: one diagnosis per family,
// marked as a generic reading and ranked below every rule. Error-return
// chains count only in a log without any WARN line and without an error a
// rule found (a WARN says more than the trace of its return code, which
// also reaches other threads). A line in the evidence of a diagnosis already made (rules is the
// list so far; the list of unexplained warnings, nccl-warn, aside) is
// explained.
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
		if r.ID == "nccl-warn" {
			continue
		}
		for _, l := range r.Evidence {
			if l.Line > 0 {
				explained[l.Line] = true
			}
		}
	}
	serious := false
	for _, r := range rules {
		serious = serious || r.Severity == Error
	}
	// Error-return traces are read only when nothing else speaks: no WARN
	// line and no rule that found an error (the trace is then its echo).
	traces := d.s.Warnings.Count == 0 && !serious
	byFam := map[int][]catalogHit{}
	for _, h := range hits {
		if explained[h.ref.Line] || (h.ret && !traces) {
			continue
		}
		byFam[h.family] = append(byFam[h.family], h)
	}
	for f := range byFam {
		if msgFamilies[f].echo && (serious || len(byFam) > 1) {
			delete(byFam, f)
		}
	}
	fams := make([]int, 0, len(byFam))
	for f := range byFam {
		fams = append(fams, f)
	}
	sort.Ints(fams)
	var out []Diagnosis
	for _, f := range fams {
		fam := msgFamilies[f]
		var ev evidence
		var srcs []string
		seen := map[*ncclmsg.Entry]bool{}
		for _, h := range byFam[f] {
			ev.add(h.ref)
			if !seen[h.entry] && len(srcs) < 3 {
				seen[h.entry] = true
				srcs = append(srcs, h.entry.Permalink())
			}
		}
		expl := fmt.Sprintf("Generic reading: no rule of the doctor covers %d line(s) printed by NCCL's code for %s, so this is what a failure there usually means, not a diagnosis of this log. Likely cause: %s Setting to check: %s. Check: %s. Printed by: %s.",
			len(byFam[f]), fam.name, fam.cause, fam.setting, fam.check, strings.Join(srcs, " "))
		ls := []Link{linkTroubleshoot}
		for _, v := range fam.env {
			ls = append(ls, envLink(v))
		}
		out = append(out, Diagnosis{ID: genericID(f), Severity: Warning, Title: "Generic reading: a failure in " + fam.name,
			Explanation: expl, Evidence: ev.list(), Links: links(ls...)})
	}
	return out
}
