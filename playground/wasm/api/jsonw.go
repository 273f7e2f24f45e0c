package api

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// jw writes JSON without reflection. Callers emit keys and values in
// order; jw inserts the commas. Floats are formatted as encoding/json
// formats them (shortest representation for the value's own precision), so
// the output parses to the same numbers as the CLI's.
//
// The methods are marked go:noinline: the package calls them at several
// hundred places, and inlined copies made its wasm code about 90 KB larger
// (20 KB gzip).
type jw struct {
	b []byte
	// first is true right after an opening bracket.
	first bool
}

//go:noinline
func (w *jw) sep() {
	if !w.first && len(w.b) > 0 {
		w.b = append(w.b, ',')
	}
	w.first = false
}

//go:noinline
func (w *jw) obj() { w.sep(); w.b = append(w.b, '{'); w.first = true }

//go:noinline
func (w *jw) end() { w.b = append(w.b, '}'); w.first = false }

//go:noinline
func (w *jw) arr() { w.sep(); w.b = append(w.b, '['); w.first = true }

//go:noinline
func (w *jw) endArr() {
	w.b = append(w.b, ']')
	w.first = false
}

// key writes an object key; the next value call writes its value.
//
//go:noinline
func (w *jw) key(k string) {
	w.sep()
	w.b = appendString(w.b, k)
	w.b = append(w.b, ':')
	w.first = true
}

//go:noinline
func (w *jw) str(s string) { w.sep(); w.b = appendString(w.b, s) }

//go:noinline
func (w *jw) int(i int) { w.sep(); w.b = strconv.AppendInt(w.b, int64(i), 10) }

//go:noinline
func (w *jw) i64(i int64) { w.sep(); w.b = strconv.AppendInt(w.b, i, 10) }

//go:noinline
func (w *jw) u64(i uint64) { w.sep(); w.b = strconv.AppendUint(w.b, i, 10) }

//go:noinline
func (w *jw) f32(f float32) { w.sep(); w.b = appendFloat(w.b, float64(f), 32) }

//go:noinline
func (w *jw) f64(f float64) { w.sep(); w.b = appendFloat(w.b, f, 64) }

//go:noinline
func (w *jw) null() { w.sep(); w.b = append(w.b, "null"...) }

//go:noinline
func (w *jw) raw(s string) { w.sep(); w.b = append(w.b, s...) }

//go:noinline
func (w *jw) kstr(k, v string) { w.key(k); w.str(v) }

//go:noinline
func (w *jw) kint(k string, v int) { w.key(k); w.int(v) }

//go:noinline
func (w *jw) kf32(k string, v float32) {
	w.key(k)
	w.f32(v)
}

//go:noinline
func (w *jw) kf64(k string, v float64) {
	w.key(k)
	w.f64(v)
}

//go:noinline
func (w *jw) kbool(k string, v bool) {
	w.key(k)
	w.bool(v)
}

//go:noinline
func (w *jw) bool(v bool) {
	w.sep()
	if v {
		w.b = append(w.b, "true"...)
	} else {
		w.b = append(w.b, "false"...)
	}
}

// strs writes an array of strings.
//
//go:noinline
func (w *jw) strs(list []string) {
	w.arr()
	for _, s := range list {
		w.str(s)
	}
	w.endArr()
}

// ints writes an array of ints.
//
//go:noinline
func (w *jw) ints(list []int) {
	w.arr()
	for _, v := range list {
		w.int(v)
	}
	w.endArr()
}

// String returns the JSON text.
//
//go:noinline
func (w *jw) String() string { return string(w.b) }

// appendFloat formats f the way encoding/json does: 'f' notation for
// magnitudes in [1e-6, 1e21), 'e' otherwise with a two-digit minimum
// exponent trimmed ("1e-07" becomes "1e-7"). JSON has no NaN or infinity;
// they become null.
func appendFloat(b []byte, f float64, bits int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	abs := math.Abs(f)
	fm := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			fm = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, fm, -1, bits)
	if fm == 'e' {
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string, byte for byte as encoding/json
// does: it escapes <, > and & (so the text is safe inside HTML), U+2028 and
// U+2029, uses the short escapes \b \f \n \r \t and \u00XX for the other
// control characters, and replaces invalid UTF-8 with U+FFFD.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
			i++
			continue
		}
		b = append(b, s[start:i]...)
		if c < utf8.RuneSelf {
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
