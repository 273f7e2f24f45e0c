package sitetest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/distributed-nav/distributed-nav/generator/sitetest/headless"
)

// The 404 page, served (as GitHub Pages does) for addresses at several depths under the
// Pages sub-path: status 404, its stylesheet applied, every link and the navigation
// resolving inside the site, and the search box answering.
func TestNotFoundPageUnderSubPath(t *testing.T) {
	needSite(t)
	srv := Serve(subSite.Public, subPath, AxeHandler(repoRoot))
	defer srv.Close()
	missing := []string{"no-such-page", "notes/no-such-note/", "distributed-nav/subsystems/gone/deeper/x.html"}
	for _, m := range missing {
		res, err := http.Get(srv.URL + subPath + m)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "Page not found") {
			t.Fatalf("%s: status %d, 404 page shown: %v", m, res.StatusCode, strings.Contains(string(body), "Page not found"))
		}
	}
	ctx, cancel, err := headless.New(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	ctx, tcancel := context.WithTimeout(ctx, 3*time.Minute)
	defer tcancel()
	for _, m := range missing {
		if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+subPath+m)); err != nil {
			t.Fatal(err)
		}
		// The stylesheet loaded (a relative href would 404 at this depth) and the
		// navigation is there.
		check := `(() => {
			const css = [...document.styleSheets].some(s => { try { return s.cssRules.length > 0 } catch (e) { return false } });
			const links = [...document.querySelectorAll('main a[href], nav.sidebar a[href]')].map(a => a.href);
			return JSON.stringify({h1: document.querySelector('h1').textContent, css, links});
		})()`
		out, err := chromedp.Run(ctx, chromedp.Evaluate[string](check))
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			H1    string   `json:"h1"`
			CSS   bool     `json:"css"`
			Links []string `json:"links"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		if got.H1 != "Page not found" || !got.CSS || len(got.Links) < 10 {
			t.Fatalf("%s: h1 %q, stylesheet applied %v, %d links", m, got.H1, got.CSS, len(got.Links))
		}
		for _, l := range got.Links {
			if !strings.HasPrefix(l, srv.URL+subPath) {
				t.Errorf("%s: link %s leaves the site's sub-path", m, l)
				continue
			}
			res, err := http.Get(l)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				t.Errorf("%s: link %s: status %d", m, l, res.StatusCode)
			}
		}
	}
	// The search box works from the deepest address: type, wait for results.
	js := `(async () => {
		const input = document.getElementById("search-input");
		input.focus();
		input.value = "watchdog timeout";
		input.dispatchEvent(new Event("input", {bubbles: true}));
		const deadline = performance.now() + 60000;
		for (;;) {
			const box = document.querySelector('[role="listbox"]');
			if (box && box.getAttribute("data-query") === input.value && box.getAttribute("aria-busy") !== "true") {
				return [...box.querySelectorAll('[role="option"]')].map(li => li.dataset.url).join(" ");
			}
			if (performance.now() > deadline) return "timeout";
			await new Promise(r => setTimeout(r, 10));
		}
	})()`
	urls, err := chromedp.Run(ctx, chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(urls, srv.URL+subPath+"notes/troubleshooting/#nccl-timeout") {
		t.Errorf("search on the 404 page: results %q, want the troubleshooting section", urls)
	}
	vs, err := RunAxe(ctx, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		t.Errorf("axe on the 404 page: %s", v)
	}
}
