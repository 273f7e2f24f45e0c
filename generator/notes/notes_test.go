package notes

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	src := "---\ntitle: T\ndescription: D\nweight: 7\nlayer: nccl\ncard_sections: [\"Common Issues\"]\n---\n\nIntro.\n\n" +
		"## Channels {#nccl-channel-architecture subsystem=\"NCCL Channel Architecture\"}\n\nText.\n\n" +
		"### How it works\n\nMore.\n\n## RTX 4090 boxes {#rtx-4090 section=\"RTX 4090 Specifics\"}\n\n### How it works\n\nEnd.\n"
	n, err := Parse("x/note.md", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if n.Name != "note" || n.Title != "T" || n.Weight != 7 || n.Layer != "nccl" || n.CardSections[0] != "Common Issues" {
		t.Errorf("front matter: %+v", n)
	}
	if n.BodyLine != 8 {
		t.Errorf("BodyLine = %d, want 8 (the line after the closing ---)", n.BodyLine)
	}
	want := []struct {
		level            int
		id, sub, cardSec string
		line             int
	}{
		{2, "nccl-channel-architecture", "NCCL Channel Architecture", "", 11},
		{3, "how-it-works", "", "", 15},
		{2, "rtx-4090", "", "RTX 4090 Specifics", 19},
		{3, "how-it-works-1", "", "", 21},
	}
	if len(n.Sections) != len(want) {
		t.Fatalf("sections %+v", n.Sections)
	}
	for i, w := range want {
		s := n.Sections[i]
		if s.Level != w.level || s.ID != w.id || s.Subsystem != w.sub || s.CardSection != w.cardSec || s.Line != w.line {
			t.Errorf("section %d = %+v, want %+v", i, s, w)
		}
	}
	// A level-2 section spans its level-3 children; a level-3 one stops at the next heading.
	if body := n.Body[n.Sections[0].Start:n.Sections[0].End]; !strings.Contains(body, "More.") || strings.Contains(body, "End.") {
		t.Errorf("section 0 span %q", body)
	}
	if sec, ok := n.SectionFor("NCCL Channel Architecture"); !ok || sec.ID != "nccl-channel-architecture" {
		t.Errorf("SectionFor: %+v %v", sec, ok)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"no title", "---\ndescription: d\n---\n## A\n", "n.md:1: front matter: \"title\" is missing"},
		{"unclosed", "---\ntitle: t\n", "n.md:1: front matter is not closed"},
		{"h1", "---\ntitle: t\n---\n\n# Top\n", "n.md:5: notes start at level 2"},
		{"duplicate id", "---\ntitle: t\n---\n## A {#x}\n\n## B {#x}\n", "n.md:6: heading id \"x\" repeats"},
	}
	for _, tt := range tests {
		if _, err := Parse("n.md", []byte(tt.src)); err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want prefix %q", tt.name, err, tt.want)
		}
	}
}

func TestLoadRealNotes(t *testing.T) {
	ns, err := LoadDir(filepath.Join("..", "..", "content", "notes"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ns) < 2 {
		t.Fatalf("%d notes", len(ns))
	}
	for i := 1; i < len(ns); i++ {
		if ns[i-1].Weight > ns[i].Weight {
			t.Errorf("notes not in weight order: %s (%d) before %s (%d)", ns[i-1].Name, ns[i-1].Weight, ns[i].Name, ns[i].Weight)
		}
	}
}
