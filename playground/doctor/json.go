package doctor

import (
	"sort"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/distributed-nav/distributed-nav/playground/jsonw"
)

// This file writes the doctor's answer as JSON by hand, without reflection
// or encoding/json, so that the wasm playground can print the same bytes as
// `ncclsim doctor --json` without linking either. The output is exactly
// what encoding/json's Marshal writes for the same value: members in
// struct-field order under their json tag names, "omitempty" members left
// out when empty, nil slices and maps as null, map keys sorted, strings
// escaped as Marshal escapes them (including <, > and &), and floats in
// Marshal's notation. TestAppendJSONMatchesEncodingJSON and FuzzDoctorJSON
// hold the two encoders together; the test fills every exported field by
// reflection, so a field added to a type below without being added here
// fails it.
//
// The writer's methods are marked go:noinline: inlined into the long
// member lists below they made the wasm binary about 50 KB larger (8 KB
// gzip).

// AppendJSON appends r as compact JSON to b and returns the extended slice.
// The bytes equal encoding/json's Marshal of r. The one difference is a NaN
// or infinite float, which Marshal refuses and AppendJSON writes as null;
// ParseLog never stores one (see finiteFloat).
func (r *Report) AppendJSON(b []byte) []byte {
	w := &jsonWriter{b: append(b, '{')} // no comma: b's end is the caller's
	if r.Summary != nil {
		w.key("summary")
		r.Summary.writeJSON(w)
	}
	w.key("diagnoses")
	writeArray(w, r.Diagnoses, (*Diagnosis).writeJSON)
	writeList(w, "env_findings", r.EnvFindings, (*Finding).writeJSON)
	w.close('}')
	return w.b
}

// jsonWriter appends JSON text to b. Member methods take the member's name,
// a json tag of the types below: plain ASCII that needs no escaping. Names
// starting with "opt" leave the member out when it is empty ("omitempty").
type jsonWriter struct {
	b []byte
}

// sep writes the comma before an array element or object member unless it
// is the first one or a member's value: unless the last byte is '[', '{'
// or ':' (a finished value never ends in one of them).
//
//go:noinline
func (w *jsonWriter) sep() {
	if n := len(w.b); n > 0 && w.b[n-1] != '[' && w.b[n-1] != '{' && w.b[n-1] != ':' {
		w.b = append(w.b, ',')
	}
}

// open starts an object ('{') or array ('[') value.
//
//go:noinline
func (w *jsonWriter) open(c byte) {
	w.sep()
	w.b = append(w.b, c)
}

// close ends an object ('}') or array (']').
//
//go:noinline
func (w *jsonWriter) close(c byte) { w.b = append(w.b, c) }

// key starts an object member; the next value written is its value.
//
//go:noinline
func (w *jsonWriter) key(name string) {
	w.sep()
	w.b = append(w.b, '"')
	w.b = append(w.b, name...)
	w.b = append(w.b, '"', ':')
}

//go:noinline
func (w *jsonWriter) null() { w.b = append(w.b, "null"...) }

//go:noinline
func (w *jsonWriter) int(name string, v int) {
	w.key(name)
	w.b = strconv.AppendInt(w.b, int64(v), 10)
}

//go:noinline
func (w *jsonWriter) int64(name string, v int64) {
	w.key(name)
	w.b = strconv.AppendInt(w.b, v, 10)
}

//go:noinline
func (w *jsonWriter) str(name, v string) {
	w.key(name)
	w.b = jsonw.AppendString(w.b, v)
}

//go:noinline
func (w *jsonWriter) optStr(name, v string) {
	if v != "" {
		w.str(name, v)
	}
}

//go:noinline
func (w *jsonWriter) float(name string, v float64) {
	w.key(name)
	w.b = jsonw.AppendFloat(w.b, v, 64)
}

//go:noinline
func (w *jsonWriter) bool(name string, v bool) {
	w.key(name)
	if v {
		w.b = append(w.b, "true"...)
	} else {
		w.b = append(w.b, "false"...)
	}
}

// ints writes a member holding a list of ints (null when nil).
//
//go:noinline
func (w *jsonWriter) ints(name string, list []int) {
	w.key(name)
	if list == nil {
		w.null()
		return
	}
	w.open('[')
	for _, v := range list {
		w.sep()
		w.b = strconv.AppendInt(w.b, int64(v), 10)
	}
	w.close(']')
}

//go:noinline
func (w *jsonWriter) optInts(name string, list []int) {
	if len(list) > 0 {
		w.ints(name, list)
	}
}

// strs writes a member holding a list of strings (null when nil).
//
//go:noinline
func (w *jsonWriter) strs(name string, list []string) {
	w.key(name)
	if list == nil {
		w.null()
		return
	}
	w.open('[')
	for _, s := range list {
		w.sep()
		w.b = jsonw.AppendString(w.b, s)
	}
	w.close(']')
}

//go:noinline
func (w *jsonWriter) optStrs(name string, list []string) {
	if len(list) > 0 {
		w.strs(name, list)
	}
}

// lineRef writes a LineRef member.
//
//go:noinline
func (w *jsonWriter) lineRef(name string, l *LineRef) {
	w.key(name)
	l.writeJSON(w)
}

// evidence writes an Evidence member (never omitted).
//
//go:noinline
func (w *jsonWriter) evidence(name string, e *Evidence) {
	w.key(name)
	w.open('{')
	w.int("count", e.Count)
	writeList(w, "lines", e.Lines, (*LineRef).writeJSON)
	w.close('}')
}

// optErrorHandling writes an omitempty *ErrorHandling member.
//
//go:noinline
func (w *jsonWriter) optErrorHandling(name string, h *ErrorHandling) {
	if h == nil {
		return
	}
	w.key(name)
	w.open('{')
	w.int("mode", h.Mode)
	w.lineRef("line", &h.Line)
	w.close('}')
}

// writeArray writes list as an array value, each element by elem; a nil
// slice is null, as encoding/json writes it.
func writeArray[T any](w *jsonWriter, list []T, elem func(*T, *jsonWriter)) {
	if list == nil {
		w.null()
		return
	}
	w.open('[')
	for i := range list {
		elem(&list[i], w)
	}
	w.close(']')
}

// writeList writes an omitempty member holding list: nothing when the
// list is empty or nil.
func writeList[T any](w *jsonWriter, name string, list []T, elem func(*T, *jsonWriter)) {
	if len(list) > 0 {
		w.key(name)
		writeArray(w, list, elem)
	}
}

func (l *LineRef) writeJSON(w *jsonWriter) {
	w.open('{')
	w.int("line", l.Line)
	w.str("text", l.Text)
	w.close('}')
}

func (l *Link) writeJSON(w *jsonWriter) {
	w.open('{')
	w.str("title", l.Title)
	w.str("url", l.URL)
	w.close('}')
}

// appendJSON writes the severity's name as a JSON string; MarshalJSON and
// AppendJSON both use it.
func (s Severity) appendJSON(b []byte) []byte {
	return jsonw.AppendString(b, s.String())
}

func (d *Diagnosis) writeJSON(w *jsonWriter) {
	w.open('{')
	w.str("id", d.ID)
	w.key("severity")
	w.b = d.Severity.appendJSON(w.b)
	w.str("title", d.Title)
	w.str("explanation", d.Explanation)
	w.key("evidence")
	writeArray(w, d.Evidence, (*LineRef).writeJSON)
	w.key("links")
	writeArray(w, d.Links, (*Link).writeJSON)
	w.close('}')
}

func (f *Finding) writeJSON(w *jsonWriter) {
	w.open('{')
	w.int("line", f.Line)
	w.str("text", f.Text)
	w.optStr("name", f.Name)
	w.optStr("value", f.Value)
	w.str("id", f.ID)
	w.key("severity")
	w.b = f.Severity.appendJSON(w.b)
	w.str("message", f.Message)
	w.optStrs("suggestions", f.Suggestions)
	w.key("links")
	writeArray(w, f.Links, (*Link).writeJSON)
	w.close('}')
}

func (s *Summary) writeJSON(w *jsonWriter) {
	w.open('{')
	w.int("lines", s.Lines)
	w.int64("bytes", s.Bytes)
	writeList(w, "versions", s.Versions, (*VersionSeen).writeJSON)
	w.optStr("cuda_driver", s.CUDADriver)
	w.int("nranks", s.NRanks)
	w.int("nnodes", s.NNodes)
	w.int("local_ranks", s.LocalRanks)
	w.optStrs("hosts", s.Hosts)
	writeList(w, "ranks", s.Ranks, (*Rank).writeJSON)
	w.optInts("comm_sizes", s.NRankSizes)
	w.optStr("network", s.Network)
	w.optStrs("net_devices", s.NetDevices)
	w.evidence("ib_no_device", &s.IBNoDevice)
	w.evidence("net_socket", &s.NetSocket)
	writeList(w, "rings", s.Rings, (*Ring).writeJSON)
	writeList(w, "trees", s.Trees, (*TreeLink).writeJSON)
	writeList(w, "connections", s.Connections, (*Connection).writeJSON)
	w.int("total_connections", s.TotalConnections)
	writeList(w, "transports", s.Transports, (*TransportCount).writeJSON)
	writeList(w, "pairs", s.Pairs, (*Pair).writeJSON)
	writeList(w, "channels", s.Channels, (*ChannelCounts).writeJSON)
	w.evidence("nvls_supported", &s.NVLSSupported)
	w.evidence("nvls_unsupported", &s.NVLSUnsupported)
	w.evidence("nvls_comms", &s.NVLSComms)
	w.evidence("collnet", &s.CollNet)
	w.evidence("collnet_disabled", &s.CollNetDisabled)
	writeList(w, "graphs", s.Graphs, (*GraphLine).writeJSON)
	writeList(w, "paths", s.Paths, (*PathLine).writeJSON)
	if s.Tuning != nil {
		w.key("tuning")
		s.Tuning.writeJSON(w)
	}
	writeList(w, "algo_choices", s.AlgoChoices, (*AlgoChoice).writeJSON)
	writeList(w, "env", s.EnvSettings, (*EnvSetting).writeJSON)
	w.evidence("warnings", &s.Warnings)
	w.evidence("p2p_disabled", &s.P2PDisabled)
	w.evidence("version_mismatch", &s.VersionMismatch)
	w.evidence("peer_lost", &s.PeerLost)
	w.evidence("shm_failure", &s.ShmFailure)
	w.evidence("nccl_errors", &s.NCCLErrors)
	writeList(w, "timeouts", s.Timeouts, (*Timeout).writeJSON)
	w.evidence("timeout_lines", &s.TimeoutLines)
	w.evidence("watchdog_exceptions", &s.WatchdogEx)
	w.evidence("teardown", &s.TearDown)
	w.evidence("heartbeat", &s.Heartbeat)
	w.evidence("watchdog_stuck", &s.WatchdogStuck)
	w.evidence("flight_recorder_off", &s.FlightRecorder)
	w.evidence("deprecated_torch_env", &s.DeprecatedTorch)
	w.optErrorHandling("error_handling", s.ErrorHandling)
	w.optErrorHandling("blocking_wait", s.BlockingWait)
	w.optErrorHandling("monitoring", s.MonitoringOn)
	w.bool("connected_rings", s.ConnectedRings)
	w.bool("connected_trees", s.ConnectedTrees)
	w.int("init_complete", s.InitComplete)
	w.optStrs("parser_notes", s.Notes)
	w.int("binary_lines", s.BinaryLines)
	w.int("truncated_lines", s.TruncatedLines)
	w.int("invalid_utf8_lines", s.InvalidUTF8Lines)
	w.close('}')
}

func (v *VersionSeen) writeJSON(w *jsonWriter) {
	w.open('{')
	w.str("version", v.Version)
	w.optStr("cuda", v.CUDA)
	w.optStrs("hosts", v.Hosts)
	w.lineRef("first", &v.Line)
	w.close('}')
}

func (r *Rank) writeJSON(w *jsonWriter) {
	w.open('{')
	w.int("rank", r.Rank)
	w.int("nranks", r.NRanks)
	w.optStr("host", r.Host)
	w.int("cuda_dev", r.CUDADev)
	w.int("nvml_dev", r.NVMLDev)
	w.optStr("bus_id", r.BusID)
	w.optStr("comm_id", r.CommID)
	w.int("line", r.Line)
	w.close('}')
}

func (r *Ring) writeJSON(w *jsonWriter) {
	w.open('{')
	w.int("channel", r.Channel)
	w.int("of", r.Of)
	w.ints("ranks", r.Ranks)
	w.int("line", r.Line)
	w.close('}')
}

func (t *TreeLink) writeJSON(w *jsonWriter) {
	w.open('{')
	w.int("channel", t.Channel)
	w.int("up", t.Up)
	w.ints("down", t.Down)
	w.int("rank", t.Rank)
	w.int("line", t.Line)
	w.close('}')
}

func (c *Connection) writeJSON(w *jsonWriter) {
	w.open('{')
	w.int("channel", c.Channel)
	w.int("from", c.From)
	w.int("to", c.To)
	w.optStr("from_dev", c.FromDev)
	w.optStr("to_dev", c.ToDev)
	w.str("transport", c.Transport)
	w.str("via", c.Via)
	w.optStr("dir", c.Dir)
	w.optStr("host", c.Host)
	w.int("line", c.Line)
	w.close('}')
}

func (t *TransportCount) writeJSON(w *jsonWriter) {
	w.open('{')
	w.str("kind", t.Kind)
	w.int("count", t.Count)
	w.lineRef("first", &t.First)
	w.close('}')
}

func (p *Pair) writeJSON(w *jsonWriter) {
	w.open('{')
	w.int("from", p.From)
	w.int("to", p.To)
	w.str("kind", p.Kind)
	w.close('}')
}

func (c *ChannelCounts) writeJSON(w *jsonWriter) {
	w.open('{')
	w.int("coll", c.Coll)
	w.int("collnet", c.CollNet)
	w.int("nvls", c.NVLS)
	w.int("p2p", c.P2P)
	w.int("p2p_per_peer", c.P2PPerPeer)
	w.lineRef("line", &c.Line)
	w.close('}')
}

func (g *GraphLine) writeJSON(w *jsonWriter) {
	w.open('{')
	w.int("pattern", g.Pattern)
	w.int("cross_nic", g.CrossNic)
	w.int("n_channels", g.NChannels)
	w.float("bw_intra", g.BwIntra)
	w.float("bw_inter", g.BwInter)
	w.str("type_intra", g.TypeIntra)
	w.str("type_inter", g.TypeInter)
	w.lineRef("line", &g.Line)
	w.close('}')
}

func (p *PathLine) writeJSON(w *jsonWriter) {
	w.open('{')
	w.str("from", p.From)
	w.str("to", p.To)
	w.int("hops", p.Hops)
	w.float("bw", p.Bw)
	w.str("type", p.Type)
	w.int("line", p.Line)
	w.close('}')
}

func (c *TuningCell) writeJSON(w *jsonWriter) {
	w.open('{')
	w.str("func", c.Func)
	w.str("algorithm", c.Algorithm)
	w.str("protocol", c.Protocol)
	w.float("latency_us", c.LatencyUs)
	w.float("bw_gbps", c.BwGBps)
	w.close('}')
}

func (t *Tuning) writeJSON(w *jsonWriter) {
	w.open('{')
	w.strs("algorithms", t.Algorithms)
	w.strs("protocols", t.Protocols)
	if len(t.MaxThreads) > 0 {
		// encoding/json writes map members sorted by key; a key is any
		// string, so it is escaped like a value.
		names := make([]string, 0, len(t.MaxThreads))
		for name := range t.MaxThreads {
			names = append(names, name)
		}
		sort.Strings(names)
		w.key("max_threads")
		w.open('{')
		for _, name := range names {
			w.sep()
			w.b = append(jsonw.AppendString(w.b, name), ':')
			list := t.MaxThreads[name]
			if list == nil {
				w.null()
				continue
			}
			w.open('[')
			for _, v := range list {
				w.sep()
				w.b = strconv.AppendInt(w.b, int64(v), 10)
			}
			w.close(']')
		}
		w.close('}')
	}
	w.key("cells")
	writeArray(w, t.Cells, (*TuningCell).writeJSON)
	w.int("line", t.Line)
	w.int("tables", t.Tables)
	w.close('}')
}

func (c *AlgoChoice) writeJSON(w *jsonWriter) {
	w.open('{')
	w.optStr("func", c.Func)
	w.int64("bytes", c.Bytes)
	w.str("algorithm", c.Algorithm)
	w.str("protocol", c.Protocol)
	if c.TimeUs != 0 { // omitempty: encoding/json leaves out 0 and -0
		w.float("time_us", c.TimeUs)
	}
	w.int("line", c.Line)
	w.close('}')
}

func (e *EnvSetting) writeJSON(w *jsonWriter) {
	w.open('{')
	w.str("name", e.Name)
	w.str("value", e.Value)
	w.lineRef("line", &e.Line)
	w.close('}')
}

func (t *Timeout) writeJSON(w *jsonWriter) {
	w.open('{')
	w.int("rank", t.Rank)
	w.optStr("pg", t.PG)
	w.int64("seq", t.SeqNum)
	w.str("op", t.OpType)
	w.int64("timeout_ms", t.TimeoutMs)
	w.int64("ran_for_ms", t.RanForMs)
	w.int("line", t.Line)
	w.close('}')
}

// decodeJSONString reads one JSON string value, with optional white space
// around it, as encoding/json's Unmarshal into a string does: the escapes
// \" \\ \/ \b \f \n \r \t and \uXXXX (a valid surrogate pair is one rune,
// any other surrogate U+FFFD), invalid UTF-8 bytes read as U+FFFD, and an
// unescaped control character, a bad escape or anything after the closing
// quote is an error (ok false). The literal null reads as "", as Unmarshal
// leaves a string unchanged for it.
func decodeJSONString(b []byte) (s string, ok bool) {
	b = trimJSONSpace(b)
	if string(b) == "null" {
		return "", true
	}
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return "", false
	}
	b = b[1 : len(b)-1]
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '"' || c < 0x20:
			return "", false
		case c == '\\':
			if i+1 >= len(b) {
				return "", false
			}
			e := b[i+1]
			i += 2
			switch e {
			case '"', '\\', '/':
				out = append(out, e)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r, ok := hex4(b[i:])
				if !ok {
					return "", false
				}
				i += 4
				if utf16.IsSurrogate(r) {
					pair := utf8.RuneError
					if i+1 < len(b) && b[i] == '\\' && b[i+1] == 'u' {
						if r2, ok := hex4(b[i+2:]); ok {
							if pair = utf16.DecodeRune(r, r2); pair != utf8.RuneError {
								i += 6
							}
						}
					}
					r = pair
				}
				out = utf8.AppendRune(out, r)
			default:
				return "", false
			}
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			out = utf8.AppendRune(out, r) // RuneError for an invalid byte
			i += size
		}
	}
	return string(out), true
}

// hex4 reads the four hex digits of a \u escape.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// trimJSONSpace drops the white space JSON allows around a value.
func trimJSONSpace(b []byte) []byte {
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}
