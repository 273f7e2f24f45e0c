package ncclenv

import (
	"fmt"
	"strings"
)

// NCCL's names for the tuned collective functions, algorithms and protocols,
// in index order (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/init.cc#L52-L55).
// They are the vocabulary of NCCL_ALGO and NCCL_PROTO.
var (
	funcNames  = [...]string{"Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"}
	algoNames  = [...]string{"Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"}
	protoNames = [...]string{"LL", "LL128", "Simple"}
)

// FuncNames returns NCCL's collective function names in index order.
func FuncNames() []string { return append([]string(nil), funcNames[:]...) }

// AlgoNames returns NCCL's algorithm names in index order.
func AlgoNames() []string { return append([]string(nil), algoNames[:]...) }

// ProtoNames returns NCCL's protocol names in index order.
func ProtoNames() []string { return append([]string(nil), protoNames[:]...) }

// ListError explains why a NCCL_ALGO/NCCL_PROTO style value was rejected.
type ListError struct {
	Value  string // the whole value
	Token  string // the offending token, if any
	Reason string
}

func (e *ListError) Error() string {
	if e.Token != "" {
		return fmt.Sprintf("%s %q in %q", e.Reason, e.Token, e.Value)
	}
	return fmt.Sprintf("%s in %q", e.Reason, e.Value)
}

// ParseList applies a value written in NCCL's per-function list syntax to
// list, a matrix with one row per prefix and one column per element, the way
// parseList does in https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/tuning.cc#L36-L136:
//
//	[prefix:][^]elem[,elem...][;prefix:[^]elem[,elem...]]...
//
// Entries are separated by ';', a prefix by ':' and elements by ','; empty
// pieces are skipped as strtok does. Only the first entry may omit the prefix,
// and then it applies to every row. Each entry first resets its rows (to 0,
// or to 1 after '^') and then sets the listed elements (to 1, or to 0 after
// '^'). Names compare case-insensitively but spaces are not trimmed. Text
// after a second ':' in an entry is ignored, as in the release. Unknown
// prefixes or elements are errors naming the token. On error list may have
// been partly modified, as in NCCL (which then fails communicator init).
func ParseList(value string, prefixes, elems []string, list [][]int) error {
	if len(list) != len(prefixes) {
		return fmt.Errorf("parse list: matrix has %d rows for %d prefixes", len(list), len(prefixes))
	}
	for i, row := range list {
		if len(row) != len(elems) {
			return fmt.Errorf("parse list: row %d has %d columns for %d elements", i, len(row), len(elems))
		}
	}
	for pos := 0; pos < len(value); {
		// strtok_r(";"): skip separators, then take a token.
		for pos < len(value) && value[pos] == ';' {
			pos++
		}
		if pos >= len(value) {
			break
		}
		atStart := pos == 0 // strtok's token pointer equals the buffer start
		end := strings.IndexByte(value[pos:], ';')
		if end < 0 {
			end = len(value)
		} else {
			end += pos
		}
		entry := value[pos:end]
		pos = end

		parts := nonEmptySplit(entry, ':')
		var prefix, elemList string
		hasPrefix := false
		switch {
		case len(parts) == 0:
			// strtok finds no token at all (the entry is only ':').
			if !atStart {
				return &ListError{Value: value, Token: entry, Reason: "entry without a prefix (only the first may omit it)"}
			}
			return &ListError{Value: value, Token: entry, Reason: "empty entry (NCCL v2.30.7-1 dereferences a null pointer here)"}
		case len(parts) == 1:
			if !atStart {
				return &ListError{Value: value, Token: entry, Reason: "entry without a prefix (only the first may omit it)"}
			}
			elemList = parts[0]
		default:
			prefix, elemList, hasPrefix = parts[0], parts[1], true
		}

		set, unset := 1, 0
		if strings.HasPrefix(elemList, "^") {
			set, unset = 0, 1
			elemList = elemList[1:]
		}
		found := false
		for p, name := range prefixes {
			if hasPrefix && !strings.EqualFold(prefix, name) {
				continue
			}
			found = true
			for e := range list[p] {
				list[p][e] = unset
			}
			for _, el := range nonEmptySplit(elemList, ',') {
				idx := -1
				for e, en := range elems {
					if strings.EqualFold(el, en) {
						idx = e
						break
					}
				}
				if idx < 0 {
					return &ListError{Value: value, Token: el, Reason: "unknown element"}
				}
				list[p][idx] = set
			}
		}
		if !found {
			return &ListError{Value: value, Token: prefix, Reason: "unknown prefix"}
		}
	}
	return nil
}

// nonEmptySplit splits s at sep and drops empty pieces, like repeated strtok.
func nonEmptySplit(s string, sep byte) []string {
	var out []string
	for _, p := range strings.Split(s, string(sep)) {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// CheckList reports whether value is accepted by NCCL's list parser for the
// given prefixes and elements, without keeping the result.
func CheckList(value string, prefixes, elems []string) error {
	list := make([][]int, len(prefixes))
	for i := range list {
		list[i] = make([]int, len(elems))
	}
	return ParseList(value, prefixes, elems, list)
}
