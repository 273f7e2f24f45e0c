package browsertest

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// checkSelection compares the selection table with `ncclsim tune --json`.
func checkSelection(b *browser, want map[string]any) {
	b.t.Helper()
	rows := eval[[][]string](b, `Array.from(document.querySelectorAll('.pg-selection tbody tr')).map((tr) =>
		[tr.children[1].textContent, tr.children[2].textContent].concat(Array.from(tr.querySelectorAll('[data-v]')).map((c) => c.dataset.v)))`)
	sel := want["selection"].([]any)
	if len(rows) != len(sel) {
		b.t.Fatalf("page shows %d sizes, ncclsim %d", len(rows), len(sel))
	}
	for i, s := range sel {
		m := s.(map[string]any)
		r := rows[i]
		if r[0] != m["algo"] || r[1] != m["proto"] {
			b.t.Errorf("%v bytes: page %s/%s, ncclsim %s/%s", m["bytes"], r[0], r[1], m["algo"], m["proto"])
		}
		for j, k := range []string{"bytes", "nchannels", "nthreads", "time_us", "algbw_GBps", "busbw_GBps"} {
			if !sameNumber(r[j+2], m[k].(float64)) {
				b.t.Errorf("%v bytes %s: page %s, ncclsim %v", m["bytes"], k, r[j+2], m[k])
			}
		}
	}
	log := eval[string](b, `document.getElementById('pg-tuning-log').textContent`)
	var lines []string
	for _, l := range want["tuning_log"].([]any) {
		lines = append(lines, l.(string))
	}
	lines = append(lines, want["thread_thresholds"].(string))
	if log != strings.Join(lines, "\n") {
		b.t.Errorf("TUNING log differs from ncclsim's:\n%s\n---\n%s", log, strings.Join(lines, "\n"))
	}
}

func TestAlgorithmsPage(t *testing.T) {
	b := newBrowser(t)
	b.open("playground/algorithms/")
	b.waitWarm()
	var timings []float64
	check := func(label string) {
		t.Helper()
		noError(b, label)
		args := command(b)
		if args[0] != "tune" {
			t.Fatalf("%s: command %v", label, args)
		}
		checkSelection(b, native(t, args...))
	}
	check("default")
	timings = append(timings, b.change("[name=preset]", "h100-sxm-8x"))
	check("h100")
	timings = append(timings, b.change("[name=coll]", "allgather"))
	check("h100 allgather")
	timings = append(timings, b.change("[name=NCCL_ALGO]", "Ring"))
	check("NCCL_ALGO=Ring")
	timings = append(timings, b.change("[name=NCCL_MAX_NCHANNELS]", "2"))
	check("NCCL_MAX_NCHANNELS=2")
	timings = append(timings, b.change("[name=NCCL_P2P_DISABLE]", "true"))
	check("NCCL_P2P_DISABLE=1")
	if got := strings.Join(command(b), " "); got != "tune --preset h100-sxm-8x --env NCCL_ALGO=Ring --env NCCL_MAX_NCHANNELS=2 --env NCCL_P2P_DISABLE=1 --coll allgather --json" {
		t.Errorf("command %q", got)
	}

	// Nonsense values: the message is next to the control that holds them,
	// and the next valid value works.
	for _, c := range []struct{ sel, value, want string }{
		{"[name=NCCL_PROTO]", "Fastest", "NCCL_PROTO"},
		{"[name=NCCL_ALGO]", "^Ring,Tree,PAT,NVLS,NVLSTree,CollNetDirect,CollNetChain", "no algorithm"},
		{"[name=env]", "NCCL_MIN_NCHANNELS=lots", "NCCL_MIN_NCHANNELS"},
		{"[name=env]", "NCCL_NOT_A_VARIABLE=1", "NCCL_NOT_A_VARIABLE"},
		{"[name=env]", "garbage line", "NAME=VALUE"},
	} {
		b.change(c.sel, c.value)
		msg := errorAt(b, c.sel)
		if !strings.HasPrefix(msg, "invalid: ") || !strings.Contains(msg, c.want) {
			t.Errorf("%s=%q: message %q, want one mentioning %q", c.sel, c.value, msg, c.want)
		}
		b.change(c.sel, "")
	}
	b.change("[name=NCCL_ALGO]", "Ring")
	check("after the errors")

	// Crossovers: NCCL's choice one byte below and at each is what the
	// list says.
	b.change("[name=NCCL_ALGO]", "")
	b.change("[name=NCCL_MAX_NCHANNELS]", "")
	b.change("[name=NCCL_P2P_DISABLE]", "false")
	b.change("[name=coll]", "allreduce")
	cross := eval[[][2]string](b, `Array.from(document.querySelectorAll('#pg-crossovers li')).map((li) => [li.dataset.bytes, li.textContent])`)
	if len(cross) == 0 {
		t.Fatal("no crossovers listed for h100-sxm-8x AllReduce")
	}
	for _, c := range cross[:min(2, len(cross))] {
		n, _ := strconv.ParseUint(c[0], 10, 64)
		from, to, _ := strings.Cut(strings.Fields(c[1])[0]+" "+strings.Fields(c[1])[2], " ")
		for _, q := range []struct {
			n    uint64
			want string
		}{{n - 1, from}, {n, to}} {
			v := native(t, "estimate", "--preset", "h100-sxm-8x", "--coll", "allreduce", "--bytes", strconv.FormatUint(q.n, 10), "--json")
			m := v["model"].(map[string]any)
			if got := m["algo"].(string) + "/" + m["proto"].(string); got != q.want {
				t.Errorf("at %d bytes ncclsim picks %s, the page lists %s", q.n, got, q.want)
			}
		}
	}
	// The chart's points carry the model's time of each pair (the formula's
	// result, to two decimals): compare those at 1 MiB with ncclsim.
	costs := native(t, "estimate", "--preset", "h100-sxm-8x", "--coll", "allreduce", "--bytes", "1M", "--json")["model"].(map[string]any)["costs"].(map[string]any)
	titles := eval[[]string](b, `Array.from(document.querySelectorAll('#pg-chart circle.pg-dot title')).map((x) => x.textContent).filter((x) => x.includes(' at 1 MiB:'))`)
	if len(titles) == 0 {
		t.Fatal("no chart point at 1 MiB")
	}
	for _, ti := range titles {
		pair := strings.Fields(ti)[0]
		want, ok := costs[pair].(float64)
		if !ok {
			t.Errorf("chart has %s, ncclsim has no cost for it", pair)
			continue
		}
		head := strings.Fields(ti[:strings.LastIndex(ti, " µs")])
		got, err := strconv.ParseFloat(head[len(head)-1], 64)
		if err != nil || got != math.Round(want*100)/100 {
			t.Errorf("%s: chart says %q, ncclsim %.4f µs", pair, ti, want)
		}
	}

	// A shared link reproduces the view.
	b.open("playground/algorithms/?preset=a100-sxm-8x&coll=reducescatter&env=NCCL_PROTO%3DSimple")
	if v := eval[string](b, `document.querySelector('[name=NCCL_PROTO]').value + '|' + document.querySelector('[name=coll]').value`); v != "Simple|reducescatter" {
		t.Errorf("inputs from the link: %s", v)
	}
	check("from a link")

	checkTimings(t, timings)
	b.noConsoleErrors()
	b.axe()
	b.open("playground/algorithms/?preset=h100-sxm-8x")
	b.screenshot("algorithms", "light")
	b.screenshot("algorithms", "dark")
	b.noConsoleErrors()
}
