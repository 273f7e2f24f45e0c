package sitetest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
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
	landscape := checkPageShapes(t, pdf, pages)
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
	// Printed, each variable is a stacked block whose cells carry their
	// column's name (data-label): every row prints "Default:" and
	// "Source:", and no label is taken from a column's position.
	for _, label := range []string{"Default: ", "Source: "} {
		if n := strings.Count(flat, label); n < len(rows) {
			t.Errorf("the PDF holds %q %d times, fewer than the %d env rows", label, n, len(rows))
		}
	}
	if strings.Contains(flat, "· component ") {
		t.Error("the printed env table labels a cell by its position (\"· component\")")
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
	if len(landscape) > 0 {
		n := strconv.Itoa(landscape[0])
		if b, err := exec.Command("pdftoppm", "-r", "80", "-png", "-f", n, "-l", n, "-singlefile", pdf, filepath.Join(out, "tuning-landscape")).CombinedOutput(); err != nil {
			t.Errorf("pdftoppm page %s: %v\n%s", n, err, b)
		}
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

// checkPageShapes reads every page's size: the handbook is A4 portrait
// (595.28 x 841.89 pt) except the pages of NCCL's TUNING table, which
// handbook.css prints landscape (@page wide); the text of each landscape
// page must be that table.
func checkPageShapes(t *testing.T, pdf string, pages int) (landscape []int) {
	t.Helper()
	out, err := exec.Command("pdfinfo", "-f", "1", "-l", strconv.Itoa(pages), pdf).Output()
	if err != nil {
		t.Fatalf("pdfinfo -f -l: %v", err)
	}
	seen := 0
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		// "Page    7 size: 595.276 x 841.89 pts (A4)"
		if len(f) < 6 || f[0] != "Page" || f[2] != "size:" || f[4] != "x" {
			continue
		}
		n, _ := strconv.Atoi(f[1])
		w, _ := strconv.ParseFloat(f[3], 64)
		h, _ := strconv.ParseFloat(f[5], 64)
		seen++
		switch {
		case near(w, 595.28) && near(h, 841.89):
		case near(w, 841.89) && near(h, 595.28):
			landscape = append(landscape, n)
		default:
			t.Errorf("page %d is %.2f x %.2f pt, neither A4 portrait nor landscape", n, w, h)
		}
	}
	if seen != pages {
		t.Fatalf("pdfinfo listed %d page sizes for %d pages", seen, pages)
	}
	if len(landscape) == 0 {
		t.Fatal("no landscape page: the TUNING table is printed on portrait paper")
	}
	for _, n := range landscape {
		txt, err := exec.Command("pdftotext", "-layout", "-f", strconv.Itoa(n), "-l", strconv.Itoa(n), pdf, "-").Output()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(txt), "Max NThreads") {
			t.Errorf("landscape page %d is not the TUNING table", n)
		}
	}
	t.Logf("%d pages, landscape: %v", pages, landscape)
	return landscape
}

func near(a, b float64) bool { return a > b-1 && a < b+1 }

// The handbook sends links it cannot hold to the live site, absolute from the configured
// base URL: a playground view with its inputs in the query string, and the pages no
// chapter prints (data/handbook_live.json). No in-document anchor carries a query string.
func TestHandbookLinksToLiveSite(t *testing.T) {
	needSite(t)
	raw, err := os.ReadFile(filepath.Join(subSite.Public, "handbook.html"))
	if err != nil {
		t.Fatal(err)
	}
	html := string(raw)
	hrefs := regexp.MustCompile(`href="?([^" >]+)`).FindAllStringSubmatch(html, -1)
	live := 0
	for _, m := range hrefs {
		h := m[1]
		switch {
		case strings.HasPrefix(h, "#") && strings.Contains(h, "?"):
			t.Errorf("in-document anchor with a query string: %s", h)
		case strings.HasPrefix(h, "#playground/step") || strings.HasPrefix(h, "#playground/doctor") || h == "#playground":
			t.Errorf("anchor to a page the handbook does not print: %s", h)
		case strings.HasPrefix(h, subSite.BaseURL+"playground/"):
			live++
		case strings.HasPrefix(h, "/") && strings.Contains(h, "?"):
			t.Errorf("root-relative link with a query string: %s", h)
		}
	}
	// content/notes/hardware.md alone links 20-odd estimator and topology views.
	if live < 20 {
		t.Errorf("%d links to the live playground, want the notes' 20 or more", live)
	}
	var outside []string
	b, err := os.ReadFile(filepath.Join(subSite.Site, "data", "handbook_live.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &outside); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"/playground/step/", "/playground/doctor/", "/playground/ncclsim/"} {
		if !slices.Contains(outside, u) {
			t.Errorf("handbook_live.json = %v, want %s (no chapter prints it)", outside, u)
		}
	}
}
