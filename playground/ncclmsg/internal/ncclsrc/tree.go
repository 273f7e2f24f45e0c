package ncclsrc

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"path"
	"sort"
	"strings"
)

// File is one source file of a release.
type File struct {
	Path string // relative to the repository root, e.g. src/init.cc
	Text string
}

// sourceExts are the extensions of the C/C++ files NCCL builds from.
var sourceExts = map[string]bool{".cc": true, ".h": true, ".cu": true, ".cuh": true, ".c": true, ".cpp": true, ".hpp": true, ".in": true}

// ReadTree returns the C/C++ files under src/ of an NCCL git repository at
// tag, sorted by path. It runs `git archive`, so a bare repository works.
func ReadTree(repo, tag string) ([]File, error) {
	cmd := exec.Command("git", "-C", repo, "archive", "--format=tar", tag, "src")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git archive %s: %w: %s", tag, err, strings.TrimSpace(stderr.String()))
	}
	tr := tar.NewReader(bytes.NewReader(out))
	var files []File
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("git archive %s: %w", tag, err)
		}
		if h.Typeflag != tar.TypeReg || !sourceExts[path.Ext(h.Name)] {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("git archive %s: %s: %w", tag, h.Name, err)
		}
		files = append(files, File{Path: h.Name, Text: string(b)})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, nil
}
