// Package printf formats text the way fmt's Printf family does, for the
// argument types the model packages print, without reflection.
//
// The model packages are linked into the playground's js/wasm binary, and
// fmt brings reflect, its type tables and its printers with it: about 170 KB
// of the binary's gzip budget of 1 MB. This package implements the subset of
// fmt those packages use, with the same output:
//
//   - verbs %v %s %q %d %x %X %o %O %b %c %t %e %E %f %F %g %G %w %%;
//   - flags '-', '+', '#', ' ', '0', width and precision, '*' for either;
//   - operands: bool, every integer and float kind, string, []byte, []string,
//     error, anything with a String() string method, and nil.
//
// Named types whose underlying type is basic (type Kind int) are not
// recognised without reflection: they must implement String or be converted
// at the call site. An unsupported operand prints as "%!v(unsupported)" so
// the mistake shows; a test type-checks every call site in the repository.
// Malformed formats print like fmt's ("%!d(string=x)", "%!d(MISSING)",
// "%!(EXTRA ...)"), except that the operand inside an error form is not
// padded and a type other than the basic ones is named "?". For every
// supported verb and operand the tests compare the output with fmt's byte for
// byte.
package printf

import (
	"errors"
	"io"
	"strconv"
	"unicode/utf8"
)

// Stringer is the method fmt's %v and %s use on operands that have it.
type Stringer interface {
	String() string
}

// Sprintf formats according to format and returns the string.
func Sprintf(format string, args ...any) string {
	return string(Appendf(nil, format, args...))
}

// Appendf formats according to format, appends to b and returns it.
func Appendf(b []byte, format string, args ...any) []byte {
	p := printer{buf: b}
	p.printf(format, args, false)
	return p.buf
}

// Fprintf formats according to format and writes to w.
func Fprintf(w io.Writer, format string, args ...any) (int, error) {
	return w.Write(Appendf(nil, format, args...))
}

// Sprint formats its operands with %v, adding spaces between operands when
// neither is a string, as fmt.Sprint does.
func Sprint(args ...any) string {
	p := printer{}
	p.print(args, false)
	return string(p.buf)
}

// Fprint is Sprint written to w.
func Fprint(w io.Writer, args ...any) (int, error) {
	p := printer{}
	p.print(args, false)
	return w.Write(p.buf)
}

// Sprintln formats its operands with %v, always separated by spaces, and
// ends with a newline, as fmt.Sprintln does.
func Sprintln(args ...any) string {
	p := printer{}
	p.print(args, true)
	return string(p.buf)
}

// Fprintln is Sprintln written to w.
func Fprintln(w io.Writer, args ...any) (int, error) {
	p := printer{}
	p.print(args, true)
	return w.Write(p.buf)
}

// Errorf formats according to format and returns the text as an error. An
// operand of %w that is an error is wrapped: errors.Is and errors.As see it
// (several %w operands give an error whose Unwrap returns all of them), as
// with fmt.Errorf.
func Errorf(format string, args ...any) error {
	p := printer{}
	p.printf(format, args, true)
	msg := string(p.buf)
	switch len(p.wrapped) {
	case 0:
		return errors.New(msg)
	case 1:
		return &wrapError{msg: msg, err: p.wrapped[0]}
	default:
		return &wrapErrors{msg: msg, errs: p.wrapped}
	}
}

type wrapError struct {
	msg string
	err error
}

func (e *wrapError) Error() string { return e.msg }
func (e *wrapError) Unwrap() error { return e.err }

type wrapErrors struct {
	msg  string
	errs []error
}

func (e *wrapErrors) Error() string   { return e.msg }
func (e *wrapErrors) Unwrap() []error { return e.errs }

// flags holds the state of one verb's flags, width and precision.
type flags struct {
	minus, plus, sharp, space, zero bool
	wid, prec                       int
	widPresent, precPresent         bool
}

type printer struct {
	buf     []byte
	f       flags
	wrapped []error
	errorf  bool
}

func (p *printer) print(args []any, ln bool) {
	prevString := false
	for i, a := range args {
		_, isString := a.(string)
		if i > 0 && (ln || (!isString && !prevString)) {
			p.buf = append(p.buf, ' ')
		}
		p.f = flags{}
		p.arg(a, 'v')
		prevString = isString
	}
	if ln {
		p.buf = append(p.buf, '\n')
	}
}

// argInt reads the operand of a '*' width or precision.
func argInt(args []any, n int) (v int, ok bool, next int) {
	if n >= len(args) {
		return 0, false, n
	}
	switch x := args[n].(type) {
	case int:
		v, ok = x, true
	case int8:
		v, ok = int(x), true
	case int16:
		v, ok = int(x), true
	case int32:
		v, ok = int(x), true
	case int64:
		v, ok = int(x), int64(int(x)) == x
	case uint:
		v, ok = int(x), int(x) >= 0
	case uint8:
		v, ok = int(x), true
	case uint16:
		v, ok = int(x), true
	case uint32:
		v, ok = int(x), int(x) >= 0
	case uint64:
		v, ok = int(x), int(x) >= 0 && uint64(int(x)) == x
	}
	const huge = 1e6 // fmt's limit on width and precision
	if v > huge || v < -huge {
		ok = false
	}
	return v, ok, n + 1
}

// parseNum reads a decimal number at format[i:].
func parseNum(s string, i int) (num int, ok bool, next int) {
	for next = i; next < len(s) && '0' <= s[next] && s[next] <= '9'; next++ {
		if num > 1e6 {
			return 0, false, len(s) // absurd width: fmt gives up as well
		}
		num = num*10 + int(s[next]-'0')
		ok = true
	}
	return num, ok, next
}

func (p *printer) printf(format string, args []any, errorf bool) {
	p.errorf = errorf
	argNum := 0
	end := len(format)
	for i := 0; i < end; {
		lasti := i
		for i < end && format[i] != '%' {
			i++
		}
		p.buf = append(p.buf, format[lasti:i]...)
		if i >= end {
			break
		}
		i++ // skip %
		p.f = flags{}
	flagLoop:
		for ; i < end; i++ {
			switch format[i] {
			case '#':
				p.f.sharp = true
			case '0':
				p.f.zero = true
			case '+':
				p.f.plus = true
			case '-':
				p.f.minus = true
			case ' ':
				p.f.space = true
			default:
				break flagLoop
			}
		}
		// Width.
		if i < end && format[i] == '*' {
			i++
			p.f.wid, p.f.widPresent, argNum = argInt(args, argNum)
			if !p.f.widPresent {
				p.buf = append(p.buf, "%!(BADWIDTH)"...)
			}
			if p.f.wid < 0 {
				p.f.wid = -p.f.wid
				p.f.minus = true
				p.f.zero = false
			}
		} else {
			p.f.wid, p.f.widPresent, i = parseNum(format, i)
		}
		// Precision.
		if i+1 < end && format[i] == '.' {
			i++
			if i < end && format[i] == '*' {
				i++
				p.f.prec, p.f.precPresent, argNum = argInt(args, argNum)
				if p.f.prec < 0 {
					p.f.prec = 0
					p.f.precPresent = false
				}
				if !p.f.precPresent {
					p.buf = append(p.buf, "%!(BADPREC)"...)
				}
			} else {
				p.f.prec, p.f.precPresent, i = parseNum(format, i)
				if !p.f.precPresent {
					p.f.prec, p.f.precPresent = 0, true
				}
			}
		}
		// fmt keeps '0' only when padding on the left.
		p.f.zero = p.f.zero && !p.f.minus
		if i >= end {
			p.buf = append(p.buf, "%!(NOVERB)"...)
			break
		}
		verb, size := rune(format[i]), 1
		if verb >= utf8.RuneSelf {
			verb, size = utf8.DecodeRuneInString(format[i:])
		}
		i += size
		switch {
		case verb == '%':
			p.buf = append(p.buf, '%')
		case argNum >= len(args):
			p.buf = append(p.buf, "%!"...)
			p.buf = utf8.AppendRune(p.buf, verb)
			p.buf = append(p.buf, "(MISSING)"...)
		case verb == 'w' && p.errorf:
			if err, ok := args[argNum].(error); ok && err != nil {
				p.wrapped = append(p.wrapped, err)
				p.arg(err, 'v')
			} else {
				p.bad(args[argNum], verb)
			}
			argNum++
		case verb == 'v' && p.f.sharp:
			// %#v prints Go syntax, which needs the operand's type.
			p.buf = append(p.buf, "%!v(unsupported)"...)
			argNum++
		default:
			if verb == 'v' {
				p.f.plus = false // %+v is fmt's struct-field syntax
			}
			p.arg(args[argNum], verb)
			argNum++
		}
	}
	if argNum < len(args) {
		p.buf = append(p.buf, "%!(EXTRA "...)
		for k, a := range args[argNum:] {
			if k > 0 {
				p.buf = append(p.buf, ", "...)
			}
			if a == nil {
				p.buf = append(p.buf, "<nil>"...)
				continue
			}
			p.buf = append(p.buf, typeName(a)...)
			p.buf = append(p.buf, '=')
			p.f = flags{}
			p.arg(a, 'v')
		}
		p.buf = append(p.buf, ')')
	}
}

// typeName names the operand's type for error forms, as far as it is known
// without reflection.
func typeName(a any) string {
	switch a.(type) {
	case bool:
		return "bool"
	case int:
		return "int"
	case int8:
		return "int8"
	case int16:
		return "int16"
	case int32:
		return "int32"
	case int64:
		return "int64"
	case uint:
		return "uint"
	case uint8:
		return "uint8"
	case uint16:
		return "uint16"
	case uint32:
		return "uint32"
	case uint64:
		return "uint64"
	case uintptr:
		return "uintptr"
	case float32:
		return "float32"
	case float64:
		return "float64"
	case string:
		return "string"
	case []byte:
		return "[]uint8"
	case []string:
		return "[]string"
	}
	return "?"
}

// bad writes fmt's form for a verb the operand does not support.
func (p *printer) bad(a any, verb rune) {
	p.buf = append(p.buf, "%!"...)
	p.buf = utf8.AppendRune(p.buf, verb)
	p.buf = append(p.buf, '(')
	if a == nil {
		p.buf = append(p.buf, "<nil>"...)
	} else {
		p.buf = append(p.buf, typeName(a)...)
		p.buf = append(p.buf, '=')
		f := p.f
		p.f = flags{}
		p.arg(a, 'v')
		p.f = f
	}
	p.buf = append(p.buf, ')')
}

func (p *printer) arg(a any, verb rune) {
	if a == nil {
		if verb == 'v' {
			p.pad([]byte("<nil>"))
		} else {
			p.bad(a, verb)
		}
		return
	}
	switch x := a.(type) {
	case bool:
		p.boolean(a, x, verb)
	case int:
		p.integer(a, uint64(x), x < 0, verb)
	case int8:
		p.integer(a, uint64(x), x < 0, verb)
	case int16:
		p.integer(a, uint64(x), x < 0, verb)
	case int32:
		p.integer(a, uint64(x), x < 0, verb)
	case int64:
		p.integer(a, uint64(x), x < 0, verb)
	case uint:
		p.integer(a, uint64(x), false, verb)
	case uint8:
		p.integer(a, uint64(x), false, verb)
	case uint16:
		p.integer(a, uint64(x), false, verb)
	case uint32:
		p.integer(a, uint64(x), false, verb)
	case uint64:
		p.integer(a, x, false, verb)
	case uintptr:
		p.integer(a, uint64(x), false, verb)
	case float32:
		p.float(a, float64(x), 32, verb)
	case float64:
		p.float(a, x, 64, verb)
	case string:
		p.str(a, x, verb)
	case []byte:
		if verb == 's' || verb == 'q' || verb == 'x' || verb == 'X' {
			p.str(a, string(x), verb)
			return
		}
		p.list(a, len(x), func(i int) any { return x[i] }, verb)
	case []string:
		p.list(a, len(x), func(i int) any { return x[i] }, verb)
	case error:
		p.method(a, x.Error, verb)
	case Stringer:
		p.method(a, x.String, verb)
	default:
		p.buf = append(p.buf, "%!"...)
		p.buf = utf8.AppendRune(p.buf, verb)
		p.buf = append(p.buf, "(unsupported)"...)
	}
}

// method prints an error or Stringer: its text for the string verbs, fmt's
// error form otherwise (the value itself needs reflection).
func (p *printer) method(a any, text func() string, verb rune) {
	switch verb {
	case 'v', 's', 'q', 'x', 'X':
		p.str(a, text(), verb)
	default:
		p.buf = append(p.buf, "%!"...)
		p.buf = utf8.AppendRune(p.buf, verb)
		p.buf = append(p.buf, "(unsupported)"...)
	}
}

// list prints a slice as fmt does: "[a b c]", each element with the verb.
func (p *printer) list(a any, n int, at func(int) any, verb rune) {
	p.buf = append(p.buf, '[')
	for i := 0; i < n; i++ {
		if i > 0 {
			p.buf = append(p.buf, ' ')
		}
		p.arg(at(i), verb)
	}
	p.buf = append(p.buf, ']')
}

func (p *printer) boolean(a any, v bool, verb rune) {
	switch verb {
	case 't', 'v':
		p.pad([]byte(strconv.FormatBool(v)))
	default:
		p.bad(a, verb)
	}
}

func (p *printer) integer(a any, u uint64, neg bool, verb rune) {
	switch verb {
	case 'v', 'd':
		p.fmtInteger(u, neg, 10, verb, "0123456789abcdefx")
	case 'b':
		p.fmtInteger(u, neg, 2, verb, "0123456789abcdefx")
	case 'o', 'O':
		p.fmtInteger(u, neg, 8, verb, "0123456789abcdefx")
	case 'x':
		p.fmtInteger(u, neg, 16, verb, "0123456789abcdefx")
	case 'X':
		p.fmtInteger(u, neg, 16, verb, "0123456789ABCDEFX")
	case 'c':
		r := rune(u)
		if neg || u > utf8.MaxRune {
			r = utf8.RuneError
		}
		p.pad(utf8.AppendRune(nil, r))
	case 'q':
		r := rune(u)
		if neg || u > utf8.MaxRune {
			r = utf8.RuneError
		}
		if p.f.plus {
			p.pad(strconv.AppendQuoteRuneToASCII(nil, r))
		} else {
			p.pad(strconv.AppendQuoteRune(nil, r))
		}
	default:
		p.bad(a, verb)
	}
}

// fmtInteger follows fmt's integer formatting: precision is a minimum number
// of digits, '0' pads to the width after the sign, '#' adds the base prefix.
func (p *printer) fmtInteger(u uint64, neg bool, base int, verb rune, digits string) {
	if neg {
		u = -u
	}
	var num []byte
	prec := 0
	if p.f.precPresent {
		prec = p.f.prec
		if prec == 0 && u == 0 {
			// An explicit zero precision prints no digits for zero.
			f := p.f
			p.f.zero = false
			p.writePadding(p.f.wid)
			p.f = f
			return
		}
	} else if p.f.zero && p.f.widPresent && !p.f.minus {
		prec = p.f.wid
		if neg || p.f.plus || p.f.space {
			prec-- // leave room for the sign
		}
	}
	for u >= uint64(base) {
		num = append(num, digits[u%uint64(base)])
		u /= uint64(base)
	}
	num = append(num, digits[u])
	for len(num) < prec {
		num = append(num, '0')
	}
	if p.f.sharp {
		switch base {
		case 2:
			num = append(num, 'b', '0')
		case 8:
			if num[len(num)-1] != '0' {
				num = append(num, '0')
			}
		case 16:
			num = append(num, digits[16], '0')
		}
	}
	if verb == 'O' {
		num = append(num, 'o', '0')
	}
	switch {
	case neg:
		num = append(num, '-')
	case p.f.plus:
		num = append(num, '+')
	case p.f.space:
		num = append(num, ' ')
	}
	for i, j := 0, len(num)-1; i < j; i, j = i+1, j-1 {
		num[i], num[j] = num[j], num[i]
	}
	f := p.f
	p.f.zero = false // zeros are already in num
	p.pad(num)
	p.f = f
}

func (p *printer) float(a any, v float64, size int, verb rune) {
	switch verb {
	case 'v':
		p.fmtFloat(v, size, 'g', -1)
	case 'b', 'g', 'G', 'x', 'X':
		p.fmtFloat(v, size, verb, -1)
	case 'f', 'e', 'E', 'F':
		p.fmtFloat(v, size, verb, 6)
	default:
		p.bad(a, verb)
	}
}

// fmtFloat mirrors fmt's float formatting on top of strconv.
func (p *printer) fmtFloat(v float64, size int, verb rune, prec int) {
	if p.f.precPresent {
		prec = p.f.prec
	}
	fverb := byte(verb)
	if verb == 'F' {
		fverb = 'f'
	}
	num := strconv.AppendFloat([]byte{'+'}, v, fverb, prec, size)
	if num[1] == '-' || num[1] == '+' {
		num = num[1:]
	} else {
		num[0] = '+'
	}
	if p.f.space && num[0] == '+' && !p.f.plus {
		num[0] = ' '
	}
	// Infinities and NaN are never padded with zeros.
	if num[1] == 'I' || num[1] == 'N' {
		f := p.f
		p.f.zero = false
		if num[1] == 'N' && !p.f.space && !p.f.plus {
			num = num[1:]
		}
		p.pad(num)
		p.f = f
		return
	}
	if p.f.sharp && verb != 'b' {
		num = sharpFloat(num, verb, prec)
	}
	if p.f.plus || num[0] != '+' {
		// Keep the sign; pad zeros after it.
		if p.f.zero && !p.f.minus && p.f.widPresent && p.f.wid > len(num) {
			p.buf = append(p.buf, num[0])
			p.writeZeros(p.f.wid - len(num))
			p.buf = append(p.buf, num[1:]...)
			return
		}
		p.pad(num)
		return
	}
	p.pad(num[1:])
}

// sharpFloat applies '#': keep a decimal point, and for %g/%G keep trailing
// zeros up to the precision.
func sharpFloat(num []byte, verb rune, prec int) []byte {
	digits := 0
	switch verb {
	case 'v', 'g', 'G', 'x':
		digits = prec
		if digits == -1 {
			digits = 6
		}
	}
	var tail []byte
	sawNonzero, hasDot := false, false
	for i := 1; i < len(num); i++ {
		c := num[i]
		switch {
		case c == '.':
			hasDot = true
			continue
		case c == 'p' || c == 'P':
			tail = append(tail, num[i:]...)
			num = num[:i]
			continue
		case (c == 'e' || c == 'E') && verb != 'x' && verb != 'X':
			tail = append(tail, num[i:]...)
			num = num[:i]
			continue
		}
		// fmt counts every character after the first non-zero one,
		// the 'x' of a hex float's "0x" included.
		if c != '0' {
			sawNonzero = true
		}
		if sawNonzero {
			digits--
		}
	}
	if !hasDot {
		if len(num) == 2 && num[1] == '0' {
			digits--
		}
		num = append(num, '.')
	}
	for digits > 0 {
		num = append(num, '0')
		digits--
	}
	return append(num, tail...)
}

func (p *printer) str(a any, s string, verb rune) {
	switch verb {
	case 'v', 's':
		if p.f.precPresent {
			s = truncate(s, p.f.prec)
		}
		p.padString(s)
	case 'q':
		if p.f.precPresent {
			s = truncate(s, p.f.prec)
		}
		switch {
		case p.f.sharp && strconv.CanBackquote(s):
			p.padString("`" + s + "`")
		case p.f.plus:
			p.pad(strconv.AppendQuoteToASCII(nil, s))
		default:
			p.pad(strconv.AppendQuote(nil, s))
		}
	case 'x', 'X':
		p.hexString(s, verb)
	default:
		p.bad(a, verb)
	}
}

func (p *printer) hexString(s string, verb rune) {
	digits := "0123456789abcdef"
	if verb == 'X' {
		digits = "0123456789ABCDEF"
	}
	n := len(s)
	if p.f.precPresent && p.f.prec < n {
		n = p.f.prec
	}
	var b []byte
	for i := 0; i < n; i++ {
		if p.f.space && i > 0 {
			b = append(b, ' ')
		}
		if p.f.sharp && (p.f.space || i == 0) {
			b = append(b, '0', byte(verb))
		}
		b = append(b, digits[s[i]>>4], digits[s[i]&0xF])
	}
	p.pad(b)
}

// truncate keeps the first n runes of s.
func truncate(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// pad writes b padded to the width; '0' pads with zeros on the left.
func (p *printer) pad(b []byte) { p.padString(string(b)) }

// padString writes s padded to the width.
func (p *printer) padString(s string) {
	if !p.f.widPresent || p.f.wid == 0 {
		p.buf = append(p.buf, s...)
		return
	}
	width := p.f.wid - utf8.RuneCountInString(s)
	if p.f.minus {
		p.buf = append(p.buf, s...)
		p.writePadding(width)
		return
	}
	p.writePadding(width)
	p.buf = append(p.buf, s...)
}

func (p *printer) writePadding(n int) {
	if n <= 0 {
		return
	}
	c := byte(' ')
	if p.f.zero && !p.f.minus {
		c = '0'
	}
	for ; n > 0; n-- {
		p.buf = append(p.buf, c)
	}
}

func (p *printer) writeZeros(n int) {
	for ; n > 0; n-- {
		p.buf = append(p.buf, '0')
	}
}
