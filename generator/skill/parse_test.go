package skill

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The real card must parse into the model the issue describes: 12
// subsystems, 4 data flows, the env-var table. These counts come from
// reading ../shared/seed/distributed-nav.skill.txt, which the SKILL.md keeps
// word for word.
func TestParseRealCard(t *testing.T) {
	c, err := ParseFile(filepath.Join("..", "..", "content", "skills", "distributed-nav", "SKILL.md"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "distributed-nav" || len(c.Triggers) != 15 {
		t.Errorf("front matter: name %q, %d triggers; want distributed-nav, 15", c.Name, len(c.Triggers))
	}
	subs := c.Subsystems()
	if len(subs) != 12 {
		t.Fatalf("%d subsystems, want 12", len(subs))
	}
	for i, s := range subs {
		if s.Number != i+1 {
			t.Errorf("subsystem %d numbered %d", i+1, s.Number)
		}
		if len(s.Key) == 0 || len(s.Files) == 0 {
			t.Errorf("subsystem %d %q lacks files or key points", s.Number, s.Name)
		}
	}
	if subs[0].ShortName != "ProcessGroupNCCL" || subs[0].SizeHint != "~3500+ lines C++" {
		t.Errorf("size hint split: %q / %q", subs[0].ShortName, subs[0].SizeHint)
	}
	if got := len(subs[0].Key); got != 4 {
		t.Errorf("ProcessGroupNCCL key points: %d, want 4 (commas inside parentheses do not split)", got)
	}
	if subs[4].Notes[0].Name != "pytorch-torch-distributed-internals-deep-dive" {
		t.Errorf("notes ref name %q", subs[4].Notes[0].Name)
	}
	flows := c.Flows()
	if len(flows) != 4 {
		t.Fatalf("%d flows, want 4", len(flows))
	}
	ddp := flows[0]
	want := []string{"autograd_hook", "mark_variable_ready", "flat buffer copy", "mark_bucket_ready", "allreduce (async)", "copy back"}
	if len(ddp.Steps) != len(want) {
		t.Fatalf("DDP steps %v", ddp.Steps)
	}
	for i, w := range want {
		if ddp.Steps[i].Text != w {
			t.Errorf("DDP step %d = %q, want %q", i, ddp.Steps[i].Text, w)
		}
	}
	nccl := flows[2]
	if nccl.Steps[3].Text != "algorithm selection (Ring/Tree/CollNet)" || nccl.Steps[3].Depth != 1 || nccl.Steps[0].Depth != 0 {
		t.Errorf("NCCL AllReduce continuation steps: %+v", nccl.Steps[:4])
	}
	var env *Section
	for _, s := range c.Sections {
		if len(s.Tables) > 0 {
			env = s
		}
	}
	if env == nil || len(env.Tables[0].Rows) != 8 || env.Tables[0].Header[0] != "Variable" {
		t.Fatalf("env table not found or wrong: %+v", env)
	}
	if !strings.Contains(sectionByKind(c, KindProse, "RTX 4090 Specifics").Source, "2.76GB/s实测") {
		t.Error("the RTX 4090 section source lost the card's words")
	}
	// A section opening with a fenced block keeps its fence line.
	if src := sectionByKind(c, KindProse, "Weight Format Pipeline").Source; !strings.HasPrefix(src, "```text\nTraining:") {
		t.Errorf("weight-format section source starts %q", src[:20])
	}
}

func sectionByKind(c *Card, k SectionKind, title string) *Section {
	for _, s := range c.Sections {
		if s.Kind == k && s.Title == title {
			return s
		}
	}
	return &Section{}
}

// A different card yields its own model: nothing is tied to the real one.
func TestParseSecondCard(t *testing.T) {
	c, err := ParseFile(filepath.Join("testdata", "second.md"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "kv-cache-nav" || c.Title != "KV Cache Navigator" {
		t.Errorf("name/title %q %q", c.Name, c.Title)
	}
	subs := c.Subsystems()
	if len(subs) != 2 || subs[0].ShortName != "Block Manager" || subs[0].SizeHint != "~900 lines Python" {
		t.Fatalf("subsystems %+v", subs)
	}
	if subs[1].Fields[1].Label != "Owner" {
		t.Errorf("unknown labels must be kept: %+v", subs[1].Fields)
	}
	if got := subs[1].Key; len(got) != 2 || got[1] != "preemption (swap, recompute)" {
		t.Errorf("key split %q", got)
	}
	if len(c.Flows()) != 1 || len(c.Flows()[0].Steps) != 4 {
		t.Errorf("flows %+v", c.Flows())
	}
	kinds := []SectionKind{KindProse, KindIndex, KindFlows, KindProse}
	for i, s := range c.Sections {
		if s.Kind != kinds[i] {
			t.Errorf("section %q kind %v, want %v", s.Title, s.Kind, kinds[i])
		}
	}
}

func TestParseErrors(t *testing.T) {
	const good = "---\nname: x\ndescription: d\n---\n\n## A\n\ntext\n"
	tests := []struct {
		name, src, want string
	}{
		{"no front matter", "## A\n", "card.md:1: missing YAML front matter"},
		{"unclosed front matter", "---\nname: x\n", "card.md:1: front matter is not closed"},
		{"broken yaml", "---\nname: x\ndescription: [oops\n---\n## A\n", "card.md:"},
		{"missing name", "---\ndescription: d\n---\n## A\n", "card.md:1: front matter: \"name\" is missing"},
		{"duplicate number", "---\nname: x\ndescription: d\n---\n\n## I\n\n### 1. A\n\n- Key: a\n\n### 1. B\n\n- Key: b\n", "card.md:12: duplicate subsystem number 1"},
		{"level 4 heading", "---\nname: x\ndescription: d\n---\n\n## I\n\n#### deep\n", "card.md:8: unknown section layout"},
		{"mixed entries", "---\nname: x\ndescription: d\n---\n\n## I\n\n### 1. A\n\n- Key: a\n\n### Flow\n\n```\na → b\n```\n", "card.md:12: unknown section layout"},
		{"entry without block", "---\nname: x\ndescription: d\n---\n\n## F\n\n### Flow\n\nonly prose\n", "card.md:8: unknown section layout"},
		{"bad bullet", "---\nname: x\ndescription: d\n---\n\n## I\n\n### 1. A\n\n- no label here\n", "card.md:10: subsystem 1: bullet"},
		{"content before sections", "---\nname: x\ndescription: d\n---\n\nstray\n\n## A\n", "card.md:6: content before the first level-2 section"},
		{"duplicate section", good + "\n## A\n\nmore\n", "card.md:10: section \"A\" repeats"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("card.md", []byte(tt.src))
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			if !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error %q, want prefix %q", err, tt.want)
			}
		})
	}
	if _, err := Parse("card.md", []byte(good)); err != nil {
		t.Errorf("good card: %v", err)
	}
}

func FuzzParseSkill(f *testing.F) {
	real, err := os.ReadFile(filepath.Join("..", "..", "content", "skills", "distributed-nav", "SKILL.md"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(real)
	f.Add([]byte("---\nname: x\ndescription: d\n---\n## A\n### 1. B\n- Key: c\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		c, err := Parse("f.md", src)
		if err == nil && c.Name == "" {
			t.Fatal("accepted a card without a name")
		}
		if err != nil && !strings.HasPrefix(err.Error(), "f.md:") {
			t.Fatalf("error without location: %v", err)
		}
	})
}
