package sitetext

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func realFile(t *testing.T) []byte {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", Path))
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// The committed file loads, and Fill puts values where the placeholders are.
func TestRealTexts(t *testing.T) {
	txt, err := Parse(Path, realFile(t))
	if err != nil {
		t.Fatal(err)
	}
	if got := txt.Card.SubsystemsIndex.Fill("count", "12"); !strings.Contains(got, "12") || strings.Contains(got, "{") {
		t.Errorf("Fill: %q", got)
	}
	if _, ok := txt.Widget("estimator"); !ok {
		t.Errorf("no estimator widget")
	}
}

// Each broken edit of the real file fails with the file, the line of the fault and what is
// wrong.
func TestParseErrors(t *testing.T) {
	src := string(realFile(t))
	lineOf := func(s string) int {
		i := strings.Index(src, s)
		if i < 0 {
			t.Fatalf("%q not in %s", s, Path)
		}
		return strings.Count(src[:i], "\n") + 1
	}
	for _, c := range []struct {
		name, old, new string
		line           int
		want           string
	}{
		{"unknown field", "start_here: Start here", "start_here: Start here\nstart_there: x", lineOf("start_here:") + 1, "field start_there not found"},
		{"placeholder the text may not use", "flows_item: \"{count} chains\"", "flows_item: \"{total} chains\"", lineOf("flows_item:"), "{total} is not a placeholder"},
		{"empty text", "  flow_intro: \"The chain as the card writes it:\"", "  flow_intro: \"\"", lineOf("flow_intro:"), "card.flow_intro is missing"},
		{"missing text", "  flow_intro: \"The chain as the card writes it:\"\n", "", lineOf("  overview:"), "card.flow_intro is missing"},
		{"widget without a title", "      title: Log doctor\n", "", lineOf("- slug: doctor"), "title is missing"},
		{"not YAML", "start_here: Start here", "start_here: [unclosed", lineOf("start_here:"), Path + ":"},
	} {
		t.Run(c.name, func(t *testing.T) {
			broken := strings.Replace(src, c.old, c.new, 1)
			if broken == src {
				t.Fatalf("edit %q did not apply", c.old)
			}
			_, err := Parse(Path, []byte(broken))
			if err == nil {
				t.Fatal("no error")
			}
			prefix := Path + ":" + strconv.Itoa(c.line) + ":"
			if !strings.HasPrefix(err.Error(), prefix) && c.name != "not YAML" {
				t.Errorf("error %q, want it to start with %q", err, prefix)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q, want %q", err, c.want)
			}
		})
	}
}
