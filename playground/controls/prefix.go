package controls

import "unicode/utf8"

// Prefix returns the longest prefix of s that is at most n bytes long and
// does not end inside a UTF-8 sequence, for a message that repeats the
// start of an over-long input: a cut at a plain byte count can keep half
// of a character, which a quoted message then shows as a \x escape. A
// string of n bytes or fewer is returned whole.
func Prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
