package doctor

import (
	"io"
	"strconv"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/controls"
	"github.com/distributed-nav/distributed-nav/playground/ncclmsg"
)

// LineExplanation ties one log line to the NCCL call that printed it: what
// `ncclsim doctor --explain LINE` prints and the doctor page shows for a
// clicked line.
type LineExplanation struct {
	// Text is the line as read, control sequences removed.
	Text string `json:"text"`
	// Level is INFO, WARN, TRACE, CALL or VERSION; empty for a line
	// without NCCL's prefix (its message is then tried as INFO and WARN).
	Level string `json:"level,omitempty"`
	// Known is false when no catalog entry matches: the line is unknown.
	Known bool `json:"known"`
	// Partial: the line ends before the format does (cut when pasted).
	Partial   bool   `json:"partial,omitempty"`
	Release   string `json:"release,omitempty"`
	Releases  string `json:"releases,omitempty"`
	File      string `json:"file,omitempty"`
	Line      int    `json:"line,omitempty"`
	EndLine   int    `json:"end_line,omitempty"`
	Permalink string `json:"permalink,omitempty"`
	Subsystem string `json:"subsystem,omitempty"`
	Format    string `json:"format,omitempty"`
	// Fields are the values of the format's conversions with what each
	// means; Notes say what the numbers tell.
	Fields []ExplainedField `json:"fields,omitempty"`
	Notes  []string         `json:"notes,omitempty"`
}

// ExplainedField is one conversion of a matched line.
type ExplainedField struct {
	Spec    string `json:"spec"`
	Label   string `json:"label,omitempty"`
	Value   string `json:"value"`
	Meaning string `json:"meaning,omitempty"`
}

// maxExplainBytes bounds the line ExplainLine reads.
const maxExplainBytes = 8 << 10

// ExplainLine explains one line of a log. version is the NCCL version the
// log printed ("2.21.5"), or "" when unknown: it decides how numbers whose
// meaning changed between releases (path types) are read, and which of two
// older wordings that match alike the line is tied to.
func ExplainLine(text, version string) LineExplanation {
	if len(text) > maxExplainBytes {
		text = text[:maxExplainBytes]
	}
	clean, _ := controls.Strip([]byte(strings.TrimRight(text, "\r\n")))
	text = clip(string(clean), maxExplainBytes)
	out := LineExplanation{Text: text}
	cat, err := ncclmsg.Default()
	if err != nil {
		out.Notes = append(out.Notes, "NCCL's message catalog could not be read: "+err.Error())
		return out
	}
	_, lvl, msg := splitNCCL(text)
	release := ""
	if version != "" {
		release = cat.ReleaseFor(version)
	}
	var m ncclmsg.Match
	ok := false
	if lvl != levelNone {
		out.Level = severityWord(lvl, text)
		if lvl == levelVersion {
			msg = strings.TrimSpace(text[strings.Index(text, "NCCL version"):])
		}
		m, ok = cat.MatchRelease(out.Level, msg, warnPlace(text), release)
	} else {
		msg = strings.TrimSpace(text)
		if i := strings.Index(msg, "]:"); i >= 0 && i < 24 && strings.HasPrefix(msg, "[") {
			msg = strings.TrimSpace(msg[i+2:]) // a launcher tag such as "[rank3]:"
		}
		// A Python exception's name ("RuntimeError: ") before the message.
		if before, after, cut := strings.Cut(msg, "Error: "); cut && !strings.Contains(before, " ") {
			msg = after
		}
		for _, sev := range []string{"WARN", "INFO"} {
			if m, ok = cat.MatchRelease(sev, msg, "", release); ok {
				break
			}
		}
	}
	if !ok {
		return out
	}
	e := m.Entry
	out.Known, out.Partial = true, m.Partial
	out.Release, out.Releases, out.File, out.Line, out.EndLine = e.Release, e.Releases, e.File, e.Line, e.EndLine
	out.Permalink, out.Subsystem, out.Format = e.Permalink(), e.Subsystem, e.Format
	if lvl == levelNone {
		out.Level = e.Severity
	}
	convs := e.Conversions()
	for i, f := range m.Fields {
		ef := ExplainedField{Spec: f.Spec, Value: clip(f.Value, 400)}
		if i < len(convs) {
			ef.Label = convs[i].Label
		}
		out.Fields = append(out.Fields, ef)
	}
	interpret(&out, cat, version)
	if e.Releases != "" {
		out.Notes = append(out.Notes, "This wording comes from NCCL "+e.Releases+"; "+ncclmsg.Pinned+" no longer prints it.")
	}
	if m.Partial {
		out.Notes = append(out.Notes, "The line ends before the message does (it was cut where it was copied); the fields read so far are shown.")
	}
	return out
}

// interpret adds what the numbers of a matched line tell.
func interpret(x *LineExplanation, cat *ncclmsg.Catalog, version string) {
	completion := strings.Contains(x.Format, "completion")
	for i := range x.Fields {
		f := &x.Fields[i]
		v, err := strconv.Atoi(f.Value)
		label := strings.ToLower(f.Label)
		switch {
		case completion && err == nil && (label == "status" || strings.HasSuffix(label, "error")):
			f.Meaning = cat.WCStatus[v]
			if m, ok := wcMeaning[v]; ok {
				x.Notes = append(x.Notes, "Status "+f.Value+" ("+cat.WCStatus[v]+"): "+m+".")
			}
		case completion && err == nil && label == "opcode":
			f.Meaning = cat.WCOpcode[v]
			if f.Meaning == "" && v > 255 {
				f.Meaning = "not an opcode: NCCL prints the opcode field of a failed completion, which the NIC leaves undefined"
			}
		case err == nil && (label == "vendor err" || label == "vendor_err"):
			f.Meaning = "the NIC's own syndrome, 0x" + strconv.FormatInt(int64(v), 16)
			if v == 129 {
				f.Meaning += " (mlx5: transport retry counter exceeded, with status 12)"
			}
		case err == nil && label == "distance":
			f.Meaning = pathName(cat, version, v)
		case err == nil && x.Format == "%s:%d -> %d" && i == 2:
			if r, ok := cat.Result(v); ok {
				f.Meaning = r.Name + ": " + r.Text
				x.Notes = append(x.Notes, "A \"file:line -> N\" line traces an error back up NCCL's call stack; the first WARN before it says what failed.")
			}
		case err == nil && label == "version" && strings.Contains(x.Format, "Mismatched NCCL version"):
			f.Meaning = "NCCL " + decodeVersionCode(v)
		}
	}
	// "(distance %d > %d)": the second number is the limit.
	if strings.Contains(x.Format, "distance %d > %d") && len(x.Fields) >= 2 {
		last := &x.Fields[len(x.Fields)-1]
		if v, err := strconv.Atoi(last.Value); err == nil {
			last.Meaning = pathName(cat, version, v) + " (the GDR level in force)"
			x.Notes = append(x.Notes, "GPUDirect RDMA needs the GPU-NIC path to be no longer than NCCL_NET_GDR_LEVEL (default PXB, a shared PCIe switch); the path types were renumbered in 2.8 (NVB), 2.12 (PXN), 2.26 (C2C) and 2.27 (P2C), so the same number names different paths in different releases.")
		}
	}
}

// pathName names path type v for the log's release, or by release when
// the version is unknown.
func pathName(cat *ncclmsg.Catalog, version string, v int) string {
	if version != "" {
		if rel := cat.ReleaseFor(version); rel != "" && cat.PathName(rel, v) != "" {
			return cat.PathName(rel, v) + " in NCCL " + version
		}
	}
	return namings(cat, v)
}

// WriteExplanation prints an explanation for a terminal.
func WriteExplanation(w io.Writer, x LineExplanation) error {
	ew := &errWriter{w: w}
	line := func(parts ...string) {
		for _, p := range parts {
			io.WriteString(ew, p)
		}
		io.WriteString(ew, "\n")
	}
	line("Line: ", x.Text)
	if !x.Known {
		line("Unknown: no NCCL ", ncclmsg.Pinned, " or ", ncclmsg.OlderSpan, " log call prints this message (it may come from a network plugin, PyTorch or the application).")
		return ew.err
	}
	line("Printed by: ", x.File, ":", strconv.Itoa(x.Line), " (", x.Level, ", subsystem ", x.Subsystem, ") at ", x.Release)
	line("Source: ", x.Permalink)
	line("Format: ", strconv.Quote(x.Format))
	for _, f := range x.Fields {
		name := f.Label
		if name == "" {
			name = f.Spec
		}
		s := "  " + name + " = " + f.Value
		if f.Meaning != "" {
			s += ": " + f.Meaning
		}
		line(s)
	}
	for _, n := range x.Notes {
		line("Note: ", n)
	}
	return ew.err
}
