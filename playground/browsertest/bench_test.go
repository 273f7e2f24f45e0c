package browsertest

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/distributed-nav/distributed-nav/generator/sitetest"
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
// (as GitHub Pages serves text and wasm).
func gzipFiles(dir, prefix string) http.Handler {
	files := http.StripPrefix(strings.TrimSuffix(prefix, "/"), http.FileServer(http.Dir(dir)))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			files.ServeHTTP(w, r)
			return
		}
		gz := gzip.NewWriter(w)
		defer gz.Close()
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Add("Vary", "Accept-Encoding")
		files.ServeHTTP(&gzipWriter{ResponseWriter: w, w: gz}, r)
	})
}

// gzipWriter sends the body through gz and drops the uncompressed length.
type gzipWriter struct {
	http.ResponseWriter
	w io.Writer
}

func (g *gzipWriter) WriteHeader(code int) {
	g.Header().Del("Content-Length")
	g.ResponseWriter.WriteHeader(code)
}

func (g *gzipWriter) Write(b []byte) (int, error) {
	g.Header().Del("Content-Length")
	return g.w.Write(b)
}

// pageLoad is one measured navigation.
type pageLoad struct {
	readyMs   float64
	wasmBytes int64 // bytes on the wire (gzip) of every .wasm the page fetched
	wasmFiles int
}

// BenchmarkPageLoad serves public/ with gzip, throttles Chromium to
// 10 Mbit/s and 40 ms, and loads each playground page: first with an empty
// cache (a first visit), then again (a second visit: HTTP cache and service
// worker). It reports, per page and visit, the gzip bytes of wasm
// downloaded and the time from navigation to <html data-playground="ready">
// (the first live result), and marks a first visit over the budget (the
// table is the report: the benchmark itself does not fail on it, so that
// `make bench` still runs every other benchmark).
// PG_BENCH_PUBLIC=DIR measures another build of the site instead of
// building this one (e.g. an older commit's public/, built for the same
// sub-path), waiting for its first render when it predates data-playground.
func BenchmarkPageLoad(b *testing.B) {
	if setupErr != nil {
		b.Fatalf("setup: %v", setupErr)
	}
	srv := httptest.NewServer(gzipFiles(site.Public, subPath))
	defer srv.Close()
	pages := []string{"topology", "algorithms", "estimator", "step", "doctor"}
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
}

// measurePage loads url twice in a fresh throttled browser profile.
func measurePage(profile, url string) (first, second pageLoad, err error) {
	ctx, cancel, err := sitetest.NewBrowser(context.Background(), profile)
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
			Ready float64 `json:"ready"`
			Wasm  int64   `json:"wasm"`
			Files int     `json:"files"`
		}
		m, err := chromedp.Run(ctx, chromedp.Evaluate[metrics](`(() => {
			const w = performance.getEntriesByType('resource').filter((e) => e.name.endsWith('.wasm'));
			return { ready: window.__pgReadyMs || performance.now(), wasm: w.reduce((s, e) => s + e.transferSize, 0), files: w.length };
		})()`))
		if err != nil {
			return first, second, err
		}
		*dst = pageLoad{readyMs: m.Ready, wasmBytes: m.Wasm, wasmFiles: m.Files}
	}
	return first, second, nil
}
