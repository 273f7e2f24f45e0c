package api

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/distributed-nav/distributed-nav/playground/doctor"
	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
)

// checkSameJSON fails unless jw.value writes v byte for byte as
// encoding/json's Marshal does.
func checkSameJSON(t *testing.T, name string, v any) {
	t.Helper()
	want, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("%s: encoding/json: %v", name, err)
	}
	var w jw
	if err := w.value(reflect.ValueOf(v)); err != nil {
		t.Fatalf("%s: jw.value: %v", name, err)
	}
	if w.String() != string(want) {
		t.Fatalf("%s: jw.value differs from encoding/json\n got %s\nwant %s", name, w.String(), want)
	}
}

// oddText holds every character class the JSON string encoder treats
// specially.
const oddText = "a<b>&c\"d\\e\n\r\t\b\f\x01\x1f\u2028\u2029 é 日本 \xff\xfe"

// fill sets every field of v (recursively) to a non-zero value: strings
// get oddText, numbers n and its neighbours, slices and maps two entries,
// pointers a filled value. Any field the encoder mishandles then shows up
// in the comparison with encoding/json, including fields added later.
func fill(v reflect.Value, n int, depth int) {
	if depth > 8 {
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(oddText + strings.Repeat("x", n%3))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(n%3) - 1) // -1, 0, 1 across fields: also tests omitempty on 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(n) * 1e9)
	case reflect.Float32, reflect.Float64:
		v.SetFloat([]float64{0.1, 1e-7, 1e21, -2.5, 0, 123456.789}[n%6])
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), n+1, depth+1)
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := 0; i < 2; i++ {
			fill(s.Index(i), n+i, depth+1)
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for i, k := range []string{"zeta", "alpha<&>"} {
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

func TestJSONValueMatchesEncodingJSON(t *testing.T) {
	// The doctor's answer with every field set, with every list empty but
	// not nil, and with nothing at all.
	var full doctorOutput
	fill(reflect.ValueOf(&full).Elem(), 0, 0)
	checkSameJSON(t, "filled", full)
	checkSameJSON(t, "empty lists", doctorOutput{Summary: &doctor.Summary{Versions: []doctor.VersionSeen{}, Hosts: []string{}}, Diagnoses: []doctor.Diagnosis{}, EnvFindings: []doctor.Finding{}})
	checkSameJSON(t, "zero", doctorOutput{})
	checkSameJSON(t, "severities", []doctor.Severity{doctor.Info, doctor.Warning, doctor.Error, doctor.Severity(9)})

	// Kinds the doctor does not use today but the encoder accepts.
	type inner struct {
		A int `json:"a,omitempty"`
		B any `json:"b"`
	}
	negZero := math.Copysign(0, -1)
	checkSameJSON(t, "misc", struct {
		Arr    [2]int8            `json:"arr"`
		Map    map[string]float32 `json:"map"`
		NilMap map[string]int     `json:"nil_map"`
		Iface  any                `json:"iface"`
		Ptr    *inner             `json:"ptr,omitempty"`
		Neg    float64            `json:"neg,omitempty"`
		U8     uint8
		Skip   string `json:"-"`
		hidden int
	}{Arr: [2]int8{-1, 2}, Map: map[string]float32{"b": 20.6, "a": 1e-7}, Iface: inner{B: []any{"x", 1.5, nil, true}}, Neg: negZero, U8: 7, Skip: "no", hidden: 1})

	// The answer for every published log, as Session.Doctor builds it.
	dir := filepath.Join("..", "..", "..", "data", "logs")
	files, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no logs in %s: %v", dir, err)
	}
	envText := "NCCL_P2P_DISABLE=1\nNCCL_ALGOO=Ring\nexport NCCL_IB_HCA='<mlx5>'\n"
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := doctor.ParseLogContext(context.Background(), strings.NewReader(string(b)), doctor.Options{})
		if err != nil {
			t.Fatal(err)
		}
		out := doctorOutput{Summary: sum, Diagnoses: doctor.Diagnose(sum, ncclenv.Env{}), EnvFindings: doctor.LintEnv(envText)}
		checkSameJSON(t, filepath.Base(f), out)
	}
}

// Values encoding/json would write differently (or refuse) are errors, not
// silently different output.
func TestJSONValueRefusesUnsupported(t *testing.T) {
	type withString struct {
		N int `json:"n,string"`
	}
	type Embedded struct{ A int }
	type withEmbedded struct{ Embedded }
	for name, v := range map[string]any{
		"nan":           math.NaN(),
		"inf":           []float64{math.Inf(-1)},
		"string option": withString{1},
		"embedded":      withEmbedded{},
		"bytes":         []byte("x"),
		"int keys":      map[int]int{1: 1},
		"chan":          make(chan int),
	} {
		var w jw
		if err := w.value(reflect.ValueOf(v)); err == nil {
			t.Errorf("%s: accepted as %s", name, w.String())
		}
	}
}

// FuzzJSONTag checks jsonTag against reflect.StructTag.Get: they agree on
// every tag jsonTag accepts, and it refuses only tags with a backslash, a
// newline or invalid UTF-8.
func FuzzJSONTag(f *testing.F) {
	for _, tag := range []string{
		`json:"name,omitempty"`, `yaml:"x" json:"y"`, `json:"-"`, ``, `json`, `json:`, `json:"unterminated`,
		` json:"lead"`, `a:"1"  json:"two spaces"`, `json:"a\"b"`, `yaml:"a\"b" json:"c"`, `x:y json:"z"`, "json:\"\x7f\"",
		"json:\"\xe0\"", "json:\"a\nb\"", "yaml:\"\xe0\" json:\"ok\"",
	} {
		f.Add(tag)
	}
	f.Fuzz(func(t *testing.T, tag string) {
		got, ok := jsonTag(reflect.StructTag(tag))
		if !ok {
			if !strings.ContainsAny(tag, "\\\n") && utf8.ValidString(tag) {
				t.Errorf("%q refused without a backslash", tag)
			}
			return
		}
		if want := reflect.StructTag(tag).Get("json"); got != want {
			t.Errorf("%q: jsonTag %q, StructTag.Get %q", tag, got, want)
		}
	})
}
