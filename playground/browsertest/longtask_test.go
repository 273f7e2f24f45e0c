package browsertest

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/distributed-nav/distributed-nav/generator/sitetest"
	"github.com/distributed-nav/distributed-nav/playground/service"
	"github.com/distributed-nav/distributed-nav/playground/topo/topotest"
)

// Issue 18 part 3: no main-thread task over 200 ms for any input up to the
// caps. Each page kind is loaded, and each playground page is given the
// hostile inputs of the issue; a PerformanceObserver for "longtask" (tasks
// over 50 ms on the page's main thread; the worker's are not counted)
// records every task from navigation on. BenchmarkLongTasks reports the
// longest task per page and input; TestHostileInputsBounded asserts what
// keeps the tasks short and does not depend on the machine's speed: how
// many elements the page holds, that large text stays out of the
// textareas, and that each over-cap input is answered by its cap's
// message.

// longTaskJS runs in every document before the page's own scripts.
const longTaskJS = `window.__lt = [];
try {
  window.__ltObserver = new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__lt.push([e.startTime, e.duration]); });
  window.__ltObserver.observe({type: 'longtask', buffered: true});
} catch (e) { window.__lt = null; }
// Long animation frames say what a long task spent its time on: scripts
// (by source and function) and style and layout.
window.__loaf = [];
try {
  new PerformanceObserver((l) => { for (const e of l.getEntries()) {
    if (e.duration < 100) continue;
    const layout = e.styleAndLayoutStart ? e.startTime + e.duration - e.styleAndLayoutStart : 0;
    const scripts = e.scripts.map((s) => [s.duration, (s.sourceURL || '').split(/[?#]/)[0].split('/').pop().replace(/\.[0-9a-f]{16,}\.js$/, '.js') + ' ' + (s.sourceFunctionName || s.invoker)]).sort((a, b) => b[0] - a[0]).slice(0, 3);
    window.__loaf.push({start: e.startTime, end: e.startTime + e.duration, layout, scripts});
  } }).observe({type: 'long-animation-frame', buffered: true});
} catch (e) {}
// Layout shifts not caused by input: the cumulative layout shift.
// Each shift also keeps what moved (the largest shift's nodes are reported).
window.__cls = 0;
window.__shift = {v: 0, what: ''};
try {
  const name = (n) => !n ? '?' : n.nodeType !== 1 ? (n.parentElement ? name(n.parentElement) + ' text' : 'text') :
    n.tagName.toLowerCase() + (n.id ? '#' + n.id : '') + (n.classList.length ? '.' + [...n.classList].join('.') : '');
  new PerformanceObserver((l) => { for (const e of l.getEntries()) {
    if (e.hadRecentInput) continue;
    window.__cls += e.value;
    if (e.value > window.__shift.v) window.__shift = {v: e.value, what: (e.sources || []).map((s) =>
      name(s.node) + ' y ' + Math.round(s.previousRect.y) + '->' + Math.round(s.currentRect.y) + ' h ' + Math.round(s.previousRect.height) + '->' + Math.round(s.currentRect.height)).join('; ')};
  } }).observe({type: 'layout-shift', buffered: true});
} catch (e) {}`

// settleJS waits until the page has painted what it last inserted (two
// animation frames, then a quiet moment) and returns the longest task (ms)
// that ended after the page-clock time since, 0 when none took over 50 ms.
// It fails when the browser has no longtask observer, rather than
// reporting 0.
const settleJS = `(async (since) => {
  if (!window.__lt) throw new Error('no longtask observer in this browser');
  for (let i = 0; i < 2; i++) await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  await new Promise((r) => setTimeout(r, 300));
  for (const e of window.__ltObserver.takeRecords()) window.__lt.push([e.startTime, e.duration]);
  const tasks = window.__lt.filter((e) => e[0] + e[1] >= since);
  const worst = tasks.reduce((m, e) => (e[1] > m[1] ? e : m), [0, 0]);
  const f = window.__loaf.find((x) => x.start <= worst[0] + 1 && x.end >= worst[0] + worst[1] - 1);
  const parts = f ? [f.layout >= 10 ? 'style and layout ' + Math.round(f.layout) + ' ms' : ''].concat(f.scripts.filter((s) => s[0] >= 10).map((s) => s[1] + ' ' + Math.round(s[0]) + ' ms')).filter(Boolean) : [];
  const what = parts.length ? parts.join(', ') : 'no script or layout of the page (wasm compilation, parsing or garbage collection)';
  return {ms: worst[1], what, cls: window.__cls, shift: window.__shift.v > 0.01 ? window.__shift.v.toFixed(3) + ': ' + window.__shift.what : ''};
})`

// maxElements bounds the elements of any page after any input: what the
// issue calls "a few thousand" (the longest note, the env table and a
// 64-GPU matrix stay under it).
const maxElements = 12000

// hostileInput is one input of the table: a link to open, or an action on
// an opened page.
type hostileInput struct {
	page, name string
	// open is the path under the site; for link inputs it is the input.
	open string
	// prep readies what the input needs in the page (a large string, a
	// file object) before the measurement starts; act gives the input once
	// the page has shown its first result; act is nil when opening the
	// link is the input.
	prep, act func(b *browser, dir string)
	// waitMs bounds the wait for the page's answer to the input.
	waitMs int
	// check asserts the structural bounds once the page has answered.
	check func(b *browser)
}

// pageFacts is what the bounds are asserted on.
type pageFacts struct {
	Elements int    `json:"elements"`
	AreaMax  int    `json:"areaMax"` // longest textarea value, UTF-16 units
	Errors   string `json:"errors"`  // every error line of the page
	Loaded   string `json:"loaded"`  // the status lines of held text
	Text     string `json:"text"`    // the results' text, first 40,000 characters
}

const factsJS = `(() => {
  const areas = Array.from(document.querySelectorAll('textarea'));
  const res = document.querySelector('#pg-app .pg-results');
  return {elements: document.getElementsByTagName('*').length,
    areaMax: areas.reduce((m, a) => Math.max(m, a.value.length), 0),
    errors: Array.from(document.querySelectorAll('.pg-error')).map((e) => e.textContent).filter(Boolean).join(' | '),
    loaded: Array.from(document.querySelectorAll('.pg-loaded:not([hidden]) [role=status]')).map((e) => e.textContent).join(' | '),
    text: res ? res.textContent.slice(0, 40000) : ''};
})()`

func facts(b *browser) pageFacts { return eval[pageFacts](b, factsJS) }

// boundsCheck returns a check of the common bounds (element count, no
// textarea over bigtext.js's SHOW_BYTES) plus, when not empty, a substring
// each of the error lines, the held-text status and the results must show.
func boundsCheck(errorHas, loadedHas, textHas string) func(b *browser) {
	return func(b *browser) {
		b.t.Helper()
		f := facts(b)
		if f.Elements > maxElements {
			b.t.Errorf("the page holds %d elements, the bound is %d", f.Elements, maxElements)
		}
		if f.AreaMax > showBytes {
			b.t.Errorf("a textarea holds %d characters; text over %d bytes must be kept in memory", f.AreaMax, showBytes)
		}
		if errorHas != "" && !strings.Contains(f.Errors, errorHas) {
			b.t.Errorf("the page's errors %q do not say %q", f.Errors, errorHas)
		}
		if errorHas == "" && f.Errors != "" {
			b.t.Errorf("unexpected error: %s", f.Errors)
		}
		if loadedHas != "" && !strings.Contains(f.Loaded, loadedHas) {
			b.t.Errorf("the held-text status %q does not say %q", f.Loaded, loadedHas)
		}
		if textHas != "" && !strings.Contains(f.Text, textHas) {
			b.t.Errorf("the results do not say %q: %.300s", textHas, f.Text)
		}
		b.t.Logf("%d elements, longest textarea %d, errors %.160q", f.Elements, f.AreaMax, f.Errors)
	}
}

// pasteRefused checks the common bounds after a paste a box refuses
// whole: the refusal is on the page, and the box is still empty.
func pasteRefused(selector string) func(b *browser) {
	bounds := boundsCheck("was not taken", "", "")
	return func(b *browser) {
		b.t.Helper()
		bounds(b)
		if n := eval[int](b, `document.querySelector(`+jsString(selector)+`).value.length`); n != 0 {
			b.t.Errorf("%s holds %d characters after the refused paste, want none", selector, n)
		}
	}
}

// showBytes is bigtext.js's SHOW_BYTES.
const showBytes = 64 * 1024

// xmlFragment encodes a topology as the page's #xml= link does
// (state.js: raw deflate, base64url without padding).
func xmlFragment(tb testing.TB, xml string) string {
	tb.Helper()
	var z bytes.Buffer
	w, err := flate.NewWriter(&z, flate.BestCompression)
	if err != nil {
		tb.Fatal(err)
	}
	w.Write([]byte(xml))
	w.Close()
	return base64.RawURLEncoding.EncodeToString(z.Bytes())
}

// unknownEnv is an environment listing of n names NCCL does not know.
func unknownEnv(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "NCCL_NOT_A_KNOB_%d=1\n", i)
	}
	return b.String()
}

// upload gives a file input a file, as choosing it in the dialog does.
func upload(b *browser, selector, file string) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, chromedp.SetUploadFiles(selector, []string{file})); err != nil {
		b.t.Fatal(err)
	}
}

// pasteJS pastes the text the page-side expression text builds into the
// element at selector, as a clipboard paste does: a paste event, then
// (when the page does not take it) the text in the box and an input event.
func pasteJS(selector, text string) string {
	return `(() => {
	const a = document.querySelector(` + jsString(selector) + `);
	const text = ` + text + `;
	const dt = new DataTransfer();
	dt.setData('text/plain', text);
	const ev = new ClipboardEvent('paste', {clipboardData: dt, bubbles: true, cancelable: true});
	if (a.dispatchEvent(ev)) {
		a.value = text;
		a.dispatchEvent(new Event('input', {bubbles: true}));
		a.dispatchEvent(new Event('change', {bubbles: true}));
	}
	return true;
})()`
}

// insertText gives text to the element at selector in one piece, as an
// IME commit or a test driver does (a trusted Input.insertText, no paste
// event).
func insertText(b *browser, selector, text string) {
	b.t.Helper()
	eval[bool](b, `(() => { document.querySelector(`+jsString(selector)+`).focus(); return true; })()`)
	if _, err := chromedp.Call(b.ctx, input.InsertText, input.InsertTextParams{Text: text}); err != nil {
		b.t.Fatal(err)
	}
}

// dropText drags text (not a file) onto the middle of the element at
// selector and drops it, with trusted drag events, so that the browser
// itself inserts what the page does not take.
func dropText(b *browser, selector, text string) {
	b.t.Helper()
	pt := eval[struct {
		X float64 `json:"x"`
		Y float64 `json:"y"`
	}](b, `(() => { const a = document.querySelector(`+jsString(selector)+`); a.scrollIntoView({block: 'center'}); const r = a.getBoundingClientRect(); return {x: r.left + r.width / 2, y: r.top + r.height / 2}; })()`)
	data := &input.DragData{Items: []*input.DragDataItem{{MimeType: "text/plain", Data: text}}, DragOperationsMask: 1}
	for _, typ := range []input.DispatchDragEventType{input.DispatchDragEventTypeDragEnter, input.DispatchDragEventTypeDragOver, input.DispatchDragEventTypeDrop} {
		if _, err := chromedp.Call(b.ctx, input.DispatchDragEvent, input.DispatchDragEventParams{Type: typ, X: pt.X, Y: pt.Y, Data: data}); err != nil {
			b.t.Fatal(err)
		}
	}
}

// dropJS drops the file the page holds in window.__bigFile onto the
// element at selector.
func dropJS(selector string) string {
	return `(() => {
	const a = document.querySelector(` + jsString(selector) + `);
	const dt = new DataTransfer();
	dt.items.add(window.__bigFile);
	a.dispatchEvent(new DragEvent('dragover', {dataTransfer: dt, bubbles: true, cancelable: true}));
	a.dispatchEvent(new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true}));
	return true;
})()`
}

// hostileInputs is the table of issue 18's inputs at the caps, with the
// page kinds' plain loads first.
func hostileInputs(tb testing.TB, dir string) []hostileInput {
	tb.Helper()
	kinds, err := sitetest.PageKinds(site.Public)
	if err != nil {
		tb.Fatal(err)
	}
	var in []hostileInput
	for _, k := range kinds {
		in = append(in, hostileInput{page: k.Name, name: "load", open: k.Path, check: boundsCheck("", "", "")})
	}
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			tb.Fatal(err)
		}
		return p
	}
	// A wide PCIe host of 512 GPUs (2 sockets x 16 switches x 16), which
	// the model refuses (more GPUs than NCCL's per-host state holds), and
	// one at that cap, 72 GPUs (2 x 4 x 9): searched, its pairs summarised.
	wide := topotest.Host{Sockets: 2, Switches: 16, GPUs: 16}
	wideFile := write(fmt.Sprintf("wide-%d.xml", wide.N()), []byte(wide.XML()))
	atCap := topotest.Host{Sockets: 2, Switches: 4, GPUs: 9}
	atCapFile := write(fmt.Sprintf("wide-%d.xml", atCap.N()), []byte(atCap.XML()))
	// The same host with 252 NICs (under MAX_IB_VDEVS): the figure drew a
	// NIC and a NET box per NIC, 7,240 start tags, and the path analysis
	// took 3.4 GB.
	nicsFile := write(fmt.Sprintf("wide-%d-252-nics.xml", atCap.N()), []byte(topotest.WithNICs(atCap.XML(), 252)))
	// Runs of x<!----> up to just under the 2 MiB cap: the token cap
	// answers, before any warning is listed.
	flood := topotest.OneGPU(strings.Repeat("x<!---->", (service.MaxXMLBytes-400)/8))
	floodFile := write("flood.xml", []byte(flood))
	// The same flood in a link: its 4.5 KB fragment inflates to the 2 MiB
	// above.
	frag := xmlFragment(tb, flood)
	// A link under the page's fragment cap (state.js MAX_LINK_XML, 24 Ki
	// characters) whose topology unpacks to 16 MiB of spaces, eight times
	// the XML cap: the page stops unpacking at the cap. (Its query differs
	// from the link before it, so that opening it loads the page rather
	// than moving to another fragment of the same one.)
	bomb := xmlFragment(tb, topotest.OneGPU(strings.Repeat(" ", 16<<20)))
	if len(bomb) > 24<<10 {
		tb.Fatalf("the 16 MiB link is %d characters, over the fragment cap", len(bomb))
	}
	// The 89-character step link of the issue, as page parameters.
	stepLink := "playground/step/?mode=ddp&layers=1024&tensors=1024&bucket=0.000001&params=1e15"
	// A published log repeated to just under the 8 MiB cap.
	logText, err := os.ReadFile(filepath.Join(repoRoot, "data", "logs", "nvidia-nccl-426-ib-error-12-gid.log"))
	if err != nil {
		tb.Fatal(err)
	}
	bigLog := bytes.Repeat(logText, (service.MaxLogBytes-64<<10)/len(logText))
	bigLogFile := write("rank0.log", bigLog)
	binFile := func() string {
		r := rand.New(rand.NewPCG(18, 3))
		data := make([]byte, 5_000_000)
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		return write("core.bin", data)
	}()
	// Random bytes without NUL just under the log cap (issue 18's
	// log_bin.txt): decoded, each invalid byte is a 3-byte U+FFFD, but the
	// cap counts the file's own bytes, as ncclsim doctor does.
	noNulFile := func() string {
		r := rand.New(rand.NewPCG(18, 4))
		data := make([]byte, service.MaxLogBytes-100)
		for i := range data {
			data[i] = byte(1 + r.Uint32()%255)
		}
		return write("random.log", data)
	}()
	// A published nccl-tests run repeated to just under the paste box's
	// 2 MiB cap (service.MaxNCCLTestsBytes), for the estimator page: the
	// reader's cap of 128 tables answers it, with the line it stopped at.
	var run struct {
		Raw string `json:"raw"`
	}
	if b, err := os.ReadFile(filepath.Join(repoRoot, "data", "measurements", "ppio-rtx4090-4gpu-p2p-driver.json")); err != nil {
		tb.Fatal(err)
	} else if err := json.Unmarshal(b, &run); err != nil || run.Raw == "" {
		tb.Fatalf("ppio-rtx4090-4gpu-p2p-driver.json: no raw table (%v)", err)
	}
	bigRun := strings.Repeat(run.Raw+"\n", (service.MaxNCCLTestsBytes-64<<10)/(len(run.Raw)+1))
	env5k, env40k := unknownEnv(5000), unknownEnv(40000)
	// NAME=VALUE lines for the model pages' environment box: just under
	// its cap (env.js MAX_ENV_CHARS, 64 variables of 4,096 bytes and their
	// line ends: the session-16 attack dropped 261,984 characters, one
	// 2-3 s task), and 16 KiB (inserted in one piece: 2-4 s).
	envLines := func(n int) string {
		var b strings.Builder
		for i := 0; b.Len() < n; i++ {
			fmt.Fprintf(&b, "NCCL_NOT_A_KNOB_%d=1\n", i)
		}
		return b.String()[:n]
	}
	envDrop, envInsert := envLines(64*4097-256), envLines(16<<10)
	// 257 KB of ?env= parameters naming unknown variables.
	var q strings.Builder
	for i := 0; q.Len() < 257_000; i++ {
		q.WriteString("&env=" + url.QueryEscape(fmt.Sprintf("NCCL_NOT_A_KNOB_%d=1", i)))
	}
	envLink := "playground/topology/?preset=h100-sxm-8x" + q.String()
	// Session 6's attack F10: a 758 KB link of 60,000 parameters no page
	// takes (readState reads the first MAX_QUERY characters of a query).
	var junk strings.Builder
	for i := range 60_000 {
		fmt.Fprintf(&junk, "&p%05d=%06d", i, i)
	}
	junkLink := "playground/step/?model=ddp" + junk.String()
	// The log as a page-side string, sent once (not per expression).
	const pageLog = `window.__bigLog`
	setLog := func(b *browser) {
		b.t.Helper()
		eval[bool](b, `(() => { window.__bigLog = `+jsString(string(logText))+`.repeat(`+itoa(len(bigLog)/len(logText))+`);
			window.__bigFile = new File([window.__bigLog], 'rank0.log', {type: 'text/plain'}); return true; })()`)
	}
	in = append(in,
		hostileInput{page: "topology", name: fmt.Sprintf("%d-GPU host, file", wide.N()), open: "playground/topology/",
			act:   func(b *browser, _ string) { upload(b, "[name=xmlfile]", wideFile) },
			check: boundsCheck("NCCL_MAX_LOCAL_RANKS", "", "")},
		hostileInput{page: "topology", name: fmt.Sprintf("%d-GPU host (the cap), file", atCap.N()), open: "playground/topology/", waitMs: 400_000,
			act:   func(b *browser, _ string) { upload(b, "[name=xmlfile]", atCapFile) },
			check: boundsCheck("", "", fmt.Sprintf("Transports between the %d GPUs", atCap.N()))},
		hostileInput{page: "topology", name: fmt.Sprintf("%d GPUs and 252 NICs, file", atCap.N()), open: "playground/topology/", waitMs: 400_000,
			act:   func(b *browser, _ string) { upload(b, "[name=xmlfile]", nicsFile) },
			check: boundsCheck("", "", fmt.Sprintf("Transports between the %d GPUs", atCap.N()))},
		hostileInput{page: "topology", name: "2 MiB of x<!---->, file", open: "playground/topology/",
			act:   func(b *browser, _ string) { upload(b, "[name=xmlfile]", floodFile) },
			check: boundsCheck("XML tokens", "flood.xml", "")},
		hostileInput{page: "topology", name: fmt.Sprintf("%.1f KB #xml= link", float64(len(frag))/1000), open: "playground/topology/#xml=" + frag,
			check: boundsCheck("XML tokens", "topology from the link", "")},
		// Session 8's attack F3: invalid UTF-8 in a link is unreadable (as
		// in a file), not a text grown by U+FFFD replacements.
		hostileInput{page: "topology", name: "#xml= link of invalid UTF-8", open: "playground/topology/?p2p=auto&nodes=1#xml=" + xmlFragment(tb, "<system version=\"1\">\xff\xfe\x00</system>"), // a query of its own: a link differing only in its fragment would not reload the page
			check: boundsCheck("", "", "#xml= (unreadable: not deflated base64url of UTF-8 text)")},
		hostileInput{page: "topology", name: fmt.Sprintf("%.1f KB #xml= link of 16 MiB", float64(len(bomb))/1000), open: "playground/topology/?nodes=1#xml=" + bomb,
			check: boundsCheck("", "", "unpacks to more than 2 MiB, the limit")},
		hostileInput{page: "topology", name: fmt.Sprintf("%.0f KB ?env= link", float64(len(envLink))/1000), open: envLink,
			check: boundsCheck("NCCL_NOT_A_KNOB", "", "more. The inputs show")},
		// Session 8's attack F2: a link whose filter is a megabyte of
		// words; the table's filter takes its first 200 characters.
		hostileInput{page: "env", name: "1 MB ?q= link", open: "env/?q=" + strings.Repeat("a+", 500_000),
			check: func(b *browser) {
				b.t.Helper()
				boundsCheck("", "", "")(b)
				got := eval[string](b, `document.getElementById('env-q').value.length + ' ' + document.getElementById('env-n').textContent`)
				if !strings.HasPrefix(got, "200 ") || !strings.Contains(got, "cut to its first 200 characters") {
					b.t.Errorf("filter box and count after a 1 MB ?q=: %q, want 200 characters and the cut named", got)
				}
			}},
		// Session 8's attack F1: megabytes pasted into the environment box
		// and into a one-line input; refused whole (ui.js capText).
		hostileInput{page: "topology", name: "8 MiB of NAME=VALUE lines pasted into the environment box", open: "playground/topology/",
			prep: func(b *browser, _ string) {
				eval[bool](b, `(() => { const l = []; let n = 0; for (let i = 0; n < 8 << 20; i++) { const s = 'NCCL_NOT_A_KNOB_' + i + '=1'; l.push(s); n += s.length + 1; } window.__envText = l.join('\n'); return true; })()`)
			},
			act:   func(b *browser, _ string) { eval[bool](b, pasteJS("[name=env]", `window.__envText`)) },
			check: pasteRefused("[name=env]")},
		hostileInput{page: "topology", name: fmt.Sprintf("%d KB of NAME=VALUE lines dropped on the environment box", len(envDrop)/1000), open: "playground/topology/",
			act:   func(b *browser, _ string) { dropText(b, "[name=env]", envDrop) },
			check: boundsCheck("At most", "dropped environment", "")},
		hostileInput{page: "step", name: "16 KiB of NAME=VALUE lines inserted in one piece into the environment box", open: "playground/step/",
			act:   func(b *browser, _ string) { insertText(b, "[name=env]", envInsert) },
			check: boundsCheck("At most", "", "")},
		hostileInput{page: "algorithms", name: "1 MiB line pasted into NCCL_ALGO", open: "playground/algorithms/",
			act:   func(b *browser, _ string) { eval[bool](b, pasteJS("[name=NCCL_ALGO]", `'Ring,'.repeat(1 << 18)`)) },
			check: pasteRefused("[name=NCCL_ALGO]")},
		hostileInput{page: "step", name: fmt.Sprintf("%.0f KB link of 60,000 unknown parameters", float64(len(junkLink))/1000), open: junkLink,
			check: boundsCheck("", "", "past its first 32 KiB")},
		hostileInput{page: "step", name: "the issue's million-bucket link", open: stepLink,
			check: boundsCheck("over the limit", "", "")},
		hostileInput{page: "estimator", name: "2 MiB nccl-tests output, pasted", open: "playground/estimator/?preset=rtx4090-4x-1socket-p2p-driver", waitMs: 300_000,
			prep: func(b *browser, _ string) {
				eval[bool](b, `(() => { window.__bigRun = `+jsString(bigRun)+`; return true; })()`)
			},
			act:   func(b *browser, _ string) { eval[bool](b, pasteJS("[name=nccl_tests]", `window.__bigRun`)) },
			check: boundsCheck("more than 128 tables", "MB loaded", "")},
		hostileInput{page: "doctor", name: "8 MiB log, pasted", open: "playground/doctor/", waitMs: 300_000,
			prep:  func(b *browser, _ string) { setLog(b) },
			act:   func(b *browser, _ string) { eval[bool](b, pasteJS("[name=log]", pageLog)) },
			check: boundsCheck("", "MB loaded", "")},
		hostileInput{page: "doctor", name: "8 MiB log, dropped file", open: "playground/doctor/", waitMs: 300_000,
			prep:  func(b *browser, _ string) { setLog(b) },
			act:   func(b *browser, _ string) { eval[bool](b, dropJS("[name=log]")) },
			check: boundsCheck("", "rank0.log", "")},
		hostileInput{page: "doctor", name: "8 MiB log, file", open: "playground/doctor/", waitMs: 300_000,
			act:   func(b *browser, _ string) { upload(b, "[name=logfile]", bigLogFile) },
			check: boundsCheck("", "rank0.log", "")},
		hostileInput{page: "doctor", name: "5 MB binary, file", open: "playground/doctor/", waitMs: 300_000,
			act:   func(b *browser, _ string) { upload(b, "[name=logfile]", binFile) },
			check: boundsCheck("binary file", "", "")},
		hostileInput{page: "doctor", name: "8 MiB random bytes without NUL, file", open: "playground/doctor/", waitMs: 300_000,
			act:   func(b *browser, _ string) { upload(b, "[name=logfile]", noNulFile) },
			check: boundsCheck("", "random.log", "")},
		hostileInput{page: "doctor", name: "5,000 unknown env names", open: "playground/doctor/", waitMs: 300_000,
			prep: func(b *browser, _ string) {
				eval[bool](b, `(() => { window.__env = `+jsString(env5k)+`; return true; })()`)
			},
			act:   func(b *browser, _ string) { eval[bool](b, pasteJS("[name=envdump]", `window.__env`)) },
			check: boundsCheck("", "", "more of the same kind")},
		hostileInput{page: "doctor", name: "40,000 unknown env names", open: "playground/doctor/", waitMs: 300_000,
			prep: func(b *browser, _ string) {
				eval[bool](b, `(() => { window.__env = `+jsString(env40k)+`; return true; })()`)
			},
			act:   func(b *browser, _ string) { eval[bool](b, pasteJS("[name=envdump]", `window.__env`)) },
			check: boundsCheck("", "pasted environment", "more of the same kind")},
	)
	return in
}

// longTaskBrowser is a browser whose documents record their long tasks.
func longTaskBrowser(tb testing.TB) *browser {
	tb.Helper()
	b := newBrowserFor(tb, 40*time.Minute)
	if _, err := chromedp.Call(b.ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: longTaskJS}); err != nil {
		tb.Fatal(err)
	}
	return b
}

// longTask is the longest main-thread task of an input, with what it
// spent its time on when the long-animation-frame entries say.
type longTask struct {
	Ms   float64 `json:"ms"`
	What string  `json:"what"`
	// CLS is the document's cumulative layout shift so far.
	CLS float64 `json:"cls"`
	// Shift names the largest single layout shift (its value and the
	// nodes it moved, their top and height before and after), empty
	// under 0.01.
	Shift string `json:"shift"`
	// Err says the page did not answer the input (a build without the
	// handling it needs, measured by the benchmark); the tasks until then
	// are still reported.
	Err string `json:"-"`
}

// run gives one input and returns the longest main-thread task from the
// navigation, or from the action, to the painted answer.
func (in hostileInput) run(b *browser, dir string) longTask {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, chromedp.Navigate(server.URL+subPath+in.open)); err != nil {
		b.t.Fatal(err)
	}
	widget := strings.HasPrefix(in.open, "playground/") && in.open != "playground/"
	if widget {
		b.waitRendersFor(1, 120*time.Second)
	}
	since := 0.0
	if in.prep != nil {
		in.prep(b, dir)
	}
	if in.act != nil {
		n := b.renders()
		since = eval[float64](b, `performance.now()`)
		in.act(b, dir)
		wait := time.Duration(max(in.waitMs, 120_000)) * time.Millisecond
		if err := b.waitAnswer(n, wait); err != nil {
			lt := eval[longTask](b, settleJS+`(`+fmt.Sprint(since)+`)`)
			lt.Err = err.Error()
			return lt
		}
	}
	return eval[longTask](b, settleJS+`(`+fmt.Sprint(since)+`)`)
}

// waitAnswer waits up to d for the page's answer to an input given after
// its n-th update: another update, or a refusal shown without one (a file
// refused before it is read).
func (b *browser) waitAnswer(n int, d time.Duration) error {
	b.t.Helper()
	js := `window.__pg.renders > ` + itoa(n) + ` || Array.from(document.querySelectorAll('.pg-error')).some((e) => e.textContent !== '')`
	if _, err := chromedp.Run(b.ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(d), chromedp.WithPollingInterval(10*time.Millisecond))); err != nil {
		return fmt.Errorf("no answer to the input within %v: %w", d, err)
	}
	return nil
}

// TestHostileInputsBounded gives every page kind and each playground page
// the inputs of issue 18 at their caps and asserts the structural bounds
// that keep main-thread tasks short (element counts, large text out of the
// textareas, the caps' messages). The longest task is logged, not
// asserted: CI machines are slow and shared (BenchmarkLongTasks reports it).
func TestHostileInputsBounded(t *testing.T) {
	dir := t.TempDir()
	b := longTaskBrowser(t)
	for _, in := range hostileInputs(t, dir) {
		t.Run(in.page+"/"+in.name, func(t *testing.T) {
			b.t = t
			lt := in.run(b, dir)
			if lt.Err != "" {
				t.Fatal(lt.Err)
			}
			in.check(b)
			// No page moves what is on the screen while it loads (0.1 is
			// the threshold of a good CLS): a note's contents list is
			// collapsed from the first paint (main.css); a playground's
			// live view replaces the static one, which shows the same kind
			// of results, and the doctor's short static view holds a
			// screen's height for it (playground.css); a slow first
			// answer shows its progress in the floating loading note
			// (TestSlowFirstAnswer). Nor does an answer to an input move
			// what was there (a refused input's stale note lies over the
			// results, playground.css).
			if lt.CLS > 0.1 {
				t.Errorf("cumulative layout shift %.3f, over 0.1 (largest: %s)", lt.CLS, lt.Shift)
			}
			t.Logf("longest main-thread task %.0f ms (%s), layout shift %.3f %s", lt.Ms, lt.What, lt.CLS, lt.Shift)
		})
	}
	b.t = t
	b.noConsoleErrors()
}

// BenchmarkLongTasks reports the longest main-thread task per page and
// input (issue 18 part 3's target: none over 200 ms), with the machine's
// load average, which the figures depend on.
//
// PG_LONGTASKS=SUBSTRING measures only the inputs whose "page / input" key
// holds it (one page's inputs while working on them); PG_LONGTASKS_FRESH=1
// gives every input a browser of its own.
func BenchmarkLongTasks(bm *testing.B) {
	need(bm)
	dir := bm.TempDir()
	ins := hostileInputs(bm, dir)
	if only := os.Getenv("PG_LONGTASKS"); only != "" {
		ins = slices.DeleteFunc(ins, func(in hostileInput) bool { return !strings.Contains(in.page+" / "+in.name, only) })
	}
	// PG_LONGTASKS_FRESH=1 starts a new browser, with an empty profile, for
	// every input: the cold first load (fonts, caches and the compiled wasm
	// all new), which the shared browser only shows for the first page.
	fresh := os.Getenv("PG_LONGTASKS_FRESH") != ""
	worst := map[string]longTask{}
	for i := 0; i < bm.N; i++ {
		b := longTaskBrowser(bm)
		for _, in := range ins {
			if fresh {
				b.cancel()
				b = longTaskBrowser(bm)
			}
			lt := in.run(b, dir)
			k := in.page + " / " + in.name
			if lt.Ms >= worst[k].Ms {
				worst[k] = lt
			}
		}
		b.cancel()
	}
	bm.StopTimer()
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("longest main-thread task per page and input (target: none over 200 ms; load average %s)\n", strings.Join(strings.Fields(string(load))[:3], " "))
	for _, in := range ins {
		k := in.page + " / " + in.name
		verdict := ""
		if worst[k].Ms > 200 {
			verdict = "  over 200 ms: " + worst[k].What
		}
		if worst[k].CLS > 0.05 && worst[k].Shift != "" {
			verdict += "  largest shift " + worst[k].Shift
		}
		if worst[k].Err != "" {
			verdict += "  (the page did not answer: " + worst[k].Err + ")"
		}
		fmt.Printf("%-48s %8.0f ms  CLS %.3f%s\n", k, worst[k].Ms, worst[k].CLS, verdict)
		bm.ReportMetric(worst[k].Ms, metricName(k)+"-ms")
	}
}

// metricName turns a table key into a unit without spaces for
// ReportMetric.
func metricName(k string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-':
			return r
		}
		return '_'
	}, k)
}
