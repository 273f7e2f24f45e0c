package ncclenv

import (
	"strings"
	"testing"
)

func TestParam(t *testing.T) {
	tests := []struct {
		val      string
		set      bool
		want     int64
		wantNote string
	}{
		{"", false, 7, ""},     // unset: default
		{"", true, 7, ""},      // empty: default
		{"3", true, 3, ""},     // decimal
		{"0x10", true, 16, ""}, // strtoll base 0: hex
		{"010", true, 8, ""},   // and octal
		{"-1", true, -1, ""},   // negative
		{"12abc", true, 12, "reads it as 12"},
		{"yes", true, 0, "reads it as 0"},
		{"99999999999999999999", true, 7, "out of range"},
	}
	for _, tt := range tests {
		env := New(nil)
		if tt.set {
			env = env.With("NCCL_X", tt.val)
		}
		got, note := env.Param("NCCL_X", 7)
		if got != tt.want || (tt.wantNote == "") != (note == "") || !strings.Contains(note, tt.wantNote) {
			t.Errorf("Param(%q) = %d, %q; want %d, note containing %q", tt.val, got, note, tt.want, tt.wantNote)
		}
	}
}
