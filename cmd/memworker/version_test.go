package main

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/memdecay/memdecay/schema"
	"github.com/memdecay/memdecay/sqlfuncs"
)

func TestVersionCommand(t *testing.T) {
	latest, _ := schema.Latest()
	r := ok(t, "version")
	want := regexp.MustCompile(fmt.Sprintf(`^memworker %s \(schema %d, SQLite 3\.\d+\.\d+\)\n$`, regexp.QuoteMeta(sqlfuncs.Version), latest))
	if !want.MatchString(r.stdout) {
		t.Errorf("memworker version: %q, want %s", r.stdout, want)
	}
	wantUsage(t, mw(t, "version", "extra"), "no arguments")
}
