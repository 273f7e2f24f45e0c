package doctor

import (
	"bytes"
	"strings"
	"testing"
	"text/tabwriter"
)

// tabwriterOutput is what text/tabwriter writes for the same input and
// settings, the reference columns must match.
func tabwriterOutput(in string, pad int) string {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 4, pad, ' ', 0)
	tw.Write([]byte(in))
	tw.Flush()
	return b.String()
}

func TestColumnsMatchTabwriter(t *testing.T) {
	cases := []string{
		"",
		"no tabs at all\n",
		"  RANK\tOF\tHOST\n  0\t8\tnode-a\n  10\t8\tn\n",
		"a\tb\tc\nlonger\tx\n\nafter blank\tz\tq\n",
		"é\tü\t日本\nxx\tyyy\tz\n",
		"trailing tab\t\nnext\t\t\n",
		"one\ttwo\nno newline at the end\tlast",
		"\t\t\n\t\n",
		"a\tb\tc\td\ne\tf\ng\th\ti\tj\n",
	}
	for _, in := range cases {
		for _, pad := range []int{1, 2} {
			var b bytes.Buffer
			c := newColumns(&b, pad)
			c.Write([]byte(in))
			if err := c.Flush(); err != nil {
				t.Fatal(err)
			}
			if want := tabwriterOutput(in, pad); b.String() != want {
				t.Errorf("pad %d, input %q:\n got %q\nwant %q", pad, in, b.String(), want)
			}
		}
	}
}

// FuzzColumns compares columns with text/tabwriter on fuzzed text without
// the characters tabwriter treats specially (escapes, form feeds, vertical
// tabs, HTML with FilterHTML off is plain text).
func FuzzColumns(f *testing.F) {
	f.Add("a\tb\nccc\td\te\n", uint8(2))
	f.Add("x\t\ty\n\tz", uint8(1))
	f.Fuzz(func(t *testing.T, in string, pad uint8) {
		if strings.ContainsAny(in, "\f\v\r") || strings.IndexByte(in, tabwriter.Escape) >= 0 {
			return
		}
		p := int(pad % 4)
		var b bytes.Buffer
		c := newColumns(&b, p)
		c.Write([]byte(in))
		c.Flush()
		if want := tabwriterOutput(in, p); b.String() != want {
			t.Fatalf("pad %d, input %q:\n got %q\nwant %q", p, in, b.String(), want)
		}
	})
}
