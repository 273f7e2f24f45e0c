package doctor

import (
	"strings"
	"sync"
)

// netCue is one thing a log can show about why NCCL fell back from
// InfiniBand/RoCE to its TCP socket transport: a catalog message (any
// release) or, for releases the catalog does not cover, a substring.
type netCue struct {
	key     string
	formats []string
	any     []string
	cause   string
}

// netCues are tried on every line, in this order of explanation.
var netCues = []netCue{
	{key: "no-verbs", formats: []string{"Failed to open libibverbs.so[.1]", "Count not open %s"},
		any:   []string{"Failed to open libibverbs"},
		cause: "libibverbs could not be loaded: rdma-core is not installed (a container image without it, most often) or not on the library path. Install libibverbs1/rdma-core and the NIC's provider (ibverbs-providers, libmlx5), or use an image that has them."},
	{key: "open-failed", formats: []string{"NET/IB : Unable to open device %s"},
		any:   []string{"Unable to open device", "Call to ibv_open_device failed"},
		cause: "a verbs device is listed but cannot be opened: the container does not see /dev/infiniband (Docker: --device=/dev/infiniband --cap-add=IPC_LOCK, or --privileged; Kubernetes: an RDMA device plugin) or lacks the permission."},
	{key: "no-ip-if", formats: []string{"NET/IB : No IP interface found."},
		cause: "the IB transport found no IP interface for its out-of-band connection: NCCL_SOCKET_IFNAME (or NCCL_IB's own interface choice) matches none."},
	{key: "hca", formats: []string{"NCCL_IB_HCA set to %s"},
		cause: "NCCL_IB_HCA selects the devices: with \"No device found\" it names no active port. Names are prefixes (mlx5_1 also matches mlx5_10), \"=\" asks for exact names, \"^\" excludes; compare with `ibv_devices` and `ibstat`."},
	{key: "no-plugin", formats: []string{"Failed to initialize any NET plugin"},
		cause: "no network plugin could be initialised at all."},
}

// netCuesByFormat maps a catalog format to the indexes of the cues that
// list it.
// (built on first use, like rulesByFormat).
func netCuesByFormat() map[string][]int {
	cuesIndex.once.Do(func() {
		cuesIndex.m = byFormat(netCues, func(c netCue) []string { return c.formats })
	})
	return cuesIndex.m
}

var cuesIndex struct {
	once sync.Once
	m    map[string][]int
}

// addNetCue records line n as evidence of a cue, once per line.
func (p *parser) addNetCue(i int, n int, raw string) {
	if p.s.netCues == nil {
		p.s.netCues = map[string]*Evidence{}
	}
	e := p.s.netCues[netCues[i].key]
	if e == nil {
		e = &Evidence{}
		p.s.netCues[netCues[i].key] = e
	}
	if len(e.Lines) > 0 && e.Lines[len(e.Lines)-1].Line == n {
		return
	}
	p.add(e, n, raw)
}

// scanNetCues tries the substrings of every cue on a line.
func (p *parser) scanNetCues(n int, raw string) {
	for i, c := range netCues {
		for _, k := range c.any {
			if strings.Contains(raw, k) {
				p.addNetCue(i, n, raw)
				break
			}
		}
	}
}

// netCauses lists, in netCues order, why the log says NCCL used sockets,
// with the evidence lines; the environment's NCCL_IB_DISABLE and NCCL_NET
// come first because they decide before any device is looked at.
func (d *diagnoser) netCauses(ev *evidence) []string {
	var out []string
	if v, ref, ok := d.setting("NCCL_IB_DISABLE"); ok && !isOff(v) {
		ev.add(ref)
		out = append(out, "NCCL_IB_DISABLE="+v+" turns NCCL's InfiniBand/RoCE transport off; unset it (or set 0) on every node.")
	}
	if v, ref, ok := d.setting("NCCL_NET"); ok && strings.EqualFold(strings.TrimSpace(v), "Socket") {
		ev.add(ref)
		out = append(out, "NCCL_NET=Socket forces the socket transport; unset it.")
	}
	if hca := d.s.netCues["hca"]; (hca == nil || hca.Empty()) && !d.s.IBNoDevice.Empty() {
		// The "set by environment" echo (or the given environment)
		// where the release prints no "NCCL_IB_HCA set to" line.
		if v, ref, ok := d.setting("NCCL_IB_HCA"); ok {
			ev.add(ref)
			out = append(out, "NCCL_IB_HCA="+v+" matched no active port. Names are prefixes (mlx5_1 also matches mlx5_10), \"=\" asks for exact names, \"^\" excludes; compare with `ibv_devices` and `ibstat`.")
		}
	}
	for _, c := range netCues {
		e := d.s.netCues[c.key]
		if e == nil || e.Empty() {
			continue
		}
		if c.key == "hca" && d.s.IBNoDevice.Empty() {
			continue
		}
		ev.add(e.Lines...)
		out = append(out, c.cause)
	}
	if len(out) == 0 && !d.s.IBNoDevice.Empty() {
		out = append(out, "NCCL found no active InfiniBand/RoCE port: the machine or VM has no RDMA NIC, the port is down or not ACTIVE (`ibv_devinfo`: state PORT_ACTIVE), its driver is not loaded, or the container does not see it (Docker: --device=/dev/infiniband with --cap-add=IPC_LOCK, or --privileged; Slurm containers: mount /dev/infiniband; Kubernetes: an RDMA device plugin). `ls /dev/infiniband` and `ibv_devices` inside the container show what it sees.")
	}
	return out
}
