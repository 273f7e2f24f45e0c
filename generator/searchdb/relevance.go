package searchdb

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
)

// RelevanceTopN is how high the expected result must rank in a relevance case.
const RelevanceTopN = 3

// Case is one relevance expectation: searching Query must give, among the first
// RelevanceTopN results, one whose URL contains Want.
type Case struct {
	Query string
	Want  string
	// Line is the line of the cases file the case came from (0 if built in code).
	Line int
}

// Failure is a Case that did not hold.
type Failure struct {
	Case Case
	// Got are the URLs of the first RelevanceTopN results.
	Got []string
	// Err is set when the search itself failed.
	Err error
}

func (f Failure) String() string {
	if f.Err != nil {
		return fmt.Sprintf("line %d: %q: %v", f.Case.Line, f.Case.Query, f.Err)
	}
	return fmt.Sprintf("line %d: %q: want a URL containing %q in the top %d, got %q", f.Case.Line, f.Case.Query, f.Case.Want, RelevanceTopN, f.Got)
}

// ParseCases reads relevance cases, one per line: the query, a tab, then a fragment of the
// expected URL. Blank lines and lines whose first character is # are skipped.
func ParseCases(r io.Reader) ([]Case, error) {
	var out []Case
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		q, want, ok := strings.Cut(line, "\t")
		q, want = strings.TrimSpace(q), strings.TrimSpace(want)
		if !ok || q == "" || want == "" {
			return nil, fmt.Errorf("searchdb: relevance cases line %d: want \"query<TAB>expected URL fragment\", got %q", n, line)
		}
		out = append(out, Case{Query: q, Want: want, Line: n})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("searchdb: read relevance cases: %w", err)
	}
	return out, nil
}

// CheckRelevance runs every case against db and returns those whose expected URL is not in
// the first RelevanceTopN results.
func CheckRelevance(ctx context.Context, db *DB, cases []Case) []Failure {
	var fails []Failure
	for _, c := range cases {
		res, err := db.Search(ctx, c.Query, Options{Limit: RelevanceTopN})
		if err != nil {
			fails = append(fails, Failure{Case: c, Err: err})
			continue
		}
		var got []string
		hit := false
		for _, r := range res {
			got = append(got, r.URL)
			if strings.Contains(r.URL, c.Want) {
				hit = true
			}
		}
		if !hit {
			fails = append(fails, Failure{Case: c, Got: got})
		}
	}
	return fails
}
