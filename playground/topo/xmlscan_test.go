package topo

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// dumpTok is one token in a form both tokenizers can produce: the
// differential tests compare these between xmlScanner and encoding/xml.
type dumpTok struct {
	line  int
	kind  string // start, end, text, comment, pi, directive
	name  string // {ns}local for elements, the target or keyword otherwise
	attrs []string
	text  string
	depth int // open elements before the token
}

func (d dumpTok) String() string {
	s := strconv.Itoa(d.line) + " " + d.kind
	if d.name != "" {
		s += " " + d.name
	}
	for _, a := range d.attrs {
		s += " " + a
	}
	if d.kind == "text" || d.kind == "comment" || d.kind == "pi" {
		s += " " + strconv.Quote(d.text)
	}
	return s
}

func fullName(ns, local string) string {
	if ns == "" {
		return local
	}
	return "{" + ns + "}" + local
}

// keyword is the leading run of name bytes of a directive body.
func keyword(body []byte) string {
	i := 0
	for i < len(body) && isNameByte(body[i]) {
		i++
	}
	return string(body[:i])
}

// scanAll runs xmlScanner over src.
func scanAll(src string) ([]dumpTok, error) {
	s := newXMLScanner(src)
	var out []dumpTok
	depth := 0
	for {
		tok, err := s.next()
		if err != nil {
			return out, err
		}
		d := dumpTok{line: tok.line, depth: depth, text: tok.text}
		switch tok.kind {
		case tokEOF:
			return out, nil
		case tokStart:
			d.kind, d.name = "start", fullName(tok.name.ns, tok.name.local)
			for _, a := range tok.attrs {
				d.attrs = append(d.attrs, fullName(a.ns, a.name)+"="+strconv.Quote(a.value))
			}
			depth++
		case tokEnd:
			d.kind, d.name = "end", fullName(tok.name.ns, tok.name.local)
			depth--
		case tokText:
			d.kind = "text"
		case tokComment:
			d.kind = "comment"
		case tokProcInst:
			d.kind, d.name = "pi", tok.name.local
		case tokDirective:
			d.kind, d.name, d.text = "directive", tok.name.local, ""
		}
		out = append(out, d)
	}
}

// stdAll runs encoding/xml (Strict, the default) over data.
func stdAll(data []byte) ([]dumpTok, error) {
	dec := xml.NewDecoder(bytes.NewReader(data))
	var out []dumpTok
	depth := 0
	for {
		line, _ := dec.InputPos()
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		d := dumpTok{line: line, depth: depth}
		switch t := tok.(type) {
		case xml.StartElement:
			d.kind, d.name = "start", fullName(t.Name.Space, t.Name.Local)
			for _, a := range t.Attr {
				d.attrs = append(d.attrs, fullName(a.Name.Space, a.Name.Local)+"="+strconv.Quote(a.Value))
			}
			depth++
		case xml.EndElement:
			d.kind, d.name = "end", fullName(t.Name.Space, t.Name.Local)
			depth--
		case xml.CharData:
			d.kind, d.text = "text", string(t)
		case xml.Comment:
			d.kind, d.text = "comment", string(t)
		case xml.ProcInst:
			d.kind, d.name, d.text = "pi", t.Target, string(t.Inst)
		case xml.Directive:
			d.kind, d.name = "directive", keyword(t)
		}
		out = append(out, d)
	}
}

func dumpString(toks []dumpTok) string {
	var b strings.Builder
	for _, t := range toks {
		b.WriteString(t.String())
		b.WriteByte('\n')
	}
	return b.String()
}

func TestXMLScanTokens(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"self-closing", `<a/>`, "1 start a\n1 end a\n"},
		{"declaration, comment, doctype", "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- c -->\n<!DOCTYPE system [ <!ELEMENT system ANY> ]>\n<system/>",
			"1 pi xml \"version=\\\"1.0\\\" encoding=\\\"UTF-8\\\"\"\n1 text \"\\n\"\n2 comment \" c \"\n2 text \"\\n\"\n3 directive DOCTYPE\n3 text \"\\n\"\n4 start system\n4 end system\n"},
		{"both quotes and spacing", "<a x='1' y = \"it's\"\n z='say \"hi\"'></a >",
			"1 start a x=\"1\" y=\"it's\" z=\"say \\\"hi\\\"\"\n2 end a\n"},
		{"entities", `<a v="&lt;&gt;&amp;&quot;&apos;&#65;&#x42;&#x1F600;">&lt;b&gt;</a>`,
			"1 start a v=\"<>&\\\"'AB😀\"\n1 text \"<b>\"\n1 end a\n"},
		{"CDATA is text", "<a><![CDATA[<not> &markup;]]></a>", "1 start a\n1 text \"<not> &markup;\"\n1 end a\n"},
		{"CR LF normalised", "<a v=\"x\r\ny\ry\">\r\n</a>", "1 start a v=\"x\\ny\\ny\"\n2 text \"\\n\"\n3 end a\n"},
		{"namespaces", `<system xmlns:dn="urn:distributed-nav:ncclsim" dn:p2p="all" xml:lang="en" un:x="1"><dn:e/></system>`,
			"1 start system {xmlns}dn=\"urn:distributed-nav:ncclsim\" {urn:distributed-nav:ncclsim}p2p=\"all\" {http://www.w3.org/XML/1998/namespace}lang=\"en\" {un}x=\"1\"\n" +
				"1 start {urn:distributed-nav:ncclsim}e\n1 end {urn:distributed-nav:ncclsim}e\n1 end system\n"},
		{"undeclared prefix stays", `<a dn:p2p="none"/>`, "1 start a {dn}p2p=\"none\"\n1 end a\n"},
		{"default namespace applies to elements only", `<a xmlns="u" x="1"><b/></a>`,
			"1 start {u}a xmlns=\"u\" x=\"1\"\n1 start {u}b\n1 end {u}b\n1 end {u}a\n"},
		{"scope ends with the element", `<r><a xmlns:p="u"><p:b/></a><p:c/></r>`,
			"1 start r\n1 start a {xmlns}p=\"u\"\n1 start {u}b\n1 end {u}b\n1 end a\n1 start {p}c\n1 end {p}c\n1 end r\n"},
		{"byte order mark skipped", "\uFEFF<?xml version='1.0'?><a/>", "1 pi xml \"version='1.0'\"\n1 start a\n1 end a\n"},
		{"lines", "<a>\n\n<b\nx='1'/>\n</a>", "1 start a\n1 text \"\\n\\n\"\n3 start b x=\"1\"\n4 end b\n4 text \"\\n\"\n5 end a\n"},
		{"processing instruction and comment after root", "<a/>\n<?pi data?>\n<!--end-->\n", "1 start a\n1 end a\n1 text \"\\n\"\n2 pi pi \"data\"\n2 text \"\\n\"\n3 comment \"end\"\n3 text \"\\n\"\n"},
		{"directive with quotes, nesting and a comment", `<!DOCTYPE a [ <!ENTITY x "a>b"> <!-- > --> ]><a/>`, "1 directive DOCTYPE\n1 start a\n1 end a\n"},
		{"empty comment", "<!----><a/>", "1 comment \"\"\n1 start a\n1 end a\n"},
		{"colon at an end is part of the local name", `<a: :b="1"/>`, "1 start a: :b=\"1\"\n1 end a:\n"},
		{"empty input", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			toks, err := scanAll(tt.in)
			if err != nil {
				t.Fatalf("error %v", err)
			}
			if got := dumpString(toks); got != tt.want {
				t.Errorf("got\n%swant\n%s", got, tt.want)
			}
		})
	}
}

func TestXMLScanErrors(t *testing.T) {
	tests := []struct {
		name, in string
		line     int
		msg      string
	}{
		{"mismatched end tag", "<a>\n<b>\n</a>", 3, "element <b> from line 2 closed by </a>"},
		{"prefix differs", "<p:a></q:a>", 1, "element <p:a> from line 1 closed by </q:a>"},
		{"unclosed element", "<a>\n<b/>\n", 3, "unexpected EOF: element <a> from line 1 is not closed"},
		{"unclosed start tag", "<a>\n<b x='1'\n", 2, "start tag <b> is not closed by >"},
		{"duplicate attribute", "<a>\n<b x='1' x=\"2\"/></a>", 2, "duplicate attribute x in start tag <b> (attributes 1 and 2)"},
		{"duplicate after namespace resolution", `<a xmlns:p="u" xmlns:q="u" p:x="1" q:x="2"/>`, 1, "duplicate attribute q:x"},
		{"duplicate namespace declaration", `<a xmlns:p="u" xmlns:p="v"/>`, 1, "duplicate attribute xmlns:p"},
		{"unquoted value", "<a\nx=1/>", 2, "value of attribute x of <a> is not quoted"},
		{"attribute without value", "<a x/>", 1, "attribute x of <a> has no value"},
		{"attributes run together", `<a x="1"y="2"/>`, 1, "missing whitespace before attribute y"},
		{"< in value", "<a x=\"1\n<b/>\n", 2, "< in the value of attribute x of <a>"},
		{"unterminated value", "<a x='1>", 1, "value of attribute x of <a> is not closed by '"},
		{"unknown entity", "<a>\n&nbsp;</a>", 2, "unknown entity &nbsp;"},
		{"bare ampersand", "<a x='a & b'/>", 1, "& not followed by a reference"},
		{"entity without semicolon", "<a>&amp</a>", 1, "& not followed by a reference"},
		{"char ref to NUL", "<a>&#0;</a>", 1, "character reference &#0; is not a legal XML character"},
		{"char ref to a surrogate", "<a x='&#xD800;'/>", 1, "&#xD800; is not a legal XML character"},
		{"char ref without digits", "<a>&#x;</a>", 1, "invalid character reference &#x"},
		{"uppercase X in char ref", "<a>&#X41;</a>", 1, "invalid character reference &#"},
		{"invalid UTF-8 in text", "<a>\n\xff</a>", 2, "invalid UTF-8"},
		{"invalid UTF-8 in a comment", "<!-- \n\xc3( -->\n<a/>", 2, "invalid UTF-8"},
		{"NUL byte", "<a>\n\n\x00</a>", 3, "illegal character U+0000"},
		{"control character in a value", "<a x='\x01'/>", 1, "illegal character U+0001"},
		{"U+FFFE", "<a>\uFFFE</a>", 1, "illegal character U+FFFE"},
		{"text after the root", "<a/>\n\njunk", 3, "text outside the root element"},
		{"text before the root", "hello <a/>", 1, "text outside the root element"},
		{"second root", "<a/>\n<b/>", 2, "more than one top-level element"},
		{"CDATA outside the root", "<a/><![CDATA[x]]>", 1, "CDATA section outside the root element"},
		{"stray end tag", "</a>", 1, "unexpected end element </a>"},
		{"end tag after root", "<a></a></a>", 1, "unexpected end element </a>"},
		{"unterminated comment", "<a>\n<!-- never closed\n</a>", 2, "comment is not closed by -->"},
		{"double hyphen in comment", "<!-- a\n-- b --><a/>", 2, "-- is not allowed inside a comment"},
		{"comment ending in --->", "<!-- a ---><a/>", 1, "-- is not allowed inside a comment"},
		{"unterminated CDATA", "<a>\n<![CDATA[x</a>", 2, "CDATA section is not closed by ]]>"},
		{"]]> in text", "<a>x]]></a>", 1, "]]> is not allowed in text"},
		{"unterminated PI", "<?pi x", 1, "<?pi is not closed by ?>"},
		{"PI target glued to data", `<?pi"x"?><a/>`, 1, "expected whitespace or ?> after <?pi"},
		{"unterminated directive", "<!DOCTYPE a [\n", 1, "<!DOCTYPE is not closed by >"},
		{"directive without keyword", "<! DOCTYPE a><a/>", 1, "expected a keyword such as DOCTYPE after <!"},
		{"bad comment start", "<!-x-><a/>", 1, "<!- does not start a comment"},
		{"bad CDATA start", "<a><![CDAT[x]]></a>", 1, "<![ does not start a CDATA section"},
		{"XML 1.1", `<?xml version="1.1"?><a/>`, 1, `XML declaration: version "1.1" is not supported`},
		{"latin-1", `<?xml version="1.0" encoding="ISO-8859-1"?><a/>`, 1, `XML declaration: encoding "ISO-8859-1" is not supported`},
		{"declaration without version", `<?xml encoding="UTF-8"?><a/>`, 1, "malformed XML declaration"},
		{"declaration not first", "\n<?xml version=\"1.0\"?><a/>", 2, "must be at the very start"},
		{"name with two colons", "<a:b:c/>", 1, `invalid name "a:b:c" (more than one colon)`},
		{"name starting with a digit", "<1a/>", 1, `invalid name "1a" after <`},
		{"non-ASCII name", "<a>\n<gpü/></a>", 2, "non-ASCII name"},
		{"space after <", "< a/>", 1, "expected a name after <"},
		{"garbage in end tag", "<a></a x>", 1, "expected > to end </a>"},
		{"junk in start tag", `<a "x"/>`, 1, `expected an attribute name, > or /> in start tag <a>, found '"'`},
		{"slash not before >", "<a / >", 1, "expected /> in start tag <a>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := scanAll(tt.in)
			var le *LineError
			if !errors.As(err, &le) {
				t.Fatalf("error %v (%T), want a *LineError", err, err)
			}
			if le.Line != tt.line || !strings.Contains(le.Msg, tt.msg) {
				t.Errorf("got line %d %q, want line %d containing %q", le.Line, le.Msg, tt.line, tt.msg)
			}
		})
	}
}

// xmlFiles lists the presets and the test fixtures, the published dumps
// of testdata/real included.
func xmlFiles(t testing.TB) []string {
	t.Helper()
	presets, err := filepath.Glob("../../data/topologies/*.xml")
	if err != nil {
		t.Fatal(err)
	}
	fixtures, err := filepath.Glob("testdata/*.xml")
	if err != nil {
		t.Fatal(err)
	}
	dumps, err := filepath.Glob("testdata/real/*.xml")
	if err != nil {
		t.Fatal(err)
	}
	fixtures = append(fixtures, dumps...)
	if len(presets) < 10 || len(fixtures) < 3 {
		t.Fatalf("found %d presets and %d fixtures", len(presets), len(fixtures))
	}
	return append(presets, fixtures...)
}

// TestXMLScanMatchesEncodingXML compares the token streams of xmlScanner
// and encoding/xml on every preset and fixture: same elements, namespaces,
// attributes, text, comments and lines.
func TestXMLScanMatchesEncodingXML(t *testing.T) {
	for _, name := range xmlFiles(t) {
		t.Run(filepath.Base(name), func(t *testing.T) {
			b, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			want, err := stdAll(b)
			if err != nil {
				t.Fatalf("encoding/xml: %v", err)
			}
			got, err := scanAll(string(b))
			if err != nil {
				t.Fatalf("xmlScanner: %v", err)
			}
			if g, w := dumpString(got), dumpString(want); g != w {
				t.Fatalf("token streams differ:\n%s", firstDiff(g, w))
			}
			starts := 0
			for _, tok := range got {
				if tok.kind == "start" {
					starts++
				}
			}
			if starts < 5 {
				t.Errorf("only %d elements: the file was not really compared", starts)
			}
		})
	}
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return "token " + strconv.Itoa(i) + ":\n  xmlScanner:   " + a + "\n  encoding/xml: " + b
		}
	}
	return ""
}

func TestDescription(t *testing.T) {
	tests := []struct {
		in, want, err string
	}{
		{"<!-- description: two GPUs -->\n<system version=\"1\"/>", "two GPUs", ""},
		{"\uFEFF<?xml version=\"1.0\"?>\n<!-- other --><!-- description:  x  --><system/>", "x", ""},
		{"<!-- description: -->\n<!-- description: second -->\n<system/>", "second", ""},
		{"<system version=\"1\"><!-- description: too late --></system>", "", "no \"<!-- description: ... -->\" comment before the root element"},
		{"<!-- description: x -->", "x", ""},
		{"<!-- other -->\n", "", "no root element"},
		{"<!-- description: x\n<system/>", "", "line 1: comment is not closed by -->"},
		{"<!-- description: ok -->\n<system", "ok", ""},
	}
	for _, tt := range tests {
		got, err := Description([]byte(tt.in))
		if got != tt.want || (err == nil) != (tt.err == "") || (err != nil && err.Error() != tt.err) {
			t.Errorf("Description(%q) = %q, %v; want %q, %q", tt.in, got, err, tt.want, tt.err)
		}
	}
}

// strictRules are the tokenizer's rejections of input encoding/xml
// accepts. FuzzXMLScan allows a rejection of such input only when the
// message names one of these rules and the rule really applies, checked on
// encoding/xml's tokens or on the bytes.
var strictRules = []struct {
	msg     string
	applies func(data []byte, std []dumpTok) bool
}{
	{"text outside the root element", func(_ []byte, std []dumpTok) bool {
		return anyTok(std, func(d dumpTok) bool { return d.kind == "text" && d.depth == 0 && firstNonSpace(d.text) >= 0 })
	}},
	{"CDATA section outside the root element", func(data []byte, std []dumpTok) bool {
		return bytes.Contains(data, []byte("<![CDATA[")) && anyTok(std, func(d dumpTok) bool { return d.kind == "text" && d.depth == 0 })
	}},
	{"more than one top-level element", func(_ []byte, std []dumpTok) bool {
		roots := 0
		for _, d := range std {
			if d.kind == "start" && d.depth == 0 {
				roots++
			}
		}
		return roots > 1
	}},
	{"duplicate attribute", func(_ []byte, std []dumpTok) bool {
		return anyTok(std, func(d dumpTok) bool {
			seen := map[string]bool{}
			for _, a := range d.attrs {
				n, _, _ := strings.Cut(a, "=\"")
				if seen[n] {
					return true
				}
				seen[n] = true
			}
			return false
		})
	}},
	{"missing whitespace before attribute", func(data []byte, _ []dumpTok) bool {
		for i := 0; i+1 < len(data); i++ {
			if c := data[i+1]; (data[i] == '"' || data[i] == '\'') && (isLetter(c) || c == '_' || c == ':' || c >= utf8.RuneSelf) {
				return true
			}
		}
		return false
	}},
	{"non-ASCII name", func(_ []byte, std []dumpTok) bool {
		return anyTok(std, func(d dumpTok) bool {
			names := d.name
			for _, a := range d.attrs {
				n, _, _ := strings.Cut(a, "=\"")
				names += n
			}
			return d.kind != "directive" && strings.IndexFunc(names, func(r rune) bool { return r >= utf8.RuneSelf }) >= 0
		})
	}},
	{"invalid UTF-8", func(data []byte, _ []dumpTok) bool { return !utf8.Valid(data) }},
	{"illegal character", func(data []byte, _ []dumpTok) bool {
		return bytes.IndexFunc(data, func(r rune) bool { return !isXMLChar(r) }) >= 0
	}},
	{"is not a legal XML character", func(_ []byte, std []dumpTok) bool {
		// encoding/xml turns a reference to a surrogate into U+FFFD.
		return anyTok(std, func(d dumpTok) bool {
			return strings.ContainsRune(d.text, utf8.RuneError) || strings.ContainsRune(strings.Join(d.attrs, ""), utf8.RuneError)
		})
	}},
	{"XML declaration", func(_ []byte, std []dumpTok) bool {
		return anyTok(std, func(d dumpTok) bool { return d.kind == "pi" && d.name == "xml" })
	}},
	{"expected whitespace or ?> after <?", func(_ []byte, std []dumpTok) bool {
		return anyTok(std, func(d dumpTok) bool { return d.kind == "pi" && d.text != "" })
	}},
	{"expected a keyword such as DOCTYPE after <!", func(_ []byte, std []dumpTok) bool {
		return anyTok(std, func(d dumpTok) bool { return d.kind == "directive" && (d.name == "" || !isLetter(d.name[0])) })
	}},
}

func anyTok(toks []dumpTok, f func(dumpTok) bool) bool {
	for _, d := range toks {
		if f(d) {
			return true
		}
	}
	return false
}

// FuzzXMLScan checks that the tokenizer never panics, that every error is a
// *LineError on a line of the input, and compares it with encoding/xml
// (Strict):
//   - input both accept yields the same tokens (names, namespaces,
//     attributes, text, comments, processing instructions, directive
//     keywords, lines);
//   - input encoding/xml rejects, the tokenizer rejects too;
//   - input only encoding/xml accepts breaks one of strictRules.
//
// A leading byte order mark is skipped by the tokenizer but returned as
// text by encoding/xml, so encoding/xml reads the input without it.
func FuzzXMLScan(f *testing.F) {
	for _, name := range xmlFiles(f) {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{
		`<?xml version="1.0" encoding="utf-8" standalone="yes"?><!DOCTYPE s [<!ENTITY e "<x>">]><s a='&#x41;&lt;'><![CDATA[ x ]]>t&amp;<?p q?><!--c--></s>`,
		`<system xmlns:dn="urn:distributed-nav:ncclsim" dn:p2p="all" xmlns="d"><dn:cpu xml:lang="en"/></system>`,
		"\uFEFF<a\r\nx='1\r2'\t/>\r\n",
		`<?xml version=""?><a/>`, `<a x="1" x="1"/>`, `<a/><b/>`, `<a/>x`, `<a x="1"y="2"/>`, `<é/>`, `<a>&#xD800;</a>`, `<?xml?><a/>`, `<?p"x"?><a/>`, `<!>x><a/>`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := scanAll(string(data))
		if err != nil {
			var le *LineError
			if !errors.As(err, &le) || le.Msg == "" || le.Line < 1 || le.Line > bytes.Count(data, []byte("\n"))+1 {
				t.Fatalf("error %#v is not a *LineError on a line of the input", err)
			}
		}
		stdData := bytes.TrimPrefix(data, []byte("\uFEFF"))
		want, stdErr := stdAll(stdData)
		switch {
		case err == nil && stdErr == nil:
			if g, w := dumpString(got), dumpString(want); g != w {
				t.Fatalf("token streams differ:\n%s", firstDiff(g, w))
			}
		case err == nil:
			t.Fatalf("accepted input encoding/xml rejects: %v", stdErr)
		case stdErr == nil:
			for _, r := range strictRules {
				if strings.Contains(err.Error(), r.msg) {
					if !r.applies(stdData, want) {
						t.Fatalf("rejected with %v, but the rule %q does not apply", err, r.msg)
					}
					return
				}
			}
			t.Fatalf("rejected input encoding/xml accepts: %v", err)
		}
	})
}
