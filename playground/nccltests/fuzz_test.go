package nccltests

import (
	"strings"
	"testing"
)

// FuzzParse: Parse never panics, and whatever it returns holds together:
// every run has rows, a collective and a rank count within bounds, and
// every row's line lies inside the input.
func FuzzParse(f *testing.F) {
	f.Add(multi)
	f.Add("#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n 8 2 float sum -1 9.1 0.00 0.00 0 9.0 0.00 0.00 0\n")
	f.Add("[1,0]<stdout>:  4194304  1048576  float  sum  -1  419.4  10.00  15.00  0  419.4  10.00  15.00  0\r\n")
	f.Add("# Collective test starting: all_gather_perf\n#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n 64 8 float none -1 9.1 0.01 0.00 N/A\n")
	f.Fuzz(func(t *testing.T, in string) {
		file, err := Parse(strings.NewReader(in), Options{})
		if err != nil {
			return
		}
		lines := strings.Count(in, "\n") + 1
		if len(file.Runs) == 0 {
			t.Fatal("no runs and no error")
		}
		for _, r := range file.Runs {
			if len(r.Rows) == 0 || r.Collective == "" || r.NRanks < 1 || r.NRanks > MaxRanks {
				t.Fatalf("run %+v", r)
			}
			for _, row := range r.Rows {
				if row.Line < 1 || row.Line > lines {
					t.Fatalf("row line %d of %d", row.Line, lines)
				}
			}
		}
	})
}

// BenchmarkParse reads a console log of eight runs of 30 sizes each with
// Open MPI tags, the size of a full sweep users paste.
func BenchmarkParse(b *testing.B) {
	in := strings.Repeat(prefixLines(multi, "[1,0]<stdout>:")+"\n", 8)
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if _, err := Parse(strings.NewReader(in), Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
