package flowsvg

import (
	"encoding/xml"
	"io"
	"strings"
	"testing"
)

func TestDrawIsWellFormedSVG(t *testing.T) {
	out := Draw("f1", "DDP <backward>", []Step{
		{Text: "autograd_hook", Href: "../notes/x/#a", Hint: "Reducer"},
		{Text: "mark_variable_ready"},
		{Text: "algorithm selection (Ring/Tree/CollNet)", Depth: 1, Href: "../y/"},
	})
	dec := xml.NewDecoder(strings.NewReader(out))
	links, boxes := 0, 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed: %v\n%s", err, out)
		}
		if se, ok := tok.(xml.StartElement); ok {
			switch se.Name.Local {
			case "a":
				links++
			case "rect":
				boxes++
			}
		}
	}
	if links != 2 || boxes != 3 {
		t.Errorf("%d links, %d boxes; want 2 and 3", links, boxes)
	}
	if !strings.Contains(out, "DDP &lt;backward&gt;") {
		t.Error("title must be escaped")
	}
	// The indented step's box starts one indent (48) right of the margin (8).
	if !strings.Contains(out, `<rect class="flow-box" x="56"`) {
		t.Error("continuation step is not indented")
	}
}

func TestRelativeURL(t *testing.T) {
	tests := []struct{ from, to, want string }{
		{"/card/flows/ddp/", "/notes/x/#a", "../../../notes/x/#a"},
		{"/", "/env/", "env/"},
		{"/env/", "https://example.com/", "https://example.com/"},
		{"/a/", "#frag", "#frag"},
	}
	for _, tt := range tests {
		if got := RelativeURL(tt.from, tt.to); got != tt.want {
			t.Errorf("RelativeURL(%q, %q) = %q, want %q", tt.from, tt.to, got, tt.want)
		}
	}
}
