package build

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/service"
)

// TestPlaygroundJSRestatesNoConstant: the playground JavaScript takes its
// defaults, limits and option lists from the module the generator writes
// (playgroundConstants); none of them may be written out again in
// site/assets/js/playground. Checked: every option label, the preset names,
// the opening inputs that are not plain words, and every limit in decimal.
func TestPlaygroundJSRestatesNoConstant(t *testing.T) {
	c := service.Constants()
	var quoted []string
	for _, list := range [][]service.Option{c.Colls, c.P2P, c.Dtypes, c.StepDtypes, c.SameDtypes, c.Fabrics, c.Timings, c.Modes} {
		for _, o := range list {
			if o.Label != o.Value && len(o.Label) > 8 {
				quoted = append(quoted, o.Label)
			}
		}
	}
	quoted = append(quoted, c.DefaultPreset, c.EstimatorPreset, c.Estimate.Bytes, c.Step.Params)
	l := c.Limits
	numbers := []int{l.XMLBytes, l.Nodes, l.LogBytes, l.EnvDumpBytes}
	files, err := filepath.Glob(filepath.Join("..", "..", "site", "assets", "js", "playground", "*.js"))
	if err != nil || len(files) < 5 {
		t.Fatalf("playground JS: %v (%d files)", err, len(files))
	}
	for _, f := range files {
		if filepath.Base(f) == "constants.js" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		for _, q := range quoted {
			for _, form := range []string{"'" + q + "'", `"` + q + `"`} {
				if strings.Contains(s, form) {
					t.Errorf("%s restates %s; take it from ./constants.js", filepath.Base(f), form)
				}
			}
		}
		for _, n := range numbers {
			// 1 MiB is also the divisor that writes sizes in MB.
			if (n != 1<<20 && strings.Contains(s, strconv.Itoa(n))) || (n >= 1<<20 && strings.Contains(s, strconv.Itoa(n>>20)+" * 1024 * 1024")) {
				t.Errorf("%s restates the limit %d; take it from ./constants.js", filepath.Base(f), n)
			}
		}
	}
}

// TestPlaygroundConstantsModule: the generated module is an ES module
// whose default export carries the service's values.
func TestPlaygroundConstantsModule(t *testing.T) {
	b, err := playgroundConstants()
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{"export default {", `"estimatorPreset": "` + service.EstimatorDefaultPreset + `"`, `"xmlBytes": ` + strconv.Itoa(service.MaxXMLBytes)} {
		if !strings.Contains(s, want) {
			t.Errorf("constants module lacks %q", want)
		}
	}
}
