package corrections

import (
	"path/filepath"
	"strings"
	"testing"
)

func corr(id, quote string) Correction {
	return Correction{ID: id, Quote: quote, Verdict: "false", Correction: "The source says `x`.", Sources: []string{"https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/search.cc#L1-L2"}}
}

func TestApply(t *testing.T) {
	tests := []struct {
		name, md string
		c        Correction
		want     []string // substrings, in order
	}{
		{"paragraph", "Intro.\n\nIt uses simulated annealing search here.\nSecond line.\n\nNext.\n", corr("sa", "simulated annealing search"),
			[]string{`It uses <mark class="corrected"><a href="#correction-sa">simulated annealing search</a></mark> here.`, "Second line.\n\n<div class=\"correction\"", "</div>\n\nNext."}},
		{"list item", "- **Key:** LL (<4KB), Simple\n- **File:** x\n", corr("ll", "LL (<4KB"),
			[]string{`- **Key:** <mark class="corrected"><a href="#correction-ll">LL (<4KB</a></mark>), Simple` + "\n  <div class=\"correction\"", "</div>\n- **File:** x"}},
		{"code block", "```text\na → simulated → b\n```\n\nAfter.\n", corr("cb", "simulated"),
			[]string{"a → simulated → b\n```\n<div class=\"correction\"", "After."}},
		{"table", "| a | b |\n|---|---|\n| NCCL_MAX_NRINGS | 4 |\n| c | d |\n\nAfter.\n", corr("t", "NCCL_MAX_NRINGS"),
			[]string{`| <mark class="corrected"><a href="#correction-t">NCCL_MAX_NRINGS</a></mark> | 4 |` + "\n| c | d |\n\n<div class=\"correction\""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, missing := Apply(tt.md, []Correction{tt.c})
			if len(missing) != 0 {
				t.Fatalf("not placed: %v", missing)
			}
			pos := 0
			for _, w := range tt.want {
				i := strings.Index(out[pos:], w)
				if i < 0 {
					t.Fatalf("output lacks %q after offset %d:\n%s", w, pos, out)
				}
				pos += i + len(w)
			}
			if !strings.Contains(out, "<code>x</code>") {
				t.Error("backticks in the correction text must become <code>")
			}
		})
	}
	if _, missing := Apply("nothing here", []Correction{corr("m", "absent")}); len(missing) != 1 {
		t.Error("a quote not in the text must be reported")
	}
}

func TestLoadRealFile(t *testing.T) {
	cs, err := Load(filepath.Join("..", "..", "data", "corrections.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) < 20 {
		t.Errorf("%d corrections; the fact-check files list more than 20 claims the card gets wrong", len(cs))
	}
	for _, c := range cs {
		if c.Line == 0 {
			t.Errorf("%s has no line", c.ID)
		}
	}
}
