package controls

import "testing"

// TestStrip: CSI, OSC and other escape sequences go whole, in their 7-bit,
// UTF-8 C1 and raw 8-bit forms; other controls but TAB go; text stays.
func TestStrip(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain text", "plain text"},
		{"NCCL version 2.21.5\x1b[31m+cuda12.4\x1b[0m", "NCCL version 2.21.5+cuda12.4"},
		{"\x1b]0;window title\x07host:1:1 [0] NCCL INFO x", "host:1:1 [0] NCCL INFO x"},
		{"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"},
		{"a\x00b\x07c\x08d\x7fe", "abcde"},
		{"tab\tstays", "tab\tstays"},
		{"c1 \u009b31mred\u009d2;t\u009c and \u0085next", "c1 red and next"},
		{"unterminated \x1b]0;title", "unterminated "},
		{"\x1b(Bcharset \x1bMreverse", "charset reverse"},
		{"ünïcödé stays", "ünïcödé stays"},
		// Raw 8-bit C1 bytes (invalid UTF-8): CSI with its parameters,
		// OSC up to the raw ST, a lone NEL.
		{"h\x9bA:1:1 NCCL version 2.18.1\x9b31m+cuda12", "h:1:1 NCCL version 2.18.1+cuda12"},
		{"raw \x9d0;title\x9cosc and \x85nel", "raw osc and nel"},
		// UTF-8 continuation bytes in 0x80-0x9F are not C1: U+0101 is C4 81,
		// U+4E00 is E4 B8 80.
		{"\u0101 \u4e00 \u00d7", "\u0101 \u4e00 \u00d7"},
	}
	for _, c := range cases {
		got, _ := Strip([]byte(c.in))
		if string(got) != c.want {
			t.Errorf("Strip(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
