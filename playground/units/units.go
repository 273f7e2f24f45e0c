// Package units parses the sizes and counts users type, the same way in the
// CLI and in the browser: byte counts with binary suffixes as nccl-tests'
// -b/-e take them (8, 64K, 256MiB, 8G) and parameter counts with decimal
// suffixes (7B, 350M, 1.3e9). It avoids fmt so the wasm build stays small.
package units

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// byteSuffixes are tried longest first; every one means a power of 1024.
var byteSuffixes = []struct {
	s string
	m uint64
}{{"TIB", 1 << 40}, {"GIB", 1 << 30}, {"MIB", 1 << 20}, {"KIB", 1 << 10},
	{"TB", 1 << 40}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10},
	{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}}

// ParseBytes reads a number of bytes with an optional suffix K, M, G, T
// (KiB/KB and MiB/MB alike, all powers of 1024), case-insensitively: "8",
// "64K", "256MiB", and, as people type them, a fraction or an exponent
// ("1.5GiB", "1e9", "0.5M") as long as the result is a whole number of
// bytes. It refuses negative, fractional and overflowing values with a
// message that says which.
func ParseBytes(s string) (uint64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	mult := uint64(1)
	for _, suf := range byteSuffixes {
		if strings.HasSuffix(t, suf.s) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, suf.s)), suf.m
			break
		}
	}
	if t == "" {
		return 0, errors.New("no number in \"" + s + "\"")
	}
	if strings.HasPrefix(t, "-") {
		return 0, errors.New("a size cannot be negative")
	}
	if !strings.ContainsAny(t, ".E") {
		return wholeBytes(s, t, mult)
	}
	// A fraction or an exponent: exact for every size below 2^53 bytes.
	for _, c := range t {
		if (c < '0' || c > '9') && c != '.' && c != 'E' && c != '+' && c != '-' {
			return 0, notBytes(s)
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) {
		return 0, notBytes(s)
	}
	v *= float64(mult)
	if v >= 1<<63 || math.IsInf(v, 0) {
		return 0, errors.New("\"" + s + "\" is too large")
	}
	r := math.Round(v)
	if math.Abs(v-r) > 1e-6*math.Max(1, v) {
		return 0, errors.New("\"" + s + "\" is " + strconv.FormatFloat(v, 'f', -1, 64) + " bytes, not a whole number of bytes")
	}
	return uint64(r), nil
}

// wholeBytes reads the digits t (from the text s) times mult.
func wholeBytes(s, t string, mult uint64) (uint64, error) {
	var n uint64
	for _, c := range t {
		if c < '0' || c > '9' {
			return 0, notBytes(s)
		}
		if n > (1<<63)/10 {
			return 0, errors.New("\"" + s + "\" is too large")
		}
		n = n*10 + uint64(c-'0')
	}
	if mult > 1 && n > (1<<63)/mult {
		return 0, errors.New("\"" + s + "\" is too large")
	}
	return n * mult, nil
}

func notBytes(s string) error {
	return errors.New("want a number of bytes with an optional K/M/G/T suffix (64M, 1.5GiB, 1e9), not \"" + s + "\"")
}

// ParseCount reads a count such as a model's parameters: 7e9, 7B, 7G, 350M,
// 1.3T, 125000 (decimal suffixes K, M, B/G, T). The result is rounded and
// must lie in 1..1e15.
func ParseCount(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, errors.New("empty count")
	}
	mult := 1.0
	switch strings.ToUpper(t[len(t)-1:]) {
	case "K":
		mult = 1e3
	case "M":
		mult = 1e6
	case "B", "G":
		mult = 1e9
	case "T":
		mult = 1e12
	}
	if mult != 1 {
		t = t[:len(t)-1]
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return 0, errors.New("\"" + s + "\" is not a count (e.g. 7B, 350M, 1.3e9)")
	}
	v *= mult
	if !(v >= 1) || v > 1e15 || math.IsInf(v, 0) {
		return 0, errors.New("\"" + s + "\" is out of range (1 to 1e15)")
	}
	return int64(math.Round(v)), nil
}
