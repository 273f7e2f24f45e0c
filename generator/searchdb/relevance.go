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

// Rates counts how many cases find their expected record first (Top1) and among the first
// RelevanceTopN results (TopN), out of N.
type Rates struct {
	N, Top1, TopN int
}

// String reports the rates as "top-1 a/n (x%), top-3 b/n (y%)".
func (r Rates) String() string {
	pct := func(k int) float64 {
		if r.N == 0 {
			return 0
		}
		return 100 * float64(k) / float64(r.N)
	}
	return fmt.Sprintf("top-1 %d/%d (%.0f%%), top-%d %d/%d (%.0f%%)", r.Top1, r.N, pct(r.Top1), RelevanceTopN, r.TopN, r.N, pct(r.TopN))
}

// MeasureRelevance runs every case against db and counts where its expected record ranks. A
// case whose search fails counts as a miss.
func MeasureRelevance(ctx context.Context, db *DB, cases []Case) Rates {
	r := Rates{N: len(cases)}
	for _, c := range cases {
		res, err := db.Search(ctx, c.Query, Options{Limit: RelevanceTopN})
		if err != nil {
			continue
		}
		for i, got := range res {
			if strings.Contains(got.URL, c.Want) {
				if i == 0 {
					r.Top1++
				}
				r.TopN++
				break
			}
		}
	}
	return r
}
