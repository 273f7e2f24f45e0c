package printf

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
)

type stringer struct{ s string }

func (s stringer) String() string { return "S<" + s.s + ">" }

var sentinel = errors.New("disk on fire")

// differential lists formats and operands whose output must equal fmt's; the
// expected value is computed by fmt itself, so every row is a golden derived
// from the standard library.
var differential = []struct {
	format string
	args   []any
}{
	{"plain text", nil},
	{"%d %d %d %d %d", []any{0, -7, int64(math.MinInt64), uint64(math.MaxUint64), int8(-128)}},
	{"%5d|%-5d|%05d|%+d|% d|%+05d|%x|%X|%#x|%o|%#o|%b|%O", []any{42, 42, 42, 42, 42, -42, 255, 255, 255, 8, 8, 5, 8}},
	{"%.3d|%8.3d|%.0d|%5.0d|%08.3d", []any{7, 7, 0, 0, -7}},
	{"%s|%10s|%-10s|%.2s|%q|%+q|%#q|%x|% x|%#x|%X|%05s", []any{"héllo", "ab", "ab", "héllo", "a\"b\n", "é", "back`", "hi", "hi", "hi", "hi", "ab"}},
	{"%v %v %v %v", []any{true, 3.5, "s", uint8(9)}},
	{"%t|%6t|%-6t|", []any{false, true, true}},
	{"%g|%g|%g|%g|%g|%g|%g", []any{1e6, 1e-5, 123456.0, 0.000123, 100.0, math.Inf(1), math.NaN()}},
	{"%.1f|%.0f|%8.2f|%-8.2f|%08.2f|%+.2f|% .2f|%f|%.3g|%e|%E|%.2e|%G", []any{3.14159, 2.5, -3.14159, 3.14159, -3.14159, 2.0, 2.0, 1.0 / 3, 1234.5678, 123456.789, 0.000123, 9.999, 1e21}},
	{"%#g|%#.3g|%#f|%#.0f|%#e|%#.4g|%#x", []any{1.0, 2.0, 3.0, 3.0, 1.0, 123.0, 1.0}},
	{"%v %v %.2f %g", []any{float32(0.1), float32(16.5), float32(1.005), float32(1e10)}},
	{"%08.3f|%-08.3f|%+08.3f|% 08.3f|%8f|%08v", []any{-1.5, 1.5, 1.5, 1.5, math.Inf(-1), math.NaN()}},
	{"%c|%c|%q|%5c|%-3c|", []any{'A', 0x1F600, 'x', 'z', 'z'}},
	{"%*d|%-*d|%.*f|%*.*f|%*s", []any{6, 42, 6, 42, 2, math.Pi, 8, 3, math.E, -5, "ab"}},
	{"%v|%s|%q|%d", []any{stringer{"x"}, stringer{"y"}, stringer{"z"}, 3}},
	{"%v|%s|%10v|%-12s|", []any{sentinel, sentinel, sentinel, sentinel}},
	{"%v %v %s %x", []any{[]string{"a", "b"}, []byte("hi"), []byte("hi"), []byte{1, 255}}},
	{"%v %d", []any{[]byte{1, 2}, []byte{3, 4}}},
	{"%v|%s|%d", []any{nil, nil, nil}},
	{"100%%|%d%%", []any{5}},
	{"%d %s", []any{1}},
	{"%d", []any{1, "extra", 2.5}},
	{"%s %d %t %f", []any{5, "x", 1, "y"}},
	{"%z", []any{3}},
	{"%", nil},
	{"%!", []any{1}},
	{"%-5", []any{1}},
	{"%.", []any{1}},
	{"%d %d", []any{int16(-3), uint32(7)}},
	{"%x %X", []any{-255, int64(-1)}},
	{"%6.2f%%", []any{99.5}},
	{"%14s%13s%8d%14d", []any{"a", "b", 3, 4}},
	{"%2d %3d %02d %8s", []any{1, 22, 3, "x"}},
	{"%.*f", []any{"bad", 1.0}},
	{"%*d", []any{1.5, 2}},
	{"%-010d|%0-10d|", []any{5, 5}},
	{"%#X|%#o|%#b", []any{uint(3054), 0, 5}},
	{"%v", []any{uintptr(12)}},
}

func TestMatchesFmt(t *testing.T) {
	for _, c := range differential {
		want := fmt.Sprintf(c.format, c.args...)
		if got := Sprintf(c.format, c.args...); got != want {
			t.Errorf("Sprintf(%q, %#v)\n got %q\nwant %q", c.format, c.args, got, want)
		}
	}
}

func TestPrintAndPrintln(t *testing.T) {
	cases := [][]any{
		nil,
		{"a", "b"},
		{1, 2},
		{"a", 1, 2, "b", 3.5},
		{true, stringer{"q"}, sentinel, nil},
		{[]string{"x"}, []byte("y")},
	}
	for _, args := range cases {
		if got, want := Sprint(args...), fmt.Sprint(args...); got != want {
			t.Errorf("Sprint(%#v) = %q, want %q", args, got, want)
		}
		if got, want := Sprintln(args...), fmt.Sprintln(args...); got != want {
			t.Errorf("Sprintln(%#v) = %q, want %q", args, got, want)
		}
		var a, b bytes.Buffer
		Fprint(&a, args...)
		fmt.Fprint(&b, args...)
		if a.String() != b.String() {
			t.Errorf("Fprint(%#v) = %q, want %q", args, a.String(), b.String())
		}
		a.Reset()
		b.Reset()
		Fprintln(&a, args...)
		fmt.Fprintln(&b, args...)
		if a.String() != b.String() {
			t.Errorf("Fprintln(%#v) = %q, want %q", args, a.String(), b.String())
		}
	}
	var a bytes.Buffer
	n, err := Fprintf(&a, "%s=%d\n", "x", 3)
	if err != nil || n != 4 || a.String() != "x=3\n" {
		t.Errorf("Fprintf wrote %q, %d, %v", a.String(), n, err)
	}
	if _, err := Fprintf(failWriter{}, "x"); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("Fprintf error = %v, want the writer's", err)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }

func TestErrorfWraps(t *testing.T) {
	other := errors.New("second")
	cases := []struct {
		format string
		args   []any
		is     []error
		isNot  []error
	}{
		{"read %s: %w", []any{"x.xml", sentinel}, []error{sentinel}, []error{other}},
		{"no wrap %v", []any{sentinel}, nil, []error{sentinel}},
		{"both %w and %w", []any{sentinel, other}, []error{sentinel, other}, nil},
		{"not an error %w", []any{"s"}, nil, []error{sentinel}},
		{"nil %w", []any{nil}, nil, []error{sentinel}},
	}
	for _, c := range cases {
		got := Errorf(c.format, c.args...)
		want := fmt.Errorf(c.format, c.args...)
		if got.Error() != want.Error() {
			t.Errorf("Errorf(%q) text %q, fmt gives %q", c.format, got.Error(), want.Error())
		}
		for _, e := range c.is {
			if !errors.Is(got, e) {
				t.Errorf("Errorf(%q): errors.Is(%v) = false", c.format, e)
			}
		}
		for _, e := range c.isNot {
			if errors.Is(got, e) {
				t.Errorf("Errorf(%q): errors.Is(%v) = true", c.format, e)
			}
		}
	}
	var pe *pathErr
	if err := Errorf("ctx: %w", &pathErr{"p"}); !errors.As(err, &pe) || pe.p != "p" {
		t.Errorf("errors.As through Errorf failed: %v", err)
	}
}

type pathErr struct{ p string }

func (e *pathErr) Error() string { return "bad path " + e.p }

// named types that are not Stringers cannot be read without reflection; the
// output must say so instead of printing something plausible but wrong.
type kind int

func TestUnsupportedIsVisible(t *testing.T) {
	if got := Sprintf("%d", kind(3)); got != "%!d(unsupported)" {
		t.Errorf("named int printed as %q", got)
	}
	if got := Sprintf("%v", struct{}{}); got != "%!v(unsupported)" {
		t.Errorf("struct printed as %q", got)
	}
}

// FuzzMatchesFmt builds one directive from fuzzed flags, width, precision
// and verb, applies it to an operand of a fuzzed supported kind, and compares
// with fmt whenever the verb is one the kind supports (error forms for
// unsupported pairs are documented to differ in padding).
func FuzzMatchesFmt(f *testing.F) {
	f.Add(uint8(0), int8(-1), int8(-1), uint8(0), uint8(0), int64(42), 3.25, "héllo")
	f.Add(uint8(0x1f), int8(8), int8(3), uint8(5), uint8(2), int64(-7), -1e-7, "a\x00\xff")
	f.Add(uint8(0x04), int8(12), int8(-1), uint8(9), uint8(1), int64(1)<<40, 1e21, "`q`")
	const verbs = "vsqdxXobOctfeEFgG"
	f.Fuzz(func(t *testing.T, fl uint8, wid, prec int8, vi, kind uint8, i int64, x float64, s string) {
		format := "%"
		for bit, c := range "-+# 0" {
			if fl&(1<<bit) != 0 {
				format += string(c)
			}
		}
		if wid >= 0 {
			format += strconv.Itoa(int(wid))
		}
		if prec >= 0 {
			format += "." + strconv.Itoa(int(prec))
		}
		verb := rune(verbs[int(vi)%len(verbs)])
		if verb == 'v' && fl&(1<<2) != 0 {
			return // %#v is Go syntax: unsupported by design
		}
		format += string(verb)
		var arg any
		var ok string // verbs the kind supports
		switch kind % 8 {
		case 0:
			arg, ok = i, "vdxXobOcq"
		case 1:
			arg, ok = x, "vbeEfFgGxX"
		case 2:
			arg, ok = s, "vsqxX"
		case 3:
			arg, ok = i != 0, "vt"
		case 4:
			arg, ok = uint8(i), "vdxXobOcq"
		case 5:
			arg, ok = stringer{s}, "vsqxX"
		case 6:
			arg, ok = errors.New(s), "vsqxX"
		case 7:
			arg, ok = float32(x), "vbeEfFgGxX"
		}
		if !strings.ContainsRune(ok, verb) {
			return
		}
		want := fmt.Sprintf(format, arg)
		if got := Sprintf(format, arg); got != want {
			t.Fatalf("Sprintf(%q, %#v)\n got %q\nwant %q", format, arg, got, want)
		}
	})
}

func BenchmarkSprintf(b *testing.B) {
	for b.Loop() {
		_ = Sprintf("%-12s %8.2f %5d %q", "allreduce", 123.456, 42, "x")
	}
}

func BenchmarkFmtSprintf(b *testing.B) {
	for b.Loop() {
		_ = fmt.Sprintf("%-12s %8.2f %5d %q", "allreduce", 123.456, 42, "x")
	}
}
