// Command distnav builds and checks the distributed-nav documentation site
// and queries its search database.
//
//	distnav build [--root DIR] [--site DIR]   content/ + data/ -> site/ tree and search.db
//	distnav check [--root DIR]                validate sources: links, permalinks, env vars, notes
//	distnav serve [--port N]                  build and serve with live reload
//	distnav pdf [--paper a4|letter]           print public/handbook.html to public/handbook.pdf
//	distnav search [--kind K] [--limit N] [--json] QUERY
//	distnav env NAME
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"github.com/distributed-nav/distributed-nav/generator/build"
	"github.com/distributed-nav/distributed-nav/generator/handbook"
)

type command struct {
	name, usage string
	run         func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"build", "build [--root DIR] [--site DIR]: write the Hugo tree and search.db", runBuild},
		{"check", "check [--root DIR]: validate the sources without writing anything", runCheck},
		{"pdf", "pdf [--public DIR] [--base URL] [--paper a4|letter] [--out FILE]: print the handbook to PDF with Chromium", runPDF},
		{"serve", "serve [--root DIR] [--bind ADDR] [--port N]: build, serve with live reload, rebuild on changes", runServe},
	}
}

// usageError marks errors caused by how the command was called (exit 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, args[1:], stdout, stderr)
		if err == nil {
			return 0
		}
		fmt.Fprintln(stderr, err)
		if _, ok := err.(usageError); ok {
			return 2
		}
		return 1
	}
	fmt.Fprintf(stderr, "distnav: unknown command %q\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: distnav COMMAND [flags]")
	for _, c := range commands() {
		fmt.Fprintf(w, "  distnav %s\n", c.usage)
	}
}

func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("distnav "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	return nil
}

func runBuild(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("build", stderr)
	root := fs.String("root", ".", "repository root holding content/ and data/")
	site := fs.String("site", "", "Hugo project directory to write into (default ROOT/site)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *site == "" {
		*site = filepath.Join(*root, "site")
	}
	start := time.Now()
	if err := build.Run(ctx, build.Options{Root: *root, SiteDir: *site}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "distnav: site tree written to %s in %v\n", *site, time.Since(start).Round(time.Millisecond))
	return nil
}

func runCheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("check", stderr)
	root := fs.String("root", ".", "repository root holding content/ and data/")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	b, err := build.Load(build.Options{Root: *root})
	if err != nil {
		return err
	}
	if ps := b.Check(); len(ps) > 0 {
		return fmt.Errorf("%w\ndistnav check: %d problems", ps, len(ps))
	}
	fmt.Fprintln(stdout, "distnav check: no problems")
	return nil
}

func runPDF(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("pdf", stderr)
	public := fs.String("public", "public", "built site directory holding handbook.html")
	base := fs.String("base", "http://127.0.0.1:1313/", "base URL the site was built for")
	paper := fs.String("paper", "a4", "paper size: a4 or letter")
	out := fs.String("out", "", "PDF to write (default PUBLIC/handbook.pdf)")
	chromium := fs.String("chromium", "/usr/bin/chromium", "Chromium binary")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *out == "" {
		*out = filepath.Join(*public, "handbook.pdf")
	}
	start := time.Now()
	n, err := handbook.Print(ctx, handbook.Options{Public: *public, BaseURL: *base, Paper: *paper, Chromium: *chromium, Out: *out})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "distnav: %s written (%d bytes, %s) in %v\n", *out, n, *paper, time.Since(start).Round(time.Millisecond))
	return nil
}
