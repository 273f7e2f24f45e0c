package doctor

import (
	"strconv"
	"strings"
)

// This file holds the rules of the network and transport family: TCP
// connections between ranks (bootstrap and the socket transport), the
// interfaces NCCL picks for them, and network plugins such as aws-ofi-nccl.
// They join lineRules and logRules when the package starts (init below), so
// that the shared registries keep one place each.

func init() {
	lineRules = append(lineRules, netLineRules...)
	logRules = append(logRules, (*diagnoser).socketInterfaces)
	for _, id := range netUnproven {
		unproven[id] = true
	}
}

// netUnproven are the diagnoses of this file that fewer than two published
// logs with a confirmed cause support (see unproven).
var netUnproven = []string{"socket-interface", "net-init-failed", "verbs-provider-missing"}

var netLineRules = []Rule{
	{
		// The GID table evidence (show_gids, ibv_devinfo -v, NCCL's
		// queue-pair lines on a link-local GID) joins at the end of the
		// parse when an RDMA connection failed (finishGIDs, gid.go).
		ID: "roce-gid-index", Title: "RoCE: the GID the queue pairs use does not reach the peer", Severity: Error,
		Any:         []string{"in ncclIbRoceGetVersionNum"},
		Messages:    []string{"NET/IB: read failed in ncclIbRoceGetVersionNum: %s", "NET/IB: open failed in ncclIbRoceGetVersionNum: %s"},
		Explanation: "On RoCE each queue pair uses one entry of the port's GID table: the one NCCL_IB_GID_INDEX names or, from NCCL 2.21 on when it is unset, NCCL's own pick (a RoCE v2 entry with an IPv4 address). A link-local (fe80::) entry does not route to another subnet, and an index the table lacks cannot be used: the queue pair does not connect, or its first transfers time out.",
		Fix:         "Set NCCL_IB_GID_INDEX on every node to the RoCE v2 entry with the host's IPv4 address (per pod where pods' tables differ: from show_gids in the start script or /etc/nccl.conf), or leave it unset with NCCL 2.26 or later, which picks it in containers too.",
		Check:       "`show_gids` (or `ibv_devinfo -v | grep GID`) on every host or pod, `ib_write_bw -d DEVICE -x INDEX` between two hosts; NCCL_DEBUG_SUBSYS=NET prints each queue pair's \"GID N (prefix/id)\" (prefix 80FE: fe80:: link-local).",
		Links:       []Link{linkNIC, envLink("NCCL_IB_GID_INDEX"), envLink("NCCL_IB_ROCE_VERSION_NUM"), envLink("NCCL_IB_ADDR_FAMILY")},
		Explain:     explainGID,
	},
	{
		ID: "socket-connect", Title: "A rank cannot open a TCP connection to another", Severity: Error,
		// The catalog formats of every release from 2.18 on; older
		// releases ("Call to connect failed : Connection timed out",
		// "Connect to ... failed : Connection refused") and re-raises
		// are read by connectFailure.
		Messages: []string{"%s: connect to %s failed : %s", "%s: connect to %s returned %s, exceeded error retry count after %d attempts",
			"ncclOsSocketPollConnect to %s failed with error %s", "socketStartConnect: Connect to %s failed : %s",
			"socketPollConnect: Connect to %s returned %d(%s) errno %d(%s)", "%s: Connect to %s failed : %s",
			"socketPollConnect to %s failed with error %s", "%s: connect returned %s, exceeded error retry count (%d)",
			"socketStartConnect: exceeded retries (%d)", "socketStartConnect: exceeded timeouts (%d)",
			"socketPollConnect: exceeded retries (%d)", "socketPollConnect: exceeded timeouts (%d)",
			"Net : No interface found in the same subnet as remote address %s"},
		Match:       connectFailure,
		Explanation: "A TCP connection of NCCL's bootstrap or socket transport to another rank was refused, timed out or found no route. At start-up the published address is on an interface the other host cannot reach (docker0, veth*, a VM bridge, loopback, a VPN, a link-local fe80:: or 169.254 address) or a firewall drops NCCL's ports; later in a job the peer died.",
		Fix:         "Set NCCL_SOCKET_IFNAME on every node to the interface that routes between the hosts (`=eth0` exact, `eth` a prefix, `^docker,lo,veth` to exclude) and allow TCP between the nodes on all ports; if the job ran before, find the rank that exited first.",
		Check:       "`ip -br addr` and `ip route get PEER_IP` on each node; every address of the \"Bootstrap : Using\" and \"NET/Socket : Using\" lines must be reachable from the other hosts (`nc -zv PEER_IP PORT`).",
		Links:       []Link{envLink("NCCL_SOCKET_IFNAME"), linkNIC, linkNetSocketHW},
		Explain:     explainConnect,
	},
	{
		// CUDA error 217 is cudaErrorPeerAccessUnsupported; NCCL's P2P
		// transport meets it when it opens a peer's IPC handle or maps
		// its memory.
		ID: "p2p-access-unsupported", Title: "CUDA refuses P2P access between the GPUs", Severity: Error,
		Any:         []string{"peer access is not supported between these two devices", "cudaErrorPeerAccessUnsupported"},
		Explanation: "NCCL (or a framework's own all-reduce) tried to connect two GPUs directly and CUDA refused peer access (error 217): the driver offers no P2P between them, as on GeForce and some workstation or cloud GPUs (RTX 4090, L4, L40S), in VMs without P2P passthrough, or behind PCIe ACS/IOMMU, while the topology made P2P look possible.",
		Fix:         "NCCL_P2P_DISABLE=1 on these machines (NCCL then goes through shared memory; here a fix, since the hardware has no P2P), or NCCL_P2P_LEVEL=LOC (when the failing line is transport/shm.cc, NCCL_CUMEM_HOST_ENABLE=0 instead); for vLLM or SGLang custom all-reduce, turn that off (`--disable-custom-all-reduce`). A newer NCCL detects more such cards by itself.",
		Check:       "`nvidia-smi topo -p2p r` (NS between the pairs) or `python -c \"import torch; print(torch.cuda.can_device_access_peer(0, 1))\"`.",
		Links:       []Link{linkP2P, envLink("NCCL_P2P_DISABLE"), envLink("NCCL_P2P_LEVEL"), envLink("NCCL_CUMEM_HOST_ENABLE")},
		Explain:     explainShmPeer,
	},
	{
		// rdma-core's libibverbs prints this (not NCCL) when a uverbs
		// device exists but no provider library for its NIC is installed;
		// NCCL then sees no usable IB device and uses sockets.
		ID: "verbs-provider-missing", Title: "libibverbs has no driver (provider) for the RDMA NIC", Severity: Error,
		Any:         []string{"no userspace device-specific driver found for"},
		Explanation: "The kernel exposes an RDMA device (/sys/class/infiniband_verbs/uverbsN) but libibverbs found no userspace provider for it, so NCCL finds no usable InfiniBand/RoCE device and falls back to TCP sockets (NET/Socket), much slower between hosts. Typical in a container image that has libibverbs but not the NIC's provider.",
		Fix:         "Install the provider in the image: ibverbs-providers (Debian/Ubuntu; it contains libmlx5) or rdma-core / libmlx5 (RHEL), matching the host's MOFED or rdma-core; or use an image that ships them.",
		Check:       "`ibv_devinfo` inside the container must list the device with state PORT_ACTIVE; then the NCCL_DEBUG=INFO line \"NET/IB : Using\" replaces \"NET/Socket\".",
		Links:       []Link{envLink("NCCL_IB_HCA"), linkNetSocketHW},
	},
	{
		// PyTorch 2.6.0: ProcessGroupGloo.cpp:727-731 (loopback fallback),
		// init.cpp:2823-2829 (GLOO_SOCKET_IFNAME split at commas, one
		// device per name).
		ID: "gloo-interface", Title: "Gloo (PyTorch's CPU group) binds an address the other hosts cannot reach", Severity: Error,
		Any: []string{"Gloo connectFullMesh failed", "Unable to resolve hostname to a (local) address", "Using the loopback address as fallback",
			"Unable to find address for:"},
		Explanation: "PyTorch's Gloo backend, which frameworks such as vLLM, SGLang and DeepSpeed start beside NCCL for CPU-side coordination, binds to the address the host name resolves to and falls back to loopback (127.0.0.1) when it resolves to none; the other hosts then connect to their own loopback and connectFullMesh fails. GLOO_SOCKET_IFNAME overrides it, but unlike NCCL_SOCKET_IFNAME it takes only concrete interface names separated by commas: no prefixes and no \"^\" exclusions (\"Unable to find address for: ^lo\").",
		Fix:         "Set GLOO_SOCKET_IFNAME on every node to the interface that routes to the other hosts (`ip -4 route get MASTER_ADDR` names it), and NCCL_SOCKET_IFNAME alike; or make the host name resolve to that address (/etc/hosts).",
		Check:       "`getent hosts $(hostname)` must print a routable address, not 127.x; `ip -br addr` on every node for the interface name.",
		Links:       []Link{envLink("GLOO_SOCKET_IFNAME"), envLink("NCCL_SOCKET_IFNAME")},
	},
	{
		// plugin/net.cc ncclNetInit: no plugin whose name matches
		// NCCL_NET (comm->config.netName) could be initialised.
		ID: "net-init-failed", Title: "No network transport could start", Severity: Error,
		Any:         []string{"Failed to initialize any NET plugin", "Error: network IB not found", "Error: network Socket not found"},
		Messages:    []string{"Failed to initialize any NET plugin", "Error: network %s not found."},
		Explanation: "NCCL could start none of its network transports (a plugin, IB, sockets) for the network it was asked for. With NCCL_NET=IB (or a plugin's name) and no usable device of that kind, as in a container started without /dev/infiniband, NCCL does not fall back to sockets: communicator creation fails with invalid usage.",
		Fix:         "Pass the RDMA devices into the container (`--device=/dev/infiniband`, the RDMA device plugin on Kubernetes) and install rdma-core in the image, or unset NCCL_NET so that NCCL may choose.",
		Check:       "`ls /dev/infiniband` and `ibv_devinfo` inside the container, `env | grep NCCL_NET`, and the NET/IB and NET/Plugin lines before the warning.",
		Links:       []Link{envLink("NCCL_NET"), envLink("NCCL_IB_DISABLE"), linkNetSocketHW},
		Explain: func(lines []LineRef, s *Summary) string {
			if e, ok := s.Env("NCCL_NET"); ok {
				return "The log sets NCCL_NET=" + e.Value + "."
			}
			return ""
		},
	},
	{
		ID: "net-plugin-failed", Title: "The network plugin failed to load or start", Severity: Error,
		Match:       pluginFailure,
		Explanation: "The network plugin (libnccl-net.so: aws-ofi-nccl for EFA, the HPC-X plugin for InfiniBand) did not load or could not open its network; NCCL falls back to its own IB or socket transport, or fails.",
		Fix:         "Use a plugin built for the libfabric/rdma-core and NCCL the job loads (aws-ofi-nccl: one EFA installer and a plugin release for this NCCL) and pass the devices into the container (`--device /dev/infiniband`, or the EFA/RDMA device plugin).",
		Check:       "`fi_info -p efa -t FI_EP_RDM` or `ibv_devinfo` inside the container, `ls /dev/infiniband`, and `ldd` on the libnccl-net.so the log names.",
		Links:       []Link{envLink("NCCL_NET_PLUGIN"), envLink("NCCL_NET"), linkNetSocketHW},
		Explain:     explainPlugin,
	},
}

// connectWords are what the C library says when a TCP connect fails, as
// NCCL, PyTorch and launchers print it.
var connectWords = []string{"connection refused", "connection timed out", "network is unreachable", "no route to host",
	"connect timeout", "software caused connection abort", "exceeded retries", "exceeded timeouts",
	"exceeded error retry count", "no interface found in the same subnet"}

// connectFailure matches a failed TCP connect printed by NCCL in any
// release, or quoted around it: the line must name a connect failure and
// an NCCL connect call or NCCL itself. PyTorch's own store (TCPStore, the
// rendezvous at MASTER_ADDR:MASTER_PORT) fails with the same words but
// another cause, as do the verbs calls of the IB transport (ib-qp-setup),
// and NCCL's INFO lines that only announce a retry are part of normal
// start-up; none of them is evidence.
func connectFailure(line string) bool {
	// Every connectWords entry holds one of these in any capitalisation
	// of its first letter; most lines hold none, and skip the lower-case
	// copy.
	if !containsAny(line, connectStems) {
		return false
	}
	l := strings.ToLower(line)
	if !containsAny(l, connectWords) {
		return false
	}
	return !containsAny(l, notNCCLConnect) && containsAny(l, ncclConnect)
}

// connectStems are parts of connectWords that keep their case in every
// spelling NCCL and libc use.
var connectStems = []string{"onnect", "nreachable", "o route", "xceeded", "o interface found"}

// notNCCLConnect mark lines of PyTorch's store and NCCL's retry notices;
// ncclConnect the connect calls of NCCL (lower case).
var (
	notNCCLConnect = []string{"retrying", "ibv_", "net/ib", "tcpstore", "client socket", "c10d", "socket.cpp", "rendezvous", "master_addr", "store_based_barrier"}
	ncclConnect    = []string{"connect to ", "call to connect", "socketstartconnect", "socketpollconnect", "nccl", "connect returned"}
)

// pluginFailure matches a network plugin that failed: a dlopen error other
// than the absent libnccl-net.so every job without a plugin reports, or a
// warning of aws-ofi-nccl (its lines carry "NET/OFI").
func pluginFailure(line string) bool {
	if strings.Contains(line, "NET/OFI") {
		return strings.Contains(line, "WARN") || containsAny(strings.ToLower(line), ofiFailed)
	}
	return (strings.Contains(line, "NET/Plugin") || strings.Contains(line, "libnccl-net")) && containsAny(line, loadFailed)
}

// ofiFailed are the words of aws-ofi-nccl's failures (lower case),
// loadFailed what the dynamic loader says of a library it cannot use.
var (
	ofiFailed  = []string{"failed", "unable to", "couldn't", "error"}
	loadFailed = []string{"version `", "undefined symbol", "wrong ELF class", "symbol lookup error"}
)

// explainConnect names the peer address of the failed connect.
func explainConnect(lines []LineRef, s *Summary) string {
	for _, l := range lines {
		if addr := connectTarget(l.Text); addr != "" {
			return "The address that failed is " + addr + ": it must be one the other hosts reach."
		}
	}
	return ""
}

// connectTarget returns the "ADDR<PORT>" of "Connect to ADDR<PORT> failed"
// (any release's capitalisation), or "".
func connectTarget(t string) string {
	// Searched in t itself: strings.ToLower may change the byte length
	// of non-ASCII text, so its indexes need not fit t.
	i := strings.Index(t, "onnect to ")
	if i < 1 || (t[i-1] != 'c' && t[i-1] != 'C') {
		return ""
	}
	rest := t[i+len("onnect to "):]
	end := strings.IndexAny(rest, " ,")
	if end < 0 {
		end = len(rest)
	}
	addr := rest[:end]
	if !strings.Contains(addr, "<") {
		return ""
	}
	return clip(addr, 80)
}

// explainPlugin says what the plugin's own message tells.
func explainPlugin(lines []LineRef, s *Summary) string {
	for _, l := range lines {
		t := l.Text
		switch {
		case strings.Contains(t, "fi_getinfo"):
			return "fi_getinfo failed: libfabric sees no EFA device, most often a container started without the /dev/infiniband devices."
		case strings.Contains(t, "register memory"):
			return "aws-ofi-nccl could not register a buffer: with NCCL 2.19 or later and libfabric of an EFA installer before 1.29, set FI_EFA_SET_CUDA_SYNC_MEMOPS=0 or upgrade the EFA installer."
		case strings.Contains(t, "version `"):
			return "The plugin was built against a newer library (libfabric) than the one the loader found, so it did not load."
		}
	}
	return ""
}

// sockIf is one interface NCCL names for its bootstrap or socket traffic.
type sockIf struct {
	Name, Addr string
	Line       LineRef
}

// scanSockIfs records the interfaces of "Bootstrap : Using [0]eth0:10.0.0.1<0>
// [1]...", "NET/Socket : Using ...", the out-of-band "; OOB eth0:..." of the
// IB transport and the "NET : Using interface eth0:..." of releases before
// 2.4.
func (p *parser) scanSockIfs(n int, raw string) {
	var rest string
	bootstrap := false
	for _, k := range sockIfLists {
		if i := strings.Index(raw, k); i >= 0 {
			rest = raw[i+len(k):]
			bootstrap = strings.HasPrefix(k, "Bootstrap")
			break
		}
	}
	if rest == "" {
		return
	}
	for pos, f := range strings.Fields(rest) {
		// The bootstrap listens on the first interface it lists
		// (bootstrapNetIfAddrs[0] in 2.7's bootstrap.cc; it finds one
		// interface only from 2.8 on); the socket transport uses all.
		if bootstrap && pos > 0 {
			break
		}
		for strings.HasPrefix(f, "[") {
			j := strings.IndexByte(f, ']')
			if j < 0 {
				break
			}
			f = f[j+1:]
		}
		name, addr, ok := strings.Cut(f, ":")
		if !ok || name == "" || !strings.Contains(addr, "<") {
			continue
		}
		addr, _, _ = strings.Cut(addr, "<")
		addr, _, _ = strings.Cut(addr, "%")
		seen := false
		for _, x := range p.s.sockIfs {
			if x.Name == name && x.Addr == addr {
				seen = true
				break
			}
		}
		if !seen && len(p.s.sockIfs) < p.opts.MaxItems {
			p.s.sockIfs = append(p.s.sockIfs, sockIf{Name: name, Addr: addr, Line: p.ref(n, raw)})
		}
	}
}

// sockIfLists start the interface lists of NCCL's lines.
var sockIfLists = []string{"Bootstrap : Using", "Bootstrap: Using", "NET/Socket : Using", "NET/Socket: Using", "NET : Using interface", "; OOB "}

// virtualIfPrefixes name interfaces of container and VM bridges, overlay
// networks and VPNs, whose addresses other hosts usually cannot reach.
var virtualIfPrefixes = []string{"docker", "veth", "virbr", "br-", "cni", "flannel", "cali", "weave", "vxlan", "tun", "tap",
	"kube-", "lxcbr", "lxdbr", "podman", "vmnet", "tailscale", "wg", "zt", "ip6tnl", "CloudflareWARP"}

// suspiciousWhy says why an interface seldom carries traffic between hosts,
// "" when nothing marks it.
func suspiciousWhy(x sockIf) string {
	switch {
	case x.Name == "lo" || strings.HasPrefix(x.Addr, "127.") || x.Addr == "::1":
		return " (loopback: reaches only this host)"
	case strings.HasPrefix(strings.ToLower(x.Addr), "fe80:"):
		return " (an IPv6 link-local fe80:: address, which does not route)"
	case strings.HasPrefix(x.Addr, "169.254."):
		return " (an IPv4 link-local 169.254.x.x address, which does not route)"
	}
	for _, p := range virtualIfPrefixes {
		if strings.HasPrefix(x.Name, p) {
			return " (a container, VM or VPN interface)"
		}
	}
	return ""
}

// suspiciousIfs returns the interfaces of the log that seldom route
// between hosts.
func (s *Summary) suspiciousIfs() []sockIf {
	var out []sockIf
	for _, x := range s.sockIfs {
		if suspiciousWhy(x) != "" {
			out = append(out, x)
		}
	}
	return out
}

// describeIfs lists interfaces as "veth75fa783 (fe80::14ad:...) (why)".
func describeIfs(xs []sockIf) string {
	var parts []string
	for _, x := range xs[:min(len(xs), 4)] {
		parts = append(parts, x.Name+" ("+clip(x.Addr, 40)+")"+suspiciousWhy(x))
	}
	if len(xs) > 4 {
		parts = append(parts, "and "+strconv.Itoa(len(xs)-4)+" more")
	}
	return strings.Join(parts, ", ")
}

// socketInterfaces warns about interfaces NCCL uses for traffic between
// hosts that seldom route there: NCCL's socket transport spreads its
// connections over every interface it lists, and the bootstrap publishes the
// first one, so one loopback, bridge or link-local entry makes connections
// fail ("Network is unreachable", "Connection refused") or hang.
func (d *diagnoser) socketInterfaces() (Diagnosis, bool) {
	s := d.s
	sus := s.suspiciousIfs()
	if len(sus) == 0 {
		return Diagnosis{}, false
	}
	connect := s.ruleHits["socket-connect"]
	failed := (connect != nil && !connect.Empty()) || !s.PeerLost.Empty()
	socketConns := 0
	for _, t := range s.Transports {
		if t.Kind == "NET/Socket" {
			socketConns += t.Count
		}
	}
	multi := s.NNodes > 1 || len(s.Hosts) > 1 || socketConns > 0
	if !failed && !multi {
		return Diagnosis{}, false
	}
	var ev evidence
	for _, x := range sus {
		ev.add(x.Line)
	}
	if connect != nil {
		ev.add(connect.Lines...)
	}
	sev := Info
	if failed || socketConns > 0 {
		sev = Warning
	}
	good := ""
	for _, x := range s.sockIfs {
		if suspiciousWhy(x) == "" {
			good = x.Name
			break
		}
	}
	expl := "NCCL lists " + describeIfs(sus) + " among the interfaces of its bootstrap or socket traffic; other hosts seldom reach such addresses, and NCCL spreads its socket connections over every listed interface, so connections fail or hang."
	if v, ref, ok := d.setting("NCCL_SOCKET_IFNAME"); ok {
		ev.add(ref)
		expl += " NCCL_SOCKET_IFNAME=" + v + " is set and still selects them (a name is a prefix unless it starts with \"=\")."
	}
	expl += " Fix: set NCCL_SOCKET_IFNAME on every node to the interface that connects the hosts"
	if good != "" {
		expl += " (perhaps NCCL_SOCKET_IFNAME=" + good + ")"
	}
	expl += ", or `^docker,lo,veth`. Check: `ip -br addr` on every node; the \"Using\" lines of a rerun list only addresses the other hosts reach."
	return Diagnosis{ID: "socket-interface", Severity: sev, Title: "NCCL uses interfaces that do not connect the hosts",
		Explanation: expl, Evidence: ev.list(), Links: links(envLink("NCCL_SOCKET_IFNAME"), linkNIC, linkNetSocketHW)}, true
}

// containsAny reports whether s contains one of the substrings.
func containsAny(s string, subs []string) bool {
	for _, k := range subs {
		if strings.Contains(s, k) {
			return true
		}
	}
	return false
}

// explainSocketAddress reads the socket-creation failure of releases before
// 2.4, which NCCL printed when it found no usable IP interface at all.
func explainSocketAddress(lines []LineRef, s *Summary) string {
	for _, l := range lines {
		if strings.Contains(l.Text, "Socket creation failed : Address family not supported") {
			return "Releases before 2.4 print this when they find no usable IP interface, as in a container without a network of its own: start it with `--net=host` or give it a routable interface."
		}
		if strings.Contains(l.Text, "NCCL_OOB_NET_IFNAME") {
			return "NCCL_OOB_NET_IFNAME (2.23 and later: the network device of NCCL's out-of-band bootstrap) names no device NCCL found: unset it or name one that `ibv_devices` or `ip -br addr` lists."
		}
	}
	return ""
}

// explainNVLS says what the CUDA error of a failed NVLS setup points to.
func explainNVLS(lines []LineRef, s *Summary) string {
	for _, l := range lines {
		t := l.Text
		switch {
		case strings.Contains(t, "invalid argument"):
			return "\"invalid argument\" from the multicast setup is reported inside containers that do not expose /dev/nvidia-caps; NCCL_NVLS_ENABLE=0 is then the fix."
		case strings.Contains(t, "present state"):
			return "CUDA error 401 is the Fabric Manager or NVSwitch state: restart nvidia-fabricmanager or reset the GPUs."
		}
	}
	return ""
}

// qpErrno returns the errno text of a verbs failure line that qp-setup
// explains by routing.
func qpErrno(t string) string {
	if strings.Contains(t, "Network is unreachable") {
		return "Network is unreachable"
	}
	return "Connection timed out"
}

// gidDefault says which RoCE GID index NCCL used when the log does not set
// NCCL_IB_GID_INDEX: index 0 before 2.21 (NCCL_PARAM(IbGidIndex, ..., 0)
// in net_ib.cc of v2.20.5-1), which on most RoCE ports is the link-local
// RoCE v1 entry; from 2.21 on -1, NCCL's own pick.
func gidDefault(s *Summary) string {
	if e, ok := s.Env("NCCL_IB_GID_INDEX"); ok {
		return " The log sets NCCL_IB_GID_INDEX=" + e.Value + ": check that `show_gids` lists that index as RoCE v2 with an IPv4 address on both hosts."
	}
	v := s.Version()
	major, minor, ok := majorMinor(v)
	switch {
	case !ok:
		return " Without NCCL_IB_GID_INDEX, NCCL before 2.21 uses GID index 0, on most RoCE ports the link-local RoCE v1 entry."
	case major == 2 && minor < 21:
		return " NCCL " + v + " uses GID index 0 unless NCCL_IB_GID_INDEX is set, on most RoCE ports the link-local RoCE v1 entry: set the RoCE v2 IPv4 index `show_gids` lists (often 3)."
	}
	return ""
}

// majorMinor reads "2.20.5" as 2, 20.
func majorMinor(v string) (int, int, bool) {
	a, rest, ok := strings.Cut(v, ".")
	if !ok {
		return 0, 0, false
	}
	b, _, _ := strings.Cut(rest, ".")
	major, err1 := strconv.Atoi(a)
	minor, err2 := strconv.Atoi(b)
	return major, minor, err1 == nil && err2 == nil
}

// peerLostWords are NCCL's messages of a lost peer as they appear without
// their WARN line: re-raised by PyTorch after "Last error:", or as the text
// of ncclRemoteError ("remote process exited or there was a network error",
// ncclGetErrorString).
var peerLostWords = []string{"socketProgress: Connection closed by remote peer", "socketProgressOpt: Call to recv from",
	"Socket recv failed while polling", "Net : Connection closed by remote peer", "Net : Call to recv from",
	"remote process exited or there was a network error"}

// scanPeerLostText records lost-peer messages outside NCCL WARN lines (the
// WARN lines are classified by warn).
func (p *parser) scanPeerLostText(n int, raw string) {
	if !strings.Contains(raw, "NCCL WARN") && containsAny(raw, peerLostWords) {
		p.add(&p.s.peerLostText, n, raw)
	}
}

// explainShmPeer reads a 217 from transport/shm.cc: since 2.24, with a
// CUDA 12.6 or later driver, the SHM transport keeps its buffers in cuMem
// host memory that each GPU imports (v2.27.3 shm.cc:590, cudawrap.cc's
// ncclCuMemHostEnable), so the refusal is not P2P's.
func explainShmPeer(lines []LineRef, s *Summary) string {
	for _, l := range lines {
		if strings.Contains(l.Text, "shm.cc:") {
			return "Here it is NCCL's shared-memory transport (transport/shm.cc) that failed: since 2.24, with a CUDA 12.6 or later driver, it keeps its buffers in cuMem host memory that each GPU maps; NCCL_CUMEM_HOST_ENABLE=0 puts them in /dev/shm as before, while NCCL_P2P_DISABLE=1 would send the traffic through this very transport."
		}
	}
	return ""
}
