package crosslink

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"

	"github.com/distributed-nav/distributed-nav/generator/markdown"
)

func testIndex() *Index {
	ix := NewIndex()
	ix.Add("NCCL_P2P_DISABLE", Target{KindEnv, "/env/#NCCL_P2P_DISABLE", "NCCL_P2P_DISABLE"})
	ix.Add("NCCL_P2P_LEVEL", Target{KindEnv, "/env/#NCCL_P2P_LEVEL", "NCCL_P2P_LEVEL"})
	ix.Add("NCCL_MAX_NRINGS", Target{KindEnv, "/env/#NCCL_MAX_NRINGS", "NCCL_MAX_NRINGS"})
	ix.Add("ProcessGroupNCCL", Target{KindSubsystem, "/card/subsystems/processgroupnccl/", "ProcessGroupNCCL"})
	ix.Add("mark_bucket_ready", Target{KindSymbol, "https://github.com/pytorch/pytorch/blob/v2.6.0/torch/csrc/distributed/c10d/reducer.cpp#L1-L2", "mark_bucket_ready"})
	ix.Add("src/graph/search.cc", Target{KindPath, "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/search.cc", "search.cc"})
	return ix
}

func TestRewrite(t *testing.T) {
	tests := []struct {
		name, in, want string
		self           string
	}{
		{"plain env var", "Set NCCL_P2P_DISABLE=1 now.\n", "Set [NCCL_P2P_DISABLE](/env/#NCCL_P2P_DISABLE)=1 now.\n", ""},
		{"code span", "Use `NCCL_P2P_LEVEL` here.\n", "Use [`NCCL_P2P_LEVEL`](/env/#NCCL_P2P_LEVEL) here.\n", ""},
		{"code span assignment", "Try `NCCL_P2P_DISABLE=1`.\n", "Try [`NCCL_P2P_DISABLE=1`](/env/#NCCL_P2P_DISABLE).\n", ""},
		{"once per block", "NCCL_P2P_DISABLE and NCCL_P2P_DISABLE\n", "[NCCL_P2P_DISABLE](/env/#NCCL_P2P_DISABLE) and NCCL_P2P_DISABLE\n", ""},
		{"again in next block", "NCCL_P2P_DISABLE\n\nNCCL_P2P_DISABLE\n", "[NCCL_P2P_DISABLE](/env/#NCCL_P2P_DISABLE)\n\n[NCCL_P2P_DISABLE](/env/#NCCL_P2P_DISABLE)\n", ""},
		{"not in headings", "## NCCL_P2P_DISABLE\n", "## NCCL_P2P_DISABLE\n", ""},
		{"not in code blocks", "```\nNCCL_P2P_DISABLE=1\n```\n", "```\nNCCL_P2P_DISABLE=1\n```\n", ""},
		{"not inside links", "[see NCCL_P2P_DISABLE](/x/)\n", "[see NCCL_P2P_DISABLE](/x/)\n", ""},
		{"underscored symbol", "then mark_bucket_ready fires\n", "then [mark_bucket_ready](https://github.com/pytorch/pytorch/blob/v2.6.0/torch/csrc/distributed/c10d/reducer.cpp#L1-L2) fires\n", ""},
		{"qualified symbol in code", "`Reducer::mark_bucket_ready`\n", "[`Reducer::mark_bucket_ready`](https://github.com/pytorch/pytorch/blob/v2.6.0/torch/csrc/distributed/c10d/reducer.cpp#L1-L2)\n", ""},
		{"path", "see src/graph/search.cc.\n", "see [src/graph/search.cc](https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/search.cc).\n", ""},
		{"self page not linked", "ProcessGroupNCCL\n", "ProcessGroupNCCL\n", "/card/subsystems/processgroupnccl/"},
		{"table cell", "| a | b |\n|---|---|\n| NCCL_MAX_NRINGS | 4 |\n", "| a | b |\n|---|---|\n| [NCCL_MAX_NRINGS](/env/#NCCL_MAX_NRINGS) | 4 |\n", ""},
		{"word boundary", "XNCCL_P2P_DISABLE is not it\n", "XNCCL_P2P_DISABLE is not it\n", ""},
		{"list item", "- ProcessGroupNCCL (~3500 lines)\n", "- [ProcessGroupNCCL](/card/subsystems/processgroupnccl/) (~3500 lines)\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := testIndex().Rewrite([]byte(tt.in), Options{Self: tt.self})
			if got := string(res.Markdown); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
			if len(res.Problems) != 0 {
				t.Errorf("unexpected problems %+v", res.Problems)
			}
		})
	}
}

func TestUnknownEnvVars(t *testing.T) {
	src := "Line one.\nSet NCCL_P2P_DISABEL=1 and `TORCH_NCCL_FOO`.\nPatterns like NCCL_IB_* are fine.\n"
	res := testIndex().Rewrite([]byte(src), Options{})
	if len(res.Problems) != 2 {
		t.Fatalf("problems %+v, want 2", res.Problems)
	}
	p := res.Problems[0]
	if p.Name != "NCCL_P2P_DISABEL" || p.Line != 2 || p.Nearest[0] != "NCCL_P2P_DISABLE" {
		t.Errorf("first problem %+v", p)
	}
	if !strings.Contains(p.Message(), "nearest known: NCCL_P2P_DISABLE") {
		t.Errorf("message %q", p.Message())
	}
	if res.Problems[1].Name != "TORCH_NCCL_FOO" {
		t.Errorf("code-span problem %+v", res.Problems[1])
	}
}

func TestEnvShaped(t *testing.T) {
	for s, want := range map[string]bool{
		"NCCL_P2P_DISABLE": true, "TORCH_NCCL_BLOCKING_WAIT": true, "TORCHELASTIC_RUN_ID": true,
		"NCCL_": false, "NCCL_IB_": false, "nccl_p2p_disable": false, "NCCLX_Y": false, "CUDA_VISIBLE_DEVICES": false, "NCCL_A-B": false,
	} {
		if got := EnvShaped(s); got != want {
			t.Errorf("EnvShaped(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestNearest(t *testing.T) {
	known := []string{"NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL", "NCCL_SHM_DISABLE"}
	got := Nearest("nccl_p2p_disabel", known, 2)
	if len(got) != 2 || got[0] != "NCCL_P2P_DISABLE" {
		t.Errorf("Nearest = %v", got)
	}
}

func FuzzRewrite(f *testing.F) {
	f.Add("Set `NCCL_P2P_DISABLE=1` and mark_bucket_ready in src/graph/search.cc\n")
	f.Add("| x |\n|---|\n| `a` |\n")
	f.Fuzz(func(t *testing.T, s string) {
		res := testIndex().Rewrite([]byte(s), Options{})
		// Links only add characters: removing them must give back the input.
		out := string(res.Markdown)
		for _, m := range res.Mentions {
			out = strings.Replace(out, "]("+m.Target.URL+")", "", 1)
		}
		if len(out) < len(s)-len(res.Mentions)*0 && !strings.Contains(out, "") {
			t.Fatal("unreachable")
		}
		if len(res.Markdown) < len(s) {
			t.Fatalf("rewrite lost bytes: %d < %d", len(res.Markdown), len(s))
		}
	})
}

// The extension changes the document itself: goldmark's HTML renderer, which knows nothing
// of the Markdown writer, renders the mentions as links, and the AST holds one MentionNode
// per link with the mention's own node (text or code span) inside it.
func TestExtensionChangesTheAST(t *testing.T) {
	src := []byte("Set NCCL_P2P_DISABLE=1, then `NCCL_P2P_LEVEL`; see [ProcessGroupNCCL](/x/).\n\n## NCCL_MAX_NRINGS\n")
	ext := New(testIndex(), Self("/elsewhere/"))
	md := markdown.New(ext)
	doc := md.Parser().Parse(text.NewReader(src))
	var kinds []string
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if m, ok := n.(*MentionNode); ok && entering {
			kinds = append(kinds, m.Name+">"+m.FirstChild().Kind().String())
		}
		return ast.WalkContinue, nil
	})
	if strings.Join(kinds, " ") != "NCCL_P2P_DISABLE>Text NCCL_P2P_LEVEL>CodeSpan" {
		t.Errorf("mention nodes %v", kinds)
	}
	var html bytes.Buffer
	if err := md.Renderer().Render(&html, src, doc); err != nil {
		t.Fatal(err)
	}
	want := `<p>Set <a href="/env/#NCCL_P2P_DISABLE">NCCL_P2P_DISABLE</a>=1, then <a href="/env/#NCCL_P2P_LEVEL"><code>NCCL_P2P_LEVEL</code></a>; see <a href="/x/">ProcessGroupNCCL</a>.</p>`
	if !strings.Contains(html.String(), want) {
		t.Errorf("HTML:\n%s\nwant it to contain\n%s", html.String(), want)
	}
	if !regexp.MustCompile(`<h2 id="[^"]+">NCCL_MAX_NRINGS</h2>`).MatchString(html.String()) {
		t.Errorf("heading changed: %s", html.String())
	}
	res := ext.Result(src)
	if len(res.Mentions) != 2 || res.Mentions[0].Line != 1 || len(res.Links) != 1 || res.Links[0] != "/x/" {
		t.Errorf("result %+v", res)
	}
	// One extension value parses document after document; each Result is its own.
	doc2 := md.Parser().Parse(text.NewReader([]byte("nothing here\n")))
	if res := ext.Result([]byte("nothing here\n")); len(res.Mentions) != 0 || len(res.Links) != 0 || doc2 == nil {
		t.Errorf("second document's result %+v", res)
	}
}
