// Package handbook prints the site's one-document handbook (the Hugo
// "handbook" output format, public/handbook.html) to PDF with headless
// Chromium, the way a reader would print it from the browser.
package handbook

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
)

// Paper sizes the handbook is laid out for.
var Papers = map[string]chromedp.PaperSize{
	"a4":     chromedp.PaperA4,
	"letter": chromedp.PaperLetter,
}

// Options say what to print and how.
type Options struct {
	// Public is the built site directory (holding handbook.html).
	Public string
	// BaseURL is the base URL the site was built for; the site is served
	// under its path so that every asset resolves.
	BaseURL string
	// Paper is "a4" or "letter".
	Paper string
	// Chromium is the browser binary; empty means /usr/bin/chromium.
	Chromium string
	// Out is the PDF file to write.
	Out string
}

// Print serves opts.Public on 127.0.0.1 under the base URL's path, loads
// handbook.html in headless Chromium and writes the PDF. It returns the
// number of bytes written.
func Print(ctx context.Context, opts Options) (int, error) {
	paper, ok := Papers[strings.ToLower(opts.Paper)]
	if !ok {
		return 0, fmt.Errorf("paper %q: want a4 or letter", opts.Paper)
	}
	if _, err := os.Stat(filepath.Join(opts.Public, "handbook.html")); err != nil {
		return 0, fmt.Errorf("handbook: %w (build the site first)", err)
	}
	prefix := "/"
	if u, err := url.Parse(opts.BaseURL); err == nil && u.Path != "" {
		prefix = "/" + strings.Trim(u.Path, "/") + "/"
		if prefix == "//" {
			prefix = "/"
		}
	}
	mux := http.NewServeMux()
	files := http.FileServer(http.Dir(opts.Public))
	if prefix == "/" {
		mux.Handle("/", files)
	} else {
		mux.Handle(prefix, http.StripPrefix(strings.TrimSuffix(prefix, "/"), files))
	}
	srv := httptest.NewServer(mux)
	defer srv.Close()
	browser := opts.Chromium
	if browser == "" {
		browser = "/usr/bin/chromium"
	}
	if _, err := os.Stat(browser); err != nil {
		return 0, fmt.Errorf("printing the handbook needs Chromium at %s (Debian package chromium): %w", browser, err)
	}
	profile, err := os.MkdirTemp("", "handbook-chromium-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(profile)
	actx, acancel := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(browser), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(profile))
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()
	bctx, tcancel := context.WithTimeout(bctx, 3*time.Minute)
	defer tcancel()
	if err := chromedp.Do(bctx, chromedp.Navigate(srv.URL+prefix+"handbook.html")); err != nil {
		return 0, fmt.Errorf("load handbook: %w", err)
	}
	// Wait until fonts and layout are settled.
	if _, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`document.fonts.ready.then(() => true)`, chromedp.EvalAwaitPromise)); err != nil {
		return 0, fmt.Errorf("wait for fonts: %w", err)
	}
	pdf, err := chromedp.Run(bctx, chromedp.PrintToPDF(
		chromedp.PDFPaper(paper),
		// The paper size stays the default of every page (@page size:
		// auto); the CSS may turn single pages landscape (@page wide).
		chromedp.PDFPreferCSSPageSize(),
		chromedp.PDFPrintBackground(),
		chromedp.PDFOutlineAndTagged(),
	))
	if err != nil {
		return 0, fmt.Errorf("print to PDF: %w", err)
	}
	if err := os.WriteFile(opts.Out, pdf, 0o644); err != nil {
		return 0, fmt.Errorf("write %s: %w", opts.Out, err)
	}
	return len(pdf), nil
}
