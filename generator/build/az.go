package build

import (
	"fmt"
	"sort"
	"strings"
	"unicode"

	"github.com/distributed-nav/distributed-nav/generator/sitetext"
	"github.com/distributed-nav/distributed-nav/generator/sitetree"
)

// azEntry is one line of the A-Z index.
type azEntry struct {
	Title, URL, Where string
}

// azPage builds the A-Z index: every page and every note section, sorted by
// title and grouped by first letter. It is the search box's target when
// JavaScript is off.
func azPage(text sitetext.Page, pages []*sitetree.Page, extra []azEntry) *sitetree.Page {
	var entries []azEntry
	for _, p := range pages {
		if p.URL == "/" {
			continue
		}
		entries = append(entries, azEntry{Title: p.Title, URL: p.URL})
	}
	entries = append(entries, extra...)
	sort.SliceStable(entries, func(i, j int) bool {
		a, b := strings.ToLower(entries[i].Title), strings.ToLower(entries[j].Title)
		if a != b {
			return naturalLess(a, b)
		}
		return entries[i].URL < entries[j].URL
	})
	groups := map[string][]azEntry{}
	var letters []string
	for _, e := range entries {
		l := "#"
		for _, r := range e.Title {
			if unicode.IsLetter(r) {
				l = strings.ToUpper(string(r))
			}
			break
		}
		if _, ok := groups[l]; !ok {
			letters = append(letters, l)
		}
		groups[l] = append(groups[l], e)
	}
	sort.Strings(letters)
	var b strings.Builder
	b.WriteString(string(text.Intro) + "\n\n")
	for i, l := range letters {
		if i > 0 {
			b.WriteString(" · ")
		}
		fmt.Fprintf(&b, "[%s](#%s)", l, letterID(l))
	}
	b.WriteString("\n\n")
	for _, l := range letters {
		// "## #" would be an empty heading (its "#" a closing sequence).
		fmt.Fprintf(&b, "## %s {#%s}\n\n", strings.ReplaceAll(l, "#", "\\#"), letterID(l))
		for _, e := range groups[l] {
			title := strings.NewReplacer("[", "\\[", "]", "\\]").Replace(e.Title)
			if e.Where != "" {
				fmt.Fprintf(&b, "- [%s](%s) (%s)\n", title, e.URL, e.Where)
			} else {
				fmt.Fprintf(&b, "- [%s](%s)\n", title, e.URL)
			}
		}
		b.WriteString("\n")
	}
	return &sitetree.Page{URL: "/az/", Title: string(text.Title), Description: string(text.Description),
		Body: b.String(), Weight: 1000}
}

func letterID(l string) string {
	if l == "#" {
		return "other"
	}
	return "letter-" + strings.ToLower(l)
}

// naturalLess orders a before b with runs of digits compared as numbers,
// so that "2. WorkNCCL" comes before "10. NCCL Protocol".
func naturalLess(a, b string) bool {
	for a != "" && b != "" {
		da, db := digitRun(a), digitRun(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if len(na) != len(nb) {
				return len(na) < len(nb)
			}
			if na != nb {
				return na < nb
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

// digitRun is the length of the run of ASCII digits that s starts with.
func digitRun(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}
