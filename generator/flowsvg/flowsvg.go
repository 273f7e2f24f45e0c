// Package flowsvg draws a data-flow chain as an SVG diagram: one box per
// step, top to bottom, arrows between them, continuation steps indented, and
// each box a link to the section that explains that step. Colours come from
// the page's CSS (currentColor and classes), so the diagram follows the light
// and dark themes and prints in black on white.
package flowsvg

import (
	"fmt"
	"html"
	"strings"
	"unicode/utf8"
)

// Step is one box of the diagram.
type Step struct {
	Text string
	// Depth 1 indents the box (a continuation line of the chain).
	Depth int
	// Href, if set, makes the box a link.
	Href string
	// Hint is the link's tooltip (the section it leads to).
	Hint string
}

// Layout constants, in SVG user units (pixels at 100%).
const (
	boxH     = 34
	gap      = 22
	indent   = 48
	charW    = 7.4 // average advance of the 13px monospace font
	padX     = 14
	minBoxW  = 120
	marginX  = 8
	marginY  = 8
	fontSize = 13
)

// Draw renders the chain. id must be unique on the page; title names the
// diagram for assistive technology.
func Draw(id, title string, steps []Step) string {
	width := 0.0
	for _, s := range steps {
		w := boxWidth(s.Text) + float64(s.Depth*indent)
		if w > width {
			width = w
		}
	}
	width += 2 * marginX
	height := float64(marginY*2 + len(steps)*boxH + (len(steps)-1)*gap)
	var b strings.Builder
	fmt.Fprintf(&b, `<figure class="flow"><svg class="flow-svg" id="%s" viewBox="0 0 %.0f %.0f" width="%.0f" height="%.0f" aria-labelledby="%s-title" xmlns="http://www.w3.org/2000/svg">`,
		id, width, height, width, height, id)
	fmt.Fprintf(&b, `<title id="%s-title">%s</title>`, id, html.EscapeString(title))
	b.WriteString(`<defs><marker id="` + id + `-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="flow-arrowhead"/></marker></defs>`)
	for i, s := range steps {
		x := float64(marginX + s.Depth*indent)
		y := float64(marginY + i*(boxH+gap))
		w := boxWidth(s.Text)
		if i > 0 {
			prev := steps[i-1]
			px := float64(marginX+prev.Depth*indent) + 18
			x2 := x + 18
			y1 := y - float64(gap)
			fmt.Fprintf(&b, `<path class="flow-edge" d="M%.0f,%.0f C%.0f,%.0f %.0f,%.0f %.0f,%.0f" marker-end="url(#%s-arrow)"/>`,
				px, y1, px, y1+float64(gap)/2, x2, y-float64(gap)/2, x2, y-2, id)
		}
		label := html.EscapeString(s.Text)
		box := fmt.Sprintf(`<rect class="flow-box" x="%.0f" y="%.0f" width="%.0f" height="%d" rx="6"/><text class="flow-text" x="%.0f" y="%.0f" font-size="%d">%s</text>`,
			x, y, w, boxH, x+padX, y+float64(boxH)/2+4.5, fontSize, label)
		if s.Href != "" {
			hint := ""
			if s.Hint != "" {
				hint = fmt.Sprintf(`<title>%s</title>`, html.EscapeString(s.Hint))
			}
			fmt.Fprintf(&b, `<a class="flow-link" href="%s">%s%s</a>`, html.EscapeString(s.Href), hint, box)
		} else {
			b.WriteString(`<g class="flow-plain">` + box + `</g>`)
		}
	}
	b.WriteString(`</svg>`)
	fmt.Fprintf(&b, `<figcaption>%s: %d steps; each linked box opens the section that explains it.</figcaption></figure>`, html.EscapeString(title), len(steps))
	return b.String()
}

func boxWidth(text string) float64 {
	w := float64(utf8.RuneCountInString(text))*charW + 2*padX
	if w < minBoxW {
		return minBoxW
	}
	return w
}

// RelativeURL returns the path from the page at from to the target URL, both
// site-relative ("/a/b/"), so that links inside raw HTML work at a domain
// root and under any sub-path alike. External URLs and fragments are
// returned unchanged.
func RelativeURL(from, to string) string {
	if !strings.HasPrefix(to, "/") {
		return to
	}
	depth := strings.Count(strings.Trim(from, "/"), "/")
	if strings.Trim(from, "/") != "" {
		depth++
	}
	return strings.Repeat("../", depth) + strings.TrimPrefix(to, "/")
}
