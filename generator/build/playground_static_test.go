package build

import (
	"context"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/service"
)

func TestStaticHTML(t *testing.T) {
	for _, tc := range []struct {
		widget string
		want   []string
	}{
		{"topology", []string{`<svg`, `class="pg-matrix"`, "ncclsim topo --preset rtx4090-8x --json", "RING"}},
		{"algorithms", []string{`class="pg-chart pg-wide"`, `class="pg-chart pg-narrow"`, `pg-selection`, "threadThresholds", "ncclsim tune --preset rtx4090-8x --json"}},
		{"estimator", []string{"busbw", `pg-marker`, service.EstimatorDefaultPreset, "ncclsim estimate --preset " + service.EstimatorDefaultPreset}},
		{"step", []string{`pg-timeline`, "ncclsim step --preset rtx4090-8x --model ddp --params 1.5B"}},
	} {
		t.Run(tc.widget, func(t *testing.T) {
			a, err := staticHTML(context.Background(), tc.widget, "rtx4090-8x")
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(a, w) {
					t.Errorf("static %s lacks %q", tc.widget, w)
				}
			}
			// Markdown ends a raw HTML block at a blank line: each block
			// must be one line.
			for _, blk := range strings.Split(strings.TrimSpace(a), "\n\n") {
				if strings.Contains(blk, "\n\n") {
					t.Errorf("a block contains a blank line")
				}
			}
			b, _ := staticHTML(context.Background(), tc.widget, "rtx4090-8x")
			if a != b {
				t.Error("not deterministic")
			}
		})
	}
	if s, err := staticHTML(context.Background(), "doctor", "x"); s != "" || err != nil {
		t.Errorf("doctor: %q %v", s, err)
	}
	if _, err := staticHTML(context.Background(), "nope", "rtx4090-8x"); err == nil {
		t.Error("unknown widget accepted")
	}
}
