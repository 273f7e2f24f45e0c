package browsertest

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/distributed-nav/distributed-nav/generator/sitetest/headless"
)

// The page budget (issue 13): under a 10 Mbit/s, 40 ms link, no page
// downloads more than 1.3 MB of gzip wasm, and each shows its first live
// result within 2.0 s of navigation.
const (
	benchLatencyMs   = 40
	benchBytesPerSec = 10e6 / 8
	budgetWasmGzip   = 1_300_000
	budgetReadyMs    = 2000
)

// gzipFiles serves dir under prefix, gzip-compressed for clients that ask
// (as GitHub Pages serves text and wasm). Every file is compressed before
// the handler is returned, at gzip's best compression (the level the budget
// is stated in, gzip -9), and kept, as a CDN keeps its compressed copies:
// compressing a 4.5 MB wasm takes this machine 1.0-1.45 s, which a lazily
// filled cache put inside each page's first measured visit (the wasm's
// request left at 0.1 s and arrived at 2.5-3.4 s, for a transfer of 1.0 s).
func gzipFiles(dir, prefix string) (http.Handler, error) {
	files := http.StripPrefix(strings.TrimSuffix(prefix, "/"), http.FileServer(http.Dir(dir)))
	cache, err := compressTree(dir)
	if err != nil {
		return nil, err
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rel, ok := strings.CutPrefix(r.URL.Path, prefix)
		if !ok || !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			files.ServeHTTP(w, r)
			return
		}
		if rel == "" || strings.HasSuffix(rel, "/") {
			rel += "index.html"
		}
		name := filepath.Join(dir, filepath.FromSlash(path.Clean("/"+rel)))
		body, hit := cache[name]
		if !hit {
			files.ServeHTTP(w, r) // a directory without index.html, or a 404
			return
		}
		ctype := mime.TypeByExtension(filepath.Ext(name))
		if ctype == "" {
			ctype = "application/octet-stream"
		}
		w.Header().Set("Content-Type", ctype)
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Add("Vary", "Accept-Encoding")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	}), nil
}

// compressTree gzips (-9) every regular file under dir, on every core, and
// returns the compressed bodies by file name.
func compressTree(dir string) (map[string][]byte, error) {
	var names []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			names = append(names, p)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("compress %s: %w", dir, err)
	}
	bodies := make([][]byte, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	work := make(chan int)
	for range runtime.NumCPU() {
		wg.Go(func() {
			for i := range work {
				raw, err := os.ReadFile(names[i])
				if err != nil {
					errs[i] = err
					continue
				}
				var buf bytes.Buffer
				gz, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
				gz.Write(raw)
				errs[i] = gz.Close()
				bodies[i] = buf.Bytes()
			}
		})
	}
	for i := range names {
		work <- i
	}
	close(work)
	wg.Wait()
	cache := make(map[string][]byte, len(names))
	for i, n := range names {
		if errs[i] != nil {
			return nil, fmt.Errorf("compress %s: %w", n, errs[i])
		}
		cache[n] = bodies[i]
	}
	return cache, nil
}

// pageLoad is one measured navigation.
type pageLoad struct {
	readyMs   float64
	wasmBytes int64 // bytes on the wire (gzip) of every .wasm the page fetched
	wasmFiles int
	phases    map[string]float64 // ms since navigation of each start-up step (phaseNames)
	// lcpMs is the page's largest contentful paint (ms since navigation)
	// and lcpElement the element it painted; a live view that paints a
	// larger element than the static one moves the LCP to the reveal.
	lcpMs      float64
	lcpElement string
}

// phaseNames are the start-up phases of a playground page in order, as
// the page records them (performance marks of engine.js, main.js and
// worker.js, and the wasm's resource timing), from the HTML's arrival to
// the first live result.
var phaseNames = []struct{ key, what string }{
	{"html", "HTML received"},
	{"boot", "playground module started"},
	{"wasmStart", "wasm request sent"},
	{"wasmEnd", "wasm received"},
	{"compiled", "wasm compiled"},
	{"worker", "worker started"},
	{"instantiated", "module instantiated"},
	{"goMain", "Go main registered its API"},
	{"answer", "first answer back from the worker"},
	{"ready", "first live result drawn"},
}

// BenchmarkPageLoad serves public/ with gzip, throttles Chromium to
// 10 Mbit/s and 40 ms, and loads each playground page: first with an empty
// cache (a first visit), then again (a second visit: HTTP cache and service
// worker). It reports, per page and visit, the gzip bytes of wasm
// downloaded and the time from navigation to <html data-playground="ready">
// (the first live result), with the first visit's start-up steps and its
// largest contentful paint (which element, static or live view), and marks
// a first visit over the budget (the
// table is the report: the benchmark itself does not fail on it, so that
// `make bench` still runs every other benchmark).
// PG_BENCH_PAGES=estimator,step measures only those pages.
// PG_BENCH_PUBLIC=DIR measures another build of the site instead of
// building this one (e.g. an older commit's public/, built for the same
// sub-path), waiting for its first render when it predates data-playground.
func BenchmarkPageLoad(b *testing.B) {
	if setupErr != nil {
		b.Fatalf("setup: %v", setupErr)
	}
	h, err := gzipFiles(site.Public, subPath)
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	b.ResetTimer()
	pages := []string{"topology", "algorithms", "estimator", "step", "doctor"}
	if only := os.Getenv("PG_BENCH_PAGES"); only != "" {
		pages = strings.Split(only, ",") // e.g. PG_BENCH_PAGES=estimator
	}
	results := map[string][2]pageLoad{}
	for i := 0; i < b.N; i++ {
		for _, p := range pages {
			first, second, err := measurePage(b.TempDir(), srv.URL+subPath+"playground/"+p+"/")
			if err != nil {
				b.Fatalf("%s: %v", p, err)
			}
			results[p] = [2]pageLoad{first, second}
		}
	}
	b.StopTimer()
	fmt.Printf("page loads under %d ms / %.0f Mbit/s (budget: %d bytes gzip wasm, %d ms to the first live result)\n", benchLatencyMs, benchBytesPerSec*8/1e6, budgetWasmGzip, budgetReadyMs)
	fmt.Printf("%-12s %14s %12s %14s %12s  %s\n", "page", "wasm gzip B", "ready ms", "2nd wasm B", "2nd ready ms", "first visit")
	for _, p := range pages {
		r := results[p]
		var over []string
		if r[0].wasmBytes > budgetWasmGzip {
			over = append(over, "wasm over budget")
		}
		if r[0].readyMs > budgetReadyMs {
			over = append(over, "slower than budget")
		}
		verdict := "within budget"
		if len(over) > 0 {
			verdict = strings.Join(over, ", ")
		}
		fmt.Printf("%-12s %14d %12.0f %14d %12.0f  %s\n", p, r[0].wasmBytes, r[0].readyMs, r[1].wasmBytes, r[1].readyMs, verdict)
		b.ReportMetric(r[0].readyMs, p+"-ready-ms")
		b.ReportMetric(float64(r[0].wasmBytes), p+"-wasm-B")
	}
	fmt.Println("first visit, largest contentful paint (ms since navigation) and its element:")
	for _, p := range pages {
		r := results[p][0]
		fmt.Printf("%-12s %8.0f  %s\n", p, r.lcpMs, r.lcpElement)
		b.ReportMetric(r.lcpMs, p+"-lcp-ms")
	}
	// Where the first visit's time goes: when each start-up step happened,
	// ms since navigation (-1: the page did not record it).
	fmt.Println("first visit, ms since navigation when each start-up step happened:")
	for _, ph := range phaseNames {
		fmt.Printf("  %-12s %s\n", ph.key, ph.what)
	}
	fmt.Printf("%-12s", "page")
	for _, ph := range phaseNames {
		fmt.Printf(" %12s", ph.key)
	}
	fmt.Println()
	for _, p := range pages {
		fmt.Printf("%-12s", p)
		for _, ph := range phaseNames {
			v, ok := results[p][0].phases[ph.key]
			if !ok {
				v = -1
			}
			fmt.Printf(" %12.0f", v)
		}
		fmt.Println()
	}
}

// measurePage loads url twice in a fresh throttled browser profile.
func measurePage(profile, url string) (first, second pageLoad, err error) {
	ctx, cancel, err := headless.New(context.Background(), profile)
	if err != nil {
		return first, second, err
	}
	defer cancel()
	ctx, cancel2 := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel2()
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		return first, second, err
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		return first, second, err
	}
	if _, err := chromedp.Call(ctx, network.EmulateNetworkConditionsByRule, network.EmulateNetworkConditionsByRuleParams{
		MatchedNetworkConditions: []*network.Conditions{{Latency: benchLatencyMs, DownloadThroughput: benchBytesPerSec, UploadThroughput: benchBytesPerSec}}}); err != nil {
		return first, second, err
	}
	for i, dst := range []*pageLoad{&first, &second} {
		if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
			return first, second, err
		}
		// Ready: the live page's flag, or for builds that predate it
		// the first finished render.
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.documentElement.dataset.playground === 'ready' || Number(document.documentElement.dataset.pgRenders || 0) >= 1`,
			chromedp.WithPollingTimeout(90*time.Second), chromedp.WithPollingInterval(10*time.Millisecond))); err != nil {
			return first, second, fmt.Errorf("visit %d: waiting for the first live result: %w", i+1, err)
		}
		type metrics struct {
			Ready  float64            `json:"ready"`
			Wasm   int64              `json:"wasm"`
			Files  int                `json:"files"`
			Phases map[string]float64 `json:"phases"`
			LCP    float64            `json:"lcp"`
			LCPEl  string             `json:"lcpEl"`
			Res    []struct {
				Name  string  `json:"name"`
				Start float64 `json:"start"`
				End   float64 `json:"end"`
				Bytes int64   `json:"bytes"`
			} `json:"res"`
		}
		m, err := chromedp.Run(ctx, chromedp.Evaluate[metrics](`(async () => {
			const w = performance.getEntriesByType('resource').filter((e) => e.name.endsWith('.wasm'));
			const at = (name) => { const e = performance.getEntriesByName(name); return e.length ? e[0].startTime : -1; };
			const nav = performance.getEntriesByType('navigation')[0];
			const phases = { html: nav ? nav.responseEnd : -1, boot: at('pg-boot'), compiled: at('pg-compiled'), worker: at('pg-worker'),
				instantiated: at('pg-instantiated'), goMain: at('pg-go-main'), answer: at('pg-answer'), ready: at('pg-ready'),
				wasmStart: w.length ? w[0].startTime : -1, wasmEnd: w.length ? Math.max(...w.map((e) => e.responseEnd)) : -1 };
			const res = performance.getEntriesByType('resource').map((e) => ({ name: e.name, start: e.startTime, end: e.responseEnd, bytes: e.transferSize }));
			// The frame that shows the first result is painted before the
			// largest contentful paint is read.
			await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
			const buffered = (type, each) => new Promise((resolve) => {
				new PerformanceObserver((list, obs) => {
					list.getEntries().forEach(each);
					obs.disconnect();
					resolve();
				}).observe({ type, buffered: true });
				setTimeout(resolve, 200);
			});
			let lcp = -1, lcpEl = '';
			const describe = (el) => !el ? '(removed)' : el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.classList.length ? '.' + [...el.classList].join('.') : '') + (el.closest('#pg-static') ? ' in the static view' : el.closest('#pg-app') ? ' in the live view' : '');
			await Promise.all([
				buffered('longtask', (e) => res.push({ name: 'long task', start: e.startTime, end: e.startTime + e.duration, bytes: 0 })),
				buffered('largest-contentful-paint', (e) => { lcp = e.startTime; lcpEl = describe(e.element) + ' ' + Math.round(e.size) + ' px²'; }),
			]);
			return { ready: window.__pgReadyMs || performance.now(), wasm: w.reduce((s, e) => s + e.transferSize, 0), files: w.length, phases, res, lcp, lcpEl };
		})()`, chromedp.EvalAwaitPromise))
		if err != nil {
			return first, second, err
		}
		*dst = pageLoad{readyMs: m.Ready, wasmBytes: m.Wasm, wasmFiles: m.Files, phases: m.Phases, lcpMs: m.LCP, lcpElement: m.LCPEl}
		if os.Getenv("PG_BENCH_WATERFALL") != "" {
			// Every download of the visit, to see what shares the link.
			fmt.Printf("%s visit %d:\n", url, i+1)
			for _, r := range m.Res {
				fmt.Printf("  %7.0f %7.0f %9d  %s\n", r.Start, r.End, r.Bytes, r.Name)
			}
		}
	}
	return first, second, nil
}
