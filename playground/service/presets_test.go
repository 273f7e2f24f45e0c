package service

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestClipInput checks the cut of an echoed name: at most maxEchoed bytes of
// it, never inside a multi-byte rune, followed by the name's full length.
func TestClipInput(t *testing.T) {
	tests := []struct {
		name, in string
		keep     int // bytes of in that the message keeps
	}{
		{"short", "h100-sxm-8x", len("h100-sxm-8x")},
		{"exactly the cap", strings.Repeat("a", maxEchoed), maxEchoed},
		{"ascii over the cap", strings.Repeat("a", maxEchoed+1), maxEchoed},
		// 79 ASCII bytes, then "é" (2 bytes) would end at byte 81: the cut
		// backs off to 79 rather than keep half of it.
		{"two-byte rune across the cap", strings.Repeat("a", maxEchoed-1) + "é" + "tail", maxEchoed - 1},
		// "€" is 3 bytes; 27 of them are 81 bytes, the 27th starts at 78.
		{"three-byte runes", strings.Repeat("€", 27), 78},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := clipInput(tt.in)
			if !utf8.ValidString(got) {
				t.Errorf("clipInput(%q) = %q is not valid UTF-8", tt.in, got)
			}
			if !strings.HasPrefix(got, tt.in[:tt.keep]) {
				t.Errorf("clipInput(%q) = %q, want it to start with %d bytes of the input", tt.in, got, tt.keep)
			}
			if tt.keep == len(tt.in) {
				if got != tt.in {
					t.Errorf("clipInput(%q) = %q, want it unchanged", tt.in, got)
				}
				return
			}
			want := tt.in[:tt.keep] + "… (" + strconv.Itoa(len(tt.in)) + " bytes)"
			if got != want {
				t.Errorf("clipInput(%q) = %q, want %q", tt.in, got, want)
			}
		})
	}
}
