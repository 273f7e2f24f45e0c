// Package sitetest builds the real site (generator + Hugo) into temporary
// directories and gives tests what they need to check it: an HTTP server that
// serves it at the root or under a sub-path, a link crawler, and a headless
// Chromium (Debian's /usr/bin/chromium driven by chromedp) with axe-core.
package sitetest

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/distributed-nav/distributed-nav/generator/build"
	"github.com/distributed-nav/distributed-nav/generator/handbook"
)

// RepoRoot walks up from the working directory to the directory holding
// go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find repository root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("find repository root: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Built is a site built into a temporary directory.
type Built struct {
	// Public is the Hugo output directory.
	Public string
	// Site is the Hugo project directory the generator wrote into.
	Site string
	// BaseURL is the base URL it was built for.
	BaseURL string
	// GenTime, HugoTime and PDFTime measure the three stages.
	GenTime, HugoTime, PDFTime time.Duration
}

// Build copies the hand-written part of site/ into work, runs the generator
// on root's content/ and data/ into it, then `go tool hugo build` with
// warnings as errors for baseURL. extra lets a caller add static files
// (path under static/ -> contents) such as built wasm.
func Build(ctx context.Context, root, work, baseURL string) (*Built, error) {
	site := filepath.Join(work, "site")
	if err := copyTree(filepath.Join(root, "site"), site, func(rel string) bool {
		for _, gen := range []string{"content", "data", "resources", "public", filepath.Join("static", "gen"), filepath.Join("assets", "gen")} {
			if rel == gen || strings.HasPrefix(rel, gen+string(filepath.Separator)) {
				return false
			}
		}
		return !strings.HasPrefix(filepath.Base(rel), ".")
	}); err != nil {
		return nil, err
	}
	if err := vendorAssets(root, site); err != nil {
		return nil, err
	}
	if err := buildWasm(ctx, site); err != nil {
		return nil, err
	}
	t0 := time.Now()
	if err := build.Run(ctx, build.Options{Root: root, SiteDir: site}); err != nil {
		return nil, fmt.Errorf("generator: %w", err)
	}
	b := &Built{Public: filepath.Join(work, "public"), Site: site, BaseURL: baseURL, GenTime: time.Since(t0)}
	t1 := time.Now()
	cmd := exec.CommandContext(ctx, "go", "tool", "hugo", "build", "-s", site, "--panicOnWarning",
		"--printPathWarnings", "--minify", "--baseURL", baseURL, "-d", b.Public, "--quiet")
	// `go tool hugo` runs in this module, whatever content root is built.
	if repo, err := RepoRoot(); err == nil {
		cmd.Dir = repo
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("hugo build: %w\n%s", err, out)
	}
	b.HugoTime = time.Since(t1)
	t2 := time.Now()
	if _, err := handbook.Print(ctx, handbook.Options{Public: b.Public, BaseURL: baseURL, Paper: "a4", Out: filepath.Join(b.Public, "handbook.pdf")}); err != nil {
		return nil, fmt.Errorf("handbook PDF: %w", err)
	}
	b.PDFTime = time.Since(t2)
	return b, nil
}

// buildWasm compiles the playground's wasm binaries into static/playground
// with the wasm_exec.js of the same toolchain, by the script `make wasm`
// runs (playground/wasm/build.sh: the one place of the build flags).
func buildWasm(ctx context.Context, site string) error {
	repo, err := RepoRoot()
	if err != nil {
		return err
	}
	script := filepath.Join(repo, "playground", "wasm", "build.sh")
	if _, err := os.Stat(script); err != nil {
		return nil // no adapter in this tree
	}
	cmd := exec.CommandContext(ctx, "sh", script, filepath.Join(site, "static", "playground"))
	cmd.Dir = repo
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build wasm: %w\n%s", err, b)
	}
	return nil
}

// vendorAssets copies the npm-installed browser assets the site serves from
// its own origin, as `make vendor` does.
func vendorAssets(root, site string) error {
	src := filepath.Join(root, "node_modules", "@sqlite.org", "sqlite-wasm", "dist")
	dst := filepath.Join(site, "static", "vendor", "sqlite-wasm")
	for _, f := range []string{"index.mjs", "sqlite3.wasm"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			return fmt.Errorf("vendor %s (run `make npm`): %w", f, err)
		}
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dst, f), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func copyTree(src, dst string, keep func(rel string) bool) error {
	if real, err := filepath.EvalSymlinks(src); err == nil {
		src = real
	}
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if rel != "." && !keep(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}
