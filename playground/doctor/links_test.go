package doctor

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/generator/notes"
	"github.com/distributed-nav/distributed-nav/playground/ascii"
	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
	"github.com/distributed-nav/distributed-nav/playground/presets"
)

// anchorIndex maps "/notes/NAME/" to the heading ids of that note, read with
// the generator's own note parser ({#id} attributes or Hugo's auto ids).
func anchorIndex(t *testing.T) map[string]map[string]bool {
	t.Helper()
	ns, err := notes.LoadDir("../../content/notes")
	if err != nil {
		t.Fatalf("load notes: %v", err)
	}
	idx := map[string]map[string]bool{}
	for _, n := range ns {
		ids := map[string]bool{}
		for _, s := range n.Sections {
			ids[s.ID] = true
		}
		idx["/notes/"+n.Name+"/"] = ids
	}
	return idx
}

// checkLink fails unless url is a note page (and heading) or a variable row
// that exists.
func checkLink(t *testing.T, idx map[string]map[string]bool, reg *ncclenv.Registry, l Link) {
	t.Helper()
	page, anchor, _ := strings.Cut(l.URL, "#")
	switch {
	case page == envPage:
		if _, ok := reg.Lookup(anchor); !ok {
			t.Errorf("link %q: no variable %s in the tables", l.URL, anchor)
		}
	case strings.HasPrefix(page, estimatorPage+"?"):
		// The estimator page's own inputs: a preset the model loads, and
		// plain numbers and names for the rest.
		q, err := url.ParseQuery(strings.TrimPrefix(page, estimatorPage+"?"))
		if err != nil {
			t.Errorf("link %q: %v", l.URL, err)
			return
		}
		if p := q.Get("preset"); p != "" {
			if _, err := presets.Get(p); err != nil {
				t.Errorf("link %q: %v", l.URL, err)
			}
		}
		for k, v := range q {
			switch {
			case k == "preset":
			case (k == "nodes" || k == "bytes") && len(v) == 1 && ascii.Digits(v[0]):
			case k == "coll" && len(v) == 1 && ascii.Letters(v[0]):
			default:
				t.Errorf("link %q: parameter %s=%v is not an estimator input", l.URL, k, v)
			}
		}
	case strings.HasPrefix(page, "/notes/"):
		ids, ok := idx[page]
		if !ok {
			t.Errorf("link %q: no note %s", l.URL, page)
			return
		}
		if anchor != "" && !ids[anchor] {
			t.Errorf("link %q: note %s has no heading #%s", l.URL, page, anchor)
		}
	default:
		t.Errorf("link %q is not a site-relative note or variable link", l.URL)
	}
	if l.Title == "" {
		t.Errorf("link %q has no title", l.URL)
	}
}

func TestLinkAnchorsExist(t *testing.T) {
	idx := anchorIndex(t)
	reg, err := ncclenv.DefaultRegistry()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range catalogue() {
		checkLink(t, idx, reg, l)
	}
	// Every link any diagnosis of the fixtures or of a lint run produces.
	files, _ := filepath.Glob(filepath.Join(logsDir, "*.log"))
	seen := 0
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := ParseLog(fh, Options{})
		fh.Close()
		for _, d := range Diagnose(s, ncclenv.New(map[string]string{"NCCL_P2P_DISABLE": "1", "NCCL_P2P_LEVEL": "SYS", "NCCL_MAX_NRINGS": "2"})) {
			for _, l := range d.Links {
				checkLink(t, idx, reg, l)
				seen++
			}
		}
	}
	for _, f := range LintEnv("NCCL_P2P_DISABLED=1\nNCCL_DEBUG=INFO\nNCCL_SHM_DISABLE=0\nNCCL_VERSION=1\nNCCL_IB_DISABLE=1\nNCCL_IB_HCA=mlx5\nTORCH_NCCL_ENABLE_MONITORING=0\nTORCH_NCCL_HEARTBEAT_TIMEOUT_SEC=9\n") {
		for _, l := range f.Links {
			checkLink(t, idx, reg, l)
			seen++
		}
	}
	// The estimator link of an nccl-tests run (benchlog_test.go's table).
	bench := Diagnose(parseString(t, benchHead+benchRows), ncclenv.Env{})
	if d := find(bench, "nccl-tests-result"); len(d.Links) == 0 || !strings.HasPrefix(d.Links[0].URL, estimatorPage) {
		t.Errorf("nccl-tests result without the estimator link: %v", d.Links)
	} else {
		checkLink(t, idx, reg, d.Links[0])
	}
	if seen < 20 {
		t.Errorf("only %d links checked; the sample should exercise most rules", seen)
	}
}
