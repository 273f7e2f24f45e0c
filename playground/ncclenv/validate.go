package ncclenv

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/controls"
)

// Severity ranks a Problem.
type Severity int

// Severities. An Error means the setting would not do what the user asked
// (unknown name, unparsable value); a Warning means NCCL accepts it but the
// user should know something (deprecated name, clamped value).
const (
	Warning Severity = iota
	Error
)

// String returns "warning" or "error".
func (s Severity) String() string {
	if s == Error {
		return "error"
	}
	return "warning"
}

// ProblemKind classifies a Problem.
type ProblemKind int

// Problem kinds.
const (
	UnknownName ProblemKind = iota // no library reads this name
	Deprecated                     // a legacy name NCCL still reads
	BadValue                       // the value does not parse the way NCCL reads it
	NotNCCL                        // a PyTorch variable: NCCL itself ignores it
	Clamped                        // NCCL accepts the value but adjusts it
	NoEffect                       // a known name this release does not read
)

var kindNames = [...]string{"unknown-name", "deprecated", "bad-value", "not-nccl", "clamped", "no-effect"}

// String returns a short stable identifier of the kind.
func (k ProblemKind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("ProblemKind(%d)", int(k))
}

// Problem is one finding about one variable of an Env.
type Problem struct {
	Name     string
	Value    string
	Severity Severity
	Kind     ProblemKind
	Message  string
	// Suggestions lists the nearest known names for an unknown one.
	Suggestions []string
	// ReplacedBy names the current variable for a deprecated one.
	ReplacedBy string
}

// String formats the problem for a terminal.
func (p Problem) String() string {
	s := fmt.Sprintf("%s: %s: %s", p.Severity, ShowName(p.Name), p.Message)
	if len(p.Suggestions) > 0 {
		s += " (did you mean " + strings.Join(p.Suggestions, ", ") + "?)"
	}
	return s
}

// MaxShownName is how many bytes of a name ShowName shows.
const MaxShownName = 80

// ShowName returns a variable name as a message may print it: a name of
// letters, digits and underscores (every name NCCL reads) as it is; any
// other (a control sequence, a space, a megabyte of text) quoted with Go's
// escapes and cut to at most MaxShownName bytes, on a rune boundary, so
// that no terminal obeys it.
func ShowName(name string) string {
	plain := len(name) <= MaxShownName
	for i := 0; plain && i < len(name); i++ {
		c := name[i]
		plain = c == '_' || c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z'
	}
	if plain && name != "" {
		return name
	}
	if len(name) <= MaxShownName {
		return strconv.Quote(name)
	}
	return strconv.Quote(controls.Prefix(name, MaxShownName)) + "… (" + strconv.Itoa(len(name)) + " bytes)"
}

// HasErrors reports whether any problem is an Error.
func HasErrors(ps []Problem) bool {
	for _, p := range ps {
		if p.Severity == Error {
			return true
		}
	}
	return false
}

// Validate checks env against the embedded registry of NCCL and PyTorch
// variables: unknown names (with the nearest known names), deprecated names,
// PyTorch-only names, and values NCCL would not read as the user intends.
// Problems come in the sorted order of the variable names.
func Validate(env Env) []Problem {
	reg, err := DefaultRegistry()
	if err != nil {
		return []Problem{{Severity: Error, Kind: BadValue, Message: fmt.Sprintf("cannot load the variable registry: %v", err)}}
	}
	return reg.Validate(env)
}

// MaxSuggestedNames is how many unknown names of one Validate call get
// "did you mean" suggestions (the first ones in name order); the others are
// still reported, without suggestions, so that a dump of thousands of
// unknown names costs no more suggestion work than ten.
const MaxSuggestedNames = 10

// Validate checks env against r; see the package-level Validate.
func (r *Registry) Validate(env Env) []Problem {
	var out []Problem
	unknown := 0
	for _, name := range env.Names() {
		val, _ := env.Lookup(name)
		v, ok := r.Lookup(name)
		if !ok {
			p := Problem{
				Name: name, Value: val, Severity: Error, Kind: UnknownName,
				Message: "not a variable NCCL v2.30.7-1 reads",
			}
			if unknown++; unknown <= MaxSuggestedNames {
				p.Suggestions = r.Nearest(name, 3)
			}
			out = append(out, p)
			continue
		}
		if v.Reader == ReaderPyTorch {
			msg := "read by PyTorch, not by NCCL; it does not change NCCL's choices"
			if v.Deprecated() {
				msg += fmt.Sprintf(" (and PyTorch deprecated it in favour of %s)", v.DeprecatedAliasOf)
			}
			out = append(out, Problem{Name: name, Value: val, Severity: Warning, Kind: NotNCCL, Message: msg, ReplacedBy: v.DeprecatedAliasOf})
			continue
		}
		switch v.Status {
		case "removed":
			out = append(out, Problem{Name: name, Value: val, Severity: Warning, Kind: NoEffect,
				Message: "read by older NCCL releases only; v2.30.7-1 ignores it"})
			continue
		case "unread":
			out = append(out, Problem{Name: name, Value: val, Severity: Warning, Kind: NoEffect,
				Message: "declared by v2.30.7-1 but never read; it has no effect"})
			continue
		}
		if v.Deprecated() {
			msg := fmt.Sprintf("deprecated name; use %s (NCCL still reads it", v.DeprecatedAliasOf)
			if env.IsSet(v.DeprecatedAliasOf) {
				msg += fmt.Sprintf(", but %s is also set and wins)", v.DeprecatedAliasOf)
			} else {
				msg += ")"
			}
			out = append(out, Problem{Name: name, Value: val, Severity: Warning, Kind: Deprecated, Message: msg, ReplacedBy: v.DeprecatedAliasOf})
		}
		if p, bad := checkValue(v, val); bad {
			p.Name, p.Value = name, val
			out = append(out, p)
		}
	}
	return out
}

// checkValue applies the parsing rules NCCL uses for v to val.
func checkValue(v Var, val string) (Problem, bool) {
	switch v.Name {
	case "NCCL_ALGO":
		if err := CheckList(val, funcNames[:], algoNames[:]); err != nil {
			return Problem{Severity: Error, Kind: BadValue, Message: err.Error() + "; NCCL fails communicator init (ncclInvalidUsage)"}, true
		}
		return Problem{}, false
	case "NCCL_PROTO":
		if err := CheckList(val, funcNames[:], protoNames[:]); err != nil {
			return Problem{Severity: Error, Kind: BadValue, Message: err.Error() + "; NCCL fails communicator init (ncclInvalidUsage)"}, true
		}
		return Problem{}, false
	case "NCCL_THREAD_THRESHOLDS":
		return checkThresholds(val)
	case "NCCL_NTHREADS":
		return checkThreads(val, 64, 512)
	case "NCCL_LL128_NTHREADS":
		return checkThreads(val, 160, 640)
	case "NCCL_MAX_NCHANNELS", "NCCL_MAX_NRINGS":
		return checkMaxChannels(val)
	case "NCCL_MIN_NCHANNELS", "NCCL_MIN_NRINGS":
		return checkMinChannels(val)
	case "NCCL_BUFFSIZE", "NCCL_LL_BUFFSIZE", "NCCL_LL128_BUFFSIZE":
		return checkBuffSize(val)
	}
	switch {
	case v.Name == "NCCL_P2P_LEVEL" || v.Name == "NCCL_NET_GDR_LEVEL" || strings.Contains(v.Type, "path"):
		return checkLevel(val)
	case strings.HasPrefix(v.Type, "int"):
		return checkInt(val)
	}
	return Problem{}, false
}

func checkInt(val string) (Problem, bool) {
	if val == "" {
		return Problem{}, false // NCCL treats an empty value as unset
	}
	c := ParseCInt(val)
	switch {
	case c.Overflow:
		return Problem{Severity: Error, Kind: BadValue, Message: "integer out of range; NCCL falls back to the default"}, true
	case !c.Digits:
		return Problem{Severity: Error, Kind: BadValue, Message: "not an integer; NCCL's strtoll reads it as 0"}, true
	case c.Rest != "":
		return Problem{Severity: Error, Kind: BadValue, Message: fmt.Sprintf("trailing %q is not part of an integer; NCCL reads %d and ignores the rest", c.Rest, c.Value)}, true
	case isOctal(val):
		v := strings.TrimSpace(val)
		dec := strings.TrimLeft(strings.TrimLeft(v, "+-"), "0")
		return Problem{Severity: Warning, Kind: BadValue, Message: fmt.Sprintf("NCCL reads %s as %d: its strtoll (base 0) takes a leading 0 for octal; write %s if the decimal number was meant", strconv.Quote(v), c.Value, dec)}, true
	}
	return Problem{}, false
}

// isOctal reports whether strtoll with base 0 reads val as an octal
// number of two digits or more (a leading 0 then a digit).
func isOctal(val string) bool {
	s := strings.TrimLeft(strings.TrimSpace(val), "+-")
	return len(s) >= 2 && s[0] == '0' && s[1] >= '0' && s[1] <= '7'
}

// maxChannels is NCCL's MAXCHANNELS (src/include/device.h).
const maxChannels = 64

// checkMaxChannels mirrors ncclMaxNchannels
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/connect.cc#L348-L359):
// NCCL accepts any integer and quietly brings it into [1, MAXCHANNELS],
// logging the change only at INFO level.
func checkMaxChannels(val string) (Problem, bool) {
	if p, bad := checkInt(val); bad {
		return p, bad
	}
	c := ParseCInt(val)
	if !c.Digits || c.Value == -2 { // -2 is NCCL's own "unset"
		return Problem{}, false
	}
	switch {
	case c.Value < 1:
		return Problem{Severity: Warning, Kind: Clamped, Message: fmt.Sprintf("a maximum of %d channels; NCCL logs \"User asked for a maximum of %d channels, setting it to 1\" (INFO) and runs every collective on one channel", c.Value, c.Value)}, true
	case c.Value > maxChannels:
		return Problem{Severity: Warning, Kind: Clamped, Message: fmt.Sprintf("above NCCL's MAXCHANNELS; NCCL uses at most %d channels", maxChannels)}, true
	}
	return Problem{}, false
}

// checkMinChannels mirrors ncclMinNchannels
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/connect.cc#L334-L345):
// a minimum above MAXCHANNELS is lowered to it with an INFO line, and a
// negative one means no minimum.
func checkMinChannels(val string) (Problem, bool) {
	if p, bad := checkInt(val); bad {
		return p, bad
	}
	c := ParseCInt(val)
	if !c.Digits || c.Value == -2 { // -2 is NCCL's own "unset"
		return Problem{}, false
	}
	switch {
	case c.Value > maxChannels:
		return Problem{Severity: Warning, Kind: Clamped, Message: fmt.Sprintf("a minimum of %d channels; NCCL logs \"User asked for a minimum of %d channels, limiting to %d\" (INFO) and uses %d", c.Value, c.Value, maxChannels, maxChannels)}, true
	case c.Value < 0:
		return Problem{Severity: Warning, Kind: Clamped, Message: fmt.Sprintf("a minimum of %d channels; NCCL takes a negative minimum as none (0)", c.Value)}, true
	}
	return Problem{}, false
}

// checkBuffSize mirrors computeBuffSizes
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/init.cc#L821-L827):
// every value but -2 ("unset") becomes the protocol's buffer size in
// bytes unchecked, so zero or a negative size is not refused there.
func checkBuffSize(val string) (Problem, bool) {
	if p, bad := checkInt(val); bad {
		return p, bad
	}
	c := ParseCInt(val)
	if c.Digits && c.Value > 0 && c.Value < smallBuffer {
		return Problem{Severity: Warning, Kind: BadValue, Message: fmt.Sprintf("a buffer of %d bytes; NCCL takes it without a check and splits it into its %d steps (%d bytes each), far less than the defaults of hundreds of KiB to 4 MiB; the model's tuning and estimates do not read buffer sizes, so their numbers do not show the cost", c.Value, ncclSteps, c.Value/ncclSteps)}, true
	}
	if !c.Digits || c.Value == -2 || c.Value > 0 {
		return Problem{}, false
	}
	return Problem{Severity: Warning, Kind: BadValue, Message: fmt.Sprintf("a buffer of %d bytes; NCCL takes every value but -2 as the buffer size in bytes without a check (a zero or negative size is not replaced by the default); leave it unset (or -2) for the default", c.Value)}, true
}

// ncclSteps is NCCL_STEPS (src/include/device.h), the slots a connection's
// buffer is split into; smallBuffer is where a buffer size gets a warning
// (a choice: 8 KiB steps, far under any default).
const (
	ncclSteps   = 8
	smallBuffer = 64 << 10
)

// checkThreads mirrors getNthreads
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/tuning.cc#L17-L34):
// a positive value must be a multiple of 32 within [lo, hi], else NCCL
// replaces it.
func checkThreads(val string, lo, hi int64) (Problem, bool) {
	if p, bad := checkInt(val); bad {
		return p, bad
	}
	c := ParseCInt(val)
	if !c.Digits || c.Value <= 0 {
		return Problem{}, false // non-positive means "use the default"
	}
	switch {
	case c.Value%32 != 0:
		return Problem{Severity: Warning, Kind: Clamped, Message: fmt.Sprintf("not a multiple of 32; NCCL uses %d instead", hi)}, true
	case c.Value > hi:
		return Problem{Severity: Warning, Kind: Clamped, Message: fmt.Sprintf("above the maximum; NCCL uses %d", hi)}, true
	case c.Value < lo:
		return Problem{Severity: Warning, Kind: Clamped, Message: fmt.Sprintf("below the minimum; NCCL uses %d", lo)}, true
	}
	return Problem{}, false
}

// checkThresholds follows the sscanf("%ld %ld %ld %ld %ld %ld") that reads
// NCCL_THREAD_THRESHOLDS (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/tuning.cc#L597-L608).
func checkThresholds(val string) (Problem, bool) {
	fields := strings.Fields(val)
	if len(fields) > 6 {
		return Problem{Severity: Warning, Kind: BadValue, Message: fmt.Sprintf("%d numbers given; NCCL reads the first 6 (Tree LL/LL128/Simple, Ring LL/LL128/Simple)", len(fields))}, true
	}
	for i, f := range fields {
		if _, _, ok := scanDecimal(f); !ok {
			return Problem{Severity: Error, Kind: BadValue, Message: fmt.Sprintf("field %d %q is not a decimal integer; NCCL stops reading there", i+1, f)}, true
		}
	}
	return Problem{}, false
}

// scanDecimal reads a whole field as sscanf's %ld would (optional sign,
// decimal digits) and reports whether all of it was consumed.
func scanDecimal(f string) (int64, int, bool) {
	i := 0
	neg := false
	if i < len(f) && (f[i] == '+' || f[i] == '-') {
		neg = f[i] == '-'
		i++
	}
	start := i
	var v int64
	for i < len(f) && f[i] >= '0' && f[i] <= '9' {
		if v < (1<<62)/10 {
			v = v*10 + int64(f[i]-'0')
		}
		i++
	}
	if i == start {
		return 0, i, false
	}
	if neg {
		v = -v
	}
	return v, i, i == len(f)
}

// ParseThresholds reads NCCL_THREAD_THRESHOLDS the way the release does:
// up to six whitespace-separated decimal numbers; reading stops at the first
// field that is not one. Missing or unread fields are -2 ("keep the default").
func ParseThresholds(val string) [6]int64 {
	t := [6]int64{-2, -2, -2, -2, -2, -2}
	for i, f := range strings.Fields(val) {
		if i >= 6 {
			break
		}
		v, n, whole := scanDecimal(f)
		if n == 0 || (n == 1 && (f[0] == '+' || f[0] == '-')) {
			break
		}
		t[i] = v
		if !whole {
			break // sscanf stops at the first character it cannot match
		}
	}
	return t
}

// levelNames are the names ncclGetLevel accepts, compared case-sensitively
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/paths.cc#L244-L280).
var levelNames = [...]string{"LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS"}

func checkLevel(val string) (Problem, bool) {
	for _, n := range levelNames {
		if val == n {
			return Problem{}, false
		}
	}
	if val != "" && val[0] >= '0' && val[0] <= '9' {
		c := ParseCInt(val)
		if c.Rest != "" {
			return Problem{Severity: Warning, Kind: BadValue, Message: fmt.Sprintf("read as the legacy level %d; the rest is ignored", c.Value)}, true
		}
		if c.Value > 5 {
			return Problem{Severity: Warning, Kind: Clamped, Message: "legacy levels stop at 5 (SYS); NCCL uses SYS"}, true
		}
		return Problem{}, false
	}
	for _, n := range levelNames {
		if strings.EqualFold(val, n) {
			return Problem{Severity: Error, Kind: BadValue, Message: fmt.Sprintf("NCCL compares level names case-sensitively and ignores %q as if unset; write %s", val, n)}, true
		}
	}
	return Problem{Severity: Error, Kind: BadValue, Message: "not a level NCCL knows (LOC, NVL, NVB, C2C, PIX, PXB, P2C, PXN, PHB, SYS or a legacy number 0-5); NCCL ignores it"}, true
}
