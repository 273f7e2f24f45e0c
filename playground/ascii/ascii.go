// Package ascii answers small questions about ASCII text that the log
// readers ask of every token: is it all digits, all upper-case letters, a
// decimal number. It exists so that the catalog matcher (ncclmsg) and the
// doctor share one definition instead of each keeping its own.
package ascii

// Digits reports whether s is non-empty and every byte is '0'-'9'.
func Digits(s string) bool {
	return all(s, func(c byte) bool { return '0' <= c && c <= '9' })
}

// Upper reports whether s is non-empty and every byte is 'A'-'Z'.
func Upper(s string) bool {
	return all(s, func(c byte) bool { return 'A' <= c && c <= 'Z' })
}

// Letters reports whether s is non-empty and every byte is an ASCII letter.
func Letters(s string) bool {
	return all(s, func(c byte) bool { return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' })
}

// Decimal reports whether s is non-empty and made only of digits and '.'
// (the cells of NCCL's tables: "25.2", "0.0", "1024").
func Decimal(s string) bool {
	return all(s, func(c byte) bool { return '0' <= c && c <= '9' || c == '.' })
}

// IsHex reports whether c is a hexadecimal digit of either case.
func IsHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func all(s string, ok func(byte) bool) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}
