package ncclenv

import (
	"errors"
	"strconv"
)

// readCSV splits an RFC 4180 table into records: fields separated by commas,
// records by LF or CRLF, a field in double quotes may hold commas, newlines
// and doubled quotes. Like encoding/csv with FieldsPerRecord = -1 it turns
// CRLF into LF everywhere, drops a CR at the very end, skips empty lines and
// reports the line of a malformed field; a fuzz test holds it to
// encoding/csv's results. It exists so that the js/wasm build does not link
// encoding/csv, which brings fmt and reflect with it.
func readCSV(in []byte) ([][]string, error) {
	b := crlfToLF(in)
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	var records [][]string
	line := 1
	for len(b) > 0 {
		if b[0] == '\n' { // encoding/csv skips empty lines
			b, line = b[1:], line+1
			continue
		}
		var rec []string
		start := line
		for {
			var field []byte
			if len(b) > 0 && b[0] == '"' {
				b = b[1:]
				for {
					i := 0
					for i < len(b) && b[i] != '"' {
						if b[i] == '\n' {
							line++
						}
						i++
					}
					if i == len(b) {
						return nil, csvError(start, "quoted field is not closed")
					}
					field = append(field, b[:i]...)
					b = b[i+1:]
					if len(b) > 0 && b[0] == '"' {
						field = append(field, '"')
						b = b[1:]
						continue
					}
					break
				}
				if len(b) > 0 && b[0] != ',' && b[0] != '\n' {
					return nil, csvError(line, `extraneous or missing " in quoted field`)
				}
			} else {
				i := 0
				for i < len(b) && b[i] != ',' && b[i] != '\n' {
					if b[i] == '"' {
						return nil, csvError(line, `bare " in non-quoted field`)
					}
					i++
				}
				field = b[:i]
				b = b[i:]
			}
			rec = append(rec, string(field))
			if len(b) == 0 {
				break
			}
			if b[0] == ',' {
				b = b[1:]
				continue
			}
			b, line = b[1:], line+1 // end of record
			break
		}
		records = append(records, rec)
	}
	return records, nil
}

// crlfToLF replaces every CRLF with LF.
func crlfToLF(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] == '\r' && i+1 < len(b) && b[i+1] == '\n' {
			continue
		}
		out = append(out, b[i])
	}
	return out
}

// csvError is a malformed table, tied to a line.
func csvError(line int, msg string) error {
	return errors.New("line " + strconv.Itoa(line) + ": " + msg)
}
