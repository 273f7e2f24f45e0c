package doctor

import (
	"bufio"
	"io"
)

// crReader turns a lone carriage return (old Mac line ends, progress bars
// that redraw a line) into a line feed, so that the text after it is read
// as a line of its own instead of vanishing into the line before. CRLF is
// left alone; readLine drops the CR.
type crReader struct {
	r *bufio.Reader
}

func newCRReader(r io.Reader) *crReader {
	return &crReader{r: bufio.NewReaderSize(r, 64<<10)}
}

func (c *crReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		b, err := c.r.ReadByte()
		if err != nil {
			return n, err
		}
		if b == '\r' {
			if next, err := c.r.Peek(1); err != nil || next[0] != '\n' {
				b = '\n'
			}
		}
		p[n] = b
		n++
		if c.r.Buffered() == 0 {
			break // hand over what is here rather than wait for more
		}
	}
	return n, nil
}
