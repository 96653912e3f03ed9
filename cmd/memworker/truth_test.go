package main

// What memworker says is true: times and ages never negative, one clock
// for every reader of "now".

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestStatusSweepAheadOfClock: after sweep --now H past the clock, status
// says the last sweep ran ahead of the clock, by how much, and never
// prints a negative age; the clock itself stays where the app left it.
func TestStatusSweepAheadOfClock(t *testing.T) {
	path := demoDB(t) // clock 500, swept at 500
	ok(t, "sweep", "--now", "16651", "--db", path)
	if got := ok(t, "clock", "show", "--db", path).stdout; got != "500\n" {
		t.Errorf("sweep --now past the clock moved the clock to %q", got)
	}
	r := ok(t, "status", "--db", path)
	if !strings.Contains(r.stdout, "last sweep at 16651.00 h (16151.00 h ahead of the clock: swept with --now)") {
		t.Errorf("status:\n%s", r.stdout)
	}
	if strings.Contains(r.stdout, "-16") || strings.Contains(r.stdout, "h ago") {
		t.Errorf("status prints a negative age:\n%s", r.stdout)
	}
	m := decodeJSON(t, ok(t, "status", "--json", "--db", path))
	if num(t, m, "hours_since_curate") != 0 || num(t, m, "last_sweep_ahead_hours") != 16151 || m["curate_due"] != false {
		t.Errorf("status --json: %v", m)
	}
	// A fleet's line says the same.
	fleet := filepath.Join(filepath.Dir(path), "*.db")
	if r := ok(t, "status", "--db", fleet); !strings.Contains(r.stdout, "last sweep 16151.00 h ahead of the clock") {
		t.Errorf("fleet status: %s", r.stdout)
	}
	// Once the clock passes the sweep, the age is an age again.
	ok(t, "clock", "advance", fmt.Sprint(16151+40), "--db", path)
	if r := ok(t, "status", "--db", path); !strings.Contains(r.stdout, "last sweep at 16651.00 h (40.00 h ago), a sweep is due") {
		t.Errorf("status after the clock caught up:\n%s", r.stdout)
	}
}
