package browsertest

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/distributed-nav/distributed-nav/playground/ncclmsg"
)

// TestServiceWorker: after a first visit the service worker (sw.js, at the
// site's sub-path) holds the page's wasm and wasm_exec.js in a cache named
// after their content hash, and the page comes back, live, with the
// network off.
func TestServiceWorker(t *testing.T) {
	b := newBrowser(t)
	b.open("playground/step/")
	if ok := eval[bool](b, `navigator.serviceWorker.ready.then((r) => r.scope.endsWith(`+jsString(subPath)+`))`); !ok {
		t.Fatalf("the service worker's scope is not the site's sub-path %s", subPath)
	}
	// The worker takes over after the first load; the second load goes
	// through it and fills its cache.
	b.open("playground/step/")
	cached := eval[[]string](b, `(async () => {
		const out = [];
		for (const k of await caches.keys()) {
			if (!/^distnav-[0-9a-f]{16}$/.test(k)) continue;
			for (const r of await (await caches.open(k)).keys()) out.push(new URL(r.url).pathname);
		}
		return out;
	})()`)
	for _, want := range []string{subPath + "playground/step.wasm", subPath + "playground/wasm_exec.js"} {
		found := false
		for _, c := range cached {
			found = found || c == want
		}
		if !found {
			t.Errorf("the versioned cache lacks %s (has %v)", want, cached)
		}
	}
	// The doctor's binary fetches NCCL's message catalog (package ncclmsg's
	// Files, copied beside it by playground/wasm/build.sh): the worker
	// caches those files as it does the wasm, so the doctor works offline.
	swText := eval[string](b, `fetch(document.documentElement.dataset.sw).then((r) => r.text())`)
	for _, f := range ncclmsg.Files {
		if !strings.Contains(swText, `"playground/`+f+`"`) {
			t.Errorf("the service worker does not cache %s", f)
		}
	}
	for _, c := range cached {
		if strings.HasSuffix(c, ".wasm") && !strings.HasSuffix(c, "/step.wasm") {
			t.Errorf("the step page fetched another page's wasm: %s", c)
		}
	}
	offline := true
	if _, err := chromedp.Call(b.ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(b.ctx, network.EmulateNetworkConditionsByRule, network.EmulateNetworkConditionsByRuleParams{
		EmulateOfflineServiceWorker: &offline, MatchedNetworkConditions: []*network.Conditions{{Offline: true, DownloadThroughput: -1, UploadThroughput: -1}}}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(b.ctx, chromedp.Navigate(server.URL+subPath+"playground/step/")); err != nil {
		t.Fatalf("offline reload: %v", err)
	}
	if _, err := chromedp.Run(b.ctx, chromedp.Poll[bool](`document.documentElement.dataset.playground === 'ready'`,
		chromedp.WithPollingTimeout(60*time.Second), chromedp.WithPollingInterval(20*time.Millisecond))); err != nil {
		t.Fatalf("offline, the step page did not show a live result: %v", err)
	}
}
