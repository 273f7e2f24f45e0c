package doctor

import (
	"bytes"
	"io"
	"unicode/utf8"
)

// columns aligns tab-separated cells into columns, as text/tabwriter does
// with minwidth 0, padding pad, padchar ' ' and no flags: a cell ended by a
// tab belongs to a column, whose width is its widest cell (in runes) plus
// the padding over each block of consecutive lines that have that column;
// the text after a line's last tab is written as it is. Output is held until
// Flush. It exists because text/tabwriter imports fmt, which would put fmt
// and reflect back into the wasm build (about 23 KB of its gzip size); a
// test holds it to text/tabwriter's output.
type columns struct {
	w   io.Writer
	pad int
	buf []byte
}

func newColumns(w io.Writer, pad int) *columns { return &columns{w: w, pad: pad} }

// Write buffers p.
func (c *columns) Write(p []byte) (int, error) {
	c.buf = append(c.buf, p...)
	return len(p), nil
}

// Flush aligns and writes everything written so far.
func (c *columns) Flush() error {
	if len(c.buf) == 0 {
		return nil
	}
	text := c.buf
	c.buf = nil
	var lines [][][]byte // cells per line
	var ends []bool      // whether the line ended with a newline
	for len(text) > 0 {
		line, rest, nl := bytes.Cut(text, []byte{'\n'})
		lines = append(lines, bytes.Split(line, []byte{'\t'}))
		ends = append(ends, nl)
		text = rest
	}
	// tabwriter ends an unterminated last line at its last tab when no text
	// follows it.
	if n := len(lines) - 1; n >= 0 && !ends[n] && len(lines[n]) > 1 && len(lines[n][len(lines[n])-1]) == 0 {
		lines[n] = lines[n][:len(lines[n])-1]
	}
	var out []byte
	var format func(widths []int, line0, line1 int)
	writeLines := func(widths []int, line0, line1 int) {
		for i := line0; i < line1; i++ {
			for j, cell := range lines[i] {
				out = append(out, cell...)
				if j < len(widths) {
					for n := widths[j] - utf8.RuneCount(cell); n > 0; n-- {
						out = append(out, ' ')
					}
				}
			}
			if ends[i] {
				out = append(out, '\n')
			}
		}
	}
	format = func(widths []int, line0, line1 int) {
		column := len(widths)
		for this := line0; this < line1; this++ {
			if column >= len(lines[this])-1 {
				continue
			}
			writeLines(widths, line0, this)
			line0 = this
			width := 0
			for ; this < line1 && column < len(lines[this])-1; this++ {
				width = max(width, utf8.RuneCount(lines[this][column])+c.pad)
			}
			format(append(widths[:column:column], width), line0, this)
			line0 = this
		}
		writeLines(widths, line0, line1)
	}
	format(nil, 0, len(lines))
	_, err := c.w.Write(out)
	return err
}
