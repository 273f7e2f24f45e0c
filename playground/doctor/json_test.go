package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/jsonw"
	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
)

// checkSameJSON fails unless r.AppendJSON writes byte for byte what
// encoding/json's Marshal writes for r. It also checks that AppendJSON
// appends after existing bytes rather than overwriting them.
func checkSameJSON(t testing.TB, name string, r *Report) {
	t.Helper()
	want, err := json.Marshal(r)
	if err != nil {
		t.Fatalf("%s: encoding/json: %v", name, err)
	}
	got := r.AppendJSON(nil)
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		lo := max(0, i-80)
		t.Fatalf("%s: AppendJSON differs from encoding/json at byte %d\n got …%s\nwant …%s",
			name, i, got[lo:min(len(got), i+80)], want[lo:min(len(want), i+80)])
	}
	if prefixed := r.AppendJSON([]byte("[1,")); string(prefixed) != "[1,"+string(want) {
		t.Fatalf("%s: AppendJSON with a prefix wrote %.80s", name, prefixed)
	}
}

// hostile holds every character class the JSON string encoder treats
// specially: HTML characters, quotes and backslashes, the short escapes,
// other control characters, DEL, the JavaScript line breaks U+2028 and
// U+2029, a literal U+FFFD, multi-byte text, and invalid UTF-8 (a stray
// continuation byte, a truncated sequence, an encoded surrogate).
const hostile = "a<b>&c\"d\\e/f\n\r\t\b\f\x00\x01\x1f\x7f\u2028\u2029\ufffd é 日本 \xff\xfe\xe6\x97\xed\xa0\x80 </script>"

// jsonFloats are magnitudes on both sides of encoding/json's switches
// between 'f' and 'e' notation (1e-6 and 1e21), negative zero, the
// extremes of float64, and values whose shortest form is long.
var jsonFloats = []float64{
	0, math.Copysign(0, -1), 1, -2.5, 0.1, 1.0 / 3, 123456.789, 40, 5000, 12.5,
	1e-6, 9.999999e-7, 1e-7, -1e-7, 1.5e-10, 1e-300, 5e-324,
	1e20, 9.99999e20, 1e21, -1e21, 1.2345e22, 1e100, math.MaxFloat64, -math.MaxFloat64,
}

// fill sets every exported field of v, recursively, to a value derived
// from n: strings to hostile text (or "" every fourth n, to test
// omitempty), ints to -1, 0 or 1, floats to one of jsonFloats, slices to
// two (or, every third n, zero) elements, maps to two entries, pointers to
// a filled value. A field added to a type later, and forgotten by
// AppendJSON, then shows up as a difference from encoding/json.
func fill(v reflect.Value, n, depth int) {
	if depth > 8 {
		return
	}
	switch v.Kind() {
	case reflect.String:
		if n%4 != 3 {
			v.SetString(hostile[n%5:] + strings.Repeat("x", n%3))
		}
	case reflect.Bool:
		v.SetBool(n%2 == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(n%3) - 1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(jsonFloats[n%len(jsonFloats)])
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), n+1, depth+1)
		v.Set(p)
	case reflect.Slice:
		size := 2
		if n%3 == 2 {
			size = 0
		}
		s := reflect.MakeSlice(v.Type(), size, size)
		for i := 0; i < size; i++ {
			fill(s.Index(i), n+i, depth+1)
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for i, k := range []string{"zeta", "alpha<&>", hostile} {
			kv := reflect.New(v.Type().Key()).Elem()
			kv.SetString(k)
			ev := reflect.New(v.Type().Elem()).Elem()
			fill(ev, n+i, depth+1)
			m.SetMapIndex(kv, ev)
		}
		v.Set(m)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), n+i, depth+1)
			}
		}
	}
}

// envDumps are pasted environments: plain, hostile, and empty.
var envDumps = []string{
	"",
	"NCCL_P2P_DISABLE=1\nNCCL_ALGOO=Ring\nNCCL_SOCKET_IFNAME=eth0\n",
	"export NCCL_IB_HCA='<mlx5_0>&\"x\"'\nNCCL_DEBUG=INFO\x01\nNCCL_PROTO=LL\u2028\nTORCH_NCCL_BLOCKING_WAIT=1\n",
	"NCCL_\xff=\xfe\nNCCL_MAX_NRINGS=4\nNCCL_P2P_LEVEL=PHB\nNCCL_NTHREADS=9999999999999999999999\n=\n</script>=<b>\n",
	"declare -x NCCL_ALGO=\"^Tree;allreduce:ring\"\nNCCL_NET_GDR_LEVEL=5\nTORCH_NCCL_ASYNC_ERROR_HANDLING=2\n",
}

// buildReport assembles a Report as ncclsim doctor and the playground do.
func buildReport(t testing.TB, logText, envText string, opts Options) *Report {
	t.Helper()
	r := &Report{Diagnoses: []Diagnosis{}}
	env := ncclenv.Env{}
	if envText != "" {
		entries, _ := ParseEnvText(envText)
		kv := make(map[string]string, len(entries))
		for _, e := range entries {
			kv[e.Name] = e.Value
		}
		env = ncclenv.New(kv)
		r.EnvFindings = LintEnv(envText)
	}
	if logText != "" {
		s, err := ParseLogContext(context.Background(), strings.NewReader(logText), opts)
		if err != nil {
			t.Fatal(err)
		}
		r.Summary = s
	}
	r.Diagnoses = Diagnose(r.Summary, env)
	return r
}

func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	type tc struct {
		name string
		r    *Report
	}
	cases := []tc{
		{"zero", &Report{}},
		{"empty lists", &Report{
			Summary:     &Summary{Versions: []VersionSeen{}, Hosts: []string{}, Tuning: &Tuning{MaxThreads: map[string][]int{}, Cells: []TuningCell{}}},
			Diagnoses:   []Diagnosis{{Evidence: []LineRef{}, Links: []Link{}}},
			EnvFindings: []Finding{{Suggestions: []string{}}},
		}},
		{"nil inner lists", &Report{
			Summary:     &Summary{Rings: []Ring{{}}, Trees: []TreeLink{{}}, Tuning: &Tuning{MaxThreads: map[string][]int{"Ring": nil}}},
			Diagnoses:   []Diagnosis{{}},
			EnvFindings: []Finding{{}},
		}},
		{"severities", &Report{Diagnoses: []Diagnosis{{Severity: Info}, {Severity: Warning}, {Severity: Error}, {Severity: 9}, {Severity: -1}}}},
	}
	for n := 0; n < 12; n++ {
		r := &Report{}
		fill(reflect.ValueOf(r).Elem(), n, 0)
		cases = append(cases, tc{"filled " + string(rune('a'+n)), r})
	}
	// Every float magnitude in every float field.
	for i, f := range jsonFloats {
		s := &Summary{
			Graphs:      []GraphLine{{BwIntra: f, BwInter: -f}},
			Paths:       []PathLine{{Bw: f}},
			Tuning:      &Tuning{Cells: []TuningCell{{LatencyUs: f, BwGBps: f / 3}}},
			AlgoChoices: []AlgoChoice{{TimeUs: f}},
		}
		cases = append(cases, tc{"float " + jsonFloatName(i), &Report{Summary: s}})
	}
	for _, c := range cases {
		checkSameJSON(t, c.name, c.r)
	}

	// Every published log with every environment dump, and each dump
	// without a log.
	files, err := filepath.Glob(filepath.Join(logsDir, "*.log"))
	if err != nil || len(files) < 8 {
		t.Fatalf("%d logs under %s: %v", len(files), logsDir, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, env := range envDumps {
			r := buildReport(t, string(b), env, Options{})
			if r.Summary.Lines == 0 {
				t.Fatalf("%s: nothing parsed", f)
			}
			checkSameJSON(t, filepath.Base(f)+" env "+jsonFloatName(i), r)
		}
	}
	for i, env := range envDumps[1:] {
		r := buildReport(t, "", env, Options{})
		if len(r.EnvFindings) == 0 {
			t.Fatalf("env %d: no findings", i+1)
		}
		checkSameJSON(t, "env only "+jsonFloatName(i+1), r)
	}
}

func jsonFloatName(i int) string { return string(rune('A'+i%26)) + string(rune('0'+i/26)) }

// NCCL never prints NaN or infinities; numbers that read as such are
// dropped by the parser (finiteFloat), so the JSON always exists. Before
// finiteFloat, "bw NaN/inf" made `ncclsim doctor --json` fail with
// "json: unsupported value: NaN".
func TestNonFiniteNumbersDropped(t *testing.T) {
	const pre = "host:1:2 [0] NCCL INFO "
	log := strings.Join([]string{
		pre + "Pattern 4, crossNic 0, nChannels 16, bw NaN/inf, type NVL/PIX, sameChannels 1",
		pre + "Pattern 2, crossNic 0, nChannels 2, bw 1e999/-Infinity, type NVL/PIX, sameChannels 1",
		pre + "1048576 Bytes -> Algo 1 proto 2 time NaN",
		pre + "GPU/0-18000 :GPU/0-1b000 (1/Inf/NVL) NET/0-0 (3/12.0/PHB)",
		pre + "  Algorithm   |   Tree   |   Ring   |",
		pre + "  Protocol    | LL | LL128 | Simple | LL | LL128 | Simple |",
		pre + "   AllReduce  | NaN/1.0 | 2.0/+Inf | 3.0/4.0 | 5.0/6.0 | 7.0/8.0 | 9.0/10.0 |",
	}, "\n") + "\n"
	r := buildReport(t, log, "", Options{})
	s := r.Summary
	if len(s.Graphs) != 2 || s.Graphs[0].BwIntra != 0 || s.Graphs[0].BwInter != 0 || s.Graphs[1].BwIntra != 0 {
		t.Errorf("graphs = %+v, want 2 with zero bandwidths", s.Graphs)
	}
	if len(s.AlgoChoices) != 1 || s.AlgoChoices[0].TimeUs != 0 {
		t.Errorf("algo choices = %+v, want one without a time", s.AlgoChoices)
	}
	if len(s.Paths) != 0 {
		t.Errorf("paths = %+v, want none (the line's first entry has bw Inf)", s.Paths)
	}
	if s.Tuning != nil {
		for _, c := range s.Tuning.Cells {
			if math.IsNaN(c.LatencyUs) || math.IsInf(c.BwGBps, 0) {
				t.Errorf("tuning cell %+v kept a non-finite value", c)
			}
		}
	}
	checkSameJSON(t, "non-finite", r)
}

// Severity's JSON methods use the hand-written writer and reader; both
// must agree with encoding/json.
func TestSeverityUnmarshalJSON(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Severity
		ok   bool
	}{
		{`"info"`, Info, true},
		{` "WARNING"` + "\n", Warning, true},
		{`"\u0065rror"`, Error, true},
		{`"err\/or"`, 0, false},
		{`"Severity(7)"`, 0, false},
		{`3`, 0, false},
		{`"error`, 0, false},
		{`null`, 0, false},
		{`"er"ror"`, 0, false},
	} {
		var s Severity
		err := s.UnmarshalJSON([]byte(c.in))
		if (err == nil) != c.ok || (c.ok && s != c.want) {
			t.Errorf("%s: got %v, err %v; want %v, ok %v", c.in, s, err, c.want, c.ok)
		}
		// The same through encoding/json, which calls UnmarshalJSON.
		var back struct {
			S Severity `json:"s"`
		}
		err = json.Unmarshal([]byte(`{"s":`+c.in+`}`), &back)
		if (err == nil) != c.ok || (c.ok && back.S != c.want) {
			t.Errorf("%s via encoding/json: got %v, err %v", c.in, back.S, err)
		}
	}
}

// checkDecode compares decodeJSONString with encoding/json's Unmarshal
// into a string.
func checkDecode(t *testing.T, in []byte) {
	t.Helper()
	got, ok := decodeJSONString(in)
	var want string
	err := json.Unmarshal(in, &want)
	if err != nil {
		if ok {
			t.Fatalf("%q: decoded as %q, encoding/json refuses it: %v", in, got, err)
		}
		return
	}
	if !ok {
		// encoding/json reads other values too (numbers, objects, ...)
		// into a string only with an error, so anything it accepts here
		// is a string or null.
		t.Fatalf("%q: refused, encoding/json reads %q", in, want)
	}
	if got != want {
		t.Fatalf("%q: decoded %q, encoding/json %q", in, got, want)
	}
}

func TestDecodeJSONString(t *testing.T) {
	for _, in := range decodeSeeds {
		checkDecode(t, []byte(in))
	}
	// Every string AppendJSON writes reads back unchanged, after each
	// invalid UTF-8 byte became U+FFFD (as converting to runes does).
	for _, s := range []string{"", "plain", hostile, "\U0001F600", "\u2029"} {
		got, ok := decodeJSONString(jsonw.AppendString(nil, s))
		if want := string([]rune(s)); !ok || got != want {
			t.Errorf("%q: read back %q, %v", s, got, ok)
		}
	}
}

var decodeSeeds = []string{
	`""`, `"x"`, ` "a\"b\\c\/d\b\f\n\r\t" `, `"\u00e9\u2028"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\ud83dx"`,
	`"\ude00\ud83d"`, `"\ud83d\u0041"`, `"\ud83d\uZZZZ"`, `"\u12"`, `"\x"`, `"\'"`, "\"a\x01\"", "\"\xff\xfe\"",
	`"a"b"`, `"a`, `a"`, `"`, `null`, ` null `, `nul`, `1`, `{}`, `"x" "y"`, "\"\u007f\"", "\t\"x\"\r\n",
	"\"\xed\xa0\x80\"", `"\uD83D\uDE00"`, `"\"`,
}

// FuzzDecodeJSONString checks the severity reader's string decoding
// against encoding/json on arbitrary input.
func FuzzDecodeJSONString(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkDecode)
}

// FuzzDoctorJSON parses arbitrary log and environment text, builds the
// doctor's answer as ncclsim doctor does, and checks that AppendJSON
// writes exactly encoding/json's bytes for it (and that encoding/json can
// write it at all: the parser never stores NaN or infinities).
func FuzzDoctorJSON(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(logsDir, "*.log"))
	for i, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(string(b), envDumps[i%len(envDumps)])
		}
	}
	for _, s := range []string{
		"h:1:1 [0] NCCL INFO Pattern 4, crossNic 0, nChannels 16, bw 1e-7/1e21, type NVL/<PIX>, sameChannels 1",
		"h:1:1 [0] NCCL INFO 1048576 Bytes -> Algo 1 proto 2 time 0.000001",
		"h:1:1 [0] NCCL INFO GPU/0-18000 :GPU/0-1b000 (1/20.0/NVL) NET/0-0 (3/1e300/P&B)",
		"h:1:1 [0] NCCL INFO  Algorithm |  Tree |\nh:1:1 [0] NCCL INFO Protocol | LL |\nh:1:1 [0] NCCL INFO AllReduce | 1/2 |",
		"h\u2028:1:1 [0] NCCL WARN <script>\xff\x01",
		"NCCL_DEBUG set by environment to <INFO>&\"\u2029",
	} {
		f.Add(s, "NCCL_ALGO=\"<x>\"\n\xff=1\n")
	}
	opts := Options{MaxLineBytes: 512, MaxItems: 16, MaxEvidence: 2, MaxEvidenceChars: 96}
	f.Fuzz(func(t *testing.T, logText, envText string) {
		checkSameJSON(t, "fuzzed", buildReport(t, logText, envText, opts))
	})
}

// BenchmarkAppendJSON and BenchmarkEncodingJSON write the answer for the
// largest published log.
func BenchmarkAppendJSON(b *testing.B) {
	r := largestLogReport(b)
	buf := r.AppendJSON(nil)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf = r.AppendJSON(buf[:0])
	}
}

func BenchmarkEncodingJSON(b *testing.B) {
	r := largestLogReport(b)
	buf, _ := json.Marshal(r)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(r); err != nil {
			b.Fatal(err)
		}
	}
}

func largestLogReport(b *testing.B) *Report {
	files, _ := filepath.Glob(filepath.Join(logsDir, "*.log"))
	var best []byte
	for _, f := range files {
		if data, err := os.ReadFile(f); err == nil && len(data) > len(best) {
			best = data
		}
	}
	if best == nil {
		b.Fatal("no logs")
	}
	return buildReport(b, string(best), envDumps[1], Options{})
}
