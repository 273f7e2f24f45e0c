package doctor

import (
	"bytes"
	"errors"
	"html/template"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
)

// referenceHTML is the html/template WriteHTML was first written with. It
// stays here (test binaries may be large) as the specification of the
// hand-written renderer, which keeps html/template out of the wasm binary:
// both must produce the same bytes for every summary.
var referenceHTML = template.Must(template.New("doctor").Funcs(template.FuncMap{
	"count": func(n int) string {
		if n <= 0 {
			return "not in the log"
		}
		return strconv.Itoa(n)
	},
	"explained": explainedRefs,
	"extra":     func(e Evidence) int { return e.Count - len(e.Lines) },
}).Parse(`<section class="doctor-report">
<h2>Summary</h2>
<dl>
<dt>NCCL version</dt><dd>{{range $i, $v := .S.Versions}}{{if $i}}, {{end}}{{$v.Version}}{{else}}not printed{{end}}</dd>
<dt>Ranks</dt><dd>{{count .S.NRanks}}</dd>
<dt>Nodes</dt><dd>{{count .S.NNodes}}</dd>
<dt>Hosts</dt><dd>{{range $i, $h := .S.Hosts}}{{if $i}}, {{end}}{{$h}}{{end}}</dd>
<dt>Network</dt><dd>{{.S.Network}}</dd>
<dt>Transports</dt><dd>{{range $i, $t := .S.Transports}}{{if $i}}, {{end}}{{$t.Kind}} ×{{$t.Count}}{{end}}</dd>
<dt>Channels</dt><dd>{{count .Channels}}{{with .S.Messages}}{{if .NCCL}}</dd>
<dt>NCCL lines</dt><dd>{{.NCCL}}, {{.Matched}} tied to the source line that prints them, {{.Unknown.Count}} unknown{{end}}{{end}}</dd>
</dl>
{{if .S.Notes}}<ul class="doctor-notes">{{range .S.Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .S.Rings}}<h3>Rings</h3><pre>{{range .S.Rings}}{{printf "%2d:" .Channel}}{{range .Ranks}} {{.}}{{end}}
{{end}}</pre>{{end}}
<h2>Diagnoses</h2>
{{range .D}}<article class="diagnosis severity-{{.Severity}}" id="diag-{{.ID}}">
<h3>{{.Title}} <small>{{.Severity}} · {{.ID}}</small></h3>
<p>{{.Explanation}}</p>
{{if .Evidence}}<pre class="evidence">{{range .Evidence}}{{if .Line}}{{.Line}}: {{else}}env: {{end}}{{.Text}}
{{end}}</pre>{{with explained .Evidence $.Version}}<div class="explanations">{{range .}}<details class="explain"><summary>Line {{.Ref}}: printed by {{.X.File}}:{{.X.Line}}</summary>
<p><a href="{{.X.Permalink}}">{{.X.File}}:{{.X.Line}} at {{.X.Release}}</a> ({{.X.Level}}, subsystem {{.X.Subsystem}})</p>
<p>Format: <code>{{.X.Format}}</code></p>
{{if .X.Fields}}<ul>{{range .X.Fields}}<li><code>{{if .Label}}{{.Label}}{{else}}{{.Spec}}{{end}} = {{.Value}}</code>{{if .Meaning}}: {{.Meaning}}{{end}}</li>{{end}}</ul>
{{end}}{{range .X.Notes}}<p>{{.}}</p>
{{end}}</details>
{{end}}</div>{{end}}{{end}}
<ul>{{range .Links}}<li><a href="{{.URL}}">{{.Title}}</a></li>{{end}}</ul>
</article>
{{else}}<p>No diagnoses.</p>{{end}}{{with .S.Messages.Unknown}}{{if .Count}}
<h2>Unknown lines</h2>
<p>No log call of NCCL v2.30.7-1 or of 2.7-2.29 prints these NCCL-formatted lines (a network plugin or a newer release may):</p>
<pre class="unknown-lines">{{range .Lines}}{{.Line}}: {{.Text}}
{{end}}{{with extra .}}and {{.}} more
{{end}}</pre>{{end}}{{end}}
</section>
`))

// explainedRef is an evidence line with its catalog explanation.
type explainedRef struct {
	Ref int
	X   LineExplanation
}

// explainedRefs explains the log lines of an evidence list that the
// catalog knows (the reference's view of htmlOut.explanations).
func explainedRefs(ev []LineRef, version string) []explainedRef {
	var out []explainedRef
	for _, e := range ev {
		if e.Line == 0 {
			continue
		}
		if x := ExplainLine(e.Text, version); x.Known {
			out = append(out, explainedRef{e.Line, x})
		}
	}
	return out
}

// renderReference renders s and ds with referenceHTML.
func renderReference(t testing.TB, s *Summary, ds []Diagnosis) string {
	t.Helper()
	if s == nil {
		s = &Summary{}
	}
	var b strings.Builder
	if err := referenceHTML.Execute(&b, struct {
		S        *Summary
		D        []Diagnosis
		Channels int
		Version  string
	}{s, ds, s.ChannelCount(), s.Version()}); err != nil {
		t.Fatalf("reference template: %v", err)
	}
	return b.String()
}

// checkSameHTML fails unless WriteHTML and the reference template agree.
func checkSameHTML(t testing.TB, s *Summary, ds []Diagnosis) {
	t.Helper()
	var got strings.Builder
	if err := WriteHTML(&got, s, ds); err != nil {
		t.Fatalf("WriteHTML: %v", err)
	}
	if want := renderReference(t, s, ds); got.String() != want {
		t.Fatalf("WriteHTML differs from the reference template\n got: %q\nwant: %q", got.String(), want)
	}
}

func TestWriteHTMLMatchesReference(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(logsDir, "*.log"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no logs under %s: %v", logsDir, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			s := parseFile(t, f)
			checkSameHTML(t, s, Diagnose(s, ncclenv.Env{}))
		})
	}
	// Hand-made values reach the corners a parsed log rarely does: every
	// character html/template escapes, NUL, invalid UTF-8, negative and
	// two-digit channels, environment evidence (line 0), negative lines,
	// and links with unsafe schemes, spaces, quotes, non-ASCII and
	// existing percent escapes.
	odd := "a<b>&\"c\" 'd' e+f \x00 g\xff é"
	s := &Summary{
		Versions:   []VersionSeen{{Version: "2.30.7"}, {Version: odd}},
		NRanks:     16,
		NNodes:     2,
		Hosts:      []string{"h1", odd},
		Network:    odd,
		Transports: []TransportCount{{Kind: "P2P/CUMEM", Count: 3}, {Kind: odd, Count: 1}},
		Notes:      []string{"n1", odd},
		Rings:      []Ring{{Channel: 0, Ranks: []int{0, 1}}, {Channel: 12, Ranks: []int{1, 0}}, {Channel: -1}, {Channel: -12, Ranks: []int{3}}},
	}
	ds := []Diagnosis{
		{ID: "x" + odd, Severity: Error, Title: odd, Explanation: odd,
			Evidence: []LineRef{{Line: 3, Text: odd}, {Line: 0, Text: "NCCL_X=1"}, {Line: -2, Text: ""}},
			Links: []Link{
				{Title: "t", URL: "/notes/a b/#x'y\"z"}, {Title: odd, URL: "javascript:alert(1)"}, {Title: "m", URL: "MAILTO:a@b"},
				{Title: "h", URL: "https://example.org/?q=1&r=2+3"}, {Title: "p", URL: "/a%2Fb%zz/é/(x)<y>"}, {Title: "c", URL: "data/x:y"},
				{Title: "v", URL: "vbscript:x"}, {Title: "e", URL: ""},
			}},
		{ID: "plain", Severity: Severity(7), Title: "no evidence"},
	}
	checkSameHTML(t, s, ds)
	checkSameHTML(t, nil, nil)
	checkSameHTML(t, &Summary{}, []Diagnosis{})
}

// A rejected scheme must not reach the href; quotes in a URL must not end
// the attribute.
func TestWriteHTMLLinks(t *testing.T) {
	ds := []Diagnosis{{ID: "a", Title: "t", Links: []Link{
		{Title: "js", URL: "JavaScript:alert(1)"},
		{Title: "q", URL: `/x/"onmouseover="alert(1)`},
		{Title: "ok", URL: "/env/#NCCL_P2P_DISABLE"},
	}}}
	var b bytes.Buffer
	if err := WriteHTML(&b, nil, ds); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{`href="#ZgotmplZ"`, `href="/x/%22onmouseover=%22alert%281%29"`, `href="/env/#NCCL_P2P_DISABLE"`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(strings.ToLower(out), "javascript:") {
		t.Errorf("unsafe scheme kept:\n%s", out)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

func TestWriteHTMLReportsWriteError(t *testing.T) {
	err := WriteHTML(failingWriter{}, nil, nil)
	if !errors.Is(err, os.ErrClosed) {
		t.Fatalf("err = %v, want a wrapped os.ErrClosed", err)
	}
}
