package units

import (
	"strings"
	"testing"
)

func TestParseBytes(t *testing.T) {
	tests := []struct {
		in      string
		want    uint64
		wantErr string
	}{
		{"8", 8, ""},
		{" 64k ", 64 << 10, ""},
		{"256MiB", 256 << 20, ""},
		{"8G", 8 << 30, ""},
		{"1TB", 1 << 40, ""},
		{"12B", 12, ""},
		{"", 0, "no number"},
		{"-5", 0, "negative"},
		// As people type them (issue 16): fractions with a suffix and
		// exponents, when the result is a whole number of bytes.
		{"1.5GiB", 3 << 29, ""},
		{"1.5M", 3 << 19, ""},
		{"1e9", 1000000000, ""},
		{"2.5e3K", 2500 << 10, ""},
		{"0.5k", 512, ""},
		{"1.3K", 0, "1331.2 bytes, not a whole number"},
		{"1e-3", 0, "not a whole number"},
		{"-1.5M", 0, "negative"},
		{"1.2.3M", 0, "want a number of bytes"},
		{"1e30", 0, "too large"},
		{"2P", 0, "want a number of bytes"},
		{"99999999999999999999", 0, "too large"},
		{"9999999999T", 0, "too large"},
	}
	for _, tt := range tests {
		got, err := ParseBytes(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseBytes(%q) = %d, %v; want error with %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestParseCount(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"7B", 7e9, true}, {"7e9", 7e9, true}, {"350M", 350e6, true}, {"1.3T", 1.3e12, true},
		{"125000", 125000, true}, {"7G", 7e9, true}, {"", 0, false}, {"lots", 0, false},
		{"0", 0, false}, {"-1B", 0, false}, {"1e16", 0, false}, {"NaN", 0, false},
	}
	for _, tt := range tests {
		got, err := ParseCount(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseCount(%q) = %d, %v; want %d ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func FuzzParseBytes(f *testing.F) {
	for _, s := range []string{"8", "64K", "1TiB", "-1", "1e3", "18446744073709551615"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseBytes(s)
		if err == nil && n > 1<<63 {
			t.Fatalf("ParseBytes(%q) = %d overflows", s, n)
		}
	})
}
