package sources

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	s, err := Load(filepath.Join("..", "..", "data"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		url, wantErr string
		legacy       bool
	}{
		// tuning.cc has 655+ lines at v2.30.7-1 (ncclTopoGetAlgoTime ends at 655 per the symbol index).
		{"https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/tuning.cc#L243-L618", "", false},
		{"https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/tuning.cc", "", false},
		{"https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/", "", false},
		{"https://github.com/NVIDIA/nccl/blob/master/src/graph/tuning.cc#L1", "tag master is not the pinned v2.30.7-1", false},
		{"https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/channel.h", "does not exist at v2.30.7-1", false},
		{"https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/tuning.cc#L1-L999999", "beyond the end", false},
		{"https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/tuning.cc#L40-L30", "runs backwards", false},
		{"https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/tuning.cc#foo", "not a line anchor", false},
		{"https://github.com/pytorch/pytorch/blob/v2.6.0/torch/csrc/distributed/c10d/reducer.cpp#L1-L10", "", false},
		{"https://github.com/pytorch/pytorch/blob/v2.5.0/torch/csrc/distributed/c10d/reducer.cpp", "not the pinned v2.6.0", false},
		{"https://github.com/NVIDIA/nccl/blob/v2.21.5-1/src/graph/tuning.cc", "not the pinned", false},
		{"https://github.com/NVIDIA/nccl/blob/v2.21.5-1/src/graph/tuning.cc", "", true},
		{"https://example.com/anything", "", false},
	}
	for _, tt := range tests {
		err := s.Check(tt.url, tt.legacy)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s: unexpected error %v", tt.url, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: error %v, want %q", tt.url, err, tt.wantErr)
		}
	}
}

func TestResolveAndDefined(t *testing.T) {
	s, err := Load(filepath.Join("..", "..", "data"))
	if err != nil {
		t.Fatal(err)
	}
	tg, ok := s.Resolve("https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/enqueue.cc#L2028-L2117")
	if !ok || tg.Path != "src/enqueue.cc" || tg.A != 2028 || tg.B != 2117 || tg.Tree.Tag != "v2.30.7-1" {
		t.Fatalf("Resolve = %+v, %v", tg, ok)
	}
	// topoGetAlgoInfo is static: only the file-local index has it
	// (enqueue.cc lines 2028-2117 at v2.30.7-1).
	if d := tg.Tree.Defined("src/enqueue.cc", "topoGetAlgoInfo"); len(d) != 1 || d[0].Line != 2028 || d[0].End != 2117 {
		t.Errorf("Defined(topoGetAlgoInfo) = %+v", d)
	}
	if tg, ok := s.Resolve("https://github.com/NVIDIA/nccl/blob/v2.21.5-1/src/transport/shm.cc#L41"); !ok || tg.Tree.Tag != "v2.21.5-1" || tg.A != 41 || tg.B != 41 {
		t.Errorf("legacy Resolve = %+v, %v", tg, ok)
	}
	for _, u := range []string{"https://github.com/NVIDIA/nccl/blob/master/src/init.cc#L1", "https://example.com/x#L1", "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/init.cc#foo"} {
		if _, ok := s.Resolve(u); ok {
			t.Errorf("Resolve(%s) resolved", u)
		}
	}
}
