package doctor

import (
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
)

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
