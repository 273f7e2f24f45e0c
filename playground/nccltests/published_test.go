package nccltests

import (
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/data"
	"github.com/distributed-nav/distributed-nav/playground/estimate"
)

// variants are the ways users post the same output: as printed, with Open
// MPI's --tag-output prefix on every line, with Windows line ends, and
// with Open MPI's --timestamp-output stamp in front of the tag.
var variants = []struct {
	name string
	edit func(string) string
}{
	{"as published", func(s string) string { return s }},
	{"[1,0]<stdout>: prefix", func(s string) string { return prefixLines(s, "[1,0]<stdout>:") }},
	{"CRLF", func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }},
	{"timestamp and tag, CRLF", func(s string) string {
		return strings.ReplaceAll(prefixLines(s, "Mon Dec  1 19:40:32 2025[1,3]<stdout>:"), "\n", "\r\n")
	}},
}

func prefixLines(s, p string) string {
	lines := strings.Split(s, "\n")
	for i := range lines {
		lines[i] = p + lines[i]
	}
	return strings.Join(lines, "\n")
}

// TestPublishedTables reads the raw text of every dataset in
// data/measurements back and checks that the table found is the
// dataset's: same collective and rank count (from the file alone, no
// options), the same sizes, and each out-of-place and in-place busbw,
// algbw and time equal to the dataset's row (which was copied from the
// same text, see TestRowsTraceToRaw in package estimate). A published
// table whose last row was cut off by the source ends one row early; the
// test allows exactly that and requires the skipped line's warning.
func TestPublishedTables(t *testing.T) {
	sets, err := estimate.LoadDatasets(data.Measurements, "measurements")
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) < 10 {
		t.Fatalf("only %d datasets", len(sets))
	}
	for _, d := range sets {
		for _, v := range variants {
			t.Run(d.ID+"/"+v.name, func(t *testing.T) {
				f, err := Parse(strings.NewReader(v.edit(d.Raw)), Options{})
				if err != nil {
					t.Fatal(err)
				}
				var run *Run
				for _, r := range f.Runs {
					if string(r.Collective) == d.Run.Collective {
						run = r
						break
					}
				}
				if run == nil || len(f.Runs) != 1 {
					t.Fatalf("want one %s table, got %d runs: %+v", d.Run.Collective, len(f.Runs), f.Runs)
				}
				if run.NRanks != d.Hardware.NGPUs {
					t.Errorf("nranks %d (from %s), dataset %d", run.NRanks, run.NRanksFrom, d.Hardware.NGPUs)
				}
				if len(run.Rows) != len(d.Rows) {
					t.Fatalf("%d rows, dataset %d; warnings %v", len(run.Rows), len(d.Rows), f.Warnings)
				}
				for i, r := range run.Rows {
					w := d.Rows[i]
					o, ip := r.OutOfPlace, r.InPlace
					if r.Bytes != w.Bytes || r.Count != w.Count || o.BusBwGBps != w.BusBwGBps || o.AlgBwGBps != w.AlgBwGBps || o.TimeUs != w.TimeUs ||
						ip.BusBwGBps != w.BusBwInPlace || ip.AlgBwGBps != w.AlgBwInPlace || ip.TimeUs != w.TimeUsInPlace {
						t.Errorf("row %d (line %d): %+v, dataset %+v", i, r.Line, r, w)
					}
				}
				if d.Run.AvgBusBw != nil && (run.AvgBusBwGBps == nil || *run.AvgBusBwGBps != *d.Run.AvgBusBw) {
					t.Errorf("avg busbw %v, dataset %v", run.AvgBusBwGBps, *d.Run.AvgBusBw)
				}
			})
		}
	}
}
