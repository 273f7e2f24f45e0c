package build

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/distributed-nav/distributed-nav/generator/sitetree"
)

// txtarRoot lays out a repository root from a txtar archive (the way Hugo writes its
// integration tests: a whole site as one readable fixture): the real data/ and
// content/site.yaml first, then every file of the archive over them. It returns the root
// and the archive's "want" file, if any.
func txtarRoot(t *testing.T, name string) (string, string) {
	t.Helper()
	ar, err := txtar.ParseFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	real := filepath.Join("..", "..")
	copyTree(t, filepath.Join(real, "data"), filepath.Join(root, "data"))
	b, err := os.ReadFile(filepath.Join(real, "content", "site.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "content", "site.yaml"), b)
	want := ""
	for _, f := range ar.Files {
		if f.Name == "want" {
			want = string(f.Data)
			continue
		}
		writeFile(t, filepath.Join(root, filepath.FromSlash(f.Name)), f.Data)
	}
	return root, want
}

func writeFile(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		writeFile(t, filepath.Join(dst, rel), b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A second card, unrelated to the project's, gets its own section: overview, section
// pages, subsystem pages that open with the note's lead, a flow page whose steps link to
// the note, its correction in place, its mentions linked, and its handbook chapter.
func TestSecondCard(t *testing.T) {
	root, _ := txtarRoot(t, "second-card.txtar")
	b, err := Load(Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	tree, err := b.Tree()
	if err != nil {
		t.Fatal(err)
	}
	pages := map[string]*sitetree.Page{}
	for _, p := range tree.Pages {
		pages[p.URL] = p
	}
	page := func(u string) *sitetree.Page {
		t.Helper()
		p := pages[u]
		if p == nil {
			var urls []string
			for u := range pages {
				urls = append(urls, u)
			}
			slices.Sort(urls)
			t.Fatalf("no page %s; pages: %v", u, urls)
		}
		return p
	}
	overview := page("/kv-cache-nav/")
	if overview.Title != "KV Cache Navigator" || !strings.Contains(overview.Body, "skill card `kv-cache-nav`") {
		t.Errorf("overview %q:\n%s", overview.Title, overview.Body)
	}
	// The one-line architecture stays on the overview; Settings has a table: a page.
	if !strings.Contains(overview.Body, "## Architecture") || pages["/kv-cache-nav/architecture/"] != nil {
		t.Errorf("short section not kept on the overview:\n%s", overview.Body)
	}
	settings := page("/kv-cache-nav/settings/")
	if !strings.Contains(settings.Body, "[NCCL_DEBUG](/env/#NCCL_DEBUG)") {
		t.Errorf("settings page does not link NCCL_DEBUG:\n%s", settings.Body)
	}
	bm := page("/kv-cache-nav/subsystems/block-manager/")
	lead := "The allocator that gives every request fixed-size cache blocks"
	if !strings.HasPrefix(bm.Body, lead) || !strings.HasPrefix(bm.Description, lead) {
		t.Errorf("subsystem page does not open with the note's lead:\ndescription %q\n%s", bm.Description, bm.Body)
	}
	if !strings.Contains(bm.Body, "~900 lines Python") || !strings.Contains(bm.Body, `id="correction-block-manager-size"`) {
		t.Errorf("subsystem page lacks the size hint or the correction:\n%s", bm.Body)
	}
	if !strings.Contains(bm.Body, "(/notes/kv-cache/#block-manager)") {
		t.Errorf("subsystem page does not link its deep dive:\n%s", bm.Body)
	}
	// Without a note section the page opens with the card's key points.
	if s := page("/kv-cache-nav/subsystems/scheduler/"); s.Description != "FCFS, preemption (swap, recompute)" {
		t.Errorf("scheduler description %q", s.Description)
	}
	flow := page("/kv-cache-nav/flows/admit/")
	if !strings.Contains(flow.Body, "3. block manager: explained in [Block Manager](/notes/kv-cache/#block-manager)") {
		t.Errorf("flow step not linked to the note:\n%s", flow.Body)
	}
	// The note links the subsystem it names and the variable.
	note := page("/notes/kv-cache/")
	for _, l := range []string{"[NCCL_DEBUG](/env/#NCCL_DEBUG)", "[Scheduler](/kv-cache-nav/subsystems/scheduler/)"} {
		if !strings.Contains(note.Body, l) {
			t.Errorf("note lacks %s:\n%s", l, note.Body)
		}
	}
	// A page of content/pages is published at its url, under its parent.
	page("/playground/ncclsim/")
	found := false
	for _, it := range tree.Nav {
		if it.URL == "/playground/" {
			for _, c := range it.Children {
				found = found || c.URL == "/playground/ncclsim/"
			}
		}
	}
	if !found {
		t.Errorf("/playground/ncclsim/ is not listed under the playground")
	}
	// The handbook has the card's chapter, and a chapter for the new layer.
	var titles []string
	for _, ch := range tree.Data["handbook"].([]Chapter) {
		titles = append(titles, ch.Title)
	}
	if !slices.Contains(titles, "The card: KV Cache Navigator") || !slices.Contains(titles, "Serving") {
		t.Errorf("handbook chapters %v", titles)
	}
	if err := tree.Write(filepath.Join(root, "site")); err != nil {
		t.Fatal(err)
	}
	// Nothing of the project's own card leaks in.
	for u := range pages {
		if strings.HasPrefix(u, "/distributed-nav/") {
			t.Errorf("page %s of the project's card in a site without it", u)
		}
	}
}

// Every fault of the broken site is reported as file:line: message, exactly as the
// archive's want section lists them.
func TestBrokenCardProblems(t *testing.T) {
	root, want := txtarRoot(t, "broken-card.txtar")
	b, err := Load(Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range b.Check() {
		got = append(got, p.String())
	}
	wantLines := strings.Split(strings.TrimSpace(want), "\n")
	slices.Sort(got)
	slices.Sort(wantLines)
	if strings.Join(got, "\n") != strings.Join(wantLines, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantLines, "\n"))
	}
}
