package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/distributed-nav/distributed-nav/generator/build"
)

// runServe builds the site tree, starts `go tool hugo server` on it and
// rebuilds the tree whenever content/ or data/ change; Hugo's own watcher
// then reloads the browser. Layout and asset edits under site/ are Hugo's.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", stderr)
	root := fs.String("root", ".", "repository root holding content/ and data/")
	bind := fs.String("bind", "127.0.0.1", "interface to serve on")
	port := fs.Int("port", 1313, "port to serve on")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	opts := build.Options{Root: *root, SiteDir: filepath.Join(*root, "site")}
	start := time.Now()
	if err := build.Run(ctx, opts); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "distnav: site tree built in %v; starting hugo server\n", time.Since(start).Round(time.Millisecond))
	hugo := exec.CommandContext(ctx, "go", "tool", "hugo", "server", "-s", opts.SiteDir,
		"--bind", *bind, "--port", fmt.Sprint(*port), "--baseURL", fmt.Sprintf("http://%s:%d/", *bind, *port),
		"--disableFastRender", "--renderToMemory")
	hugo.Dir = *root
	hugo.Stdout, hugo.Stderr = stdout, stderr
	if err := hugo.Start(); err != nil {
		return fmt.Errorf("start hugo server: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- hugo.Wait() }()
	watched := []string{filepath.Join(*root, "content"), filepath.Join(*root, "data")}
	last := newestMtime(watched)
	tick := time.NewTicker(400 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if ctx.Err() != nil {
				return nil
			}
			return hugoStopped(err)
		case <-tick.C:
			m := newestMtime(watched)
			if !m.After(last) {
				continue
			}
			last = m
			t0 := time.Now()
			if err := build.Run(ctx, opts); err != nil {
				// Keep serving the previous tree; show what is wrong.
				fmt.Fprintf(stderr, "distnav: rebuild failed, still serving the previous tree:\n%v\n", err)
				continue
			}
			fmt.Fprintf(stdout, "distnav: rebuilt site tree in %v\n", time.Since(t0).Round(time.Millisecond))
		}
	}
}

// hugoStopped is what serve returns when the hugo server ends on its own: a
// clean exit (hugo stops with status 0 on SIGINT or SIGTERM) ends serve
// cleanly too; anything else is an error.
func hugoStopped(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("hugo server stopped: %w", err)
}

// newestMtime returns the latest modification time of any file or directory
// under roots (directory times catch deletions).
func newestMtime(roots []string) time.Time {
	var newest time.Time
	for _, r := range roots {
		_ = filepath.WalkDir(r, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if info, err := d.Info(); err == nil && info.ModTime().After(newest) {
				newest = info.ModTime()
			}
			return nil
		})
	}
	if newest.IsZero() {
		if info, err := os.Stat("."); err == nil {
			newest = info.ModTime()
		}
	}
	return newest
}
