//go:build nocatalog

package ncclmsg

// compiledIn is nil in a program built with the tag nocatalog: it has no
// catalog until Provide gives it the files.
func compiledIn() ReadFunc { return nil }

// CompiledIn reports whether the catalog is compiled into the program: not
// in a program built with the tag nocatalog.
func CompiledIn() bool { return false }
