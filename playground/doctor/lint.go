package doctor

import (
	"bufio"
	"fmt"
	"sort"
	"strings"
)

// MaxEnvLines bounds how many lines LintEnv and ParseEnvText read.
const MaxEnvLines = 100000

// MaxEnvLineBytes bounds one line of ParseEnvText; a longer line is
// reported by number and skipped, and reading goes on with the next one.
// It is the log reader's default line cap, far above NCCL's own nccl.conf
// reader (a 4 KiB fgets buffer, src/misc/param.cc).
const MaxEnvLineBytes = DefaultMaxLineBytes

// MaxEnvFindingsPerKind bounds the findings LintEnv returns of one kind
// (one ID); the rest are counted in a closing "and N more" finding, so a
// dump of thousands of unknown names gives a readable, small answer.
const MaxEnvFindingsPerKind = 20

// ParseEnvText reads assignments from pasted text: `env` or `printenv`
// output, `export NAME=VALUE` and `declare -x NAME="VALUE"` lines, or an
// nccl.conf file (NAME=VALUE with '#' comments). Lines it cannot read come
// back as findings.
func ParseEnvText(text string) ([]EnvEntry, []Finding) {
	var entries []EnvEntry
	var bad []Finding
	br := bufio.NewReaderSize(strings.NewReader(text), 4096)
	var buf []byte
	n := 0
	for {
		line, truncated, size, err := readLine(br, buf[:0], MaxEnvLineBytes)
		buf = line[:0]
		if size == 0 && err != nil {
			break
		}
		n++
		if n > MaxEnvLines {
			bad = append(bad, Finding{Line: n, ID: "env-parse", Severity: Warning,
				Message: fmt.Sprintf("only the first %d lines were read", MaxEnvLines), Links: []Link{linkIgnoredEnv}})
			break
		}
		raw := string(line)
		if truncated {
			bad = append(bad, Finding{Line: n, Text: clip(raw, DefaultMaxEvidenceChars), ID: "env-parse", Severity: Warning,
				Message: fmt.Sprintf("line over the limit of %d bytes: not read (NCCL's own nccl.conf reader takes 4095 bytes a line)", MaxEnvLineBytes),
				Links:   []Link{linkIgnoredEnv}})
			continue
		}
		e, ok, msg := parseEnvLine(raw)
		e.Line = n
		e.Text = clip(raw, DefaultMaxEvidenceChars)
		switch {
		case ok:
			entries = append(entries, e)
		case msg != "":
			bad = append(bad, Finding{Line: n, Text: e.Text, ID: "env-parse", Severity: Warning, Message: msg, Links: []Link{linkIgnoredEnv}})
		}
		if err != nil {
			break
		}
	}
	return entries, bad
}

// parseEnvLine reads one line. ok is false for blank and comment lines (msg
// empty) and for lines that are not assignments (msg says why).
func parseEnvLine(raw string) (EnvEntry, bool, string) {
	s := strings.TrimSpace(strings.TrimPrefix(raw, "\ufeff"))
	if s == "" || strings.HasPrefix(s, "#") {
		return EnvEntry{}, false, ""
	}
	for _, p := range []string{"export ", "declare -x ", "declare -gx ", "setenv "} {
		if strings.HasPrefix(s, p) {
			s = strings.TrimSpace(s[len(p):])
			break
		}
	}
	name, value, ok := strings.Cut(s, "=")
	if !ok {
		if f := strings.Fields(s); len(f) == 2 && isEnvName(f[0]) && strings.HasPrefix(raw, "setenv") {
			name, value, ok = f[0], f[1], true
		}
	}
	if !ok {
		return EnvEntry{}, false, "not a NAME=VALUE assignment"
	}
	if name != strings.TrimSpace(name) {
		return EnvEntry{Name: strings.TrimSpace(name), Value: value}, false,
			fmt.Sprintf("space before '=': NCCL's config-file reader would take %q, spaces included, as the name", name)
	}
	if !isEnvName(name) {
		return EnvEntry{}, false, fmt.Sprintf("%q is not a variable name", clip(name, 60))
	}
	value = strings.TrimSpace(value)
	if len(value) >= 2 && (value[0] == '"' && value[len(value)-1] == '"' || value[0] == '\'' && value[len(value)-1] == '\'') {
		value = value[1 : len(value)-1]
	}
	return EnvEntry{Name: name, Value: value}, true, ""
}

// LintEnv checks every assignment of pasted `env | grep -E 'NCCL|TORCH'`
// output or an nccl.conf file against the variable tables: unknown names
// (with the nearest known ones), deprecated names, values NCCL would read
// differently, debugging knobs left on, settings that cancel each other and
// names given twice. Findings come in line order.
func LintEnv(text string) []Finding {
	entries, out := ParseEnvText(text)
	c, err := defaultChecker()
	if err != nil {
		return append(out, Finding{ID: "env-tables", Severity: Error, Message: err.Error()})
	}
	seen := map[string]EnvEntry{}
	for _, e := range entries {
		if prev, dup := seen[e.Name]; dup {
			out = append(out, Finding{Line: e.Line, Text: e.Text, Name: e.Name, Value: e.Value, ID: "env-duplicate", Severity: Warning,
				Message: fmt.Sprintf("also set on line %d; a shell keeps the last value, NCCL's config-file reader the first (it never overwrites)", prev.Line),
				Links:   []Link{envLink(e.Name), linkIgnoredEnv}})
		}
		seen[e.Name] = e
	}
	for _, is := range c.check(entries) {
		msg := is.msg
		for _, a := range is.also {
			msg += fmt.Sprintf(" (see line %d: %s=%s)", a.Line, a.Name, a.Value)
		}
		out = append(out, Finding{Line: is.entry.Line, Text: is.entry.Text, Name: is.entry.Name, Value: is.entry.Value,
			ID: is.id, Severity: is.sev, Message: msg, Suggestions: is.suggestions, Links: is.links})
	}
	sortFindings(out)
	return capFindings(out, MaxEnvFindingsPerKind)
}

// capFindings keeps the first per findings of each ID (in line order) and
// appends, for each ID that had more, one finding that counts the rest and
// names the last line among them.
func capFindings(fs []Finding, per int) []Finding {
	kept := make([]Finding, 0, min(len(fs), 8*per))
	count := map[string]int{}
	type rest struct {
		n, last int
		sev     Severity
		links   []Link
	}
	more := map[string]*rest{}
	var order []string
	for _, f := range fs {
		count[f.ID]++
		if count[f.ID] <= per {
			kept = append(kept, f)
			continue
		}
		r := more[f.ID]
		if r == nil {
			r = &rest{sev: f.Severity, links: f.Links}
			more[f.ID] = r
			order = append(order, f.ID)
		}
		r.n++
		r.last = max(r.last, f.Line)
		r.sev = max(r.sev, f.Severity)
	}
	for _, id := range order {
		r := more[id]
		kept = append(kept, Finding{Line: 0, ID: id, Severity: r.sev, Links: r.links,
			Message: fmt.Sprintf("and %d more of the same kind (%s), up to line %d", r.n, id, r.last)})
	}
	return kept
}

func sortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].Line < fs[j].Line })
}
