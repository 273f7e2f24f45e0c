package doctor

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
)

// lineForms rewrite every line of a log the way a launcher, a terminal or
// a paste does: torchrun's "[rankN]:" tag, Open MPI's "[1,N]<stdout>:"
// tag, a timestamp, ANSI colours around each line, CRLF line ends, Ray's
// worker tag, pdsh/DeepSpeed's "host: " and srun -l's "N: ".
var lineForms = map[string]func(i int, line string) string{
	"torchrun":  func(i int, l string) string { return "[rank" + string(rune('0'+i%8)) + "]:" + l },
	"mpirun":    func(i int, l string) string { return "[1," + string(rune('0'+i%8)) + "]<stdout>:" + l },
	"timestamp": func(i int, l string) string { return "[2025-09-18 23:23:41] " + l },
	"ansi":      func(i int, l string) string { return "\x1b[32m" + l + "\x1b[0m" },
	"crlf":      func(i int, l string) string { return l + "\r" },
	"ray":       func(i int, l string) string { return "(RayWorkerWrapper pid=38530, ip=10.244.1.95) " + l },
	"pdsh":      func(i int, l string) string { return "rdma-test-gpu-worker-1: " + l },
	"srun":      func(i int, l string) string { return string(rune('0'+i%8)) + ": " + l },
}

// TestConfirmedLogsInEveryForm rewrites each published log with a
// confirmed cause (data/logs/*.note) in every form of lineForms: the rule
// IDs its note implies must still fire and none it contradicts.
func TestConfirmedLogsInEveryForm(t *testing.T) {
	notes, err := filepath.Glob(filepath.Join(logsDir, "*.note"))
	if err != nil || len(notes) == 0 {
		t.Fatalf("no notes in %s: %v", logsDir, err)
	}
	for _, np := range notes {
		name := strings.TrimSuffix(filepath.Base(np), ".note")
		n := readNote(t, np)
		b, err := os.ReadFile(filepath.Join(logsDir, name+".log"))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		for form, f := range lineForms {
			var out strings.Builder
			for i, l := range lines {
				if strings.HasPrefix(l, CommentPrefix) {
					out.WriteString(l + "\n")
					continue
				}
				out.WriteString(f(i, l) + "\n")
			}
			s, err := ParseLog(strings.NewReader(out.String()), Options{})
			if err != nil {
				t.Fatalf("%s/%s: %v", name, form, err)
			}
			got := ids(Diagnose(s, ncclenv.Env{}))
			for _, id := range n.implies {
				if !slices.Contains(got, id) {
					t.Errorf("%s (%s): implies %s; diagnoses %v", name, form, id, got)
				}
			}
			for _, id := range n.contradicts {
				if slices.Contains(got, id) {
					t.Errorf("%s (%s): %s fired, contradicted (diagnoses %v)", name, form, id, got)
				}
			}
		}
	}
}
