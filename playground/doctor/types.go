package doctor

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Severity ranks a Diagnosis or Finding.
type Severity int

// Severities, from least to most serious.
const (
	Info    Severity = iota // worth knowing, nothing is wrong
	Warning                 // likely costs performance or hides a problem
	Error                   // the job fails or a setting does not do what was meant
)

var severityNames = [...]string{"info", "warning", "error"}

// String returns "info", "warning" or "error".
func (s Severity) String() string {
	if s >= 0 && int(s) < len(severityNames) {
		return severityNames[s]
	}
	return fmt.Sprintf("Severity(%d)", int(s))
}

// MarshalJSON writes the severity as its name, a JSON string (the names
// need no escaping; written without encoding/json so that the wasm, whose
// answers go through package jsonenc, does not link it).
func (s Severity) MarshalJSON() ([]byte, error) {
	return []byte(`"` + s.String() + `"`), nil
}

// UnmarshalJSON reads a severity name (a JSON string, matched without
// regard to case).
func (s *Severity) UnmarshalJSON(b []byte) error {
	var name string
	if err := json.Unmarshal(b, &name); err != nil {
		if len(b) > 40 {
			b = b[:40]
		}
		return errors.New("severity: want a JSON string, got " + strconv.Quote(string(b)))
	}
	for i, n := range severityNames {
		if strings.EqualFold(n, name) {
			*s = Severity(i)
			return nil
		}
	}
	return fmt.Errorf("severity: unknown name %q", name)
}

// Report is the doctor's whole answer, the object `ncclsim doctor --json`
// prints and the wasm playground returns: the log's summary (nil without a
// log), the diagnoses (never nil in those answers, so an empty list is []),
// and the remarks about a pasted environment. It is encoded with
// encoding/json; the struct tags are the keys scripts rely on.
type Report struct {
	Summary     *Summary    `json:"summary,omitempty"`
	Diagnoses   []Diagnosis `json:"diagnoses"`
	EnvFindings []Finding   `json:"env_findings,omitempty"`
}

// LineRef points at one input line. Line is 1-based; 0 means the evidence
// does not come from the log but from the environment given to Diagnose.
type LineRef struct {
	Line int    `json:"line"`
	Text string `json:"text"`
}

// Link names a page of the site. URL is site-relative, for example
// "/notes/troubleshooting/#nccl-timeout" or "/env/#NCCL_P2P_DISABLE".
type Link struct {
	Title string `json:"title"`
	URL   string `json:"url"`
}

// Diagnosis is one problem (or noteworthy fact) found in a log and its
// environment.
type Diagnosis struct {
	// ID is a stable identifier such as "p2p-unavailable".
	ID       string   `json:"id"`
	Severity Severity `json:"severity"`
	Title    string   `json:"title"`
	// Explanation says, in this project's words, what the evidence means
	// and what to do.
	Explanation string    `json:"explanation"`
	Evidence    []LineRef `json:"evidence"`
	Links       []Link    `json:"links"`
}

// Finding is one remark about one line of a pasted environment or
// nccl.conf file.
type Finding struct {
	// Line is the 1-based line of the pasted text (0 for remarks about the
	// text as a whole).
	Line     int      `json:"line"`
	Text     string   `json:"text"`
	Name     string   `json:"name,omitempty"`
	Value    string   `json:"value,omitempty"`
	ID       string   `json:"id"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
	// Suggestions lists the nearest known names for an unknown one.
	Suggestions []string `json:"suggestions,omitempty"`
	Links       []Link   `json:"links"`
}

// String formats a finding for a terminal.
func (f Finding) String() string {
	var b strings.Builder
	if f.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", f.Line)
	}
	fmt.Fprintf(&b, "%s: ", f.Severity)
	if f.Name != "" {
		fmt.Fprintf(&b, "%s: ", f.Name)
	}
	b.WriteString(f.Message)
	if len(f.Suggestions) > 0 {
		fmt.Fprintf(&b, " (did you mean %s?)", strings.Join(f.Suggestions, ", "))
	}
	return b.String()
}
