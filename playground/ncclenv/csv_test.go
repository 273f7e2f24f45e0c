package ncclenv

import (
	"encoding/csv"
	"io/fs"
	"reflect"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/data"
)

// csvRecords is what encoding/csv returns for the same input, the reference
// readCSV must match.
func csvRecords(s string) ([][]string, error) {
	r := csv.NewReader(strings.NewReader(s))
	r.FieldsPerRecord = -1
	return r.ReadAll()
}

func TestReadCSV(t *testing.T) {
	cases := []struct {
		in      string
		wantErr string // substring; empty when the input is valid
	}{
		{in: "a,b,c\n1,2,3\n"},
		{in: "a,b\r\n1,2\r\n"},
		{in: "a,b\n\n\n1,2"},
		{in: `name,description` + "\n" + `X,"has, comma and ""quotes"""` + "\n"},
		{in: "a,\"multi\nline\",c\nd,e,f\n"},
		{in: "a,\"cr\r\nlf\"\n"},
		{in: "a,,c\n,\n"},
		{in: "only\n"},
		{in: "a,b\n1,2,3,4\n"},
		{in: "a,\"open\n", wantErr: "line 1: quoted field is not closed"},
		{in: "a,b\nx,\"q\"z\n", wantErr: `line 2: extraneous or missing " in quoted field`},
		{in: "a,b\nx,y\"z\n", wantErr: `line 2: bare " in non-quoted field`},
	}
	for _, c := range cases {
		got, err := readCSV([]byte(c.in))
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("readCSV(%q) error = %v, want %q", c.in, err, c.wantErr)
			}
			if _, ref := csvRecords(c.in); ref == nil {
				t.Errorf("readCSV(%q) refuses what encoding/csv accepts", c.in)
			}
			continue
		}
		want, ref := csvRecords(c.in)
		if err != nil || ref != nil {
			t.Errorf("readCSV(%q) error %v (encoding/csv: %v)", c.in, err, ref)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("readCSV(%q) = %q, encoding/csv gives %q", c.in, got, want)
		}
	}
}

// TestReadCSVEmbeddedTables reads the real tables both ways.
func TestReadCSVEmbeddedTables(t *testing.T) {
	for _, p := range []string{ncclTable, torchTable} {
		b, err := fs.ReadFile(data.Env, p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := readCSV(b)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		want, err := csvRecords(string(b))
		if err != nil {
			t.Fatalf("%s: encoding/csv: %v", p, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: readCSV differs from encoding/csv", p)
		}
		if len(got) < 90 {
			t.Errorf("%s: only %d records", p, len(got))
		}
	}
}

// FuzzReadCSV checks that readCSV never panics and, whenever encoding/csv
// accepts the input, returns the same records; when encoding/csv refuses it,
// readCSV must refuse it too.
func FuzzReadCSV(f *testing.F) {
	f.Add("a,b\n1,\"2\n,\"\"x\"\"\"\r\n")
	f.Add("name,default\nNCCL_DEBUG,WARN\n")
	f.Add("\"\"\"\",\n\r\n,")
	f.Fuzz(func(t *testing.T, s string) {
		got, err := readCSV([]byte(s))
		want, ref := csvRecords(s)
		if ref != nil {
			if err == nil {
				t.Fatalf("readCSV(%q) accepts what encoding/csv refuses: %v", s, ref)
			}
			return
		}
		if err != nil {
			t.Fatalf("readCSV(%q) refuses what encoding/csv accepts: %v", s, err)
		}
		if len(got) == 0 && len(want) == 0 {
			return
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("readCSV(%q) = %q, encoding/csv gives %q", s, got, want)
		}
	})
}
