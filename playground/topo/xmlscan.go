package topo

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file is a small, strict XML tokenizer for NCCL topology files. It
// replaces encoding/xml, which links fmt and reflect into the js/wasm build.
//
// It reads what NCCL dumps (NCCL_TOPO_DUMP_FILE) and what people write for
// NCCL_TOPO_FILE: an optional UTF-8 byte order mark, an XML declaration,
// processing instructions, comments, <!DOCTYPE ...>-style directives, one
// root element with attributes quoted by ' or ", character data, CDATA
// sections, the five predefined entities and numeric character references.
// Names are resolved against xmlns declarations the way encoding/xml
// resolves them: a declared prefix becomes its namespace URI, "xml" becomes
// the XML namespace, an undeclared prefix is kept as is, and a default
// namespace applies to element names only.
//
// On input both accept, the tokens are the ones encoding/xml's
// Decoder.Token returns (same names, namespaces, attribute values, text,
// comments and line numbers), except that a leading byte order mark is
// skipped instead of returned as text. The tokenizer is stricter in these
// ways: a document has at most one root element and no text or CDATA
// outside it; attribute names within an element are unique and separated
// by whitespace; names are ASCII; comments, processing instructions and
// directives must hold valid UTF-8 XML characters too; character
// references must name an XML character; the XML declaration must come
// first and follow the XML grammar; a processing instruction's target is
// followed by whitespace or "?>"; a directive starts with a letter. These
// rules are listed in strictRules in xmlscan_test.go, where the
// differential fuzz target FuzzXMLScan checks them.

// tokenKind says what an xmlToken holds.
type tokenKind uint8

// Token kinds.
const (
	tokEOF       tokenKind = iota // end of input, no more tokens
	tokStart                      // <name attr="v"> or the first half of <name/>
	tokEnd                        // </name> or the second half of <name/>
	tokText                       // character data or a CDATA section
	tokComment                    // <!--text-->
	tokProcInst                   // <?target text?>
	tokDirective                  // <!KEYWORD text>
)

// xmlName is a name after namespace resolution: ns is the namespace URI,
// or the prefix as written when it was not declared.
type xmlName struct {
	ns, local string
}

// xmlToken is one unit of the input.
type xmlToken struct {
	kind tokenKind
	// line is the 1-based line where the token starts; for the end half of
	// <a/> it is the line of "/>".
	line int
	// name is the element name (tokStart, tokEnd), the target
	// (tokProcInst) or the keyword, such as DOCTYPE (tokDirective).
	name xmlName
	// attrs are the attributes of a tokStart in document order.
	attrs []xmlAttr
	// text is the character data with entities decoded and line ends
	// normalised (tokText), or the body as written (tokComment,
	// tokProcInst, tokDirective).
	text string
}

// xmlURL is the namespace bound to the prefix "xml".
const xmlURL = "http://www.w3.org/XML/1998/namespace"

// openElement is an element whose end tag has not been read yet.
type openElement struct {
	raw  xmlName // as written: ns holds the prefix
	name xmlName // resolved
	line int
	undo int // len(xmlScanner.undo) before this element's declarations
}

// nsUndo restores one namespace binding when its element ends.
type nsUndo struct {
	prefix, uri string
	had         bool
}

// xmlScanner splits a document into tokens. Names and values are
// substrings of src unless an entity or a carriage return had to be
// rewritten.
type xmlScanner struct {
	src      string
	pos      int
	line     int
	start    int // offset after the byte order mark
	open     []openElement
	ns       map[string]string // prefix -> URI of the declarations in scope
	undo     []nsUndo
	attrBuf  []xmlAttr
	buf      []byte
	pendEnd  bool // the last start tag was <name/>
	rootDone bool // the root element has ended
}

// newXMLScanner returns a scanner positioned at the start of src.
func newXMLScanner(src string) *xmlScanner {
	s := &xmlScanner{src: src, line: 1}
	if strings.HasPrefix(src, "\uFEFF") {
		s.start = len("\uFEFF")
		s.pos = s.start
	}
	return s
}

// errAt is a fatal error on a line.
func errAt(line int, msg string) error {
	return &LineError{Line: line, Msg: msg}
}

// lineAt returns the line of offset off, which must not lie before s.pos.
func (s *xmlScanner) lineAt(off int) int {
	return s.line + strings.Count(s.src[s.pos:off], "\n")
}

// advance moves to offset end, counting lines.
func (s *xmlScanner) advance(end int) {
	s.line += strings.Count(s.src[s.pos:end], "\n")
	s.pos = end
}

// next returns the next token; at the end of a well-formed input it returns
// a tokEOF token and a nil error. After an error the scanner is spent.
func (s *xmlScanner) next() (xmlToken, error) {
	if s.pendEnd {
		s.pendEnd = false
		return s.closeElement(s.line), nil
	}
	if s.pos >= len(s.src) {
		if n := len(s.open); n > 0 {
			top := s.open[n-1]
			return xmlToken{}, errAt(s.line, "unexpected EOF: element <"+rawName(top.raw)+"> from line "+strconv.Itoa(top.line)+" is not closed")
		}
		return xmlToken{kind: tokEOF, line: s.line}, nil
	}
	if s.src[s.pos] != '<' {
		return s.text()
	}
	rest := s.src[s.pos+1:]
	switch {
	case strings.HasPrefix(rest, "/"):
		return s.endTag()
	case strings.HasPrefix(rest, "?"):
		return s.procInst()
	case strings.HasPrefix(rest, "!--"):
		return s.comment()
	case strings.HasPrefix(rest, "![CDATA["):
		return s.cdata()
	case strings.HasPrefix(rest, "!-"):
		return xmlToken{}, errAt(s.line, "<!- does not start a comment (expected <!--)")
	case strings.HasPrefix(rest, "!["):
		return xmlToken{}, errAt(s.line, "<![ does not start a CDATA section (expected <![CDATA[)")
	case strings.HasPrefix(rest, "!"):
		return s.directive()
	}
	return s.startTag()
}

// text reads character data up to the next '<'.
func (s *xmlScanner) text() (xmlToken, error) {
	end := strings.IndexByte(s.src[s.pos:], '<')
	if end < 0 {
		end = len(s.src)
	} else {
		end += s.pos
	}
	raw := s.src[s.pos:end]
	if len(s.open) == 0 {
		if i := firstNonSpace(raw); i >= 0 {
			return xmlToken{}, errAt(s.lineAt(s.pos+i), "text outside the root element (is this an NCCL topology XML file?)")
		}
	}
	if i := strings.Index(raw, "]]>"); i >= 0 {
		return xmlToken{}, errAt(s.lineAt(s.pos+i), "]]> is not allowed in text")
	}
	val, err := s.decode(raw, s.pos)
	if err != nil {
		return xmlToken{}, err
	}
	tok := xmlToken{kind: tokText, line: s.line, text: val}
	s.advance(end)
	return tok, nil
}

// cdata reads <![CDATA[...]]> as text.
func (s *xmlScanner) cdata() (xmlToken, error) {
	body := s.pos + len("<![CDATA[")
	i := strings.Index(s.src[body:], "]]>")
	if i < 0 {
		return xmlToken{}, errAt(s.line, "CDATA section is not closed by ]]>")
	}
	if len(s.open) == 0 {
		return xmlToken{}, errAt(s.line, "CDATA section outside the root element")
	}
	raw := s.src[body : body+i]
	if err := s.checkChars(raw, body); err != nil {
		return xmlToken{}, err
	}
	tok := xmlToken{kind: tokText, line: s.line, text: s.normaliseCR(raw)}
	s.advance(body + i + len("]]>"))
	return tok, nil
}

// comment reads <!--...-->; "--" may only appear as part of the end.
func (s *xmlScanner) comment() (xmlToken, error) {
	body := s.pos + len("<!--")
	i := strings.Index(s.src[body:], "--")
	if i < 0 || body+i+2 >= len(s.src) {
		return xmlToken{}, errAt(s.line, "comment is not closed by -->")
	}
	if s.src[body+i+2] != '>' {
		return xmlToken{}, errAt(s.lineAt(body+i), "-- is not allowed inside a comment")
	}
	raw := s.src[body : body+i]
	if err := s.checkChars(raw, body); err != nil {
		return xmlToken{}, err
	}
	tok := xmlToken{kind: tokComment, line: s.line, text: raw}
	s.advance(body + i + len("-->"))
	return tok, nil
}

// procInst reads <?target ...?>; for the XML declaration it checks the
// version and the encoding.
func (s *xmlScanner) procInst() (xmlToken, error) {
	p := s.pos + len("<?")
	target, q, msg := scanName(s.src, p)
	if msg != "" {
		return xmlToken{}, errAt(s.lineAt(p), msg+" after <?")
	}
	if q < len(s.src) && !isSpace(s.src[q]) && !strings.HasPrefix(s.src[q:], "?>") {
		return xmlToken{}, errAt(s.lineAt(q), "expected whitespace or ?> after <?"+target)
	}
	q = skipSpace(s.src, q)
	i := strings.Index(s.src[q:], "?>")
	if i < 0 {
		return xmlToken{}, errAt(s.line, "<?"+target+" is not closed by ?>")
	}
	raw := s.src[q : q+i]
	if err := s.checkChars(raw, q); err != nil {
		return xmlToken{}, err
	}
	if target == "xml" {
		if s.pos != s.start {
			return xmlToken{}, errAt(s.line, "the XML declaration <?xml ...?> must be at the very start of the input")
		}
		if msg := checkXMLDecl(raw); msg != "" {
			return xmlToken{}, errAt(s.line, msg)
		}
	}
	tok := xmlToken{kind: tokProcInst, line: s.line, name: xmlName{local: target}, text: raw}
	s.advance(q + i + len("?>"))
	return tok, nil
}

// checkXMLDecl checks the body of <?xml ...?> against the XML 1.0 grammar
// (version, then optional encoding and standalone) and returns a message
// when it does not fit or asks for something other than XML 1.0 in UTF-8.
func checkXMLDecl(body string) string {
	const malformed = "malformed XML declaration (expected <?xml version=\"1.0\" encoding=\"UTF-8\"?>)"
	names := [...]string{"version", "encoding", "standalone"}
	next := 0 // index in names of the next pseudo-attribute allowed
	for p := 0; p < len(body); {
		if p > 0 {
			q := skipSpace(body, p)
			if q == p {
				return malformed
			}
			if p = q; p == len(body) {
				break
			}
		}
		k := next
		for k < len(names) && !strings.HasPrefix(body[p:], names[k]) {
			k++
		}
		if k == len(names) || (next == 0 && k != 0) {
			return malformed
		}
		p = skipSpace(body, p+len(names[k]))
		if p >= len(body) || body[p] != '=' {
			return malformed
		}
		p = skipSpace(body, p+1)
		if p >= len(body) || (body[p] != '"' && body[p] != '\'') {
			return malformed
		}
		end := strings.IndexByte(body[p+1:], body[p])
		if end < 0 {
			return malformed
		}
		val := body[p+1 : p+1+end]
		p += end + 2
		switch k {
		case 0:
			if val != "1.0" {
				return "XML declaration: version " + strconv.Quote(val) + " is not supported (only 1.0)"
			}
		case 1:
			if !strings.EqualFold(val, "utf-8") {
				return "XML declaration: encoding " + strconv.Quote(val) + " is not supported (only UTF-8)"
			}
		case 2:
			if val != "yes" && val != "no" {
				return malformed
			}
		}
		next = k + 1
	}
	if next == 0 {
		return malformed
	}
	return ""
}

// directive reads <!KEYWORD ...>, skipping quoted strings, nested <...>
// and comments the way encoding/xml does.
func (s *xmlScanner) directive() (xmlToken, error) {
	p := s.pos + len("<!")
	k := p
	for k < len(s.src) && isNameByte(s.src[k]) {
		k++
	}
	if k == p || !isLetter(s.src[p]) {
		return xmlToken{}, errAt(s.line, "expected a keyword such as DOCTYPE after <!")
	}
	keyword := s.src[p:k]
	notClosed := func() error { return errAt(s.line, "<!"+keyword+" is not closed by >") }
	var quote byte
	depth := 0
	i := k
	for ; ; i++ {
		if i >= len(s.src) {
			return xmlToken{}, notClosed()
		}
		c := s.src[i]
		if quote == 0 && c == '>' && depth == 0 {
			break
		}
		switch {
		case c == quote:
			quote = 0
		case quote != 0:
		case c == '"' || c == '\'':
			quote = c
		case c == '>':
			depth--
		case c == '<':
			if !strings.HasPrefix(s.src[i:], "<!--") {
				depth++
				continue
			}
			j := strings.Index(s.src[i+len("<!--"):], "-->")
			if j < 0 {
				return xmlToken{}, notClosed()
			}
			i += len("<!--") + j + len("-->") - 1
		}
	}
	raw := s.src[p:i]
	if err := s.checkChars(raw, p); err != nil {
		return xmlToken{}, err
	}
	tok := xmlToken{kind: tokDirective, line: s.line, name: xmlName{local: keyword}, text: raw}
	s.advance(i + 1)
	return tok, nil
}

// startTag reads <name attr="value" ...> or <name .../>.
func (s *xmlScanner) startTag() (xmlToken, error) {
	line := s.line
	p := s.pos + 1
	raw, p, msg := scanQName(s.src, p)
	if msg != "" {
		return xmlToken{}, errAt(s.lineAt(p), msg+" after <")
	}
	tag := func() string { return "<" + rawName(raw) + ">" }
	if len(s.open) == 0 && s.rootDone {
		return xmlToken{}, errAt(line, "more than one top-level element")
	}
	eof := func() error {
		return errAt(line, "unexpected EOF: start tag "+tag()+" is not closed by >")
	}
	attrs := s.attrBuf[:0]
	empty := false
	for {
		q := skipSpace(s.src, p)
		if q >= len(s.src) {
			return xmlToken{}, eof()
		}
		if c := s.src[q]; c == '>' || c == '/' {
			if c == '/' {
				if q+1 >= len(s.src) {
					return xmlToken{}, eof()
				}
				if s.src[q+1] != '>' {
					return xmlToken{}, errAt(s.lineAt(q), "expected /> in start tag "+tag())
				}
				empty = true
				q++
			}
			p = q + 1
			break
		}
		an, r, msg := scanQName(s.src, q)
		switch {
		case msg == "expected a name":
			return xmlToken{}, errAt(s.lineAt(q), "expected an attribute name, > or /> in start tag "+tag()+", found "+strconv.QuoteRune(rune(s.src[q])))
		case msg != "":
			return xmlToken{}, errAt(s.lineAt(q), msg+" in start tag "+tag())
		case q == p:
			return xmlToken{}, errAt(s.lineAt(q), "missing whitespace before attribute "+rawName(an)+" in start tag "+tag())
		}
		if r = skipSpace(s.src, r); r >= len(s.src) {
			return xmlToken{}, eof()
		}
		if s.src[r] != '=' {
			return xmlToken{}, errAt(s.lineAt(r), "attribute "+rawName(an)+" of "+tag()+" has no value (expected =\"...\")")
		}
		if r = skipSpace(s.src, r+1); r >= len(s.src) {
			return xmlToken{}, eof()
		}
		quote := s.src[r]
		if quote != '"' && quote != '\'' {
			return xmlToken{}, errAt(s.lineAt(r), "value of attribute "+rawName(an)+" of "+tag()+" is not quoted")
		}
		v := r + 1
		end := v
		for end < len(s.src) && s.src[end] != quote && s.src[end] != '<' {
			end++
		}
		if end >= len(s.src) {
			return xmlToken{}, errAt(s.lineAt(r), "value of attribute "+rawName(an)+" of "+tag()+" is not closed by "+string(quote))
		}
		if s.src[end] == '<' {
			return xmlToken{}, errAt(s.lineAt(end), "< in the value of attribute "+rawName(an)+" of "+tag()+" (write &lt;, or close the quote)")
		}
		val, err := s.decode(s.src[v:end], v)
		if err != nil {
			return xmlToken{}, err
		}
		attrs = append(attrs, xmlAttr{ns: an.ns, name: an.local, value: val})
		p = end + 1
	}
	s.attrBuf = attrs[:0]

	// Declarations on this element apply to its own name and attributes.
	undo := len(s.undo)
	for _, a := range attrs {
		switch {
		case a.ns == "xmlns":
			s.bind(a.name, a.value)
		case a.ns == "" && a.name == "xmlns":
			s.bind("", a.value)
		}
	}
	tok := xmlToken{kind: tokStart, line: line, name: s.resolve(raw, true)}
	if len(attrs) > 0 {
		tok.attrs = make([]xmlAttr, len(attrs))
		for i, a := range attrs {
			n := s.resolve(xmlName{ns: a.ns, local: a.name}, false)
			tok.attrs[i] = xmlAttr{ns: n.ns, name: n.local, value: a.value}
		}
		if i, j := duplicateAttr(tok.attrs); i >= 0 {
			n := xmlName{ns: attrs[j].ns, local: attrs[j].name}
			return xmlToken{}, errAt(line, "duplicate attribute "+rawName(n)+" in start tag "+tag()+" (attributes "+strconv.Itoa(i+1)+" and "+strconv.Itoa(j+1)+")")
		}
	}
	s.open = append(s.open, openElement{raw: raw, name: tok.name, line: line, undo: undo})
	s.pendEnd = empty
	s.advance(p)
	return tok, nil
}

// duplicateAttr returns the indexes of two attributes with the same
// resolved name, or -1, -1.
func duplicateAttr(attrs []xmlAttr) (int, int) {
	if len(attrs) <= 16 {
		for j := 1; j < len(attrs); j++ {
			for i := 0; i < j; i++ {
				if attrs[i].ns == attrs[j].ns && attrs[i].name == attrs[j].name {
					return i, j
				}
			}
		}
		return -1, -1
	}
	seen := make(map[xmlName]int, len(attrs))
	for j, a := range attrs {
		n := xmlName{ns: a.ns, local: a.name}
		if i, ok := seen[n]; ok {
			return i, j
		}
		seen[n] = j
	}
	return -1, -1
}

// endTag reads </name>, which must close the innermost open element.
func (s *xmlScanner) endTag() (xmlToken, error) {
	line := s.line
	p := s.pos + len("</")
	raw, p, msg := scanQName(s.src, p)
	if msg != "" {
		return xmlToken{}, errAt(s.lineAt(p), msg+" after </")
	}
	tag := func() string { return "</" + rawName(raw) + ">" }
	q := skipSpace(s.src, p)
	if q >= len(s.src) {
		return xmlToken{}, errAt(line, "unexpected EOF: end tag "+tag()+" is not closed by >")
	}
	if s.src[q] != '>' {
		return xmlToken{}, errAt(s.lineAt(q), "expected > to end "+tag())
	}
	n := len(s.open)
	if n == 0 {
		return xmlToken{}, errAt(line, "unexpected end element "+tag())
	}
	if top := s.open[n-1]; top.raw != raw {
		return xmlToken{}, errAt(line, "element <"+rawName(top.raw)+"> from line "+strconv.Itoa(top.line)+" closed by "+tag())
	}
	s.advance(q + 1)
	return s.closeElement(line), nil
}

// closeElement pops the innermost open element, restores the namespace
// bindings it changed and returns its end token.
func (s *xmlScanner) closeElement(line int) xmlToken {
	top := s.open[len(s.open)-1]
	s.open = s.open[:len(s.open)-1]
	for len(s.undo) > top.undo {
		u := s.undo[len(s.undo)-1]
		s.undo = s.undo[:len(s.undo)-1]
		if u.had {
			s.ns[u.prefix] = u.uri
		} else {
			delete(s.ns, u.prefix)
		}
	}
	if len(s.open) == 0 {
		s.rootDone = true
	}
	return xmlToken{kind: tokEnd, line: line, name: top.name}
}

// bind declares prefix as uri until the current element ends.
func (s *xmlScanner) bind(prefix, uri string) {
	if s.ns == nil {
		s.ns = make(map[string]string)
	}
	old, had := s.ns[prefix]
	s.undo = append(s.undo, nsUndo{prefix: prefix, uri: old, had: had})
	s.ns[prefix] = uri
}

// resolve replaces the prefix of n by its namespace URI, following the
// rules of encoding/xml's Decoder.translate: attributes without a prefix
// and names in the xmlns space are left alone, "xml" is the XML
// namespace, and an undeclared prefix stays as written.
func (s *xmlScanner) resolve(n xmlName, element bool) xmlName {
	switch {
	case n.ns == "xmlns", n.ns == "" && !element, n.ns == "" && n.local == "xmlns":
		return n
	case n.ns == "xml":
		n.ns = xmlURL
		return n
	}
	if uri, ok := s.ns[n.ns]; ok {
		n.ns = uri
	}
	return n
}

// decode validates raw character data or an attribute value that starts at
// offset off, replaces entity and character references and turns "\r\n"
// and a lone "\r" into "\n".
func (s *xmlScanner) decode(raw string, off int) (string, error) {
	if err := s.checkChars(raw, off); err != nil {
		return "", err
	}
	if strings.IndexByte(raw, '&') < 0 {
		return s.normaliseCR(raw), nil
	}
	b := s.buf[:0]
	for i := 0; i < len(raw); {
		switch c := raw[i]; c {
		case '&':
			r, n, msg := reference(raw[i:])
			if msg != "" {
				return "", errAt(s.lineAt(off+i), msg)
			}
			b = utf8.AppendRune(b, r)
			i += n
		case '\r':
			b = append(b, '\n')
			if i++; i < len(raw) && raw[i] == '\n' {
				i++
			}
		default:
			b = append(b, c)
			i++
		}
	}
	s.buf = b
	return string(b), nil
}

// normaliseCR turns "\r\n" and a lone "\r" into "\n".
func (s *xmlScanner) normaliseCR(raw string) string {
	if strings.IndexByte(raw, '\r') < 0 {
		return raw
	}
	b := s.buf[:0]
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\r' {
			b = append(b, raw[i])
			continue
		}
		b = append(b, '\n')
		if i+1 < len(raw) && raw[i+1] == '\n' {
			i++
		}
	}
	s.buf = b
	return string(b)
}

// reference decodes the reference at the start of s (s[0] == '&') and
// returns the character, the length of the reference, or a message.
func reference(s string) (rune, int, string) {
	if strings.HasPrefix(s, "&#") {
		base, i := 10, len("&#")
		if strings.HasPrefix(s[i:], "x") {
			base, i = 16, i+1
		}
		j := i
		for j < len(s) && isRefDigit(s[j], base) {
			j++
		}
		if j == i || j >= len(s) || s[j] != ';' {
			return 0, 0, "invalid character reference " + s[:j] + " (expected &#NN; or &#xHH;)"
		}
		v, err := strconv.ParseUint(s[i:j], base, 32)
		if err != nil || !isXMLChar(rune(v)) {
			return 0, 0, "character reference " + s[:j+1] + " is not a legal XML character"
		}
		return rune(v), j + 1, ""
	}
	j := 1
	for j < len(s) && isNameByte(s[j]) {
		j++
	}
	if j >= len(s) || s[j] != ';' {
		return 0, 0, "& not followed by a reference such as &amp; (found " + strconv.Quote(s[:j]) + ")"
	}
	var r rune
	switch s[1:j] {
	case "lt":
		r = '<'
	case "gt":
		r = '>'
	case "amp":
		r = '&'
	case "apos":
		r = '\''
	case "quot":
		r = '"'
	default:
		return 0, 0, "unknown entity " + s[:j+1] + " (only &lt; &gt; &amp; &apos; &quot; and character references)"
	}
	return r, j + 1, ""
}

// checkChars reports the first byte sequence in raw (at offset off) that
// is not valid UTF-8 or not an XML character.
func (s *xmlScanner) checkChars(raw string, off int) error {
	for i := 0; i < len(raw); {
		c := raw[i]
		if c >= 0x20 && c < utf8.RuneSelf || c == '\n' || c == '\t' || c == '\r' {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(raw[i:])
		if r == utf8.RuneError && n == 1 {
			return errAt(s.lineAt(off+i), "invalid UTF-8")
		}
		if !isXMLChar(r) {
			return errAt(s.lineAt(off+i), "illegal character "+runeCode(r))
		}
		i += n
	}
	return nil
}

// runeCode spells r as U+XXXX.
func runeCode(r rune) string {
	h := strings.ToUpper(strconv.FormatInt(int64(r), 16))
	for len(h) < 4 {
		h = "0" + h
	}
	return "U+" + h
}

// isXMLChar reports whether r is in XML 1.0's Char production.
func isXMLChar(r rune) bool {
	return r == '\t' || r == '\n' || r == '\r' ||
		r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD ||
		r >= 0x10000 && r <= utf8.MaxRune
}

// scanName reads an ASCII name starting at p and returns it with the
// offset after it, or a message.
func scanName(src string, p int) (string, int, string) {
	q := p
	for q < len(src) && (isNameByte(src[q]) || src[q] >= utf8.RuneSelf) {
		q++
	}
	if q == p {
		return "", p, "expected a name"
	}
	for i := p; i < q; i++ {
		if src[i] >= utf8.RuneSelf {
			return "", p, "non-ASCII name " + strconv.Quote(src[p:q]) + " (only ASCII names are supported)"
		}
	}
	if c := src[p]; !isLetter(c) && c != '_' && c != ':' {
		return "", p, "invalid name " + strconv.Quote(src[p:q])
	}
	return src[p:q], q, ""
}

// scanQName reads a name with at most one colon. As in encoding/xml, a
// colon at either end is part of the local name.
func scanQName(src string, p int) (xmlName, int, string) {
	s, q, msg := scanName(src, p)
	if msg != "" {
		return xmlName{}, q, msg
	}
	prefix, local, ok := strings.Cut(s, ":")
	switch {
	case strings.Contains(local, ":"):
		return xmlName{}, p, "invalid name " + strconv.Quote(s) + " (more than one colon)"
	case !ok || prefix == "" || local == "":
		return xmlName{local: s}, q, ""
	}
	return xmlName{ns: prefix, local: local}, q, ""
}

// rawName spells a name as written, prefix:local.
func rawName(n xmlName) string {
	if n.ns == "" {
		return n.local
	}
	return n.ns + ":" + n.local
}

func isNameByte(c byte) bool {
	return isLetter(c) || '0' <= c && c <= '9' || c == '_' || c == ':' || c == '.' || c == '-'
}

func isLetter(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func isRefDigit(c byte, base int) bool {
	return '0' <= c && c <= '9' || base == 16 && ('a' <= c && c <= 'f' || 'A' <= c && c <= 'F')
}

// isSpace reports whether c is XML whitespace.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

func skipSpace(s string, p int) int {
	for p < len(s) && isSpace(s[p]) {
		p++
	}
	return p
}

// firstNonSpace returns the offset of the first byte of s that is not XML
// whitespace, or -1.
func firstNonSpace(s string) int {
	if i := skipSpace(s, 0); i < len(s) {
		return i
	}
	return -1
}

// descriptionComment returns the text of a "description: ..." comment.
func descriptionComment(comment string) (string, bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(comment), "description:")
	return strings.TrimSpace(rest), ok
}

// Description returns the text of the first "<!-- description: ... -->"
// comment with non-empty text before the root element of a topology file,
// the one-line summary that presets and System.Description carry. Only
// the input up to the root's start tag is read; it must be well-formed.
func Description(b []byte) (string, error) {
	s := newXMLScanner(string(b))
	for {
		tok, err := s.next()
		if err != nil {
			return "", err
		}
		switch tok.kind {
		case tokEOF:
			return "", errors.New("no root element")
		case tokStart:
			return "", errors.New(`no "<!-- description: ... -->" comment before the root element`)
		case tokComment:
			if d, ok := descriptionComment(tok.text); ok && d != "" {
				return d, nil
			}
		}
	}
}
