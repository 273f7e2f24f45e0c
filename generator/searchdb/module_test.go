package searchdb

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// TestBrowserModule: every line of the module is `export const NAME = JSON;`, and decoding
// the values gives back the Go constants (the JSON round trip of browserConstants, so a
// writer bug such as a lost escape shows up as a difference).
func TestBrowserModule(t *testing.T) {
	mod, err := BrowserModule()
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`^export const ([A-Z_]+) = (.*);$`)
	got := map[string]any{}
	for _, l := range strings.Split(strings.TrimSuffix(string(mod), "\n"), "\n") {
		if strings.HasPrefix(l, "//") {
			continue
		}
		m := line.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("line %q is not `export const NAME = JSON;`", l)
		}
		var v any
		if err := json.Unmarshal([]byte(m[2]), &v); err != nil {
			t.Fatalf("%s: %v", m[1], err)
		}
		got[m[1]] = v
	}
	want := map[string]any{}
	raw, _ := json.Marshal(browserConstants())
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("module values = %v\nwant %v", got, want)
	}
	if got["SEARCH_SQL"] != SearchSQL {
		t.Errorf("SEARCH_SQL differs from sql.go")
	}
	if sw, _ := got["STOP_WORDS"].([]any); len(sw) != len(stopWords) {
		t.Errorf("STOP_WORDS has %d words, want %d", len(sw), len(stopWords))
	}
}

// TestQueryJSRestatesNothing: query.js imports every constant of the module and holds no
// SQL or stop-word list of its own.
func TestQueryJSRestatesNothing(t *testing.T) {
	js, err := os.ReadFile(filepath.Join("..", "..", "site", "assets", "js", "search", "query.js"))
	if err != nil {
		t.Fatal(err)
	}
	src := string(js)
	if !strings.Contains(src, "from '../../"+ModulePath+"'") {
		t.Errorf("query.js does not import ../../%s", ModulePath)
	}
	for name := range browserConstants() {
		if regexp.MustCompile(`(?m)^\s*(export\s+)?const\s+` + name + `\b`).MatchString(src) {
			t.Errorf("query.js defines %s itself", name)
		}
		if !strings.Contains(src, name) {
			t.Errorf("query.js neither imports nor re-exports %s", name)
		}
	}
	for _, sql := range []string{"SELECT", "search_vocab", "bm25("} {
		if strings.Contains(src, sql) {
			t.Errorf("query.js holds SQL (%q)", sql)
		}
	}
	if strings.Contains(src, "'therefore'") || strings.Contains(src, "'which', 'who'") {
		t.Errorf("query.js holds a stop-word list")
	}
}
