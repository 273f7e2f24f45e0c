package ncclenv

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Param reads an integer NCCL parameter the way ncclLoadParam does
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/misc/param.cc#L78-L105):
// an unset or empty variable gives def; otherwise the text goes through
// strtoll with base 0, which reads a leading number ("12abc" is 12, "abc" is
// 0) and falls back to def only on overflow. note is non-empty when the text
// was not a clean integer, so callers can tell the user what NCCL made of it.
func (e Env) Param(name string, def int64) (v int64, note string) {
	s, ok := e.vals[name]
	if !ok || s == "" {
		return def, ""
	}
	v, clean, overflow := strtoll(s)
	switch {
	case overflow:
		return def, fmt.Sprintf("%s=%q is out of range; NCCL uses the default %d", name, s, def)
	case !clean:
		return v, fmt.Sprintf("%s=%q is not a clean integer; NCCL's strtoll reads it as %d", name, s, v)
	}
	return v, ""
}

// strtoll parses s like C's strtoll(s, NULL, 0).
func strtoll(s string) (v int64, clean, overflow bool) {
	t := strings.TrimLeft(s, " \t\n\r\f\v")
	neg := false
	if t != "" && (t[0] == '+' || t[0] == '-') {
		neg = t[0] == '-'
		t = t[1:]
	}
	base := 10
	switch {
	case len(t) > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X') && digitOK(t[2], 16):
		t, base = t[2:], 16
	case t != "" && t[0] == '0':
		base = 8
	}
	i := 0
	for i < len(t) && digitOK(t[i], base) {
		i++
	}
	if i == 0 {
		return 0, false, false
	}
	u, err := strconv.ParseUint(t[:i], base, 64)
	if err != nil || (!neg && u > math.MaxInt64) || (neg && u > 1<<63) {
		return 0, false, true
	}
	v = int64(u)
	if neg {
		v = -v
	}
	return v, i == len(t), false
}

func digitOK(c byte, base int) bool {
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
