package nccltests

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Options override what Parse would read from the file.
type Options struct {
	// Collective, when set, is the collective of every run.
	Collective Collective
	// NRanks, when positive, is the rank count of every run.
	NRanks int
}

// Error is a parse failure; Line is the 1-based line it concerns, 0 when
// it concerns the whole input.
type Error struct {
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("nccl-tests output, line %d: %s", e.Line, e.Msg)
	}
	return "nccl-tests output: " + e.Msg
}

// ErrNoTable is wrapped by the error of an input without any table.
var ErrNoTable = errors.New("no nccl-tests results table found")

// Parse reads nccl-tests output from r (see the package documentation for
// what it accepts). It returns every run with at least one row; a run
// whose collective or rank count can be determined neither from the file
// nor from opts is an error naming its header line.
func Parse(r io.Reader, opts Options) (*File, error) {
	if opts.NRanks < 0 || opts.NRanks > MaxRanks {
		return nil, &Error{Msg: fmt.Sprintf("rank count %d: want 1..%d", opts.NRanks, MaxRanks)}
	}
	data, err := io.ReadAll(io.LimitReader(r, MaxInputBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read nccl-tests output: %w", err)
	}
	if len(data) > MaxInputBytes {
		return nil, &Error{Msg: fmt.Sprintf("input larger than %d MiB; paste the results tables only", MaxInputBytes>>20)}
	}
	p := &parser{opts: opts, file: &File{}, persist: map[string]string{}}
	p.resetPending()
	line := 0
	for len(data) > 0 {
		var raw []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			raw, data = data[:i], data[i+1:]
		} else {
			raw, data = data, nil
		}
		line++
		if len(raw) > MaxLineBytes {
			p.warn(line, fmt.Sprintf("line of %d bytes skipped (longer than %d)", len(raw), MaxLineBytes))
			continue
		}
		if err := p.line(line, string(raw)); err != nil {
			return nil, err
		}
	}
	if err := p.closeRun(); err != nil {
		return nil, err
	}
	if len(p.file.Runs) == 0 {
		msg := "looked for the column header ('#  size  count  type ... busbw') or rows such as '1048576  262144  float  sum  -1  ...'"
		if p.firstBad != nil {
			msg = fmt.Sprintf("the only table-like line, line %d, could not be read: %s", p.firstBad.Line, p.firstBad.Message)
			return nil, &Error{Line: p.firstBad.Line, Msg: fmt.Sprintf("%v: %s", ErrNoTable, p.firstBad.Message)}
		}
		return nil, fmt.Errorf("%w; %s", ErrNoTable, msg)
	}
	if p.dropped > 0 {
		p.file.Warnings = append(p.file.Warnings, Warning{Message: fmt.Sprintf("%d more warnings not shown", p.dropped)})
	}
	return p.file, nil
}

// pending is what the log said before the next table's header.
type pending struct {
	coll     Collective
	collFrom string
	// oneShot are assignments of the command line that started the run
	// (they do not carry over to the next run).
	oneShot     map[string]string
	ranks       map[int]string
	ncclVersion string
}

type parser struct {
	opts    Options
	file    *File
	persist map[string]string
	pend    pending

	cur  *Run
	lay  layout
	rows int

	firstBad *Warning
	dropped  int
}

func (p *parser) resetPending() {
	p.pend = pending{oneShot: map[string]string{}, ranks: map[int]string{}}
}

func (p *parser) warn(line int, msg string) {
	if len(p.file.Warnings) >= MaxWarnings {
		p.dropped++
		return
	}
	p.file.Warnings = append(p.file.Warnings, Warning{Line: line, Message: msg})
}

// line handles one input line.
func (p *parser) line(n int, raw string) error {
	s := stripLauncher(strings.TrimSuffix(raw, "\r"))
	if s == "" {
		return nil
	}
	if s[0] == '#' {
		return p.comment(n, s[1:])
	}
	toks := strings.Fields(s)
	if p.cur != nil {
		r, err := p.lay.parseRow(toks)
		if err == nil {
			return p.addRow(n, r)
		}
		if isUint(toks[0]) && len(toks) >= 4 {
			p.bad(n, "row skipped: "+err.Error())
			return nil
		}
	} else if l, ok := inferLayout(toks); ok {
		r, err := l.parseRow(toks)
		if err == nil {
			if err := p.openRun(n, l); err != nil {
				return err
			}
			p.warn(n, "no column header before this row: the columns were inferred from the row (size count type [redop] [root] time algbw busbw error, out-of-place then in-place)")
			return p.addRow(n, r)
		}
		p.bad(n, "row skipped: "+err.Error())
		return nil
	} else if isUint(toks[0]) && len(toks) >= 8 && TypeSize(toks[2]) > 0 {
		p.bad(n, "looks like a table row, but its columns fit no nccl-tests layout and no header precedes it")
		return nil
	}
	p.context(s)
	return nil
}

// bad records a row that could not be read.
func (p *parser) bad(n int, msg string) {
	if p.firstBad == nil {
		p.firstBad = &Warning{Line: n, Message: msg}
	}
	p.warn(n, msg)
}

func (p *parser) addRow(n int, r Row) error {
	p.rows++
	if p.rows > MaxRows {
		return &Error{Line: n, Msg: fmt.Sprintf("more than %d table rows", MaxRows)}
	}
	r.Line = n
	p.cur.Rows = append(p.cur.Rows, r)
	return nil
}

// comment handles a line starting with '#' (rest is what follows it).
func (p *parser) comment(n int, rest string) error {
	t := strings.TrimSpace(rest)
	switch {
	case strings.HasPrefix(t, "Collective test starting:"):
		if err := p.closeRun(); err != nil {
			return err
		}
		if c, ok := findProgram(t); ok {
			p.pend.coll, p.pend.collFrom = c, "header"
		}
		return nil
	case strings.HasPrefix(t, "Collective test concluded"):
		return p.closeRun()
	case strings.HasPrefix(t, "Avg bus bandwidth"):
		if i := strings.IndexByte(t, ':'); i >= 0 {
			f := strings.Fields(t[i+1:])
			if len(f) > 0 {
				if v, err := strconv.ParseFloat(f[0], 64); err == nil && p.cur != nil {
					p.cur.AvgBusBwGBps = &v
				}
			}
		}
		return p.closeRun()
	case strings.HasPrefix(t, "Rank "):
		f := strings.Fields(t)
		if len(f) >= 2 {
			if k, err := strconv.Atoi(f[1]); err == nil && k >= 0 && k < MaxRanks {
				p.pend.ranks[k] = deviceName(f)
			}
		}
		return nil
	case strings.HasPrefix(t, "nccl-tests version"):
		for _, f := range strings.Fields(t) {
			if v, ok := strings.CutPrefix(f, "nccl-library="); ok {
				p.pend.ncclVersion = versionCode(v)
			}
		}
		return nil
	}
	if l, ok := headerLayout(rest); ok {
		if err := p.closeRun(); err != nil {
			return err
		}
		return p.openRun(n, l)
	}
	if p.cur != nil && len(p.cur.Rows) == 0 && p.lay.unitsLine(rest) {
		return nil
	}
	return nil
}

// openRun starts a table at line n with layout l.
func (p *parser) openRun(n int, l layout) error {
	if len(p.file.Runs) >= MaxRuns {
		return &Error{Line: n, Msg: fmt.Sprintf("more than %d tables", MaxRuns)}
	}
	env := map[string]string{}
	for k, v := range p.persist {
		env[k] = v
	}
	for k, v := range p.pend.oneShot {
		env[k] = v
	}
	p.cur = &Run{Collective: p.pend.coll, CollectiveFrom: p.pend.collFrom, Env: env, HeaderLine: n, NCCLVersion: p.pend.ncclVersion}
	if len(p.pend.ranks) > 0 {
		complete := true
		for k := 0; k < len(p.pend.ranks); k++ {
			name, ok := p.pend.ranks[k]
			if !ok {
				complete = false
				break
			}
			p.cur.Devices = append(p.cur.Devices, name)
		}
		if !complete {
			p.cur.Devices = nil
		}
	}
	for _, c := range l.cols {
		p.cur.hasRedop = p.cur.hasRedop || c == colRedop
		p.cur.hasRoot = p.cur.hasRoot || c == colRoot
	}
	p.lay = l
	p.resetPending()
	return nil
}

// closeRun finishes the open table, if any.
func (p *parser) closeRun() error {
	r := p.cur
	if r == nil {
		return nil
	}
	p.cur = nil
	if len(r.Rows) == 0 {
		p.warn(r.HeaderLine, "table header without rows")
		return nil
	}
	if err := p.finish(r); err != nil {
		return err
	}
	p.file.Runs = append(p.file.Runs, r)
	return nil
}

// context reads a line outside the table: command lines naming the
// benchmark, NCCL_* assignments, NCCL's own version and "set by
// environment" messages.
func (p *parser) context(s string) {
	if strings.Contains(s, "NCCL version ") {
		if i := strings.Index(s, "NCCL version "); i >= 0 {
			f := strings.Fields(s[i+len("NCCL version "):])
			if len(f) > 0 {
				p.pend.ncclVersion = f[0]
			}
		}
	}
	c, isCommand := findProgram(s)
	if isCommand {
		p.pend.coll, p.pend.collFrom = c, "command"
		p.pend.oneShot = map[string]string{}
	}
	// NCCL INFO NCCL_ALGO set by environment to Ring
	if i := strings.Index(s, " set by environment to "); i >= 0 {
		f := strings.Fields(s[:i])
		if len(f) > 0 && strings.HasPrefix(f[len(f)-1], "NCCL_") {
			v := strings.Fields(s[i+len(" set by environment to "):])
			if len(v) > 0 {
				p.pend.oneShot[f[len(f)-1]] = strings.TrimRight(v[0], ".,")
			}
		}
		return
	}
	for _, f := range strings.Fields(s) {
		k, v, ok := assignment(f)
		if !ok {
			continue
		}
		if isCommand {
			p.pend.oneShot[k] = v
		} else {
			p.persist[k] = v
		}
	}
}

// assignment reads NCCL_NAME=value (quotes around the value removed).
func assignment(f string) (string, string, bool) {
	i := strings.Index(f, "NCCL_")
	if i < 0 {
		return "", "", false
	}
	f = f[i:]
	eq := strings.IndexByte(f, '=')
	if eq < 0 {
		return "", "", false
	}
	k, v := f[:eq], strings.Trim(f[eq+1:], "\"'")
	for j := 0; j < len(k); j++ {
		c := k[j]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return "", "", false
		}
	}
	if v == "" || len(v) > 256 {
		return "", "", false
	}
	return k, v, true
}

// findProgram finds a benchmark binary's name in s.
func findProgram(s string) (Collective, bool) {
	for _, pr := range programs {
		from := 0
		for {
			i := strings.Index(s[from:], pr.name)
			if i < 0 {
				break
			}
			i += from
			from = i + len(pr.name)
			if i > 0 {
				c := s[i-1]
				if c >= 'a' && c <= 'z' || c == '_' {
					continue
				}
			}
			return pr.c, true
		}
	}
	return "", false
}

// deviceName reads the device name of a Rank line's fields: what follows
// the bracketed PCI id ("[0x1a]" or "[0000:2c:00]").
func deviceName(f []string) string {
	for i, x := range f {
		if strings.HasPrefix(x, "[") && strings.HasSuffix(x, "]") && i+1 < len(f) {
			return strings.Join(f[i+1:], " ")
		}
	}
	return ""
}

// versionCode turns NCCL_VERSION_CODE (22707) into "2.27.7".
func versionCode(v string) string {
	c, err := strconv.Atoi(v)
	if err != nil || c <= 0 {
		return v
	}
	if c >= 10000 {
		return fmt.Sprintf("%d.%d.%d", c/10000, c/100%100, c%100)
	}
	return fmt.Sprintf("%d.%d.%d", c/1000, c/100%10, c%100)
}
