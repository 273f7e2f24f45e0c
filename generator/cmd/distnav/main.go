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
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/distributed-nav/distributed-nav/generator/build"
	"github.com/distributed-nav/distributed-nav/generator/crosslink"
	"github.com/distributed-nav/distributed-nav/generator/envtable"
	"github.com/distributed-nav/distributed-nav/generator/handbook"
	"github.com/distributed-nav/distributed-nav/generator/searchdb"
	"github.com/distributed-nav/distributed-nav/generator/sources"
	"github.com/distributed-nav/distributed-nav/playground/controls"
)

type command struct {
	name, usage string
	run         func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"build", "build [--root DIR] [--site DIR]: write the Hugo tree and search.db", runBuild},
		{"check", "check [--root DIR]: validate the sources without writing anything", runCheck},
		{"search", "search [--kind K] [--limit N] [--json] QUERY: query site/static/search.db as the browser does", runSearch},
		{"env", "env [--json] NAME: one environment variable: default, meaning, source line, deprecation", runEnv},
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

// siteDB is where `distnav build` writes the search database.
func siteDB(root string) string { return filepath.Join(root, "site", "static", "search.db") }

func runSearch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("search", stderr)
	root := fs.String("root", ".", "repository root (the database is ROOT/site/static/search.db)")
	dbPath := fs.String("db", "", "search database (default ROOT/site/static/search.db)")
	kind := fs.String("kind", "", "only results of this kind: "+strings.Join(searchdb.Kinds, ", "))
	limit := fs.Int("limit", searchdb.DefaultLimit, fmt.Sprintf("number of results (at most %d)", searchdb.MaxLimit))
	asJSON := fs.Bool("json", false, "print JSON")
	relevance := fs.String("relevance", "", "instead of a QUERY, run the cases of `FILE` (query<TAB>expected URL fragment) and print the top-1 and top-3 rates and every case that misses the top 3")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *relevance != "" {
		return runRelevance(ctx, *relevance, *dbPath, *root, stdout)
	}
	if fs.NArg() == 0 {
		return usageError{"distnav search: give a QUERY"}
	}
	if *kind != "" && !searchdb.ValidKind(*kind) {
		return usageError{fmt.Sprintf("distnav search: --kind %q: want one of %s", *kind, strings.Join(searchdb.Kinds, ", "))}
	}
	if *limit < 1 || *limit > searchdb.MaxLimit {
		return usageError{fmt.Sprintf("distnav search: --limit %d: want 1..%d", *limit, searchdb.MaxLimit)}
	}
	if *dbPath == "" {
		*dbPath = siteDB(*root)
	}
	db, err := searchdb.Open(*dbPath)
	if err != nil {
		return fmt.Errorf("%w (run `make gen` or `distnav build` first)", err)
	}
	defer db.Close()
	q := strings.Join(fs.Args(), " ")
	res, err := db.Search(ctx, q, searchdb.Options{Kind: *kind, Limit: *limit})
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if res == nil {
			res = []searchdb.Result{}
		}
		return enc.Encode(res)
	}
	if len(res) == 0 {
		fmt.Fprintf(stdout, "no results for %q\n", q)
		return nil
	}
	for i, r := range res {
		fmt.Fprintf(stdout, "%2d. [%s] %s\n    %s\n    %s\n", i+1, r.Kind, r.Title, r.Breadcrumb, r.URL)
		if s := r.SnippetText("«", "»"); s != "" {
			fmt.Fprintf(stdout, "    %s\n", s)
		}
	}
	return nil
}

// runRelevance measures the search against a relevance cases file.
func runRelevance(ctx context.Context, file, dbPath, root string, stdout io.Writer) error {
	f, err := os.Open(file)
	if err != nil {
		return fmt.Errorf("distnav search --relevance: %w", err)
	}
	defer f.Close()
	cases, err := searchdb.ParseCases(f)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if dbPath == "" {
		dbPath = siteDB(root)
	}
	db, err := searchdb.Open(dbPath)
	if err != nil {
		return fmt.Errorf("%w (run `make gen` or `distnav build` first)", err)
	}
	defer db.Close()
	for _, fail := range searchdb.CheckRelevance(ctx, db, cases) {
		fmt.Fprintf(stdout, "%s:%s\n", file, strings.TrimPrefix(fail.String(), "line "))
	}
	fmt.Fprintf(stdout, "%s: %s\n", file, searchdb.MeasureRelevance(ctx, db, cases))
	return nil
}

func runEnv(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("env", stderr)
	root := fs.String("root", ".", "repository root holding data/")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{"distnav env: give one variable NAME"}
	}
	name := fs.Arg(0)
	rows, err := envtable.Load(filepath.Join(*root, "data"))
	if err != nil {
		return err
	}
	srcs, err := sources.Load(filepath.Join(*root, "data"))
	if err != nil {
		return err
	}
	envtable.LinkDefaults(rows, srcs)
	var known []string
	for _, r := range rows {
		if strings.EqualFold(r.Name, name) {
			return printEnvRow(stdout, r, r.Permalink(srcs), *asJSON)
		}
		known = append(known, r.Name)
	}
	nearest := "none"
	if len(name) <= maxEnvNameSuggest {
		nearest = strings.Join(crosslink.Nearest(name, known, 3), ", ")
	}
	return fmt.Errorf("distnav env: %s is not a variable NCCL %s or PyTorch %s reads (nearest: %s)", shownName(name),
		"v2.30.7-1", "v2.6.0", nearest)
}

// Bounds of `distnav env NAME`'s answer for a name it does not know.
const (
	// maxEnvNameSuggest is the longest name nearest names are searched
	// for (the edit distance grows with the name); the playground's
	// ncclenv uses the same 128 bytes. No variable NCCL or PyTorch reads
	// comes near it.
	maxEnvNameSuggest = 128
	// maxEnvNameShown is how many bytes of an unknown name are echoed.
	maxEnvNameShown = 80
)

// shownName returns name as it is echoed in an error: quoted with Go
// escapes, so control characters (an escape sequence that would set the
// terminal's title) show as text, and cut to maxEnvNameShown bytes with
// the full length said.
func shownName(name string) string {
	if len(name) <= maxEnvNameShown {
		return strconv.Quote(name)
	}
	return fmt.Sprintf("%s... (%d bytes in all)", strconv.Quote(controls.Prefix(name, maxEnvNameShown)), len(name))
}

func printEnvRow(w io.Writer, r envtable.Row, link string, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{
			"name": r.Name, "default": r.Default, "type": r.Type, "component": r.Component, "read_by": r.Reader,
			"status": r.Status, "deprecated_alias_of": r.DeprecatedAliasOf, "debug_only": r.DebugOnly,
			"description": r.Description, "source": link,
			"effective_default": r.EffectiveDefault, "default_set_at": r.DefaultURLs,
		})
	}
	fmt.Fprintf(w, "%s  (%s, %s)\n", r.Name, r.Reader, r.Component)
	fmt.Fprintf(w, "  default:   %s\n", r.Default)
	if r.EffectiveDefault != "" {
		fmt.Fprintf(w, "  effective: %s\n", strings.ReplaceAll(r.EffectiveDefault, "`", ""))
		for _, u := range r.DefaultURLs {
			fmt.Fprintf(w, "             %s\n", u)
		}
	}
	fmt.Fprintf(w, "  type:      %s\n  status:    %s\n", r.Type, r.Status)
	if r.DeprecatedAliasOf != "" {
		fmt.Fprintf(w, "  use instead: %s\n", r.DeprecatedAliasOf)
	}
	if r.DebugOnly {
		fmt.Fprintln(w, "  debugging only: do not leave it in production job scripts")
	}
	fmt.Fprintf(w, "  meaning:   %s\n", r.Description)
	if link != "" {
		fmt.Fprintf(w, "  source:    %s\n", link)
	}
	return nil
}
