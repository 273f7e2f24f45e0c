package sitetest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/generator/envtable"
)

// The printed handbook holds every chapter and every variable of the env
// tables, on a plausible number of pages, and renders to images a person can
// look at.
func TestHandbookPDF(t *testing.T) {
	needSite(t)
	pdf := filepath.Join(subSite.Public, "handbook.pdf")
	info, err := exec.Command("pdfinfo", pdf).Output()
	if err != nil {
		t.Fatalf("pdfinfo (Debian package poppler-utils): %v", err)
	}
	pages := 0
	for _, line := range strings.Split(string(info), "\n") {
		if rest, ok := strings.CutPrefix(line, "Pages:"); ok {
			pages, _ = strconv.Atoi(strings.TrimSpace(rest))
		}
	}
	// The notes alone hold about 40,000 words; at roughly 500-700 words
	// per A4 page with tables and code that is 60-150 pages, plus the card,
	// the env table (~350 rows at ~25 rows a page) and the corrections.
	if pages < 60 || pages > 400 {
		t.Errorf("handbook has %d pages, want 60..400", pages)
	}
	text, err := exec.Command("pdftotext", "-layout", pdf, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	flat := strings.Join(strings.Fields(string(text)), " ")
	var chapters []struct {
		Title string `json:"title"`
		Pages []struct {
			Title string `json:"title"`
		} `json:"pages"`
	}
	raw, err := os.ReadFile(filepath.Join(subSite.Site, "data", "handbook.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &chapters); err != nil {
		t.Fatal(err)
	}
	if len(chapters) < 6 {
		t.Errorf("%d chapters, want the card, PyTorch, NCCL, hardware, env, corrections and more", len(chapters))
	}
	for _, ch := range chapters {
		if !strings.Contains(flat, ch.Title) {
			t.Errorf("chapter %q is not in the PDF text", ch.Title)
		}
		for _, p := range ch.Pages {
			if !strings.Contains(flat, strings.Join(strings.Fields(p.Title), " ")) {
				t.Errorf("page %q of chapter %q is not in the PDF text", p.Title, ch.Title)
			}
		}
	}
	rows, err := envtable.Load(filepath.Join(repoRoot, "data"))
	if err != nil {
		t.Fatal(err)
	}
	missing := 0
	for _, r := range rows {
		if !strings.Contains(flat, r.Name) {
			missing++
			if missing <= 10 {
				t.Errorf("env var %s is not in the PDF text", r.Name)
			}
		}
	}
	if missing > 10 {
		t.Errorf("... and %d more env vars missing", missing-10)
	}
	// Pages as PNG for a person to look at: cover, contents, first chapter.
	out := filepath.Join(repoRoot, "screenshots", "handbook")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command("pdftoppm", "-r", "60", "-png", "-f", "1", "-l", "4", pdf, filepath.Join(out, "page")).CombinedOutput(); err != nil {
		t.Fatalf("pdftoppm: %v\n%s", err, b)
	}
	pngs, _ := filepath.Glob(filepath.Join(out, "page-*.png"))
	if len(pngs) < 4 {
		t.Errorf("pdftoppm wrote %d PNGs, want 4", len(pngs))
	}
	t.Logf("handbook: %d pages, %d bytes; PDF printed in %v", pages, fileSize(pdf), subSite.PDFTime)
}

func fileSize(p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		return -1
	}
	return fi.Size()
}
