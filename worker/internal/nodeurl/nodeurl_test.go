package nodeurl

import (
	"errors"
	"strings"
	"testing"
)

// What memworker accepts as a node's address, and how it shows one: the
// whole table of passwords is in worker's tests; these are the rules.
func TestParseAndRedact(t *testing.T) {
	for raw, want := range map[string]string{
		"http://127.0.0.1:4001":                           "",
		"https://u:p@host:4001/?level=strong":             "",
		"http://host:4001/?timeout=5":                     "timeout= is refused",
		"http://host:4001/db":                             "no path",
		"http://host:4001#x":                              "fragment",
		"ftp://host:4001":                                 "want http://HOST:PORT",
		"http://u:12/b@host:4001":                         "an @ after the host",
		"http://u:%zz@host:4001":                          "does not parse",
		"http://host:4001/?disableClusterDiscovery=maybe": "true or false",
	} {
		_, err := Parse(raw)
		switch {
		case want == "" && err != nil:
			t.Errorf("Parse(%q): %v", raw, err)
		case want != "" && (!errors.Is(err, ErrBad) || !strings.Contains(err.Error(), want)):
			t.Errorf("Parse(%q): %v, want %q", raw, err, want)
		}
	}
	for raw, want := range map[string]string{
		"http://u:secret@host:4001":    "http://u:xxxxx@host:4001",
		"http://u:se/cret@host:4001":   "http://xxxxx@host:4001",
		"http://u:se%zzcret@host:4001": "http://xxxxx@host:4001",
		"http://host:4001/?level=weak": "http://host:4001/?level=weak",
		"memory.db":                    "memory.db",
	} {
		if got := Redact(raw); got != want {
			t.Errorf("Redact(%q) = %q, want %q", raw, got, want)
		}
	}
	if !Is("https://h:1") || Is("memory.db") {
		t.Error("Is tells a URL from a file wrongly")
	}
}
