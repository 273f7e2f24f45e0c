package topo

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
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
		return fmt.Sprintf("line %d: %s", w.Line, w.Message)
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
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

func lineErr(line int, format string, args ...any) error {
	return &LineError{Line: line, Msg: fmt.Sprintf(format, args...)}
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

// readDocument tokenises r with encoding/xml into an element tree.
func readDocument(r io.Reader) (*document, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxInputBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read topology: %w", err)
	}
	if len(data) > MaxInputBytes {
		return nil, fmt.Errorf("topology input exceeds %d bytes", MaxInputBytes)
	}
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = true
	doc := &document{}
	var stack []*element
	count := 0
	for {
		line, _ := dec.InputPos()
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var se *xml.SyntaxError
			if errors.As(err, &se) {
				return nil, lineErr(se.Line, "%s", se.Msg)
			}
			return nil, lineErr(line, "%v", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			count++
			if count > MaxElements {
				return nil, lineErr(line, "more than %d elements", MaxElements)
			}
			if len(stack) >= MaxDepth {
				return nil, lineErr(line, "elements nested deeper than %d", MaxDepth)
			}
			if len(t.Attr) > maxAttrPerElem {
				return nil, lineErr(line, "<%s> has %d attributes (limit %d)", t.Name.Local, len(t.Attr), maxAttrPerElem)
			}
			el := &element{name: t.Name.Local, ns: t.Name.Space, line: line}
			for _, a := range t.Attr {
				if len(a.Value) > maxStrLen {
					return nil, lineErr(line, "attribute %s of <%s> is longer than %d characters (NCCL's MAX_STR_LEN)", a.Name.Local, t.Name.Local, maxStrLen)
				}
				el.attrs = append(el.attrs, xmlAttr{ns: a.Name.Space, name: a.Name.Local, value: a.Value})
			}
			if len(stack) == 0 {
				if doc.root != nil {
					return nil, lineErr(line, "more than one top-level element")
				}
				doc.root = el
			} else {
				p := stack[len(stack)-1]
				el.parent = p
				p.children = append(p.children, el)
			}
			stack = append(stack, el)
		case xml.EndElement:
			if len(stack) == 0 {
				return nil, lineErr(line, "unexpected end element </%s>", t.Name.Local)
			}
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				doc.warnings = append(doc.warnings, Warning{Line: line, Message: "text content ignored"})
			}
		case xml.Comment:
			txt := strings.TrimSpace(string(t))
			if doc.description == "" && doc.root == nil {
				if rest, ok := strings.CutPrefix(txt, "description:"); ok {
					doc.description = strings.TrimSpace(rest)
				}
			}
		case xml.Directive:
			doc.warnings = append(doc.warnings, Warning{Line: line, Message: "directive <!" + firstWord(string(t)) + "...> ignored"})
		case xml.ProcInst:
			// <?xml version="1.0"?> and similar are harmless.
		}
	}
	if len(stack) != 0 {
		return nil, lineErr(stack[len(stack)-1].line, "element <%s> is not closed", stack[len(stack)-1].name)
	}
	if doc.root == nil {
		return nil, errors.New("topology XML is empty")
	}
	return doc, nil
}

func firstWord(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

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
		*warns = append(*warns, Warning{Line: e.line, Message: fmt.Sprintf("unknown attribute %s=%q on <%s> kept but not modelled", name, a.value, e.name)})
	}
	allowed := knownChildren[e.name]
	for _, c := range e.children {
		if c.ns != "" || !contains(allowed, c.name) {
			*unknown = append(*unknown, Unknown{Line: c.line, Element: c.name})
			*warns = append(*warns, Warning{Line: c.line, Message: fmt.Sprintf("unknown element <%s> inside <%s> kept but not modelled", c.name, e.name)})
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
