package presetmatch

import (
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/presets"
)

// The expected names are read off data/topologies/presets.tsv: the title
// that names the GPU model and, among those, the GPU count and the group
// ("Multi-node" or not) the case asks for.
func TestBest(t *testing.T) {
	tests := []struct {
		gpu            string
		perHost, hosts int
		want           string
		exact          bool
	}{
		{"NVIDIA GeForce RTX 4090", 2, 1, "rtx4090-2x", true},
		{"NVIDIA GeForce RTX 4090", 4, 1, "rtx4090-4x", true},
		{"NVIDIA GeForce RTX 4090", 3, 1, "rtx4090-4x", false},  // the smallest larger count
		{"NVIDIA GeForce RTX 4090", 16, 1, "rtx4090-8x", false}, // more than any preset: the largest
		{"NVIDIA H100 80GB HBM3", 8, 1, "h100-sxm-8x", true},
		{"NVIDIA H100 80GB HBM3", 8, 2, "h100-8x-ib", true},
		{"NVIDIA A100-SXM4-80GB", 8, 1, "a100-sxm-8x", true},
		{"NVIDIA A100-SXM4-40GB", 4, 1, "a100-sxm-4x-nvswitch", true},
		{"NVIDIA A100-PCIE-40GB", 1, 2, "a100pcie-1x-2socket-hdr-sys", true},
		{"NVIDIA L40S", 2, 2, "l40s-2x-2socket-roce", true},
		{"NVIDIA A10G", 1, 2, "a10g-1x-aws-g5-10g", true},
		{"Tesla T4", 1, 2, "t4-1x-g4dn-efa100", true},
		{"NVIDIA GeForce RTX 5090", 8, 1, "rtx5090-8x-2socket-p2p", true},
		{"NVIDIA GeForce RTX 2080 Ti", 2, 1, "rtx2080ti-2x-pcie-switch", true},
		{"NVIDIA A40", 2, 1, "a40-2x-node-shm", true},
		{"NVIDIA GeForce RTX 3090", 0, 0, "rtx3090-4x-nvlink", true},
		{"NVIDIA B200", 8, 2, "b200-8x-a4-roce", true},
		{"Tesla V100-PCIE-32GB", 4, 1, "v100pcie-4x-pcie-switch", true},
	}
	for _, tt := range tests {
		got, ok := Best(tt.gpu, tt.perHost, tt.hosts)
		if !ok || got.Name != tt.want || got.Exact != tt.exact {
			t.Errorf("Best(%q, %d, %d) = %+v, %v; want %s exact=%v", tt.gpu, tt.perHost, tt.hosts, got, ok, tt.want, tt.exact)
		}
	}
	// GPU models no preset names, and an SXM module whose chip only a
	// box of PCIe cards has (a "PCIe, ..." group of presets.tsv).
	for _, gpu := range []string{"Tesla V100-SXM2-32GB", "NVIDIA GB200", "", "cpu"} {
		if got, ok := Best(gpu, 8, 1); ok {
			t.Errorf("Best(%q) = %+v; want none", gpu, got)
		}
	}
}

// Every name the table gives is a preset the model can load, and every
// preset is in the table: the doctor's suggestions always open.
func TestTableMatchesPresets(t *testing.T) {
	all, err := presets.List()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, p := range all {
		names[p.Name] = true
	}
	if len(entries()) != len(all) {
		t.Errorf("%d table entries, %d presets", len(entries()), len(all))
	}
	for _, e := range entries() {
		if !names[e.name] {
			t.Errorf("table names %s, which is not a preset", e.name)
		}
		if e.gpus == 0 {
			t.Errorf("%s: title %q gives no GPU count", e.name, e.title)
		}
		if len(e.tokens) == 0 {
			t.Errorf("%s: title %q names no GPU model", e.name, e.title)
		}
	}
}
