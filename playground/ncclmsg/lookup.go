package ncclmsg

import (
	"errors"
	"sort"
	"strconv"
	"strings"
)

// eachRow calls fn for every non-comment line of a TSV file with exactly
// want fields; where is "file:line" for error messages.
func eachRow(read ReadFunc, name string, want int, fn func(f []string, where string) error) error {
	b, err := read(name)
	if err != nil {
		return err
	}
	for i, line := range strings.Split(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		where := "data/" + name + ":" + strconv.Itoa(i+1)
		f := strings.Split(line, "\t")
		if len(f) != want {
			return errors.New(where + ": " + strconv.Itoa(len(f)) + " fields, want " + strconv.Itoa(want))
		}
		if err := fn(f, where); err != nil {
			return err
		}
	}
	return nil
}

func (c *Catalog) readEntries(read ReadFunc, name string, older bool) error {
	want := 5
	if older {
		want = 6
	}
	// An empty file or releases column repeats the row above's (the
	// generator writes each value once per run of equal rows).
	var prevFile, prevReleases string
	return eachRow(read, name, want, func(f []string, where string) error {
		e := &Entry{Release: Pinned}
		if older {
			if f[0] == "" {
				f[0] = prevReleases
			}
			prevReleases = f[0]
			e.Releases = f[0]
			_, newest, ok := strings.Cut(f[0], "..")
			if !ok {
				return errors.New(where + ": releases " + strconv.Quote(f[0]))
			}
			e.Release = newest
			f = f[1:]
		}
		if f[0] == "" {
			f[0] = prevFile
		}
		if f[0] == "" {
			return errors.New(where + ": no file, and no row above to repeat")
		}
		prevFile = f[0]
		e.File, e.Severity, e.Subsystem = f[0], f[2], f[3]
		a, b, hasEnd := strings.Cut(f[1], "-")
		var err1, err2 error
		e.Line, err1 = strconv.Atoi(a)
		e.EndLine = e.Line
		if hasEnd {
			e.EndLine, err2 = strconv.Atoi(b)
		}
		if err1 != nil || err2 != nil || e.Line <= 0 || e.EndLine < e.Line {
			return errors.New(where + ": line " + strconv.Quote(f[1]))
		}
		if f[4] != "-" {
			e.Format = Unescape(f[4])
		}
		e.pat = compile(e.Format)
		c.Entries = append(c.Entries, e)
		return nil
	})
}

// Unescape reverses the escaping of the format column (\\, \t, \n, \xNN).
func Unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'x':
			if i+2 < len(s) {
				if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
					b.WriteByte(byte(v))
					i += 2
					continue
				}
			}
			b.WriteString(`\x`)
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// index builds the anchor-word and place tables. An entry's anchor is its
// literal word (three or more letters, digits or underscores, bounded by
// non-word literal characters) that the fewest entries share; a message is
// compared only with the entries anchored at one of its words.
func (c *Catalog) index() {
	freq := map[string]int{}
	words := make([][]string, len(c.Entries))
	for i, e := range c.Entries {
		ws := e.pat.words()
		words[i] = ws
		for _, w := range uniq(ws) {
			freq[w]++
		}
	}
	c.byWord = map[string][]*Entry{}
	c.byPlace = map[string][]*Entry{}
	// The banner's entry per severity, looked up once here rather than for
	// every "NCCL version" line (a log repeats it on every rank), because
	// versionEntry reads the whole catalog.
	c.version = map[string]*Entry{}
	for _, e := range c.Entries {
		if _, ok := c.version[e.Severity]; !ok {
			c.version[e.Severity] = c.versionEntry(e.Severity)
		}
	}
	for i, e := range c.Entries {
		c.byPlace[placeKey(e.File, e.Line)] = append(c.byPlace[placeKey(e.File, e.Line)], e)
		for l := e.Line + 1; l <= e.EndLine; l++ {
			c.byPlace[placeKey(e.File, l)] = append(c.byPlace[placeKey(e.File, l)], e)
		}
		if !e.pat.matchable() {
			continue
		}
		best := ""
		for _, w := range words[i] {
			if best == "" || freq[w] < freq[best] || (freq[w] == freq[best] && len(w) > len(best)) {
				best = w
			}
		}
		if best == "" {
			c.noWord = append(c.noWord, e)
			continue
		}
		c.byWord[best] = append(c.byWord[best], e)
	}
}

func uniq(ws []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range ws {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// placeKey is how a WARN line names its call: the path below src/.
func placeKey(file string, line int) string {
	return strings.TrimPrefix(file, "src/") + ":" + strconv.Itoa(line)
}

// Field is one conversion of a matched message.
type Field struct {
	Spec  string `json:"spec"`  // "%d", "%s", "%lx", ...
	Value string `json:"value"` // the text the conversion printed
}

// Match is a message tied to the call that printed it.
type Match struct {
	Entry  *Entry
	Fields []Field
	// Partial is true when the message ended before the format did (a line
	// cut where it was published); the fields read so far are kept.
	Partial bool
}

// Bounds of one Match call: messages are cut, and at most this many
// candidate entries are compared.
const (
	maxMessage    = 4096
	maxCandidates = 2000
)

// Match finds the entry that printed msg, the text after "NCCL INFO ",
// "NCCL WARN " or "NCCL TRACE " (severity "INFO", "WARN", "TRACE", "CALL"
// or "VERSION"). place is the "file:line" a WARN line names (the path below
// src/), or "". Among several matches the one with the most literal text
// wins, the pinned release before older ones; an older release's call at
// exactly the file:line the WARN names comes before a pinned call of as
// much literal text elsewhere (the place says which release printed it).
func (c *Catalog) Match(severity, msg, place string) (Match, bool) {
	return c.MatchRelease(severity, msg, place, "")
}

// MatchRelease is Match for a log of a known release: release is the
// scanned tag ReleaseFor gives for the version the log printed, or "".
// Among older wordings of as much literal text, one whose range of
// releases holds release comes first (2.7.8's "[receive] via NET/%s/%d%s"
// before 2.8-2.11's "%d%s%s" for a 2.7.8 log); the pinned release's
// calls still come before any older wording of as much literal text.
func (c *Catalog) MatchRelease(severity, msg, place, release string) (Match, bool) {
	msg = strings.TrimRight(msg, " \t\r\n")
	if len(msg) > maxMessage {
		msg = msg[:maxMessage]
	}
	var best Match
	bestScore := -1
	try := func(e *Entry) {
		if e.Severity != severity {
			return
		}
		fields, partial, ok := e.pat.match(msg)
		if !ok {
			return
		}
		score := e.pat.literal * 4
		if partial {
			score = e.pat.matchedLiteral(msg)
		}
		if e.Release == Pinned {
			score += 2
		} else if release != "" && inReleases(e.Releases, release) {
			score++
		}
		if place != "" && strings.HasPrefix(place, strings.TrimPrefix(e.File, "src/")+":") {
			score++
			if atPlace(e, place) {
				score += 2
			}
		}
		if score > bestScore {
			best, bestScore = Match{Entry: e, Fields: fields, Partial: partial}, score
		}
	}
	if place != "" {
		for _, e := range c.byPlace[place] {
			try(e)
		}
		// Done when the pinned release's call is at the place; an older
		// release's call there still meets the pinned calls elsewhere,
		// which win with more literal text.
		if best.Entry != nil && !best.Partial && best.Entry.Release == Pinned {
			return best, true
		}
	}
	if strings.HasPrefix(msg, "NCCL version ") {
		if e := c.version[severity]; e != nil {
			return Match{Entry: e, Fields: []Field{{Spec: "%s", Value: msg}}}, true
		}
	}
	seen := 0
	forWords(msg, func(w string) {
		for _, e := range c.byWord[w] {
			if seen++; seen > maxCandidates {
				return
			}
			try(e)
		}
	})
	if best.Entry == nil || best.Partial {
		for _, e := range c.noWord {
			try(e)
		}
	}
	if best.Entry == nil || best.Partial {
		if m, ok := c.matchBuilt(severity, msg); ok {
			return m, true
		}
	}
	if best.Entry == nil {
		return Match{}, false
	}
	return best, true
}

// inReleases reports whether release lies in span ("v2.7.8-1..v2.9.9-1").
func inReleases(span, release string) bool {
	oldest, newest, ok := strings.Cut(span, "..")
	return ok && !releaseLess(release, oldest) && !releaseLess(newest, release)
}

// atPlace reports whether place ("file:line" below src/) names a line of
// e's call.
func atPlace(e *Entry, place string) bool {
	_, l, ok := strings.Cut(place[len(strings.TrimPrefix(e.File, "src/")):], ":")
	if !ok {
		return false
	}
	n, err := strconv.Atoi(l)
	return err == nil && n >= e.Line && n <= e.EndLine
}

// versionEntry returns the call of showVersion (src/init.cc) that prints
// the "NCCL version ..." banner at the given level.
func (c *Catalog) versionEntry(severity string) *Entry {
	var version *Entry
	for _, e := range c.Entries {
		if e.Release == Pinned && e.File == "src/init.cc" && e.Severity == "VERSION" {
			version = e
		}
	}
	if version == nil || severity == "VERSION" {
		return version
	}
	for _, e := range c.Entries {
		if e.Release == Pinned && e.File == "src/init.cc" && e.Severity == severity && e.Format == "%s" && e.Line > version.Line && e.Line <= version.Line+3 {
			return e
		}
	}
	return nil
}

// forWords calls fn for each distinct maximal run of word characters in s
// with at least three characters.
func forWords(s string, fn func(string)) {
	seen := map[string]bool{}
	start := -1
	for i := 0; i <= len(s); i++ {
		if i < len(s) && isWord(s[i]) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 && i-start >= 3 {
			w := s[start:i]
			if !seen[w] {
				seen[w] = true
				fn(w)
			}
		}
		start = -1
	}
}

func isWord(c byte) bool {
	return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

// Result returns the ncclResult_t entry for a code.
func (c *Catalog) Result(code int) (Result, bool) {
	for _, r := range c.Results {
		if r.Code == code {
			return r, true
		}
	}
	return Result{}, false
}

// Files returns the files of the pinned release's entries with the number
// of entries in each.
func (c *Catalog) Files() map[string]int {
	out := map[string]int{}
	for _, e := range c.Entries {
		if e.Release == Pinned {
			out[e.File]++
		}
	}
	return out
}

// SortedKeys returns the keys of a file count map in order.
func SortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Conversion is one conversion of an entry's format with the label the
// format gives it: the words just before it ("status=%d" -> "status",
// "vendor err %u" -> "vendor err", "rank %d version %d" -> "rank",
// "version").
type Conversion struct {
	Spec  string `json:"spec"`
	Label string `json:"label,omitempty"`
}

// Conversions lists the entry's conversions in order.
func (e *Entry) Conversions() []Conversion {
	var out []Conversion
	prev := ""
	for _, s := range e.pat.segs {
		if s.kind == convNone {
			prev = s.lit
			continue
		}
		out = append(out, Conversion{Spec: s.spec, Label: label(prev)})
		prev = ""
	}
	return out
}

// label takes the last one or two words of the literal before a
// conversion, without the punctuation that joins them to it.
func label(lit string) string {
	t := strings.TrimRight(lit, " =:([{<,/")
	if i := strings.LastIndexAny(t, "(,;[{"); i >= 0 {
		t = t[i+1:]
	}
	f := strings.Fields(t)
	switch {
	case len(f) == 0:
		return ""
	case len(f) >= 2 && len(f[len(f)-1]) <= 4 && isLower(f[len(f)-2]):
		return f[len(f)-2] + " " + f[len(f)-1]
	}
	return f[len(f)-1]
}

func isLower(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return w != ""
}
