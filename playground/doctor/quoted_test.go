package doctor

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
	"github.com/distributed-nav/distributed-nav/playground/ncclmsg"
)

// The wrappers below quote an NCCL message the way its callers print it.
// PyTorch's DistBackendError text is "NCCL error in: FILE:LINE, " +
// ncclGetErrorString + ", NCCL version X" + "\n" + the class's sentence +
// "\nLast error:\n" + ncclGetLastError (c10d's getNcclErrorDetailStr in
// torch/csrc/distributed/c10d/NCCLUtils.cpp, v2.6.0); nccl-tests prints
// "%s: Test NCCL failure %s:%d '%s / %s'" with ncclGetErrorString and
// ncclGetLastError (its NCCLCHECK in src/common.h).
const (
	torchHead = "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3356, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5"
	torchKind = "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. "
)

// quoteWays wraps an NCCL WARN message (several lines when its format has
// them) the ways logs show it re-raised.
var quoteWays = []struct {
	name string
	wrap func(msg string) string
}{
	{"torchrun lines", func(msg string) string {
		// torchrun puts "[rankN]: " before every line of the traceback.
		text := torchHead + "\n" + torchKind + "\nLast error:\n" + msg
		return "[rank1]: " + strings.ReplaceAll(text, "\n", "\n[rank1]: ") + "\n"
	}},
	{"plain lines", func(msg string) string {
		return torchHead + "\n" + torchKind + "\nLast error:\n" + msg + "\n"
	}},
	{"one joined line", func(msg string) string {
		first, _, _ := strings.Cut(msg, "\n")
		return "RuntimeError: " + torchHead + " " + torchKind + " Last error: " + first + "\n"
	}},
	{"title with the level word", func(msg string) string {
		// An issue title or chat paste: NCCL's level word kept, the rest of
		// the prefix (and the lines after the first) dropped.
		first, _, _ := strings.Cut(msg, "\n")
		return "nccl connection abort(between pods): WARN " + first + "\n"
	}},
	{"python repr", func(msg string) string {
		return "ray.exceptions.RayTaskError(DistBackendError): " + pyRepr(torchHead+"\n"+torchKind+"\nLast error:\n"+msg) + "\n"
	}},
	{"json field", func(msg string) string {
		// As Python's json.dumps writes it: < > & as they are (Go's
		// encoder would write \u003c, which the doctor does not undo).
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(map[string]string{"error": torchHead + "\n" + torchKind + "\nLast error:\n" + msg}); err != nil {
			panic(err)
		}
		return b.String()
	}},
	{"nccl-tests", func(msg string) string {
		return "node1: Test NCCL failure common.cu:1279 'unhandled system error (run with NCCL_DEBUG=INFO for details) / " + msg + "'\n"
	}},
}

// pyRepr writes s as Python's repr of a str does for ASCII text: single
// quotes unless s holds a single quote and no double quote, backslash,
// newline and tab escaped, the chosen quote escaped.
func pyRepr(s string) string {
	q := byte('\'')
	if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case q:
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte(q)
	return b.String()
}

// readIDs returns the diagnosis IDs of a log, without the two that depend
// on the log's form rather than on a message: nccl-warn (which lists
// NCCL's own WARN lines) and the environment checks.
func readIDs(t *testing.T, log string) ([]string, *Summary) {
	t.Helper()
	s := parseString(t, log)
	var out []string
	for _, d := range Diagnose(s, ncclenv.Env{}) {
		if d.ID != "nccl-warn" && !strings.HasPrefix(d.ID, "env-") {
			out = append(out, d.ID)
		}
	}
	slices.Sort(out)
	return out, s
}

// TestQuotedWarnReadAsBare prints every WARN call of the catalog (the
// pinned release and the older wordings) with sample values, once as NCCL
// logs it and once per way a caller quotes it, and requires the quotation
// to be tied to the same catalog entry and to get the diagnoses of the
// bare line logged beside the same wrapper quoting a text NCCL never
// prints (which adds nccl-error for PyTorch's text and nccl-tests' line).
func TestQuotedWarnReadAsBare(t *testing.T) {
	cat, err := ncclmsg.Default()
	if err != nil {
		t.Fatal(err)
	}
	const neutral = "a message no NCCL release prints"
	tried, same := 0, 0
	for _, e := range cat.Entries {
		if e.Severity != "WARN" || e.Format == "-" {
			continue
		}
		msg := fillFormat(e.Format)
		bare := "h:1:2 [0] " + strings.TrimPrefix(e.File, "src/") + ":" + strconv.Itoa(e.Line) + " NCCL WARN " + msg + "\n"
		_, bs := readIDs(t, bare)
		if bs.Messages.Matched != 1 || len(bs.catalogHits) != 1 || bs.catalogHits[0].entry.Format != e.Format {
			continue // the sample values do not fit this format's matcher
		}
		tried++
		for _, w := range quoteWays {
			log := w.wrap(msg)
			got, ws := readIDs(t, log)
			want, _ := readIDs(t, bare+w.wrap(neutral))
			var hit *ncclmsg.Entry
			for _, h := range ws.catalogHits {
				hit = h.entry
			}
			where := e.File + ":" + strconv.Itoa(e.Line) + " " + strconv.Quote(e.Format) + " " + w.name
			switch {
			case hit == nil:
				t.Errorf("%s: the quotation is tied to no entry\n%s", where, log)
				continue
			case hit == bs.catalogHits[0].entry:
				same++
			case !prints(cat, hit, msg):
				t.Errorf("%s: tied to %s:%d %q", where, hit.File, hit.Line, hit.Format)
				continue
			default:
				// Another call that prints the same text: without the
				// file the WARN line names, either is right, and the
				// generic reading may be the other call's family.
				got, want = dropGeneric(got), dropGeneric(want)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s: diagnoses %v, want %v\n%s", where, got, want, log)
			}
		}
	}
	if tried < 600 {
		t.Fatalf("%d WARN formats tried: want most of the catalog's", tried)
	}
	t.Logf("%d WARN formats tried in %d ways; %d quotations tied to the very call of the bare line", tried, len(quoteWays), same)
}

// prints reports whether the call e prints msg: the catalog ties msg to e
// when told the file and line of e, as a WARN line names them. Calls whose
// formats differ only in conversions ("%d" and "%lx" both print 7) or in a
// trailing newline print the same text.
func prints(cat *ncclmsg.Catalog, e *ncclmsg.Entry, msg string) bool {
	m, ok := cat.Match("WARN", msg, strings.TrimPrefix(e.File, "src/")+":"+strconv.Itoa(e.Line))
	return ok && m.Entry == e && !m.Partial
}

// dropGeneric removes the generic readings from a list of IDs.
func dropGeneric(ids []string) []string {
	return slices.DeleteFunc(slices.Clone(ids), isGeneric)
}

// TestQuotedForms reads quotations published logs show, with what each
// must give: the rule the quoted NCCL text implies, or nothing where the
// text after "Last error:" is not NCCL's.
func TestQuotedForms(t *testing.T) {
	for _, tc := range []struct {
		name, log string
		want      string // a diagnosis ID, "" for none besides the wrapper's
	}{
		{"torchrun, interleaved ranks", "[rank0]: Last error:\n[rank1]: Last error:\n[rank1]: Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1a000\n[rank0]: Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 1a000\n", "duplicate-gpu"},
		{"text too late", "[rank0]: Last error:\n" + strings.Repeat("[rank1]: x\n", lastErrorReach) + "[rank0]: gdr_pin_buffer(addr 7f00, size 65536) failed: -22\n", ""},
		{"text in time", "[rank0]: Last error:\n" + strings.Repeat("[rank1]: x\n", lastErrorReach-2) + "[rank0]: gdr_pin_buffer(addr 7f00, size 65536) failed: -22\n", "generic-memory"},
		{"time stamp moved on", "2024-05-01 10:00:01 [rank0]: Last error:\n2024-05-01 10:00:02 [rank0]: gdr_pin_buffer(addr 7f00, size 65536) failed: -22\n", "generic-memory"},
		{"srun tags of two ranks", "2: Last error:\n3: Traceback (most recent call last):\n3: gdr_pin_buffer(addr 7f00, size 65536) failed: -22\n", "generic-memory"},
		{"another prefix", "[stderr] Last error:\n[stdout] gdr_pin_buffer(addr 7f00, size 65536) failed: -22\n", ""},
		{"unknown error", "ncclInternalError: Internal check failed.\nLast error: Unknown NCCL Error\n", ""},
		{"not an NCCL message", "Last error:\nsomething else went wrong\n", ""},
		// The catalog's format for GDRCopy (misc/gdrwrap.cc), which no rule
		// lists: only the family reads it.
		{"family of a quoted call", "[rank1]: ncclSystemError: System call failed.\n[rank1]: Last error:\n[rank1]: gdr_pin_buffer(addr 7f00, size 65536) failed: -22\n", "generic-memory"},
		{"escaped repr in a Ray error", `RayTaskError(DistBackendError): DistBackendError("NCCL error in: ProcessGroupNCCL.cpp:3356, unhandled cuda error, NCCL version 2.21.5\nncclUnhandledCudaError: Call to CUDA function failed.\nLast error:\nCuda failure 'operation not supported'")` + "\n", "generic-cuda"},
		{"double-escaped JSON", `{"msg": "ncclSystemError: ...\\nLast error:\\nNET/IB : Got async event : port error"}` + "\n", "ib-async-event"},
		{"nccl-tests", "gpu1: Test NCCL failure common.cu:1005 'internal error - please report this issue to the NCCL developers / Attribute arch of node cpu not found'\n", "topology-file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := readIDs(t, tc.log)
			got = slices.DeleteFunc(got, func(id string) bool { return id == "nccl-error" || id == "nccl-tests-result" })
			var want []string
			if tc.want != "" {
				want = []string{tc.want}
			}
			if !slices.Equal(got, want) {
				t.Errorf("diagnoses %v, want %v", got, want)
			}
		})
	}
}

// TestBareInfoRead: a line that keeps NCCL's INFO level word without the
// rest of its prefix (an issue's quote, a log cut before the host field)
// is read as the INFO line when the text after the word is a whole INFO
// format of the catalog with enough literal text; other loggers' INFO
// lines are not. The first case is NVIDIA/nccl#1939's line.
func TestBareInfoRead(t *testing.T) {
	tests := []struct {
		name, log string
		gdr       bool // the HCA-level "GPU Direct RDMA Disabled" line was read
		noMessage bool // the summary says no NCCL message was recognised
	}{
		{"bare level word", "INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'\n", true, false},
		{"after a launcher tag", "[rank0]: INFO NET/IB : GPU Direct RDMA Disabled for HCA 1 'mlx5_1'\n", true, false},
		{"NCCL's own line", "gpu1:12:34 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'\n", true, false},
		{"GDR enabled", "INFO NET/IB : GPU Direct RDMA Enabled for HCA 0 'mlx5_0'\n", false, false},
		// vLLM's logger: the text after INFO is no NCCL format.
		{"another logger", "INFO 07-24 08:25:45 utils.py:784] Found nccl from library libnccl.so.2\n", false, true},
		{"word inside a word", "XINFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'\n", false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := parseString(t, tc.log)
			if got := !s.gdrNoModule.Empty(); got != tc.gdr {
				t.Errorf("HCA GDR line read: %v, want %v", got, tc.gdr)
			}
			none := slices.ContainsFunc(s.Notes, func(n string) bool {
				return strings.Contains(n, "no NCCL or PyTorch distributed messages were recognised")
			})
			if none != tc.noMessage {
				t.Errorf("notes %q: the no-message note %v, want %v", s.Notes, none, tc.noMessage)
			}
			got := slices.Contains(ids(Diagnose(s, ncclenv.Env{})), "no-gdrdma")
			if got != tc.gdr {
				t.Errorf("no-gdrdma fired: %v, want %v", got, tc.gdr)
			}
		})
	}
}

// TestBareP2PWarn: NCCL's WARN about P2P disabled between NVLink-connected
// GPUs (graph/paths.cc) reaches p2p-unavailable whether it comes with its
// prefix or alone, as NVIDIA/nccl#2329 quotes it, and counts once.
func TestBareP2PWarn(t *testing.T) {
	const msg = "P2P is disabled between NVLINK connected GPUs 1 and 0. This should not be the case given their connectivity, and is probably due to a hardware issue. If you still want to proceed, you can set NCCL_IGNORE_DISABLED_P2P=1."
	for _, tc := range []struct {
		name, log string
		warns     int
	}{
		{"with its prefix", "node1:1234:1234 [1] graph/paths.cc:396 NCCL WARN " + msg + "\n", 1},
		{"alone (NVIDIA/nccl#2329)", msg + "\n", 0},
		{"alone behind torchrun's tag", "[rank1]: " + msg + "\n", 0},
		{"alone with CRLF", msg + "\r\n", 0},
		{"after Last error:", "[rank1]: Last error:\n[rank1]: " + msg + "\n", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := parseString(t, tc.log)
			d := find(Diagnose(s, ncclenv.Env{}), "p2p-unavailable")
			if d.ID == "" || !strings.Contains(d.Explanation, "P2P is disabled between GPUs that look connected") {
				t.Fatalf("p2p-unavailable: %+v", d)
			}
			if s.P2PDisabled.Count != 1 || s.Warnings.Count != tc.warns {
				t.Errorf("P2P-disabled lines %d, WARN lines %d; want 1 and %d", s.P2PDisabled.Count, s.Warnings.Count, tc.warns)
			}
			if !slices.ContainsFunc(d.Evidence, func(l LineRef) bool { return strings.Contains(l.Text, "NVLINK connected GPUs 1 and 0") }) {
				t.Errorf("evidence %v", d.Evidence)
			}
		})
	}
}
