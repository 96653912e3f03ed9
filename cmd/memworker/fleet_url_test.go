package main

import (
	"strings"
	"testing"
)

// A mistake in one URL of a list is a usage mistake, found before any is
// swept or read, as for one URL, and the list's passwords stay hidden.
func TestBadURLInAListIsUsage(t *testing.T) {
	for _, args := range [][]string{{"sweep"}, {"status"}} {
		r := mw(t, append(args, "--db", "http://127.0.0.1:1,http://u:p@127.0.0.1:2/?timeout=5")...)
		wantUsage(t, r, "timeout=", "separated by commas")
		if strings.Contains(r.stderr, "u:p@") {
			t.Errorf("%v printed the password: %s", args, r.stderr)
		}
	}
}
