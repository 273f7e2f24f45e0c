package browsertest

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// rowValues returns the data-v values of a table row.
func rowValues(b *browser, selector string) []string {
	b.t.Helper()
	return eval[[]string](b, `Array.from(document.querySelectorAll(`+jsString(selector+" [data-v]")+`)).map((c) => c.dataset.v)`)
}

func checkNumbers(b *browser, label string, got []string, want []float64) {
	b.t.Helper()
	if len(got) != len(want) {
		b.t.Fatalf("%s: page shows %d numbers %v, want %d", label, len(got), got, len(want))
	}
	for i := range want {
		if !sameNumber(got[i], want[i]) {
			b.t.Errorf("%s number %d: page %s, ncclsim %v", label, i, got[i], want[i])
		}
	}
}

func TestEstimatorPage(t *testing.T) {
	b := newBrowser(t)
	b.open("playground/estimator/")
	if p := eval[string](b, `document.querySelector('[name=preset]').value`); p != "rtx4090-2x-2socket" {
		t.Errorf("the estimator opens on %s, want the RTX 4090 box without P2P", p)
	}
	b.waitWarm()
	var timings []float64
	check := func(label string) {
		t.Helper()
		noError(b, label)
		args := command(b)
		want := native(t, args...)
		m, c := want["model"].(map[string]any), want["calibrated"].(map[string]any)
		checkNumbers(b, label+" model", rowValues(b, `.pg-estimate tr[data-row=nccl]`), []float64{m["time_us"].(float64), m["algbw_GBps"].(float64), m["busbw_GBps"].(float64)})
		checkNumbers(b, label+" calibrated", rowValues(b, `.pg-estimate tr[data-row=calibrated]`), []float64{c["time_us"].(float64), c["algbw_GBps"].(float64), c["busbw_GBps"].(float64)})
	}
	check("default")
	if got := eval[string](b, `document.querySelector('#pg-estimate').textContent`); !strings.Contains(got, "shm-xsocket") {
		t.Errorf("the default system is not the SHM (no P2P) class: %.200s", got)
	}
	for _, coll := range []string{"allreduce", "allgather", "reducescatter"} {
		timings = append(timings, b.change("[name=coll]", coll))
		check(coll)
		ids := eval[[]string](b, `Array.from(document.querySelectorAll('#pg-measurement-list li')).map((li) => li.dataset.id)`)
		if len(ids) == 0 {
			t.Errorf("%s: no published measurement shown", coll)
		}
		if n := eval[int](b, `document.querySelectorAll('#pg-busbw circle.pg-marker').length`); n < 5 {
			t.Errorf("%s: %d measured points drawn", coll, n)
		}
	}
	timings = append(timings, b.change("[name=bytes]", "1G"))
	check("1G")
	timings = append(timings, b.change("[name=preset]", "h100-sxm-8x"))
	check("h100")
	for _, bad := range []string{"-5", "abc", "1e99", "99999999999999999999T", "2P"} {
		b.change("[name=bytes]", bad)
		if msg := errorAt(b, "[name=bytes]"); !strings.HasPrefix(msg, "invalid: ") {
			t.Errorf("size %q: no error next to the size (%q)", bad, msg)
		}
	}
	b.change("[name=bytes]", "4M")
	check("after bad sizes")
	// A run measured under another NCCL environment is listed, not drawn:
	// the PPIO RTX 4090 run set NCCL_P2P_LEVEL=SYS (its dataset's
	// system.env), without which NCCL v2.30.7 keeps four GPUs under an AMD
	// host bridge on SHM (paths.cc's AMD rule for at most two GPUs). Its
	// button sets that environment; then the run is drawn next to a PCIe
	// P2P estimate.
	b.change("[name=coll]", "allreduce")
	b.change("[name=preset]", "rtx4090-4x-1socket-p2p-driver")
	const ppio = "ppio-rtx4090-4gpu-p2p-driver"
	drawn := func() []string {
		return eval[[]string](b, `Array.from(document.querySelectorAll('#pg-measurement-list li')).map((li) => li.dataset.id)`)
	}
	if got := drawn(); slices.Contains(got, ppio) {
		t.Errorf("with NCCL's default environment the P2P-level run is drawn: %v", got)
	}
	if got := eval[string](b, `(document.querySelector('#pg-other-env li[data-id="`+ppio+`"]') || {textContent: ''}).textContent`); !strings.Contains(got, "NCCL_P2P_LEVEL=SYS") {
		t.Errorf("the run with NCCL_P2P_LEVEL=SYS is not listed with its environment: %q", got)
	}
	b.update(`#pg-other-env li[data-id="`+ppio+`"] button`, "el.click();")
	if got := drawn(); !slices.Contains(got, ppio) {
		t.Errorf("after its environment was set, the run is not drawn: %v", got)
	}
	if got := eval[string](b, `document.querySelector('[name=env]').value + ' | ' + document.querySelector('#pg-estimate').textContent`); !strings.HasPrefix(got, "NCCL_P2P_LEVEL=SYS |") || !strings.Contains(got, "Path class pcie") {
		t.Errorf("after the button: %.300s, want the environment set and the pcie class", got)
	}
	checkTimings(t, timings)
	// A link whose first answer is an error (two nodes of a preset without
	// a NIC) shows the error and no empty result sections; the first
	// answer that renders brings them back.
	b.open("playground/estimator/?preset=h100-sxm-8x&nodes=2")
	if got := eval[string](b, `Array.from(document.querySelectorAll('.pg-error')).map((e) => e.textContent).join(' ') + ' | ' + ['pg-estimate', 'pg-busbw', 'pg-time', 'pg-measurements'].map((id) => document.getElementById(id).hidden).join(' ')`); !strings.HasSuffix(got, "| true true true true") || strings.HasPrefix(got, " |") {
		t.Errorf("error-first link: %q, want an error and the four result sections hidden", got)
	}
	b.change("[name=nodes]", "1")
	if got := eval[string](b, `['pg-estimate', 'pg-busbw', 'pg-time', 'pg-measurements'].map((id) => document.getElementById(id).hidden).join(' ')`); got != "false false false false" {
		t.Errorf("after a good input the result sections are hidden: %s", got)
	}
	b.noConsoleErrors()
	b.axe()
	b.open("playground/estimator/")
	b.screenshot("estimator", "light")
	b.screenshot("estimator", "dark")
	b.noConsoleErrors()
}

func TestStepPage(t *testing.T) {
	b := newBrowser(t)
	b.open("playground/step/")
	b.waitWarm()
	var timings []float64
	check := func(label string) {
		t.Helper()
		noError(b, label)
		args := command(b)
		if args[0] != "step" {
			t.Fatalf("command %v", args)
		}
		want := native(t, args...)
		x, _ := want["ddp"].(map[string]any)
		if x == nil {
			x = want["fsdp"].(map[string]any)
		}
		got := eval[string](b, `document.querySelector('#pg-step-summary').textContent`)
		for _, k := range []string{"step_ms", "single_gpu_step_ms", "total_comm_ms", "exposed_comm_ms"} {
			if s := strconvF(x[k].(float64), 2); !strings.Contains(got, s+" ms") {
				t.Errorf("%s: %s %s ms missing from %q", label, k, s, got)
			}
		}
		if s := strconvF(x["speedup"].(float64), 2) + "×"; !strings.Contains(got, s) {
			t.Errorf("%s: speedup %s missing from %q", label, s, got)
		}
		// The spans table: the first row's numbers.
		if ddp, ok := want["ddp"].(map[string]any); ok {
			bk := ddp["buckets"].([]any)[0].(map[string]any)
			checkNumbers(b, label+" bucket 0", rowValues(b, `.pg-spans tr[data-row="0"]`), []float64{bk["bytes"].(float64), bk["ready_ms"].(float64),
				bk["start_ms"].(float64), bk["end_ms"].(float64), bk["Comm"].(map[string]any)["time_us"].(float64) / 1e3, bk["Comm"].(map[string]any)["busbw_GBps"].(float64)})
		}
		if n := eval[int](b, `document.querySelectorAll('#pg-timeline .pg-bar').length`); n < 3 {
			t.Errorf("%s: %d bars in the timeline", label, n)
		}
	}
	check("default")
	timings = append(timings, b.change("[name=params]", "350M"))
	check("350M")
	timings = append(timings, b.change("[name=bucketCapMb]", "100"))
	check("bucket 100")
	timings = append(timings, b.change("[name=mode]", "fsdp"))
	check("fsdp")
	timings = append(timings, b.change("[name=reshard]", "false"))
	check("fsdp no reshard")
	timings = append(timings, b.change("[name=preset]", "h100-sxm-8x"))
	check("h100")
	for _, c := range []struct{ sel, v string }{{"[name=params]", "lots"}, {"[name=params]", "-3"}, {"[name=forwardMs]", "-5"}, {"[name=layers]", "0"}} {
		b.change(c.sel, c.v)
		if msg := errorAt(b, c.sel); !strings.HasPrefix(msg, "invalid: ") {
			t.Errorf("%s=%s: no error next to the control (%q)", c.sel, c.v, msg)
		}
		b.change(c.sel, map[string]string{"[name=params]": "350M", "[name=forwardMs]": "60", "[name=layers]": "32"}[c.sel])
	}
	check("after bad inputs")
	checkTimings(t, timings)
	b.noConsoleErrors()
	b.axe()
	b.open("playground/step/")
	b.screenshot("step", "light")
	b.screenshot("step", "dark")
	b.noConsoleErrors()
}

// strconvF formats like JavaScript's toFixed (the two differ only on exact
// binary ties, which these values do not hit).
func strconvF(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }

func TestDoctorPage(t *testing.T) {
	b := newBrowser(t)
	b.open("playground/doctor/")
	dir := filepath.Join(repoRoot, "data", "logs")
	all, err := os.ReadDir(dir)
	if err != nil || len(all) == 0 {
		t.Fatalf("no logs in %s: %v", dir, err)
	}
	// Four published logs with confirmed causes (data/logs/*.note): the
	// page must show the same diagnoses, by ID and in order, as
	// `ncclsim doctor --json` for the same log and environment.
	names := []string{"nvidia-nccl-426-ib-error-12-gid.log", "pytorch-torchtitan-853-shm-16mb.log", "nvidia-nccl-tests-287-rtx5090-maxsharedmem.log",
		// the network rules of rules_net.go, which register themselves at start-up
		"pytorch-pytorch-68893-veth-interface.log"}
	for _, n := range names {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Fatalf("fixture %s: %v (have %d entries)", n, err, len(all))
		}
	}
	env := "NCCL_ALGOO=Ring\nNCCL_P2P_DISABLE=1\n"
	envFile := filepath.Join(t.TempDir(), "env.txt")
	if err := os.WriteFile(envFile, []byte(env), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		text, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		b.change("[name=envdump]", env)
		b.change("[name=log]", string(text))
		noError(b, name)
		want := native(t, "doctor", "--log", filepath.Join(dir, name), "--env", envFile, "--json")
		var wantIDs []string
		for _, d := range want["diagnoses"].([]any) {
			wantIDs = append(wantIDs, "diag-"+d.(map[string]any)["id"].(string))
		}
		shown := eval[[]string](b, `Array.from(document.querySelectorAll('#pg-doctor .doctor-report article')).map((a) => a.id)`)
		if strings.Join(shown, " ") != strings.Join(wantIDs, " ") {
			t.Errorf("%s: page shows %v, ncclsim %v", name, shown, wantIDs)
		}
		if n, w := eval[int](b, `document.querySelectorAll('#pg-doctor section[aria-label="Environment findings"] li').length`), len(want["env_findings"].([]any)); n != w {
			t.Errorf("%s: %d environment findings shown, ncclsim %d", name, n, w)
		}
	}
	// The doctor's question takes no preset, so the page does not warm the
	// module up with it (main.js startWarmup): that would send the log
	// again and re-read it in the worker once per preset.
	if warm := eval[string](b, `String(window.__pg && window.__pg.warm)`); warm != "undefined" {
		t.Errorf("the doctor page started a warm-up (%s); its question has no preset", warm)
	}
	// The last log's evidence lines open, on click, to the NCCL source line
	// that printed them (a permalink at the release).
	opened := eval[string](b, `(() => { const s = document.querySelector('#pg-doctor details.explain summary'); if (!s) return ''; s.click(); const a = s.parentElement.querySelector('a'); return s.parentElement.open && a ? a.getAttribute('href') : ''; })()`)
	if !strings.HasPrefix(opened, "https://github.com/NVIDIA/nccl/blob/v2.") {
		t.Errorf("clicking an evidence line's explanation opened %q, want a permalink into NVIDIA/nccl", opened)
	}
	// Links to the site's notes work under the sub-path.
	if bad := eval[[]string](b, `Array.from(document.querySelectorAll('#pg-doctor a')).map((a) => a.getAttribute('href')).filter((h) => h.startsWith('/') && !h.startsWith('`+subPath+`'))`); len(bad) > 0 {
		t.Errorf("links escape the site's sub-path: %v", bad)
	}
	// Log text is shown as text.
	b.change("[name=log]", "host:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\nhost:1:1 [0] NCCL WARN <img src=x onerror=window.__pwned=1>\n")
	if eval[bool](b, `window.__pwned === 1 || document.querySelector('#pg-doctor img') !== null`) {
		t.Error("log text was inserted as HTML")
	}
	eval[bool](b, `(() => { document.querySelector('[name=log]').value = 'x'.repeat(20 * 1024 * 1024); return true; })()`)
	b.touch("[name=log]")
	if msg := errorAt(b, "[name=log]"); !strings.Contains(msg, "limit") {
		t.Errorf("20 MB log: message %q", msg)
	}
	b.change("[name=log]", "host:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n")
	noError(b, "after the huge paste")
	bigLogs(t, b, dir, names[0], env, envFile)
	b.noConsoleErrors()
	b.axe()
	b.screenshot("doctor", "light")
	b.screenshot("doctor", "dark")
	b.noConsoleErrors()
}

// bigLogs checks issue 18's large-text rules on the doctor page: a log file
// over bigtext.js's SHOW_BYTES (64 KiB) is held in memory, not put into the
// textarea, and still diagnosed as ncclsim diagnoses it; a paste over the
// cap is refused by its size in UTF-8 bytes, as the Go side counts it
// (service.MaxLogBytes, 8 MiB), not by its length in UTF-16 code units.
func bigLogs(t *testing.T, b *browser, dir, name, env, envFile string) {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	// The published log repeated to about 1 MiB: the same diagnosis.
	big := strings.Repeat(string(text), 1<<20/len(text)+1)
	file := filepath.Join(t.TempDir(), "rank0.log")
	if err := os.WriteFile(file, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	n := b.renders()
	if err := chromedp.Do(b.ctx, chromedp.SetUploadFiles("[name=logfile]", []string{file})); err != nil {
		t.Fatal(err)
	}
	b.waitRenders(n + 1)
	noError(b, "a 1 MiB log file")
	held := eval[map[string]any](b, `(() => { const a = document.querySelector('[name=log]'); const s = document.querySelector('.pg-loaded [role=status]'); return {value: a.value.length, hidden: a.hidden, status: s ? s.textContent : ''}; })()`)
	if held["value"].(float64) != 0 || held["hidden"] != true {
		t.Errorf("1 MiB log file: textarea holds %v characters, hidden %v; want it empty and hidden", held["value"], held["hidden"])
	}
	if st := held["status"].(string); !strings.Contains(st, "rank0.log") || !strings.Contains(st, "MB loaded") {
		t.Errorf("1 MiB log file: status %q, want the file name and its size", st)
	}
	want := native(t, "doctor", "--log", file, "--env", envFile, "--json")
	var wantIDs []string
	for _, d := range want["diagnoses"].([]any) {
		wantIDs = append(wantIDs, "diag-"+d.(map[string]any)["id"].(string))
	}
	shown := eval[[]string](b, `Array.from(document.querySelectorAll('#pg-doctor .doctor-report article')).map((a) => a.id)`)
	if len(wantIDs) == 0 || strings.Join(shown, " ") != strings.Join(wantIDs, " ") {
		t.Errorf("1 MiB log file: page shows %v, ncclsim %v", shown, wantIDs)
	}
	// Clear brings the box back.
	eval[bool](b, `(() => { document.querySelector('.pg-loaded button').click(); return true; })()`)
	if eval[bool](b, `document.querySelector('[name=log]').hidden`) {
		t.Error("Clear left the textarea hidden")
	}
	// 4.3 million "é" are 8.6 MB of UTF-8 but 4.3 M UTF-16 code units: over
	// the 8 MiB cap only when counted as Go counts. The paste is held, not
	// put into the box, and refused with its byte size.
	msg := eval[string](b, `(async () => {
		const a = document.querySelector('[name=log]');
		const dt = new DataTransfer();
		dt.setData('text/plain', 'é'.repeat(4300000));
		a.dispatchEvent(new ClipboardEvent('paste', {clipboardData: dt, bubbles: true, cancelable: true}));
		const t0 = performance.now();
		let m = '';
		while (!(m = document.getElementById(a.id + '-err').textContent) && performance.now() - t0 < 30000) await new Promise((r) => setTimeout(r, 10));
		return m + (a.value.length ? ' (in the box)' : '');
	})()`)
	// 4,300,000 x 2 bytes = 8,600,000, which is 8,600,000 - 8 x 1,048,576 =
	// 211,392 bytes over the cap (bigtext.js overLimit).
	if !strings.Contains(msg, "8,600,000 bytes (8.6 MB), 211,392 over the limit here of 8 MiB") || strings.Contains(msg, "in the box") {
		t.Errorf("8.6 MB multi-byte paste: message %q, want it refused with its byte size and excess, not put into the box", msg)
	}
	eval[bool](b, `(() => { document.querySelector('.pg-loaded button').click(); return true; })()`)
	insertInOnePiece(t, b, "[name=envdump]", env)
	b.change("[name=envdump]", env)
}

// insertInOnePiece inserts text into the textarea sel as an IME commit or
// a test driver does (Input.insertText, no paste event). Chromium's editor
// would insert it a line at a time, with two input events per line (a
// 20 KB listing of 800 lines: 1,600 events and 1.2 s of main thread in a
// bare textarea); bigtext.js inserts it itself, so the page sees one input
// event and the box holds the text exactly.
func insertInOnePiece(t *testing.T, b *browser, sel, text string) {
	t.Helper()
	text = strings.Repeat(text, 4000/len(text)+1) // several thousand characters, many lines
	eval[bool](b, `(() => { const a = document.querySelector(`+jsString(sel)+`); a.value = ''; a.focus(); window.__inputs = 0; a.addEventListener('input', () => window.__inputs++); return true; })()`)
	if _, err := chromedp.Call(b.ctx, input.InsertText, input.InsertTextParams{Text: text}); err != nil {
		t.Fatal(err)
	}
	got := eval[map[string]any](b, `({inputs: window.__inputs, value: document.querySelector(`+jsString(sel)+`).value})`)
	if got["inputs"].(float64) != 1 || got["value"] != text {
		t.Errorf("Input.insertText of %d characters (%d lines) into %s: %v input events and %d characters in the box, want 1 event and the text", len(text), strings.Count(text, "\n"), sel, got["inputs"], len(got["value"].(string)))
	}
}

// TestWithoutJavaScript loads each page with scripts disabled: the static
// view the generator wrote is what shows.
func TestWithoutJavaScript(t *testing.T) {
	b := newBrowser(t)
	if _, err := chromedp.Call(b.ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"topology", "algorithms", "estimator", "step", "doctor"} {
		if err := chromedp.Do(b.ctx, chromedp.Navigate(server.URL+subPath+"playground/"+p+"/")); err != nil {
			t.Fatal(err)
		}
		got := eval[[3]int](b, `[document.querySelectorAll('#pg-static table, #pg-static svg').length,
			document.getElementById('pg-app') && !document.getElementById('pg-app').hidden ? 1 : 0,
			document.querySelector('#pg-static') ? document.querySelector('#pg-static').textContent.trim().length : 0]`)
		if got[1] != 0 {
			t.Errorf("%s: the app container is visible without JavaScript", p)
		}
		if got[2] == 0 {
			t.Errorf("%s: the static view is empty", p)
		}
		if p != "doctor" && p != "step" && got[0] == 0 {
			t.Errorf("%s: the static view has no table or figure", p)
		}
		if p == "topology" {
			b.screenshot("topology-nojs", "light")
		}
	}
}
