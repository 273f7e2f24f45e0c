package ncclmsg

import (
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/ascii"
)

// pattern is a compiled printf format: literal text and conversions.
type pattern struct {
	segs    []segment
	literal int // bytes of literal text, spaces not counted
}

type convKind byte

const (
	convNone  convKind = iota // a literal segment
	convInt                   // %d %i %u
	convHex                   // %x %X
	convOct                   // %o
	convFloat                 // %f %e %g %a
	convStr                   // %s
	convPtr                   // %p
	convChar                  // %c
)

type segment struct {
	lit   string // literal text (kind convNone)
	kind  convKind
	spec  string // the conversion as written, e.g. "%-10s"
	alt   bool   // '#' flag: 0x before hex
	left  bool   // '-' flag: padding spaces follow the value
	width bool   // a width was given: the value may be padded with spaces
}

// compile parses a printf format. Unknown conversions are treated as %s.
func compile(f string) pattern {
	var p pattern
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			p.segs = append(p.segs, segment{lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c != '%' {
			lit.WriteByte(c)
			continue
		}
		if i+1 < len(f) && f[i+1] == '%' {
			lit.WriteByte('%')
			i++
			continue
		}
		start := i
		i++
		s := segment{}
		for i < len(f) && strings.IndexByte("-+ #0'", f[i]) >= 0 {
			switch f[i] {
			case '#':
				s.alt = true
			case '-':
				s.left = true
			}
			i++
		}
		for i < len(f) && (f[i] == '*' || (f[i] >= '0' && f[i] <= '9')) {
			s.width = true
			i++
		}
		if i < len(f) && f[i] == '.' {
			i++
			for i < len(f) && (f[i] == '*' || (f[i] >= '0' && f[i] <= '9')) {
				i++
			}
		}
		for i < len(f) && strings.IndexByte("hlLqjzt", f[i]) >= 0 {
			i++
		}
		if i >= len(f) {
			lit.WriteString(f[start:])
			break
		}
		switch f[i] {
		case 'd', 'i', 'u':
			s.kind = convInt
		case 'x', 'X':
			s.kind = convHex
		case 'o':
			s.kind = convOct
		case 'f', 'F', 'e', 'E', 'g', 'G', 'a', 'A':
			s.kind = convFloat
		case 'p':
			s.kind = convPtr
		case 'c':
			s.kind = convChar
		default:
			s.kind = convStr
		}
		s.spec = f[start : i+1]
		flush()
		p.segs = append(p.segs, s)
	}
	flush()
	// A trailing newline or spaces in the format never survive in a log
	// line.
	if n := len(p.segs); n > 0 && p.segs[n-1].kind == convNone {
		p.segs[n-1].lit = strings.TrimRight(p.segs[n-1].lit, " \t\r\n")
		if p.segs[n-1].lit == "" {
			p.segs = p.segs[:n-1]
		}
	}
	// Counted after the trim, so that "...\n" (the wording of many 2.7-2.11
	// calls) does not outrank the same words without it.
	for _, s := range p.segs {
		if s.kind == convNone {
			p.literal += len(strings.ReplaceAll(s.lit, " ", ""))
		}
	}
	return p
}

// matchable reports whether the pattern has enough literal text to tell
// its messages from others (a bare "%s" matches everything).
func (p pattern) matchable() bool { return p.literal >= 3 }

// words returns the pattern's anchor candidates: literal words of three or
// more word characters bounded on both sides by non-word literal text or
// by the start or end of the format.
func (p pattern) words() []string {
	var out []string
	for k, s := range p.segs {
		if s.kind != convNone {
			continue
		}
		t := s.lit
		start := -1
		for i := 0; i <= len(t); i++ {
			if i < len(t) && isWord(t[i]) {
				if start < 0 {
					start = i
				}
				continue
			}
			if start >= 0 && i-start >= 3 {
				leftOK := start > 0 || k == 0
				rightOK := i < len(t) || k == len(p.segs)-1
				if leftOK && rightOK {
					out = append(out, t[start:i])
				}
			}
			start = -1
		}
	}
	return out
}

// maxSteps bounds the backtracking of one match.
const maxSteps = 4096

// match compares msg with the pattern. partial is true when msg ended
// before the pattern (at least 8 literal bytes matched by then).
func (p pattern) match(msg string) (fields []Field, partial, ok bool) {
	if !p.matchable() {
		return nil, false, false
	}
	m := matcher{p: p, msg: msg}
	if !m.run(0, 0) {
		return nil, false, false
	}
	if m.partial && m.litSeen < 8 {
		return nil, false, false
	}
	return m.fields, m.partial, true
}

// matchedLiteral scores a partial match by the literal bytes it covered.
func (p pattern) matchedLiteral(msg string) int {
	m := matcher{p: p, msg: msg}
	m.run(0, 0)
	return m.litSeen
}

type matcher struct {
	p       pattern
	msg     string
	steps   int
	fields  []Field
	partial bool
	litSeen int
}

// run matches segments from seg on at msg position pos.
func (m *matcher) run(seg, pos int) bool {
	if m.steps++; m.steps > maxSteps {
		return false
	}
	if seg == len(m.p.segs) {
		return pos == len(m.msg)
	}
	rest := m.msg[pos:]
	s := m.p.segs[seg]
	if s.kind == convNone {
		if strings.HasPrefix(rest, s.lit) {
			n := m.litSeen
			m.litSeen += len(s.lit)
			if m.run(seg+1, pos+len(s.lit)) {
				return true
			}
			m.litSeen = n
			return false
		}
		// A line cut inside (or just before) this literal: the rest of
		// the message is a prefix of it.
		if len(rest) < len(s.lit) && strings.HasPrefix(s.lit, rest) && (len(rest) > 0 || (seg > 0 && m.p.segs[seg-1].kind != convStr)) {
			m.partial = true
			m.litSeen += len(rest)
			return true
		}
		return false
	}
	if rest == "" && s.kind != convStr {
		// The line ends where a value should be: a cut line.
		m.partial = seg > 0
		return seg > 0
	}
	keep := len(m.fields)
	if s.kind == convStr {
		// Shortest first. When a literal follows, only the places where it
		// occurs (and the end of a cut line) can end the string.
		var next string
		last := seg+1 == len(m.p.segs)
		if !last && m.p.segs[seg+1].kind == convNone {
			next = m.p.segs[seg+1].lit
		}
		for end := pos; end <= len(m.msg); end++ {
			switch {
			case last:
				end = len(m.msg)
			case next != "":
				i := strings.Index(m.msg[end:], next)
				if i < 0 {
					end = len(m.msg)
				} else {
					end += i
				}
			}
			m.fields = append(m.fields[:keep], Field{Spec: s.spec, Value: m.msg[pos:end]})
			if m.run(seg+1, end) {
				return true
			}
			if m.steps > maxSteps {
				break
			}
		}
		m.fields = m.fields[:keep]
		return false
	}
	n := scanValue(s, rest)
	if n == 0 {
		return false
	}
	m.fields = append(m.fields[:keep], Field{Spec: s.spec, Value: strings.TrimSpace(rest[:n])})
	if m.run(seg+1, pos+n) {
		return true
	}
	m.fields = m.fields[:keep]
	return false
}

// scanValue returns the length of the value a conversion printed at the
// start of s (0 if none). Numbers take the longest run, as printf never
// prints two numbers without something between them.
func scanValue(s segment, t string) int {
	i := 0
	if s.width {
		for i < len(t) && t[i] == ' ' {
			i++
		}
	}
	start := i
	switch s.kind {
	case convInt:
		if i < len(t) && (t[i] == '-' || t[i] == '+') {
			i++
		}
		d := i
		for i < len(t) && t[i] >= '0' && t[i] <= '9' {
			i++
		}
		if i == d {
			return 0
		}
	case convHex, convPtr:
		if strings.HasPrefix(t[i:], "(nil)") && s.kind == convPtr {
			i += 5
			break
		}
		if strings.HasPrefix(t[i:], "0x") || strings.HasPrefix(t[i:], "0X") {
			i += 2
		}
		d := i
		for i < len(t) && ascii.IsHex(t[i]) {
			i++
		}
		if i == d {
			return 0
		}
	case convOct:
		d := i
		for i < len(t) && t[i] >= '0' && t[i] <= '7' {
			i++
		}
		if i == d {
			return 0
		}
	case convFloat:
		if i < len(t) && (t[i] == '-' || t[i] == '+') {
			i++
		}
		for _, w := range []string{"nan", "inf", "-nan"} {
			if strings.HasPrefix(t[i:], w) {
				return i + len(w)
			}
		}
		d := i
		for i < len(t) && ((t[i] >= '0' && t[i] <= '9') || t[i] == '.') {
			i++
		}
		if i == d {
			return 0
		}
		if i < len(t) && (t[i] == 'e' || t[i] == 'E') && i+1 < len(t) && (t[i+1] == '+' || t[i+1] == '-' || (t[i+1] >= '0' && t[i+1] <= '9')) {
			i += 2
			for i < len(t) && t[i] >= '0' && t[i] <= '9' {
				i++
			}
		}
	case convChar:
		if i >= len(t) {
			return 0
		}
		i++
	}
	if i == start {
		return 0
	}
	if s.width && s.left {
		for i < len(t) && t[i] == ' ' {
			i++
		}
	}
	return i
}
