package sitetest

import (
	"crypto/sha256"
	"encoding/base64"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var (
	cspMeta      = regexp.MustCompile(`<meta http-equiv="?Content-Security-Policy"? content="([^"]*)"`)
	inlineScript = regexp.MustCompile(`(?s)<script(\s[^>]*)?>(.*?)</script>`)
)

// TestEveryPageHasCSP reads every HTML page Hugo wrote (minified, as
// deployed): each carries one Content-Security-Policy <meta> before its
// first script, the policy allows scripts only from the site and by hash,
// forbids plugins and <base>, and every inline script's SHA-256 is one of
// the hashes listed, so the browser runs it. The browser tests catch what
// this cannot: a violation at run time is a console error there.
func TestEveryPageHasCSP(t *testing.T) {
	needSite(t)
	pages := 0
	err := filepath.WalkDir(rootSite.Public, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".html") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		pages++
		rel, _ := filepath.Rel(rootSite.Public, path)
		html := string(b)
		m := cspMeta.FindStringSubmatchIndex(html)
		if m == nil {
			t.Errorf("%s: no Content-Security-Policy meta", rel)
			return nil
		}
		if s := strings.Index(html, "<script"); s >= 0 && s < m[0] {
			t.Errorf("%s: a script comes before the Content-Security-Policy meta", rel)
		}
		policy := html[m[2]:m[3]]
		directives := map[string]string{}
		for _, d := range strings.Split(policy, ";") {
			name, value, _ := strings.Cut(strings.TrimSpace(d), " ")
			directives[name] = value
		}
		for name, want := range map[string]string{"object-src": "'none'", "base-uri": "'none'"} {
			if directives[name] != want {
				t.Errorf("%s: %s is %q, want %q", rel, name, directives[name], want)
			}
		}
		script := directives["script-src"]
		for _, src := range strings.Fields(script) {
			if src != "'self'" && src != "'wasm-unsafe-eval'" && !strings.HasPrefix(src, "'sha256-") {
				t.Errorf("%s: script-src allows %s", rel, src)
			}
		}
		for _, s := range inlineScript.FindAllStringSubmatch(html, -1) {
			if strings.Contains(s[1], "src=") || strings.Contains(s[1], "application/") || strings.TrimSpace(s[2]) == "" {
				continue
			}
			sum := sha256.Sum256([]byte(s[2]))
			if h := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"; !strings.Contains(script, h) {
				t.Errorf("%s: inline script %.60q has hash %s, not in script-src %q", rel, s[2], h, script)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if pages < 20 {
		t.Fatalf("only %d HTML pages found under %s", pages, rootSite.Public)
	}
}

// TestInlineQueryCutMatchesMaxQuery: the head's inline script (csp.html)
// cuts a link's query at the same number of characters as linkquery.js's
// MAX_QUERY, which the pages read; were they to differ, a page would read
// a query the document's URL no longer holds, or report a cut that did
// not happen.
func TestInlineQueryCutMatchesMaxQuery(t *testing.T) {
	js, err := os.ReadFile(filepath.Join(repoRoot, "site", "assets", "js", "linkquery.js"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`MAX_QUERY = (\d+) \* 1024;`).FindSubmatch(js)
	if m == nil {
		t.Fatal("linkquery.js: no MAX_QUERY = N * 1024")
	}
	kib, _ := strconv.Atoi(string(m[1]))
	csp, err := os.ReadFile(filepath.Join(repoRoot, "site", "layouts", "_partials", "csp.html"))
	if err != nil {
		t.Fatal(err)
	}
	cut := regexp.MustCompile(`s\.length>(\d+)&&\(window\.__queryCut=s\.length,history\.replaceState\(history\.state,"",location\.pathname\+s\.slice\(0,(\d+)\)`).FindSubmatch(csp)
	if cut == nil {
		t.Fatal("csp.html: the inline script does not cut the query")
	}
	want := strconv.Itoa(kib * 1024)
	if string(cut[1]) != want || string(cut[2]) != want {
		t.Errorf("csp.html cuts a query over %s at %s characters; MAX_QUERY is %s", cut[1], cut[2], want)
	}
}
