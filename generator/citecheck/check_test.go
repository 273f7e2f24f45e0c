package citecheck

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/generator/envtable"
	"github.com/distributed-nav/distributed-nav/generator/sources"
)

// The tree in testdata/data: src/demo.cc has 300 lines, DEMO_MACRO at 10,
// smallFunction 20-30, staticHelper 40-60 (file-local index), bigFunction
// 100-220, ncclDemoStruct 240-260; the env row below says NCCL_DEMO_VAR is
// read at line 15.
func testChecker(t *testing.T) *Checker {
	t.Helper()
	src, err := sources.Load(filepath.Join("testdata", "data"))
	if err != nil {
		t.Fatal(err)
	}
	env := []envtable.Row{
		{Name: "NCCL_DEMO_VAR", File: "src/demo.cc", Line: 15, Status: "active", Reader: "NCCL"},
		{Name: "TORCH_DEMO_VAR", File: "torch/demo.cpp", Line: 5, Status: "active", Reader: "PyTorch"},
		{Name: "SHARED_DEMO_VAR", File: "torch/demo.cpp", Line: 6, Status: "active", Reader: "NCCL, PyTorch"},
	}
	return New(src, env)
}

const (
	u  = "https://github.com/NVIDIA/nccl/blob/v9.9.9-1/src/demo.cc"
	pt = "https://github.com/pytorch/pytorch/blob/v9.9.9/torch/demo.cpp"
)

// Each note is a synthetic Markdown text with one or more permalinks; want
// lists a fragment of every message the check must give, in order (none
// when the note is right).
func TestCheckNotes(t *testing.T) {
	c := testChecker(t)
	tests := []noteCase{
		{"link text names the function it opens", "It starts in [`smallFunction`](" + u + "#L20-L30).", nil},
		{"part of the function is fine", "See [`smallFunction`](" + u + "#L24-L26).", nil},
		{"link text names a neighbouring function", "It starts in [`smallFunction`](" + u + "#L40-L60).", []string{"L40-L60 of src/demo.cc holds none of what its link text names: `smallFunction` (L20-L30)"}},
		{"file-local definitions count", "A helper, [`staticHelper`](" + u + "#L41-L45).", nil},
		{"file-local definition missed", "A helper, [`staticHelper`](" + u + "#L61-L70).", []string{"`staticHelper` (L40-L60)"}},
		{"macro with its one line", "The limit is [`DEMO_MACRO`](" + u + "#L10).", nil},
		{"env var at its read line", "Set [`NCCL_DEMO_VAR`](" + u + "#L15) to 1.", nil},
		{"env var cited at other lines", "Set [`NCCL_DEMO_VAR`](" + u + "#L16-L19) to 1.", []string{"`NCCL_DEMO_VAR` (L15)"}},
		{"sentence names it, link text is a file label", "`bigFunction` walks the list ([demo.cc:150-160](" + u + "#L150-L160)).", nil},
		{"sentence names it, link opens elsewhere", "`bigFunction` walks the list ([demo.cc:20-30](" + u + "#L20-L30)).", []string{"holds none of what its sentence names: `bigFunction` (L100-L220)"}},
		{"a sibling link takes the name", "[`smallFunction`](" + u + "#L20-L30) calls it ([line 25](" + u + "#L25)).", nil},
		{"names in other sentences do not count", "`bigFunction` is long. The limit is set here ([demo.cc:12](" + u + "#L12)).", nil},
		{"names unknown in the file give no verdict", "`someOtherName` is set here ([demo.cc:290](" + u + "#L290)).", nil},
		{"whole function may be long", "[`bigFunction`](" + u + "#L100-L220) does it all.", nil},
		{"long part of a named function", "[`bigFunction`](" + u + "#L110-L200) does it all.", nil},
		{"long range for a one-line fact", "The limit is [`DEMO_MACRO`](" + u + "#L1-L60).", []string{"60 lines (L1-L60) for a fact about `DEMO_MACRO` (L10)"}},
		{"long range with no name", "The search relaxes its rules ([demo.cc:100-150](" + u + "#L60-L150)).", []string{"91 lines (L60-L150)"}},
		{"short range needs no name", "The struct ([demo.cc](" + u + "#L240-L260)) is 21 lines.", nil},
		{"a whole long definition the text does not name", "The search ([demo.cc](" + u + "#L100-L220)) is long.", []string{"121 lines (L100-L220)"}},
		{"a whole long definition named in plain words", "bigFunction does it all ([demo.cc](" + u + "#L100-L220)).", nil},
		{"whole file", "The file has 300 lines ([demo.cc](" + u + "#L1-L300)).", nil},
		{"past the end is sources.Check's to report", "See [demo.cc](" + u + "#L1-L999).", nil},
		{"paths in code spans name nothing", "`src/demo.cc` holds it ([here](" + u + "#L290)).", nil},
		{"table cells are separate", "| `bigFunction` | [demo.cc:20](" + u + "#L20) |", nil},
		{"table cell naming its function", "| `bigFunction` [demo.cc:20](" + u + "#L20) |", []string{"`bigFunction` (L100-L220)"}},
		{"fenced code is skipped", "```\n[`smallFunction`](" + u + "#L200)\n```", nil},
		{"links outside the pinned trees are not checked", "[`smallFunction`](https://example.com/x#L1-L999).", nil},
		{"scoped name counts by its last part", "[`Demo::smallFunction()`](" + u + "#L200).", []string{"`smallFunction` (L20-L30)"}},
		{"std names are not ours", "It calls `std::abort()` ([here](" + u + "#L290)).", nil},
	}
	runNotes(t, tests, c.Check)
}

// noteCase is one synthetic note and a fragment of every message a check
// must give for it, in order (none when the note is right).
type noteCase struct {
	name, note string
	want       []string
}

// runNotes runs check over every citation of each note and compares the
// messages with the wanted fragments.
func runNotes(t *testing.T, tests []noteCase, check func(Citation) string) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, cit := range Extract(tt.note, 1) {
				if msg := check(cit); msg != "" {
					got = append(got, msg)
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d messages %q, want %d %q", len(got), got, len(tt.want), tt.want)
			}
			for i := range got {
				if !strings.Contains(got[i], tt.want[i]) {
					t.Errorf("message %q does not contain %q", got[i], tt.want[i])
				}
			}
		})
	}
}

// TestCheckLibrary: a sentence that names an environment variable must cite
// a line of a library that reads it, whatever else it cites; the message
// comes once per sentence, from its first link.
func TestCheckLibrary(t *testing.T) {
	c := testChecker(t)
	tests := []noteCase{
		{"variable of the cited library", "With `TORCH_DEMO_VAR` set, [`demoWatch`](" + pt + "#L20-L40) dumps.", nil},
		{"PyTorch variable cited only in NCCL", "With `TORCH_DEMO_VAR` set, NCCL aborts ([`smallFunction`](" + u + "#L20-L30)).", []string{"`TORCH_DEMO_VAR` (read by pytorch/pytorch) but its permalinks open only NVIDIA/nccl"}},
		{"NCCL variable cited only in PyTorch", "`NCCL_DEMO_VAR` is first read in 9.9 ([`demoWatch`](" + pt + "#L20-L40)).", []string{"`NCCL_DEMO_VAR` (read by NVIDIA/nccl) but its permalinks open only pytorch/pytorch"}},
		{"one message for a sentence of two links", "`NCCL_DEMO_VAR` matters ([a](" + pt + "#L20), [b](" + pt + "#L30)).", []string{"`NCCL_DEMO_VAR`"}},
		{"a sibling into the reading library suffices", "`TORCH_DEMO_VAR` calls into NCCL ([`smallFunction`](" + u + "#L20-L30), [read](" + pt + "#L5)).", nil},
		{"a variable both libraries read", "`SHARED_DEMO_VAR` is set here ([`smallFunction`](" + u + "#L20-L30)).", nil},
		{"no permalink, no verdict", "`TORCH_DEMO_VAR` is off by default ([env table](/env/#TORCH_DEMO_VAR)).", nil},
		{"other sentences do not count", "`TORCH_DEMO_VAR` is off. NCCL aborts ([`smallFunction`](" + u + "#L20-L30)).", nil},
	}
	runNotes(t, tests, func(cit Citation) string {
		if !cit.First {
			return ""
		}
		return c.CheckLibrary(cit)
	})
}

func TestExtractLinesAndSentences(t *testing.T) {
	note := "---\ntitle: x\n---\nFirst sentence with `a_b`\n([one](" + u + "#L1)). Second `c_d` sentence ([two](" + u + "#L2)).\n\n- item [three](" + u + "#L3)\n"
	got := Extract(note, 1)
	if len(got) != 3 {
		t.Fatalf("got %d citations, want 3: %+v", len(got), got)
	}
	wantLines := []int{5, 5, 7}
	for i, c := range got {
		if c.Line != wantLines[i] {
			t.Errorf("citation %d at line %d, want %d", i, c.Line, wantLines[i])
		}
	}
	if !strings.Contains(got[0].Sentence, "a_b") || strings.Contains(got[0].Sentence, "c_d") {
		t.Errorf("first sentence %q should hold a_b and not c_d", got[0].Sentence)
	}
	if !strings.Contains(got[1].Sentence, "c_d") || strings.Contains(got[1].Sentence, "a_b") {
		t.Errorf("second sentence %q should hold c_d and not a_b", got[1].Sentence)
	}
}

func TestIdentifiers(t *testing.T) {
	tests := []struct {
		md   string
		want []string
	}{
		{"`ncclTopoCompute`", []string{"ncclTopoCompute"}},
		{"`ProcessGroupNCCL::WorkNCCL::wait()`", []string{"ProcessGroupNCCL", "WorkNCCL", "wait"}},
		{"`src/graph/paths.cc`", nil},
		{"`prims_ll.h`", nil},
		{"`--rdzv-backend`", nil},
		{"set NCCL_P2P_LEVEL to PHB", []string{"NCCL_P2P_LEVEL"}},
		{"initTransportsRank", []string{"initTransportsRank"}},
		{"the ring", nil},
		{"`maxChannels = MAXCHANNELS/2`", []string{"maxChannels", "MAXCHANNELS"}},
		{"the destructor (~ProcessGroupNCCL) warns", []string{"~ProcessGroupNCCL"}},
		{"calls ncclTopoCompute, then NVLink and PHB", []string{"ncclTopoCompute"}},
		{"see [`a_b`](https://x/y_z#L1)", []string{"a_b"}},
	}
	for _, tt := range tests {
		got := Identifiers(tt.md)
		if strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("Identifiers(%q) = %q, want %q", tt.md, got, tt.want)
		}
	}
}

// FuzzExtract: any text must extract without a panic, and every citation's
// line must lie within the text.
func FuzzExtract(f *testing.F) {
	f.Add("a [`x_y`](" + u + "#L1-L2). B | c | [d](" + u + ") |\n```\n[e](f)\n```")
	f.Add("---\n---\n[[a]](b)")
	f.Fuzz(func(t *testing.T, s string) {
		n := strings.Count(s, "\n") + 1
		for _, c := range Extract(s, 1) {
			if c.Line < 1 || c.Line > n {
				t.Fatalf("citation line %d outside 1..%d", c.Line, n)
			}
		}
	})
}
