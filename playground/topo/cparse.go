package topo

import (
	"math"
	"strconv"
	"strings"
)

// cStrtol mimics C's strtol(s, NULL, base) as NCCL's XML accessors use it:
// leading blanks and a sign are accepted, base 0 detects 0x/0 prefixes, and
// parsing stops at the first invalid character. clean reports whether the
// whole string was consumed, so callers can warn about "12abc" (read as 12)
// or "abc" (read as 0). Out-of-range values saturate as strtol does.
func cStrtol(s string, base int) (v int64, clean bool) {
	t := strings.TrimLeft(s, " \t\n\r\f\v")
	neg := false
	if t != "" && (t[0] == '+' || t[0] == '-') {
		neg = t[0] == '-'
		t = t[1:]
	}
	if (base == 0 || base == 16) && len(t) >= 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X') && len(t) > 2 && isDigit(t[2], 16) {
		t = t[2:]
		base = 16
	} else if base == 0 {
		if t != "" && t[0] == '0' {
			base = 8
		} else {
			base = 10
		}
	}
	i := 0
	for i < len(t) && isDigit(t[i], base) {
		i++
	}
	if i == 0 {
		return 0, false
	}
	u, err := strconv.ParseUint(t[:i], base, 64)
	if err != nil || (!neg && u > math.MaxInt64) || (neg && u > 1<<63) {
		if neg {
			return math.MinInt64, false
		}
		return math.MaxInt64, false
	}
	v = int64(u)
	if neg {
		v = -v
	}
	return v, i == len(t)
}

// cInt is strtol into a C int (32 bits), truncating like the implicit
// conversion in NCCL's xmlGetAttrInt.
func cInt(s string) (int, bool) {
	v, clean := cStrtol(s, 0)
	return int(int32(v)), clean
}

// cStrtoull16 mimics strtoull(s, NULL, 16), used for "guid" and "host_hash".
func cStrtoull16(s string) uint64 {
	t := strings.TrimLeft(s, " \t\n\r\f\v")
	if len(t) >= 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X') {
		t = t[2:]
	}
	i := 0
	for i < len(t) && isDigit(t[i], 16) {
		i++
	}
	if i == 0 {
		return 0
	}
	u, err := strconv.ParseUint(t[:i], 16, 64)
	if err != nil {
		return math.MaxUint64
	}
	return u
}

// cStrtof mimics strtof for the "latency" attribute: the longest leading
// prefix that parses as a float, 0 when none does.
func cStrtof(s string) (float32, bool) {
	t := strings.TrimSpace(s)
	for i := len(t); i > 0; i-- {
		if f, err := strconv.ParseFloat(t[:i], 32); err == nil {
			return float32(f), i == len(t)
		}
	}
	return 0, false
}

func isDigit(c byte, base int) bool {
	var d int
	switch {
	case c >= '0' && c <= '9':
		d = int(c - '0')
	case c >= 'a' && c <= 'z':
		d = int(c-'a') + 10
	case c >= 'A' && c <= 'Z':
		d = int(c-'A') + 10
	default:
		return false
	}
	return d < base
}

// busIDToInt64 converts "dddd:bb:dd.f" to an integer the way busIdToInt64
// does (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/misc/utils.cc#L33-L48):
// hex digits are collected, ':' and '.' skipped, and the scan stops at any
// other character or after 16 digits.
func busIDToInt64(s string) int64 {
	var hex []byte
	for i := 0; i < len(s) && len(hex) < 16; i++ {
		c := s[i]
		if c == '.' || c == ':' {
			continue
		}
		if !isDigit(c, 16) {
			break
		}
		hex = append(hex, c)
	}
	if len(hex) == 0 {
		return 0
	}
	u, err := strconv.ParseUint(string(hex), 16, 64)
	if err != nil {
		return 0
	}
	// strtol saturates at LONG_MAX for 16-digit values above it.
	if u > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(u)
}

// kvPrefix looks s up in a dictionary whose keys match as prefixes, in order,
// like kvConvertToInt (xml.h:425-438). ok is false when the fallback was used.
func kvPrefix(s string, keys []string, values []int, fallback int) (int, bool) {
	for i, k := range keys {
		if strings.HasPrefix(s, k) {
			return values[i], true
		}
	}
	return fallback, false
}
