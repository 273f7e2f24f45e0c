package nccltests

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/controls"
)

// column is what one field of a table row holds.
type column int

const (
	colIgnore column = iota // per-iteration statistics and the like
	colSize
	colCount
	colType
	colRedop
	colRoot
	colTime
	colAlgBw
	colBusBw
	colWrong
	colTimestamp // two fields: date and time, always last
)

// layout is the column order of one table.
type layout struct {
	cols []column
	// timeScale converts the printed time to µs (nccl-tests 1.x printed
	// milliseconds).
	timeScale float64
	// fields is the number of fields a row must have (the timestamp's two
	// fields are optional: a timestamp column can be blank).
	fields int
	// inPlaceOnly marks the layout of a trace-replay row, whose only
	// group is the in-place one.
	inPlaceOnly bool
}

// headerLayout reads a column header line ("#  size  count  type  redop
// root  time  algbw  busbw #wrong ..."), given without the leading '#'.
// ok is false when the line is not a table header.
func headerLayout(rest string) (layout, bool) {
	toks := strings.Fields(rest)
	l := layout{timeScale: 1}
	var hasSize, hasBus, hasTime bool
	legacy := false
	for _, t := range toks {
		c := colIgnore
		switch strings.ToLower(t) {
		case "size":
			c, hasSize = colSize, true
		case "bytes":
			c, hasSize, legacy = colSize, true, true
		case "count", "n":
			c = colCount
		case "type":
			c = colType
		case "redop", "op":
			c = colRedop
		case "root":
			c = colRoot
		case "time", "cputime":
			c, hasTime = colTime, true
		case "algbw":
			c = colAlgBw
		case "busbw":
			c, hasBus = colBusBw, true
		case "#wrong", "error", "res", "wrong":
			c = colWrong
		case "timestamp":
			c = colTimestamp
		}
		l.cols = append(l.cols, c)
	}
	if !hasSize || !hasBus || !hasTime || len(l.cols) < 6 || l.cols[0] != colSize {
		return layout{}, false
	}
	if legacy {
		// nccl-tests 1.x: "bytes N type op time algbw busbw res", time
		// in ms (printed as deltaSec × 1e3).
		l.timeScale = 1e3
	}
	l.fields = len(l.cols)
	if l.cols[len(l.cols)-1] == colTimestamp {
		l.fields--
	}
	return l, true
}

// unitsLine applies the "(B) (elements) ... (us)" line under a header: it
// says whether times are in µs or ms.
func (l *layout) unitsLine(rest string) bool {
	toks := strings.Fields(rest)
	if len(toks) == 0 || toks[0] != "(B)" {
		return false
	}
	for _, t := range toks {
		switch t {
		case "(us)":
			l.timeScale = 1
			return true
		case "(ms)":
			l.timeScale = 1e3
			return true
		}
	}
	return true
}

// inferLayout guesses the layout of a row seen without a header:
// size count type [redop] [root] then out-of-place and in-place groups of
// time, algbw, busbw, error (four fields each, or eight with the
// per-iteration statistics). ok is false when the fields do not fit.
func inferLayout(toks []string) (layout, bool) {
	if len(toks) < 11 || !isUint(toks[0]) || !isUint(toks[1]) || TypeSize(toks[2]) == 0 {
		return layout{}, false
	}
	cols := []column{colSize, colCount, colType}
	rest := toks[3:]
	if len(rest) > 0 && isWord(rest[0]) {
		cols = append(cols, colRedop)
		rest = rest[1:]
	}
	group := []column{colTime, colAlgBw, colBusBw, colWrong}
	switch {
	case len(rest) == 9 || len(rest) == 17:
		if _, err := strconv.Atoi(rest[0]); err != nil {
			return layout{}, false
		}
		cols = append(cols, colRoot)
		rest = rest[1:]
	case len(rest) == 8 || len(rest) == 16:
	default:
		return layout{}, false
	}
	per := len(rest) / 2
	for range 2 {
		cols = append(cols, group...)
		for i := len(group); i < per; i++ {
			cols = append(cols, colIgnore)
		}
	}
	return layout{cols: cols, timeScale: 1, fields: len(cols)}, true
}

// rowError is why a line that looks like a row could not be read.
type rowError struct{ msg string }

func (e rowError) Error() string { return e.msg }

// parseRow reads one data row with layout l.
func (l *layout) parseRow(toks []string) (Row, error) {
	r := Row{Root: -1}
	if len(toks) < l.fields {
		// nccl-tests prints out-of-place blank when replaying a trace: the
		// row is then short by one group.
		if short, ok := l.withoutOutOfPlace(); ok && len(toks) >= short.fields {
			r, err := short.parseRow(toks)
			return r, err
		}
		return r, rowError{fmt.Sprintf("%d fields where the table has %d", len(toks), l.fields)}
	}
	group := 0 // 0: out-of-place, 1: in-place
	res := &r.OutOfPlace
	if l.inPlaceOnly {
		res = &r.InPlace
	}
	seenTime := false
	for i, c := range l.cols {
		if i >= len(toks) {
			break
		}
		t := toks[i]
		var err error
		switch c {
		case colSize:
			r.Bytes, err = parseUint(t, "size")
		case colCount:
			r.Count, err = parseUint(t, "count")
		case colType:
			if !isWord(t) {
				err = rowError{fmt.Sprintf("type %s is not a type name", quoted(t))}
			}
			r.Type = t
		case colRedop:
			if !isWord(t) {
				err = rowError{fmt.Sprintf("redop %s is not an operator name", quoted(t))}
			}
			r.Redop = t
		case colRoot:
			var v int
			v, err = strconv.Atoi(t)
			if err != nil || v < -1 || v >= MaxRanks {
				err = rowError{fmt.Sprintf("root %s is not a rank", quoted(t))}
			}
			r.Root = v
		case colTime:
			if seenTime {
				group++
				if group == 1 && !l.inPlaceOnly {
					res = &r.InPlace
				} else {
					res = nil
				}
			}
			seenTime = true
			if res != nil {
				var v float64
				v, _, err = parseValue(t, "time")
				res.TimeUs = v * l.timeScale
				res.Present = true
			}
		case colAlgBw:
			if res != nil {
				res.AlgBwGBps, res.algErr, err = parseValue(t, "algbw")
			}
		case colBusBw:
			if res != nil {
				res.BusBwGBps, res.busErr, err = parseValue(t, "busbw")
			}
		case colWrong:
			if res != nil {
				res.Wrong = t
			}
		}
		if err != nil {
			return r, err
		}
	}
	return r, nil
}

// withoutOutOfPlace is l with its first time/algbw/busbw/error group
// removed (the row of a trace replay), if l has two groups.
func (l *layout) withoutOutOfPlace() (layout, bool) {
	first, second := -1, -1
	for i, c := range l.cols {
		if c == colTime {
			if first < 0 {
				first = i
			} else {
				second = i
				break
			}
		}
	}
	if first < 0 || second < 0 {
		return layout{}, false
	}
	cols := append(append([]column(nil), l.cols[:first]...), l.cols[second:]...)
	s := layout{cols: cols, timeScale: l.timeScale, fields: l.fields - (second - first), inPlaceOnly: true}
	return s, true
}

func parseUint(t, what string) (uint64, error) {
	v, err := strconv.ParseUint(t, 10, 64)
	if err != nil {
		return 0, rowError{fmt.Sprintf("%s %s is not a whole number", what, quoted(t))}
	}
	return v, nil
}

// parseValue reads a printed non-negative number and half its last
// printed digit (the rounding it carries).
func parseValue(t, what string) (float64, float64, error) {
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, 0, rowError{fmt.Sprintf("%s %s is not a number", what, quoted(t))}
	}
	return v, halfULP(t, v), nil
}

// halfULP is half the unit of the last digit of the printed number t.
func halfULP(t string, v float64) float64 {
	mant, exp := t, 0
	if i := strings.IndexAny(t, "eE"); i >= 0 {
		mant = t[:i]
		e, err := strconv.Atoi(t[i+1:])
		if err == nil {
			exp = e
		}
	}
	dec := 0
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		dec = len(mant) - i - 1
	}
	return 0.5 * math.Pow(10, float64(exp-dec))
}

func isUint(t string) bool {
	if t == "" {
		return false
	}
	for i := 0; i < len(t); i++ {
		if t[i] < '0' || t[i] > '9' {
			return false
		}
	}
	return true
}

// isWord reports whether t is a name: a letter followed by letters,
// digits or '_'.
func isWord(t string) bool {
	if t == "" || !(t[0] >= 'a' && t[0] <= 'z' || t[0] >= 'A' && t[0] <= 'Z') {
		return false
	}
	for i := 1; i < len(t); i++ {
		c := t[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// maxQuoted is the most bytes of one field an error message repeats: a
// field can be a whole 64 KiB line, and the message is for a reader.
const maxQuoted = 40

// quoted is t as a Go-quoted string, cut to maxQuoted bytes (at a rune
// boundary) with the field's full length said after it.
func quoted(t string) string {
	if len(t) <= maxQuoted {
		return strconv.Quote(t)
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(controls.Prefix(t, maxQuoted)), len(t))
}
