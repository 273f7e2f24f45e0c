package main

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// A hugo server that exits cleanly (status 0 after SIGINT or SIGTERM) ends
// `distnav serve` cleanly; a failed one is reported with its error. Before
// hugoStopped, a clean exit printed "hugo server stopped: %!w(<nil>)".
func TestHugoStopped(t *testing.T) {
	if err := hugoStopped(nil); err != nil {
		t.Errorf("clean exit: %v", err)
	}
	fail := exec.Command("sh", "-c", "exit 3").Run()
	err := hugoStopped(fail)
	var exit *exec.ExitError
	if err == nil || !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("failed exit: %v", err)
	}
	if !strings.HasPrefix(err.Error(), "hugo server stopped: exit status 3") {
		t.Errorf("message %q", err.Error())
	}
}
