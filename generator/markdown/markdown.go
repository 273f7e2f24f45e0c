// Package markdown is the one goldmark configuration of the generator: the Markdown
// dialect the cards, notes and pages are written in, which is the one Hugo renders them
// with (site/hugo.toml, markup.goldmark): GitHub Flavored Markdown, attributes on
// headings ({#id key="value"}) and GitHub-style automatic heading ids. Every package that
// parses Markdown (skill, notes, build's search records) or rewrites it (crosslink) builds
// its goldmark from New, so they all see the same document Hugo will.
package markdown

import (
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
)

// New returns a goldmark with the site's configuration and the given extensions added.
func New(exts ...goldmark.Extender) goldmark.Markdown {
	return goldmark.New(
		goldmark.WithExtensions(append([]goldmark.Extender{extension.GFM}, exts...)...),
		goldmark.WithParserOptions(parser.WithAttribute(), parser.WithAutoHeadingID()),
	)
}
