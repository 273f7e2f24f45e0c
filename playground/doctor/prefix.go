package doctor

import (
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/ascii"
)

// level is the NCCL log level a line was printed at.
type level int

const (
	levelNone    level = iota // not an NCCL-formatted line
	levelVersion              // the bare "NCCL version ..." line (NCCL_DEBUG=VERSION/WARN)
	levelInfo
	levelWarn
	levelTrace
)

// origin is what the "host:pid:tid [dev]" prefix of an NCCL line says.
type origin struct {
	Host string
	PID  string
	Dev  string
}

// ncclMarkers are the level words NCCL's logger writes after the prefix
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/debug.cc#L327-L357):
// "[dev] NCCL INFO msg", "[dev] file:line (func) NCCL WARN msg",
// "[dev] time func:line NCCL TRACE msg" and "NCCL CALL msg".
var ncclMarkers = [...]struct {
	word string
	lvl  level
}{
	{"INFO", levelInfo},
	{"WARN", levelWarn},
	{"TRACE", levelTrace},
	{"CALL", levelTrace},
}

// splitNCCL finds the "NCCL <LEVEL> " marker in line and returns the parsed
// prefix and the message after the marker. Anything before the NCCL prefix
// (mpirun's "[1,0]<stdout>:", torchrun's "[rank0]:", Ray's worker tags, a
// time stamp) is tolerated. A line without a marker but starting its message
// with "NCCL version" is reported at levelVersion.
func splitNCCL(line string) (origin, level, string) {
	from := 0
	for {
		i := strings.Index(line[from:], "NCCL ")
		if i < 0 {
			break
		}
		i += from
		from = i + 5
		// ':' ends torchrun's "[rank0]:" and Open MPI's "<stdout>:" tags,
		// which launchers put right before a line whose host prefix the
		// user cut off ("[rank0]:NCCL WARN ...").
		if i > 0 && line[i-1] != ' ' && line[i-1] != '\t' && line[i-1] != ']' && line[i-1] != ':' {
			continue
		}
		rest := line[i+5:]
		for _, m := range ncclMarkers {
			if strings.HasPrefix(rest, m.word) && (len(rest) == len(m.word) || rest[len(m.word)] == ' ') {
				msg := strings.TrimPrefix(rest[len(m.word):], " ")
				return parseOrigin(line[:i]), m.lvl, msg
			}
		}
		// The bare VERSION-level line starts the line (after at most a
		// launcher tag); "NCCL version" deep inside other text, as in
		// PyTorch's error messages, is not one, nor is init.cc's
		// "Mismatched NCCL version detected" WARN without its prefix.
		if strings.HasPrefix(rest, "version ") && len(strings.Fields(line[:i])) <= 2 && !strings.HasSuffix(line[:i], "Mismatched ") {
			return parseOrigin(line[:i]), levelVersion, line[i:]
		}
	}
	return origin{}, levelNone, ""
}

// parseOrigin reads "host:pid:tid [dev]" from the text before the marker:
// the last bracketed number whose preceding field has at least two colons.
func parseOrigin(head string) origin {
	fields := strings.Fields(head)
	var o origin
	for j := len(fields) - 1; j >= 0; j-- {
		f := fields[j]
		if len(f) < 3 || f[0] != '[' || f[len(f)-1] != ']' || !ascii.Digits(f[1:len(f)-1]) {
			continue
		}
		if o.Dev == "" {
			o.Dev = f[1 : len(f)-1]
		}
		if j == 0 {
			continue
		}
		parts := strings.Split(fields[j-1], ":")
		if len(parts) < 3 {
			continue
		}
		o.Dev = f[1 : len(f)-1]
		o.Host = parts[len(parts)-3]
		o.PID = parts[len(parts)-2]
		return o
	}
	return o
}

// torchRank extracts the rank from PyTorch's "[Rank N]", "[PG 3 Rank N]",
// "[PG ID 0 PG GUID 0(default_pg) Rank N]" or torchrun's "[rankN]:" tags;
// -1 if there is none.
func torchRank(line string) int {
	if i := strings.Index(line, "Rank "); i >= 0 {
		if n, ok := leadingInt(line[i+5:]); ok {
			return n
		}
	}
	if i := strings.Index(line, "[rank"); i >= 0 {
		if n, ok := leadingInt(line[i+5:]); ok {
			return n
		}
	}
	return -1
}

// launcherRank reads the global rank torchrun puts before every line it
// relays ("[rank13]:[E218 ...] ..."); -1 if the line has no such tag.
func launcherRank(line string) int {
	i := strings.Index(line, "[rank")
	if i < 0 || i > 64 {
		return -1
	}
	n, ok := leadingInt(line[i+len("[rank"):])
	end := i + len("[rank")
	for end < len(line) && line[end] >= '0' && line[end] <= '9' {
		end++
	}
	if !ok || !strings.HasPrefix(line[end:], "]:") {
		return -1
	}
	return n
}

// torchPG extracts the process-group tag "PG 3" or "PG ID 2 PG GUID 9" as
// written; empty if none.
func torchPG(line string) string {
	i := strings.Index(line, "[PG ")
	if i < 0 {
		return ""
	}
	rest := line[i+1:]
	j := strings.Index(rest, " Rank ")
	if j < 0 {
		return ""
	}
	return rest[:j]
}

// leadingInt parses the decimal number at the start of s (no sign).
func leadingInt(s string) (int, bool) {
	n, i := 0, 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		if n > (1<<31)/10 {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
		i++
	}
	return n, i > 0
}

// lastMarker finds the last "NCCL <LEVEL>" marker in s (preceded by a space,
// a ']' or the start) and returns its index and level, or levelNone.
func lastMarker(s string) (int, level) {
	best, bestLvl := -1, levelNone
	for _, m := range ncclMarkers {
		word := "NCCL " + m.word
		end := len(s)
		for end > 0 {
			i := strings.LastIndex(s[:end], word)
			if i < 0 {
				break
			}
			after := i + len(word)
			okBefore := i == 0 || s[i-1] == ' ' || s[i-1] == '\t' || s[i-1] == ']'
			okAfter := after == len(s) || s[after] == ' '
			if okBefore && okAfter {
				if i > best {
					best, bestLvl = i, m.lvl
				}
				break
			}
			end = i
		}
	}
	return best, bestLvl
}

// markerWord returns the level word at the start of s for lvl.
func markerWord(lvl level, s string) string {
	for _, m := range ncclMarkers {
		if m.lvl == lvl && strings.HasPrefix(s, m.word) {
			return m.word
		}
	}
	return ""
}
