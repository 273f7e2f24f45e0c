package envtable

import (
	"html"
	"strings"
)

// DefaultHTML is the Default cell: the effective default (code spans as
// <code>) with links to the lines that set it, or the table's default when
// that already is the value used.
func DefaultHTML(r Row) string {
	if r.EffectiveDefault == "" {
		return html.EscapeString(r.Default)
	}
	var b strings.Builder
	b.WriteString(inlineCode(r.EffectiveDefault))
	b.WriteString(`<span class="env-set-at"> (set at `)
	for i, sp := range r.DefaultSetAt {
		if i > 0 {
			b.WriteString(", ")
		}
		label := html.EscapeString(sp.String())
		if i < len(r.DefaultURLs) && r.DefaultURLs[i] != "" {
			b.WriteString(`<a href="` + html.EscapeString(r.DefaultURLs[i]) + `">` + label + `</a>`)
		} else {
			b.WriteString(label)
		}
	}
	b.WriteString(")</span>")
	return b.String()
}

// RawDefaultHTML is what the Source cell adds for a row whose default is a
// sentinel: the raw value the source declares, which is what NCCL's own
// logs and parameter dumps print.
func RawDefaultHTML(r Row) string {
	if r.EffectiveDefault == "" {
		return ""
	}
	return `<br><span class="env-raw">declared default: ` + html.EscapeString(r.Default) + `</span>`
}

// inlineCode escapes s and turns Markdown code spans into <code> elements.
func inlineCode(s string) string {
	parts := strings.Split(s, "`")
	var b strings.Builder
	for i, p := range parts {
		switch {
		case i%2 == 1 && i < len(parts)-1:
			b.WriteString("<code>" + html.EscapeString(p) + "</code>")
		case i%2 == 1:
			b.WriteString("`" + html.EscapeString(p)) // unmatched backtick
		default:
			b.WriteString(html.EscapeString(p))
		}
	}
	return b.String()
}
