//go:build js && wasm

package jsapi

import (
	"encoding/json"
	"os"
	"strings"
	"syscall/js"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/service"
)

// These tests run under node:
//
//	GOOS=js GOARCH=wasm go test -exec="$(go env GOROOT)/lib/wasm/go_js_wasm_exec" ./playground/wasm/...
//
// They call the functions through JavaScript values, as the page does.

// newAPI registers a fresh API object on a scratch JS object.
func newAPI(t *testing.T) js.Value {
	t.Helper()
	holder := js.Global().Get("Object").New()
	RegisterDoctor(holder, service.New())
	doc := holder.Get("distnav").Get("doctor")
	s := service.New()
	o := RegisterModel(holder, s, map[string]Question{
		service.PageTopo: s.AnswerTopo, service.PageTune: s.AnswerTune, service.PageEstimate: s.AnswerEstimate,
		service.PageEstimator: s.AnswerEstimator, service.PageStep: s.AnswerStep,
	})
	// The tests call every function on one object; each page's binary
	// registers one question.
	o.Set("doctor", doc)
	return o
}

// answer is a decoded reply.
type answer map[string]any

// call calls fn and decodes the reply's JSON; the figures are put under
// "figures".
func call(t *testing.T, o js.Value, fn string, args ...any) answer {
	t.Helper()
	v := o.Call(fn, args...)
	if v.Type() != js.TypeObject || v.Get("json").Type() != js.TypeString {
		t.Fatalf("%s returned %s, want {json, figures}", fn, v.Type())
	}
	text := v.Get("json").String()
	var a answer
	if err := json.Unmarshal([]byte(text), &a); err != nil {
		t.Fatalf("%s returned invalid JSON: %v\n%.300s", fn, err, text)
	}
	figs := map[string]any{}
	keys := js.Global().Get("Object").Call("keys", v.Get("figures"))
	for i := 0; i < keys.Length(); i++ {
		k := keys.Index(i).String()
		figs[k] = v.Get("figures").Get(k).String()
	}
	a["figures"] = figs
	return a
}

// errField returns the field of an error reply, failing if it is not one.
func errField(t *testing.T, a answer) (field, message string) {
	t.Helper()
	e, ok := a["error"].(map[string]any)
	if !ok {
		t.Fatalf("want an error reply, got keys %v", keys(a))
	}
	return e["field"].(string), e["message"].(string)
}

// ok fails the test on an error reply.
func ok(t *testing.T, a answer) answer {
	t.Helper()
	if e, bad := a["error"]; bad {
		t.Fatalf("error reply: %v", e)
	}
	return a
}

func keys(a answer) []string {
	var out []string
	for k := range a {
		out = append(out, k)
	}
	return out
}

func obj(kv map[string]any) js.Value { return js.ValueOf(kv) }

func TestPresetsAndVersion(t *testing.T) {
	o := newAPI(t)
	if v := o.Get("version").String(); v != service.NCCLVersion {
		t.Errorf("version = %q", v)
	}
	v := o.Call("presets")
	var list []service.PresetInfo
	if err := json.Unmarshal([]byte(v.String()), &list); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range list {
		// The pickers list presets by title under their group
		// (data/topologies/presets.tsv files h100-sxm-8x under NVSwitch).
		if p.Name == "h100-sxm-8x" && p.Description != "" && p.Title != "" && strings.Contains(p.Group, "NVSwitch") {
			found = true
		}
	}
	if !found {
		t.Errorf("h100-sxm-8x missing from %v", list)
	}
	x := o.Call("presetXML", "rtx4090-2x").String()
	if !strings.Contains(x, "<system") {
		t.Errorf("presetXML: %.100s", x)
	}
}

func TestTopoTuneEstimate(t *testing.T) {
	o := newAPI(t)
	topo := ok(t, call(t, o, "topo", obj(map[string]any{"preset": "h100-sxm-8x", "graph": "ring", "channel": 0})))
	res := topo["result"].(map[string]any)
	if n := len(res["gpus"].([]any)); n != 8 {
		t.Errorf("%d GPUs, want 8", n)
	}
	figs := topo["figures"].(map[string]any)
	if svg := figs["topology"].(string); !strings.HasPrefix(svg, "<svg") || !strings.Contains(svg, `data-channel="0"`) {
		t.Errorf("topology figure: %.200s", svg)
	}
	tune := ok(t, call(t, o, "tune", obj(map[string]any{"preset": "h100-sxm-8x", "coll": "allreduce", "env": []any{"NCCL_PROTO=Simple"}})))
	sel := tune["result"].(map[string]any)["selection"].([]any)
	for _, r := range sel {
		if p := r.(map[string]any)["proto"]; p != "Simple" {
			t.Fatalf("NCCL_PROTO=Simple but %v chosen", p)
		}
	}
	est := ok(t, call(t, o, "estimate", obj(map[string]any{"preset": "rtx4090-2x", "coll": "allreduce", "bytes": "64M"})))
	if b := est["result"].(map[string]any)["bytes"].(float64); b != 64<<20 {
		t.Errorf("bytes = %v", b)
	}
}

// TestBadInput feeds every kind of bad input and checks that each gives an
// error tied to its field, and that a valid call afterwards still works.
func TestBadInput(t *testing.T) {
	o := newAPI(t)
	huge := strings.Repeat("<a>", 7<<20) // 21 MB of text
	cases := []struct {
		name  string
		fn    string
		arg   any
		field string
	}{
		{"malformed XML", "topo", obj(map[string]any{"xml": "<system version=\"1\"><cpu"}), "xml"},
		{"not XML", "topo", obj(map[string]any{"xml": "hello"}), "xml"},
		{"20 MB paste", "topo", obj(map[string]any{"xml": huge}), "xml"},
		{"unknown preset", "topo", obj(map[string]any{"preset": "<script>"}), "preset"},
		{"negative nodes", "topo", obj(map[string]any{"preset": "h100-sxm-8x", "nodes": -2}), "nodes"},
		{"fractional nodes", "topo", obj(map[string]any{"preset": "h100-sxm-8x", "nodes": 1.5}), "nodes"},
		{"absurd nodes", "topo", obj(map[string]any{"preset": "h100-sxm-8x", "nodes": 1e12}), "nodes"},
		{"NaN nodes", "topo", obj(map[string]any{"preset": "h100-sxm-8x", "nodes": js.Global().Get("NaN")}), "nodes"},
		{"text nodes", "topo", obj(map[string]any{"preset": "h100-sxm-8x", "nodes": "many"}), "nodes"},
		{"bad p2p", "topo", obj(map[string]any{"preset": "h100-sxm-8x", "p2p": "maybe"}), "p2p"},
		{"unknown variable", "tune", obj(map[string]any{"preset": "h100-sxm-8x", "env": []any{"NCCL_ALGOO=Ring"}}), "env"},
		{"nonsense NCCL_ALGO", "tune", obj(map[string]any{"preset": "h100-sxm-8x", "env": []any{"NCCL_ALGO=fastest"}}), "env"},
		{"nonsense channels", "tune", obj(map[string]any{"preset": "h100-sxm-8x", "env": []any{"NCCL_MAX_NCHANNELS=lots"}}), "env"},
		{"no equals", "tune", obj(map[string]any{"preset": "h100-sxm-8x", "env": []any{"NCCL_ALGO"}}), "env"},
		{"env not a list", "tune", obj(map[string]any{"preset": "h100-sxm-8x", "env": 5}), "env"},
		{"bad coll", "tune", obj(map[string]any{"preset": "h100-sxm-8x", "coll": "alltoall"}), "coll"},
		{"negative bytes", "estimate", obj(map[string]any{"preset": "h100-sxm-8x", "coll": "allreduce", "bytes": "-5"}), "bytes"},
		{"absurd bytes", "estimate", obj(map[string]any{"preset": "h100-sxm-8x", "coll": "allreduce", "bytes": "99999999999999999999T"}), "bytes"},
		{"fractional bytes", "estimate", obj(map[string]any{"preset": "h100-sxm-8x", "coll": "allreduce", "bytes": "1.3K"}), "bytes"},
		{"bad dtype", "estimate", obj(map[string]any{"preset": "h100-sxm-8x", "coll": "allreduce", "bytes": "1M", "dtype": "complex"}), "dtype"},
		{"request not an object", "topo", 42, ""},
		{"no request", "tune", nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var a answer
			if c.arg == nil {
				a = call(t, o, c.fn)
			} else {
				a = call(t, o, c.fn, c.arg)
			}
			field, msg := errField(t, a)
			if field != c.field || msg == "" {
				t.Errorf("field %q message %q, want field %q", field, msg, c.field)
			}
			// The module keeps working.
			next := call(t, o, "topo", obj(map[string]any{"preset": "rtx4090-2x"}))
			if _, bad := next["error"]; bad {
				t.Fatalf("valid input after %s failed: %v", c.name, next["error"])
			}
		})
	}
}

// TestNamesAreEscaped pastes a topology whose NIC name is markup and checks
// that the figures carry it only as escaped text.
func TestNamesAreEscaped(t *testing.T) {
	o := newAPI(t)
	xml := o.Call("presetXML", "a100-sxm-8x").String()
	evil := strings.Replace(xml, `name="mlx5_0"`, `name="&lt;img src=x onerror=alert(1)&gt;"`, 1)
	a := ok(t, call(t, o, "topo", obj(map[string]any{"xml": evil})))
	figs := a["figures"].(map[string]any)
	for k, v := range figs {
		if s := v.(string); strings.Contains(s, "<img") {
			t.Errorf("figure %s contains raw markup from the XML", k)
		}
	}
	if !strings.Contains(figs["matrix"].(string), "&lt;img") {
		t.Errorf("the escaped name is missing from the matrix")
	}
}

func TestGuardRecoversPanics(t *testing.T) {
	out := guardReply(func() service.Reply { var m map[string]int; m["x"] = 1; return service.Reply{} }).(js.Value)
	var a answer
	if err := json.Unmarshal([]byte(out.Get("json").String()), &a); err != nil {
		t.Fatal(err)
	}
	if _, msg := errField(t, a); !strings.Contains(msg, "internal error") {
		t.Errorf("message %q", msg)
	}
}

// TestProgressAndTimeout runs a long search (the 32-GPU test host, whose
// search takes about 0.6 s natively) with a progress callback and a timeout
// too short to finish.
func TestProgressAndTimeout(t *testing.T) {
	o := newAPI(t)
	xml, err := os.ReadFile("../../topo/testdata/slow-search-32gpu.xml")
	if err != nil {
		t.Fatal(err)
	}
	var calls int
	cb := js.FuncOf(func(_ js.Value, args []js.Value) any { calls++; return nil })
	defer cb.Release()
	a := call(t, o, "topo", obj(map[string]any{"xml": string(xml), "onProgress": cb, "timeoutMs": 150}))
	// The request gave the timeout, so the error names it (a search that
	// runs out of the default time, which the page uses, names nodes).
	field, msg := errField(t, a)
	if field != "timeout" || !strings.Contains(msg, "did not finish") {
		t.Errorf("field %q message %q", field, msg)
	}
	if calls == 0 {
		t.Errorf("progress was never reported")
	}
}

func TestEstimatorStepDoctor(t *testing.T) {
	o := newAPI(t)
	est := ok(t, call(t, o, "estimator", obj(map[string]any{"preset": service.EstimatorDefaultPreset, "coll": "allreduce", "bytes": "1M"})))
	if m := est["measurements"].([]any); len(m) == 0 {
		t.Error("no measurements")
	}
	step := ok(t, call(t, o, "step", obj(map[string]any{"preset": "rtx4090-8x", "params": "1.5B", "forwardMs": "60", "backwardMs": 120, "firstIteration": true})))
	if sp := step["result"].(map[string]any)["ddp"].(map[string]any)["speedup"].(float64); !(sp > 0 && sp <= 8) {
		t.Errorf("speedup %v", sp)
	}
	if f := step["figures"].(map[string]any)["timeline"].(string); !strings.HasPrefix(f, "<svg") {
		t.Error("no timeline")
	}
	for _, c := range []struct {
		arg   map[string]any
		field string
	}{
		{map[string]any{"preset": "rtx4090-8x", "params": "lots"}, "params"},
		{map[string]any{"preset": "rtx4090-8x", "params": "1B", "forwardMs": "-3"}, "forward_ms"},
		{map[string]any{"preset": "rtx4090-8x", "params": "1B", "mode": "zero3"}, "mode"},
		{map[string]any{"preset": "rtx4090-8x", "params": "1B", "layers": "0"}, "layers"},
	} {
		if f, _ := errField(t, call(t, o, "step", obj(c.arg))); f != c.field {
			t.Errorf("%v: field %q, want %q", c.arg, f, c.field)
		}
	}
	doc := ok(t, call(t, o, "doctor", obj(map[string]any{"log": "host:1:2 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n", "env": "NCCL_ALGOO=Ring\n"})))
	if _, okk := doc["result"].(map[string]any)["diagnoses"]; !okk {
		t.Error("no diagnoses")
	}
	if f, _ := errField(t, call(t, o, "doctor", obj(map[string]any{"log": strings.Repeat("x", 9<<20)}))); f != "log" {
		t.Errorf("huge log: field %q", f)
	}
	if f, _ := errField(t, call(t, o, "doctor", obj(map[string]any{}))); f != "log" {
		t.Errorf("empty doctor request: field %q", f)
	}
}
