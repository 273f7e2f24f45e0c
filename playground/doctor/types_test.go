package doctor

import (
	"encoding/json"
	"testing"
)

// MarshalJSON quotes the name itself; encoding/json must agree, and the
// result must read back through UnmarshalJSON.
func TestSeverityJSON(t *testing.T) {
	for _, s := range []Severity{Info, Warning, Error, Severity(7), Severity(-1)} {
		got, err := s.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(s.String())
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%d: MarshalJSON %s, encoding/json %s", int(s), got, want)
		}
		var back Severity
		err = json.Unmarshal(got, &back)
		if inRange := s >= Info && s <= Error; inRange != (err == nil) || (inRange && back != s) {
			t.Errorf("%d: read back %v, err %v", int(s), back, err)
		}
	}
}
