package searchdb

import (
	"slices"
	"strings"
	"unicode"
)

// Limits applied to every query before it reaches SQLite. They bound the cost of a search
// whatever the user types, and site/assets/js/search/query.js uses the same numbers
// (the parity test in query_golden_test.go checks that).
const (
	// MaxQueryRunes is how many code points of the typed text are looked at.
	MaxQueryRunes = 200
	// MaxTerms is how many words (after stop words are dropped) are searched for.
	MaxTerms = 12
	// MaxPartsPerTerm is how many identifier parts of one word are kept.
	MaxPartsPerTerm = 8
	// DefaultLimit is the number of results when Options.Limit is zero.
	DefaultLimit = 10
	// MaxLimit caps Options.Limit.
	MaxLimit = 50
)

// connectors join the parts of an identifier inside one word: NCCL_P2P_DISABLE,
// c10d::ProcessGroupNCCL, torch.distributed, src/graph/paths.cc, reduce-scatter.
const connectors = "_.:-/"

// stopWords are dropped from a query (unless every word is one, or the word is still being
// typed). The list is short on purpose: it only removes words that carry no meaning in a
// question such as "why is allreduce slow on 4090".
var stopWords = []string{
	"a", "an", "and", "are", "as", "at", "be", "but", "by", "can", "do", "does", "for", "from",
	"how", "i", "if", "in", "into", "is", "it", "its", "my", "no", "not", "of", "on", "or",
	"so", "than", "that", "the", "their", "then", "there", "these", "this", "to", "vs", "was",
	"what", "when", "where", "which", "who", "why", "will", "with", "you", "your",
}

// assignPrefixes are shell words that may stand before NAME=VALUE in a query: "export
// NCCL_DEBUG=INFO" names NCCL_DEBUG as "NCCL_DEBUG=INFO" does (see Query.Name).
var assignPrefixes = []string{"export", "set"}

// Term is one word of a query, split into identifier parts.
type Term struct {
	// Parts are the lower-cased parts of the word: "NCCL_P2P_DISABLE" gives
	// [nccl p2p disable], "ProcessGroupNCCL" gives [process group nccl], "watchdog" gives
	// [watchdog].
	Parts []string `json:"parts"`
	// Prefix is set on the last word when the text does not end with a space: the user may
	// still be typing it, so it matches as a prefix.
	Prefix bool `json:"prefix,omitempty"`
}

// Joined returns the parts written together ("ncclp2pdisable"): the form in which an
// identifier is indexed whole.
func (t Term) Joined() string { return strings.Join(t.Parts, "") }

// Query is typed search text turned into words. Its zero value is the empty query.
type Query struct {
	Terms []Term `json:"terms"`
	// Name is set when the typed text is one identifier followed by =VALUE, as pasted from a
	// shell or a log ("NCCL_DEBUG=INFO", "export NCCL_P2P_LEVEL=PHB"): the identifier's
	// parts written together ("nccldebug"), like Key. The record whose title is that
	// identifier ranks first (see SearchSQL).
	Name string `json:"name,omitempty"`
}

// Empty reports whether the query has nothing to search for.
func (q Query) Empty() bool { return len(q.Terms) == 0 }

// isWordRune reports whether r can be part of a searchable word. Besides ASCII letters and
// digits it accepts letters and numbers of the Latin, Greek and Cyrillic blocks only
// (U+00C0..U+04FF) whose lower case stays in that range: those have been letters since
// Unicode 1.1, so Go, JavaScript and SQLite's unicode61 tokenizer agree on them.
// Everything else separates words. So each quoted token is exactly one FTS5 token, never a
// phrase, and Go and JavaScript cut text into the same words.
func isWordRune(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return true
	case r >= 0xC0 && r <= 0x4FF:
		if !unicode.IsLetter(r) && !unicode.IsNumber(r) {
			return false
		}
		// Ⱥ (U+023A) and Ⱦ (U+023E) lower-case to U+2C65/U+2C66, outside the range.
		l := lowerRune(r)
		return l < 0x80 || (l >= 0xC0 && l <= 0x4FF)
	}
	return false
}

func isConnector(r rune) bool { return strings.ContainsRune(connectors, r) }

// lowerRune lower-cases one code point with the simple (one-to-one) Unicode mapping.
func lowerRune(r rune) rune { return unicode.ToLower(r) }

// SplitIdent splits one word into lower-cased identifier parts: at connectors (_ . : - /),
// at a lower-case letter followed by an upper-case one (processGroup), at the last capital
// of a run of capitals followed by a lower-case letter (NCCLComm -> NCCL, Comm) and at a
// digit followed by a capital and a lower-case letter (fp16Compress -> fp16, Compress).
// Digits otherwise stay with their letters (P2P, LL128, c10d). Characters that are neither word runes nor connectors end a part.
func SplitIdent(word string) []string {
	rs := []rune(word)
	var parts []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			parts = append(parts, string(cur))
			cur = cur[:0]
		}
	}
	for i, r := range rs {
		if !isWordRune(r) {
			flush()
			continue
		}
		if len(cur) > 0 && i > 0 {
			prev := rs[i-1]
			next := rune(0)
			if i+1 < len(rs) {
				next = rs[i+1]
			}
			switch {
			case unicode.IsLower(prev) && unicode.IsUpper(r):
				flush()
			case unicode.IsUpper(prev) && unicode.IsUpper(r) && unicode.IsLower(next):
				flush()
			case unicode.IsDigit(prev) && unicode.IsUpper(r) && unicode.IsLower(next):
				flush()
			}
		}
		cur = append(cur, lowerRune(r))
	}
	flush()
	return parts
}

// Parse turns typed text into a Query. It never fails: text without any word gives the
// empty query. Steps: keep the first MaxQueryRunes code points; cut into words (runs of
// word runes and connectors); split each word with SplitIdent (at most MaxPartsPerTerm
// parts); drop stop words that are not being typed, unless only stop words remain; keep the
// first MaxTerms words.
func Parse(text string) Query {
	rs := []rune(text)
	if len(rs) > MaxQueryRunes {
		rs = rs[:MaxQueryRunes]
	}
	var words []string
	start := -1
	for i, r := range rs {
		inWord := isWordRune(r) || isConnector(r)
		if inWord && start < 0 {
			start = i
		}
		if !inWord && start >= 0 {
			words = append(words, string(rs[start:i]))
			start = -1
		}
	}
	typing := start >= 0 // the text ends inside a word: the user may still be typing it
	if start >= 0 {
		words = append(words, string(rs[start:]))
	}
	var all []Term
	for i, w := range words {
		parts := SplitIdent(w)
		if len(parts) == 0 {
			continue
		}
		if len(parts) > MaxPartsPerTerm {
			parts = parts[:MaxPartsPerTerm]
		}
		all = append(all, Term{Parts: parts, Prefix: typing && i == len(words)-1})
	}
	if len(all) == 0 {
		return Query{}
	}
	var kept []Term
	for _, t := range all {
		if !t.Prefix && len(t.Parts) == 1 && isStopWord(t.Parts[0]) {
			continue
		}
		kept = append(kept, t)
	}
	if len(kept) == 0 {
		kept = all
	}
	if len(kept) > MaxTerms {
		kept = kept[:MaxTerms]
	}
	return Query{Terms: kept, Name: assignedName(rs)}
}

// isQuerySpace reports whether r separates the fields of typed text for assignedName:
// ASCII white space only, so that Go and JavaScript cut alike.
func isQuerySpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' || r == '\v'
}

// assignedName returns the joined parts of NAME when rs is NAME=VALUE, optionally after one
// of assignPrefixes, with no white space inside; NAME must be made of word runes and
// connectors only. Otherwise it returns "".
func assignedName(rs []rune) string {
	fields := strings.FieldsFunc(string(rs), isQuerySpace)
	if len(fields) == 2 && slices.Contains(assignPrefixes, strings.ToLower(fields[0])) {
		fields = fields[1:]
	}
	if len(fields) != 1 {
		return ""
	}
	name, _, ok := strings.Cut(fields[0], "=")
	if !ok || name == "" {
		return ""
	}
	for _, r := range name {
		if !isWordRune(r) && !isConnector(r) {
			return ""
		}
	}
	parts := SplitIdent(name)
	if len(parts) > MaxPartsPerTerm {
		parts = parts[:MaxPartsPerTerm]
	}
	return strings.Join(parts, "")
}

func isStopWord(s string) bool {
	for _, w := range stopWords {
		if w == s {
			return true
		}
	}
	return false
}

// quote writes s as an FTS5 string: double quotes around it, inner double quotes doubled.
// Inside such a string nothing is FTS5 syntax.
func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// Corrections maps a query part to a vocabulary term to search for as well. The key is the
// part, followed by "*" when the part is matched as a prefix (see CorrectionKey).
type Corrections map[string]string

// CorrectionKey is the key of a part in Corrections.
func CorrectionKey(part string, prefix bool) string {
	if prefix {
		return part + "*"
	}
	return part
}

func (t Term) partExpr(i int, corr Corrections) string {
	p := t.Parts[i]
	pre := t.Prefix && i == len(t.Parts)-1
	s := quote(p)
	if pre {
		s += "*"
	}
	if c, ok := corr[CorrectionKey(p, pre)]; ok && c != "" && c != p {
		s = "(" + s + " OR " + quote(c) + ")"
	}
	return s
}

// expr is the FTS5 expression of one word. A plain word is its quoted token; an identifier
// matches either written whole or as all of its parts:
// ("ncclp2pdisable" OR ("nccl" AND "p2p" AND "disable")).
func (t Term) expr(corr Corrections) string {
	if len(t.Parts) == 1 {
		return t.partExpr(0, corr)
	}
	joined := quote(t.Joined())
	if t.Prefix {
		joined += "*"
	}
	ps := make([]string, len(t.Parts))
	for i := range t.Parts {
		ps[i] = t.partExpr(i, corr)
	}
	return "(" + joined + " OR (" + strings.Join(ps, " AND ") + "))"
}

func (q Query) join(op string, corr Corrections) string {
	es := make([]string, len(q.Terms))
	for i, t := range q.Terms {
		es[i] = t.expr(corr)
	}
	return strings.Join(es, " "+op+" ")
}

// Key is the query written as one word: the joined forms of its terms, concatenated
// ("watchdog timeout" -> "watchdogtimeout"). A record whose title has the same key
// (Record.titleKey) is an exact title match and ranks first.
func (q Query) Key() string {
	var b strings.Builder
	for _, t := range q.Terms {
		b.WriteString(t.Joined())
	}
	return b.String()
}

// Strict is the MATCH expression requiring every word (AND). corr may be nil.
func (q Query) Strict(corr Corrections) string { return q.join("AND", corr) }

// Loose is the MATCH expression requiring any word (OR). corr may be nil.
func (q Query) Loose(corr Corrections) string { return q.join("OR", corr) }

// Rewrite turns typed text into a safe FTS5 MATCH expression that requires every word, built
// only from quoted tokens, AND, OR, parentheses and a prefix star outside the quotes. ok is
// false when the text has no searchable word. Rewrite does not look at the database, so it
// applies no spelling corrections; DB.Search does.
func Rewrite(text string) (string, bool) {
	q := Parse(text)
	if q.Empty() {
		return "", false
	}
	return q.Strict(nil), true
}

// NeedsCheck reports whether a part is looked up in the vocabulary for spelling correction:
// ASCII letters and digits only, at least 4 characters, not only digits.
func NeedsCheck(part string) bool {
	if len(part) < 4 {
		return false
	}
	letter := false
	for i := 0; i < len(part); i++ {
		c := part[i]
		switch {
		case c >= 'a' && c <= 'z':
			letter = true
		case c >= '0' && c <= '9':
		default:
			return false
		}
	}
	return letter
}

// MaxEdits is the largest edit distance at which a vocabulary term may replace an unknown
// part: 1 for parts of 4 or 5 characters, 2 from 6 on.
func MaxEdits(part string) int {
	if len([]rune(part)) >= 6 {
		return 2
	}
	return 1
}

// Candidate is one vocabulary term with the number of records that contain it.
type Candidate struct {
	Term string `json:"term"`
	Docs int    `json:"docs"`
}

// BestCorrection picks the vocabulary term closest to part: the smallest edit distance
// (EditDistance, at most MaxEdits(part)), then the most records, then the earliest in the
// given order (callers pass terms in the vocabulary's sorted order). ok is false when no
// candidate is close enough.
func BestCorrection(part string, cands []Candidate) (string, bool) {
	maxd := MaxEdits(part)
	best, bestD, bestDocs := "", maxd+1, -1
	for _, c := range cands {
		if c.Term == part {
			continue
		}
		d := EditDistance(part, c.Term)
		if d > maxd {
			continue
		}
		if d < bestD || (d == bestD && c.Docs > bestDocs) {
			best, bestD, bestDocs = c.Term, d, c.Docs
		}
	}
	return best, best != ""
}

// EditDistance is the optimal-string-alignment distance between a and b, counted in code
// points: insertions, deletions, substitutions and transpositions of two adjacent
// characters each cost 1 ("wacthdog" -> "watchdog" is 1).
func EditDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	n, m := len(ra), len(rb)
	// Three rows: i-2, i-1, i.
	prev2 := make([]int, m+1)
	prev := make([]int, m+1)
	cur := make([]int, m+1)
	for j := 0; j <= m; j++ {
		prev[j] = j
	}
	for i := 1; i <= n; i++ {
		cur[0] = i
		for j := 1; j <= m; j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			v := prev[j] + 1
			if x := cur[j-1] + 1; x < v {
				v = x
			}
			if x := prev[j-1] + cost; x < v {
				v = x
			}
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				if x := prev2[j-2] + 1; x < v {
					v = x
				}
			}
			cur[j] = v
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[m]
}

// nextPrefixBound returns the smallest ASCII string greater than every string that starts
// with p (p is ASCII letters and digits): p with its last byte incremented.
func nextPrefixBound(p string) string {
	b := []byte(p)
	b[len(b)-1]++
	return string(b)
}
