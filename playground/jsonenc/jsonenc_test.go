package jsonenc

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// The expected output of every case is encoding/json's own: the writer is
// correct exactly when it writes what json.Marshal writes.

type sev int

func (s sev) MarshalJSON() ([]byte, error) {
	return []byte(` "s` + strings.Repeat("<", int(s)) + `" `), nil
}

type ptrMarshaler struct{ n int }

func (p *ptrMarshaler) MarshalJSON() ([]byte, error) { return []byte(`{"n": 1}`), nil }

type Inner struct {
	A int    `json:"a"`
	B string `json:"b,omitempty"`
}

type outer struct {
	Inner
	*Second
	Name     string            `json:"name"`
	Skip     int               `json:"-"`
	Dash     int               `json:"-,"`
	hidden   int               // unexported: never written
	Plain    float64           // no tag: the Go name
	F32      float32           `json:"f32"`
	Opt      *int              `json:"opt,omitempty"`
	Nil      *int              `json:"nil"`
	List     []int             `json:"list"`
	NilList  []string          `json:"nil_list"`
	Empty    []string          `json:"empty,omitempty"`
	Map      map[string]any    `json:"map"`
	IntKeys  map[int]string    `json:"int_keys"`
	UintKeys map[uint8]bool    `json:"uint_keys,omitempty"`
	Arr      [2]bool           `json:"arr"`
	Any      any               `json:"any"`
	Sev      sev               `json:"sev"`
	Sevs     []sev             `json:"sevs"`
	PM       ptrMarshaler      `json:"pm"`
	PMP      *ptrMarshaler     `json:"pmp"`
	Nested   map[string][]uint `json:"nested"`
}

type Second struct {
	C bool `json:"c"`
}

func TestMarshalMatchesEncodingJSON(t *testing.T) {
	one := 1
	full := outer{
		Inner: Inner{A: 3, B: "x"}, Second: &Second{C: true}, Name: "n <&> \u2028 \xff", Skip: 9, Dash: 4, hidden: 5,
		Plain: 1e21, F32: 1.1, Opt: &one, List: []int{1, -2}, NilList: nil, Empty: []string{},
		Map: map[string]any{"z": 1.5, "a": nil, "m": []any{"s", true, 2}}, IntKeys: map[int]string{10: "ten", -1: "minus", 2: "two"},
		UintKeys: map[uint8]bool{7: true}, Arr: [2]bool{true, false}, Any: &Inner{A: 1}, Sev: 2, Sevs: []sev{0, 1},
		PMP: &ptrMarshaler{}, Nested: map[string][]uint{"k": {1, 2}},
	}
	cases := []struct {
		name string
		v    any
	}{
		{"nil", nil},
		{"full struct", full},
		{"pointer to struct (addressable: the pointer-receiver MarshalJSON is used)", &full},
		{"zero struct", outer{}},
		{"floats", []float64{0, -0.0, 1, 0.1, 1e-6, 9.99e-7, 1e20, 1e21, 123456789.125, -2.5e-10, math.MaxFloat64, math.SmallestNonzeroFloat64}},
		{"float32s", []float32{0, 1.1, 1e-7, 3.4e38, 1e21, 16777216}},
		{"ints", []any{int8(-8), int16(16), int32(-32), int64(math.MinInt64), uint64(math.MaxUint64), uintptr(3)}},
		{"strings", []string{"", "plain", "quote\" back\\ slash", "\x00\x01\x1f\t\n\r\b\f", "é ü 日本 🙂", "\u2029", "bad \xc3\x28 utf8", "<script>&amp;</script>"}},
		{"map of maps", map[string]map[string]int{"b": {"y": 1, "x": 2}, "a": nil}},
		{"interface slice", []any{nil, 1, "two", []int(nil), map[string]int{}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, err := json.Marshal(c.v)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Marshal(c.v)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("Marshal:\n got %s\nwant %s", got, want)
			}
		})
	}
}

func TestMarshalRefuses(t *testing.T) {
	type conflict struct {
		Inner
		A int `json:"a"`
	}
	type badOpt struct {
		N int `json:"n,string"`
	}
	for _, c := range []struct {
		name string
		v    any
		want string
	}{
		{"bytes (base64 in encoding/json)", []byte("x"), "base64"},
		{"NaN", math.NaN(), "unsupported value"},
		{"infinity in a struct", struct{ F float64 }{math.Inf(-1)}, "unsupported value"},
		{"channel", make(chan int), "unsupported type"},
		{"function", func() {}, "unsupported type"},
		{"complex", complex(1, 2), "unsupported type"},
		{"float map key", map[float64]int{1: 1}, "map key"},
		{"two members of one name", conflict{}, "two members"},
		{"tag option", badOpt{}, "not supported"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := Marshal(c.v)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Marshal = %s, %v; want an error containing %q", b, err, c.want)
			}
		})
	}
}

func TestCycleIsAnError(t *testing.T) {
	type node struct {
		Next *node `json:"next"`
	}
	n := &node{}
	n.Next = n
	if _, err := Marshal(n); err == nil {
		t.Fatal("a cyclic value encoded without error")
	}
}

func FuzzString(f *testing.F) {
	for _, s := range []string{"", "a\"b", "<>&", "\u2028\u2029", "\xff\xfe", "\x00\x7f", "日本"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendString(nil, s); string(got) != string(want) {
			t.Errorf("AppendString(%q) = %s, want %s", s, got, want)
		}
		// A MarshalJSON result holding the string is compacted the same way.
		raw := []byte(" [ " + string(want) + " ,\n1 ] ")
		wantC, err := json.Marshal(rawMarshaler(raw))
		if err != nil {
			return // not valid JSON after all: encoding/json refuses it
		}
		if got := appendCompact(nil, raw); string(got) != string(wantC) {
			t.Errorf("appendCompact(%q) = %s, want %s", raw, got, wantC)
		}
	})
}

type rawMarshaler []byte

func (r rawMarshaler) MarshalJSON() ([]byte, error) { return r, nil }

func FuzzFloat(f *testing.F) {
	for _, v := range []float64{0, 1, 1e-6, 1e-7, 1e21, 1e20, 0.1, -3.25, 5e-324} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v float64) {
		for _, bits := range []int{64, 32} {
			var x any = v
			if bits == 32 {
				x = float32(v)
				if math.IsInf(float64(float32(v)), 0) {
					continue
				}
			}
			want, werr := json.Marshal(x)
			got, gerr := AppendFloat(nil, v, bits)
			if bits == 32 {
				got, gerr = AppendFloat(nil, float64(float32(v)), 32)
			}
			if (werr != nil) != (gerr != nil) {
				t.Fatalf("bits %d, %v: errors differ: %v / %v", bits, v, werr, gerr)
			}
			if werr == nil && string(got) != string(want) {
				t.Errorf("bits %d: AppendFloat(%v) = %s, want %s", bits, v, got, want)
			}
		}
	})
}
