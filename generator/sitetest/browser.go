package sitetest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"

	"github.com/chromedp/chromedp"
)

// AxeHandler serves node_modules/axe-core/axe.min.js at /__test/axe.min.js so
// that pages load it from our own origin.
func AxeHandler(root string) map[string]http.Handler {
	path := filepath.Join(root, "node_modules", "axe-core", "axe.min.js")
	return map[string]http.Handler{
		"/__test/axe.min.js": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/javascript")
			http.ServeFile(w, r, path)
		}),
	}
}

// Violation is one axe-core finding.
type Violation struct {
	ID     string   `json:"id"`
	Impact string   `json:"impact"`
	Help   string   `json:"help"`
	Nodes  []string `json:"nodes"`
}

// String formats the violation for a test failure.
func (v Violation) String() string {
	return fmt.Sprintf("%s (%s): %s at %s", v.ID, v.Impact, v.Help, strings.Join(v.Nodes, "; "))
}

// RunAxe injects axe-core from origin and runs the WCAG 2 A and AA rules on
// the current page.
func RunAxe(ctx context.Context, origin string) ([]Violation, error) {
	load := fmt.Sprintf(`new Promise((ok, fail) => {
		if (window.axe) return ok(true);
		const s = document.createElement("script");
		s.src = %q; s.onload = () => ok(true); s.onerror = () => fail(new Error("axe-core did not load"));
		document.head.appendChild(s);
	})`, origin+"/__test/axe.min.js")
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](load, chromedp.EvalAwaitPromise)); err != nil {
		return nil, fmt.Errorf("inject axe-core: %w", err)
	}
	const run = `axe.run(document, {runOnly: {type: "tag", values: ["wcag2a", "wcag2aa"]}}).then(r =>
		JSON.stringify(r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
			nodes: v.nodes.slice(0, 5).map(n => n.target.join(" "))}))))`
	out, err := chromedp.Run(ctx, chromedp.Evaluate[string](run, chromedp.EvalAwaitPromise))
	if err != nil {
		return nil, fmt.Errorf("run axe-core: %w", err)
	}
	var vs []Violation
	if err := json.Unmarshal([]byte(out), &vs); err != nil {
		return nil, fmt.Errorf("decode axe-core result: %w", err)
	}
	return vs, nil
}
