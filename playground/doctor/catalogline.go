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
func (p *parser) catalogLine(n int, lvl level, raw, msg string) {
	st := &p.s.Messages
	st.NCCL++
	p.s.LastNCCL = p.ref(n, raw)
	cat, err := ncclmsg.Default()
	if err != nil {
		p.note("NCCL's message catalog could not be read: " + err.Error())
		return
	}
	m, ok := cat.Match(severityWord(lvl, raw), msg, warnPlace(raw))
	if !ok {
		p.add(&st.Unknown, n, raw)
		return
	}
	st.Matched++
	if m.Entry.Release != ncclmsg.Pinned {
		st.Older++
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
