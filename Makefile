# distributed-nav: every target sets up what it needs (npm packages, Debian
# packages for the browser tests, Hugo via `go tool`).
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

GO      ?= go
# go-sqlite3 needs the sqlite_fts5 tag for the search database.
export GOFLAGS := -tags=sqlite_fts5 -buildvcs=false
HUGO    := $(GO) tool hugo
BASEURL ?= http://127.0.0.1:1313/
PAPER   ?= a4
PUBLIC  := public
SQLITE_WASM := node_modules/@sqlite.org/sqlite-wasm/dist

.PHONY: help serve site test bench pdf clean gen npm lighthouse-npm sysdeps vendor wasm calibrate

help: ## list the targets
	@grep -E '^[a-z]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-8s %s\n", $$1, $$2}'

serve: gen wasm ## build everything and serve http://127.0.0.1:1313/ with live reload
	$(GO) run ./generator/cmd/distnav serve

site: gen wasm sysdeps ## build public/ for GitHub Pages, handbook.pdf included (BASEURL=https://host/sub/)
	rm -rf $(PUBLIC)
	$(HUGO) build -s site --minify --gc --panicOnWarning --printPathWarnings --baseURL "$(BASEURL)" -d ../$(PUBLIC)
	$(GO) run ./generator/cmd/distnav pdf --public $(PUBLIC) --base "$(BASEURL)" --paper $(PAPER)
	@echo "public/ built for $(BASEURL)"

test: npm sysdeps ## vet, every Go test (browser tests included), generator check, Hugo build, link crawl
	@unformatted=$$(gofmt -l generator playground data); if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) run ./generator/cmd/distnav check
	$(GO) test -count=1 -timeout 30m ./...
	$(GO) run ./generator/cmd/distnav build # the search's constants and SQL for the node tests
	node --test site/assets/js/search/
	GOOS=js GOARCH=wasm $(GO) test -count=1 -exec="$$($(GO) env GOROOT)/lib/wasm/go_js_wasm_exec" ./playground/wasm/...
	$(MAKE) --no-print-directory site BASEURL=https://example.github.io/distributed-nav/

bench: gen wasm lighthouse-npm sysdeps ## run the benchmarks, then Lighthouse on four pages of the built site
	$(GO) test -run '^$$' -bench . -benchmem ./...
	rm -rf $(LH_PUBLIC)
	$(HUGO) build -s site --minify --gc --baseURL "http://127.0.0.1:$(LH_PORT)/" -d ../$(LH_PUBLIC) --quiet
	node bench/lighthouse/run.mjs $(LH_PUBLIC) $(LH_PORT) --json $(LH_PUBLIC)/../lighthouse.json

pdf: site ## write public/handbook.pdf (PAPER=a4|letter)

calibrate: ## refit data/calibration.yaml on data/measurements/ and regenerate the files compiled from it
	$(GO) run ./playground/cmd/ncclsim calibrate
	$(GO) generate ./playground/estimate
	$(GO) generate ./playground/service
	sh playground/service/testdata/regen.sh

clean: ## remove everything generated
	rm -rf $(PUBLIC) .bench site/content site/data site/static/gen site/assets/gen site/static/vendor site/static/playground site/static/search.db site/resources site/.hugo_build.lock

gen: npm vendor ## run the generator: content/ + data/ -> site/
	$(GO) run ./generator/cmd/distnav build

# The playground: one wasm binary per page (topology, algorithms, estimator,
# step, doctor), and the wasm_exec.js of the same Go toolchain (playground/wasm/build.sh
# holds the build flags, for this target and for the Go site tests).
wasm:
	GO=$(GO) playground/wasm/build.sh site/static/playground

vendor: npm
	mkdir -p site/static/vendor/sqlite-wasm
	cp $(SQLITE_WASM)/index.mjs $(SQLITE_WASM)/sqlite3.wasm site/static/vendor/sqlite-wasm/

npm: node_modules/.package-lock.json

# Lighthouse (pinned in bench/lighthouse/package-lock.json) is needed only by
# make bench, so it has its own package tree.
LH_PORT   ?= 8377
LH_PUBLIC := .bench/public
lighthouse-npm: bench/lighthouse/node_modules/.package-lock.json

bench/lighthouse/node_modules/.package-lock.json: bench/lighthouse/package.json bench/lighthouse/package-lock.json
	npm ci --prefix bench/lighthouse --no-audit --no-fund

node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund

# Debian packages the browser and PDF tests need: installed with apt-get when
# missing and running as root, otherwise named in a clear error.
sysdeps:
	@missing=""; \
	command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || missing="$$missing chromium"; \
	command -v pdftotext >/dev/null 2>&1 || missing="$$missing poppler-utils"; \
	[ -x /usr/bin/time ] || missing="$$missing time"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing Debian packages:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	  else \
	    echo "missing Debian packages:$$missing (install them with: sudo apt-get install$$missing)"; exit 1; \
	  fi; \
	fi
