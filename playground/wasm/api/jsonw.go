package api

import (
	"strconv"

	"github.com/distributed-nav/distributed-nav/playground/jsonw"
)

// jw writes JSON without reflection. Callers emit keys and values in
// order; jw inserts the commas. Floats are formatted as encoding/json
// formats them (shortest representation for the value's own precision), so
// the output parses to the same numbers as the CLI's.
//
// The methods are marked go:noinline: the package calls them at several
// hundred places, and inlined copies made its wasm code about 90 KB larger
// (20 KB gzip).
type jw struct {
	b []byte
	// first is true right after an opening bracket.
	first bool
}

//go:noinline
func (w *jw) sep() {
	if !w.first && len(w.b) > 0 {
		w.b = append(w.b, ',')
	}
	w.first = false
}

//go:noinline
func (w *jw) obj() { w.sep(); w.b = append(w.b, '{'); w.first = true }

//go:noinline
func (w *jw) end() { w.b = append(w.b, '}'); w.first = false }

//go:noinline
func (w *jw) arr() { w.sep(); w.b = append(w.b, '['); w.first = true }

//go:noinline
func (w *jw) endArr() {
	w.b = append(w.b, ']')
	w.first = false
}

// key writes an object key; the next value call writes its value.
//
//go:noinline
func (w *jw) key(k string) {
	w.sep()
	w.b = jsonw.AppendString(w.b, k)
	w.b = append(w.b, ':')
	w.first = true
}

//go:noinline
func (w *jw) str(s string) { w.sep(); w.b = jsonw.AppendString(w.b, s) }

//go:noinline
func (w *jw) int(i int) { w.sep(); w.b = strconv.AppendInt(w.b, int64(i), 10) }

//go:noinline
func (w *jw) i64(i int64) { w.sep(); w.b = strconv.AppendInt(w.b, i, 10) }

//go:noinline
func (w *jw) u64(i uint64) { w.sep(); w.b = strconv.AppendUint(w.b, i, 10) }

//go:noinline
func (w *jw) f32(f float32) { w.sep(); w.b = jsonw.AppendFloat(w.b, float64(f), 32) }

//go:noinline
func (w *jw) f64(f float64) { w.sep(); w.b = jsonw.AppendFloat(w.b, f, 64) }

//go:noinline
func (w *jw) null() { w.sep(); w.b = append(w.b, "null"...) }

//go:noinline
func (w *jw) raw(s string) { w.sep(); w.b = append(w.b, s...) }

//go:noinline
func (w *jw) kstr(k, v string) { w.key(k); w.str(v) }

//go:noinline
func (w *jw) kint(k string, v int) { w.key(k); w.int(v) }

//go:noinline
func (w *jw) kf32(k string, v float32) {
	w.key(k)
	w.f32(v)
}

//go:noinline
func (w *jw) kf64(k string, v float64) {
	w.key(k)
	w.f64(v)
}

//go:noinline
func (w *jw) kbool(k string, v bool) {
	w.key(k)
	w.bool(v)
}

//go:noinline
func (w *jw) bool(v bool) {
	w.sep()
	if v {
		w.b = append(w.b, "true"...)
	} else {
		w.b = append(w.b, "false"...)
	}
}

// strs writes an array of strings.
//
//go:noinline
func (w *jw) strs(list []string) {
	w.arr()
	for _, s := range list {
		w.str(s)
	}
	w.endArr()
}

// ints writes an array of ints.
//
//go:noinline
func (w *jw) ints(list []int) {
	w.arr()
	for _, v := range list {
		w.int(v)
	}
	w.endArr()
}

// String returns the JSON text.
//
//go:noinline
func (w *jw) String() string { return string(w.b) }
