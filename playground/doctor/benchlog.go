package doctor

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/ascii"
	"github.com/distributed-nav/distributed-nav/playground/nccltests"
)

// NCCLTestsRun is what a log shows of an nccl-tests benchmark (all_reduce_perf
// and the others, or the older NCCL 1 test programs): the devices of its
// "Rank N ... device D [bus] NAME" lines, whether the column header was
// printed, how many result rows followed, and the best bus bandwidth.
type NCCLTestsRun struct {
	Devices []string `json:"devices,omitempty"`
	// HeaderLine is the line of the column header ("... algbw busbw ..."),
	// 0 if none was printed.
	HeaderLine int `json:"header_line"`
	// MaxBytes is the largest size the run was asked for ("maxBytes N" of
	// its first line), 0 if not printed.
	MaxBytes uint64 `json:"max_bytes,omitempty"`
	// Rows counts the result rows; LastBytes is the size of the last one.
	Rows      int    `json:"rows"`
	LastBytes uint64 `json:"last_bytes,omitempty"`
	LastRow   int    `json:"last_row_line,omitempty"`
	// WrongRows counts rows whose #wrong column is not 0 (wrong results).
	WrongRows int `json:"wrong_rows,omitempty"`
	// Finished is true when the "# Avg bus bandwidth" line closed the run.
	Finished bool `json:"finished"`
	// Collective, NRanks and PeakBusBwGBps come from package nccltests when
	// the table could be read; PeakBytes is the size of the peak row.
	Collective    string  `json:"collective,omitempty"`
	NRanks        int     `json:"nranks,omitempty"`
	PeakBusBwGBps float64 `json:"peak_busbw_GBps,omitempty"`
	PeakBytes     uint64  `json:"peak_bytes,omitempty"`
}

// maxBenchBytes bounds the nccl-tests text kept for package nccltests.
const maxBenchBytes = 4 << 20

// benchState collects the nccl-tests lines of a log.
type benchState struct {
	on    bool
	text  bytes.Buffer
	lines []int // log line of each kept line
	over  bool
}

// benchLine looks at every line for nccl-tests output. The first marker
// ("# nThread", "Using devices", a column header) starts the run; from
// there every line is kept (bounded) for nccltests.Parse.
func (p *parser) benchLine(n int, b []byte) {
	t := strings.TrimSpace(strings.TrimLeft(string(b), "#> "))
	st := &p.bench
	if !st.on {
		if !(strings.HasPrefix(t, "nThread ") || strings.HasPrefix(t, "Using devices") || isBenchHeader(t)) {
			return
		}
		st.on = true
		p.s.NCCLTests = &NCCLTestsRun{}
	}
	r := p.s.NCCLTests
	switch {
	case strings.HasPrefix(t, "nThread "):
		if i := strings.Index(t, "maxBytes "); i >= 0 {
			if v, ok := leadingUint(t[i+len("maxBytes "):]); ok {
				r.MaxBytes = v
			}
		}
	case strings.HasPrefix(t, "Rank ") && strings.Contains(t, " device "):
		if name := benchDevice(t); name != "" && len(r.Devices) < p.opts.MaxItems {
			r.Devices = append(r.Devices, name)
		}
	case isBenchHeader(t):
		if r.HeaderLine == 0 {
			r.HeaderLine = n
		}
	case strings.HasPrefix(t, "Avg bus bandwidth"):
		r.Finished = true
	case r.HeaderLine > 0:
		if f := strings.Fields(t); len(f) >= 8 && ascii.Digits(f[0]) && ascii.Digits(f[1]) {
			r.Rows++
			r.LastRow = n
			r.LastBytes, _ = leadingUint(f[0])
			if benchRowWrong(f) {
				r.WrongRows++
			}
		}
	}
	if st.over {
		return
	}
	if st.text.Len()+len(b)+1 > maxBenchBytes {
		st.over = true
		p.note("the nccl-tests output is longer than " + strconv.Itoa(maxBenchBytes>>20) + " MiB; only its beginning was read as a table")
		return
	}
	st.text.Write(b)
	st.text.WriteByte('\n')
	st.lines = append(st.lines, n)
}

// isBenchHeader matches the column header of the results table.
func isBenchHeader(t string) bool {
	return strings.Contains(t, "algbw") && strings.Contains(t, "busbw") && !strings.Contains(t, "NCCL ")
}

// benchDevice reads the device name after "device D [bus] " in a Rank
// line of nccl-tests or of the NCCL 1 tests ("Rank 0 uses device 0 [0x02]
// Tesla P100").
func benchDevice(t string) string {
	i := strings.Index(t, " device ")
	rest := t[i+len(" device "):]
	j := strings.Index(rest, "] ")
	if j < 0 {
		return ""
	}
	return clip(strings.TrimSpace(rest[j+2:]), 80)
}

// benchRowWrong reports whether a result row counts wrong elements: an
// integer #wrong column (the last field of each half) above 0. Tables with
// a floating error column (older nccl-tests) are left alone.
func benchRowWrong(f []string) bool {
	last := f[len(f)-1]
	if !ascii.Digits(last) {
		return false
	}
	v, _ := strconv.Atoi(last)
	return v > 0
}

// leadingUint parses the decimal number at the start of s.
func leadingUint(s string) (uint64, bool) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	v, err := strconv.ParseUint(s[:i], 10, 64)
	return v, err == nil
}

// finishBench reads the kept text with package nccltests for the
// collective, the rank count and the peak bus bandwidth.
func (p *parser) finishBench() {
	r := p.s.NCCLTests
	if r == nil || r.Rows == 0 {
		return
	}
	f, err := nccltests.Parse(bytes.NewReader(p.bench.text.Bytes()), nccltests.Options{})
	if err != nil || len(f.Runs) == 0 {
		return
	}
	run := f.Runs[0]
	r.Collective, r.NRanks = string(run.Collective), run.NRanks
	for _, row := range run.Rows {
		for _, h := range []nccltests.Result{row.OutOfPlace, row.InPlace} {
			if h.Present && h.BusBwGBps > r.PeakBusBwGBps {
				r.PeakBusBwGBps, r.PeakBytes = h.BusBwGBps, row.Bytes
			}
		}
	}
}
