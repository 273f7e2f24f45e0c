package doctor

import (
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/ncclmsg"
)

// NCCL keeps the text of its last WARN (without the "host:pid:tid [dev]
// file:line NCCL WARN" prefix) for ncclGetLastError
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/debug.cc#L268), and
// its callers quote it when they fail, even when NCCL_DEBUG is unset:
//
//   - PyTorch's DistBackendError ends with "\nLast error:\n" and the text
//     (c10d's getNcclErrorDetailStr), so the text is the line after
//     "Last error:", carrying the same launcher prefix ("[rank3]: ");
//   - a log collector or a summary joins it to the same line ("Last error:
//     Duplicate GPU detected ...");
//   - a Python exception repr or a JSON field keeps it on one line with
//     escaped newlines ("DistBackendError('...\nLast error:\nCuda failure
//     \'out of memory\'')");
//   - nccl-tests prints "host: Test NCCL failure common.cu:N 'error string
//     / text'";
//   - an issue title, a chat message or a log collector keeps NCCL's level
//     word without the rest of the prefix ("...: WARN NET/IB: read failed
//     in ...").
//
// quoted reads such a quotation as the NCCL line it quotes: tied to its
// catalog entry, so the rules that list the entry's format and the generic
// reading of its family see it as they see the WARN line itself.

// lastErrorWait is a "Last error:" line whose text comes on a later line
// that starts with the same prefix (samePrefix). (The empty array keeps the compiler
// from generating an equality function for the type.)
type lastErrorWait struct {
	prefix string
	n      int
	_      [0]func()
}

// Bounds of the waits: how many "Last error:" lines of interleaved ranks
// are followed at once, and how many lines later their text may come.
const (
	maxLastErrorWaits = 8
	lastErrorReach    = 16
)

// quoted looks for an NCCL message quoted on line n (not an NCCL-formatted
// line) and reads it as that message; it reports whether it found one.
func (p *parser) quoted(n int, raw string) bool {
	for len(p.waits) > 0 && n-p.waits[0].n >= lastErrorReach {
		p.waits = p.waits[1:]
	}
	for i, w := range p.waits {
		// The oldest wait with this line's prefix whose text is an NCCL
		// message takes it. Prefixes are compared without their digits:
		// time stamps move on, and interleaved ranks print the same
		// error under their own numbers.
		if k, ok := samePrefix(raw, w.prefix); ok && p.quotedMessage(n, raw, raw[k:]) {
			p.waits = append(p.waits[:i], p.waits[i+1:]...)
			return true
		}
	}
	text := ""
	if i := bareLevel(raw, "INFO "); i >= 0 && p.bareInfo(n, raw, raw[i:]) {
		return true
	}
	if i := bareLevel(raw, "WARN "); i >= 0 {
		text = raw[i:]
	} else if i := strings.Index(raw, "Test NCCL failure "); i >= 0 {
		// nccl-tests: "'%s / %s'" with ncclGetErrorString and ncclGetLastError.
		if j := strings.Index(raw[i:], " / "); j >= 0 {
			text = raw[i+j+3:]
		}
	} else if i := strings.Index(raw, "Last error:"); i >= 0 {
		text = strings.TrimLeft(raw[i+len("Last error:"):], " ")
		if t := strings.TrimLeft(text, `\`); len(t) < len(text) && t != "" && t[0] == 'n' {
			// Escaped newlines: the text is the next escaped line.
			text, _, _ = strings.Cut(t[1:], `\n`)
			// A repr's or JSON's escapes (\' \" \\) read as the catalog
			// reads its own; JSON's \u003c, \u003e and \u0026 for < > &
			// stay as written (the formats that hold those characters
			// are then not matched).
			text = ncclmsg.Unescape(strings.TrimRight(text, `\`))
		}
		if text == "" && len(p.waits) < maxLastErrorWaits {
			p.waits = append(p.waits, lastErrorWait{prefix: raw[:i], n: n})
		}
	} else if i := strings.Index(raw, bareP2PWarn); i >= 0 {
		// The WARN's text copied without its prefix (NVIDIA/nccl#2329).
		text = raw[i:]
	}
	return text != "" && p.quotedMessage(n, raw, text)
}

// bareP2PWarn starts a WARN users quote alone, without the "host:pid:tid
// [dev] file:line NCCL WARN" prefix or a level word
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/paths.cc#L396).
const bareP2PWarn = "P2P is disabled between NVLINK connected GPUs "

// bareLevel returns where the text after the level word ("WARN " or
// "INFO ") starts when the word begins the line or follows a space or
// colon and no "NCCL" precedes it (NCCL's own lines are read by
// splitNCCL), else -1.
func bareLevel(raw, word string) int {
	i := strings.Index(raw, word)
	if i < 0 || (i > 0 && raw[i-1] != ' ' && raw[i-1] != ':') || strings.HasSuffix(strings.TrimRight(raw[:i], " "), "NCCL") {
		return -1
	}
	return i + len(word)
}

// minBareInfoLiteral is how much literal text an INFO format must have for
// a line with a bare "INFO " word to be read as NCCL's: many loggers
// (Python's, vLLM's) print that word, and a short format such as "%s"
// would match any of their lines.
const minBareInfoLiteral = 16

// bareInfo reads the text after a bare "INFO " level word on line n as
// the NCCL INFO line it quotes (an issue title, a chat paste, a log cut
// before the NCCL marker: "INFO NET/IB : GPU Direct RDMA Disabled for HCA
// 0 'mlx5_0'") when the whole text is one INFO format of the catalog with
// enough literal text; it reports whether it did.
func (p *parser) bareInfo(n int, raw, msg string) bool {
	msg = strings.TrimSpace(msg)
	cat, err := ncclmsg.Default()
	if err != nil {
		return false
	}
	m, ok := cat.Match("INFO", msg, "")
	if !ok || m.Partial || m.Entry.Literal() < minBareInfoLiteral {
		return false
	}
	// Tied to its entry as a quoted WARN is: the rules and the families see
	// it, the counts of NCCL-formatted lines do not.
	p.ncclLines++
	p.catalogMatched(n, origin{}, "INFO", raw, m)
	p.ncclMessage(n, origin{}, levelInfo, msg, raw)
	return true
}

// samePrefix reports whether line starts with prefix, any run of digits
// standing for any other, and where the prefix ends in line.
func samePrefix(line, prefix string) (int, bool) {
	i, j := 0, 0
	for i < len(prefix) {
		if isDigit(prefix[i]) {
			if j >= len(line) || !isDigit(line[j]) {
				return 0, false
			}
			for i < len(prefix) && isDigit(prefix[i]) {
				i++
			}
			for j < len(line) && isDigit(line[j]) {
				j++
			}
			continue
		}
		if j >= len(line) || line[j] != prefix[i] {
			return 0, false
		}
		i++
		j++
	}
	return j, true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// quoteClosers are the characters a wrapper may put after the quoted text:
// the closing quote and parenthesis of a repr or of nccl-tests' message, a
// JSON string's end.
const quoteClosers = `'")]},`

// quotedMessage ties the quoted text msg of line n to the WARN entry that
// prints it and reads the line as that entry's. A wrapper may have added
// closing characters after the text: it is tried as it stands and without
// one, two or three of them, and the whole match with the most literal
// text wins (a partial one only where a format of several lines goes on
// on the next line).
func (p *parser) quotedMessage(n int, raw, msg string) bool {
	msg = strings.TrimSpace(msg)
	cat, err := ncclmsg.Default()
	if err != nil || len(p.s.catalogHits) >= maxCatalogHits {
		return false
	}
	var best ncclmsg.Match
	bestScore, bestText := 0, ""
	for k := 0; k <= 3 && k < len(msg) && (k == 0 || strings.IndexByte(quoteClosers, msg[len(msg)-k]) >= 0); k++ {
		text := msg[:len(msg)-k]
		m, ok := cat.Match("WARN", text, "")
		if !ok {
			continue
		}
		score := m.Entry.Literal() * 4
		if m.Partial {
			score = -1
			if strings.Contains(m.Entry.Format, "\n") {
				score = m.Entry.Literal()
			}
		}
		if score > bestScore {
			best, bestScore, bestText = m, score, text
		}
	}
	if best.Entry == nil {
		return false
	}
	p.catalogMatched(n, origin{}, "WARN", raw, best)
	// The line rules see the text after the file of its call and NCCL's
	// WARN marker, as in the WARN line itself.
	p.matchLineRules(n, best.Entry.File+" NCCL WARN "+bestText, raw)
	p.classifyWarn(n, bestText, raw)
	return true
}
