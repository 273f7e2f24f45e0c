package ascii

import (
	"strings"
	"testing"
)

func TestClasses(t *testing.T) {
	tests := []struct {
		in                              string
		digits, upper, letters, decimal bool
	}{
		{"", false, false, false, false},
		{"0123456789", true, false, false, true},
		{"GPU", false, true, true, false},
		{"Gpu", false, false, true, false},
		{"25.2", false, false, false, true},
		{"12a", false, false, false, false},
		{"NET/0", false, false, false, false},
		{" 1", false, false, false, false},
		{"é", false, false, false, false},
	}
	for _, tt := range tests {
		if got := Digits(tt.in); got != tt.digits {
			t.Errorf("Digits(%q) = %v", tt.in, got)
		}
		if got := Upper(tt.in); got != tt.upper {
			t.Errorf("Upper(%q) = %v", tt.in, got)
		}
		if got := Letters(tt.in); got != tt.letters {
			t.Errorf("Letters(%q) = %v", tt.in, got)
		}
		if got := Decimal(tt.in); got != tt.decimal {
			t.Errorf("Decimal(%q) = %v", tt.in, got)
		}
	}
}

func TestIsHex(t *testing.T) {
	for c := 0; c < 256; c++ {
		// The 22 hexadecimal digits, listed rather than computed.
		want := c < 128 && strings.IndexByte("0123456789abcdefABCDEF", byte(c)) >= 0
		if got := IsHex(byte(c)); got != want {
			t.Errorf("IsHex(%q) = %v, want %v", byte(c), got, want)
		}
	}
}
