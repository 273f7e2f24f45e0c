// Package ncclsrc finds the log calls in NCCL's C/C++ source: every WARN,
// INFO, TRACE (and their _LOC variants, TRACE_CALL and VERSION) with its
// line, severity, subsystem flags and format string. It reads source text
// only; the catalog generator (internal/catalog-gen) feeds it the files of a
// release tag and writes what it finds under data/messages.
//
// Extract tokenizes the source (comments, string and character literals,
// nested parentheses), so a call split over several lines, a format built
// from adjacent literals and PRIu64-style macros, or a parenthesis inside a
// string is read correctly. CountCalls is deliberately naive (a regular
// expression over comment-stripped lines) and shares no code with Extract:
// the catalog tests compare the two so that a call Extract misses fails.
package ncclsrc

import (
	"regexp"
	"strings"
)

// Call is one log call site.
type Call struct {
	Line    int    // line of the macro name, 1-based
	EndLine int    // line of the closing parenthesis
	Macro   string // WARN, INFO, TRACE, INFO_LOC, ...
	// Severity is the level the call prints at: WARN, INFO, TRACE, CALL
	// (TRACE_CALL) or VERSION.
	Severity string
	// Subsystem is the flags argument without the NCCL_ prefixes
	// ("INIT|ENV"); "ALL" for WARN, VERSION and TRACE_CALL.
	Subsystem string
	// Format is the format string as C sees it after concatenation, with
	// the _LOC prefix "%s:%d (%s) " included. Empty when the format is not a
	// literal (Dynamic).
	Format  string
	Dynamic bool
}

// macros maps each log macro to its severity and the index of its format
// argument; flagsArg is the index of the flags argument or -1.
var macros = map[string]struct {
	severity          string
	fmtArg, flagsArg  int
	locPrefix, noFlag bool
}{
	"WARN":         {"WARN", 0, -1, false, true},
	"VERSION":      {"VERSION", 0, -1, false, true},
	"TRACE_CALL":   {"CALL", 0, -1, false, true},
	"INFO":         {"INFO", 1, 0, false, false},
	"TRACE":        {"TRACE", 1, 0, false, false},
	"INFO_LOC":     {"INFO", 1, 0, true, false},
	"TRACE_LOC":    {"TRACE", 1, 0, true, false},
	"INFO_LOC_FN":  {"INFO", 4, 0, true, false},
	"TRACE_LOC_FN": {"TRACE", 4, 0, true, false},
}

// MacroNames lists the macros Extract and CountCalls look for.
func MacroNames() []string {
	return []string{"WARN", "VERSION", "TRACE_CALL", "INFO", "TRACE", "INFO_LOC", "TRACE_LOC", "INFO_LOC_FN", "TRACE_LOC_FN"}
}

// pri maps the <inttypes.h> macros NCCL splices into formats to what they
// expand to on Linux x86-64 and aarch64.
var pri = map[string]string{
	"PRIu64": "lu", "PRId64": "ld", "PRIx64": "lx", "PRIX64": "lX", "PRIi64": "li",
	"PRIu32": "u", "PRId32": "d", "PRIx32": "x", "PRIX32": "X", "PRIi32": "i",
	"PRIu16": "hu", "PRIu8": "hhu", "PRIxPTR": "lx", "PRIuPTR": "lu",
}

// Extract returns the log calls of one source file in source order.
func Extract(src string) []Call {
	s := &scanner{src: src, line: 1}
	var out []Call
	for {
		tok, ok := s.next()
		if !ok {
			return out
		}
		if tok.kind != tokIdent {
			continue
		}
		m, isMacro := macros[tok.text]
		if !isMacro || tok.afterDefine {
			continue
		}
		save := *s
		p, ok := s.next()
		if !ok || p.kind != tokPunct || p.text != "(" {
			*s = save
			continue
		}
		args, end := s.args()
		c := Call{Line: tok.line, EndLine: end, Macro: tok.text, Severity: m.severity, Subsystem: "ALL"}
		if m.flagsArg >= 0 && m.flagsArg < len(args) {
			c.Subsystem = subsystem(args[m.flagsArg])
		}
		if m.fmtArg < len(args) {
			c.Format, c.Dynamic = format(args[m.fmtArg])
		} else {
			c.Dynamic = true
		}
		if m.locPrefix && !c.Dynamic {
			c.Format = "%s:%d (%s) " + c.Format
		}
		out = append(out, c)
	}
}

// subsystem turns "NCCL_INIT | NCCL_ENV" into "INIT|ENV".
func subsystem(arg []token) string {
	var b strings.Builder
	for _, t := range arg {
		if t.kind == tokPunct && (t.text == "(" || t.text == ")") {
			continue
		}
		if t.kind == tokPunct && t.text == "unsigned" {
			continue
		}
		b.WriteString(strings.TrimPrefix(t.text, "NCCL_"))
	}
	return b.String()
}

// format concatenates the literals of a format argument. A known PRI macro
// is spliced in; any other identifier (or #identifier) between literals is
// a macro parameter spliced in by the preprocessor, e.g. `"Call to " name "
// failed"`, and becomes a "%s" hole. dynamic is true when the argument holds
// no literal or anything else (a variable, a call, a ternary).
func format(arg []token) (string, bool) {
	var b strings.Builder
	lits := 0
	for i, t := range arg {
		switch {
		case t.kind == tokString:
			b.WriteString(t.text)
			lits++
		case t.kind == tokIdent && pri[t.text] != "":
			b.WriteString(pri[t.text])
		case t.kind == tokIdent:
			b.WriteString("%s")
		case t.kind == tokPunct && t.text == "#" && i+1 < len(arg) && arg[i+1].kind == tokIdent:
			// #param: the next identifier writes the hole
		default:
			return "", true
		}
	}
	if lits == 0 {
		return "", true
	}
	return b.String(), false
}

type tokKind int

const (
	tokIdent tokKind = iota
	tokString
	tokPunct
	tokOther
)

type token struct {
	kind        tokKind
	text        string // identifier, punctuation, or the unescaped string value
	line        int
	afterDefine bool // an identifier right after "#define"
}

// scanner is a small C tokenizer: enough to find calls and their arguments.
type scanner struct {
	src        string
	pos        int
	line       int
	lineStart  bool // only whitespace since the last newline
	directive  int  // tokens seen on a # line, 0 when not in one
	defineNext bool
}

func (s *scanner) next() (token, bool) {
	for s.pos < len(s.src) {
		c := s.src[s.pos]
		switch {
		case c == '\n':
			s.line++
			s.pos++
			s.directive = 0
			s.defineNext = false
			continue
		case c == '\\' && s.pos+1 < len(s.src) && s.src[s.pos+1] == '\n':
			s.pos += 2
			s.line++
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			s.pos++
			continue
		case strings.HasPrefix(s.src[s.pos:], "//"):
			for s.pos < len(s.src) && s.src[s.pos] != '\n' {
				if s.src[s.pos] == '\\' && s.pos+1 < len(s.src) && s.src[s.pos+1] == '\n' {
					s.pos++
					s.line++
				}
				s.pos++
			}
			continue
		case strings.HasPrefix(s.src[s.pos:], "/*"):
			end := strings.Index(s.src[s.pos+2:], "*/")
			if end < 0 {
				end = len(s.src) - s.pos - 2
			}
			s.line += strings.Count(s.src[s.pos:s.pos+2+end], "\n")
			s.pos += 2 + end + 2
			continue
		}
		line := s.line
		switch {
		case c == '"':
			return token{kind: tokString, text: s.stringLit('"'), line: line}, true
		case c == '\'':
			s.stringLit('\'')
			return token{kind: tokOther, text: "'", line: line}, true
		case isIdentStart(c):
			start := s.pos
			for s.pos < len(s.src) && isIdent(s.src[s.pos]) {
				s.pos++
			}
			word := s.src[start:s.pos]
			// String prefixes: u8"..", L"..", R"(..)" raw strings.
			if s.pos < len(s.src) && s.src[s.pos] == '"' && (word == "u8" || word == "L" || word == "u" || word == "U") {
				return token{kind: tokString, text: s.stringLit('"'), line: line}, true
			}
			if s.pos < len(s.src) && s.src[s.pos] == '"' && word == "R" {
				return token{kind: tokString, text: s.rawString(), line: line}, true
			}
			t := token{kind: tokIdent, text: word, line: line, afterDefine: s.defineNext}
			s.defineNext = s.directive == 1 && word == "define"
			if s.directive > 0 {
				s.directive++
			}
			return t, true
		case c >= '0' && c <= '9':
			for s.pos < len(s.src) && (isIdent(s.src[s.pos]) || s.src[s.pos] == '.') {
				s.pos++
			}
			s.defineNext = false
			return token{kind: tokOther, text: "0", line: line}, true
		default:
			s.pos++
			if c == '#' && s.directive == 0 {
				s.directive = 1
			}
			s.defineNext = false
			return token{kind: tokPunct, text: string(c), line: line}, true
		}
	}
	return token{}, false
}

// args reads the arguments of a call after its "(" up to the matching ")",
// split at top-level commas; it returns them and the line of the ")".
func (s *scanner) args() ([][]token, int) {
	var out [][]token
	var cur []token
	depth := 0
	for {
		t, ok := s.next()
		if !ok {
			return append(out, cur), s.line
		}
		if t.kind == tokPunct {
			switch t.text {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				if depth == 0 {
					return append(out, cur), t.line
				}
				depth--
			case ",":
				if depth == 0 {
					out = append(out, cur)
					cur = nil
					continue
				}
			}
		}
		cur = append(cur, t)
	}
}

// stringLit reads a quoted literal starting at s.pos and returns its value
// with the simple escapes resolved (\n, \t, \", \\, octal and hex kept as
// the byte they name).
func (s *scanner) stringLit(q byte) string {
	s.pos++ // opening quote
	var b strings.Builder
	for s.pos < len(s.src) {
		c := s.src[s.pos]
		if c == q {
			s.pos++
			break
		}
		if c == '\n' { // unterminated: stop at the line end
			break
		}
		if c == '\\' && s.pos+1 < len(s.src) {
			e := s.src[s.pos+1]
			s.pos += 2
			switch e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '0', '1', '2', '3', '4', '5', '6', '7':
				v := int(e - '0')
				for k := 0; k < 2 && s.pos < len(s.src) && s.src[s.pos] >= '0' && s.src[s.pos] <= '7'; k++ {
					v = v*8 + int(s.src[s.pos]-'0')
					s.pos++
				}
				b.WriteByte(byte(v))
			case 'x':
				v := 0
				for s.pos < len(s.src) && isHex(s.src[s.pos]) {
					v = v*16 + hexVal(s.src[s.pos])
					s.pos++
				}
				b.WriteByte(byte(v))
			case '\n':
				s.line++
			default:
				b.WriteByte(e)
			}
			continue
		}
		b.WriteByte(c)
		s.pos++
	}
	return b.String()
}

// rawString reads R"delim(...)delim".
func (s *scanner) rawString() string {
	s.pos++ // quote
	open := strings.IndexByte(s.src[s.pos:], '(')
	if open < 0 {
		return ""
	}
	delim := s.src[s.pos : s.pos+open]
	s.pos += open + 1
	end := strings.Index(s.src[s.pos:], ")"+delim+"\"")
	if end < 0 {
		end = len(s.src) - s.pos
	}
	v := s.src[s.pos : s.pos+end]
	s.line += strings.Count(v, "\n")
	s.pos = min(len(s.src), s.pos+end+len(delim)+2)
	return v
}

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isIdent(c byte) bool { return isIdentStart(c) || (c >= '0' && c <= '9') }

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func hexVal(c byte) int {
	switch {
	case c >= 'a':
		return int(c-'a') + 10
	case c >= 'A':
		return int(c-'A') + 10
	}
	return int(c - '0')
}

// callRe finds a macro name followed by "(" on one line.
var callRe = regexp.MustCompile(`\b(` + strings.Join(MacroNames(), "|") + `)\s*\(`)

// defineRe matches the definition of a log macro.
var defineRe = regexp.MustCompile(`#\s*define\s+(` + strings.Join(MacroNames(), "|") + `)\(`)

// CountCalls counts log-macro calls the naive way: every "NAME(" on a line
// after cutting "//" comments, minus "#define NAME(" lines, with whole
// "/* ... */" blocks removed first. It does not understand strings, so a
// "WARN(" inside a literal would count; Extract's result is checked against
// it, and the two disagreeing on a file is a failure to look at.
func CountCalls(src string) int {
	src = blockComment.ReplaceAllStringFunc(src, func(m string) string {
		return strings.Repeat("\n", strings.Count(m, "\n"))
	})
	n := 0
	for _, line := range strings.Split(src, "\n") {
		if i := strings.Index(line, "//"); i >= 0 && !strings.Contains(line[:i], "\"") {
			line = line[:i]
		}
		n += len(callRe.FindAllString(line, -1)) - len(defineRe.FindAllString(line, -1))
	}
	return n
}

var blockComment = regexp.MustCompile(`(?s)/\*.*?\*/`)
