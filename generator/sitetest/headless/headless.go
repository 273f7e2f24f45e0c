// Package headless starts the headless Chromium that the browser tests
// drive and waits on the pages open in it. It knows nothing of the site, so
// that the tests of any package can use it: generator/searchdb's cannot
// import generator/sitetest, which builds the site and with it the search
// database.
package headless

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// ChromiumPath is Debian's Chromium, which `make test` installs.
const ChromiumPath = "/usr/bin/chromium"

// New starts headless Chromium with the flags of the design card and a
// fresh profile in profileDir. Browser tests never skip: a missing Chromium
// is an error that names the package to install. Every document of the tab
// reports a Content-Security-Policy violation as a console error.
func New(parent context.Context, profileDir string) (context.Context, context.CancelFunc, error) {
	if _, err := os.Stat(ChromiumPath); err != nil {
		return nil, nil, fmt.Errorf("browser tests need Debian's chromium at %s (make test installs it; or: sudo apt-get install chromium): %w", ChromiumPath, err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(ChromiumPath),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.UserDataDir(profileDir),
		chromedp.WindowSize(1280, 800),
	}
	actx, acancel := chromedp.NewExecAllocator(parent, opts...)
	ctx, cancel := chromedp.NewContext(actx)
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: cspReporter}); err != nil {
		cancel()
		acancel()
		return nil, nil, fmt.Errorf("start chromium: %w", err)
	}
	return ctx, func() { cancel(); acancel() }, nil
}

// cspReporter turns each securitypolicyviolation event of a document into
// a console error naming the directive and what it blocked.
const cspReporter = `document.addEventListener("securitypolicyviolation", (e) => {
  console.error("CSP violation: " + e.violatedDirective + " blocked " + (e.blockedURI || "inline code") + " in " + e.sourceFile + ":" + e.lineNumber);
});`

// StaleContext reports whether err says chromedp addressed an execution
// context that a navigation destroyed: right after Navigate it may still
// use the old document's ("Cannot find context with specified id", seen
// on loaded machines).
func StaleContext(err error) bool {
	return err != nil && strings.Contains(err.Error(), "Cannot find context with specified id")
}

// Poll waits up to timeout for the expression expr, evaluated in the page
// every interval, to be true. expr must only read the page: where a
// navigation left chromedp on a stale context, the poll starts again on the
// new document until the time is up.
func Poll(ctx context.Context, expr string, timeout, every time.Duration) error {
	deadline := time.Now().Add(timeout)
	for left := timeout; ; left = time.Until(deadline) {
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(left), chromedp.WithPollingInterval(every)))
		if !StaleContext(err) || time.Until(deadline) < 100*time.Millisecond {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}
