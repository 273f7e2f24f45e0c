package doctor

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
)

// FuzzParseLog feeds arbitrary bytes to the parser with small limits and
// checks that it never fails on content, keeps its bounds, and that the
// rest of the pipeline (Diagnose, the text and HTML views, JSON) copes with
// whatever it produced.
func FuzzParseLog(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(logsDir, "*.log"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{
		"", "\n", "NCCL INFO", "NCCL version ", "h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> -> via",
		"h:1:1 [0] NCCL INFO Trees [0] 1/2/3->4->5 [x",
		"h:1:1 [0] NCCL INFO  Algorithm |  Tree |\nh:1:1 [0] NCCL INFO Protocol | LL |\nh:1:1 [0] NCCL INFO AllReduce | 1/2 |",
		"[Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, Timeout(ms)=",
		"a:b:c [0] NCCL INFO x NCCL WARN y NCCL INFO z",
		"\x00\x01\xff\xfe NCCL WARN \xff",
	} {
		f.Add([]byte(s))
	}
	opts := Options{MaxLineBytes: 256, MaxItems: 16, MaxEvidence: 2, MaxEvidenceChars: 64}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseLog(bytes.NewReader(data), opts)
		if err != nil {
			t.Fatalf("ParseLog failed on content: %v", err)
		}
		if s.Bytes != int64(len(data)) {
			t.Fatalf("read %d of %d bytes", s.Bytes, len(data))
		}
		checkBounded(t, s, opts)
		ds := Diagnose(s, ncclenv.Env{})
		for _, d := range ds {
			if d.ID == "" || d.Title == "" || len(d.Evidence) > maxDiagnosisEvidence {
				t.Fatalf("malformed diagnosis %+v", d)
			}
		}
		if err := WriteText(io.Discard, s, ds); err != nil {
			t.Fatal(err)
		}
		var html strings.Builder
		if err := WriteHTML(&html, s, ds); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(html.String(), "<script") {
			t.Fatal("raw markup in the HTML view")
		}
		checkSameHTML(t, s, ds)
		if _, err := json.Marshal(s); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzLintEnv checks that any pasted text yields findings with sensible
// line numbers and never a panic.
func FuzzLintEnv(f *testing.F) {
	for _, s := range []string{
		"NCCL_P2P_DISABLE=1\nNCCL_P2P_LEVEL=NVL\n", "export NCCL_ALGO='^Tree;allreduce:ring'\n", "declare -x TORCH_NCCL_BLOCKING_WAIT=\"1\"\n",
		"=\n", "NCCL_ =x", "# c\n\n", "NCCL_NTHREADS=0x40\nNCCL_NTHREADS=9999999999999999999999\n", "\xff=\xfe",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		lines := strings.Count(text, "\n") + 1
		for _, fd := range LintEnv(text) {
			if fd.Line < 0 || fd.Line > lines+1 || fd.ID == "" || fd.Message == "" {
				t.Fatalf("bad finding %+v for %q", fd, text)
			}
		}
	})
}
