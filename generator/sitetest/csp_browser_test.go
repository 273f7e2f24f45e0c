package sitetest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/distributed-nav/distributed-nav/generator/sitetest/headless"
)

// TestCSPViolationIsAnError checks the browser harness itself: a page whose
// inline script is not allowed by its policy produces a console error, so
// every browser test that fails on console errors fails on a violation.
func TestCSPViolationIsAnError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(`<!doctype html><html><head><meta http-equiv="Content-Security-Policy" content="script-src 'self'; object-src 'none'; base-uri 'none'">` +
			`<script>document.title = "ran"</script></head><body><h1>x</h1></body></html>`))
	}))
	defer srv.Close()
	ctx, cancel, err := headless.New(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	ctx, tcancel := context.WithTimeout(ctx, time.Minute)
	defer tcancel()
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
	errs := consoleErrors(ctx)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL)); err != nil {
		t.Fatal(err)
	}
	title, err := chromedp.Run(ctx, chromedp.Title())
	if err != nil {
		t.Fatal(err)
	}
	if title == "ran" {
		t.Fatal("the inline script ran despite the policy")
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		for _, e := range errs() {
			if strings.Contains(e, "CSP violation: script-src") {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no CSP violation reported; console errors: %q", errs())
}
