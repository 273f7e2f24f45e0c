package doctor

import (
	"strconv"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/ascii"
	"github.com/distributed-nav/distributed-nav/playground/ncclmsg"
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

// gidEntry is one row of a pasted GID table.
type gidEntry struct {
	dev   string
	index int
	gid   string
	ipv4  string
	ver   int // RoCE version; 0 when the row does not say
}

// linkLocal reports an fe80:: entry, which does not route between subnets.
func (e gidEntry) linkLocal() bool { return strings.HasPrefix(strings.ToLower(e.gid), "fe80:") }

// mapped reports an IPv4-mapped entry (::ffff:a.b.c.d), the one NCCL's
// search prefers by default.
func (e gidEntry) mapped() bool {
	g := strings.ToLower(e.gid)
	return e.ipv4 != "" || strings.HasPrefix(g, "::ffff:") || strings.HasPrefix(g, "0000:0000:0000:0000:0000:ffff:")
}

// gidLike reports whether s reads as an IPv6-style GID: hex digits and at
// least two colons.
func gidLike(s string) bool {
	if strings.Count(s, ":") < 2 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == ':' || c == '.' || isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'f')) {
			return false
		}
	}
	return true
}

// scanGIDs reads the rows of a GID table pasted into the log.
func (p *parser) scanGIDs(n int, raw string) {
	t := strings.TrimSpace(raw)
	if strings.HasPrefix(t, "hca_id:") {
		p.gidDev = strings.TrimSpace(t[len("hca_id:"):])
		return
	}
	var e gidEntry
	if i := strings.Index(t, "GID["); i >= 0 {
		// ibv_devinfo -v: "GID[  3]:		::ffff:10.0.0.1, RoCE v2".
		rest := t[i+len("GID["):]
		j := strings.Index(rest, "]:")
		idx, err := strconv.Atoi(strings.TrimSpace(rest[:max(j, 0)]))
		if j < 0 || err != nil {
			return
		}
		g, ver, _ := strings.Cut(strings.TrimSpace(rest[j+2:]), ",")
		e = gidEntry{dev: p.gidDev, index: idx, gid: strings.TrimSpace(g)}
		if v := strings.TrimSpace(ver); strings.HasPrefix(v, "RoCE v") {
			e.ver, _ = strconv.Atoi(v[len("RoCE v"):])
		}
	} else {
		// show_gids: "mlx5_0	1	3	0000:...:ffff:0a00:0001	10.0.0.1	v2	eth0".
		// A launcher's tag or a time stamp may come first.
		f := strings.Fields(t)
		k := 0
		for k+5 <= len(f) && !(ascii.Digits(f[k+1]) && ascii.Digits(f[k+2]) && gidLike(f[k+3])) {
			k++
		}
		if k+5 > len(f) {
			return
		}
		e.dev, e.gid = f[k], f[k+3]
		e.index, _ = strconv.Atoi(f[k+2])
		for _, w := range f[k+4:] {
			switch {
			case strings.Count(w, ".") == 3:
				e.ipv4 = w
			case w == "v1" || w == "v2":
				e.ver = int(w[1] - '0')
			}
		}
	}
	if !gidLike(e.gid) || len(p.s.gids) >= p.opts.MaxItems {
		return
	}
	p.s.gids = append(p.s.gids, e)
	p.add(&p.s.gidRows, n, raw)
}

// noteQPGID records the GID entries NCCL's queue-pair INFO lines name
// ("... GID %ld (%lX/%lX) ..."), keeping those that are link-local.
func (p *parser) noteQPGID(n int, raw string, m ncclmsg.Match) {
	if !strings.Contains(m.Entry.Format, " GID %") {
		return
	}
	for i, c := range m.Entry.Conversions() {
		if c.Label == "GID" && i+1 < len(m.Fields) && strings.EqualFold(m.Fields[i+1].Value, "80FE") {
			p.add(&p.s.gidLinkLocalQP, n, raw)
			if p.s.gidLinkLocalIdx == "" {
				p.s.gidLinkLocalIdx = m.Fields[i].Value
			}
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
// version, the table's link-local and IPv4 RoCE v2 entries per device,
// a table that starts past index 0 (a container's view), the index the
// environment forces, and a link-local entry in NCCL's own queue pairs.
func explainGID(lines []LineRef, s *Summary) string {
	var b strings.Builder
	for _, l := range lines {
		if i := strings.Index(l.Text, "failed in ncclIbRoceGetVersionNum: "); i >= 0 {
			b.WriteString("NCCL could not read a GID's RoCE version from /sys/class/infiniband/DEV/ports/PORT/gid_attrs/types/INDEX (\"" + strings.TrimSpace(l.Text[i+len("failed in ncclIbRoceGetVersionNum: "):]) + "\"): in a container (Kubernetes pods on macvlan or SR-IOV interfaces, the RDMA shared device plugin) the GID table holds entries that the container's sysfs does not map. NCCL 2.21 to 2.25 stop their GID search at that error and the connection fails (https://github.com/NVIDIA/nccl/blob/v2.25.1-1/src/transport/net_ib.cc#L330); 2.26 skips such entries (https://github.com/NVIDIA/nccl/blob/v2.26.2-1/src/transport/net_ib.cc#L336-L338). ")
			break
		}
	}
	devs := []string{}
	byDev := map[string][]gidEntry{}
	for _, e := range s.gids {
		if byDev[e.dev] == nil {
			devs = append(devs, e.dev)
		}
		byDev[e.dev] = append(byDev[e.dev], e)
	}
	var picks []string
	sparse := -1
	for _, d := range devs {
		var ll, v2 []string
		low, pick := -1, ""
		for _, e := range byDev[d] {
			if low < 0 || e.index < low {
				low = e.index
			}
			idx := strconv.Itoa(e.index)
			switch {
			case e.linkLocal():
				ll = append(ll, idx)
			case e.mapped() && e.ver != 1:
				if e.ipv4 != "" {
					idx += " (" + e.ipv4 + ")"
				}
				v2 = append(v2, idx)
				if pick == "" {
					pick = strconv.Itoa(e.index)
				}
			}
		}
		name := d
		if name == "" {
			name = "the device"
		}
		b.WriteString("GID table of " + name + ": ")
		if len(ll) > 0 {
			b.WriteString("link-local (fe80::) entries " + strings.Join(ll, ", ") + ", which do not reach a peer in another subnet")
		}
		if len(v2) > 0 {
			if len(ll) > 0 {
				b.WriteString("; ")
			}
			b.WriteString("IPv4 RoCE v2 entries " + strings.Join(v2, ", "))
			picks = append(picks, pick)
		}
		b.WriteString(". ")
		if low > 0 && sparse < 0 {
			sparse = low
		}
	}
	if sparse > 0 {
		b.WriteString("The table starts at index " + strconv.Itoa(sparse) + ", not 0: it is a container's view of the port, and pods sharing a NIC see different indices, so one NCCL_IB_GID_INDEX for all of them can name an entry some pods do not have (ibv_modify_qp then fails with \"No such device\"). ")
	}
	if !s.gidLinkLocalQP.Empty() {
		b.WriteString("NCCL's queue pairs used GID " + s.gidLinkLocalIdx + ", a link-local entry (its subnet prefix prints as 80FE). ")
	}
	if e, ok := s.Env("NCCL_IB_GID_INDEX"); ok {
		b.WriteString("The log sets NCCL_IB_GID_INDEX=" + e.Value + ". ")
	}
	if len(picks) > 0 {
		p := picks[0]
		same := true
		for _, q := range picks[1:] {
			same = same && q == p
		}
		if same {
			b.WriteString("Here: NCCL_IB_GID_INDEX=" + p + " on this host, the RoCE v2 entry with its IPv4 address.")
		} else {
			b.WriteString("Here the IPv4 RoCE v2 entry differs between devices (" + strings.Join(picks, ", ") + "), and NCCL_IB_GID_INDEX takes one value: leave it unset with NCCL 2.26 or later.")
		}
	}
	return strings.TrimSpace(b.String())
}
