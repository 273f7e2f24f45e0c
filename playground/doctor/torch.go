package doctor

import (
	"strconv"
	"strings"
)

// torchLine handles a line that is not an NCCL-formatted message: PyTorch's
// ProcessGroupNCCL watchdog, heartbeat monitor and error messages.
func (p *parser) torchLine(n int, raw string) {
	if p.deferWrapped(n, raw) {
		return
	}
	switch {
	case strings.Contains(raw, "Watchdog caught collective operation timeout"):
		if strings.Contains(raw, "terminated with exception") {
			p.add(&p.s.WatchdogEx, n, raw)
			return
		}
		p.timeout(n, raw)
	case strings.Contains(raw, "detected by watchdog at work") || strings.Contains(raw, "Timeout at NCCL work") ||
		strings.Contains(raw, "failure detected by watchdog") || strings.Contains(raw, "Some NCCL operations have failed or timed out"):
		p.add(&p.s.TimeoutLines, n, raw)
		p.workProgress(n, raw)
	case strings.Contains(raw, "ProcessGroupNCCL::WorkNCCL::checkTimeout("):
		// A frame of the watchdog's exception stack: where only the stack
		// made it into the excerpt, it still says a collective timed out
		// (ProcessGroupNCCL.cpp: WorkNCCL::checkTimeout throws the
		// "Watchdog caught collective operation timeout" error).
		p.add(&p.s.TimeoutLines, n, raw)
	case strings.Contains(raw, " timed out in blocking wait"):
		// TORCH_NCCL_BLOCKING_WAIT=1: wait() throws instead of the watchdog
		// (v2.6.0 ProcessGroupNCCL.cpp: "Work WorkNCCL(...) timed out in
		// blocking wait.").
		p.timeout(n, raw)
	case strings.Contains(raw, "WorkNCCL(") && strings.Contains(raw, "ran for ") && strings.Contains(raw, " millisecond"):
		// The watchdog's message without its "Watchdog caught collective
		// operation timeout:" head, as titles and excerpts quote it.
		p.timeout(n, raw)
	case strings.Contains(raw, "Received a dump signal due to a collective timeout from") || strings.Contains(raw, "Received a timeout signal from this local rank"):
		// The heartbeat monitor's message (v2.6.0 ProcessGroupNCCL.cpp,
		// getNCCLWatchdogTimeoutErrorMsg) on every rank once one timed out.
		p.add(&p.s.TimeoutLines, n, raw)
		p.workProgress(n, raw)
	case strings.Contains(raw, "taking the entire process down") || strings.Contains(raw, "Terminating the process after attempting to dump debug info"):
		p.add(&p.s.TearDown, n, raw)
	case strings.Contains(raw, "watchdog thread terminated with exception"):
		p.add(&p.s.WatchdogEx, n, raw)
	case strings.Contains(raw, "watchdog got stuck for"):
		p.add(&p.s.WatchdogStuck, n, raw)
		p.add(&p.s.Heartbeat, n, raw)
	case strings.Contains(raw, "Heartbeat monitor timed out") || strings.Contains(raw, "detected no heartbeat") ||
		strings.Contains(raw, "detects no heartbeat") || strings.Contains(raw, "due to ProcessGroupNCCL watchdog hang") ||
		strings.Contains(raw, "NCCL monitor thread timeout"):
		p.add(&p.s.Heartbeat, n, raw)
	case strings.Contains(raw, "FlightRecorder is disabled"):
		p.add(&p.s.FlightRecorder, n, raw)
	case strings.Contains(raw, "Environment variable ") && strings.Contains(raw, " is deprecated"):
		p.add(&p.s.DeprecatedTorch, n, raw)
	case strings.Contains(raw, "ProcessGroupNCCL initialization options") || strings.Contains(raw, "ProcessGroupNCCL environments"):
		p.pgOptions(n, raw)
	case strings.Contains(raw, "NCCL error") || strings.Contains(raw, "DistBackendError") || strings.Contains(raw, "ncclInternalError") ||
		strings.Contains(raw, "ncclSystemError") || strings.Contains(raw, "ncclUnhandledCudaError") || strings.Contains(raw, "ncclRemoteError") ||
		strings.Contains(raw, "ncclInvalidUsage") || ncclErrorClass(raw) > 0:
		p.add(&p.s.NCCLErrors, n, raw)
		if i := strings.Index(raw, "NCCL version "); i >= 0 {
			f := strings.Fields(raw[i+len("NCCL version "):])
			if len(f) > 0 && f[0][0] >= '0' && f[0][0] <= '9' {
				v, _, _ := strings.Cut(strings.TrimRight(f[0], ".,;"), "+")
				p.addVersion(n, "", v, "", raw)
			}
		}
	}
}

// timeout reads "[Rank 3] Watchdog caught collective operation timeout:
// WorkNCCL(SeqNum=4812, OpType=ALLREDUCE, NumelIn=.., NumelOut=..,
// Timeout(ms)=600000) ran for 600047 milliseconds before timing out."
func (p *parser) timeout(n int, raw string) {
	p.add(&p.s.TimeoutLines, n, raw)
	t := Timeout{Rank: torchRank(raw), PG: torchPG(raw), SeqNum: -1, TimeoutMs: -1, RanForMs: -1, Line: n, proc: launcherRank(raw), numelIn: -1, numelOut: -1}
	if i := strings.Index(raw, "WorkNCCL("); i >= 0 {
		inner := raw[i+len("WorkNCCL("):]
		if j := strings.IndexByte(inner, ')'); j >= 0 {
			// Timeout(ms)=... itself contains ')'; take up to the matching one.
			if k := strings.Index(inner, "Timeout(ms)="); k >= 0 && k < j {
				if e := strings.IndexByte(inner[k+len("Timeout(ms)="):], ')'); e >= 0 {
					j = k + len("Timeout(ms)=") + e
				}
			}
			for _, kv := range strings.Split(inner[:j], ",") {
				k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
				if !ok {
					continue
				}
				switch k {
				case "SeqNum":
					t.SeqNum, _ = strconv.ParseInt(v, 10, 64)
				case "OpType":
					t.OpType = v
				case "Timeout(ms)":
					t.TimeoutMs, _ = strconv.ParseInt(v, 10, 64)
				case "NumelIn":
					t.numelIn, _ = strconv.ParseInt(v, 10, 64)
				case "NumelOut":
					t.numelOut, _ = strconv.ParseInt(v, 10, 64)
				}
			}
		}
	}
	if i := strings.Index(raw, "ran for "); i >= 0 {
		f := strings.Fields(raw[i+len("ran for "):])
		if len(f) > 0 {
			t.RanForMs, _ = strconv.ParseInt(f[0], 10, 64)
		}
	}
	key := [3]string{strconv.Itoa(t.Rank), strconv.FormatInt(t.SeqNum, 10), t.PG + "/" + t.OpType}
	if p.timeKeys[key] || len(p.s.Timeouts) >= p.opts.MaxItems {
		return
	}
	p.timeKeys[key] = true
	p.s.Timeouts = append(p.s.Timeouts, t)
}

// pgOptions reads the settings ProcessGroupNCCL logs when it starts
// ("ProcessGroupNCCL initialization options: ..., NCCL_ASYNC_ERROR_HANDLING:
// 1, ..." in older releases, "ProcessGroupNCCL environments: NCCL version:
// 2.21.5, TORCH_NCCL_ASYNC_ERROR_HANDLING: 1, ..." in newer ones).
func (p *parser) pgOptions(n int, raw string) {
	for _, part := range strings.Split(raw, ",") {
		i := strings.LastIndex(part, ": ")
		if i < 0 {
			continue
		}
		k, v := strings.TrimSpace(part[:i]), part[i+2:]
		if i := strings.LastIndexAny(k, " :"); i >= 0 {
			k = k[i+1:]
		}
		v = strings.TrimSpace(v)
		val, err := strconv.Atoi(v)
		switch {
		case k == "version" && strings.Contains(part, "NCCL version"):
			p.addVersion(n, "", v, "", raw)
		case err != nil:
			continue
		case k == "NCCL_ASYNC_ERROR_HANDLING" || k == "TORCH_NCCL_ASYNC_ERROR_HANDLING":
			p.s.ErrorHandling = &ErrorHandling{Mode: val, Line: p.ref(n, raw)}
		case k == "NCCL_BLOCKING_WAIT" || k == "TORCH_NCCL_BLOCKING_WAIT":
			p.s.BlockingWait = &ErrorHandling{Mode: val, Line: p.ref(n, raw)}
		case k == "TORCH_NCCL_ENABLE_MONITORING":
			p.s.MonitoringOn = &ErrorHandling{Mode: val, Line: p.ref(n, raw)}
		}
	}
}

// workProgress reads the watchdog's per-rank progress: "[PG 1 Rank 0]
// Exception (either an error or timeout) detected by watchdog at work:
// 1580, last enqueued NCCL work: 1582, last completed NCCL work: 1579." and
// the 2.5+ wording "failure detected by watchdog at work sequence id: 2847
// PG status: last enqueued work: 2855, last completed work: 2846".
func (p *parser) workProgress(n int, raw string) {
	w := WorkProgress{Rank: torchRank(raw), PG: torchPG(raw), Failed: -1, Enqueued: -1, Completed: -1, Line: n}
	if v, ok := int64After(raw, "at work sequence id: ", "at work: "); ok {
		w.Failed = v
	}
	if v, ok := int64After(raw, "last enqueued NCCL work: ", "last enqueued work: ", "Last enqueued NCCL work: "); ok {
		w.Enqueued = v
	}
	if v, ok := int64After(raw, "last completed NCCL work: ", "last completed work: "); ok {
		w.Completed = v
	}
	if w.Rank < 0 || (w.Failed < 0 && w.Completed < 0) || len(p.s.Progress) >= p.opts.MaxItems {
		return
	}
	for _, x := range p.s.Progress {
		if x.Rank == w.Rank && x.PG == w.PG && x.Failed == w.Failed {
			return
		}
	}
	p.s.Progress = append(p.s.Progress, w)
}

// int64After returns the decimal number after the first key found in s.
func int64After(s string, keys ...string) (int64, bool) {
	for _, k := range keys {
		i := strings.Index(s, k)
		if i < 0 {
			continue
		}
		t := s[i+len(k):]
		j := 0
		for j < len(t) && t[j] >= '0' && t[j] <= '9' {
			j++
		}
		if v, err := strconv.ParseInt(t[:j], 10, 64); err == nil {
			return v, true
		}
	}
	return 0, false
}

// wrapState holds a watchdog line whose details a terminal or a paste
// moved to the next line ("... Watchdog caught collective operation
// timeout: " then "WorkNCCL(SeqNum=2070, ...) ran for ...", or "...
// Exception (either an error or timeout) detected" then "by watchdog at
// work: 2070, last enqueued ...").
type wrapState struct {
	n        int
	raw      string
	flushing bool
}

// wrapHeads are the endings of a broken watchdog line and the start of the
// line that completes each.
var wrapHeads = []struct{ end, next string }{
	{"Watchdog caught collective operation timeout:", "WorkNCCL("},
	{"Exception (either an error or timeout) detected", "by watchdog at work"},
	{"failure detected", "by watchdog at work"},
}

// workHead reports a line that is only the watchdog's work description,
// "WorkNCCL(SeqNum=.., ..., Timeout(ms)=..)", whose "ran for N
// milliseconds before timing out" went to the next line.
func workHead(t string) bool {
	return strings.HasSuffix(t, ")") && strings.Contains(t, "WorkNCCL(") && strings.Contains(t, "Timeout(ms)=") && !strings.Contains(t, "ran for ")
}

// workTail reports whether next completes the work line head: its "ran
// for" comes after the same launcher tag or time stamp, digits aside.
func workTail(head, next string) bool {
	i, j := strings.Index(next, "ran for "), strings.Index(head, "WorkNCCL(")
	if i < 0 || j < 0 || !workHead(head) {
		return false
	}
	tag := strings.TrimSpace(next[:i])
	k, ok := samePrefix(tag, strings.TrimSpace(head[:j]))
	return ok && k == len(tag)
}

// deferWrapped keeps a watchdog line that ends where its details should
// start, to be read with the next line; it reports whether it kept it.
func (p *parser) deferWrapped(n int, raw string) bool {
	if p.wrap.flushing {
		return false
	}
	t := strings.TrimRight(raw, " \t\r")
	if workHead(t) {
		p.wrap = wrapState{n: n, raw: t}
		return true
	}
	for _, h := range wrapHeads {
		if strings.HasSuffix(t, h.end) {
			p.wrap = wrapState{n: n, raw: t}
			return true
		}
	}
	return false
}

// joinWrapped reads a kept watchdog line together with line n when n
// completes it, else reads the kept line alone; it reports whether line n
// was consumed.
func (p *parser) joinWrapped(n int, b []byte) bool {
	next := strings.TrimSpace(string(b))
	for _, h := range wrapHeads {
		if (strings.HasSuffix(p.wrap.raw, h.end) && strings.HasPrefix(next, h.next)) || workTail(p.wrap.raw, next) {
			w := p.wrap
			p.wrap = wrapState{flushing: true}
			p.torchLine(w.n, w.raw+" "+next)
			p.wrap = wrapState{}
			return true
		}
	}
	p.flushWrapped()
	return false
}

// flushWrapped reads a kept watchdog line on its own.
func (p *parser) flushWrapped() {
	if p.wrap.raw == "" {
		return
	}
	w := p.wrap
	p.wrap = wrapState{flushing: true}
	p.torchLine(w.n, w.raw)
	p.wrap = wrapState{}
}
