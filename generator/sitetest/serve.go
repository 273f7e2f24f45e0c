package sitetest

import (
	"net/http"
	"net/http/httptest"
	"strings"
)

// Serve serves dir under prefix ("/" or "/sub/") on 127.0.0.1, as GitHub
// Pages would: index.html for directories, 404 elsewhere. Extra handlers
// (for test-only assets such as axe-core) are mounted at their patterns.
func Serve(dir, prefix string, extra map[string]http.Handler) *httptest.Server {
	mux := http.NewServeMux()
	files := http.FileServer(http.Dir(dir))
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
