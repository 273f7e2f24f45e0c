package sitetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// tocState is what a note page's "On this page" list shows.
type tocState struct {
	Top     int     // top-level entries
	Open    []int   // indexes of the top-level entries whose sub-list shows
	Nested  int     // nested lists
	Shown   int     // nested lists displayed
	Current string  // the text of the entry marked aria-current
	Shift   float64 // the layout shift of the whole page so far
}

const tocProbe = `(() => {
	const nav = document.querySelector('.toc nav');
	if (!nav) return JSON.stringify({Top: -1});
	const top = Array.from(nav.querySelectorAll(':scope > ul > li'));
	const nested = Array.from(nav.querySelectorAll('ul ul'));
	const cur = nav.querySelector('a[aria-current]');
	return JSON.stringify({
		Top: top.length,
		Open: top.map((li, i) => { const u = li.querySelector(':scope > ul'); return u && getComputedStyle(u).display !== 'none' ? i : -1; }).filter((i) => i >= 0),
		Nested: nested.length,
		Shown: nested.filter((u) => getComputedStyle(u).display !== 'none').length,
		Current: cur ? cur.textContent.trim() : '',
		Shift: window.__shift || 0,
	});
})()`

// The contents list of a long note follows the reader (js/site.js): at the
// top of the page only the first section's sub-headings show, and that is
// so from the first paint (the list does not collapse under the reader's
// eyes: no layout shift while the page loads); scrolled to the last
// section, its entry is current and only its sub-list shows. Without
// JavaScript every entry shows.
func TestTocFollowsReader(t *testing.T) {
	needSite(t)
	ctx, srv := servedBrowser(t, nil, 3*time.Minute)
	if err := setViewport(ctx, viewport{"desktop", 1280, 800, false}); err != nil {
		t.Fatal(err)
	}
	// The note with the most sub-headings, so that the list has nested lists.
	page := srv.URL + subPath + "notes/nccl-internals-architecture-deep-dive/"
	// Layout shifts counted from the document's start (buffered entries).
	const shifts = `window.__shift = 0; new PerformanceObserver((l) => { for (const e of l.getEntries()) if (!e.hadRecentInput) window.__shift += e.value; }).observe({type: 'layout-shift', buffered: true}); true`
	probe := func() tocState {
		t.Helper()
		raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](tocProbe))
		if err != nil {
			t.Fatal(err)
		}
		var s tocState
		if err := json.Unmarshal([]byte(raw), &s); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		return s
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(page)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](shifts)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Sleep(500*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	s := probe()
	if s.Top < 3 || s.Nested < 2 {
		t.Fatalf("the note's contents list has %d entries and %d nested lists; the test needs a longer note", s.Top, s.Nested)
	}
	if s.Shown > 1 || len(s.Open) > 1 || (len(s.Open) == 1 && s.Open[0] != 0) {
		t.Errorf("at the top of the page the open entries are %v (%d of %d nested lists shown), want at most the first", s.Open, s.Shown, s.Nested)
	}
	if s.Current == "" {
		t.Error("no entry is marked current at the top of the page")
	}
	// 0.01 is a tenth of a good page's whole CLS budget; the list
	// collapsing after the first paint moved 0.12 of the window.
	if s.Shift > 0.01 {
		t.Errorf("layout shift %.3f while the note loads, want none", s.Shift)
	}
	first := s.Current
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const h = Array.from(document.querySelectorAll('main h2[id]')).pop(); h.scrollIntoView(); return true; })()`)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Sleep(300*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	s = probe()
	if s.Current == first || s.Current == "" {
		t.Errorf("scrolled to the last section, the current entry is %q (it was %q at the top)", s.Current, first)
	}
	if s.Shown > 1 {
		t.Errorf("scrolled to the last section, %d nested lists show, want at most its own", s.Shown)
	}
	// Without scripts: the whole list.
	if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank"), chromedp.Navigate(page), chromedp.Sleep(300*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: false}); err != nil {
		t.Fatal(err)
	}
	s = probe()
	if s.Shown != s.Nested {
		t.Errorf("without JavaScript %d of %d nested lists show, want all", s.Shown, s.Nested)
	}
}
