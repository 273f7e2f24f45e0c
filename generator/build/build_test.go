package build

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The faults a check must find, each with its file:line, are in
// testdata/broken-card.txtar (TestBrokenCardProblems): a synthetic site, so no
// test patches the real content.

// The real sources pass every check.
func TestCheckRealSources(t *testing.T) {
	b, err := Load(Options{Root: filepath.Join("..", "..")})
	if err != nil {
		t.Fatal(err)
	}
	if ps := b.Check(); len(ps) > 0 {
		t.Fatalf("the committed sources have problems:\n%s", ps.Error())
	}
}

// A failed build leaves the previous site tree exactly as it was.
func TestFailedBuildKeepsPreviousTree(t *testing.T) {
	root, _ := txtarRoot(t, "second-card.txtar")
	site := filepath.Join(root, "site")
	ctx := context.Background()
	if err := Run(ctx, Options{Root: root, SiteDir: site}); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, site)
	if len(before) < 20 { // the synthetic site: the card's pages, the note, playground, tables
		t.Fatalf("first build wrote %d files", len(before))
	}
	card := filepath.Join(root, "content", "skills", "kv-cache-nav", "SKILL.md")
	src, err := os.ReadFile(card)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, card, []byte(strings.Replace(string(src), "name: kv-cache-nav", "name: [broken", 1)))
	err = Run(ctx, Options{Root: root, SiteDir: site})
	if err == nil || !strings.Contains(err.Error(), "content/skills/kv-cache-nav/SKILL.md:2:") {
		t.Fatalf("broken front matter: error %v, want content/skills/kv-cache-nav/SKILL.md:2: ...", err)
	}
	after := snapshot(t, site)
	if len(after) != len(before) {
		t.Fatalf("file count changed from %d to %d", len(before), len(after))
	}
	for p, b := range before {
		if after[p] != b {
			t.Errorf("%s changed after a failed build", p)
		}
	}
}

func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[p] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
