package main

import (
	"strings"
	"testing"
)

func TestClock(t *testing.T) {
	path := demoDB(t)
	if r := ok(t, "clock", "show", "--db", path); r.stdout != "500\n" {
		t.Errorf("clock show: %q", r.stdout)
	}
	if r := ok(t, "clock", "advance", "--db", path, "40"); r.stdout != "540\n" {
		t.Errorf("clock advance --db X 40: %q", r.stdout)
	}
	if r := ok(t, "clock", "advance", "40", "--db", path); r.stdout != "580\n" {
		t.Errorf("clock advance 40 --db X: %q", r.stdout)
	}
	if r := ok(t, "clock", "advance", "0.5", "--db="+path); r.stdout != "580.5\n" {
		t.Errorf("clock advance 0.5 --db=X: %q", r.stdout)
	}
	before := fileHash(t, path)
	for _, args := range [][]string{
		{"clock", "advance", "-5", "--db", path},
		{"clock", "advance", "--db", path, "-5"},
		{"clock", "advance", "abc", "--db", path},
		{"clock", "advance", "Inf", "--db", path},
		{"clock", "advance", "--db", path},
		{"clock", "advance", "1", "2", "--db", path},
	} {
		wantUsage(t, mw(t, args...), "clock advance")
	}
	// Flags written after the argument are checked too.
	wantUsage(t, mw(t, "clock", "advance", "1", "--db"), "--db needs a value")
	wantUsage(t, mw(t, "clock", "advance", "1", "--bogus", "x"), "unknown flag --bogus")
	if fileHash(t, path) != before {
		t.Error("a rejected clock advance changed the file")
	}
	if r := ok(t, "clock", "show", "--db", path); r.stdout != "580.5\n" {
		t.Errorf("clock after rejected advances: %q", r.stdout)
	}
}

func TestClockGolden(t *testing.T) {
	tr := newTranscript(t)
	path := goldenDB(t, tr.dir, "m.db")
	tr.run("clock", "show", "--db", path)
	tr.run("clock", "advance", "40", "--db", path)
	tr.run("clock", "advance", "0.5", "--db", path)
	tr.run("clock", "show", "--db", path)
	tr.check("clock")
}

// TestClockAdvanceNegative: a negative number is an argument out of range,
// said so (with the way to set the clock back), not "an unknown flag", and
// the clock stays.
func TestClockAdvanceNegative(t *testing.T) {
	path := demoDB(t)
	before := ok(t, "clock", "show", "--db", path).stdout
	for _, args := range [][]string{{"clock", "advance", "-5", "--db", path}, {"--db", path, "clock", "advance", "-0.5"}} {
		r := mw(t, args...)
		wantUsage(t, r, "is a negative number", "config set --force active_hours")
		if strings.Contains(r.stderr, "flag provided") {
			t.Errorf("%v: %s", args, r.stderr)
		}
	}
	if got := ok(t, "clock", "show", "--db", path).stdout; got != before {
		t.Errorf("the clock moved: %q, was %q", got, before)
	}
}
