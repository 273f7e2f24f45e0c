package ncclenv

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
)

func defaultReg(t *testing.T) *Registry {
	t.Helper()
	r, err := DefaultRegistry()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestDefaultRegistryHasReleaseNames(t *testing.T) {
	r := defaultReg(t)
	// nccl-model.md: 249 distinct names are read by v2.30.7-1.
	if n := len(r.Names(ReaderNCCL)); n < 249 {
		t.Errorf("registry knows %d NCCL names, want at least 249", n)
	}
	for _, n := range []string{"NCCL_ALGO", "NCCL_PROTO", "NCCL_MAX_NCHANNELS", "NCCL_P2P_LEVEL", "NCCL_THREAD_THRESHOLDS"} {
		if _, ok := r.Lookup(n); !ok {
			t.Errorf("%s missing", n)
		}
	}
	for old, repl := range map[string]string{"NCCL_MAX_NRINGS": "NCCL_MAX_NCHANNELS", "NCCL_MIN_NRINGS": "NCCL_MIN_NCHANNELS", "NCCL_CHECK_POINTERS": "NCCL_CHECK_MODE"} {
		v, ok := r.Lookup(old)
		if !ok || v.DeprecatedAliasOf != repl {
			t.Errorf("%s: deprecated alias of %q, want %q", old, v.DeprecatedAliasOf, repl)
		}
	}
}

func TestLoadRegistryColumns(t *testing.T) {
	fsys := fstest.MapFS{
		"env/nccl.csv":  {Data: []byte("Default,NAME,deprecated_alias_of\nx,NCCL_A,\ny,NCCL_OLD,NCCL_A\n")},
		"env/torch.csv": {Data: []byte("name,component\nTORCH_X,c10d\nNCCL_A,dup\n")},
	}
	r, err := LoadRegistry(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Names(ReaderNCCL); !reflect.DeepEqual(got, []string{"NCCL_A", "NCCL_OLD"}) {
		t.Errorf("NCCL names %v", got)
	}
	if v, _ := r.Lookup("NCCL_A"); v.Reader != ReaderNCCL || v.Default != "x" {
		t.Errorf("NCCL_A = %+v (the NCCL table must win)", v)
	}
	if v, _ := r.Lookup("NCCL_OLD"); v.DeprecatedAliasOf != "NCCL_A" {
		t.Errorf("NCCL_OLD = %+v", v)
	}
	if _, err := LoadRegistry(fstest.MapFS{"env/nccl.csv": {Data: []byte("x,y\n1,2\n")}}); err == nil {
		t.Error("table without a name column accepted")
	}
	if _, err := LoadRegistry(fstest.MapFS{}); err == nil {
		t.Error("missing nccl.csv accepted")
	}
	// torch.csv is optional.
	if _, err := LoadRegistry(fstest.MapFS{"env/nccl.csv": {Data: []byte("name\nNCCL_A\n")}}); err != nil {
		t.Error(err)
	}
}

func TestNearest(t *testing.T) {
	r := defaultReg(t)
	tests := []struct {
		in   string
		want string // expected first suggestion
	}{
		{"NCCL_ALGOS", "NCCL_ALGO"},
		{"nccl_algo", "NCCL_ALGO"},          // case
		{"ALGO", "NCCL_ALGO"},               // missing prefix
		{"NCCL_NCCL_PROTO", "NCCL_PROTO"},   // doubled prefix
		{"NCCL_P2P_LEVL", "NCCL_P2P_LEVEL"}, // typo
		{"NCCL_SOCKET_IFNAM", "NCCL_SOCKET_IFNAME"},
		{"NCCL_MAX_NCHANELS", "NCCL_MAX_NCHANNELS"},
		{"IB_HCA", "NCCL_IB_HCA"},
	}
	for _, tt := range tests {
		got := r.Nearest(tt.in, 3)
		if len(got) == 0 || got[0] != tt.want {
			t.Errorf("Nearest(%q) = %v, want %s first", tt.in, got, tt.want)
		}
	}
	if got := r.Nearest("COMPLETELY_UNRELATED_THING_XYZ", 3); len(got) != 0 {
		t.Errorf("unrelated name got suggestions %v", got)
	}
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		d    int
	}{
		{"", "", 0}, {"abc", "abc", 0}, {"abc", "", 3}, {"kitten", "sitting", 3}, {"ALGO", "AGLO", 1}, {"ab", "ba", 1},
	}
	for _, tt := range tests {
		if got := editDistance(tt.a, tt.b); got != tt.d {
			t.Errorf("editDistance(%q,%q) = %d, want %d", tt.a, tt.b, got, tt.d)
		}
	}
}

func TestValidate(t *testing.T) {
	type want struct {
		name string
		sev  Severity
		kind ProblemKind
		msg  string // substring
	}
	tests := []struct {
		env  map[string]string
		want []want
	}{
		{map[string]string{"NCCL_ALGO": "^Tree", "NCCL_PROTO": "Simple", "NCCL_MAX_NCHANNELS": "4", "NCCL_P2P_LEVEL": "PHB"}, nil},
		{map[string]string{"NCCL_ALGOS": "ring"}, []want{{"NCCL_ALGOS", Error, UnknownName, "not a variable"}}},
		{map[string]string{"NCCL_MAX_NRINGS": "4"}, []want{{"NCCL_MAX_NRINGS", Warning, Deprecated, "use NCCL_MAX_NCHANNELS"}}},
		{map[string]string{"NCCL_MAX_NRINGS": "4", "NCCL_MAX_NCHANNELS": "8"}, []want{{"NCCL_MAX_NRINGS", Warning, Deprecated, "also set and wins"}}},
		{map[string]string{"NCCL_CHECK_POINTERS": "1"}, []want{{"NCCL_CHECK_POINTERS", Warning, Deprecated, "NCCL_CHECK_MODE"}}},
		{map[string]string{"NCCL_MIN_NRINGS": "x"}, []want{
			{"NCCL_MIN_NRINGS", Warning, Deprecated, "NCCL_MIN_NCHANNELS"},
			{"NCCL_MIN_NRINGS", Error, BadValue, "reads it as 0"},
		}},
		{map[string]string{"NCCL_MAX_NCHANNELS": "4k"}, []want{{"NCCL_MAX_NCHANNELS", Error, BadValue, "reads 4"}}},
		{map[string]string{"NCCL_ALGO": "ring,foo"}, []want{{"NCCL_ALGO", Error, BadValue, `"foo"`}}},
		{map[string]string{"NCCL_PROTO": "LL256"}, []want{{"NCCL_PROTO", Error, BadValue, `"LL256"`}}},
		{map[string]string{"NCCL_P2P_LEVEL": "phb"}, []want{{"NCCL_P2P_LEVEL", Error, BadValue, "case-sensitively"}}},
		{map[string]string{"NCCL_P2P_LEVEL": "NET"}, []want{{"NCCL_P2P_LEVEL", Error, BadValue, "not a level"}}},
		{map[string]string{"NCCL_P2P_LEVEL": "7"}, []want{{"NCCL_P2P_LEVEL", Warning, Clamped, "SYS"}}},
		{map[string]string{"NCCL_NTHREADS": "100"}, []want{{"NCCL_NTHREADS", Warning, Clamped, "uses 512"}}},
		{map[string]string{"NCCL_NTHREADS": "1024"}, []want{{"NCCL_NTHREADS", Warning, Clamped, "uses 512"}}},
		{map[string]string{"NCCL_LL128_NTHREADS": "96"}, []want{{"NCCL_LL128_NTHREADS", Warning, Clamped, "uses 160"}}},
		{map[string]string{"NCCL_THREAD_THRESHOLDS": "8 8 x"}, []want{{"NCCL_THREAD_THRESHOLDS", Error, BadValue, "field 3"}}},
		{map[string]string{"NCCL_THREAD_THRESHOLDS": "1 2 3 4 5 6 7"}, []want{{"NCCL_THREAD_THRESHOLDS", Warning, BadValue, "first 6"}}},
		// ncclMinNchannels (connect.cc): above MAXCHANNELS (64) it is
		// lowered with an INFO line; negative means none; 8 and -2 pass.
		{map[string]string{"NCCL_MIN_NCHANNELS": "100000"}, []want{{"NCCL_MIN_NCHANNELS", Warning, Clamped, "limiting to 64"}}},
		{map[string]string{"NCCL_MIN_NCHANNELS": "-5"}, []want{{"NCCL_MIN_NCHANNELS", Warning, Clamped, "as none (0)"}}},
		{map[string]string{"NCCL_MIN_NCHANNELS": "8", "NCCL_BUFFSIZE": "-2", "NCCL_LL_BUFFSIZE": "1048576"}, nil},
		// computeBuffSizes (init.cc): only -2 means the default.
		{map[string]string{"NCCL_BUFFSIZE": "0"}, []want{{"NCCL_BUFFSIZE", Warning, BadValue, "without a check"}}},
		// A positive size under 64 KiB: NCCL takes it, 8 steps of a few bytes.
		{map[string]string{"NCCL_BUFFSIZE": "1"}, []want{{"NCCL_BUFFSIZE", Warning, BadValue, "8 steps (0 bytes each)"}}},
		{map[string]string{"NCCL_LL_BUFFSIZE": "65536"}, nil},
		{map[string]string{"NCCL_LL128_BUFFSIZE": "-1"}, []want{{"NCCL_LL128_BUFFSIZE", Warning, BadValue, "a buffer of -1 bytes"}}},
	}
	for _, tt := range tests {
		got := Validate(New(tt.env))
		if len(got) != len(tt.want) {
			t.Errorf("Validate(%v) = %v, want %d problems", tt.env, got, len(tt.want))
			continue
		}
		for i, w := range tt.want {
			g := got[i]
			if g.Name != w.name || g.Severity != w.sev || g.Kind != w.kind || !strings.Contains(g.Message, w.msg) {
				t.Errorf("Validate(%v)[%d] = %+v, want %+v", tt.env, i, g, w)
			}
		}
	}
}

func TestValidateSuggestionsAndTorch(t *testing.T) {
	ps := Validate(New(map[string]string{"NCCL_ALGOS": "ring"}))
	if len(ps) != 1 || len(ps[0].Suggestions) == 0 || ps[0].Suggestions[0] != "NCCL_ALGO" {
		t.Fatalf("got %+v", ps)
	}
	if !strings.Contains(ps[0].String(), "did you mean NCCL_ALGO") {
		t.Errorf("String() = %q", ps[0].String())
	}
	if !HasErrors(ps) {
		t.Error("HasErrors = false for an unknown name")
	}
	reg := defaultReg(t)
	if len(reg.Names(ReaderPyTorch)) == 0 {
		t.Skip("data/env/torch.csv not present yet")
	}
	ps = Validate(New(map[string]string{"TORCH_NCCL_ASYNC_ERROR_HANDLING": "1"}))
	if len(ps) != 1 || ps[0].Kind != NotNCCL || ps[0].Severity != Warning {
		t.Errorf("torch variable: %+v", ps)
	}
}

func TestParseThresholds(t *testing.T) {
	// sscanf("%ld %ld %ld %ld %ld %ld") as in tuning.cc:601-602; -2 = not read.
	tests := []struct {
		in   string
		want [6]int64
	}{
		{"", [6]int64{-2, -2, -2, -2, -2, -2}},
		{"1 2 3 4 5 6", [6]int64{1, 2, 3, 4, 5, 6}},
		{"  7\t8", [6]int64{7, 8, -2, -2, -2, -2}},
		{"1 2x 3", [6]int64{1, 2, -2, -2, -2, -2}},
		{"1 x 3", [6]int64{1, -2, -2, -2, -2, -2}},
		{"-1 0 1 2 3 4 5", [6]int64{-1, 0, 1, 2, 3, 4}},
	}
	for _, tt := range tests {
		if got := ParseThresholds(tt.in); got != tt.want {
			t.Errorf("ParseThresholds(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestValidateStatus(t *testing.T) {
	fsys := fstest.MapFS{"env/nccl.csv": {Data: []byte("name,type,status\nNCCL_OLD,int64,removed\nNCCL_DECL,int64,unread\nNCCL_X,int64,active\n")}}
	r, err := LoadRegistry(fsys)
	if err != nil {
		t.Fatal(err)
	}
	ps := r.Validate(New(map[string]string{"NCCL_OLD": "1", "NCCL_DECL": "1", "NCCL_X": "1"}))
	if len(ps) != 2 {
		t.Fatalf("got %v", ps)
	}
	for _, p := range ps {
		if p.Kind != NoEffect || p.Severity != Warning {
			t.Errorf("%+v", p)
		}
	}
	if !strings.Contains(ps[1].Message, "older NCCL releases") || ps[1].Name != "NCCL_OLD" {
		t.Errorf("removed: %+v", ps[1])
	}
}

// TestMaxChannelsClamped: NCCL brings NCCL_MAX_NCHANNELS into [1, 64]
// without failing (connect.cc:348-359); the validator says so.
func TestMaxChannelsClamped(t *testing.T) {
	for _, tt := range []struct{ val, want string }{
		{"0", "NCCL logs \"User asked for a maximum of 0 channels, setting it to 1\""},
		{"-5", "a maximum of -5 channels"},
		{"100", "NCCL uses at most 64 channels"},
		{"8", ""},
		{"-2", ""}, // NCCL's own "unset"
	} {
		ps := Validate(New(map[string]string{"NCCL_MAX_NCHANNELS": tt.val}))
		got := ""
		for _, p := range ps {
			got += p.Message
		}
		if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
			t.Errorf("NCCL_MAX_NCHANNELS=%s: problems %q, want %q", tt.val, got, tt.want)
		}
	}
}

// TestShowName checks how a name is echoed: a plain name as it is, any
// other quoted, and a long one cut to at most MaxShownName bytes on a rune
// boundary with its full length.
func TestShowName(t *testing.T) {
	long := strings.Repeat("A", MaxShownName+20)
	// MaxShownName-1 ASCII bytes, then "é" (2 bytes) straddling the cap.
	straddle := strings.Repeat("a", MaxShownName-1) + "é" + "tail"
	tests := []struct{ in, want string }{
		{"NCCL_IB_HCA", "NCCL_IB_HCA"},
		{"NCCL IB", `"NCCL IB"`},
		{"\x1b]0;title\a", `"\x1b]0;title\a"`},
		{long, strconv.Quote(long[:MaxShownName]) + "… (" + strconv.Itoa(len(long)) + " bytes)"},
		{straddle, strconv.Quote(straddle[:MaxShownName-1]) + "… (" + strconv.Itoa(len(straddle)) + " bytes)"},
	}
	for _, tt := range tests {
		if got := ShowName(tt.in); got != tt.want {
			t.Errorf("ShowName(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
