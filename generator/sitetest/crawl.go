package sitetest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"golang.org/x/net/html"
)

// Broken is one internal link or asset that does not resolve.
type Broken struct {
	// Page is the page holding the link, Ref the link as written.
	Page, Ref string
	Reason    string
}

// String formats the finding for a test failure.
func (b Broken) String() string { return fmt.Sprintf("%s: %s: %s", b.Page, b.Ref, b.Reason) }

// CrawlResult summarises a crawl.
type CrawlResult struct {
	Pages  int
	Links  int
	Broken []Broken
}

// Crawl fetches start and every page reachable from it on the same origin
// and under scope (a path prefix), checking every href and src: each must
// answer 200 and each #fragment must name an id on the target page. Links
// that leave scope on the same origin are broken too: under a sub-path they
// would escape the site.
func Crawl(client *http.Client, start, scope string) (*CrawlResult, error) {
	base, err := url.Parse(start)
	if err != nil {
		return nil, err
	}
	type page struct {
		status int
		ids    map[string]bool
		html   bool
	}
	cache := map[string]*page{}
	fetch := func(u string) *page {
		if p, ok := cache[u]; ok {
			return p
		}
		p := &page{ids: map[string]bool{}}
		cache[u] = p
		resp, err := client.Get(u)
		if err != nil {
			p.status = -1
			return p
		}
		defer resp.Body.Close()
		p.status = resp.StatusCode
		body, _ := io.ReadAll(resp.Body)
		p.html = strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html")
		if p.html {
			collectIDs(body, p.ids)
		}
		return p
	}
	res := &CrawlResult{}
	queue := []string{base.String()}
	seen := map[string]bool{base.String(): true}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		resp, err := client.Get(cur)
		if err != nil {
			return nil, fmt.Errorf("get %s: %w", cur, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			continue
		}
		res.Pages++
		curURL, _ := url.Parse(cur)
		for _, ref := range collectRefs(body) {
			if ref == "" || strings.HasPrefix(ref, "mailto:") || strings.HasPrefix(ref, "data:") || strings.HasPrefix(ref, "javascript:") {
				continue
			}
			target, err := curURL.Parse(ref)
			if err != nil {
				res.Broken = append(res.Broken, Broken{cur, ref, "unparseable URL"})
				continue
			}
			if target.Host != base.Host {
				continue // external
			}
			res.Links++
			if !strings.HasPrefix(target.Path, scope) {
				res.Broken = append(res.Broken, Broken{cur, ref, "escapes the site's path " + scope})
				continue
			}
			frag := target.Fragment
			target.Fragment = ""
			target.RawQuery = ""
			tu := target.String()
			p := fetch(tu)
			if p.status != http.StatusOK {
				res.Broken = append(res.Broken, Broken{cur, ref, fmt.Sprintf("status %d", p.status)})
				continue
			}
			if frag != "" && p.html && !p.ids[frag] {
				if uf, err := url.PathUnescape(frag); err != nil || !p.ids[uf] {
					res.Broken = append(res.Broken, Broken{cur, ref, "no element with id " + frag})
					continue
				}
			}
			if p.html && !seen[tu] {
				seen[tu] = true
				queue = append(queue, tu)
			}
		}
	}
	sort.Slice(res.Broken, func(i, j int) bool { return res.Broken[i].String() < res.Broken[j].String() })
	return res, nil
}

func collectIDs(body []byte, ids map[string]bool) {
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		for {
			k, v, more := z.TagAttr()
			if string(k) == "id" || string(k) == "name" {
				ids[string(v)] = true
			}
			if !more {
				break
			}
		}
	}
}

func collectRefs(body []byte) []string {
	var refs []string
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return refs
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		name, hasAttr := z.TagName()
		for hasAttr {
			k, v, more := z.TagAttr()
			key := string(k)
			if key == "href" || key == "src" || (key == "action" && string(name) == "form") {
				refs = append(refs, string(v))
			}
			hasAttr = more
		}
	}
}
