package controls

import "unicode/utf8"

// Strip removes, from one line of text:
//   - CSI sequences: ESC [ parameters intermediates final (colours, cursor
//     moves), and the 8-bit CSI U+009B;
//   - OSC, DCS, SOS, PM and APC strings: ESC ] ... up to BEL or ESC \
//     (window titles, hyperlinks), and their 8-bit forms;
//   - other escape sequences (ESC and the bytes up to its final byte);
//   - every other C0 control but TAB (NUL, BEL, backspace, ...), DEL and
//     the C1 controls U+0080 to U+009F, in UTF-8 or as raw 8-bit bytes
//     (0x9B is the 8-bit CSI, so "\x9b31m" goes as a whole).
//
// It returns the cleaned line and how many sequences or controls it
// removed. A line without ESC or controls is returned as is.
func Strip(b []byte) ([]byte, int) {
	dirty := false
	for _, c := range b {
		if (c < 0x20 && c != '\t') || c == 0x7f || (c >= 0x80 && c <= 0x9f) || c == 0xc2 {
			dirty = true
			break
		}
	}
	if !dirty {
		return b, 0
	}
	out := make([]byte, 0, len(b))
	removed := 0
	for i := 0; i < len(b); {
		c := b[i]
		if c == 0x1b {
			i = skipEscape(b, i+1)
			removed++
			continue
		}
		if c1, n := c1At(b, i); n > 0 {
			switch i += n; c1 {
			case 0x9b: // CSI
				i = skipCSI(b, i)
			case 0x9d, 0x90, 0x98, 0x9e, 0x9f: // OSC, DCS, SOS, PM, APC
				i = skipString(b, i)
			}
			removed++
			continue
		}
		if c >= 0x80 {
			// The whole of a UTF-8 sequence, so that its continuation
			// bytes (0x80-0xBF) are never taken for raw C1 controls.
			_, size := utf8.DecodeRune(b[i:])
			out = append(out, b[i:i+size]...)
			i += size
			continue
		}
		if (c < 0x20 && c != '\t') || c == 0x7f {
			i++
			removed++
			continue
		}
		out = append(out, c)
		i++
	}
	return out, removed
}

// c1At reports the C1 control (0x80-0x9F) that starts at b[i] and its
// length in bytes: 2 for its UTF-8 form (C2 80 to C2 9F), 1 for the raw
// 8-bit byte, which is not valid UTF-8 and is found here only outside a
// valid sequence (Strip steps over whole sequences). n is 0 when
// no C1 control starts at i.
func c1At(b []byte, i int) (c1 byte, n int) {
	switch c := b[i]; {
	case c == 0xc2 && i+1 < len(b) && b[i+1] >= 0x80 && b[i+1] <= 0x9f:
		return b[i+1], 2
	case c >= 0x80 && c <= 0x9f:
		return c, 1
	}
	return 0, 0
}

// skipEscape returns the index after the escape sequence whose ESC is just
// before i.
func skipEscape(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '[':
		return skipCSI(b, i+1)
	case ']', 'P', 'X', '^', '_':
		return skipString(b, i+1)
	}
	// nF sequences: intermediates 0x20-0x2F, then one final byte.
	return skipFinal(b, skipRun(b, i, 0x20, 0x2f), 0x30, 0x7e)
}

// skipCSI skips parameter bytes 0x30-0x3F, intermediate bytes 0x20-0x2F
// and the final byte 0x40-0x7E.
func skipCSI(b []byte, i int) int {
	return skipFinal(b, skipRun(b, skipRun(b, i, 0x30, 0x3f), 0x20, 0x2f), 0x40, 0x7e)
}

// skipRun returns the index after the bytes in lo..hi that start at i.
func skipRun(b []byte, i int, lo, hi byte) int {
	for i < len(b) && b[i] >= lo && b[i] <= hi {
		i++
	}
	return i
}

// skipFinal returns the index after a sequence's final byte at i when it
// is in lo..hi (else i: a cut sequence ends where the line does).
func skipFinal(b []byte, i int, lo, hi byte) int {
	if i < len(b) && b[i] >= lo && b[i] <= hi {
		return i + 1
	}
	return i
}

// skipString skips a control string up to and including its terminator:
// BEL, ESC \ or the 8-bit ST (U+009C). An unterminated string runs to the
// end of the line.
func skipString(b []byte, i int) int {
	for i < len(b) {
		switch {
		case b[i] == 0x07:
			return i + 1
		case b[i] == 0x1b && i+1 < len(b) && b[i+1] == '\\':
			return i + 2
		case b[i] == 0xc2 && i+1 < len(b) && b[i+1] == 0x9c:
			return i + 2
		case b[i] == 0x9c:
			return i + 1
		}
		i++
	}
	return i
}
