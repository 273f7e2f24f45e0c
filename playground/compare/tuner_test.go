package compare

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/nccltests"
	"github.com/distributed-nav/distributed-nav/playground/tune"
)

const tunerHeader = "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"

// run formats an all_reduce_perf run on 4 ranks (busbw = 1.5 × algbw)
// with the given busbw at 1, 4 and 16 MiB.
func tunerRun(env string, bus [3]float64) string {
	var b strings.Builder
	b.WriteString("$ " + env + " ./build/all_reduce_perf -b 1M -e 16M -f 4 -g 4\n" + tunerHeader)
	for i, s := range []uint64{1 << 20, 4 << 20, 16 << 20} {
		alg := bus[i] / 1.5
		t := float64(s) / alg / 1e3
		b.WriteString(strings.Join([]string{u(s), u(s / 4), "float", "sum", "-1", f(t, 1), f(alg, 2), f(bus[i], 2), "0", f(t, 1), f(alg, 2), f(bus[i], 2), "0"}, "  ") + "\n")
	}
	return b.String()
}

func TestTunerFromRuns(t *testing.T) {
	in := tunerRun("NCCL_ALGO=Ring NCCL_PROTO=Simple", [3]float64{6, 12, 20}) +
		tunerRun("NCCL_ALGO=Tree NCCL_PROTO=LL", [3]float64{9, 10, 11}) +
		tunerRun("NCCL_ALGO=Ring NCCL_PROTO=LL128", [3]float64{7, 13, 18})
	file, err := nccltests.Parse(strings.NewReader(in), nccltests.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rs, _, err := TunerFromRuns(file.Runs)
	if err != nil {
		t.Fatal(err)
	}
	// Winners: 1 MiB Tree/LL (9), 4 MiB Ring/LL128 (13), 16 MiB Ring/Simple (20).
	want := []struct {
		a        tune.Algorithm
		p        tune.Protocol
		min, max uint64
	}{
		{tune.Tree, tune.LL, 0, 2 << 20},
		{tune.Ring, tune.LL128, 2<<20 + 1, 8 << 20},
		{tune.Ring, tune.Simple, 8<<20 + 1, math.MaxUint64},
	}
	if len(rs) != len(want) {
		t.Fatalf("ranges %+v", rs)
	}
	for i, w := range want {
		r := rs[i]
		if r.Algo != w.a || r.Proto != w.p || r.Min != w.min || r.Max != w.max || r.Func != tune.AllReduce || r.NRanks != 4 {
			t.Errorf("range %d: %+v, want %+v", i, r, w)
		}
	}
}

func TestTunerFromRunsCannot(t *testing.T) {
	cases := map[string]string{
		"one pair":      tunerRun("NCCL_ALGO=Ring NCCL_PROTO=Simple", [3]float64{6, 12, 20}) + tunerRun("NCCL_ALGO=Ring NCCL_PROTO=Simple", [3]float64{6, 12, 21}),
		"not pinned":    tunerRun("", [3]float64{6, 12, 20}) + tunerRun("NCCL_ALGO=Tree", [3]float64{6, 12, 20}),
		"list of algos": tunerRun("NCCL_ALGO=Ring,Tree NCCL_PROTO=Simple", [3]float64{6, 12, 20}) + tunerRun("NCCL_ALGO=Tree NCCL_PROTO=LL", [3]float64{6, 12, 20}),
	}
	for name, in := range cases {
		file, err := nccltests.Parse(strings.NewReader(in), nccltests.Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = TunerFromRuns(file.Runs)
		if !errors.Is(err, ErrNoChoice) {
			t.Errorf("%s: error %v", name, err)
		}
	}
}

func f(v float64, d int) string { return strconv.FormatFloat(v, 'f', d, 64) }
func u(v uint64) string         { return strconv.FormatUint(v, 10) }
