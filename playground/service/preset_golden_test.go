package service

import (
	"context"
	"encoding/json"
	"os"
	"reflect"
	"sort"
	"testing"
)

// TestPresetGolden pins, for every built-in system, the numbers each
// question answers: the searched graphs and GPU-pair paths (topo), NCCL's
// choice at every size of the sweep (tune, allreduce), the model and
// calibrated time of a 64 MiB allreduce (estimate) and the DDP step the
// step page opens on (step).
//
// Where the golden values come from: testdata/presets.golden.json was
// written by testdata/digest.py from the --json output of the ncclsim
// binary built at commit b112641, the last main before this package
// existed (the CLI then had its own pipeline and JSON structs; the
// estimator's physical model and the rtx2080ti preset are newer than the
// first version of this file, written from 27a2da8):
//
//	ncclsim topo --preset P --json
//	ncclsim tune --preset P --json
//	ncclsim estimate --preset P --coll allreduce --bytes 64M --json
//	ncclsim step --preset P --model ddp --params 1.5B --forward-ms 60 --backward-ms 120 --optimizer-ms 10 --json
//
// The test computes the same digest from the service's typed results
// (through encoding/json, as ncclsim prints them), so a change of any
// pinned number, of a key, or of a preset fails here. A deliberate model
// change regenerates the file from the new ncclsim and says why in its
// commit.
func TestPresetGolden(t *testing.T) {
	raw, err := os.ReadFile("testdata/presets.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	s := New()
	list, err := s.Presets()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != len(want) {
		t.Errorf("%d presets, the golden file has %d", len(list), len(want))
	}
	ctx := context.Background()
	for _, p := range list {
		t.Run(p.Name, func(t *testing.T) {
			req := &Request{Preset: p.Name}
			topo, err := s.Topo(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			tune, err := s.Tune(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			est, err := s.Estimate(ctx, &Request{Preset: p.Name, Coll: "allreduce", Bytes: "64M"})
			if err != nil {
				t.Fatal(err)
			}
			step, err := s.Step(ctx, &Request{Preset: p.Name, Step: StepInputs{Mode: "ddp", Params: "1.5B", ForwardMs: "60", BackwardMs: "120", OptimizerMs: "10"}})
			if err != nil {
				t.Fatal(err)
			}
			var graphs, selection []any
			for _, g := range topo.Graphs {
				graphs = append(graphs, []any{g.Pattern, g.NChannels, g.BwIntra, g.BwInter, g.TypeIntra + "/" + g.TypeInter})
			}
			pairs := map[string]bool{}
			for _, x := range topo.GPUPairs {
				pairs[x.Path+" "+x.Transport] = true
			}
			pairList := []string{} // a one-GPU system has no pairs: [] as digest.py writes it
			for k := range pairs {
				pairList = append(pairList, k)
			}
			sort.Strings(pairList)
			for _, r := range tune.Selection {
				selection = append(selection, []any{r.Bytes, r.Algo + "/" + r.Proto, r.NChannels, r.TimeUs})
			}
			got := map[string]any{
				"ranks": topo.System.Ranks, "p2p_level": topo.System.P2PLevel, "graphs": graphs, "pairs": pairList,
				"comm_nchannels": tune.CommNChannels, "selection": selection,
				"estimate_model_us": est.Model.TimeUs, "estimate_calibrated_us": est.TimeUs, "estimate_class": est.Calibrated.Class,
				"step_ms": step.DDP.StepMs, "speedup": step.DDP.Speedup,
			}
			// Through JSON, as ncclsim prints it, so numbers compare as the
			// golden file's float64 values.
			b, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			var norm map[string]any
			if err := json.Unmarshal(b, &norm); err != nil {
				t.Fatal(err)
			}
			w, _ := want[p.Name].(map[string]any)
			for k, v := range w {
				if !reflect.DeepEqual(norm[k], v) {
					t.Errorf("%s: got %v, golden %v", k, norm[k], v)
				}
			}
			if len(w) != len(norm) {
				t.Errorf("golden has %d keys, the digest %d", len(w), len(norm))
			}
		})
	}
}
