package browsertest

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/data"
	"github.com/distributed-nav/distributed-nav/playground/estimate"
	"github.com/distributed-nav/distributed-nav/playground/service"
)

// nativeCompare answers the page's `ncclsim compare ... --nccl-tests FILE`
// line for text by calling package service in this process, as
// `ncclsim compare --json` prints it, decoded.
func nativeCompare(t *testing.T, text string, args []string) map[string]any {
	t.Helper()
	q, req, err := service.ParseCommand(args)
	if err != nil || q != "compare" {
		t.Fatalf("%s: %q %v", strings.Join(args, " "), q, err)
	}
	res, err := service.New().Compare(context.Background(), req, service.CompareRequest{NCCLTests: service.NCCLTestsInput{Text: strings.NewReader(text), Name: "pasted output"}})
	if err != nil {
		t.Fatalf("service compare: %v", err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestEstimatorPaste pastes a published nccl-tests log (the 2x RTX 4090
// SHM AllReduce run, whose preset the estimator opens on) into the
// estimator page: the page draws one marker per size with a measured busbw
// above zero over the curves, with a legend entry, and its table shows the
// numbers the compare question answers for the command line the page
// offers. Garbage is refused next to the box with its line number while
// the curves stay.
func TestEstimatorPaste(t *testing.T) {
	sets, err := estimate.LoadDatasets(data.Measurements, "measurements")
	if err != nil {
		t.Fatal(err)
	}
	var raw string
	for _, d := range sets {
		if d.ID == "rtx4090-2gpu-shm-xsocket-allreduce" {
			raw = d.Raw
		}
	}
	if strings.TrimSpace(raw) == "" {
		t.Fatal("dataset rtx4090-2gpu-shm-xsocket-allreduce (with its raw text) missing")
	}
	b := newBrowser(t)
	b.open("playground/estimator/")
	b.waitWarm()
	b.change("[name=nccl_tests]", raw)
	noError(b, "paste")
	cmd := strings.Fields(eval[string](b, `document.querySelector('#pg-compare-command').textContent`))
	if len(cmd) < 3 || cmd[0] != "ncclsim" || cmd[1] != "compare" {
		t.Fatalf("command %q", cmd)
	}
	want := nativeCompare(t, raw, cmd[1:])
	rows := want["rows"].([]any)
	positive := 0
	for _, r := range rows {
		if r.(map[string]any)["measured_busbw_GBps"].(float64) > 0 {
			positive++
		}
	}
	if n := eval[int](b, `document.querySelectorAll('#pg-busbw svg.pg-wide g.pg-yours circle.pg-marker').length`); n != positive+1 {
		t.Errorf("%d markers of your run drawn (with the legend's), want %d + 1", n, positive)
	}
	if !strings.Contains(eval[string](b, `document.querySelector('#pg-busbw').textContent`), "your run") {
		t.Error("no legend entry for your run")
	}
	got := eval[[][]string](b, `Array.from(document.querySelectorAll('.pg-compare tr[data-row=compare]')).map((tr) => Array.from(tr.querySelectorAll('td')).slice(0, 3).map((c) => c.dataset.v))`)
	if len(got) != len(rows) {
		t.Fatalf("page lists %d sizes, the service %d", len(got), len(rows))
	}
	for i, r := range rows {
		m := r.(map[string]any)
		checkNumbers(b, "row "+strconv.FormatFloat(m["bytes"].(float64), 'f', -1, 64), got[i], []float64{m["measured_busbw_GBps"].(float64), m["model_busbw_GBps"].(float64), m["calibrated_busbw_GBps"].(float64)})
	}
	if len(want["findings"].([]any)) > 0 {
		if f := eval[string](b, `document.querySelector('#pg-compare .pg-finding h3')?.textContent || ''`); f == "" {
			t.Error("the service has findings; the page shows none")
		}
	}
	b.change("[name=nccl_tests]", "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n 1048576 262144 float sum -1 abc 1 1 0 1 1 1 0\n")
	if msg := errorAt(b, "[name=nccl_tests]"); !strings.HasPrefix(msg, "invalid: ") || !strings.Contains(msg, "line 2") {
		t.Errorf("garbage: %q next to the box", msg)
	}
	if n := eval[int](b, `document.querySelectorAll('#pg-busbw .pg-line').length`); n == 0 {
		t.Error("the curves went away with the bad paste")
	}
	b.noConsoleErrors()
	b.axe()
}

// TestStepFromModel: choosing a GPU on the step page derives the compute
// from the model size; the page states its assumptions (with the
// throughput's source) and shows the forward and backward times and the
// memory total the service answers for the page's command.
func TestStepFromModel(t *testing.T) {
	b := newBrowser(t)
	b.open("playground/step/")
	b.waitWarm()
	b.change("[name=gpu]", "RTX-4090")
	noError(b, "gpu")
	args := command(b)
	if !strings.Contains(strings.Join(args, " "), "--gpu RTX-4090") {
		t.Fatalf("command %q has no --gpu", args)
	}
	want := native(t, args...)
	c := want["compute"].(map[string]any)
	mem := want["memory"].(map[string]any)
	text := eval[string](b, `document.querySelector('#pg-step-summary').textContent`)
	for _, s := range []string{
		"forward " + strconv.FormatFloat(c["forward_ms"].(float64), 'f', 2, 64) + " ms",
		"backward " + strconv.FormatFloat(c["backward_ms"].(float64), 'f', 2, 64) + " ms",
		strconv.FormatFloat(mem["total_bytes"].(float64)/1e9, 'f', 2, 64) + " GB",
		mem["optimizer"].(string), "Assumed",
	} {
		if !strings.Contains(text, s) {
			t.Errorf("summary lacks %q: %.600s", s, text)
		}
	}
	if href := eval[string](b, `document.querySelector('#pg-step-assumptions a')?.href || ''`); !strings.HasPrefix(href, "https://") {
		t.Errorf("no source link in the assumptions (%q)", href)
	}
	if hidden := eval[bool](b, `document.querySelector('[name=forwardMs]').closest('.pg-field').hidden`); !hidden {
		t.Error("the typed forward time is still shown with a GPU chosen")
	}
	b.change("[name=mfu]", "2")
	if msg := errorAt(b, "[name=mfu]"); !strings.HasPrefix(msg, "invalid: ") {
		t.Errorf("mfu 2: %q", msg)
	}
	b.change("[name=mfu]", "0.5")
	noError(b, "mfu 0.5")
	b.noConsoleErrors()
	b.axe()
}
