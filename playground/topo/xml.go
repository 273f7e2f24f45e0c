package topo

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/distributed-nav/distributed-nav/playground/controls"
)

// Input limits. NCCL's own reader allows 256 XML nodes per host
// (NCCL_TOPO_XML_MAX_NODES, topo.h:211) and strings of 255 characters
// (MAX_STR_LEN, xml.h:22); the limits here are looser but finite.
const (
	MaxInputBytes = 16 << 20 // 16 MiB
	MaxElements   = 8192
	MaxDepth      = 64
	// MaxTokens bounds the tags, text runs, comments and other
	// constructs read: a file of MaxElements elements has about three per
	// element (start, end, the whitespace after it), so this leaves room
	// for comments while a flood of tiny comments or text runs stops early
	// instead of costing work in proportion to its bytes.
	MaxTokens = 4 * MaxElements
	maxStrLen = 255 // MAX_STR_LEN
	// NCCLMaxElements is how many XML nodes NCCL's own reader takes from a
	// topology file (NCCL_TOPO_XML_MAX_NODES,
	// https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/topo.h#L211);
	// xmlLoadSub checks for a free node before it reads each tag, so once
	// 256 are taken the next tag, even a closing one, fails with "XML parser
	// is limited to 256 nodes"
	// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/xml.cc#L201-L204).
	// The model reads up to MaxElements, so that hosts larger than NCCL
	// loads from a file can still be drawn and compared, and warns at the
	// element that uses up NCCL's limit.
	NCCLMaxElements = 256
	// MaxDescription is the longest "<!-- description: ... -->" kept in
	// System.Description, in characters: a few sentences, more than twice
	// the longest preset's (429).
	MaxDescription = 1000
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
	return &LineError{Line: line, Msg: controls.Escape(fmt.Sprintf(format, args...))}
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
	root            *element
	description     string
	descriptionLine int
	warnings        warnings
}

// readDocument reads r (at most MaxInputBytes) into an element tree with
// encoding/xml's decoder in strict mode. On top of the decoder it applies
// the input limits (elements, depth, attributes, value length) as each start
// tag arrives, and rules NCCL's reader implies but XML alone does not: one
// root element, no text outside it, unique attribute names. Every error is
// a *LineError on the line where the offending construct starts.
func readDocument(r io.Reader) (*document, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxInputBytes+1))
	if err != nil {
		return nil, wrapError("read topology", err)
	}
	if len(data) > MaxInputBytes {
		return nil, errors.New("topology input exceeds " + strconv.Itoa(MaxInputBytes) + " bytes")
	}
	rd := newXMLReader(data)
	doc := &document{}
	var stack []*element
	count, tokens := 0, 0
	rootDone := false
	for ; ; tokens++ {
		if tokens >= MaxTokens {
			return nil, lineErr(rd.line, "more than %d XML tokens (tags, text runs, comments); a topology file of %d elements has far fewer", MaxTokens, MaxElements)
		}
		tok, line, err := rd.next()
		if err == io.EOF {
			if doc.root == nil {
				return nil, errors.New("topology XML is empty")
			}
			return doc, nil
		}
		if err != nil {
			return nil, rd.explain(err, stack)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if len(stack) == 0 && rootDone {
				return nil, lineErr(line, "more than one top-level element")
			}
			if err := checkLimits(t, line, count, len(stack)); err != nil {
				return nil, err
			}
			if count+1 == NCCLMaxElements {
				doc.warnings.add(line, "element %d: NCCL's own reader holds at most %d XML elements (NCCL_TOPO_XML_MAX_NODES) and fails with \"XML parser is limited to %d nodes\" at the next tag, so NCCL_TOPO_FILE cannot load a file this large; the model reads it anyway", count+1, NCCLMaxElements, NCCLMaxElements)
			}
			count++
			el := &element{name: t.Name.Local, ns: cleanValue(t.Name.Space), line: line}
			if len(t.Attr) > 0 {
				el.attrs = make([]xmlAttr, len(t.Attr))
				for i, a := range t.Attr {
					v := cleanValue(a.Value)
					if len(v) != len(a.Value) {
						doc.warnings.add(line, "attribute %s of <%s> holds terminal control characters; they are removed (%q is read as %q)",
							a.Name.Local, t.Name.Local, a.Value, v)
					}
					el.attrs[i] = xmlAttr{ns: cleanValue(a.Name.Space), name: a.Name.Local, value: v}
				}
			}
			if len(stack) == 0 {
				doc.root = el
			} else {
				p := stack[len(stack)-1]
				el.parent = p
				p.children = append(p.children, el)
			}
			stack = append(stack, el)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
			rootDone = len(stack) == 0
		case xml.CharData:
			i := bytes.IndexFunc(t, func(r rune) bool { return !isSpace(r) })
			if i < 0 {
				continue
			}
			if len(stack) == 0 {
				return nil, lineErr(line+bytes.Count(t[:i], []byte("\n")), "text outside the root element (is this an NCCL topology XML file?)")
			}
			doc.warnings.add(line, "text content ignored")
		case xml.Comment:
			if doc.description == "" && doc.root == nil {
				doc.description, _ = descriptionComment(string(t))
				doc.descriptionLine = line
			}
		case xml.Directive:
			doc.warnings.add(line, "directive <!%s...> ignored", directiveKeyword(t))
		case xml.ProcInst:
			// <?xml version="1.0"?> and similar are harmless.
		}
	}
}

// xmlReader wraps encoding/xml's Decoder with the line on which each token
// starts (the decoder's position before the token is read) and the byte
// offset, so that errors can name the construct that was left open.
type xmlReader struct {
	src  []byte
	dec  *xml.Decoder
	line int   // line where the last token returned or failed started
	off  int64 // offset where it started
}

// newXMLReader returns a reader of src; a leading UTF-8 byte order mark is
// skipped (encoding/xml would return it as text before the root).
func newXMLReader(src []byte) *xmlReader {
	src = bytes.TrimPrefix(src, []byte("\uFEFF"))
	return &xmlReader{src: src, dec: xml.NewDecoder(bytes.NewReader(src))}
}

// next returns the next token, a copy that stays valid, and its line.
func (r *xmlReader) next() (xml.Token, int, error) {
	r.line, _ = r.dec.InputPos()
	r.off = r.dec.InputOffset()
	tok, err := r.dec.Token()
	if err != nil {
		return nil, r.line, err
	}
	return xml.CopyToken(tok), r.line, nil
}

// explain turns a decoder error into a *LineError. encoding/xml reports an
// input that ends early as "unexpected EOF" on the last line; the message
// here says what was left open and where it started instead.
func (r *xmlReader) explain(err error, open []*element) error {
	var se *xml.SyntaxError
	if !errors.As(err, &se) {
		return wrapError("read topology XML", err)
	}
	if strings.HasPrefix(se.Msg, "illegal character code") || se.Msg == "invalid UTF-8" {
		// The decoder checks a run of text after reading all of it, so
		// its line is where the run ends; find the character itself.
		return &LineError{Line: r.lineOfBadChar(se.Line), Msg: se.Msg}
	}
	if before, after, ok := strings.Cut(se.Msg, "> closed by </"); ok && len(open) > 0 {
		// "element <cpu> closed by </system>": say where <cpu> opened.
		top := open[len(open)-1]
		return lineErr(se.Line, "%s> from line %d closed by </%s", before, top.line, after)
	}
	if se.Msg != "unexpected EOF" {
		// The decoder quotes the bad name it read ("invalid XML name:
		// cpu\u009b") raw.
		return &LineError{Line: se.Line, Msg: controls.Escape(strings.TrimPrefix(se.Msg, "xml: "))}
	}
	rest := bytes.TrimLeftFunc(r.src[min(int(r.off), len(r.src)):], isSpace)
	line := r.line + bytes.Count(r.src[min(int(r.off), len(r.src)):len(r.src)-len(rest)], []byte("\n"))
	switch {
	case len(rest) == 0 && len(open) > 0:
		top := open[len(open)-1]
		return lineErr(se.Line, "unexpected EOF: element <%s> from line %d is not closed", qualified(top.ns, top.name), top.line)
	case bytes.HasPrefix(rest, []byte("<!--")):
		return lineErr(line, "comment is not closed by -->")
	case bytes.HasPrefix(rest, []byte("<![CDATA[")):
		return lineErr(line, "CDATA section is not closed by ]]>")
	case bytes.HasPrefix(rest, []byte("<?")):
		return lineErr(line, "processing instruction is not closed by ?>")
	case bytes.HasPrefix(rest, []byte("<!")):
		return lineErr(line, "directive is not closed by >")
	case bytes.HasPrefix(rest, []byte("<")):
		return lineErr(line, "unexpected EOF: the tag that starts here is not closed (a quote or > is missing)")
	}
	return &LineError{Line: se.Line, Msg: "unexpected EOF"}
}

// lineOfBadChar returns the line of the first byte at or after the start of
// the failed token that is not valid UTF-8 or not an XML character, or
// fallback when there is none.
func (r *xmlReader) lineOfBadChar(fallback int) int {
	start := min(int(r.off), len(r.src))
	rest := r.src[start:]
	for i := 0; i < len(rest); {
		c, n := utf8.DecodeRune(rest[i:])
		if c == utf8.RuneError && n == 1 || !isXMLChar(c) {
			return r.line + bytes.Count(rest[:i], []byte("\n"))
		}
		i += n
	}
	return fallback
}

// isXMLChar reports whether c is in XML 1.0's Char production.
func isXMLChar(c rune) bool {
	return c == '\t' || c == '\n' || c == '\r' ||
		c >= 0x20 && c <= 0xD7FF ||
		c >= 0xE000 && c <= 0xFFFD ||
		c >= 0x10000 && c <= utf8.MaxRune
}

// qualified spells a name as namespace:local, or local alone.
func qualified(ns, local string) string {
	if ns == "" {
		return local
	}
	return ns + ":" + local
}

// directiveKeyword returns the first word of a directive body, such as
// DOCTYPE.
func directiveKeyword(d xml.Directive) string {
	end := bytes.IndexFunc(d, func(r rune) bool { return isSpace(r) || r == '[' || r == '<' || r == '>' })
	if end < 0 {
		end = len(d)
	}
	return string(d[:end])
}

// isSpace reports whether r is XML whitespace.
func isSpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r'
}

// checkLimits applies the input limits to a start tag on line that would be
// element number count+1 at nesting depth depth, and rejects an attribute
// name given twice (NCCL's reader would keep the first, encoding/xml
// returns both).
func checkLimits(t xml.StartElement, line, count, depth int) error {
	name := qualified(t.Name.Space, t.Name.Local)
	switch {
	case count >= MaxElements:
		return lineErr(line, "more than %d elements", MaxElements)
	case depth >= MaxDepth:
		return lineErr(line, "elements nested deeper than %d", MaxDepth)
	case len(t.Attr) > maxAttrPerElem:
		return lineErr(line, "<%s> has %d attributes (limit %d)", name, len(t.Attr), maxAttrPerElem)
	}
	for j, a := range t.Attr {
		if len(a.Value) > maxStrLen {
			return lineErr(line, "attribute %s of <%s> is longer than %d characters (NCCL's MAX_STR_LEN)", a.Name.Local, name, maxStrLen)
		}
		for i := range j {
			if t.Attr[i].Name == a.Name {
				return lineErr(line, "duplicate attribute %s in start tag <%s> (attributes %d and %d)", qualified(a.Name.Space, a.Name.Local), name, i+1, j+1)
			}
		}
	}
	return nil
}

// descriptionComment returns the text of a "description: ..." comment,
// as plain text (see plainText).
func descriptionComment(comment string) (string, bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(comment), "description:")
	return strings.TrimSpace(plainText(rest)), ok
}

// plainText returns s without terminal control sequences, so that text
// of the file that is shown (the description) can neither set a window
// title nor clear the screen of whoever runs ncclsim, nor show control
// characters on the page: line breaks and tabs become one space, then
// controls.Strip removes escape sequences whole (in their 7-bit and C1
// forms) and every other control. XML comments are the one text
// encoding/xml passes on with such characters; character data and
// attribute values with C0 controls are refused by the decoder.
func plainText(s string) string {
	if !hasControl(s) {
		return s
	}
	spaced := strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		return r
	}, s)
	clean, _ := controls.Strip([]byte(spaced))
	return string(clean)
}

// cleanValue is plainText for an attribute value or a namespace: it
// returns s itself when s holds no control character, so that the length
// says whether anything was removed. Go's decoder refuses C0 controls in
// attribute values but passes DEL and the C1 controls (U+0080-U+009F, the
// 8-bit CSI U+009B among them), which a terminal may obey when ncclsim
// prints a NIC's name.
func cleanValue(s string) string {
	if !hasControl(s) {
		return s
	}
	return plainText(s)
}

// hasControl reports whether s holds a C0 or C1 control or DEL.
func hasControl(s string) bool { return strings.ContainsFunc(s, controls.Is) }

// Description returns the text of the first "<!-- description: ... -->"
// comment with non-empty text before the root element of a topology file,
// the one-line summary that presets and System.Description carry. Only
// the input up to the root's start tag is read; it must be well-formed.
func Description(b []byte) (string, error) {
	rd := newXMLReader(b)
	for {
		tok, _, err := rd.next()
		if err == io.EOF {
			return "", errors.New("no root element")
		}
		if err != nil {
			return "", rd.explain(err, nil)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			return "", errors.New(`no "<!-- description: ... -->" comment before the root element`)
		case xml.Comment:
			if d, ok := descriptionComment(string(t)); ok && d != "" {
				return d, nil
			}
		}
	}
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
func checkKnown(e *element, unknown *[]Unknown, warns *warnings) {
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
		warns.add(e.line, "unknown attribute %s=%q on <%s> kept but not modelled", name, a.value, e.name)
	}
	allowed := knownChildren[e.name]
	for _, c := range e.children {
		if c.ns != "" || !contains(allowed, c.name) {
			*unknown = append(*unknown, Unknown{Line: c.line, Element: c.name})
			warns.add(c.line, "unknown element <%s> inside <%s> kept but not modelled", c.name, e.name)
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
