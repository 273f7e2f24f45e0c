package controls

import (
	"strings"
	"testing"
)

// TestPrefix: a cut at n bytes that would fall inside a character backs off
// to the character's first byte ("é" is 2 bytes, "€" 3, "😀" 4); a string
// that fits is whole.
func TestPrefix(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"mlx5_0", 80, "mlx5_0"},
		{"mlx5_0", 6, "mlx5_0"},
		{"mlx5_0", 4, "mlx5"},
		{"", 0, ""},
		{"abc", 0, ""},
		{"aé", 2, "a"},
		{"aé", 3, "aé"},
		{strings.Repeat("€", 27), 80, strings.Repeat("€", 26)},
		{"😀x", 3, ""},
		{"😀x", 4, "😀"},
	} {
		if got := Prefix(c.in, c.n); got != c.want {
			t.Errorf("Prefix(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}
