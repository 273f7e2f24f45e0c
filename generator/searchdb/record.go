package searchdb

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// Kinds of records. The browser shows the kind as a badge and `distnav search --kind`
// filters on it.
const (
	KindSection    = "section"    // a level-2 or level-3 section of a page
	KindEnv        = "env"        // an environment variable
	KindSymbol     = "symbol"     // a source symbol or file at the pinned tag
	KindCorrection = "correction" // a correction of a common belief
	KindPage       = "page"       // a whole page (its lead text)
	KindLog        = "log"        // a section of the review log: how claims were checked, ranked like a symbol
)

// Kinds lists every valid Record.Kind.
var Kinds = []string{KindSection, KindEnv, KindSymbol, KindCorrection, KindPage, KindLog}

// ValidKind reports whether k is one of Kinds.
func ValidKind(k string) bool { return slices.Contains(Kinds, k) }

// Record is one row of search.db: something a search can find and link to.
type Record struct {
	// Kind is one of Kinds.
	Kind string `json:"kind"`
	// Title is what the result shows first: a heading, a variable or symbol name.
	Title string `json:"title"`
	// Breadcrumb is where the record lives ("Internals › ProcessGroupNCCL"); searched with a
	// medium weight.
	Breadcrumb string `json:"breadcrumb"`
	// URL is relative to the site's base URL, without a leading slash, usually with an
	// anchor: "internals/processgroupnccl/#watchdog-thread". The browser resolves it against
	// the base URL, so the site can be hosted under a sub-path.
	URL string `json:"url"`
	// Text is the plain text searched with a low weight and cut into snippets.
	Text string `json:"text"`
	// Identifiers are names the record defines or is about (NCCL_P2P_DISABLE,
	// ProcessGroupNCCL, mark_bucket_ready). They are indexed whole and in parts, with a high
	// weight. Identifier-like words of the Title (with _ . : - / or inner capitals) are
	// added automatically.
	Identifiers []string `json:"identifiers,omitempty"`
}

// cleanText replaces control characters (which the snippet markers use) by spaces, collapses
// runs of white space and trims.
func cleanText(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.IsSpace(r) || r == 0xFFFD {
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// normalize returns a cleaned copy of r, or an error naming what is wrong with it.
func (r Record) normalize() (Record, error) {
	out := Record{
		Kind:       r.Kind,
		Title:      cleanText(r.Title),
		Breadcrumb: cleanText(r.Breadcrumb),
		URL:        strings.TrimSpace(r.URL),
		Text:       cleanText(r.Text),
	}
	switch {
	case !ValidKind(out.Kind):
		return out, fmt.Errorf("kind %q is not one of %v", r.Kind, Kinds)
	case out.Title == "":
		return out, fmt.Errorf("empty title")
	case out.URL == "":
		return out, fmt.Errorf("empty URL")
	case strings.HasPrefix(out.URL, "/") || strings.Contains(out.URL, "://") || strings.ContainsAny(out.URL, " \t\n"):
		return out, fmt.Errorf("URL %q must be relative to the site base (no leading slash, no scheme, no spaces)", r.URL)
	}
	for _, id := range r.Identifiers {
		if id = cleanText(id); id != "" {
			out.Identifiers = append(out.Identifiers, id)
		}
	}
	return out, nil
}

// identText is the text of the ident column for r. Every identifier (given, or found in
// the title) is cut into segments at the scope and path separators (: . /), each segment
// into parts (SplitIdent), and the column gets the parts and every run of two or more
// adjacent parts of a segment written together. NCCL_P2P_DISABLE gives
// "nccl p2p disable ncclp2p p2pdisable ncclp2pdisable", so that "p2p disable",
// "nccl_p2p_disable", "NCCL_P2P_DISABLE" and "ncclp2p" all find it;
// c10d::ProcessGroupNCCL gives "c10d process group nccl processgroup groupnccl
// processgroupnccl", so that "processgroup" finds it. Runs do not cross a separator:
// nobody types "c10dprocessgroupnccl", and long scoped names would make many.
func (r Record) identText() string {
	notWord := func(c rune) bool { return !isWordRune(c) && !isConnector(c) }
	ids := slices.Clone(r.Identifiers)
	for _, w := range strings.FieldsFunc(r.Title, notWord) {
		if len(SplitIdent(w)) > 1 {
			ids = append(ids, w)
		}
	}
	var terms []string
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			terms = append(terms, s)
		}
	}
	for _, id := range ids {
		segments := strings.FieldsFunc(id, func(c rune) bool { return notWord(c) || strings.ContainsRune(scopeSeparators, c) })
		for _, seg := range segments {
			parts := SplitIdent(seg)
			if len(parts) > maxIdentParts {
				parts = parts[:maxIdentParts]
			}
			for _, p := range parts {
				add(p)
			}
			for n := 2; n <= len(parts); n++ {
				for i := 0; i+n <= len(parts); i++ {
					add(strings.Join(parts[i:i+n], ""))
				}
			}
		}
	}
	return strings.Join(terms, " ")
}

// scopeSeparators end a segment of an identifier for identText.
const scopeSeparators = ":./"

// titleKey is the title written as Query.Key would write it when typed in the search box.
func (r Record) titleKey() string { return Parse(r.Title).Key() }

// maxIdentParts bounds the parts of one segment of an indexed identifier (and so its joined
// runs: at most 28 for 8 parts).
const maxIdentParts = 8
