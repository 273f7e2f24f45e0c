package figure

import (
	"math"
	"strconv"
	"strings"
)

// Escape returns s with the five characters that are special in HTML and
// XML text and attributes replaced by entities.
func Escape(s string) string {
	if !strings.ContainsAny(s, "&<>\"'") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '"':
			b.WriteString("&#34;")
		case '\'':
			b.WriteString("&#39;")
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// num formats a coordinate with at most two decimals and no trailing zeros.
func num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "0"
	}
	s := strconv.FormatFloat(math.Round(v*100)/100, 'f', 2, 64)
	s = strings.TrimRight(s, "0")
	s = strings.TrimSuffix(s, ".")
	if s == "-0" {
		return "0"
	}
	return s
}

// Fixed formats v with prec decimals, like C's "%.*f".
func Fixed(v float64, prec int) string {
	if math.IsNaN(v) {
		return "NaN"
	}
	if math.IsInf(v, 1) {
		return "inf"
	}
	if math.IsInf(v, -1) {
		return "-inf"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// Short formats v with up to prec significant decimals, dropping trailing
// zeros ("24", "20.6", "0.35").
func Short(v float64, prec int) string {
	s := Fixed(v, prec)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	return s
}

// Itoa is strconv.Itoa, exported for callers that build labels.
func Itoa(i int) string { return strconv.Itoa(i) }

// Bytes formats a byte count with a binary unit: "8 B", "64 KiB", "1.5 MiB".
func Bytes(n float64) string {
	units := [...]string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	u := 0
	for n >= 1024 && u < len(units)-1 {
		n /= 1024
		u++
	}
	prec := 0
	if n != math.Trunc(n) {
		prec = 2
		if n >= 100 {
			prec = 0
		} else if n >= 10 {
			prec = 1
		}
	}
	return Short(n, prec) + " " + units[u]
}

// Duration formats microseconds as "850 ns", "12.5 µs", "3.2 ms" or "1.05 s".
func Duration(us float64) string {
	switch {
	case us < 1:
		return sig3(us*1000) + " ns"
	case us < 1000:
		return sig3(us) + " µs"
	case us < 1e6:
		return sig3(us/1000) + " ms"
	}
	return sig3(us/1e6) + " s"
}

// sig3 formats v with three significant digits (at least the integer
// part): 1234, 12.3, 1.23, 0.0123.
func sig3(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 100 || a == 0:
		return Short(v, 0)
	case a >= 10:
		return Short(v, 1)
	case a >= 1:
		return Short(v, 2)
	}
	return Short(v, min(12, 2-int(math.Floor(math.Log10(a)))))
}

// builder is a strings.Builder with helpers for SVG elements.
//
// Its s, attr and fattr methods are marked go:noinline: inlined at their
// ~150 call sites they made the package's code in the wasm binary half as
// large again (the playground's download is budgeted).
type builder struct{ strings.Builder }

// s writes strings.
//
//go:noinline
func (b *builder) s(parts ...string) {
	for _, p := range parts {
		b.WriteString(p)
	}
}

// attr writes ` name="value"` with the value escaped.
//
//go:noinline
func (b *builder) attr(name, value string) {
	b.WriteByte(' ')
	b.WriteString(name)
	b.WriteString(`="`)
	b.WriteString(Escape(value))
	b.WriteByte('"')
}

// fattr writes a numeric attribute.
//
//go:noinline
func (b *builder) fattr(name string, v float64) {
	b.WriteByte(' ')
	b.WriteString(name)
	b.WriteString(`="`)
	b.WriteString(num(v))
	b.WriteByte('"')
}

// text writes an SVG text element with escaped content.
func (b *builder) text(x, y float64, class, anchor, content string) {
	b.WriteString("<text")
	b.fattr("x", x)
	b.fattr("y", y)
	if class != "" {
		b.attr("class", class)
	}
	if anchor != "" {
		b.attr("text-anchor", anchor)
	}
	b.WriteByte('>')
	b.WriteString(Escape(content))
	b.WriteString("</text>")
}

// title writes an SVG <title> (the hover tooltip) with escaped content.
func (b *builder) title(content string) {
	b.WriteString("<title>")
	b.WriteString(Escape(content))
	b.WriteString("</title>")
}

// openSVG writes the root element with a viewBox of w x h.
func (b *builder) openSVG(class, label string, w, h float64) {
	b.s(`<svg xmlns="http://www.w3.org/2000/svg"`)
	b.attr("class", class)
	b.s(` viewBox="0 0 `, num(w), " ", num(h), `"`)
	b.fattr("width", w)
	b.fattr("height", h)
	b.attr("role", "group")
	b.attr("aria-label", label)
	b.WriteByte('>')
}
