package sitetest

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Serve serves dir under prefix ("/" or "/sub/") on 127.0.0.1, as GitHub
// Pages would: index.html for directories, and for a path that names no file
// the site's own 404.html (dir/404.html) with status 404. Extra handlers (for
// test-only assets such as axe-core) are mounted at their patterns.
func Serve(dir, prefix string, extra map[string]http.Handler) *httptest.Server {
	mux := http.NewServeMux()
	files := notFoundPage(dir, http.FileServer(http.Dir(dir)))
	if prefix == "/" {
		mux.Handle("/", files)
	} else {
		mux.Handle(prefix, http.StripPrefix(strings.TrimSuffix(prefix, "/"), files))
	}
	for pattern, h := range extra {
		mux.Handle(pattern, h)
	}
	return httptest.NewServer(mux)
}

// notFoundPage serves dir/404.html, with status 404, for a request whose path
// (already stripped of the prefix) names nothing under dir.
func notFoundPage(dir string, files http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := filepath.Join(dir, filepath.FromSlash(path.Clean("/"+r.URL.Path)))
		if _, err := os.Stat(p); err != nil {
			if page, err := os.ReadFile(filepath.Join(dir, "404.html")); err == nil {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				w.WriteHeader(http.StatusNotFound)
				w.Write(page)
				return
			}
		}
		files.ServeHTTP(w, r)
	})
}
