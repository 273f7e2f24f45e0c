package ncclenv

import "fmt"

// Param reads an integer NCCL parameter the way ncclLoadParam does
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/misc/param.cc#L78-L105):
// an unset or empty variable gives def; otherwise the text goes through
// strtoll with base 0 (ParseCInt), which reads a leading number ("12abc" is
// 12, "abc" is 0) and falls back to def only on overflow. note is non-empty
// when the text was not a clean integer, so callers can tell the user what
// NCCL made of it.
func (e Env) Param(name string, def int64) (v int64, note string) {
	s, ok := e.vals[name]
	if !ok || s == "" {
		return def, ""
	}
	c := ParseCInt(s)
	switch {
	case c.Overflow:
		return def, fmt.Sprintf("%s=%q is out of range; NCCL uses the default %d", name, s, def)
	case !c.Clean():
		return c.Value, fmt.Sprintf("%s=%q is not a clean integer; NCCL's strtoll reads it as %d", name, s, c.Value)
	}
	return c.Value, ""
}
