package ncclsrc

import (
	"reflect"
	"testing"
)

func TestExtract(t *testing.T) {
	src := `#define WARN(...) log(__VA_ARGS__)
// WARN("in a comment");
/* INFO(NCCL_INIT, "in a block
   comment"); */
static void f() {
  WARN("Call to %s failed: %s (\"quoted\")", "x", strerror(errno));
  INFO(NCCL_INIT | NCCL_ENV, "size %" PRIu64 " bytes,"
       " done", n);
  TRACE(NCCL_NET, buf);
  const char* s = "WARN(not a call)";
  INFO_LOC(NCCL_ALLOC, "ptr %p", p);
}
#define CHECK(name) WARN("Call to " name " failed")
`
	got := Extract(src)
	want := []Call{
		{Line: 6, EndLine: 6, Macro: "WARN", Severity: "WARN", Subsystem: "ALL", Format: `Call to %s failed: %s ("quoted")`},
		{Line: 7, EndLine: 8, Macro: "INFO", Severity: "INFO", Subsystem: "INIT|ENV", Format: "size %lu bytes, done"},
		{Line: 9, EndLine: 9, Macro: "TRACE", Severity: "TRACE", Subsystem: "NET", Dynamic: true},
		{Line: 11, EndLine: 11, Macro: "INFO_LOC", Severity: "INFO", Subsystem: "ALLOC", Format: "%s:%d (%s) ptr %p"},
		{Line: 13, EndLine: 13, Macro: "WARN", Severity: "WARN", Subsystem: "ALL", Format: "Call to %s failed"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Extract:\n got %+v\nwant %+v", got, want)
	}
	// The naive counter agrees here except for the literal "WARN(not a
	// call)", which it counts: the reason the catalog test compares the two
	// per file and a disagreement is looked at.
	if n := CountCalls(src); n != len(want)+1 {
		t.Errorf("CountCalls = %d, want %d", n, len(want)+1)
	}
}
