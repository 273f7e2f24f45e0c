package doctor

import (
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
)

func TestStripControls(t *testing.T) {
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
		got, _ := stripControls([]byte(c.in))
		if string(got) != c.want {
			t.Errorf("stripControls(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestLogControlsAndLineEnds: colours and titles do not reach parsed
// values, a lone CR ends a line, a stray NUL does not hide one, and an
// over-long line is cut with a note of the product's own.
func TestLogControlsAndLineEnds(t *testing.T) {
	log := "host:1:1 [0] NCCL INFO NCCL version 2.21.5\x1b[31m+cuda12.4\x1b[0m\n" +
		"\x1b]0;pwned\x07host:1:1 [0] NCCL INFO Using network \x1b[1mIB\x1b[0m\r" +
		"host:1:1 [0] NCCL WARN first\r" +
		"host:1:1 [0] NCCL WARN sec\x00ond\r\n" +
		"host:1:1 [0] NCCL INFO " + strings.Repeat("x", 70<<10) + "\n"
	s, err := ParseLog(strings.NewReader(log), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if v := s.Versions; len(v) != 1 || v[0].Version != "2.21.5" || v[0].CUDA != "12.4" {
		t.Errorf("versions %+v", v)
	}
	if s.Network != "IB" || len(s.Hosts) != 1 || s.Hosts[0] != "host" {
		t.Errorf("network %q hosts %q", s.Network, s.Hosts)
	}
	if s.Warnings.Count != 2 || s.Warnings.Lines[1].Text != "host:1:1 [0] NCCL WARN second" {
		t.Errorf("warnings %+v", s.Warnings)
	}
	if s.Lines != 5 || s.ControlLines != 3 || s.TruncatedLines != 1 || s.BinaryLines != 0 {
		t.Errorf("lines %d control %d truncated %d binary %d", s.Lines, s.ControlLines, s.TruncatedLines, s.BinaryLines)
	}
	var b strings.Builder
	if err := WriteText(&b, s, Diagnose(s, ncclenv.Env{})); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(b.String(), "\x1b\x07\x00\r") {
		t.Errorf("text output holds control bytes: %q", b.String())
	}
	if !strings.Contains(b.String(), "longer than") {
		t.Errorf("no note on the cut line:\n%s", b.String())
	}
}
