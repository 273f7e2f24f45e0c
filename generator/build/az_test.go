package build

import "testing"

// Titles with numbers sort by their value (the subsystems are numbered
// 1 to 12), text by its bytes as before.
func TestNaturalLess(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"2. workncc", "10. nccl protocol", true},
		{"10. nccl protocol", "2. workncc", false},
		{"1. processgroupnccl", "1. processgroupnccl", false},
		{"nccl_p2p_level", "nccl_p2p_net_chunksize", true},
		{"ll", "ll128", true},
		{"ll128", "ll", false},
		{"v2.21", "v2.9", false},
		{"007", "7a", true},
		{"abc", "abd", true},
	}
	for _, tc := range tests {
		if got := naturalLess(tc.a, tc.b); got != tc.want {
			t.Errorf("naturalLess(%q, %q) = %t, want %t", tc.a, tc.b, got, tc.want)
		}
	}
}
