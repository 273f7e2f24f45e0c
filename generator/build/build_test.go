package build

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixtureRoot copies the real content/ and data/ into a temporary root so a
// test can break one thing and see the generator catch it.
func fixtureRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, dir := range []string{"content", "data"} {
		src := filepath.Join("..", "..", dir)
		err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(src, p)
			dst := filepath.Join(root, dir, rel)
			if d.IsDir() {
				return os.MkdirAll(dst, 0o755)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(dst, b, 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func edit(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("%s does not contain %q", path, old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Each broken source makes the check fail with "file:line: what is wrong".
func TestCheckFindsBrokenSources(t *testing.T) {
	const note = "content/notes/nccl-internals-architecture-deep-dive.md"
	const card = "content/skills/distributed-nav/SKILL.md"
	tests := []struct {
		name string
		file string
		old  string
		new  string
		want string // substring of one reported problem, with its file
	}{
		{"permalink at another tag", note, "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/search.cc",
			"https://github.com/NVIDIA/nccl/blob/master/src/graph/search.cc", note + ":"},
		{"permalink to a missing path", note, "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/search.cc",
			"https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/searchx.cc", "does not exist at v2.30.7-1"},
		{"line range beyond the file", note, "\n## ", "\nSee [tuning](https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/tuning.cc#L1-L99999).\n\n## ", "beyond the end"},
		{"unknown env var", note, "`NCCL_P2P_DISABLE`", "`NCCL_P2P_DISABEL`", "unknown environment variable NCCL_P2P_DISABEL (nearest known: NCCL_P2P_DISABLE"},
		{"note section without a source link", note, "\n## ", "\n## A section with no source {#nosource}\n\nJust words.\n\n## ", `section "A section with no source" has no source link`},
		{"link to no page", note, "\n## ", "\nSee [the estimator](/playground/nowhere/).\n\n## ", "link /playground/nowhere/ points at no page"},
		{"correction with an invalid permalink", "data/corrections.yaml", "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/search.cc",
			"https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/nosuch.cc", "data/corrections.yaml:"},
		{"correction quote not in the card", "data/corrections.yaml", `quote: "simulated annealing search"`, `quote: "simulated annealing search engine"`, "is not in the card"},
		{"notes reference to no note", card, "notebook/fundamentals/nccl-internals-architecture-deep-dive.md", "notebook/fundamentals/missing-note.md", card + ":"},
		{"unknown env var in the card", card, "NCCL_DEBUG\t", "NCCL_DEBUG_TYPO\t", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := fixtureRoot(t)
			if tt.want == "" {
				// The card's env table rows are Markdown tables written with pipes.
				tt.old, tt.new, tt.want = "| NCCL_DEBUG |", "| NCCL_DEBUG_TYPO |", card+":"
			}
			edit(t, filepath.Join(root, tt.file), tt.old, tt.new)
			b, err := Load(Options{Root: root})
			if err != nil {
				if strings.Contains(err.Error(), tt.want) {
					return
				}
				t.Fatalf("load: %v", err)
			}
			ps := b.Check()
			if len(ps) == 0 {
				t.Fatalf("no problem reported, want %q", tt.want)
			}
			for _, p := range ps {
				if strings.Contains(p.String(), tt.want) {
					if !strings.Contains(p.String(), ".") || p.Line <= 0 {
						t.Errorf("problem lacks file:line: %s", p)
					}
					return
				}
			}
			t.Errorf("no problem contains %q; got:\n%s", tt.want, ps.Error())
		})
	}
}

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
	root := fixtureRoot(t)
	site := filepath.Join(root, "site")
	ctx := context.Background()
	if err := Run(ctx, Options{Root: root, SiteDir: site}); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, site)
	if len(before) < 30 {
		t.Fatalf("first build wrote %d files", len(before))
	}
	edit(t, filepath.Join(root, "content", "skills", "distributed-nav", "SKILL.md"), "name: distributed-nav", "name: [broken")
	err := Run(ctx, Options{Root: root, SiteDir: site})
	if err == nil || !strings.Contains(err.Error(), "content/skills/distributed-nav/SKILL.md:2:") {
		t.Fatalf("broken front matter: error %v, want content/skills/distributed-nav/SKILL.md:2: ...", err)
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
