package slug

import "testing"

func TestMake(t *testing.T) {
	tests := []struct{ in, want string }{
		{"NCCL Topo + Algorithm Selection", "nccl-topo-algorithm-selection"},
		{"DDP Reducer (~reducer.cpp)", "ddp-reducer-reducer-cpp"},
		{"  Common Issues & Debugging ", "common-issues-debugging"},
		{"NCCL Protocol (LL/LL128/Simple)", "nccl-protocol-ll-ll128-simple"},
		{"RTX 4090 Specifics", "rtx-4090-specifics"},
		{"", ""},
		{"---", ""},
		{"Über größe", "über-größe"},
	}
	for _, tt := range tests {
		if got := Make(tt.in); got != tt.want {
			t.Errorf("Make(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
