package citecheck

import (
	"fmt"
	"sort"
	"strings"
)

// readerKeys maps an environment table's Reader ("NCCL", "PyTorch",
// "NCCL, PyTorch") to the keys of the pinned trees that read the variable.
func readerKeys(reader string) []string {
	var keys []string
	for _, r := range strings.Split(reader, ", ") {
		switch r {
		case "NCCL":
			keys = append(keys, "nccl")
		case "PyTorch":
			keys = append(keys, "pytorch")
		}
	}
	return keys
}

// CheckLibrary returns what is wrong with the permalinks of one sentence
// as a whole, or "": a sentence that carries permalinks into the pinned
// trees and names an environment variable must cite at least one line of
// a library that reads it. A sentence about TORCH_NCCL_DUMP_ON_TIMEOUT
// whose only permalink opens NCCL, or one about NCCL_P2P_LEVEL that
// cites only PyTorch, anchors the variable's behaviour nowhere. cit is any
// one link of the sentence; its siblings are the others. Call it once per
// sentence.
func (c *Checker) CheckLibrary(cit Citation) string {
	cited := map[string]bool{}
	for _, l := range append([]Link{{Text: cit.Text, URL: cit.URL}}, cit.Siblings...) {
		if tg, ok := c.src.Resolve(l.URL); ok {
			// An older tag of a tree (removed variables) is the same library.
			cited[strings.TrimSuffix(tg.Tree.Key, "-legacy")] = true
		}
	}
	if len(cited) == 0 {
		return ""
	}
	var missing []string
	for _, n := range Identifiers(cit.Sentence) {
		keys, ok := c.readers[n]
		if !ok {
			continue
		}
		found := false
		for _, k := range keys {
			if cited[k] {
				found = true
			}
		}
		if !found {
			missing = append(missing, fmt.Sprintf("`%s` (read by %s)", n, strings.Join(c.readerNames(keys), ", ")))
		}
	}
	if len(missing) == 0 {
		return ""
	}
	var have []string
	for k := range cited {
		have = append(have, k)
	}
	sort.Strings(have)
	return fmt.Sprintf("the sentence names %s but its permalinks open only %s; cite the line of the library that reads it", strings.Join(missing, ", "), strings.Join(c.readerNames(have), ", "))
}

// readerNames returns the repositories of the trees with the given keys.
func (c *Checker) readerNames(keys []string) []string {
	var out []string
	for _, k := range keys {
		if t := c.src.Tree(k); t != nil {
			out = append(out, t.Repo)
		} else {
			out = append(out, k)
		}
	}
	return out
}
