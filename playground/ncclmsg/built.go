package ncclmsg

import (
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/ascii"
)

// built lists the messages NCCL assembles in a buffer and prints with a
// bare "%s" (ring orders, the TUNING table, path and topology dumps): the
// format says nothing, so each is recognised by its shape and tied to the
// call that prints it at the pinned release. TestBuiltPointsAtBareFormats
// checks that every place is a "%s" call of the catalog. The shapes are
// plain functions rather than regular expressions: package regexp and its
// Unicode tables would add about 160 KB to the gzipped wasm.
var built = []struct {
	file  string
	line  int
	shape func(string) bool
}{
	// "Channel 00/02 :    0   1   2   3"
	{"src/graph/rings.cc", 26, func(m string) bool {
		rest, ok := cutNumberSlashNumber(strings.TrimPrefix(m, "Channel "), m)
		if !ok || !strings.HasPrefix(rest, " :") {
			return false
		}
		for _, f := range strings.Fields(rest[2:]) {
			if !ascii.Digits(f) && f != "..." {
				return false
			}
		}
		return true
	}},
	{"src/graph/tuning.cc", 555, tableRow("Algorithm")},
	{"src/graph/tuning.cc", 562, tableRow("Protocol")},
	{"src/graph/tuning.cc", 571, tableRow("Max NThreads")},
	// "    AllReduce |    25.2/   0.0 |    48.5/   0.0 | ..."
	{"src/graph/tuning.cc", 582, func(m string) bool {
		name, rest, ok := strings.Cut(strings.TrimLeft(m, " "), " |")
		if !ok || name == "" || !ascii.Letters(strings.TrimSpace(name)) {
			return false
		}
		cell, _, _ := strings.Cut(rest, "|")
		a, b, ok := strings.Cut(strings.TrimSpace(cell), "/")
		return ok && ascii.Decimal(a) && (ascii.Decimal(strings.TrimSpace(b)) || strings.TrimSpace(b) == "")
	}},
	// "GPU/0-18000 :GPU/0-18000 (0/5000.0/LOC) ..."
	{"src/graph/paths.cc", 168, func(m string) bool {
		from, to, ok := strings.Cut(m, " :")
		return ok && nodeName(from) && nodeName(strings.SplitN(to, " ", 2)[0])
	}},
	// "+ PCI[24.0] - PCI/0-4b000" (links of the topology dump)
	{"src/graph/topo.cc", 329, func(m string) bool {
		t := strings.TrimLeft(m, " ")
		if !strings.HasPrefix(t, "+ ") {
			return false
		}
		kind, rest, ok := strings.Cut(t[2:], "[")
		return ok && ascii.Upper(kind) && strings.Contains(rest, "] - ")
	}},
	// "CPU/0-0 (1/1/2)" (nodes of the topology dump)
	{"src/graph/topo.cc", 304, func(m string) bool {
		head, _, _ := strings.Cut(strings.TrimLeft(m, " "), " (")
		return nodeName(head) && (strings.HasPrefix(head, "CPU/") || strings.HasPrefix(head, "GPU/") || strings.HasPrefix(head, "NIC/") ||
			strings.HasPrefix(head, "NET/") || strings.HasPrefix(head, "PCI/") || strings.HasPrefix(head, "NVS/"))
	}},
	// "  0 : NET/0-0 GPU/0-18000 ... NET/0-0" (a searched graph's channels)
	{"src/graph/search.cc", 1347, func(m string) bool {
		ch, rest, ok := strings.Cut(strings.TrimLeft(m, " "), " : ")
		if !ok || !ascii.Digits(ch) {
			return false
		}
		for _, f := range strings.Fields(rest) {
			if !nodeName(f) {
				return false
			}
		}
		return rest != ""
	}},
	// "NVLS Head  0:  0  8"
	{"src/graph/connect.cc", 291, func(m string) bool {
		rest, ok := strings.CutPrefix(m, "NVLS Head ")
		h, _, ok2 := strings.Cut(strings.TrimLeft(rest, " "), ":")
		return ok && ok2 && ascii.Digits(h)
	}},
}

// tableRow recognises a header row of the TUNING table: the label, spaces,
// then "|".
func tableRow(label string) func(string) bool {
	return func(m string) bool {
		rest, ok := strings.CutPrefix(strings.TrimLeft(m, " "), label)
		return ok && strings.HasPrefix(strings.TrimLeft(rest, " "), "|")
	}
}

// cutNumberSlashNumber reads "NN/MM" at the start of s (s must differ from
// whole, so the prefix before it was present) and returns the rest.
func cutNumberSlashNumber(s, whole string) (string, bool) {
	if s == whole {
		return "", false
	}
	a, rest, ok := strings.Cut(s, "/")
	if !ok || !ascii.Digits(a) {
		return "", false
	}
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	return rest[i:], i > 0
}

// nodeName accepts "GPU/0-18000", "NET/0-0", "CPU/0-1" and the older
// "GPU/18000" spellings: upper-case type, '/', hex digits and dashes.
func nodeName(s string) bool {
	kind, id, ok := strings.Cut(s, "/")
	if !ok || !ascii.Upper(kind) || id == "" {
		return false
	}
	for i := 0; i < len(id); i++ {
		if !ascii.IsHex(id[i]) && id[i] != '-' && id[i] != 'x' {
			return false
		}
	}
	return true
}

// matchBuilt ties an INFO message of a known shape to its "%s" call.
func (c *Catalog) matchBuilt(severity, msg string) (Match, bool) {
	if severity != "INFO" {
		return Match{}, false
	}
	for _, b := range built {
		if !b.shape(msg) {
			continue
		}
		for _, e := range c.byPlace[placeKey(b.file, b.line)] {
			if e.Release == Pinned && e.Format == "%s" {
				return Match{Entry: e, Fields: []Field{{Spec: "%s", Value: msg}}}, true
			}
		}
	}
	return Match{}, false
}
