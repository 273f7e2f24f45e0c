// Package jsonenc writes a Go value as JSON, byte for byte as
// encoding/json's Marshal writes it, for the kinds of values the
// playground's answers are made of: structs with `json` tags (names,
// "-", omitempty; untagged embedded structs are flattened), pointers,
// slices, arrays, maps with string or integer keys (sorted), strings,
// booleans, integers, floats and interfaces holding those, and types with
// a MarshalJSON method.
//
// It exists for the size of the WebAssembly the pages download, and for
// nothing else: encoding/json links about 80 KB gzip of code and tables
// into every wasm binary (measured on the topology page's binary: 1,318,702
// bytes gzip -9 with encoding/json, 1,231,817 without), while this writer
// reuses package reflect, which fmt links anyway. Everything that is not
// wasm (ncclsim, the generator) may keep using encoding/json; the tests
// hold this writer to encoding/json on every page answer and on fuzzed
// values, so the two never differ. A value it does not handle ([]byte,
// channels, functions, complex numbers, NaN and infinities, a MarshalJSON
// that fails) is an error, never a silent difference.
package jsonenc

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// marshaler is encoding/json's Marshaler, restated so that this package
// does not import encoding/json.
type marshaler interface {
	MarshalJSON() ([]byte, error)
}

var marshalerType = reflect.TypeFor[marshaler]()

// Marshal returns the JSON encoding of v, as encoding/json.Marshal does.
func Marshal(v any) ([]byte, error) {
	e := &encoder{}
	if err := e.value(reflect.ValueOf(v)); err != nil {
		return nil, err
	}
	return e.buf, nil
}

// AppendFloat appends f as encoding/json writes a float of the given bit
// size (64 or 32): the shortest decimal that reads back as f, in exponent
// form below 1e-6 and from 1e21 on. NaN and infinities have no JSON
// spelling and are an error.
func AppendFloat(b []byte, f float64, bits int) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, fmt.Errorf("jsonenc: unsupported value: %v", f)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' {
		// e-09 is written e-9, as encoding/json does.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}

// encoder is one Marshal call's output.
type encoder struct {
	buf   []byte
	depth int
}

// maxDepth bounds nesting, which only a cyclic value reaches.
const maxDepth = 1000

func (e *encoder) value(v reflect.Value) error {
	if !v.IsValid() {
		e.buf = append(e.buf, "null"...)
		return nil
	}
	if e.depth++; e.depth > maxDepth {
		return errors.New("jsonenc: value nested too deeply (a cycle?)")
	}
	defer func() { e.depth-- }()
	t := v.Type()
	if t.Kind() != reflect.Pointer && t.Implements(marshalerType) {
		return e.marshaler(v)
	}
	if t.Kind() != reflect.Pointer && v.CanAddr() && reflect.PointerTo(t).Implements(marshalerType) {
		return e.marshaler(v.Addr())
	}
	switch t.Kind() {
	case reflect.Bool:
		e.buf = strconv.AppendBool(e.buf, v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		e.buf = strconv.AppendInt(e.buf, v.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		e.buf = strconv.AppendUint(e.buf, v.Uint(), 10)
	case reflect.Float32, reflect.Float64:
		b, err := AppendFloat(e.buf, v.Float(), t.Bits())
		if err != nil {
			return err
		}
		e.buf = b
	case reflect.String:
		e.buf = AppendString(e.buf, v.String())
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			e.buf = append(e.buf, "null"...)
			return nil
		}
		if t.Kind() == reflect.Pointer && t.Implements(marshalerType) {
			return e.marshaler(v)
		}
		return e.value(v.Elem())
	case reflect.Struct:
		return e.structValue(v)
	case reflect.Map:
		return e.mapValue(v)
	case reflect.Slice:
		if v.IsNil() {
			e.buf = append(e.buf, "null"...)
			return nil
		}
		if t.Elem().Kind() == reflect.Uint8 {
			return fmt.Errorf("jsonenc: unsupported type %s (encoding/json writes base64)", t)
		}
		return e.list(v)
	case reflect.Array:
		return e.list(v)
	default:
		return fmt.Errorf("jsonenc: unsupported type %s", t)
	}
	return nil
}

// marshaler appends what v's MarshalJSON returns, with the white space
// outside strings removed, as encoding/json does.
func (e *encoder) marshaler(v reflect.Value) error {
	if v.Kind() == reflect.Pointer && v.IsNil() {
		e.buf = append(e.buf, "null"...)
		return nil
	}
	b, err := v.Interface().(marshaler).MarshalJSON()
	if err != nil {
		return fmt.Errorf("jsonenc: MarshalJSON of %s: %w", v.Type(), err)
	}
	e.buf = appendCompact(e.buf, b)
	return nil
}

func (e *encoder) list(v reflect.Value) error {
	e.buf = append(e.buf, '[')
	for i := range v.Len() {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		if err := e.value(v.Index(i)); err != nil {
			return err
		}
	}
	e.buf = append(e.buf, ']')
	return nil
}

func (e *encoder) mapValue(v reflect.Value) error {
	if v.IsNil() {
		e.buf = append(e.buf, "null"...)
		return nil
	}
	entries := make(byKey, 0, v.Len())
	it := v.MapRange()
	for it.Next() {
		k := it.Key()
		var key string
		switch k.Kind() {
		case reflect.String:
			key = k.String()
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			key = strconv.FormatInt(k.Int(), 10)
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			key = strconv.FormatUint(k.Uint(), 10)
		default:
			return fmt.Errorf("jsonenc: unsupported map key type %s", k.Type())
		}
		entries = append(entries, entry{key, it.Value()})
	}
	sort.Sort(entries)
	e.buf = append(e.buf, '{')
	for i, en := range entries {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.buf = AppendString(e.buf, en.key)
		e.buf = append(e.buf, ':')
		if err := e.value(en.v); err != nil {
			return err
		}
	}
	e.buf = append(e.buf, '}')
	return nil
}

func (e *encoder) structValue(v reflect.Value) error {
	fields, err := fieldsOf(v.Type())
	if err != nil {
		return err
	}
	e.buf = append(e.buf, '{')
	first := true
next:
	for _, f := range fields {
		fv := v
		for _, i := range f.index {
			if fv.Kind() == reflect.Pointer {
				if fv.IsNil() {
					continue next // a nil embedded pointer has no fields
				}
				fv = fv.Elem()
			}
			fv = fv.Field(i)
		}
		if f.omitEmpty && isEmpty(fv) {
			continue
		}
		if !first {
			e.buf = append(e.buf, ',')
		}
		first = false
		e.buf = append(e.buf, f.quoted...)
		if err := e.value(fv); err != nil {
			return err
		}
	}
	e.buf = append(e.buf, '}')
	return nil
}

// entry is one member of a map.
type entry struct {
	key string
	v   reflect.Value
}

// byKey sorts a map's members by key, as encoding/json writes them. (A
// sort.Interface rather than slices.SortFunc, whose instantiation for
// this type alone is about 4 KB gzip of wasm.)
type byKey []entry

func (b byKey) Len() int           { return len(b) }
func (b byKey) Less(i, j int) bool { return b[i].key < b[j].key }
func (b byKey) Swap(i, j int)      { b[i], b[j] = b[j], b[i] }

// isEmpty is encoding/json's test for omitempty.
func isEmpty(v reflect.Value) bool {
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

// field is one member a struct type writes.
type field struct {
	name      string
	quoted    string // "name":
	index     []int  // the path through embedded structs
	omitEmpty bool
}

var fieldCache sync.Map // reflect.Type -> []field

// fieldsOf lists the members of struct type t in encoding/json's order.
// Untagged embedded structs are flattened; two members of one name are
// refused, since encoding/json's rules for them are not reproduced here.
func fieldsOf(t reflect.Type) ([]field, error) {
	if f, ok := fieldCache.Load(t); ok {
		return f.([]field), nil
	}
	var out []field
	if err := collect(t, nil, &out, 0); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, f := range out {
		if seen[f.name] {
			return nil, fmt.Errorf("jsonenc: %s has two members named %q", t, f.name)
		}
		seen[f.name] = true
	}
	fieldCache.Store(t, out)
	return out, nil
}

func collect(t reflect.Type, index []int, out *[]field, depth int) error {
	if depth > 10 {
		return fmt.Errorf("jsonenc: %s embeds too deeply", t)
	}
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		idx := append(slices.Clip(index), i)
		if sf.Anonymous && name == "" {
			ft := sf.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if err := collect(ft, idx, out, depth+1); err != nil {
					return err
				}
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		omit := false
		for o := range strings.SplitSeq(opts, ",") {
			switch o {
			case "omitempty":
				omit = true
			case "":
			default:
				return fmt.Errorf("jsonenc: %s.%s: tag option %q is not supported", t, sf.Name, o)
			}
		}
		*out = append(*out, field{name: name, quoted: string(AppendString(nil, name)) + ":", index: idx, omitEmpty: omit})
	}
	return nil
}

const hex = "0123456789abcdef"

// AppendString appends s as a JSON string the way encoding/json writes it:
// <, > and & escaped for HTML, invalid UTF-8 as \ufffd, U+2028 and U+2029
// escaped.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendCompact appends the JSON text src without the white space outside
// its strings, and with <, >, &, U+2028 and U+2029 inside them escaped, as
// encoding/json treats what a MarshalJSON method returns.
func appendCompact(dst, src []byte) []byte {
	inString, escaped := false, false
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			case c == '<' || c == '>' || c == '&':
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
				continue
			case c == 0xE2 && i+2 < len(src) && src[i+1] == 0x80 && src[i+2]&^1 == 0xA8:
				dst = append(dst, '\\', 'u', '2', '0', '2', hex[src[i+2]&0xf])
				i += 2
				continue
			}
			dst = append(dst, c)
		case c == '"':
			inString = true
			dst = append(dst, c)
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		default:
			dst = append(dst, c)
		}
	}
	return dst
}
