package ncclmsg

import (
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/distributed-nav/distributed-nav/data"
	"github.com/distributed-nav/distributed-nav/playground/ncclmsg/internal/ncclsrc"
)

// ncclRepo is the NCCL checkout the catalog is generated from. CI has none:
// there the tests check the committed catalog against the counts committed
// with it; where the checkout exists they re-derive the counts from the
// source itself.
func ncclRepo() string {
	if r := os.Getenv("NCCL_REPO"); r != "" {
		return r
	}
	return "/work/.mirror/NVIDIA+nccl/repo"
}

// committedCounts reads data/messages/nccl-<Pinned>.counts.tsv: the calls
// per file that ncclsrc.CountCalls (a regular expression, not the
// extractor) found when the catalog was generated.
func committedCounts(t *testing.T) map[string]int {
	t.Helper()
	// The counts are a test input, not compiled into the programs.
	b, err := os.ReadFile("../../data/messages/nccl-" + Pinned + ".counts.tsv")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, l := range strings.Split(string(b), "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		f := strings.Split(l, "\t")
		n, err := strconv.Atoi(f[1])
		if len(f) != 2 || err != nil {
			t.Fatalf("counts line %q", l)
		}
		out[f[0]] = n
	}
	return out
}

// TestCatalogCoversEveryCall holds the catalog to the source's own calls:
// every file of src/ that calls WARN/INFO/TRACE has as many catalog entries
// as the naive counter finds calls, so a file (or a call) the extractor
// missed fails. With the NCCL checkout present the counts are taken from
// the source at the pinned tag; without it (CI) from the counts committed
// at generation time, which the checkout run keeps honest.
func TestCatalogCoversEveryCall(t *testing.T) {
	c, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	want := committedCounts(t)
	if repo := ncclRepo(); dirExists(repo) {
		files, err := ncclsrc.ReadTree(repo, Pinned)
		if err != nil {
			t.Fatalf("reading %s at %s: %v", repo, Pinned, err)
		}
		fromSource := map[string]int{}
		for _, f := range files {
			if n := ncclsrc.CountCalls(f.Text); n > 0 {
				fromSource[f.Path] = n
			}
			if got, n := len(ncclsrc.Extract(f.Text)), ncclsrc.CountCalls(f.Text); got != n {
				t.Errorf("%s: the extractor finds %d calls, the counter %d", f.Path, got, n)
			}
		}
		for _, f := range SortedKeys(fromSource) {
			if want[f] != fromSource[f] {
				t.Errorf("%s: %d calls in the source, %d in the committed counts: regenerate the catalog", f, fromSource[f], want[f])
			}
		}
		for f := range want {
			if _, ok := fromSource[f]; !ok {
				t.Errorf("%s: in the committed counts but has no calls at %s", f, Pinned)
			}
		}
		want = fromSource
		t.Logf("counts re-derived from %s at %s: %d files", repo, Pinned, len(files))
	} else {
		t.Logf("no NCCL checkout at %s (set NCCL_REPO): checking the catalog against the counts committed with it", repo)
	}
	got := c.Files()
	total := 0
	for _, f := range SortedKeys(want) {
		total += want[f]
		if got[f] != want[f] {
			t.Errorf("%s: %d catalog entries, %d calls", f, got[f], want[f])
		}
	}
	for f := range got {
		if _, ok := want[f]; !ok {
			t.Errorf("%s: catalog entries for a file without calls", f)
		}
	}
	// v2.30.7-1 has about 1,800 calls in 120 files: a catalog far smaller
	// was cut.
	if total < 1500 || len(want) < 100 {
		t.Errorf("%d calls in %d files: the counts are incomplete", total, len(want))
	}
}

func dirExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// TestMatch ties real messages to their calls. Each expected place and
// field was read from the source at the named tag (git show TAG:FILE).
func TestMatch(t *testing.T) {
	c, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		sev, msg, place string
		file            string
		release         string
		fields          []string
	}{
		// src/transport/net_ib/p2p.cc:688 at v2.30.7-1
		{"WARN", "NET/IB: Got completion from peer 10.0.0.2<45123> with status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_SEND(0) vendor_err=129 localGid ::ffff:10.0.0.1 remoteGid ::ffff:10.0.0.2 hca mlx5_0", "",
			"src/transport/net_ib/p2p.cc", Pinned, []string{"10.0.0.2<45123>", "IBV_WC_RETRY_EXC_ERR", "12", "IBV_WC_SEND", "0", "129"}},
		// the 2.18-2.21 wording, src/transport/net_ib.cc:1909 at v2.21.5-1
		{"WARN", "NET/IB : Got completion from peer 10.1.1.2<42286> with error 12, opcode 0, len 0, vendor err 129 (Send)", "",
			"src/transport/net_ib.cc", "", nil},
		// the same 2.19-2.21 wording without the "(Send)" tail, as users
		// often paste it (src/transport/net_ib.cc:1909 at v2.21.5-1)
		{"WARN", "NET/IB : Got completion from peer 192.168.17.147<38560> with error 12, opcode 0, len 0, vendor err 129", "",
			"src/transport/net_ib.cc", "", []string{"192.168.17.147<38560>", "12", "0", "0", "129"}},
		// src/init.cc:1043-1044
		{"WARN", "Mismatched NCCL version detected : rank 8 version 22105 rank 0 version 23007", "init.cc:1043",
			"src/init.cc", Pinned, []string{"8", "22105", "0", "23007"}},
		// the ring line printed with "%s" by src/graph/rings.cc:26
		{"INFO", "Channel 00/02 :    0   1   2   3", "", "src/graph/rings.cc", Pinned, nil},
		// the version banner, src/init.cc showVersion
		{"INFO", "NCCL version 2.21.5+cuda12.4", "", "src/init.cc", Pinned, nil},
	}
	for _, tc := range cases {
		m, ok := c.Match(tc.sev, tc.msg, tc.place)
		if !ok {
			t.Errorf("%q: no match", tc.msg)
			continue
		}
		if m.Entry.File != tc.file || (tc.release != "" && m.Entry.Release != tc.release) {
			t.Errorf("%q: matched %s:%d at %s (%q)", tc.msg, m.Entry.File, m.Entry.Line, m.Entry.Release, m.Entry.Format)
		}
		for i, f := range tc.fields {
			if i >= len(m.Fields) || m.Fields[i].Value != f {
				t.Errorf("%q: fields %+v, want %v", tc.msg, m.Fields, tc.fields)
				break
			}
		}
		if !strings.HasPrefix(m.Entry.Permalink(), "https://github.com/NVIDIA/nccl/blob/v2.") {
			t.Errorf("permalink %s", m.Entry.Permalink())
		}
	}
	for _, msg := range []string{"P2P plugin IBext_v8", "something NCCL never says at all"} {
		if m, ok := c.Match("INFO", msg, ""); ok {
			t.Errorf("%q matched %s:%d %q", msg, m.Entry.File, m.Entry.Line, m.Entry.Format)
		}
	}
}

// TestBuiltPointsAtBareFormats: every shape of a buffer-built message must
// name a "%s" call of the pinned release, so a regenerated catalog that
// moved the call fails here instead of mislabelling lines.
func TestBuiltPointsAtBareFormats(t *testing.T) {
	c, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range built {
		ok := false
		for _, e := range c.byPlace[placeKey(b.file, b.line)] {
			ok = ok || (e.Release == Pinned && e.Format == "%s" && e.File == b.file)
		}
		if !ok {
			t.Errorf("%s:%d is not a \"%%s\" call at %s", b.file, b.line, Pinned)
		}
	}
}

// TestTables checks the small tables against facts of nccl.h.in and
// ibvcore.h at the pinned tag.
func TestTables(t *testing.T) {
	c, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := c.Result(6); !ok || r.Name != "ncclRemoteError" || !strings.Contains(r.Text, "network error") {
		t.Errorf("result 6 = %+v", r)
	}
	if c.WCStatus[12] != "IBV_WC_RETRY_EXC_ERR" || c.WCStatus[4] != "IBV_WC_LOC_PROT_ERR" || c.WCOpcode[128] != "IBV_WC_RECV" {
		t.Errorf("wc status 12 %q, 4 %q, opcode 128 %q", c.WCStatus[12], c.WCStatus[4], c.WCOpcode[128])
	}
	// PATH_SYS was 7 until 2.25 and is 9 since 2.27 (C2C and P2C added).
	if c.PathName("v2.21.5-1", 7) != "SYS" || c.PathName(Pinned, 9) != "SYS" || c.PathName("v2.21.5-1", 4) != "PXB" {
		t.Errorf("path names: 2.21 7=%q 4=%q, pinned 9=%q", c.PathName("v2.21.5-1", 7), c.PathName("v2.21.5-1", 4), c.PathName(Pinned, 9))
	}
	if r := c.ReleaseFor("2.21.5"); r != "v2.21.5-1" {
		t.Errorf("ReleaseFor(2.21.5) = %q", r)
	}
	if r := c.ReleaseFor("2.30.3"); r != Pinned {
		t.Errorf("ReleaseFor(2.30.3) = %q", r)
	}
}

func FuzzMatch(f *testing.F) {
	f.Add("WARN", "NET/IB : Got completion from peer 1.2.3.4<1> with error 12, opcode 0, len 0, vendor err 129")
	f.Add("INFO", "Channel 00/02 :    0   1")
	f.Add("INFO", strings.Repeat("%s ", 100))
	c, err := Default()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, sev, msg string) {
		m, ok := c.Match(sev, msg, "")
		if ok && m.Entry == nil {
			t.Fatal("match without entry")
		}
	})
}

func BenchmarkMatch(b *testing.B) {
	c, err := Default()
	if err != nil {
		b.Fatal(err)
	}
	msgs := []string{
		"comm 0x5600 rank 0 nRanks 8 nNodes 1 localRanks 8 localRank 0 MNNVL 0",
		"Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM",
		"NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB eth0:10.0.0.1<0>",
		"something nobody prints",
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		c.Match("INFO", msgs[i%len(msgs)], "")
	}
}

// TestDittoColumns reads the catalog's "same as the row above" columns: an
// empty file (or, in nccl-older.tsv, releases) column takes the value of
// the row above, and a first row without one is refused. The committed
// catalog uses it for every run of rows of one file (catalog-gen's ditto).
func TestDittoColumns(t *testing.T) {
	cur := "# header\nsrc/a.cc\t10\tWARN\tALL\tfirst %d\n\t12\tINFO\tNET\tsecond %s\nsrc/b.cc\t3\tWARN\tALL\tthird\n"
	old := "v2.18.6-1..v2.19.4-1\tsrc/c.cc\t5\tWARN\tALL\told one\n\t\t7\tINFO\tALL\told two\n"
	fsys := miniFS(cur, old, Pinned+"\t0\tLOC\n")
	c, err := Load(fsys)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ file, release, releases, format string }{
		{"src/a.cc", Pinned, "", "first %d"},
		{"src/a.cc", Pinned, "", "second %s"},
		{"src/b.cc", Pinned, "", "third"},
		{"src/c.cc", "v2.19.4-1", "v2.18.6-1..v2.19.4-1", "old one"},
		{"src/c.cc", "v2.19.4-1", "v2.18.6-1..v2.19.4-1", "old two"},
	}
	if len(c.Entries) != len(want) {
		t.Fatalf("%d entries, want %d", len(c.Entries), len(want))
	}
	for i, w := range want {
		e := c.Entries[i]
		if e.File != w.file || e.Release != w.release || e.Releases != w.releases || e.Format != w.format {
			t.Errorf("entry %d: %s %s %q %q, want %s %s %q %q", i, e.File, e.Release, e.Releases, e.Format, w.file, w.release, w.releases, w.format)
		}
	}
	fsys["messages/nccl-"+Pinned+".tsv"] = &fstest.MapFile{Data: []byte("\t10\tWARN\tALL\tno file\n")}
	if _, err := Load(fsys); err == nil || !strings.Contains(err.Error(), "no file") {
		t.Errorf("a first row without a file: error %v, want one that says so", err)
	}
}

// Files, the list the doctor page's worker fetches and build.sh copies,
// names exactly the catalog files compiled into data.Messages.
func TestFilesAreTheEmbeddedOnes(t *testing.T) {
	var embedded []string
	if err := fs.WalkDir(data.Messages, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			embedded = append(embedded, p)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	want := slices.Sorted(slices.Values(Files))
	if !slices.Equal(embedded, want) {
		t.Errorf("data.Messages holds %v, Files names %v", embedded, want)
	}
}

// miniFS is a catalog's files with the given pinned and older rows and
// path types, one ncclResult_t text and one work-completion status.
func miniFS(cur, old, pathTypes string) fstest.MapFS {
	return fstest.MapFS{
		"messages/nccl-" + Pinned + ".tsv": {Data: []byte(cur)},
		"messages/nccl-older.tsv":          {Data: []byte(old)},
		"messages/nccl-results.tsv":        {Data: []byte("0\tncclSuccess\tno error\n")},
		"messages/ibv-wc.tsv":              {Data: []byte("status\t12\tIBV_WC_RETRY_EXC_ERR\n")},
		"messages/path-types.tsv":          {Data: []byte(pathTypes)},
	}
}
