package topo

import "testing"

// TestPlainText: escape sequences go whole, in their 7-bit and C1 forms,
// line breaks become spaces and other controls are dropped; ordinary text,
// non-ASCII letters included, is kept.
func TestPlainText(t *testing.T) {
	cases := []struct{ in, want string }{
		{"8x H100 SXM", "8x H100 SXM"},
		{"\x1b]0;pwned\x07\x1b[2J hi", " hi"},
		{"a\x1b]8;;http://x\x1b\\link", "alink"},
		{"\u009b31mred\u009d0;t\u009c!", "red!"},
		{"two\nlines\tand\rtab", "two lines and tab"},
		{"nul\x00 del\x7f bel\x07", "nul del bel"},
		{"ünïcödé ×8", "ünïcödé ×8"},
		{"trailing \x1b", "trailing "},
	}
	for _, c := range cases {
		if got := plainText(c.in); got != c.want {
			t.Errorf("plainText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
