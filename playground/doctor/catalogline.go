package doctor

import (
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/ascii"
	"github.com/distributed-nav/distributed-nav/playground/ncclmsg"
)

// MessageStats tallies the NCCL-formatted lines of a log against NCCL's
// message catalog (package ncclmsg): how many were tied to the call that
// printed them, how many only to a wording of an older release, and the
// lines no entry matches, which are listed, never dropped silently.
type MessageStats struct {
	NCCL    int      `json:"nccl_lines"`
	Matched int      `json:"matched"`
	Older   int      `json:"older_wording"`
	Unknown Evidence `json:"unknown"`
}

// catalogLine matches one NCCL line against the catalog.
func (p *parser) catalogLine(n int, o origin, lvl level, raw, msg string) {
	st := &p.s.Messages
	st.NCCL++
	p.s.LastNCCL = p.ref(n, raw)
	cat, err := ncclmsg.Default()
	if err != nil {
		p.note("NCCL's message catalog could not be read: " + err.Error())
		return
	}
	sev := severityWord(lvl, raw)
	m, ok := cat.MatchRelease(sev, msg, warnPlace(raw), p.catalogRelease(cat))
	if !ok {
		p.add(&st.Unknown, n, raw)
		return
	}
	st.Matched++
	if m.Entry.Release != ncclmsg.Pinned {
		st.Older++
	}
	p.catalogMatched(n, o, sev, raw, m)
}

// catalogRelease returns the scanned release of the version the log has
// printed so far (ncclmsg.Catalog.ReleaseFor), or "": lines after the
// banner are tied to that release's wording where two older ones match
// alike.
func (p *parser) catalogRelease(cat *ncclmsg.Catalog) string {
	v := p.s.Version()
	if v != p.catVersion {
		p.catVersion, p.catRelease = v, ""
		if v != "" {
			p.catRelease = cat.ReleaseFor(v)
		}
	}
	return p.catRelease
}

// catalogMatched records line n as printed by the call of m: the rules
// that list its format, the network cues and the watched fields see it,
// and the generic readings its family.
func (p *parser) catalogMatched(n int, o origin, sev, raw string, m ncclmsg.Match) {
	p.noteCatalogHit(n, o, sev, raw, m)
	for _, i := range rulesByFormat()[m.Entry.Format] {
		p.hitRule(&lineRules[i], n, raw)
	}
	for _, i := range netCuesByFormat()[m.Entry.Format] {
		p.addNetCue(i, n, raw)
	}
	p.noteFields(o, m)
}

// watchedFields are the labelled conversions of NCCL's messages whose
// values the diagnoses compare across the log, whatever message printed
// them: "mtu" is the IB MTU enum of each queue pair NCCL connects
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/transport/net_ib/connect.cc#L957-L972).
var watchedFields = map[string]bool{"mtu": true}

// noteFields records the values of watched fields of a matched line.
func (p *parser) noteFields(o origin, m ncclmsg.Match) {
	convs := m.Entry.Conversions()
	for i, c := range convs {
		if !watchedFields[c.Label] || i >= len(m.Fields) {
			continue
		}
		if p.s.facts == nil {
			p.s.facts = map[string]map[string]map[string]bool{}
		}
		byVal := p.s.facts[c.Label]
		if byVal == nil {
			byVal = map[string]map[string]bool{}
			p.s.facts[c.Label] = byVal
		}
		v := m.Fields[i].Value
		if byVal[v] == nil {
			if len(byVal) >= maxFactValues {
				continue
			}
			byVal[v] = map[string]bool{}
		}
		if len(byVal[v]) < p.opts.MaxItems {
			byVal[v][o.Host] = true
		}
	}
}

// severityWord names a line's level as the catalog does.
func severityWord(lvl level, raw string) string {
	switch lvl {
	case levelInfo:
		return "INFO"
	case levelWarn:
		return "WARN"
	case levelTrace:
		if strings.Contains(raw, "NCCL CALL ") {
			return "CALL"
		}
		return "TRACE"
	case levelVersion:
		return "VERSION"
	}
	return ""
}

// warnPlace returns the "file:line" a WARN line names before "NCCL WARN"
// ("init.cc:1043" or "transport/net_ib.cc:1234"), or "".
func warnPlace(raw string) string {
	i := strings.Index(raw, " NCCL WARN")
	if i < 0 {
		return ""
	}
	f := strings.Fields(raw[:i])
	for j := len(f) - 1; j >= 0 && j >= len(f)-3; j-- {
		file, line, ok := strings.Cut(f[j], ":")
		if ok && ascii.Digits(line) && strings.ContainsAny(file, ".") && !strings.Contains(file, "[") {
			if k := strings.Index(file, "/src/"); k >= 0 {
				file = file[k+len("/src/"):]
			}
			return file + ":" + line
		}
	}
	return ""
}
