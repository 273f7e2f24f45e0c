package sitetest

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/distributed-nav/distributed-nav/generator/searchdb"
	"github.com/distributed-nav/distributed-nav/generator/sitetest/headless"
)

// The real site's search database answers the queries of testdata/relevance.txt: at least
// 95% of them find their expected result in the top 3 and 85% first. The file holds what
// users type, error messages pasted whole among them, so a few misses are expected; each
// one is logged, with what came instead. (At the time of writing: 79/80 in the top 3,
// 70/80 first; `distnav search --relevance` prints the same figures.)
func TestSearchRelevance(t *testing.T) {
	needSite(t)
	f, err := os.Open(filepath.Join("testdata", "relevance.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cases, err := searchdb.ParseCases(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 60 {
		t.Fatalf("%d relevance cases, want at least 60", len(cases))
	}
	db, err := searchdb.Open(filepath.Join(subSite.Site, "static", "search.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, fail := range searchdb.CheckRelevance(context.Background(), db, cases) {
		t.Log("miss:", fail)
	}
	r := searchdb.MeasureRelevance(context.Background(), db, cases)
	t.Log(r)
	if float64(r.TopN) < 0.95*float64(r.N) || float64(r.Top1) < 0.85*float64(r.N) {
		t.Errorf("relevance %s, want at least 95%% in the top %d and 85%% first", r, searchdb.RelevanceTopN)
	}
}

// The browser's search box (sqlite-wasm in a worker, over the same
// search.db) returns the same top 10 as `distnav search` for the same
// queries; it also measures what a first search costs.
func TestSearchBrowserMatchesCLI(t *testing.T) {
	needSite(t)
	db, err := searchdb.Open(filepath.Join(subSite.Site, "static", "search.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var mu sync.Mutex
	requested := map[string]bool{}
	inner := Serve(subSite.Public, subPath, nil)
	defer inner.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requested[r.URL.Path] = true
		mu.Unlock()
		inner.Config.Handler.ServeHTTP(w, r)
	}))
	defer srv.Close()
	ctx, cancel, err := headless.New(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	ctx, tcancel := context.WithTimeout(ctx, 3*time.Minute)
	defer tcancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+subPath+"distributed-nav/")); err != nil {
		t.Fatal(err)
	}
	// Nothing of the search engine loads with the page.
	mu.Lock()
	for p := range requested {
		if strings.Contains(p, "sqlite3.wasm") || strings.HasSuffix(p, "search.db") || strings.Contains(p, "worker.js") {
			t.Errorf("%s fetched on page load; search must load on first use", p)
		}
	}
	before := map[string]bool{}
	for p := range requested {
		before[p] = true
	}
	mu.Unlock()
	// type sets the box's value as a user would and waits for the listbox to
	// show results for exactly that text; it returns the result URLs and the
	// milliseconds from the input event to the rendered results.
	typeQuery := func(q string) ([]string, float64, error) {
		js := fmt.Sprintf(`(async () => {
			const input = document.getElementById("search-input");
			input.focus();
			const t0 = performance.now();
			input.value = %q;
			input.dispatchEvent(new Event("input", {bubbles: true}));
			const deadline = t0 + 20000;
			for (;;) {
				const box = document.querySelector('[role="listbox"]');
				const status = box && box.getAttribute("data-query");
				if (status === input.value && box.getAttribute("aria-busy") !== "true") {
					const urls = [...box.querySelectorAll('[role="option"]')].map(li => li.dataset.url);
					return JSON.stringify({urls, ms: performance.now() - t0});
				}
				if (performance.now() > deadline) return JSON.stringify({error: "no results rendered for " + input.value});
				await new Promise(r => setTimeout(r, 2));
			}
		})()`, q)
		out, err := chromedp.Run(ctx, chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
		if err != nil {
			return nil, 0, err
		}
		var r struct {
			URLs  []string `json:"urls"`
			MS    float64  `json:"ms"`
			Error string   `json:"error"`
		}
		if err := jsonUnmarshal(out, &r); err != nil {
			return nil, 0, err
		}
		if r.Error != "" {
			return nil, 0, fmt.Errorf("%s", r.Error)
		}
		return r.URLs, r.MS, nil
	}
	queries := []string{"NCCL_P2P_DISABLE", "watchdog timeout", "proces group", "LL128", "bucket_cap_mb",
		"why is allreduce slow on 4090", "heartbeat abort", `"AND (x* -:`, "ProcessGroupNCCL", "flight recorder", "nvls", "ñandú 日本",
		"NCCL_DEBUG=INFO", "export NCCL_SOCKET_IFNAME=eth0", "NCCL WARN Mismatched NCCL version detected : rank 3 version 21805 rank 0 version 22703"}
	base := srv.URL + subPath
	var cold float64
	var warm []float64
	for i, q := range queries {
		got, ms, err := typeQuery(q)
		if err != nil {
			t.Fatalf("%q: %v", q, err)
		}
		if i == 0 {
			cold = ms
		} else {
			warm = append(warm, ms)
		}
		want, err := db.Search(context.Background(), q, searchdb.Options{Limit: 10})
		if err != nil {
			t.Fatalf("CLI %q: %v", q, err)
		}
		if len(got) != len(want) {
			t.Errorf("%q: browser %d results, CLI %d", q, len(got), len(want))
			continue
		}
		for k := range want {
			if got[k] != base+strings.TrimPrefix(want[k].URL, "./") && !(want[k].URL == "./" && got[k] == base) {
				t.Errorf("%q #%d: browser %s, CLI %s", q, k+1, got[k], want[k].URL)
			}
		}
	}
	// What the first search fetched, raw and as GitHub Pages serves it (gzip).
	var raw, gz int64
	mu.Lock()
	for p := range requested {
		if before[p] {
			continue
		}
		b, err := os.ReadFile(filepath.Join(subSite.Public, filepath.FromSlash(strings.TrimPrefix(p, subPath))))
		if err != nil {
			continue
		}
		raw += int64(len(b))
		gz += gzipSize(b)
	}
	mu.Unlock()
	if gz > 1<<20 {
		t.Errorf("first search transfers %d bytes gzip, want under 1 MiB", gz)
	}
	t.Logf("first search (cold: engine + db fetch, worker start): %.0f ms; later searches: median %.1f ms, max %.1f ms; fetched for search: %d bytes raw, %d gzip",
		cold, median(warm), maxOf(warm), raw, gz)
}

func gzipSize(b []byte) int64 {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(b)
	zw.Close()
	return int64(buf.Len())
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s[len(s)/2]
}

func maxOf(xs []float64) float64 {
	m := 0.0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
