// Package slug turns titles into URL path segments and HTML ids.
package slug

import (
	"strings"
	"unicode"
)

// Make lowercases s and keeps letters and digits, joining every other run of
// characters into a single hyphen: "NCCL Topo + Algorithm Selection" becomes
// "nccl-topo-algorithm-selection". Non-ASCII letters are kept as they are.
func Make(s string) string {
	var b strings.Builder
	pendingDash := false
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if pendingDash && b.Len() > 0 {
				b.WriteByte('-')
			}
			pendingDash = false
			b.WriteRune(r)
			continue
		}
		pendingDash = true
	}
	return b.String()
}
