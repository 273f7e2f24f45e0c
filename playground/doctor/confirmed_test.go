package doctor

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
)

// confirmedNote is a data/logs/*.note file: the published log's URL, who
// confirmed the cause, the diagnosis, and what that implies for the rules.
type confirmedNote struct {
	implies, contradicts, has []string
}

func readNote(t *testing.T, path string) confirmedNote {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var n confirmedNote
	seen := map[string]bool{}
	for _, l := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		seen[k] = true
		switch k {
		case "implies":
			n.implies = strings.Fields(v)
		case "contradicts":
			n.contradicts = strings.Fields(v)
		case "explanation has":
			n.has = append(n.has, strings.TrimSpace(v))
		}
	}
	for _, k := range []string{"url", "confirmed by", "diagnosis", "implies", "contradicts"} {
		if !seen[k] {
			t.Errorf("%s: no %q line", path, k)
		}
	}
	return n
}

// TestConfirmedLogs runs the doctor on every published log whose cause a
// maintainer or the reporter confirmed (data/logs/NAME.log with
// NAME.note). The rule IDs the confirmed cause implies must fire, none it
// contradicts may, each implied diagnosis names a fix and a check, and
// every NCCL line is either tied to the catalog or listed as unknown.
func TestConfirmedLogs(t *testing.T) {
	notes, err := filepath.Glob(filepath.Join(logsDir, "*.note"))
	if err != nil || len(notes) == 0 {
		t.Fatalf("no notes in %s: %v", logsDir, err)
	}
	for _, np := range notes {
		name := strings.TrimSuffix(filepath.Base(np), ".note")
		t.Run(name, func(t *testing.T) {
			n := readNote(t, np)
			s := parseFile(t, filepath.Join(logsDir, name+".log"))
			ds := Diagnose(s, ncclenv.Env{})
			got := ids(ds)
			for _, id := range n.implies {
				if !slices.Contains(got, id) {
					t.Errorf("confirmed cause implies %s; diagnoses %v", id, got)
					continue
				}
				if d := find(ds, id); slices.ContainsFunc(lineRules, func(r Rule) bool { return r.ID == id }) &&
					(!strings.Contains(d.Explanation, "Fix: ") || !strings.Contains(d.Explanation, "Check: ")) {
					t.Errorf("%s: explanation without fix and check: %q", id, d.Explanation)
				}
			}
			for _, id := range n.contradicts {
				if slices.Contains(got, id) {
					t.Errorf("%s fired, but the confirmed cause contradicts it (diagnoses %v)", id, got)
				}
			}
			all := ""
			for _, d := range ds {
				all += d.Explanation + " "
			}
			for _, h := range n.has {
				if !strings.Contains(all, h) {
					t.Errorf("no diagnosis mentions %q", h)
				}
			}
			m := s.Messages
			if m.Matched+m.Unknown.Count != m.NCCL {
				t.Errorf("messages: %d NCCL lines, %d matched, %d unknown", m.NCCL, m.Matched, m.Unknown.Count)
			}
		})
	}
}

// TestRuleSupport counts, for every diagnosis the doctor can make from a
// log, the published logs with a confirmed cause whose note implies it, and
// checks that exactly the ones with fewer than two are marked unproven.
func TestRuleSupport(t *testing.T) {
	notes, err := filepath.Glob(filepath.Join(logsDir, "*.note"))
	if err != nil {
		t.Fatal(err)
	}
	support := map[string]int{}
	for _, np := range notes {
		for _, id := range readNote(t, np).implies {
			support[id]++
		}
	}
	ids := map[string]bool{}
	for _, r := range lineRules {
		ids[r.ID] = true
	}
	for id := range unproven {
		ids[id] = true
	}
	// The diagnoses written as functions: every ID literal of their files.
	for _, f := range []string{"diagnose.go", "benchdiag.go", "rules_net.go"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`ID: "([a-z0-9-]+)"`).FindAllSubmatch(b, -1) {
			if id := string(m[1]); !strings.HasPrefix(id, "env-") && id != "nccl-warn" {
				ids[id] = true
			}
		}
	}
	for id := range support {
		if !strings.HasPrefix(id, "env-") && id != "nccl-warn" {
			ids[id] = true
		}
	}
	for id := range ids {
		if got, want := unproven[id], support[id] < 2; got != want {
			t.Errorf("%s: %d confirmed log(s), marked unproven = %v", id, support[id], got)
		}
	}
	// The mark reaches the text.
	s := parseString(t, "h:1:2 [0] init.cc:1 NCCL WARN Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1000\n")
	d := find(Diagnose(s, ncclenv.Env{}), "duplicate-gpu")
	if unproven["duplicate-gpu"] != strings.Contains(d.Explanation, "Unproven") {
		t.Errorf("duplicate-gpu explanation and mark disagree: %q", d.Explanation)
	}
}
