package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestEnvUnknownName: an unknown name is echoed quoted (no raw control
// character reaches the terminal) and cut to maxEnvNameShown bytes, and a
// name over maxEnvNameSuggest bytes gets no nearest-name search. The repo's
// own data/ (two levels up) is the table.
func TestEnvUnknownName(t *testing.T) {
	cases := []struct {
		name, arg string
		maxErr    int    // bytes of the error message
		want      string // substring of the error
	}{
		{"escape sequence", "NCCL_\x1b]0;pwned\x07\x1b[2J", 200, `"NCCL_\x1b]0;pwned\a\x1b[2J"`},
		{"131,000 bytes", "NCCL_" + strings.Repeat("A", 131000), 300, "(131005 bytes in all)"},
		{"131,000 bytes: no search", "NCCL_" + strings.Repeat("A", 131000), 300, "(nearest: none)"},
		{"a typo still gets suggestions", "NCCL_DEBUGG", 200, "nearest: NCCL_DEBUG"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			err := runEnv(context.Background(), []string{"--root", "../../..", c.arg}, &out, &errb)
			if err == nil {
				t.Fatal("no error for an unknown name")
			}
			msg := err.Error()
			if len(msg) > c.maxErr {
				t.Errorf("error is %d bytes, want at most %d", len(msg), c.maxErr)
			}
			if strings.ContainsAny(msg, "\x1b\x07") {
				t.Errorf("raw control character in %q", msg)
			}
			if !strings.Contains(msg, c.want) {
				t.Errorf("error %q lacks %q", msg, c.want)
			}
		})
	}
}
