package doctor

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/distributed-nav/distributed-nav/playground/controls"
)

// Options bounds the work and memory of ParseLog. Zero fields take the
// defaults below.
type Options struct {
	// MaxLineBytes cuts longer lines (default 64 KiB); the rest of such a
	// line is skipped and counted in Summary.TruncatedLines.
	MaxLineBytes int
	// MaxItems caps every list of the Summary (rings, connections, ranks,
	// paths, ...; default 1024).
	MaxItems int
	// MaxEvidence caps the sample lines kept per Evidence (default 8).
	MaxEvidence int
	// MaxEvidenceChars cuts the text of a kept line (default 400).
	MaxEvidenceChars int
	// MaxBytes stops reading after this many bytes (0: no limit).
	MaxBytes int64
}

// CommentPrefix starts an annotation line that ParseLog ignores; the
// fixtures under data/logs use it for their source header.
const CommentPrefix = "#|"

// Defaults of Options.
const (
	DefaultMaxLineBytes     = 64 << 10
	DefaultMaxItems         = 1024
	DefaultMaxEvidence      = 8
	DefaultMaxEvidenceChars = 400
)

func (o Options) withDefaults() Options {
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = DefaultMaxLineBytes
	}
	if o.MaxItems <= 0 {
		o.MaxItems = DefaultMaxItems
	}
	if o.MaxEvidence <= 0 {
		o.MaxEvidence = DefaultMaxEvidence
	}
	if o.MaxEvidenceChars <= 0 {
		o.MaxEvidenceChars = DefaultMaxEvidenceChars
	}
	return o
}

// ParseLog reads an NCCL/PyTorch log from r and summarises it; see
// ParseLogContext.
func ParseLog(r io.Reader, opts Options) (*Summary, error) {
	return ParseLogContext(context.Background(), r, opts)
}

// ParseLogContext reads an NCCL/PyTorch log line by line and summarises it.
// It never fails on the content of the log: unreadable parts are skipped and
// described in Summary.Notes. It returns an error only when reading r fails
// or ctx is cancelled, and even then the Summary holds everything read so
// far.
func ParseLogContext(ctx context.Context, r io.Reader, opts Options) (*Summary, error) {
	opts = opts.withDefaults()
	p := newParser(opts)
	if r == nil {
		p.finish()
		return p.s, errors.New("doctor: nil reader")
	}
	bufSize := min(max(opts.MaxLineBytes, 4096), 1<<20)
	br := bufio.NewReaderSize(newCRReader(r), bufSize)
	buf := make([]byte, 0, min(opts.MaxLineBytes, 4096))
	var readErr error
	for n := 1; ; n++ {
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				readErr = fmt.Errorf("doctor: parse stopped at line %d: %w", n, err)
				break
			}
		}
		if opts.MaxBytes > 0 && p.s.Bytes >= opts.MaxBytes {
			p.note(fmt.Sprintf("stopped after %d bytes (the reading limit); the rest of the log was not read", p.s.Bytes))
			break
		}
		line, truncated, size, err := readLine(br, buf[:0], opts.MaxLineBytes)
		buf = line[:0]
		if size == 0 && err != nil {
			if !errors.Is(err, io.EOF) {
				readErr = fmt.Errorf("doctor: read line %d: %w", n, err)
			}
			break
		}
		p.s.Bytes += int64(size)
		p.s.Lines = n
		if truncated {
			p.s.TruncatedLines++
		}
		p.line(n, line)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				readErr = fmt.Errorf("doctor: read after line %d: %w", n, err)
			}
			break
		}
	}
	p.finish()
	return p.s, readErr
}

// readLine returns the next line without its line ending, cut to max bytes,
// whether it was cut, and how many bytes it consumed from r.
func readLine(br *bufio.Reader, dst []byte, maxLen int) (line []byte, truncated bool, size int, err error) {
	var last, prev byte
	for {
		chunk, e := br.ReadSlice('\n')
		size += len(chunk)
		if room := maxLen - len(dst); room > 0 {
			dst = append(dst, chunk[:min(room, len(chunk))]...)
		}
		switch {
		case len(chunk) >= 2:
			prev, last = chunk[len(chunk)-2], chunk[len(chunk)-1]
		case len(chunk) == 1:
			prev, last = last, chunk[0]
		}
		if e == bufio.ErrBufferFull {
			continue
		}
		err = e
		break
	}
	content := size
	if last == '\n' {
		content--
		if prev == '\r' {
			content--
		}
	}
	truncated = content > maxLen
	dst = bytes.TrimRight(dst, "\r\n")
	return dst, truncated, size, err
}

// parser holds the state of one ParseLog run.
type parser struct {
	opts Options
	s    *Summary

	hosts     map[string]bool
	versions  map[string]int // version -> index in s.Versions
	versHosts map[string]map[string]bool
	rankKeys  map[string]bool
	pairKeys  map[Pair]bool
	transIdx  map[string]int
	pathKeys  map[[2]string]bool
	envKeys   map[[2]string]bool
	algoKeys  map[AlgoChoice]bool
	timeKeys  map[[3]string]bool
	sizes     map[int]bool
	chanKeys  map[ChannelCounts]bool
	ringKeys  map[[2]int]bool
	graphKeys map[GraphLine]bool
	treeKeys  map[[2]int]bool
	devKeys   map[string]bool

	tuning    tuningState
	bench     benchState
	merged    int
	ncclLines int // lines in NCCL's "host:pid:tid [dev] NCCL LEVEL" format
	notesSeen map[string]bool
	wrap      wrapState // a PyTorch message broken over two lines (torch.go)
	// inReturn marks the origins (host, pid and device, joined by NUL)
	// whose last NCCL line was an error-return trace line
	// (catalogfamily.go).
	inReturn map[string]bool
	// catVersion is the version catRelease was looked up for
	// (catalogRelease).
	catVersion, catRelease string
	// waits are the "Last error:" lines whose quoted NCCL text is still
	// to come (quoted.go).
	waits []lastErrorWait
	// gidDev is the device of the last "hca_id:" line of ibv_devinfo
	// output, for the GID rows that follow (gid.go).
	gidDev string
}

func newParser(opts Options) *parser {
	return &parser{
		opts:      opts,
		s:         &Summary{},
		hosts:     map[string]bool{},
		versions:  map[string]int{},
		versHosts: map[string]map[string]bool{},
		rankKeys:  map[string]bool{},
		pairKeys:  map[Pair]bool{},
		transIdx:  map[string]int{},
		pathKeys:  map[[2]string]bool{},
		envKeys:   map[[2]string]bool{},
		algoKeys:  map[AlgoChoice]bool{},
		timeKeys:  map[[3]string]bool{},
		sizes:     map[int]bool{},
		chanKeys:  map[ChannelCounts]bool{},
		ringKeys:  map[[2]int]bool{},
		graphKeys: map[GraphLine]bool{},
		treeKeys:  map[[2]int]bool{},
		devKeys:   map[string]bool{},
		notesSeen: map[string]bool{},
	}
}

// note adds a parser note once.
func (p *parser) note(msg string) {
	if p.notesSeen[msg] || len(p.s.Notes) >= p.opts.MaxItems {
		return
	}
	p.notesSeen[msg] = true
	p.s.Notes = append(p.s.Notes, msg)
}

func (p *parser) finish() {
	s := p.s
	if s.BinaryLines > 0 {
		p.note(fmt.Sprintf("%d line(s) looked like binary data and were skipped", s.BinaryLines))
	}
	if s.TruncatedLines > 0 {
		p.note(fmt.Sprintf("%d line(s) were longer than %d bytes and were cut", s.TruncatedLines, p.opts.MaxLineBytes))
	}
	if s.ControlLines > 0 {
		p.note(fmt.Sprintf("%d line(s) held terminal control sequences or control characters (colours, titles, NUL); they were removed before reading", s.ControlLines))
	}
	if s.InvalidUTF8Lines > 0 {
		p.note(fmt.Sprintf("%d line(s) were not valid UTF-8; the bad bytes were replaced", s.InvalidUTF8Lines))
	}
	if p.merged > 0 {
		p.note(fmt.Sprintf("%d line(s) held output of several processes run together; only the last message of each was read", p.merged))
	}
	p.flushWrapped()
	p.finishBench()
	p.finishGIDs()
	if s.Lines > 0 && s.Bytes > 0 && p.ncclLines == 0 && s.NCCLTests == nil && len(s.Versions) == 0 && s.NRanks == 0 && s.TotalConnections == 0 && s.Warnings.Count == 0 && len(s.Timeouts) == 0 && s.Heartbeat.Empty() {
		p.note("no NCCL or PyTorch distributed messages were recognised; was the job run with NCCL_DEBUG=INFO?")
	}
	if s.Tuning != nil {
		s.Tuning.byKey = nil
	}
}

// looksBinary reports whether a line is mostly control bytes, which text
// logs never are. A stray NUL or a few escape sequences do not make a line
// binary: stripControls removes them and the line is read.
func looksBinary(b []byte) bool {
	ctrl := 0
	for _, c := range b {
		if (c < 0x20 && c != '\t' && c != 0x1b) || c == 0x7f {
			ctrl++
		}
	}
	return ctrl > 0 && ctrl*8 > len(b)
}

// interesting is a cheap filter: only lines mentioning NCCL or PyTorch's
// watchdog/heartbeat are examined further.
func interesting(b []byte) bool {
	return bytes.Contains(b, []byte("NCCL")) || bytes.Contains(b, []byte("atchdog")) ||
		bytes.Contains(b, []byte("eartbeat")) || bytes.Contains(b, []byte("DistBackendError"))
}

// ref builds a LineRef with cleaned, bounded text.
func (p *parser) ref(n int, text string) LineRef {
	return LineRef{Line: n, Text: clip(text, p.opts.MaxEvidenceChars)}
}

// clip makes text valid UTF-8, drops control characters other than tabs and
// cuts it to at most max bytes on a rune boundary.
func clip(text string, maxLen int) string {
	clean := len(text) <= maxLen
	for i := 0; clean && i < len(text); i++ {
		if c := text[i]; c < 0x20 || c >= 0x7f {
			clean = false
		}
	}
	if clean {
		return text // plain ASCII that fits: the common case
	}
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	text = strings.Map(func(r rune) rune {
		if r == '\t' {
			return ' '
		}
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, text)
	if len(text) <= maxLen {
		return text
	}
	return controls.Prefix(text, maxLen) + "…"
}

// add records one line in an Evidence.
func (p *parser) add(e *Evidence, n int, text string) {
	e.Count++
	if len(e.Lines) < p.opts.MaxEvidence {
		e.Lines = append(e.Lines, p.ref(n, text))
	}
}

func (p *parser) line(n int, b []byte) {
	if len(b) == 0 || bytes.HasPrefix(b, []byte(CommentPrefix)) {
		return
	}
	if looksBinary(b) {
		p.s.BinaryLines++
		return
	}
	if clean, removed := controls.Strip(b); removed > 0 {
		p.s.ControlLines++
		b = clean
		if len(b) == 0 {
			return
		}
	}
	if p.wrap.raw != "" && p.joinWrapped(n, b) {
		return
	}
	line := string(b)
	p.scanRules(n, line)
	quoted := false
	if !bytes.Contains(b, []byte("NCCL WARN")) && !bytes.Contains(b, []byte("NCCL INFO")) {
		quoted = p.quoted(n, line)
	}
	p.benchLine(n, b)
	if !interesting(b) {
		if !utf8.Valid(b) {
			p.s.InvalidUTF8Lines++
		}
		return
	}
	if !utf8.Valid(b) {
		p.s.InvalidUTF8Lines++
	}
	raw := string(b)
	if strings.Contains(raw, "Mismatched NCCL version detected") && !strings.Contains(raw, "NCCL WARN") {
		// NCCL's WARN (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/init.cc#L1043)
		// as users usually post it: re-raised by PyTorch after "Last
		// error:", or on a RuntimeError line. Without the WARN prefix its
		// "NCCL version" would read as a version banner. A quotation
		// quoted read has been classified already.
		if !quoted {
			p.add(&p.s.VersionMismatch, n, raw)
			p.mismatchCodes(n, raw, raw)
		}
		p.torchLine(n, raw)
		return
	}
	o, lvl, msg := splitNCCL(raw)
	if lvl != levelNone {
		p.ncclLines++
		// Several processes writing to one stream can glue lines together;
		// read the last complete message.
		if lvl != levelVersion {
			if i, l2 := lastMarker(msg); l2 != levelNone {
				// The prefix of a glued message starts mid-line, so its
				// host field may carry the tail of the other line: drop it.
				o = origin{Dev: parseOrigin(msg[:i]).Dev}
				lvl, msg = l2, strings.TrimPrefix(msg[i:], "NCCL ")
				msg = strings.TrimPrefix(msg[len(markerWord(lvl, msg)):], " ")
				p.merged++
			}
		}
		p.catalogLine(n, o, lvl, raw, msg)
		if o.Host != "" && !p.hosts[o.Host] && len(p.hosts) < p.opts.MaxItems {
			p.hosts[o.Host] = true
			p.s.Hosts = append(p.s.Hosts, o.Host)
		}
		p.ncclMessage(n, o, lvl, msg, raw)
		return
	}
	p.torchLine(n, raw)
}
