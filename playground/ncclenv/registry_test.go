package ncclenv

import (
	"strings"
	"testing"
	"testing/fstest"
)

// TestLoadRegistryTables reads small tables: quoted fields with commas and
// newlines, short rows, and malformed tables that must name the file and
// the line (encoding/csv's "record on line N" wording).
func TestLoadRegistryTables(t *testing.T) {
	tests := []struct {
		name, table string
		wantVars    []string // names the registry must know
		wantErr     string   // substring of the error; empty when valid
	}{
		{"plain", "name,default\nNCCL_A,1\nNCCL_B,2\n", []string{"NCCL_A", "NCCL_B"}, ""},
		{"quoted", "name,description\nNCCL_A,\"has, comma\nand \"\"quotes\"\"\"\r\nNCCL_B,x\n", []string{"NCCL_A", "NCCL_B"}, ""},
		{"short row", "name,default,description\nNCCL_A\n", []string{"NCCL_A"}, ""},
		{"no name column", "default\n1\n", nil, `no "name" column`},
		{"open quote", "name,description\nNCCL_A,\"open\n", nil, "env/nccl.csv: parse error on line 2"},
		{"bare quote", "name,description\nNCCL_A,x\"y\n", nil, "env/nccl.csv: parse error on line 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := LoadRegistry(fstest.MapFS{ncclTable: {Data: []byte(tt.table)}})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range tt.wantVars {
				if _, ok := r.Lookup(n); !ok {
					t.Errorf("%s not known", n)
				}
			}
		})
	}
}
