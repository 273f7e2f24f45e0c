package browsertest

import (
	"fmt"
	"html"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// shownPairs reads the path matrix: "from-to" -> {path, transport, bw}.
func shownPairs(b *browser) map[string][3]string {
	b.t.Helper()
	cells := eval[[][5]string](b, `Array.from(document.querySelectorAll('#pg-matrix td[data-to]')).map((td) =>
		[td.dataset.from, td.dataset.to, td.dataset.path, td.dataset.transport, td.dataset.bw])`)
	out := map[string][3]string{}
	for _, c := range cells {
		out[c[0]+"-"+c[1]] = [3]string{c[2], c[3], c[4]}
	}
	return out
}

// checkTopology compares what the topology page shows with the CLI's JSON.
func checkTopology(b *browser, want map[string]any) {
	b.t.Helper()
	pairs := shownPairs(b)
	wantPairs := want["gpu_pairs"].([]any)
	if len(pairs) != len(wantPairs) {
		b.t.Errorf("matrix shows %d GPU pairs, ncclsim %d", len(pairs), len(wantPairs))
	}
	for _, p := range wantPairs {
		m := p.(map[string]any)
		k := itoa(int(m["from"].(float64))) + "-" + itoa(int(m["to"].(float64)))
		got, ok := pairs[k]
		if !ok {
			b.t.Errorf("pair %s missing from the matrix", k)
			continue
		}
		if got[0] != m["path"] || got[1] != m["transport"] || !sameNumber(got[2], m["bw"].(float64)) {
			b.t.Errorf("pair %s: page %v, ncclsim %v %v %v", k, got, m["path"], m["transport"], m["bw"])
		}
	}
	rows := eval[[][6]string](b, `Array.from(document.querySelectorAll('#pg-graph-table tbody tr')).map((tr) =>
		[tr.dataset.pattern].concat(Array.from(tr.querySelectorAll('td[data-v]')).map((td) => td.dataset.v)))`)
	graphs := want["graphs"].([]any)
	if len(rows) != len(graphs) {
		b.t.Fatalf("page shows %d graphs, ncclsim %d", len(rows), len(graphs))
	}
	for i, g := range graphs {
		m := g.(map[string]any)
		r := rows[i]
		if r[0] != m["pattern"] {
			b.t.Errorf("graph %d: page %s, ncclsim %s", i, r[0], m["pattern"])
		}
		for j, k := range []string{"n_channels", "search_channels", "bw_intra", "bw_inter", "steps"} {
			if !sameNumber(r[j+1], m[k].(float64)) {
				b.t.Errorf("graph %s %s: page %s, ncclsim %v", r[0], k, r[j+1], m[k])
			}
		}
	}
}

func sameNumber(s string, want float64) bool {
	var v float64
	if err := jsonNumber(s, &v); err != nil {
		return false
	}
	return v == want || math.Abs(v-want) <= 1e-9*math.Abs(want)
}

// command returns the page's ncclsim line split into arguments (the tests
// use inputs that need no shell quoting).
func command(b *browser) []string {
	b.t.Helper()
	c := eval[string](b, `document.querySelector('.pg-command').textContent`)
	f := strings.Fields(c)
	if len(f) < 2 || f[0] != "ncclsim" {
		b.t.Fatalf("command %q", c)
	}
	return f[1:]
}

func errorAt(b *browser, selector string) string {
	b.t.Helper()
	return eval[string](b, `(() => { const el = document.querySelector(`+jsString(selector)+`);
		const e = document.getElementById(el.id + '-err'); return (el.getAttribute('aria-invalid') === 'true' ? 'invalid: ' : '') + (e ? e.textContent : ''); })()`)
}

// noError fails if any control or the page shows an error.
func noError(b *browser, label string) {
	b.t.Helper()
	msg := eval[string](b, `Array.from(document.querySelectorAll('#pg-app .pg-error')).map((e) => e.textContent).join(' | ').replace(/^( \| )+|( \| )+$/g, '')`)
	if strings.Trim(msg, " |") != "" {
		b.t.Fatalf("%s: the page shows an error: %s", label, msg)
	}
}

func TestTopologyPage(t *testing.T) {
	b := newBrowser(t)
	b.open("playground/topology/")
	first := eval[float64](b, `window.__pg.lastEnd`)
	b.waitWarm()
	t.Logf("first render %.0f ms after navigation start", first)
	var timings []float64

	// The default preset, then each input in turn; after each the page must
	// show what `ncclsim topo --json` prints for the command it offers.
	check := func(label string) {
		noError(b, label)
		args := command(b)
		if args[0] != "topo" {
			t.Fatalf("%s: command %v", label, args)
		}
		checkTopology(b, native(t, args...))
	}
	check("default")
	if got := command(b); strings.Join(got, " ") != "topo --preset rtx4090-8x --json" {
		t.Errorf("default command %v", got)
	}

	timings = append(timings, b.change("[name=preset]", "h100-sxm-8x"))
	check("h100")
	timings = append(timings, b.change("[name=env]", "NCCL_P2P_DISABLE=1"))
	check("h100 P2P disabled")
	if got := strings.Join(command(b), " "); got != "topo --preset h100-sxm-8x --env NCCL_P2P_DISABLE=1 --json" {
		t.Errorf("command %q", got)
	}
	timings = append(timings, b.change("[name=env]", ""))
	timings = append(timings, b.change("[name=preset]", "a100-sxm-8x"))
	check("a100")
	// P2P "none" on NVLink-connected GPUs is an error NCCL reports; the
	// page says so next to the control and keeps the last good view.
	b.change("[name=p2p]", "none")
	if msg := errorAt(b, "[name=p2p]"); !strings.Contains(msg, "NCCL_IGNORE_DISABLED_P2P") {
		t.Errorf("p2p none on NVLink GPUs: message %q", msg)
	}
	timings = append(timings, b.change("[name=p2p]", "all"))
	check("a100 p2p all")

	// Channels: all tree channels drawn, then one.
	timings = append(timings, b.change("[name=graph]", "tree"))
	timings = append(timings, b.change("[name=channel]", "-1"))
	want := native(t, command(b)...)
	var treeChannels int
	for _, g := range want["graphs"].([]any) {
		if m := g.(map[string]any); m["id"].(float64) == 1 {
			treeChannels = len(m["channels"].([]any))
		}
	}
	if n := eval[int](b, `document.querySelectorAll('#pg-topology svg [data-channel]').length`); n != treeChannels || n == 0 {
		t.Errorf("%d tree channels drawn, ncclsim has %d", n, treeChannels)
	}
	timings = append(timings, b.change("[name=channel]", "1"))
	if n := eval[int](b, `document.querySelectorAll('#pg-topology svg [data-channel="1"]').length`); n != 1 {
		t.Errorf("channel 1 not drawn alone")
	}

	// The state is in the URL: reloading it gives the same view.
	url := eval[string](b, `location.href`)
	for _, want := range []string{"preset=a100-sxm-8x", "p2p=all", "graph=tree", "ch=1"} {
		if !strings.Contains(url, want) {
			t.Errorf("URL %s lacks %s", url, want)
		}
	}
	b.open(strings.TrimPrefix(url, server.URL+subPath))
	check("reloaded")
	if got := eval[string](b, linkNoteJS); got != "" {
		t.Errorf("the page's own link %s shows %q", url, got)
	}
	if v := eval[string](b, `document.querySelector('[name=preset]').value`); v != "a100-sxm-8x" {
		t.Errorf("after reload the preset is %s", v)
	}

	checkTimings(t, timings)
	b.noConsoleErrors()
	b.axe()
	b.open("playground/topology/?preset=h100-8x-ib&nodes=2")
	b.screenshot("topology", "light")
	b.screenshot("topology", "dark")
	b.noConsoleErrors()
}

// TestBadXMLRecovers pastes malformed XML, an oversized paste, markup in
// names, and then a valid dump, which must work as if nothing happened.
func TestBadXMLRecovers(t *testing.T) {
	b := newBrowser(t)
	b.open("playground/topology/")
	b.change("[name=preset]", "__xml__")
	area := "[name=xml]"
	for _, bad := range []struct{ name, js, want string }{
		{"truncated", `'<system version="1"><cpu numaid="0"'`, "line"},
		{"not XML", `'hello world'`, "XML"},
		{"no GPU", `'<system version="1"><cpu numaid="0" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143"/></system>'`, "GPU"},
		{"20 MB", `'<'.repeat(20 * 1024 * 1024)`, "limit"},
	} {
		// Set the value in the page (a 20 MB string is not sent over CDP).
		eval[bool](b, `(() => { const el = document.querySelector(`+jsString(area)+`); el.value = `+bad.js+`; return true; })()`)
		b.touch(area)
		msg := errorAt(b, area)
		if !strings.HasPrefix(msg, "invalid: ") || !strings.Contains(msg, bad.want) {
			t.Errorf("%s: error next to the XML input is %q, want it to mention %q", bad.name, msg, bad.want)
		}
	}
	xmlBytes, err := os.ReadFile(filepath.Join(repoRoot, "data", "topologies", "a100-sxm-8x.xml"))
	if err != nil {
		t.Fatal(err)
	}
	evil := strings.Replace(string(xmlBytes), `name="mlx5_0"`, `name="&lt;img src=x onerror=window.__pwned=1&gt;"`, 1)
	b.change(area, evil)
	if msg := errorAt(b, area); msg != "" {
		t.Fatalf("valid XML still shows an error: %q", msg)
	}
	if eval[bool](b, `window.__pwned === 1 || document.querySelector('#pg-app img') !== null`) {
		t.Error("a name from the XML was inserted as HTML")
	}
	if !eval[bool](b, `document.querySelector('#pg-matrix').textContent.includes('<img src=x')`) {
		t.Error("the NIC name is not shown as text")
	}
	f := filepath.Join(t.TempDir(), "topology.xml")
	if err := os.WriteFile(f, []byte(evil), 0o644); err != nil {
		t.Fatal(err)
	}
	args := command(b)
	if strings.Join(args, " ") != "topo --xml topology.xml --json" {
		t.Errorf("command %v", args)
	}
	want := native(t, "topo", "--xml", f, "--json")
	checkTopology(b, want)
	// The pasted XML travels in the link.
	if !eval[bool](b, `location.hash.startsWith('#xml=')`) {
		t.Error("the pasted topology is not in the URL fragment")
	}
	url := eval[string](b, `location.href`)
	b.open(strings.TrimPrefix(url, server.URL+subPath))
	checkTopology(b, want)

	// A dump over bigtext.js's SHOW_BYTES (64 KiB; here padded with
	// whitespace, which NCCL's reader skips) loaded from a file is held in
	// memory, not put into the box, and answered like the CLI answers it.
	padded := strings.Replace(string(xmlBytes), "</system>", strings.Repeat(" \n", 150<<10)+"</system>", 1)
	big := filepath.Join(t.TempDir(), "big-dump.xml")
	if err := os.WriteFile(big, []byte(padded), 0o644); err != nil {
		t.Fatal(err)
	}
	n := b.renders()
	if err := chromedp.Do(b.ctx, chromedp.SetUploadFiles("[name=xmlfile]", []string{big})); err != nil {
		t.Fatal(err)
	}
	b.waitRenders(n + 1)
	if msg := errorAt(b, area); msg != "" {
		t.Fatalf("300 KB dump: %q", msg)
	}
	if eval[int](b, `document.querySelector('[name=xml]').value.length`) != 0 ||
		!strings.Contains(eval[string](b, `document.querySelector('.pg-loaded [role=status]').textContent`), "big-dump.xml") {
		t.Error("a 300 KB dump went into the textarea, or its status line does not name the file")
	}
	checkTopology(b, native(t, "topo", "--xml", big, "--json"))
	b.noConsoleErrors()
}

// TestLongSearchCancel pastes the 32-GPU test host, whose graph search runs
// for seconds in the worker (about 0.6 s natively), checks that progress and
// a Cancel button appear while the page stays responsive, cancels, and
// checks that the page stays usable.
func TestLongSearchCancel(t *testing.T) {
	b := newBrowser(t)
	b.open("playground/topology/?preset=a100-sxm-8x")
	slow, err := os.ReadFile(filepath.Join(repoRoot, "playground", "topo", "testdata", "slow-search-32gpu.xml"))
	if err != nil {
		t.Fatal(err)
	}
	b.change("[name=preset]", "__xml__")
	started := eval[string](b, `(async () => {
		const area = document.querySelector('[name=xml]');
		area.value = `+jsString(string(slow))+`;
		area.dispatchEvent(new Event('input', {bubbles: true}));
		const btn = Array.from(document.querySelectorAll('#pg-app button')).find((x) => x.textContent === 'Cancel');
		const t0 = performance.now();
		// While waiting, the page thread must stay free: the search runs in
		// the worker. maxGap is the longest wait for a 5 ms timer.
		let last = t0, maxGap = 0;
		while (btn.hidden) {
			if (performance.now() - t0 > 20000) return 'the Cancel button never showed';
			await new Promise((r) => setTimeout(r, 5));
			const now = performance.now();
			maxGap = Math.max(maxGap, now - last);
			last = now;
		}
		// The search takes over 0.6 s even natively, so on the page thread
		// it would hold it that long at least; 500 ms leaves room for a
		// loaded machine (a CI run saw 130 ms).
		if (maxGap > 500) return 'the page was blocked for ' + Math.round(maxGap) + ' ms during the search';
		// The Go module runs in the worker only.
		if (typeof window.distnav !== 'undefined') return 'the wasm API is loaded on the page thread';
		window.__maxGap = maxGap;
		btn.click();
		return '';
	})()`)
	if started != "" {
		t.Fatal(started)
	}
	t.Logf("longest page-thread pause while the worker searched: %.0f ms", eval[float64](b, `window.__maxGap`))
	if s := eval[string](b, `document.querySelector('.pg-status').textContent`); !strings.Contains(s, "Cancelled") {
		t.Errorf("status after cancel: %q", s)
	}
	answersAfterCancel(t, b)
	// A full 16-node search completes, with the same numbers as the CLI.
	b.change("[name=nodes]", "16")
	checkTopology(b, native(t, "topo", "--preset", "a100-sxm-8x", "--nodes", "16", "--json"))
	b.noConsoleErrors()
}

// TestLinkParams opens links whose parameters the inputs cannot take: the
// page names each of them (issue 18: invalid URL state names the
// parameter) and the note clears when the reader changes an input; a link
// the page wrote itself is taken whole, with no note.
func TestLinkParams(t *testing.T) {
	b := newBrowser(t)
	note := linkNoteJS
	b.open("playground/topology/?preset=h100-sxm-8x&nodes=2&p2p=none")
	if got := eval[string](b, note); got != "" {
		t.Errorf("a valid link shows %q", got)
	}
	b.open("playground/topology/?preset=no-such-box&nodes=abc&p2p=sometimes&colour=blue#xml=%21%21")
	got := eval[string](b, note)
	for _, want := range []string{"preset=no-such-box", "nodes=abc", "p2p=sometimes", "colour=blue", "#xml="} {
		if !strings.Contains(got, want) {
			t.Errorf("link note %q does not name %s", got, want)
		}
	}
	b.change("[name=nodes]", "1")
	if got := eval[string](b, note); got != "" {
		t.Errorf("the note stays after an input changed: %q", got)
	}
	// A query of 40,000 characters, over linkquery.js's MAX_QUERY (32 KiB):
	// the head's inline script (csp.html) cuts the document's URL to that
	// many characters before the body is parsed, state.js reads whole
	// parameters of it (the page then writes its own state into the URL),
	// and the note still says how long the link's query was (40,001 with its '?': 39 KiB).
	long := "nodes=2&" + strings.Repeat("x", 40000-len("nodes=2&"))
	b.open("playground/topology/?" + long)
	cut := eval[map[string]any](b, `({search: location.search, nodes: document.querySelector('[name=nodes]').value, cutAt: window.__queryCut || 0})`)
	if cut["cutAt"] != float64(40001) {
		t.Errorf("a 40,000-character query: window.__queryCut is %v, want 40001 (the inline script did not cut the URL)", cut["cutAt"])
	}
	if q := cut["search"].(string); len(q) > 100 || !strings.Contains(q, "nodes=2") || cut["nodes"] != "2" {
		t.Errorf("a 40,000-character query: the URL's query is %.60q (%d characters) and nodes %v; want the cut query with nodes=2, read", q, len(q), cut["nodes"])
	}
	if got := eval[string](b, note); !strings.Contains(got, "past its first 32 KiB (it is 39 KiB)") {
		t.Errorf("a 40,000-character query: note %q does not say it was cut", got)
	}
	// A GPU alias, as ncclsim step --gpu takes it (data/gpus.csv: RTX-4090's
	// aliases include rtx4090), selects the GPU and is not named.
	b.open("playground/step/?gpu=rtx4090")
	if got := eval[string](b, `document.querySelector('[name=gpu]').value`); got != "RTX-4090" {
		t.Errorf("?gpu=rtx4090 selects %q, want RTX-4090", got)
	}
	if got := eval[string](b, note); got != "" {
		t.Errorf("?gpu=rtx4090 shows %q", got)
	}
	// Links the step and estimator pages write are taken whole.
	for _, p := range []struct {
		page string
		set  [][2]string
	}{
		{"step", [][2]string{{"[name=params]", "350M"}, {"[name=bucketCapMb]", "100"}, {"[name=mode]", "fsdp"}, {"[name=reshard]", "false"}, {"[name=preset]", "h100-sxm-8x"}}},
		{"estimator", [][2]string{{"[name=coll]", "allgather"}, {"[name=bytes]", "1G"}, {"[name=preset]", "h100-sxm-8x"}}},
	} {
		b.open("playground/" + p.page + "/")
		for _, c := range p.set {
			b.change(c[0], c[1])
		}
		url := eval[string](b, `location.href`)
		b.open(strings.TrimPrefix(url, server.URL+subPath))
		if got := eval[string](b, note); got != "" {
			t.Errorf("%s: the page's own link %s shows %q", p.page, url, got)
		}
	}
	b.noConsoleErrors()
}

// linkNoteJS reads the "not taken from the link" note, ” when hidden.
const linkNoteJS = `(() => { const n = document.getElementById('pg-link-note'); return n && !n.hidden ? n.textContent : ''; })()`

// TestSiteLinksIntoPlayground opens every link of the built site that
// carries playground parameters (the notes link to presets and settings):
// each must be taken whole, with no "not taken from the link" note and no
// input error, so a note cannot promise a view ("P2P off") the page does not
// show.
func TestSiteLinksIntoPlayground(t *testing.T) {
	need(t)
	re := regexp.MustCompile(`href="(?:https://example\.github\.io)?` + regexp.QuoteMeta(subPath) + `(playground/[a-z]+/\?[^"#]+)`)
	links := map[string]string{}
	err := filepath.WalkDir(site.Public, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".html") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range re.FindAllStringSubmatch(string(data), -1) {
			links[html.UnescapeString(m[1])] = strings.TrimPrefix(path, site.Public)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(links) < 5 {
		t.Fatalf("found %d playground links with parameters in the site; the notes have more", len(links))
	}
	b := newBrowser(t)
	for link, from := range links {
		b.open(link)
		if got := eval[string](b, linkNoteJS); got != "" {
			t.Errorf("%s (linked from %s): %s", link, from, got)
		}
		noError(b, link+" (linked from "+from+")")
	}
	b.noConsoleErrors()
}

// TestSlowFirstAnswer holds the worker's first answer back for 4 s
// (delayFirstAnswer), longer than main.js waits before it shows progress
// (SHOW_PROGRESS_MS + FIRST_ANSWER_WAIT_MS, 2.7 s). The progress and a
// Cancel button appear in the floating loading note while the static view
// stays in place: showing the live view early, before it had results,
// moved the page (a layout shift of 0.37). Cancel then shows the live
// inputs with a message, and a changed input gets an answer.
func TestSlowFirstAnswer(t *testing.T) {
	b := newBrowser(t)
	delayFirstAnswer(t, b, 4*time.Second)
	if err := chromedp.Do(b.ctx, chromedp.Navigate(server.URL+subPath+"playground/topology/")); err != nil {
		t.Fatal(err)
	}
	noteCancel := `(() => { const c = document.querySelector('.pg-loading button'); return !!c && !c.hidden && c.textContent === 'Cancel'; })()`
	if err := b.pollPage(noteCancel+` || document.documentElement.dataset.playground === 'ready'`, 60*time.Second, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if !eval[bool](b, noteCancel) {
		t.Fatalf("the first answer came %.0f ms after navigation, with no progress in the loading note before it", eval[float64](b, `window.__pgReadyMs`))
	}
	if !eval[bool](b, `!!document.getElementById('pg-static') && document.getElementById('pg-app').hidden`) {
		t.Error("the live view replaced the static one before the first answer")
	}
	cls := eval[float64](b, `(async () => {
		const shifts = await new Promise((resolve) => {
			new PerformanceObserver((l) => resolve(l.getEntries())).observe({ type: 'layout-shift', buffered: true });
			setTimeout(() => resolve([]), 300);
		});
		return shifts.filter((s) => !s.hadRecentInput).reduce((sum, s) => sum + s.value, 0);
	})()`)
	if cls > 0.1 {
		t.Errorf("layout shift %.3f while the first answer was computed, over 0.1", cls)
	}
	eval[bool](b, `(() => { document.querySelector('.pg-loading button').click(); return true; })()`)
	if s := eval[string](b, `document.getElementById('pg-app').hidden ? 'hidden' : document.querySelector('#pg-app .pg-status').textContent`); !strings.Contains(s, "Cancelled before the first answer") {
		t.Errorf("after Cancel: %q, want the live view with the cancel message", s)
	}
	answersAfterCancel(t, b)
	b.noConsoleErrors()
}

// answersAfterCancel chooses another preset on a page whose search was
// cancelled and checks that the page answers it as the CLI does.
func answersAfterCancel(t *testing.T, b *browser) {
	t.Helper()
	n := b.renders()
	b.change("[name=preset]", "a100-sxm-8x")
	if b.renders() <= n {
		t.Error("no answer to a changed input after Cancel")
	}
	checkTopology(b, native(t, "topo", "--preset", "a100-sxm-8x", "--json"))
}

// delayFirstAnswer makes the pages b opens from now on hold their worker's
// first answer back by d: a script run before the page's own wraps Worker
// so that the first "result" message reaches the page's handler d late.
func delayFirstAnswer(t *testing.T, b *browser, d time.Duration) {
	t.Helper()
	src := fmt.Sprintf(`(() => {
  const W = window.Worker;
  let held = false;
  window.Worker = class extends W {
    set onmessage(f) {
      super.onmessage = (ev) => {
        if (!held && ev.data && ev.data.type === 'result') {
          held = true;
          setTimeout(() => f(ev), %d);
          return;
        }
        f(ev);
      };
    }
  };
})();`, d.Milliseconds())
	if _, err := chromedp.Call(b.ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: src}); err != nil {
		t.Fatal(err)
	}
}
