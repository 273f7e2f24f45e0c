package topo

import (
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/printf"
)

// Input limits. NCCL's own reader allows 256 XML nodes per host
// (NCCL_TOPO_XML_MAX_NODES, topo.h:211) and strings of 255 characters
// (MAX_STR_LEN, xml.h:22); the limits here are looser but finite.
const (
	MaxInputBytes  = 16 << 20 // 16 MiB
	MaxElements    = 8192
	MaxDepth       = 64
	maxStrLen      = 255 // MAX_STR_LEN
	maxAttrPerElem = 64
)

// Warning is a non-fatal remark about the input, tied to a line.
type Warning struct {
	Line    int
	Message string
}

// String renders the warning as "line N: message".
func (w Warning) String() string {
	if w.Line > 0 {
		return printf.Sprintf("line %d: %s", w.Line, w.Message)
	}
	return w.Message
}

// LineError is a fatal input error tied to a line.
type LineError struct {
	Line int
	Msg  string
}

// Error renders the error as "line N: message".
func (e *LineError) Error() string {
	if e.Line > 0 {
		return printf.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

func lineErr(line int, format string, args ...any) error {
	return &LineError{Line: line, Msg: printf.Sprintf(format, args...)}
}

// xmlAttr is one attribute as written; ns is the resolved namespace.
type xmlAttr struct {
	ns, name, value string
}

// element is one node of the parsed XML tree.
type element struct {
	name     string
	ns       string
	attrs    []xmlAttr
	children []*element
	parent   *element
	line     int
}

// attr returns the value of the un-namespaced attribute key and whether it is
// present (xmlGetAttr).
func (e *element) attr(key string) (string, bool) {
	for _, a := range e.attrs {
		if a.ns == "" && a.name == key {
			return a.value, true
		}
	}
	return "", false
}

// child returns the first child with the given name (xmlGetSub).
func (e *element) child(name string) *element {
	for _, c := range e.children {
		if c.ns == "" && c.name == name {
			return c
		}
	}
	return nil
}

// document is the raw result of reading the XML.
type document struct {
	root        *element
	description string
	warnings    []Warning
}

// readDocument reads r (at most MaxInputBytes) into an element tree with
// the tokenizer of xmlscan.go.
func readDocument(r io.Reader) (*document, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxInputBytes+1))
	if err != nil {
		return nil, wrapError("read topology", err)
	}
	if len(data) > MaxInputBytes {
		return nil, errors.New("topology input exceeds " + strconv.Itoa(MaxInputBytes) + " bytes")
	}
	sc := newXMLScanner(string(data))
	doc := &document{}
	var stack []*element
	count := 0
	for {
		tok, err := sc.next()
		if err != nil {
			return nil, err
		}
		switch tok.kind {
		case tokEOF:
			if doc.root == nil {
				return nil, errors.New("topology XML is empty")
			}
			return doc, nil
		case tokStart:
			if err := checkLimits(tok, count, len(stack)); err != nil {
				return nil, err
			}
			count++
			el := &element{name: tok.name.local, ns: tok.name.ns, attrs: tok.attrs, line: tok.line}
			if len(stack) == 0 {
				doc.root = el
			} else {
				p := stack[len(stack)-1]
				el.parent = p
				p.children = append(p.children, el)
			}
			stack = append(stack, el)
		case tokEnd:
			stack = stack[:len(stack)-1]
		case tokText:
			if strings.TrimSpace(tok.text) != "" {
				doc.warnings = append(doc.warnings, Warning{Line: tok.line, Message: "text content ignored"})
			}
		case tokComment:
			if doc.description == "" && doc.root == nil {
				doc.description, _ = descriptionComment(tok.text)
			}
		case tokDirective:
			doc.warnings = append(doc.warnings, Warning{Line: tok.line, Message: "directive <!" + tok.name.local + "...> ignored"})
		case tokProcInst:
			// <?xml version="1.0"?> and similar are harmless.
		}
	}
}

// checkLimits applies the input limits to a start tag that would be element
// number count+1 at nesting depth depth.
func checkLimits(tok xmlToken, count, depth int) error {
	switch {
	case count >= MaxElements:
		return &LineError{Line: tok.line, Msg: "more than " + strconv.Itoa(MaxElements) + " elements"}
	case depth >= MaxDepth:
		return &LineError{Line: tok.line, Msg: "elements nested deeper than " + strconv.Itoa(MaxDepth)}
	case len(tok.attrs) > maxAttrPerElem:
		return &LineError{Line: tok.line, Msg: "<" + tok.name.local + "> has " + strconv.Itoa(len(tok.attrs)) + " attributes (limit " + strconv.Itoa(maxAttrPerElem) + ")"}
	}
	for _, a := range tok.attrs {
		if len(a.value) > maxStrLen {
			return &LineError{Line: tok.line, Msg: "attribute " + a.name + " of <" + tok.name.local + "> is longer than " + strconv.Itoa(maxStrLen) + " characters (NCCL's MAX_STR_LEN)"}
		}
	}
	return nil
}

// wrapError prefixes err with context and keeps it reachable for
// errors.Is and errors.As.
func wrapError(context string, err error) error {
	return &contextError{context: context, err: err}
}

type contextError struct {
	context string
	err     error
}

func (e *contextError) Error() string { return e.context + ": " + e.err.Error() }

func (e *contextError) Unwrap() error { return e.err }

// findTag returns the first element named name in document order (xmlFindTag).
func findTag(e *element, name string) *element {
	if e.ns == "" && e.name == name {
		return e
	}
	for _, c := range e.children {
		if f := findTag(c, name); f != nil {
			return f
		}
	}
	return nil
}

// knownAttrs lists, per element, the attributes NCCL v2.30.7-1 reads or
// writes (topo.cc, xml.cc); "keep" is NCCL's own trimming marker.
var knownAttrs = map[string][]string{
	"system":  {"version"},
	"cpu":     {"numaid", "host_hash", "affinity", "arch", "vendor", "familyid", "modelid"},
	"pci":     {"busid", "class", "vendor", "device", "subsystem_vendor", "subsystem_device", "link_speed", "link_width"},
	"gpu":     {"dev", "sm", "rank", "gdr", "mlopart"},
	"nvlink":  {"target", "count", "tclass"},
	"c2c":     {"count", "bw"},
	"pcilink": {"target"},
	"nic":     {},
	"net":     {"name", "dev", "speed", "latency", "port", "guid", "maxconn", "gdr", "coll", "rail", "plane", "net", "gin", "rma"},
}

// knownChildren lists the child elements each element may contain.
var knownChildren = map[string][]string{
	"system": {"cpu"},
	"cpu":    {"pci", "nic"},
	"pci":    {"pci", "gpu", "nic", "pcilink"},
	"gpu":    {"nvlink", "c2c"},
	"nic":    {"net"},
}

// checkKnown walks the tree under e and records every element or attribute
// the model does not read.
func checkKnown(e *element, unknown *[]Unknown, warns *[]Warning) {
	attrs := knownAttrs[e.name]
	for _, a := range e.attrs {
		if a.ns == "xmlns" || (a.ns == "" && a.name == "xmlns") {
			continue
		}
		if e.name == "system" && (a.ns == NamespaceURI || a.ns == "dn") {
			if a.name == "p2p" {
				continue
			}
		}
		if a.ns == "" && (a.name == "keep" || contains(attrs, a.name)) {
			continue
		}
		name := a.name
		if a.ns != "" {
			name = a.ns + ":" + a.name
		}
		*unknown = append(*unknown, Unknown{Line: e.line, Element: e.name, Attr: name, Value: a.value})
		*warns = append(*warns, Warning{Line: e.line, Message: printf.Sprintf("unknown attribute %s=%q on <%s> kept but not modelled", name, a.value, e.name)})
	}
	allowed := knownChildren[e.name]
	for _, c := range e.children {
		if c.ns != "" || !contains(allowed, c.name) {
			*unknown = append(*unknown, Unknown{Line: c.line, Element: c.name})
			*warns = append(*warns, Warning{Line: c.line, Message: printf.Sprintf("unknown element <%s> inside <%s> kept but not modelled", c.name, e.name)})
			continue
		}
		checkKnown(c, unknown, warns)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
