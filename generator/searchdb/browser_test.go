package searchdb

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/distributed-nav/distributed-nav/generator/sitetest/headless"
)

// The browser tests run the real search box (site/assets/js/search) with the real SQLite
// engine (@sqlite.org/sqlite-wasm from node_modules) in headless Chromium (headless.New:
// Debian's /usr/bin/chromium, which `make test` installs), against a site served by the
// test under a sub-path. They fail, never skip, when Chromium is missing.

// repoRoot is two levels up from this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func copyFile(t *testing.T, dst, src string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(src)
	if err != nil {
		t.Fatalf("%v (run npm ci in the repository root for node_modules)", err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// testPage is the search box HTML given to the site layout, inside a minimal page.
const testPage = `<!doctype html>
<html lang="en" data-base="%[1]s">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Search test</title>
<link rel="stylesheet" href="%[1]sjs/search/search.css">
<script type="module" src="%[1]sjs/search/ui.js"></script>
</head>
<body>
<header>
<form role="search" class="site-search" action="%[1]saz/" method="get">
  <label for="search-input">Search</label>
  <input id="search-input" type="search" name="q" placeholder="Search docs, env vars, symbols (press /)">
  <button type="submit">Search</button>
</form>
</header>
<main><h1>Search test page</h1><p>Text of the page.</p></main>
</body>
</html>
`

// serveSite lays out a site under dir/<sub>/ with the search assets, the engine and db, and
// returns the base URL path ("/<sub>/").
func layoutSite(t *testing.T, dir, sub string, db []byte) string {
	t.Helper()
	root := repoRoot(t)
	site := filepath.Join(dir, sub)
	for _, f := range []string{"ui.js", "worker.js", "engine.js", "query.js", "search.css"} {
		copyFile(t, filepath.Join(site, "js", "search", f), filepath.Join(root, "site", "assets", "js", "search", f))
	}
	dist := filepath.Join(root, "node_modules", "@sqlite.org", "sqlite-wasm", "dist")
	for _, f := range []string{"index.mjs", "sqlite3.wasm"} {
		copyFile(t, filepath.Join(site, "vendor", "sqlite-wasm", f), filepath.Join(dist, f))
	}
	base := "/" + sub + "/"
	write := func(name string, b []byte) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(site, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(site, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if db != nil {
		write("search.db", db)
	}
	// The constants and SQL query.js imports, as the generator writes them.
	mod, err := BrowserModule()
	if err != nil {
		t.Fatal(err)
	}
	write(ModulePath, mod)
	write("index.html", []byte(fmt.Sprintf(testPage, base)))
	write("az/index.html", []byte(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>A–Z</title></head><body><h1>A–Z index</h1></body></html>`))
	return base
}

func newBrowser(t *testing.T) context.Context {
	t.Helper()
	requireFTS5(t)
	ctx, cancel, err := headless.New(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelT(); cancel() })
	return ctx
}

// workerScript runs the given searches through worker.js, the way ui.js starts it, and
// returns {ready, coldMs, warmMs: [...], runs: [[results...]...]}.
const workerScript = `(async () => {
  const cases = %s;
  const t0 = performance.now();
  const w = new Worker(new URL('js/search/worker.js', new URL(document.documentElement.dataset.base, document.baseURI)), { type: 'module' });
  let id = 0;
  const pending = new Map();
  let readyMsg = null;
  const ready = new Promise((res, rej) => {
    w.onmessage = (e) => {
      const m = e.data;
      if (m.type === 'ready') { readyMsg = m; res(); return; }
      if (m.type === 'error' && m.id === undefined) { rej(new Error(m.message)); return; }
      const p = pending.get(m.id);
      if (p) { pending.delete(m.id); m.type === 'results' ? p.res(m) : p.rej(new Error(m.message)); }
    };
  });
  const ask = (c) => new Promise((res, rej) => { id++; pending.set(id, { res, rej }); w.postMessage({ type: 'search', id, q: c.query, kind: c.kind, limit: c.limit }); });
  w.postMessage({ type: 'init', base: document.documentElement.dataset.base });
  const first = await ask(cases[0]);
  const coldMs = performance.now() - t0;
  await ready;
  const runs = [first.results];
  for (const c of cases.slice(1)) runs.push((await ask(c)).results);
  // The worker keeps warming up for a moment after the first answer, as it does while a
  // user types; measure the warm searches after that.
  await new Promise((r) => setTimeout(r, 1500));
  const warmMs = [];
  for (let i = 0; i < 5; i++) for (const c of cases) { const a = performance.now(); await ask(c); warmMs.push(performance.now() - a); }
  w.terminate();
  return { coldMs, readyMs: readyMsg.ms, bytes: readyMsg.bytes, times: readyMsg.times, firstMs: first.ms, warmMs, runs };
})()`

type workerRun struct {
	ColdMs  float64            `json:"coldMs"`
	ReadyMs float64            `json:"readyMs"`
	Bytes   int                `json:"bytes"`
	Times   map[string]float64 `json:"times"`
	FirstMs float64            `json:"firstMs"`
	WarmMs  []float64          `json:"warmMs"`
	Runs    [][]Result         `json:"runs"`
}

func runWorker(t *testing.T, ctx context.Context, url string, cases any) workerRun {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	out, err := chromedp.Run(ctx, chromedp.Evaluate[workerRun](fmt.Sprintf(workerScript, b), chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("worker: %v", err)
	}
	return out
}

// TestBrowserSameAsGo: the browser (worker.js in Chromium, sqlite-wasm) and the Go package
// (what `distnav search` runs) return the same top 10, with the same titles, snippets and
// order, for every query of searchQueries on the fixture database.
func TestBrowserSameAsGo(t *testing.T) {
	ctx := newBrowser(t)
	db, path := buildDB(t, loadFixture(t))
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	base := layoutSite(t, dir, "sub", raw)
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()

	got := runWorker(t, ctx, srv.URL+base, searchQueries)
	if len(got.Runs) != len(searchQueries) {
		t.Fatalf("%d runs, want %d", len(got.Runs), len(searchQueries))
	}
	for i, c := range searchQueries {
		want, err := db.Search(context.Background(), c.Query, Options{Kind: c.Kind, Limit: c.Limit})
		if err != nil {
			t.Fatal(err)
		}
		b := got.Runs[i]
		if len(b) != len(want) {
			t.Errorf("%q: browser %d results, Go %d", c.Query, len(b), len(want))
			continue
		}
		for j := range want {
			w, g := want[j], b[j]
			if g.URL != w.URL || g.Title != w.Title || g.Snippet != w.Snippet || g.Kind != w.Kind || g.Breadcrumb != w.Breadcrumb {
				t.Errorf("%q result %d: browser %+v, Go %+v", c.Query, j+1, g, w)
			}
		}
	}
	t.Logf("fixture: cold first search %.0f ms (ready %.0f ms %v, first search in worker %.1f ms, %d bytes db), warm median %.1f ms", got.ColdMs, got.ReadyMs, got.Times, got.FirstMs, got.Bytes, median(got.WarmMs))
}

// TestBrowserSpeed measures the first (cold) and later (warm) searches in Chromium on a
// synthetic 1,500-record database, served from localhost without compression, for the
// queries of benchQueries (with "nc" for "n": the search box waits for two characters).
// Targets: cold < 500 ms, warm < 30 ms. Timing on a shared 2-core machine swings with the
// load, so the targets are enforced only with SEARCH_SPEED_CHECK=1; the figures are
// always logged and the results always checked.
func TestBrowserSpeed(t *testing.T) {
	ctx := newBrowser(t)
	_, path := buildDB(t, syntheticCorpus(1500))
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	base := layoutSite(t, dir, "big", raw)
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	var cases []map[string]any
	for _, q := range benchQueries {
		if q == "n" {
			q = "nc"
		}
		cases = append(cases, map[string]any{"query": q, "kind": "", "limit": 10})
	}
	got := runWorker(t, ctx, srv.URL+base, cases)
	if len(got.Runs) != len(cases) {
		t.Fatalf("%d answers for %d queries", len(got.Runs), len(cases))
	}
	for i, c := range cases {
		if c["query"] == "nc" && len(got.Runs[i]) != DefaultLimit {
			t.Errorf("nc: %d results, want %d (every synthetic record mentions nccl)", len(got.Runs[i]), DefaultLimit)
		}
	}
	var per []string
	for i, c := range cases {
		var xs []float64
		for r := 0; r*len(cases)+i < len(got.WarmMs); r++ {
			xs = append(xs, got.WarmMs[r*len(cases)+i])
		}
		per = append(per, fmt.Sprintf("%s %.1f", c["query"], median(xs)))
	}
	t.Logf("warm medians (ms): %s", strings.Join(per, ", "))
	slices.Sort(got.WarmMs)
	p95 := got.WarmMs[len(got.WarmMs)*95/100]
	t.Logf("synthetic 1,500 records (%d bytes): cold first search %.0f ms (ready %.0f ms %v, first search in worker %.1f ms); warm median %.1f ms, p95 %.1f ms, max %.1f ms",
		got.Bytes, got.ColdMs, got.ReadyMs, got.Times, got.FirstMs, median(got.WarmMs), p95, got.WarmMs[len(got.WarmMs)-1])
	if os.Getenv("SEARCH_SPEED_CHECK") != "1" {
		return
	}
	if got.ColdMs > 500 {
		t.Errorf("cold first search %.0f ms, target 500 ms", got.ColdMs)
	}
	if median(got.WarmMs) > 30 {
		t.Errorf("warm median %.1f ms, target 30 ms", median(got.WarmMs))
	}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

// TestBrowserSearchBox drives the search box like a user: "/" focuses it, typing shows
// results with kind badges, the arrow keys and Enter open a result, Escape closes the list,
// "no results" and a broken search.db are reported inline, and axe-core finds no WCAG 2
// A/AA violation with the results open.
func TestBrowserSearchBox(t *testing.T) {
	ctx := newBrowser(t)
	raw, err := os.ReadFile(filepath.Join("testdata", "fixture.db"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	base := layoutSite(t, dir, "sub", raw)
	brokenBase := layoutSite(t, dir, "broken", nil) // no search.db: the worker's fetch gets 404
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	axeSrc, err := os.ReadFile(filepath.Join(repoRoot(t), "node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		t.Fatalf("%v (run npm ci for axe-core)", err)
	}

	evalT := func(expr string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		return v
	}
	// poll waits for expr, which only reads the page, to hold (headless.Poll
	// starts again where a navigation left chromedp on a stale context).
	poll := func(expr string) {
		t.Helper()
		if err := headless.Poll(ctx, expr, 20*time.Second, 20*time.Millisecond); err != nil {
			t.Fatalf("waiting for %s: %v", expr, err)
		}
	}
	// waitLocation waits for a navigation to a page whose pathname+hash is want. Polling in
	// the page does not survive the navigation, so this polls from Go.
	waitLocation := func(want string) {
		t.Helper()
		var last string
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.readyState === 'complete' ? location.pathname + location.hash : ''`))
			if err == nil && v == want {
				return
			}
			last = v
		}
		t.Fatalf("location is %q, want %q", last, want)
	}
	axe := func(when string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](string(axeSrc))); err != nil {
			t.Fatal(err)
		}
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`axe.run(document, {runOnly: ['wcag2a', 'wcag2aa']}).then(r => JSON.stringify(r.violations.map(v => v.id + ': ' + v.nodes.map(n => n.target.join(' ')).join(', '))))`, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatal(err)
		}
		if v != "[]" {
			t.Errorf("axe violations %s: %s", when, v)
		}
	}

	// Without JavaScript the form goes to the A–Z index.
	if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+base),
		chromedp.SendKeys(chromedp.ID("search-input"), "nccl\r"),
	); err != nil {
		t.Fatal(err)
	}
	waitLocation(base + "az/")
	if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: false}); err != nil {
		t.Fatal(err)
	}

	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+base)); err != nil {
		t.Fatal(err)
	}
	poll(`document.querySelector('#search-input').getAttribute('role') === 'combobox'`)
	axe("on load")
	// One keyDown carrying the text, as a real key press: when the page cancels the keydown,
	// no character is typed (chromedp.KeyEvent sends the character as a separate event).
	for _, p := range []input.DispatchKeyEventParams{
		{Type: input.DispatchKeyEventTypeKeyDown, Key: "/", Code: "Slash", Text: "/", WindowsVirtualKeyCode: 191},
		{Type: input.DispatchKeyEventTypeKeyUp, Key: "/", Code: "Slash", WindowsVirtualKeyCode: 191},
	} {
		if _, err := chromedp.Call(ctx, input.DispatchKeyEvent, p); err != nil {
			t.Fatal(err)
		}
	}
	if id := evalT(`document.activeElement.id`); id != "search-input" {
		t.Fatalf(`"/" focused %q, want the search box`, id)
	}
	if err := chromedp.Do(ctx, chromedp.KeyEvent("NCCL_P2P_DISABLE")); err != nil {
		t.Fatal(err)
	}
	poll(`document.querySelector('#search-input-listbox').dataset.query === document.querySelector('#search-input').value && document.querySelectorAll('#search-input-listbox [role=option]').length > 0`)
	if got := evalT(`document.querySelector('#search-input').value`); got != "NCCL_P2P_DISABLE" {
		t.Errorf("the box holds %q: the / that focused it was typed in", got)
	}
	first := evalT(`document.querySelector('#search-input-listbox [role=option]').textContent`)
	if !strings.HasPrefix(first, "env var NCCL_P2P_DISABLE") {
		t.Errorf("first option = %q, want the env var", first)
	}
	if got := evalT(`document.querySelector('#search-input-listbox mark') ? 'marked' : 'none'`); got != "marked" {
		t.Error("no <mark> in the snippets")
	}
	if got := evalT(`document.querySelector('#search-input').getAttribute('aria-expanded')`); got != "true" {
		t.Errorf("aria-expanded = %s with results shown", got)
	}
	axe("with results open")
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.ArrowDown+kb.ArrowDown+kb.ArrowUp)); err != nil {
		t.Fatal(err)
	}
	if got := evalT(`document.querySelector('#search-input').getAttribute('aria-activedescendant')`); got != "search-input-opt-0" {
		t.Errorf("after down, down, up: active %q, want search-input-opt-0", got)
	}
	if got := evalT(`document.querySelector('#search-input-opt-0').getAttribute('aria-selected')`); got != "true" {
		t.Errorf("active option aria-selected = %s", got)
	}
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Escape)); err != nil {
		t.Fatal(err)
	}
	if got := evalT(`String(document.querySelector('#search-input-listbox').hidden) + ' ' + document.querySelector('#search-input').getAttribute('aria-expanded')`); got != "true false" {
		t.Errorf("after Escape: hidden, expanded = %s", got)
	}
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.ArrowDown+kb.Enter)); err != nil {
		t.Fatal(err)
	}
	waitLocation(base + "reference/nccl-env/#nccl_p2p_disable")

	// No results, and hostile text, are reported as such.
	for _, q := range []string{"zzqqxxv", `"(NEAR AND*`} {
		if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+base), chromedp.Focus(chromedp.ID("search-input"))); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(ctx, chromedp.KeyEvent(q)); err != nil {
			t.Fatal(err)
		}
		poll(`/results?|No results/.test(document.querySelector('.search-status').textContent)`)
		if msg := evalT(`document.querySelector('.search-status').textContent`); strings.Contains(msg, "fail") || strings.Contains(msg, "unavailable") {
			t.Errorf("%q: status %q", q, msg)
		}
		if q == "zzqqxxv" {
			axe("with no results")
		}
	}

	// A missing search.db is shown inline, and Enter then falls back to the A–Z index.
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+brokenBase), chromedp.Focus(chromedp.ID("search-input")), chromedp.KeyEvent("nccl")); err != nil {
		t.Fatal(err)
	}
	poll(`document.querySelector('.search-status').textContent.includes('unavailable')`)
	if msg := evalT(`document.querySelector('.search-status').textContent`); !strings.Contains(msg, "HTTP 404") {
		t.Errorf("error status %q does not say why", msg)
	}
	axe("with the load error shown")
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Enter)); err != nil {
		t.Fatal(err)
	}
	waitLocation(brokenBase + "az/")
}
