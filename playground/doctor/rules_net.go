package doctor

import (
	"fmt"
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
var netUnproven = []string{"socket-interface"}

var netLineRules = []Rule{
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
		Explanation: "NCCL's bootstrap and its socket transport open TCP connections to the address each rank published, and one of them was refused, timed out or had no route. Right at start-up that means the address is on an interface the other host cannot reach (a container bridge such as docker0 or veth*, a VM bridge, loopback, a VPN tunnel, a link-local fe80:: or 169.254.x.x address), or a firewall or security group drops the ports NCCL listens on; later in a job, the peer process died.",
		Fix:         "Set NCCL_SOCKET_IFNAME on every node to the interface that routes between the hosts (`=eth0` for an exact name, `eth` as a prefix, `^docker,lo,veth` to leave interfaces out), and allow TCP between the nodes on all ports (NCCL listens on ephemeral ports). If the job ran before, look for the rank that exited first.",
		Check:       "`ip -br addr` and `ip route get PEER_IP` on each node, the \"Bootstrap : Using\" and \"NET/Socket : Using\" lines of every rank (each address must be reachable from the other hosts: `nc -zv PEER_IP PORT` or ping), and the firewall (`iptables -L`, the cloud security group).",
		Links:       []Link{envLink("NCCL_SOCKET_IFNAME"), linkNIC, linkNetSocketHW},
		Explain:     explainConnect,
	},
	{
		ID: "net-plugin-failed", Title: "The network plugin failed to load or start", Severity: Error,
		Match:       pluginFailure,
		Explanation: "NCCL loads a network plugin (libnccl-net.so: aws-ofi-nccl for EFA, the HPC-X/SHARP plugin for InfiniBand) and the plugin could not be loaded or could not open its network. NCCL then falls back to its internal IB or socket transport, or fails.",
		Fix:         "Use a plugin built for the libfabric/rdma-core and NCCL that the job loads (for aws-ofi-nccl, the versions of one EFA installer and a plugin release that lists this NCCL), expose the network devices to the container (`--device /dev/infiniband`, on Kubernetes the EFA or RDMA device plugin), and point NCCL_NET_PLUGIN or LD_LIBRARY_PATH at that one copy.",
		Check:       "`fi_info -p efa -t FI_EP_RDM` (EFA) or `ibv_devinfo` inside the container, `ls /dev/infiniband`, `ldd` on the libnccl-net.so the log names, and the plugin's own INFO lines (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET).",
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
// another cause, and NCCL's INFO lines that only announce a retry are part
// of normal start-up; neither is evidence.
func connectFailure(line string) bool {
	l := strings.ToLower(line)
	if !containsAny(l, connectWords) {
		return false
	}
	if containsAny(l, []string{"retrying", "tcpstore", "client socket", "c10d", "socket.cpp", "rendezvous", "master_addr", "store_based_barrier"}) {
		return false
	}
	return containsAny(l, []string{"connect to ", "call to connect", "socketstartconnect", "socketpollconnect", "nccl", "connect returned"})
}

// pluginFailure matches a network plugin that failed: a dlopen error other
// than the absent libnccl-net.so every job without a plugin reports, or a
// warning of aws-ofi-nccl (its lines carry "NET/OFI").
func pluginFailure(line string) bool {
	if strings.Contains(line, "NET/OFI") {
		return strings.Contains(line, "WARN") || containsAny(strings.ToLower(line), []string{"failed", "unable to", "couldn't", "error"})
	}
	if !strings.Contains(line, "NET/Plugin") && !strings.Contains(line, "libnccl-net") {
		return false
	}
	return containsAny(line, []string{"version `", "undefined symbol", "wrong ELF class", "symbol lookup error"})
}

// explainConnect names the peer address of the failed connect and the
// interfaces of the log that seldom route between hosts.
func explainConnect(lines []LineRef, s *Summary) string {
	var parts []string
	for _, l := range lines {
		if addr := connectTarget(l.Text); addr != "" {
			p := "The address that failed is " + addr + "."
			if ifc, ok := s.sockIfByAddr(addr); ok {
				p += " It is the address of interface " + ifc.Name + " in this log" + suspiciousWhy(ifc) + "."
			}
			parts = append(parts, p)
			break
		}
	}
	if sus := s.suspiciousIfs(); len(sus) > 0 {
		parts = append(parts, "The log lists "+describeIfs(sus)+" among the interfaces NCCL uses: set NCCL_SOCKET_IFNAME to leave them out.")
	}
	return strings.Join(parts, " ")
}

// connectTarget returns the "ADDR<PORT>" of "Connect to ADDR<PORT> failed"
// (any release's capitalisation), or "".
func connectTarget(t string) string {
	l := strings.ToLower(t)
	i := strings.Index(l, "connect to ")
	if i < 0 {
		return ""
	}
	rest := t[i+len("connect to "):]
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
			return "libfabric found no usable provider (fi_getinfo failed): the EFA devices are not visible here, most often a container started without the /dev/infiniband devices (uverbs) or an instance type or security group without EFA."
		case strings.Contains(t, "Unable to register memory") || strings.Contains(t, "register memory"):
			return "The plugin could not register a buffer with the NIC. With aws-ofi-nccl and NCCL 2.19 or later this is the known clash with libfabric from EFA installers before 1.29: set FI_EFA_SET_CUDA_SYNC_MEMOPS=0, or upgrade the EFA installer (or use NCCL 2.18)."
		case strings.Contains(t, "version `") && strings.Contains(t, "libfabric"):
			return "The plugin was built against a newer libfabric than the one the dynamic loader found, so it did not load at all and NCCL used its internal transports: install the libfabric (EFA installer) the plugin was built for, or a plugin release built for the installed one."
		case strings.Contains(t, "version `") || strings.Contains(t, "undefined symbol"):
			return "The plugin library did not load: it was built against other library versions than those the loader found."
		case strings.Contains(t, "Couldn't open CQ") || strings.Contains(t, "Couldn't open AV") || strings.Contains(t, "endpoint"):
			return "libfabric could not create its queues or endpoint on the device: check that the EFA devices are passed to the container, that the locked-memory limit is unlimited (`ulimit -l`), and that libfabric and the plugin versions match."
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
	for _, k := range []string{"Bootstrap : Using", "Bootstrap: Using", "NET/Socket : Using", "NET/Socket: Using", "NET : Using interface", "; OOB "} {
		if i := strings.Index(raw, k); i >= 0 {
			rest = raw[i+len(k):]
			break
		}
	}
	if rest == "" {
		return
	}
	for _, f := range strings.Fields(rest) {
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

// sockIfByAddr finds the interface whose address is addr ("IP<port>").
func (s *Summary) sockIfByAddr(addr string) (sockIf, bool) {
	ip, _, _ := strings.Cut(addr, "<")
	ip, _, _ = strings.Cut(ip, "%")
	for _, x := range s.sockIfs {
		if x.Addr == ip {
			return x, true
		}
	}
	return sockIf{}, false
}

// describeIfs lists interfaces as "veth75fa783 (fe80::14ad:...) (why)".
func describeIfs(xs []sockIf) string {
	var parts []string
	for _, x := range xs[:min(len(xs), 4)] {
		parts = append(parts, x.Name+" ("+clip(x.Addr, 40)+")"+suspiciousWhy(x))
	}
	if len(xs) > 4 {
		parts = append(parts, fmt.Sprintf("and %d more", len(xs)-4))
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
	expl := "NCCL lists " + describeIfs(sus) + " among the interfaces of its bootstrap or socket traffic. Other hosts usually cannot reach such addresses, and NCCL's socket transport spreads its connections over every interface it lists, so connections through them fail (\"Network is unreachable\", \"Connection refused\") or hang."
	if v, ref, ok := d.setting("NCCL_SOCKET_IFNAME"); ok {
		ev.add(ref)
		expl += " NCCL_SOCKET_IFNAME=" + v + " is set and still selects them: a name without \"=\" is a prefix, \"^\" excludes."
	}
	fix := "Set NCCL_SOCKET_IFNAME on every node to the interface that connects the hosts"
	if good != "" {
		fix += " (here perhaps `NCCL_SOCKET_IFNAME=" + good + "`)"
	}
	fix += ", or exclude the others (`NCCL_SOCKET_IFNAME=^docker,lo,veth`)."
	expl += " Fix: " + fix + " Check: `ip -br addr` on every node and the \"Bootstrap : Using\" / \"NET/Socket : Using\" lines of a rerun, which must list only addresses the other hosts reach."
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
			return "\"Socket creation failed : Address family not supported by protocol\" is what NCCL releases before 2.4 print when they find no usable IP interface: the process sees only loopback, as a container started without a network of its own does. Start it with `--net=host` (or give it a routable interface) and name that interface in NCCL_SOCKET_IFNAME."
		}
	}
	return ""
}

// explainNVLS says what the CUDA error of a failed NVLS setup points to.
func explainNVLS(lines []LineRef, s *Summary) string {
	for _, l := range lines {
		t := l.Text
		switch {
		case strings.Contains(t, "invalid argument") || strings.Contains(t, "Cuda failure 1 "):
			return "CUDA refused the multicast object with \"invalid argument\": reported inside containers that do not expose /dev/nvidia-caps, and where the driver or Fabric Manager offers no multicast; NCCL_NVLS_ENABLE=0 confirms it and is the fix when NVLS cannot be made available there."
		case strings.Contains(t, "401") || strings.Contains(t, "present state"):
			return "CUDA error 401 (\"the operation cannot be performed in the present state\") is the Fabric Manager or NVSwitch state: restart nvidia-fabricmanager or reset the GPUs; machines that worked before and start failing this way need that, not a code change."
		case strings.Contains(t, "801") || strings.Contains(t, "not supported"):
			return "\"operation not supported\" means the driver offers no multicast objects on this system (no NVSwitch, Fabric Manager not running, or a driver older than the CUDA runtime expects)."
		}
	}
	return ""
}
