package ncclenv

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// Expected values follow C's strtoll(str, NULL, 0), which NCCL's
// ncclLoadParam uses (src/misc/param.cc:78-106 at v2.30.7-1).
func TestParseCInt(t *testing.T) {
	tests := []struct {
		in       string
		want     int64
		digits   bool
		rest     string
		overflow bool
	}{
		{"12", 12, true, "", false},
		{" \t7", 7, true, "", false},
		{"+3", 3, true, "", false},
		{"-5", -5, true, "", false},
		{"0x10", 16, true, "", false},
		{"0X1f", 31, true, "", false},
		{"010", 8, true, "", false}, // leading 0 means octal
		{"08", 0, true, "8", false}, // 8 is not an octal digit
		{"0x", 0, true, "x", false}, // "0x" without a hex digit reads just the 0
		{"0xg", 0, true, "xg", false},
		{"12abc", 12, true, "abc", false},
		{"4k", 4, true, "k", false},
		{"abc", 0, false, "abc", false},
		{"", 0, false, "", false},
		{"-", 0, false, "-", false},
		{"9223372036854775807", math.MaxInt64, true, "", false},
		{"9223372036854775808", math.MaxInt64, true, "", true},
		{"-9223372036854775808", math.MinInt64, true, "", false},
		{"-9223372036854775809", math.MinInt64, true, "", true},
		{"99999999999999999999999x", math.MaxInt64, true, "x", true},
	}
	for _, tt := range tests {
		got := ParseCInt(tt.in)
		if got.Value != tt.want || got.Digits != tt.digits || got.Rest != tt.rest || got.Overflow != tt.overflow {
			t.Errorf("ParseCInt(%q) = %+v, want value %d digits %v rest %q overflow %v", tt.in, got, tt.want, tt.digits, tt.rest, tt.overflow)
		}
	}
}

func FuzzParseCInt(f *testing.F) {
	for _, s := range []string{"12", "-0x1f", "010", " 9z", "", "-", "9223372036854775808"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := ParseCInt(s)
		if !c.Digits && (c.Value != 0 || c.Rest != s) {
			t.Fatalf("no digits but %+v", c)
		}
		if len(c.Rest) > len(s) || s[len(s)-len(c.Rest):] != c.Rest {
			t.Fatalf("rest %q is not a suffix of %q", c.Rest, s)
		}
		// A clean decimal must agree with strconv.
		if c.Clean() {
			if v, err := strconv.ParseInt(s, 0, 64); err == nil && v != c.Value && !hasOctalPrefix(s) {
				t.Fatalf("ParseCInt(%q) = %d, strconv says %d", s, c.Value, v)
			}
		}
	})
}

// hasOctalPrefix reports a leading 0 digit, which C reads as octal but Go's
// base-0 ParseInt (which wants 0o) does not always.
func hasOctalPrefix(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\n', '\v', '\f', '\r', '+', '-':
			continue
		}
		return s[i] == '0'
	}
	return false
}

// TestOctalWarns: a number with a leading 0 is read as octal by NCCL and
// gets a warning naming the value NCCL uses; plain zero, decimals and hex
// stay silent.
func TestOctalWarns(t *testing.T) {
	for _, c := range []struct {
		val, want string
	}{
		{"010", `NCCL reads "010" as 8: its strtoll (base 0) takes a leading 0 for octal; write 10 if the decimal number was meant`},
		{" 017", `NCCL reads "017" as 15`},
		{"0", ""},
		{"10", ""},
		{"0x10", ""},
	} {
		p, ok := checkInt(c.val)
		if c.want == "" {
			if ok {
				t.Errorf("%q: problem %q, want none", c.val, p.Message)
			}
			continue
		}
		if !ok || p.Severity != Warning || !strings.Contains(p.Message, c.want) {
			t.Errorf("%q: problem %+v, want a warning holding %q", c.val, p, c.want)
		}
	}
}
