// Package controls keeps the control characters of untrusted text away
// from the reader's terminal and from the values parsed out of it: Escape
// writes them as Go escapes before a message quotes the text (a flag's
// value, a file name, an attribute of a topology file), so that the reader
// sees what the input holds; Strip removes terminal sequences and controls
// from text read as data (a log line, a topology file's comment). The CLI,
// the topology reader and the log doctor share it.
package controls

import (
	"fmt"
	"slices"
	"strings"
)

// Is reports whether r is a C0 control (U+0000-U+001F), DEL or a C1
// control (U+0080-U+009F, the 8-bit CSI U+009B among them).
func Is(r rune) bool { return r < 0x20 || (r >= 0x7f && r <= 0x9f) }

// Escape returns s with every control character but those in keep
// written as a Go escape: \x1b below 0x80, \u009b above.
func Escape(s string, keep ...rune) string {
	esc := func(r rune) bool { return Is(r) && !slices.Contains(keep, r) }
	if !strings.ContainsFunc(s, esc) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case !esc(r):
			b.WriteRune(r)
		case r < 0x80:
			fmt.Fprintf(&b, "\\x%02x", r)
		default:
			fmt.Fprintf(&b, "\\u%04x", r)
		}
	}
	return b.String()
}
