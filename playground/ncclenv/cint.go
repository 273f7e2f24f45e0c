package ncclenv

import "math"

// CInt is the outcome of reading a string the way C's strtoll(str, NULL, 0)
// does, which is how NCCL reads every integer parameter
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/misc/param.cc#L78-L106).
type CInt struct {
	// Value is what strtoll returns: the longest valid prefix, 0 when no
	// digits were found, and the clamped limit on overflow.
	Value int64
	// Digits reports whether at least one digit was consumed.
	Digits bool
	// Rest is the unparsed tail; NCCL silently ignores it.
	Rest string
	// Overflow reports an out-of-range number (strtoll sets ERANGE, and NCCL
	// then falls back to the parameter's default).
	Overflow bool
}

// Clean reports whether the whole string was a well-formed integer.
func (c CInt) Clean() bool { return c.Digits && c.Rest == "" && !c.Overflow }

// ParseCInt reads s like strtoll with base 0: optional leading white space,
// an optional sign, then a 0x/0X hexadecimal, 0 octal or decimal number.
func ParseCInt(s string) CInt {
	i := 0
	for i < len(s) && isCSpace(s[i]) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	base := uint64(10)
	switch {
	case i+1 < len(s) && s[i] == '0' && (s[i+1] == 'x' || s[i+1] == 'X') && i+2 < len(s) && digitVal(s[i+2]) < 16:
		base = 16
		i += 2
	case i < len(s) && s[i] == '0':
		base = 8
	}
	start := i
	var mag uint64
	overflow := false
	limit := uint64(math.MaxInt64)
	if neg {
		limit++ // |LLONG_MIN|
	}
	for i < len(s) {
		d := digitVal(s[i])
		if d >= base {
			break
		}
		if !overflow {
			if mag > (limit-d)/base {
				overflow = true
			} else {
				mag = mag*base + d
			}
		}
		i++
	}
	if i == start {
		// No conversion: strtoll returns 0 and leaves the whole input unread.
		return CInt{Rest: s}
	}
	out := CInt{Digits: true, Rest: s[i:], Overflow: overflow}
	switch {
	case overflow && neg:
		out.Value = math.MinInt64
	case overflow:
		out.Value = math.MaxInt64
	case neg:
		out.Value = -int64(mag-1) - 1
	default:
		out.Value = int64(mag)
	}
	return out
}

func isCSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\v' || b == '\f' || b == '\r'
}

func digitVal(b byte) uint64 {
	switch {
	case b >= '0' && b <= '9':
		return uint64(b - '0')
	case b >= 'a' && b <= 'z':
		return uint64(b-'a') + 10
	case b >= 'A' && b <= 'Z':
		return uint64(b-'A') + 10
	}
	return 99
}

// IsSet reports whether name is present, even with an empty value (NCCL's
// string variables such as NCCL_ALGO treat an empty value as set).
func (e Env) IsSet(name string) bool {
	_, ok := e.vals[name]
	return ok
}
