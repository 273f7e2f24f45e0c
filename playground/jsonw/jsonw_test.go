package jsonw

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// hostile holds every class of character encoding/json escapes: quotes,
// backslash, HTML-sensitive bytes, control characters, the JavaScript line
// separators and invalid UTF-8.
const hostile = "a<b>&c\"d\\e/f\n\r\t\b\f\x00\x01\x1f\x7f\u2028\u2029\ufffd é 日本 \xff\xfe\xe6\x97\xed\xa0\x80 </script>"

// floats are magnitudes on both sides of encoding/json's switches between
// 'f' and 'e' notation (1e-6 and 1e21), negative zero, the extremes of
// float64, and values whose shortest form is long.
var floats = []float64{
	0, math.Copysign(0, -1), 1, -2.5, 0.1, 1.0 / 3, 123456.789, 40, 5000, 12.5,
	1e-6, 9.999999e-7, 1e-7, -1e-7, 1.5e-10, 1e-300, 5e-324,
	1e20, 9.99999e20, 1e21, -1e21, 1.2345e22, 1e100, math.MaxFloat64, -math.MaxFloat64,
}

// The expected bytes are encoding/json.Marshal's for the same value.
func TestAppendString(t *testing.T) {
	strs := []string{"", hostile, "plain", "\u2028", "\xed\xbf\xbf", "\xf4\x90\x80\x80", "\xc0\x80", "\xe2\x80", "é\xff", "&amp;"}
	for b := 0; b < 256; b++ {
		strs = append(strs, string([]byte{byte(b)}), "x"+string(rune(b))+"y")
	}
	for _, s := range strs {
		want, _ := json.Marshal(s)
		if got := AppendString(nil, s); !bytes.Equal(got, want) {
			t.Errorf("string %q: got %s, want %s", s, got, want)
		}
	}
	if got := string(AppendString([]byte("x:"), "y")); got != `x:"y"` {
		t.Errorf("AppendString does not append: %s", got)
	}
}

func TestAppendFloat(t *testing.T) {
	for _, f := range floats {
		for _, v := range []float64{f, -f, math.Nextafter(f, 0), math.Nextafter(f, math.Inf(1))} {
			if math.IsInf(v, 0) {
				continue // past MaxFloat64
			}
			want, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			if got := AppendFloat(nil, v, 64); !bytes.Equal(got, want) {
				t.Errorf("float64 %v: got %s, want %s", v, got, want)
			}
			if v32 := float32(v); !math.IsInf(float64(v32), 0) {
				want, _ := json.Marshal(v32)
				if got := AppendFloat(nil, float64(v32), 32); !bytes.Equal(got, want) {
					t.Errorf("float32 %v: got %s, want %s", v32, got, want)
				}
			}
		}
	}
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if got := string(AppendFloat(nil, v, 64)); got != "null" {
			t.Errorf("float %v: got %s, want null (JSON has no NaN or infinity)", v, got)
		}
	}
}

// FuzzAppend compares both writers with encoding/json on fuzzed values.
func FuzzAppend(f *testing.F) {
	f.Add(hostile, 1e-7)
	f.Add("plain", 123.0)
	f.Fuzz(func(t *testing.T, s string, v float64) {
		want, _ := json.Marshal(s)
		if got := AppendString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("string %q: got %s, want %s", s, got, want)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return
		}
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendFloat(nil, v, 64); !bytes.Equal(got, want) {
			t.Fatalf("float64 %v: got %s, want %s", v, got, want)
		}
	})
}
