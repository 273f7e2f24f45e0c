// Command catalog-gen writes NCCL's message catalog under data/messages from
// an NCCL git checkout: every log call of the pinned release's src/ with its
// file:line, severity, subsystem and format string; the wordings of older
// releases (2.7 to 2.29) that the pinned release no longer prints; the
// ncclResult_t codes with their ncclGetErrorString texts; and the IB
// work-completion status and opcode names. It reads the tags with `git
// show`, so the checkout needs no work tree.
//
//	go run ./playground/ncclmsg/internal/catalog-gen -repo /work/.mirror/NVIDIA+nccl/repo -out data/messages
//
// The files hold facts only (what the source says, where); the doctor's
// explanations live in playground/doctor.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/ncclmsg/internal/ncclsrc"
)

// Pinned is the release the catalog describes; Older are the releases
// whose different wordings are kept (the last patch tag of each minor
// release 2.7 to 2.29, newest first). Releases before 2.18 keep their
// sources in the same src/ tree (transport/net_ib.cc, graph/topo.h,
// include/debug.h with the same WARN/INFO/TRACE macros), so one reader
// serves them all.
const Pinned = "v2.30.7-1"

var Older = []string{
	"v2.29.7-1", "v2.28.9-1", "v2.27.7-1", "v2.26.6-1", "v2.25.1-1", "v2.24.3-1",
	"v2.23.4-1", "v2.22.3-1", "v2.21.5-1", "v2.20.5-1", "v2.19.4-1", "v2.18.6-1",
	"v2.17.1-1", "v2.16.5-1", "v2.15.5-1", "v2.14.3-1", "v2.13.4-1", "v2.12.12-1",
	"v2.11.4-1", "v2.10.3-1", "v2.9.9-1", "v2.8.4-1", "v2.7.8-1",
}

const regenerate = "go run ./playground/ncclmsg/internal/catalog-gen -repo /work/.mirror/NVIDIA+nccl/repo -out data/messages"

func main() {
	repo := flag.String("repo", "/work/.mirror/NVIDIA+nccl/repo", "NCCL git directory (bare or not)")
	out := flag.String("out", "data/messages", "output directory")
	flag.Parse()
	if err := run(*repo, *out); err != nil {
		fmt.Fprintln(os.Stderr, "catalog-gen:", err)
		os.Exit(1)
	}
}

// source is one file of a release.
type source struct {
	path string // relative to the repository root, e.g. src/init.cc
	text string
}

func run(repo, out string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	pinned, err := readTree(repo, Pinned)
	if err != nil {
		return err
	}
	var cur bytes.Buffer
	var counts bytes.Buffer
	header(&cur, "Every log call (WARN, INFO, TRACE and their _LOC forms, TRACE_CALL, VERSION) in src/ of NVIDIA/nccl "+Pinned+".",
		"columns: file, line (or first-last line of a call split over lines), severity, subsystem (the flags argument), format",
		"an empty file column repeats the file of the row above (the rows are in file order; the repetition cost 1.9 KB of the gzipped doctor.wasm)",
		"format is the C format string after concatenation, escaped with \\\\ \\t \\n \\xNN; \"-\" where the call passes a non-literal format")
	header(&counts, "Log calls per file of src/ in NVIDIA/nccl "+Pinned+", counted by ncclsrc.CountCalls (a regular expression, independent of the extractor).",
		"columns: file, calls; files without calls are not listed")
	var paths bytes.Buffer
	header(&paths, "Path types (PATH_* in src/graph/topo.h or src/include/graph.h) of each scanned release of NVIDIA/nccl: the numbers NCCL prints as a distance or path type.",
		"columns: release, value, name",
		"a value defined twice keeps its first name, the one topoPathTypeStr (src/graph/topo.cc) prints for it: 2.12-2.17 define PATH_DIS as 7, PATH_SYS's value")
	pathTypes(&paths, Pinned, pinned)
	seen := map[string]bool{} // severity + format of the pinned release
	total := 0
	prevPath := ""
	for _, f := range pinned {
		calls := ncclsrc.Extract(f.text)
		n := ncclsrc.CountCalls(f.text)
		if n > 0 {
			fmt.Fprintf(&counts, "%s\t%d\n", f.path, n)
		}
		for _, c := range calls {
			fmt.Fprintf(&cur, "%s\t%s\t%s\t%s\t%s\n", ditto(f.path, &prevPath), lines(c), c.Severity, c.Subsystem, formatField(c))
			if !c.Dynamic {
				seen[c.Severity+"\x00"+c.Format] = true
			}
			total++
		}
	}
	if total < 1000 {
		return fmt.Errorf("only %d calls found in %s: is %s an NCCL checkout?", total, Pinned, repo)
	}
	// Older wordings: newest release first, so each entry points into the
	// newest release that still printed it; the release column gives the
	// range of scanned releases in which it appears.
	type older struct {
		newest, oldest string
		path, line     string
		c              ncclsrc.Call
	}
	var olds []*older
	byKey := map[string]*older{}
	for _, tag := range Older {
		tree, err := readTree(repo, tag)
		if err != nil {
			return err
		}
		pathTypes(&paths, tag, tree)
		calls := 0
		for _, f := range tree {
			found := ncclsrc.Extract(f.text)
			calls += len(found)
			if n := ncclsrc.CountCalls(f.text); n != len(found) {
				// Not fatal for an older release: the wordings it adds
				// are extras. Printed so that a layout the reader does
				// not understand is seen when regenerating.
				fmt.Fprintf(os.Stderr, "catalog-gen: %s %s: the extractor finds %d calls, the counter %d\n", tag, f.path, len(found), n)
			}
			for _, c := range found {
				if c.Dynamic {
					continue
				}
				key := c.Severity + "\x00" + c.Format
				if seen[key] {
					continue
				}
				if o, ok := byKey[key]; ok {
					o.oldest = tag
					continue
				}
				o := &older{newest: tag, oldest: tag, path: f.path, line: lines(c), c: c}
				byKey[key] = o
				olds = append(olds, o)
			}
		}
		if calls < 200 {
			return fmt.Errorf("only %d calls found in %s: has its source moved out of src/?", calls, tag)
		}
		fmt.Printf("%s: %d calls\n", tag, calls)
	}
	var old bytes.Buffer
	header(&old, "Wordings of NVIDIA/nccl "+strings.Join(reverse(Older), ", ")+" that "+Pinned+" no longer prints (severity and format differ from every call of "+Pinned+").",
		"columns: releases (oldest..newest scanned release that prints it), file, line (in the newest of them), severity, subsystem, format",
		"an empty releases or file column repeats the row above's",
		"format escaped as in nccl-"+Pinned+".tsv")
	prevRel, prevPath := "", ""
	for _, o := range olds {
		fmt.Fprintf(&old, "%s\t%s\t%s\t%s\t%s\t%s\n", ditto(o.oldest+".."+o.newest, &prevRel), ditto(o.path, &prevPath), o.line, o.c.Severity, o.c.Subsystem, formatField(o.c))
	}
	results, err := resultCodes(repo)
	if err != nil {
		return err
	}
	ibv, err := ibvEnums(repo)
	if err != nil {
		return err
	}
	files := map[string][]byte{
		"nccl-" + Pinned + ".tsv":        cur.Bytes(),
		"nccl-" + Pinned + ".counts.tsv": counts.Bytes(),
		"nccl-older.tsv":                 old.Bytes(),
		"nccl-results.tsv":               results,
		"ibv-wc.tsv":                     ibv,
		"path-types.tsv":                 paths.Bytes(),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(out, name), b, 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("%s: %d calls, %d older wordings\n", Pinned, total, len(olds))
	return nil
}

var pathDefine = regexp.MustCompile(`(?m)^#define PATH_([A-Z0-9]+)\s+(\d+)\s*$`)

// pathTypes writes the PATH_* values of one release. An alias (a second
// name for a value already defined, PATH_DIS = 7 = PATH_SYS in 2.12 to
// 2.17) is left out: the first name is the one topoPathTypeStr prints.
func pathTypes(b *bytes.Buffer, tag string, tree []source) {
	named := map[string]bool{}
	for _, f := range tree {
		if f.path != "src/graph/topo.h" && f.path != "src/include/graph.h" {
			continue
		}
		for _, m := range pathDefine.FindAllStringSubmatch(f.text, -1) {
			if named[m[2]] {
				continue
			}
			named[m[2]] = true
			fmt.Fprintf(b, "%s\t%s\t%s\n", tag, m[2], m[1])
		}
	}
}

func header(b *bytes.Buffer, lines ...string) {
	b.WriteString("# Generated by `" + regenerate + "`; do not edit.\n")
	for _, l := range lines {
		b.WriteString("# " + l + "\n")
	}
}

// ditto returns "" when v equals *prev (the row above's value of the
// column), else v, and remembers v.
func ditto(v string, prev *string) string {
	if v == *prev {
		return ""
	}
	*prev = v
	return v
}

func reverse(s []string) []string {
	out := append([]string(nil), s...)
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

func lines(c ncclsrc.Call) string {
	if c.EndLine > c.Line {
		return strconv.Itoa(c.Line) + "-" + strconv.Itoa(c.EndLine)
	}
	return strconv.Itoa(c.Line)
}

func formatField(c ncclsrc.Call) string {
	if c.Dynamic {
		return "-"
	}
	return Escape(c.Format)
}

// Escape writes a format on one TSV line: backslash, tab, newline and other
// control bytes as escapes. playground/ncclmsg.Unescape reverses it.
func Escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\n':
			b.WriteString(`\n`)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	if s == "-" {
		return `\x2d`
	}
	return b.String()
}

// readTree returns the C/C++ files under src/ at tag, sorted by path.
func readTree(repo, tag string) ([]source, error) {
	files, err := ncclsrc.ReadTree(repo, tag)
	if err != nil {
		return nil, err
	}
	out := make([]source, 0, len(files))
	for _, f := range files {
		out = append(out, source{path: f.Path, text: f.Text})
	}
	return out, nil
}

func git(repo string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

var (
	enumMember = regexp.MustCompile(`^\s*(\w+)\s*(?:=\s*([^,]+?))?\s*$`)
	caseReturn = regexp.MustCompile(`case\s+(nccl\w+)\s*:\s*return\s+"([^"]*)"`)
)

// resultCodes reads ncclResult_t from src/nccl.h.in and the texts of
// ncclGetErrorString in src/init.cc.
func resultCodes(repo string) ([]byte, error) {
	hdr, err := git(repo, "show", Pinned+":src/nccl.h.in")
	if err != nil {
		return nil, err
	}
	i := bytes.Index(hdr, []byte("typedef enum { ncclSuccess"))
	j := bytes.Index(hdr, []byte("} ncclResult_t;"))
	if i < 0 || j < i {
		return nil, fmt.Errorf("src/nccl.h.in: no ncclResult_t enum")
	}
	members, err := enumValues(string(hdr[i+len("typedef enum {") : j]))
	if err != nil {
		return nil, fmt.Errorf("src/nccl.h.in: %w", err)
	}
	initc, err := git(repo, "show", Pinned+":src/init.cc")
	if err != nil {
		return nil, err
	}
	k := bytes.Index(initc, []byte("const char* ncclGetErrorString(ncclResult_t code)"))
	if k < 0 {
		return nil, fmt.Errorf("src/init.cc: no ncclGetErrorString")
	}
	fnLine := bytes.Count(initc[:k], []byte("\n")) + 1
	body := string(initc[k:])
	body = body[:strings.Index(body, "\n}\n")]
	texts := map[string]string{}
	for _, m := range caseReturn.FindAllStringSubmatch(body, -1) {
		texts[m[1]] = m[2]
	}
	var b bytes.Buffer
	header(&b, "ncclResult_t of NVIDIA/nccl "+Pinned+" (src/nccl.h.in) and the text ncclGetErrorString returns for each (src/init.cc:"+strconv.Itoa(fnLine)+").",
		"columns: code, name, text")
	for _, m := range members {
		if m.name == "ncclNumResults" {
			continue
		}
		if texts[m.name] == "" {
			return nil, fmt.Errorf("src/init.cc: ncclGetErrorString has no case for %s", m.name)
		}
		fmt.Fprintf(&b, "%d\t%s\t%s\n", m.value, m.name, texts[m.name])
	}
	return b.Bytes(), nil
}

type member struct {
	name  string
	value int
}

// enumValues reads the members of a C enum body.
func enumValues(body string) ([]member, error) {
	body = regexp.MustCompile(`(?s)/\*.*?\*/|//[^\n]*`).ReplaceAllString(body, "")
	var out []member
	next := 0
	for _, part := range strings.Split(body, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		m := enumMember.FindStringSubmatch(part)
		if m == nil {
			return nil, fmt.Errorf("enum member %q", strings.TrimSpace(part))
		}
		if m[2] != "" {
			v, err := constExpr(m[2])
			if err != nil {
				return nil, fmt.Errorf("enum member %s: %w", m[1], err)
			}
			next = v
		}
		out = append(out, member{m[1], next})
		next++
	}
	return out, nil
}

// constExpr evaluates "12" or "1 << 7".
func constExpr(s string) (int, error) {
	if a, b, ok := strings.Cut(s, "<<"); ok {
		x, err1 := strconv.Atoi(strings.TrimSpace(a))
		y, err2 := strconv.Atoi(strings.TrimSpace(b))
		if err1 != nil || err2 != nil {
			return 0, fmt.Errorf("value %q", s)
		}
		return x << y, nil
	}
	return strconv.Atoi(strings.TrimSpace(s))
}

// ibvEnums reads enum ibv_wc_status and enum ibv_wc_opcode from NCCL's
// copy of the verbs header.
func ibvEnums(repo string) ([]byte, error) {
	const path = "src/include/ibvcore.h"
	hdr, err := git(repo, "show", Pinned+":"+path)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	header(&b, "IB work-completion status and opcode values as NVIDIA/nccl "+Pinned+" declares them ("+path+"; NCCL prints status= and opcode= with these numbers).",
		"columns: enum (status or opcode), value, name")
	for _, e := range []struct{ kind, decl string }{{"status", "enum ibv_wc_status {"}, {"opcode", "enum ibv_wc_opcode {"}} {
		sc := bufio.NewScanner(bytes.NewReader(hdr))
		var body strings.Builder
		in := false
		for sc.Scan() {
			l := sc.Text()
			if strings.HasPrefix(strings.TrimSpace(l), e.decl) {
				in = true
				continue
			}
			if in && strings.HasPrefix(strings.TrimSpace(l), "};") {
				break
			}
			if in {
				body.WriteString(l + "\n")
			}
		}
		ms, err := enumValues(body.String())
		if err != nil || len(ms) == 0 {
			return nil, fmt.Errorf("%s: %s: %v", path, e.decl, err)
		}
		for _, m := range ms {
			fmt.Fprintf(&b, "%s\t%d\t%s\n", e.kind, m.value, m.name)
		}
	}
	return b.Bytes(), nil
}
