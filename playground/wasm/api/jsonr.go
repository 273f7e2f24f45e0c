package api

import (
	"encoding"
	"errors"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// jsonMarshaler is encoding/json's Marshaler, spelled out here so that the
// wasm binary does not link encoding/json (about 160 KB gzip with what it
// keeps alive).
type jsonMarshaler interface {
	MarshalJSON() ([]byte, error)
}

// value writes v as encoding/json's Marshal writes it, for the kinds of
// values the doctor's answer holds: structs with json tags (a name,
// "omitempty", or "-"), pointers, interfaces, slices and arrays, maps with
// string keys (written in sorted order), strings, booleans, integers,
// floats, and types with a MarshalJSON method, whose output is copied as
// it is (it must be compact JSON). Anything else (embedded struct fields,
// the ",string" option, byte slices, text marshalers, channels, functions,
// NaN and infinities) is an error rather than a silent difference;
// TestJSONValueMatchesEncodingJSON keeps the two encoders in step.
func (w *jw) value(v reflect.Value) error {
	if !v.IsValid() {
		w.null()
		return nil
	}
	t := v.Type()
	if (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) && v.IsNil() {
		w.null()
		return nil
	}
	// A type assertion rather than reflect's Implements, which would add
	// its own method-set matching to the binary.
	switch m := v.Interface().(type) {
	case jsonMarshaler:
		b, err := m.MarshalJSON()
		if err != nil {
			return errors.New("json: calling MarshalJSON for type " + t.String() + ": " + err.Error())
		}
		w.raw(string(b))
		return nil
	case encoding.TextMarshaler:
		return errors.New("json: text marshaler " + t.String() + " is not supported here")
	}
	switch v.Kind() {
	case reflect.Bool:
		w.bool(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		w.i64(v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		w.u64(v.Uint())
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return errors.New("json: unsupported value: " + strconv.FormatFloat(f, 'g', -1, t.Bits()))
		}
		w.sep()
		w.b = appendFloat(w.b, f, t.Bits())
	case reflect.String:
		w.str(v.String())
	case reflect.Pointer, reflect.Interface:
		return w.value(v.Elem()) // nil was written above
	case reflect.Slice:
		if v.IsNil() {
			w.null()
			return nil
		}
		if t.Elem().Kind() == reflect.Uint8 {
			return errors.New("json: byte slices are not supported here")
		}
		return w.list(v)
	case reflect.Array:
		return w.list(v)
	case reflect.Map:
		return w.mapValue(v)
	case reflect.Struct:
		return w.structValue(v)
	default:
		return errors.New("json: unsupported type: " + t.String())
	}
	return nil
}

func (w *jw) list(v reflect.Value) error {
	w.arr()
	for i := 0; i < v.Len(); i++ {
		if err := w.value(v.Index(i)); err != nil {
			return err
		}
	}
	w.endArr()
	return nil
}

func (w *jw) mapValue(v reflect.Value) error {
	if v.IsNil() {
		w.null()
		return nil
	}
	if v.Type().Key().Kind() != reflect.String {
		return errors.New("json: map key type " + v.Type().Key().String() + " is not supported here")
	}
	// Sorting the names with sort.Strings reuses the string sort the
	// binary has anyway; a sort of reflect.Values would add its own copy.
	keys := v.MapKeys()
	byName := make(map[string]reflect.Value, len(keys))
	names := make([]string, 0, len(keys))
	for _, k := range keys {
		byName[k.String()] = k
		names = append(names, k.String())
	}
	sort.Strings(names)
	w.obj()
	for _, name := range names {
		w.key(name)
		if err := w.value(v.MapIndex(byName[name])); err != nil {
			return err
		}
	}
	w.end()
	return nil
}

func (w *jw) structValue(v reflect.Value) error {
	t := v.Type()
	w.obj()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous {
			return errors.New("json: embedded field " + t.String() + "." + f.Name + " is not supported here")
		}
		if !f.IsExported() {
			continue
		}
		tag, ok := jsonTag(f.Tag)
		if !ok {
			return errors.New("json: tag of " + t.String() + "." + f.Name + " has escapes, which are not supported here")
		}
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		omitEmpty := false
		for opts != "" {
			var o string
			o, opts, _ = strings.Cut(opts, ",")
			if o != "omitempty" {
				return errors.New("json: tag option " + o + " of " + t.String() + "." + f.Name + " is not supported here")
			}
			omitEmpty = true
		}
		if name == "" {
			name = f.Name
		}
		fv := v.Field(i)
		if omitEmpty && emptyJSONValue(fv) {
			continue
		}
		w.key(name)
		if err := w.value(fv); err != nil {
			return err
		}
	}
	w.end()
	return nil
}

// emptyJSONValue is encoding/json's test for "omitempty" (which counts
// -0.0 as empty).
func emptyJSONValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Interface, reflect.Pointer:
		return v.IsNil()
	}
	return false
}

// jsonTag returns the value of the json key of tag as tag.Get("json") does,
// without linking strconv's unquoting: ok is false if a quoted value holds
// a backslash escape, or the json value a newline or invalid UTF-8.
func jsonTag(tag reflect.StructTag) (value string, ok bool) {
	s := string(tag)
	for {
		s = strings.TrimLeft(s, " ")
		i := 0
		for i < len(s) && s[i] > ' ' && s[i] != ':' && s[i] != '"' && s[i] != 0x7f {
			i++
		}
		if i == 0 || i+1 >= len(s) || s[i] != ':' || s[i+1] != '"' {
			return "", true // no (further) well-formed key:"value" pair
		}
		key, rest := s[:i], s[i+2:]
		end := strings.IndexByte(rest, '"')
		if end < 0 {
			return "", true
		}
		if strings.IndexByte(rest[:end], '\\') >= 0 {
			return "", false
		}
		if key == "json" {
			// strconv.Unquote, which Get calls, would reject a newline
			// and replace invalid UTF-8; refuse both.
			v := rest[:end]
			return v, !strings.Contains(v, "\n") && utf8.ValidString(v)
		}
		s = rest[end+1:]
	}
}
