package main

import (
	"bytes"
	"strings"
	"testing"
)

// A crash inside a command is a failure (exit 1), never a usage mistake:
// exit 2 is the Go runtime's own status for a panic, and memworker's for
// usage only.
func TestPanicIsAFailureNotUsage(t *testing.T) {
	var stderr bytes.Buffer
	code := guarded(&stderr, func() int { panic("boom") })
	if code != exitFailure {
		t.Errorf("a panic exits %d, want %d", code, exitFailure)
	}
	if msg := stderr.String(); !strings.HasPrefix(msg, "memworker: internal error: boom\n") || !strings.Contains(msg, "goroutine") {
		t.Errorf("stderr lacks the panic and its stack:\n%s", msg)
	}
	if code := guarded(&stderr, func() int { return exitBusy }); code != exitBusy {
		t.Errorf("guarded changed exit %d to %d", exitBusy, code)
	}
}
