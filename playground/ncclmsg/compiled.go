//go:build !nocatalog

package ncclmsg

import (
	"io/fs"

	"github.com/distributed-nav/distributed-nav/data"
)

// compiledIn reads the catalog compiled into the program (data.Messages).
func compiledIn() ReadFunc {
	return func(name string) ([]byte, error) { return fs.ReadFile(data.Messages, name) }
}

// CompiledIn reports whether the catalog is compiled into the program (it
// is unless the program was built with the tag nocatalog).
func CompiledIn() bool { return true }
