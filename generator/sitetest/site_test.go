package sitetest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/net/html"
)

// The site is built once for the package, twice over: for the domain root
// and for a GitHub Pages project sub-path.
var (
	repoRoot          string
	contentRoot       string
	rootSite, subSite *Built
	buildErr          error
)

const subPath = "/distributed-nav/"

func TestMain(m *testing.M) {
	code := func() int {
		var err error
		repoRoot, err = RepoRoot()
		if r := os.Getenv("SITETEST_CONTENT_ROOT"); r != "" {
			// Lets a developer check another content tree against the
			// same site; CI never sets it.
			contentRoot = r
		} else {
			contentRoot = repoRoot
		}
		if err != nil {
			buildErr = err
			return m.Run()
		}
		work, err := os.MkdirTemp("", "sitetest-")
		if err != nil {
			buildErr = err
			return m.Run()
		}
		defer os.RemoveAll(work)
		// Twenty minutes: a fresh machine compiles Hugo and every wasm binary
		// first, which on two busy cores took more than ten.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
		defer cancel()
		rootSite, buildErr = Build(ctx, contentRoot, filepath.Join(work, "root"), "http://127.0.0.1/")
		if buildErr == nil {
			subSite, buildErr = Build(ctx, contentRoot, filepath.Join(work, "sub"), "https://example.github.io"+subPath)
		}
		return m.Run()
	}()
	os.Exit(code)
}

func needSite(t *testing.T) {
	t.Helper()
	if buildErr != nil {
		t.Fatalf("building the site failed: %v", buildErr)
	}
}

// Every internal link, asset and anchor resolves, served at the root and
// under a sub-path (where a root-relative link that skipped relURL would
// escape the site and fail).
func TestLinksResolve(t *testing.T) {
	needSite(t)
	cases := []struct {
		name   string
		site   *Built
		prefix string
	}{
		{"root", rootSite, "/"},
		{"subpath", subSite, subPath},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := Serve(c.site.Public, c.prefix, nil)
			defer srv.Close()
			// The sub-path build carries absolute URLs of its real host in
			// a few places (canonical links); the crawler follows only
			// links on the test server's origin, which relURL produces.
			res, err := Crawl(srv.Client(), srv.URL+c.prefix, c.prefix)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range res.Broken {
				t.Errorf("broken: %s", b)
			}
			if res.Pages < 20 {
				t.Errorf("crawled only %d pages; the card alone has 12 subsystem pages", res.Pages)
			}
			t.Logf("%s: %d pages, %d internal links checked", c.name, res.Pages, res.Links)
		})
	}
}

// The crawler itself must notice what it is there to catch.
func TestCrawlFindsBrokenLinks(t *testing.T) {
	dir := t.TempDir()
	write := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("index.html", `<html><body><a href="/sub/a/">a</a><a href="/sub/a/#there">ok</a><a href="/sub/a/#nowhere">x</a><a href="/escape/">y</a><img src="/sub/missing.png"></body></html>`)
	write("a/index.html", `<html><body><h2 id="there">t</h2></body></html>`)
	srv := Serve(dir, "/sub/", nil)
	defer srv.Close()
	res, err := Crawl(srv.Client(), srv.URL+"/sub/", "/sub/")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"no element with id nowhere", "escapes the site's path /sub/", "status 404"}
	if len(res.Broken) != len(want) {
		t.Fatalf("found %d broken, want %d: %v", len(res.Broken), len(want), res.Broken)
	}
	for _, w := range want {
		found := false
		for _, b := range res.Broken {
			found = found || strings.Contains(b.Reason, w)
		}
		if !found {
			t.Errorf("missing finding %q in %v", w, res.Broken)
		}
	}
}

// consoleErrors collects console errors and uncaught exceptions of the tab.
func consoleErrors(ctx context.Context) func() []string {
	var mu sync.Mutex
	var errs []string
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				mu.Lock()
				errs = append(errs, m.String())
				mu.Unlock()
			}
		}
	}()
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), errs...)
	}
}

// The home page and a subsystem page render in Chromium with no console
// errors and no WCAG 2 A/AA violations, in the light and the dark theme.
func TestPagesInBrowser(t *testing.T) {
	needSite(t)
	ctx, srv := servedBrowser(t, AxeHandler(repoRoot), 3*time.Minute)
	errs := consoleErrors(ctx)
	pages := []struct{ path, wantH1 string }{
		{"", "distributed-nav"},
		{"distributed-nav/subsystems/processgroupnccl/", "1. ProcessGroupNCCL"},
		{"distributed-nav/flows/nccl-allreduce/", "NCCL AllReduce"},
	}
	for _, p := range pages {
		for _, theme := range []string{"light", "dark"} {
			t.Run(fmt.Sprintf("%s/%s", p.path, theme), func(t *testing.T) {
				u := srv.URL + subPath + p.path
				if err := chromedp.Do(ctx, chromedp.Navigate(u)); err != nil {
					t.Fatal(err)
				}
				set := fmt.Sprintf(`document.documentElement.dataset.theme = %q; true`, theme)
				if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](set)); err != nil {
					t.Fatal(err)
				}
				h1, err := chromedp.Run(ctx, chromedp.Text("h1"))
				if err != nil {
					t.Fatal(err)
				}
				if strings.TrimSpace(h1) != p.wantH1 {
					t.Errorf("h1 = %q, want %q", h1, p.wantH1)
				}
				lang, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.lang`))
				if err != nil || lang != "en" {
					t.Errorf("lang = %q (%v), want en", lang, err)
				}
				vs, err := RunAxe(ctx, srv.URL)
				if err != nil {
					t.Fatal(err)
				}
				for _, v := range vs {
					t.Errorf("axe: %s", v)
				}
			})
		}
	}
	if e := errs(); len(e) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(e, "\n"))
	}
}

// Every page reads without JavaScript: the content is in the HTML itself.
func TestReadableWithoutJavaScript(t *testing.T) {
	needSite(t)
	b, err := os.ReadFile(filepath.Join(subSite.Public, "distributed-nav", "subsystems", "processgroupnccl", "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	// The card's words are all there, as text, whatever links were added.
	text := textContent(doc)
	for _, want := range []string{"devNCCLCommMap_", "Watchdog+HeartbeatMonitor dual monitoring", "stream-per-device double-barrier event model"} {
		if !strings.Contains(text, want) {
			t.Errorf("static HTML lacks the text %q", want)
		}
	}
	for _, want := range []struct{ tag, attr, val string }{
		{"html", "lang", "en"},
		{"a", "rel", "prev"},
		{"a", "rel", "next"},
		{"nav", "aria-label", "Breadcrumbs"},
		{"nav", "aria-label", "Contents"},
		{"form", "role", "search"},
	} {
		if !hasElement(doc, want.tag, want.attr, want.val) {
			t.Errorf("no <%s %s=%q> in the static HTML", want.tag, want.attr, want.val)
		}
	}
}

func hasElement(n *html.Node, tag, attr, val string) bool {
	if n.Type == html.ElementNode && n.Data == tag {
		for _, a := range n.Attr {
			if a.Key == attr && a.Val == val {
				return true
			}
		}
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if hasElement(c, tag, attr, val) {
			return true
		}
	}
	return false
}

func textContent(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}
