package doctor

import (
	"cmp"
	"strconv"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/ascii"
)

// RoCE addresses every queue pair by a GID: one entry of the port's GID
// table, picked by NCCL_IB_GID_INDEX or, from NCCL 2.21 on when that is
// unset, by NCCL's own search for a RoCE v2 entry of the configured
// address family (ncclIbGetGidIndex,
// https://github.com/NVIDIA/nccl/blob/v2.21.5-1/src/transport/net_ib.cc#L292;
// 2.20 and older use index 0 unless told otherwise,
// https://github.com/NVIDIA/nccl/blob/v2.20.5-1/src/transport/net_ib.cc#L715).
// Users paste the table when they suspect it, as show_gids prints it
// ("DEV PORT INDEX GID IPv4 VER DEV") or as `ibv_devinfo -v` does
// ("GID[  3]: ::ffff:10.0.0.1, RoCE v2"); NCCL's own queue-pair INFO line
// prints the entry in use ("GID 0 (80FE/...)": the subnet prefix as a
// little-endian number, so fe80:: link-local reads 80FE).

// lastField splits the last whitespace-separated field off s.
func lastField(s string) (field, rest string) {
	s = strings.TrimRight(s, " \t")
	i := strings.LastIndexAny(s, " \t")
	return s[i+1:], s[:i+1]
}

// scanGIDs reads the rows of a GID table pasted into the log, keeping of
// the first device's rows the lowest index, the link-local (fe80::)
// indices and the first RoCE v2 entry with an IPv4 address; and NCCL's
// queue-pair lines on a link-local GID.
func (p *parser) scanGIDs(n int, raw string) {
	t, s := strings.TrimSpace(raw), p.s
	if i := strings.Index(t, " (80FE/"); i >= 0 {
		// NCCL's queue-pair INFO line ("... GID %ld (%lX/%lX) ...") on an
		// fe80:: entry.
		if idx, rest := lastField(t[:i]); strings.HasSuffix(rest, " GID ") {
			p.add(&s.gidLinkLocalQP, n, raw)
			s.gidLinkLocalIdx = cmp.Or(s.gidLinkLocalIdx, idx)
		}
		return
	}
	if strings.HasPrefix(t, "hca_id:") {
		p.gidDev = strings.TrimSpace(t[len("hca_id:"):])
		return
	}
	// The GID: an fe80:: (link-local) or IPv4-mapped (...ffff:) entry.
	g := strings.Index(t, "fe80:")
	if g < 0 {
		g = strings.Index(t, "ffff:")
	}
	for g > 0 && t[g-1] != ' ' && t[g-1] != '\t' {
		g--
	}
	if g <= 0 {
		return
	}
	gid, tail, _ := strings.Cut(t[g:], ",")
	gid, after, _ := strings.Cut(strings.ReplaceAll(gid, "\t", " "), " ")
	tail = after + tail
	head := strings.TrimRight(t[:g], " \t")
	dev, idx := cmp.Or(p.gidDev, "the device"), ""
	if k := strings.LastIndex(head, "GID["); k >= 0 && strings.HasSuffix(head, "]:") {
		// ibv_devinfo -v: "GID[  3]:		::ffff:10.0.0.1, RoCE v2".
		idx = strings.TrimSpace(head[k+4 : len(head)-2])
	} else {
		// show_gids: "mlx5_0	1	3	0000:...:ffff:0a00:0001	10.0.0.1	v2	eth0",
		// perhaps after a launcher's tag or a time stamp.
		var port string
		idx, head = lastField(head)
		port, head = lastField(head)
		if dev, _ = lastField(head); !ascii.Digits(port) {
			return
		}
	}
	v, err := strconv.Atoi(idx)
	if err != nil || strings.Count(gid, ":") < 2 {
		return
	}
	p.add(&s.gidRows, n, raw)
	if s.gidRows.Count == 1 {
		s.gidTableDev, s.gidLow = dev, v
	}
	if dev != s.gidTableDev {
		return
	}
	s.gidLow = min(s.gidLow, v)
	ip, _, _ := strings.Cut(strings.TrimSpace(tail), " ")
	switch {
	case strings.HasPrefix(strings.ToLower(gid), "fe80:"):
		s.gidLinkLocal += ", " + idx
	case s.gidPick == "" && !strings.Contains(tail, "v1"):
		s.gidPick = idx
		if strings.Count(ip, ".") == 3 {
			s.gidPick += " (" + ip + ")"
		}
	}
}

// finishGIDs adds the GID table and link-local queue pairs to the
// evidence of roce-gid-index when the log also shows an RDMA connection
// that failed: a queue pair NCCL could not connect, a completion that
// timed out, or a proxy connect operation that failed.
func (p *parser) finishGIDs() {
	s := p.s
	if s.gidRows.Empty() && s.gidLinkLocalQP.Empty() {
		return
	}
	failed := s.ruleHits["ib-qp-setup"] != nil
	if e := s.ruleHits["ib-completion-error"]; e != nil {
		for _, l := range e.Lines {
			if st, ok := completionStatus(l.Text); ok && st == 12 {
				failed = true
			}
		}
	}
	for _, l := range s.Warnings.Lines {
		failed = failed || strings.Contains(l.Text, "operation Connect") || strings.Contains(l.Text, "operation=Connect")
	}
	if !failed {
		return
	}
	for _, e := range []Evidence{s.gidLinkLocalQP, s.gidRows} {
		for _, l := range e.Lines {
			p.hitID("roce-gid-index", l.Line, l.Text)
		}
	}
}

// explainGID reads the GID evidence: a failed read of a GID's RoCE
// version, the link-local and IPv4 RoCE v2 entries of the first device's
// table, a table that starts past index 0 (a container's view) and a
// link-local GID in NCCL's own queue pairs.
func explainGID(lines []LineRef, s *Summary) string {
	x := ""
	for _, l := range lines {
		if i := strings.Index(l.Text, "failed in ncclIbRoceGetVersionNum: "); i >= 0 {
			x = "NCCL could not read a GID's RoCE version from /sys/class/infiniband/DEV/ports/PORT/gid_attrs/types/INDEX (\"" + strings.TrimSpace(l.Text[i+35:]) + "\"): a container's GID table (Kubernetes pods on macvlan or SR-IOV, the RDMA shared device plugin) holds entries its sysfs does not map. NCCL 2.21-2.25 stop the GID search there and the connection fails (https://github.com/NVIDIA/nccl/blob/v2.25.1-1/src/transport/net_ib.cc#L330); 2.26 skips such entries (https://github.com/NVIDIA/nccl/blob/v2.26.2-1/src/transport/net_ib.cc#L336-L338). "
			break
		}
	}
	if s.gidPick != "" {
		ll := ""
		if s.gidLinkLocal != "" {
			ll = "; its link-local (fe80::) entries " + s.gidLinkLocal[2:] + " do not reach a peer in another subnet"
		}
		pick, _, _ := strings.Cut(s.gidPick, " ")
		x += "In the GID table of " + s.gidTableDev + " the IPv4 RoCE v2 entry is " + s.gidPick + ll + ": here NCCL_IB_GID_INDEX=" + pick + " for " + s.gidTableDev + " (check the other devices' and hosts' tables). "
	}
	if s.gidLow > 0 {
		x += "The table starts at index " + strconv.Itoa(s.gidLow) + ", not 0: a container's view; pods sharing a NIC see different indices, so one NCCL_IB_GID_INDEX for all can name an entry some lack (\"No such device\"). "
	}
	if !s.gidLinkLocalQP.Empty() {
		x += "NCCL's queue pairs used GID " + s.gidLinkLocalIdx + ", a link-local entry (its subnet prefix prints as 80FE)."
	}
	return strings.TrimSpace(x)
}
