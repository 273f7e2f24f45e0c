package controls

import "testing"

// TestEscape: each control is written as the Go escape of its code point
// (ESC = 0x1b, DEL = 0x7f, CSI = U+009B, OSC = U+009D, ST = U+009C), other
// text is left alone, and keep leaves the runes it names.
func TestEscape(t *testing.T) {
	for _, c := range []struct {
		in   string
		keep []rune
		want string
	}{
		{"mlx5_0", nil, "mlx5_0"},
		{"", nil, ""},
		{"a\x1b[2Jb", nil, `a\x1b[2Jb`},
		{"x\u009b2J\u009d0;pwn\u009c", nil, `x\u009b2J\u009d0;pwn\u009c`},
		{"del\x7f", nil, `del\x7f`},
		{"X\x1b]0;t\x07", nil, `X\x1b]0;t\x07`},
		{"é, ü and 😀", nil, "é, ü and 😀"},
		{"line one\n\tline two\r", nil, `line one\x0a\x09line two\x0d`},
		{"line one\n\tline two\r", []rune{'\n', '\t'}, "line one\n\tline two\\x0d"},
	} {
		if got := Escape(c.in, c.keep...); got != c.want {
			t.Errorf("Escape(%q, %q) = %q, want %q", c.in, c.keep, got, c.want)
		}
	}
}

// TestIs: the boundaries of the C0, DEL and C1 ranges.
func TestIs(t *testing.T) {
	for r, want := range map[rune]bool{0: true, 0x1f: true, ' ': false, '~': false, 0x7f: true, 0x80: true, 0x9f: true, 0xa0: false, 'é': false} {
		if Is(r) != want {
			t.Errorf("Is(%U) = %v", r, !want)
		}
	}
}
