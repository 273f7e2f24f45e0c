package sitetest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/distributed-nav/distributed-nav/generator/sitetest/headless"
)

// viewport is one screen size the layout must hold at.
type viewport struct {
	name          string
	width, height int64
	mobile        bool
}

// The two sizes of issue 16: a 390x844 phone and a 1280x800 laptop.
var viewports = []viewport{
	{"phone", 390, 844, true},
	{"desktop", 1280, 800, false},
}

// pageKinds lists every kind of page of the built site (PageKinds).
func pageKinds(t *testing.T, b *Built) []PageKind {
	t.Helper()
	kinds, err := PageKinds(b.Public)
	if err != nil {
		t.Fatal(err)
	}
	return kinds
}

// layoutFacts is what the page reports about its own layout.
type layoutFacts struct {
	ScrollWidth, ClientWidth int
	Wide                     []string // the widest elements sticking out, for the failure message
	H1Top, H1Bottom          float64
	InnerHeight              float64
	H1                       string
}

const measureJS = `(() => {
	const d = document.documentElement;
	const cw = d.clientWidth;
	const wide = [];
	if (d.scrollWidth > cw) {
		for (const el of document.body.querySelectorAll('*')) {
			const r = el.getBoundingClientRect();
			if (r.right > cw + 1) {
				wide.push([r.right, el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\s+/).join('.') : '')]);
			}
		}
		wide.sort((a, b) => b[0] - a[0]);
	}
	const h1 = document.querySelector('h1');
	const r = h1 ? h1.getBoundingClientRect() : {top: -1, bottom: -1};
	return JSON.stringify({ScrollWidth: d.scrollWidth, ClientWidth: cw, Wide: wide.slice(0, 6).map((w) => w[1] + ' (right ' + Math.round(w[0]) + ')'),
		H1Top: r.top + window.scrollY, H1Bottom: r.bottom + window.scrollY, InnerHeight: window.innerHeight, H1: h1 ? h1.textContent.trim() : ''});
})()`

// servedBrowser serves the sub-path build and starts Chromium on a blank
// tab, both stopped when the test ends; d bounds the whole test.
func servedBrowser(t *testing.T, extra map[string]http.Handler, d time.Duration) (context.Context, *httptest.Server) {
	t.Helper()
	srv := Serve(subSite.Public, subPath, extra)
	t.Cleanup(srv.Close)
	ctx, cancel, err := headless.New(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cancel)
	ctx, tcancel := context.WithTimeout(ctx, d)
	t.Cleanup(tcancel)
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
	return ctx, srv
}

// setViewport emulates a screen of the viewport's size.
func setViewport(ctx context.Context, v viewport) error {
	_, err := chromedp.Call(ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
		Width: v.width, Height: v.height, DeviceScaleFactor: 1, Mobile: v.mobile})
	return err
}

// screenshotDir is where the layout test saves its screenshots (git-ignored).
func screenshotDir() string { return filepath.Join(repoRoot, "screenshots", "pages") }

// Every kind of page at a phone's and a laptop's size, in the light and the
// dark theme: the document never scrolls sideways, the page's <h1> is on
// the first screen, and axe-core finds no WCAG 2 A/AA violation. A
// screenshot of each is saved in screenshots/pages/KIND-SIZE-THEME.png.
func TestLayoutAtTwoSizes(t *testing.T) {
	needSite(t)
	ctx, srv := servedBrowser(t, AxeHandler(repoRoot), 25*time.Minute)
	errs := consoleErrors(ctx)
	if err := os.MkdirAll(screenshotDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, k := range pageKinds(t, subSite) {
		for _, v := range viewports {
			t.Run(k.Name+"/"+v.name, func(t *testing.T) {
				if err := setViewport(ctx, v); err != nil {
					t.Fatal(err)
				}
				if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+subPath+k.Path)); err != nil {
					t.Fatal(err)
				}
				if k.Widget {
					// The live view replaces the static one at its first result.
					if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`Number(document.documentElement.dataset.pgRenders || 0) >= 1`,
						chromedp.WithPollingTimeout(150*time.Second), chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
						t.Fatalf("the playground did not show a result: %v", err)
					}
				}
				for _, theme := range []string{"light", "dark"} {
					set := fmt.Sprintf(`document.documentElement.dataset.theme = %q; true`, theme)
					if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](set)); err != nil {
						t.Fatal(err)
					}
					raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](measureJS))
					if err != nil {
						t.Fatal(err)
					}
					var f layoutFacts
					if err := json.Unmarshal([]byte(raw), &f); err != nil {
						t.Fatal(err)
					}
					if f.ScrollWidth > f.ClientWidth {
						t.Errorf("%s: the document is %d px wide in a %d px window: %s", theme, f.ScrollWidth, f.ClientWidth, strings.Join(f.Wide, ", "))
					}
					if k.Widget && !v.mobile {
						// Beside the inputs, the results get the width the
						// site's navigation (behind the menu button) leaves.
						const wide = `(() => { const r = document.querySelector('.pg-results'); const nav = document.getElementById('site-nav');
							return JSON.stringify({results: r ? r.getBoundingClientRect().width : 0, nav: getComputedStyle(nav).display, width: document.documentElement.clientWidth}); })()`
						raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](wide))
						if err != nil {
							t.Fatal(err)
						}
						var w struct {
							Results, Width float64
							Nav            string
						}
						if err := json.Unmarshal([]byte(raw), &w); err != nil {
							t.Fatal(err)
						}
						if w.Nav != "none" || w.Results < 0.6*w.Width {
							t.Errorf("%s: the results are %.0f px wide in a %.0f px window (navigation display %q); want 60%% or more with the navigation behind the menu", theme, w.Results, w.Width, w.Nav)
						}
					}
					if k.Widget && v.mobile {
						checkLabelSizes(t, ctx, theme)
					}
					if f.H1 == "" || f.H1Top < 0 || f.H1Bottom > f.InnerHeight {
						t.Errorf("%s: the <h1> %q spans %.0f-%.0f px, not within the first screen (%.0f px)", theme, f.H1, f.H1Top, f.H1Bottom, f.InnerHeight)
					}
					// Colour contrast depends on the theme, the rest on the
					// size: axe runs in both themes on the phone, in the
					// light theme on the laptop.
					if v.mobile || theme == "light" {
						vs, err := RunAxe(ctx, srv.URL)
						if err != nil {
							t.Fatal(err)
						}
						for _, x := range vs {
							t.Errorf("axe (%s theme): %s", theme, x)
						}
					}
					if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.scrollTo(0, 0); true`)); err != nil {
						t.Fatal(err)
					}
					png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
					if err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(filepath.Join(screenshotDir(), k.Name+"-"+v.name+"-"+theme+".png"), png, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			})
		}
	}
	if e := errs(); len(e) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(e, "\n"))
	}
	t.Logf("screenshots in %s", screenshotDir())
}

// minLabelPx is the smallest on-screen size of a chart's labels on a
// phone (issue 16: legible without zooming).
const minLabelPx = 11

// labelSizesJS lists, for every chart and diagram the page displays, its
// drawn texts' on-screen font sizes: the computed size in SVG units times
// the drawing's scale (rendered width over viewBox width). Hidden texts
// (the hover labels of links) are skipped. Diagrams (the topology) report
// their node names only: their secondary lines are smaller by design.
const labelSizesJS = `(() => {
	const out = [];
	for (const svg of document.querySelectorAll('svg.pg-chart, svg.pg-topo')) {
		if (!svg.getClientRects().length) continue;
		const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
		const texts = svg.classList.contains('pg-topo') ? svg.querySelectorAll('text.pg-n1, text.pg-n1r') : svg.querySelectorAll('text');
		for (const t of texts) {
			if (!t.getClientRects().length || !t.textContent.trim()) continue;
			out.push({px: parseFloat(getComputedStyle(t).fontSize) * scale, what: (svg.classList.contains('pg-narrow') ? 'narrow ' : '') + (t.getAttribute('class') || 'text') + ' "' + t.textContent.slice(0, 24) + '"'});
		}
	}
	return out;
})()`

// checkLabelSizes fails when a displayed chart's label is smaller than
// minLabelPx on screen.
func checkLabelSizes(t *testing.T, ctx context.Context, theme string) {
	t.Helper()
	type label struct {
		Px   float64
		What string
	}
	ls, err := chromedp.Run(ctx, chromedp.Evaluate[[]label](labelSizesJS))
	if err != nil {
		t.Fatal(err)
	}
	small, least := 0, 1e9
	for _, l := range ls {
		least = min(least, l.Px)
		if l.Px < minLabelPx-0.05 {
			if small++; small <= 5 {
				t.Errorf("%s: label %s is %.1f px on screen, under %d px", theme, l.What, l.Px, minLabelPx)
			}
		}
	}
	if len(ls) > 0 {
		t.Logf("%s: %d chart labels, the smallest %.1f px on screen", theme, len(ls), least)
	}
}

// A search result for a variable opens /env/#NAME: at both sizes the row is
// highlighted and its meaning is on the screen, not off to the side or
// under the sticky header. On the phone the navigation waits behind the
// menu button, which opens it without JavaScript.
func TestEnvTargetAndMenu(t *testing.T) {
	needSite(t)
	ctx, srv := servedBrowser(t, nil, 5*time.Minute)
	for _, js := range []bool{true, false} {
		for _, v := range viewports {
			t.Run(fmt.Sprintf("%s/js=%t", v.name, js), func(t *testing.T) {
				// A fresh document each time: navigating to the same URL
				// with a fragment would stay in the page (menu state and
				// scripts included).
				if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
					t.Fatal(err)
				}
				if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: !js}); err != nil {
					t.Fatal(err)
				}
				if err := setViewport(ctx, v); err != nil {
					t.Fatal(err)
				}
				if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+subPath+"env/#NCCL_IB_HCA"), chromedp.Sleep(300*time.Millisecond)); err != nil {
					t.Fatal(err)
				}
				const probe = `(() => {
					const row = document.getElementById('NCCL_IB_HCA');
					const m = row && row.querySelector('td[data-label=Meaning]');
					if (!m) return 'no meaning cell';
					const r = m.getBoundingClientRect();
					const head = document.querySelector('#env-table thead th');
					const hr = head.getBoundingClientRect();
					const other = row.nextElementSibling.querySelector('td');
					const hl = getComputedStyle(m).backgroundColor !== getComputedStyle(other).backgroundColor;
					const headCovers = getComputedStyle(head).position === 'sticky' && hr.bottom > r.top && hr.height > 0 && getComputedStyle(head.parentElement.parentElement).position !== 'absolute';
					return JSON.stringify({top: r.top, bottom: r.bottom, left: r.left, right: r.right, w: innerWidth, h: innerHeight, hl, headCovers, text: m.textContent.slice(0, 40)});
				})()`
				raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](probe))
				if err != nil {
					t.Fatal(err)
				}
				var p struct {
					Top, Bottom, Left, Right, W, H float64
					HL, HeadCovers                 bool
					Text                           string
				}
				if err := json.Unmarshal([]byte(raw), &p); err != nil {
					t.Fatalf("%s: %v", raw, err)
				}
				if p.Top < 0 || p.Bottom > p.H || p.Left < 0 || p.Right > p.W {
					t.Errorf("the meaning of NCCL_IB_HCA (%q) is at %.0f,%.0f-%.0f,%.0f, outside the %.0fx%.0f window", p.Text, p.Left, p.Top, p.Right, p.Bottom, p.W, p.H)
				}
				if p.HeadCovers {
					t.Errorf("the sticky header covers the targeted row's meaning")
				}
				if !p.HL {
					t.Errorf("the targeted row is not highlighted")
				}
				if !v.mobile {
					return
				}
				// The menu: the navigation is hidden until the button is used.
				shown := func() bool {
					vis, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`getComputedStyle(document.getElementById('site-nav')).display !== 'none'`))
					if err != nil {
						t.Fatal(err)
					}
					return vis
				}
				if shown() {
					t.Error("the navigation shows before the menu button is pressed")
				}
				if err := chromedp.Do(ctx, chromedp.Click("label.nav-button")); err != nil {
					t.Fatal(err)
				}
				if !shown() {
					t.Error("the menu button did not open the navigation")
				}
			})
		}
	}
	if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: false}); err != nil {
		t.Fatal(err)
	}
}

// TestOffscreenBlocksWait checks the layout saving of main.css ("Layout
// cost of a long page"): on the A-Z index at a laptop's size the first
// list is rendered and the last one, many screens below, is skipped
// until it comes near the window; it is rendered after scrolling to it;
// a fragment link to a letter far down lands with its heading on the
// screen; and the clip margin that paint containment brings is at least
// a focused link's outline width plus its offset (3px and 2px, the
// :focus-visible rule), so that no focus ring is cut.
func TestOffscreenBlocksWait(t *testing.T) {
	needSite(t)
	ctx, srv := servedBrowser(t, nil, 5*time.Minute)
	if err := setViewport(ctx, viewport{"desktop", 1280, 800, false}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+subPath+"az/"), chromedp.Sleep(300*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	const probe = `(() => {
		const lists = document.querySelectorAll('article > ul');
		const first = lists[0], last = lists[lists.length - 1];
		// An element inside a skipped box is what checkVisibility reports
		// on (the box itself is not skipped, its contents are).
		const seen = (el) => el.firstElementChild.checkVisibility({contentVisibilityAuto: true});
		const link = first.querySelector('a');
		link.focus(); // after a key press, so :focus-visible matches
		const o = getComputedStyle(link);
		const out = {lists: lists.length, first: seen(first), lastBefore: seen(last),
			clip: parseFloat(getComputedStyle(first).overflowClipMargin) || 0,
			ring: (parseFloat(o.outlineWidth) || 0) + (parseFloat(o.outlineOffset) || 0), outline: o.outlineStyle};
		last.scrollIntoView();
		return JSON.stringify(out);
	})()`
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Tab)); err != nil {
		t.Fatal(err)
	}
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](probe))
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Lists             int
		First, LastBefore bool
		Clip, Ring        float64
		Outline           string
	}
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	if p.Lists < 10 {
		t.Fatalf("the A-Z index has %d lists; the check needs a page many screens long", p.Lists)
	}
	if !p.First || p.LastBefore {
		t.Errorf("at load the first list is rendered: %t (want true), the last of %d: %t (want false, skipped off screen)", p.First, p.Lists, p.LastBefore)
	}
	if p.Outline == "none" || p.Ring <= 0 {
		t.Errorf("a focused link shows no outline (%s, %.1f px)", p.Outline, p.Ring)
	}
	if p.Clip < p.Ring {
		t.Errorf("the lists' clip margin is %.1f px, less than a focused link's outline and offset (%.1f px): the ring is cut", p.Clip, p.Ring)
	}
	// After the scroll (the next frames render what came into view).
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`(() => { const l = document.querySelectorAll('article > ul'); return l[l.length - 1].firstElementChild.checkVisibility({contentVisibilityAuto: true}); })()`,
		chromedp.WithPollingTimeout(5*time.Second), chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		t.Errorf("the last list is still skipped after scrolling to it: %v", err)
	}
	// A fragment link to the last letter but one: its heading is on screen.
	hs, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => { const h = document.querySelectorAll('article > h2'); return h[h.length - 2].id; })()`))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank"), chromedp.Navigate(srv.URL+subPath+"az/#"+hs), chromedp.Sleep(500*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	top, err := chromedp.Run(ctx, chromedp.Evaluate[float64](fmt.Sprintf(`document.getElementById(%q).getBoundingClientRect().top`, hs)))
	if err != nil {
		t.Fatal(err)
	}
	if top < -1 || top > 800/2 {
		t.Errorf("after opening az/#%s its heading is at %.0f px, not in the upper half of the 800 px window", hs, top)
	}
}
