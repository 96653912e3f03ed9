package main

// What memworker says is true: times and ages never negative, one clock
// for every reader of "now".

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// TestPinnedWallClockEverywhere: with wall_clock pinned 60 days ahead of
// the machine, explain --fact agrees with mem_facts_scored, and fact
// feedback, recall and restore stamp the pinned time, not the machine's.
func TestPinnedWallClockEverywhere(t *testing.T) {
	path := demoDB(t)
	machine := time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC)
	pinned := machine.Add(60 * 24 * time.Hour)
	exec1(t, path, `INSERT INTO mem_facts (id, segment, last_accessed_at) VALUES ('f-clock', 'knowledge', ?), ('f-vote', 'knowledge', ?)`,
		machine.Add(-48*time.Hour).Unix(), machine.Unix())
	ok(t, "config", "set", "wall_clock", fmt.Sprint(pinned.Unix()), "--db", path)

	m := decodeJSON(t, mwAt(t, machine, "explain", "--fact", "f-clock", "--json", "--db", path))
	view := queryOne(t, path, `SELECT days_since_access || '|' || score || '|' || action FROM mem_facts_scored WHERE id = 'f-clock'`)
	var days, score float64
	var action string
	if _, err := fmt.Sscanf(strings.ReplaceAll(view, "|", " "), "%g %g %s", &days, &score, &action); err != nil {
		t.Fatalf("view row %q: %v", view, err)
	}
	if days != 62 || num(t, m, "days_since_access") != days || num(t, m, "score") != score || m["action"] != action {
		t.Errorf("explain --fact under a pinned clock: %v; mem_facts_scored: %s (want 62 days)", m, view)
	}
	text := mwAt(t, machine, "explain", "--fact", "f-clock", "--db", path).stdout
	if !strings.Contains(text, "last use   62.0 days ago") {
		t.Errorf("explain --fact text:\n%s", text)
	}

	for _, args := range [][]string{{"fact", "feedback", "f-vote", "up"}, {"fact", "recall", "f-clock"}} {
		m := decodeJSON(t, mwAt(t, machine, append(args, "--json", "--db", path)...))
		if num(t, m, "at") != float64(pinned.Unix()) || num(t, m, "last_accessed_at") != float64(pinned.Unix()) {
			t.Errorf("%v: %v, want at and last_accessed_at %d", args, m, pinned.Unix())
		}
	}
	if got := queryOne(t, path, `SELECT max(at) FROM mem_events WHERE action IN ('feedback', 'recall')`); got != fmt.Sprint(pinned.Unix()) {
		t.Errorf("feedback events at %s, want %d", got, pinned.Unix())
	}

	archived := queryOne(t, path, `SELECT id FROM mem_facts WHERE status = 'archived' ORDER BY id LIMIT 1`)
	ok(t, "restore", "--fact", archived, "--db", path)
	mwAt(t, machine, "restore", "--fact", archived, "--db", path)
	if got := queryOne(t, path, `SELECT last_accessed_at FROM mem_facts WHERE id = ?`, archived); got != fmt.Sprint(pinned.Unix()) {
		t.Errorf("restored fact's access time %s, want the pinned %d", got, pinned.Unix())
	}
}

// TestAppTimeForms: an offset in hours only and a space before the offset
// are read everywhere a wall time is: the columns (explain, the views) and
// --wall-now.
func TestAppTimeForms(t *testing.T) {
	path := demoDB(t)
	now := time.Date(2026, 2, 13, 4, 54, 15, 0, time.UTC)
	exec1(t, path, `INSERT INTO mem_facts (id, segment, last_accessed_at) VALUES
		('f-unix', 'context', 1770094455), ('f-pg', 'context', '2026-02-03 06:54:15+02'),
		('f-spaced', 'context', '2026-02-03 06:54:15 +02:00')`)
	ok(t, "config", "set", "wall_clock", fmt.Sprint(now.Unix()), "--db", path)
	twin := ok(t, "explain", "--fact", "f-unix", "--db", path).stdout
	if !strings.Contains(twin, "last use   10.0 days ago") {
		t.Fatalf("explain of the twin:\n%s", twin)
	}
	for _, id := range []string{"f-pg", "f-spaced"} {
		if got := ok(t, "explain", "--fact", id, "--db", path).stdout; strings.ReplaceAll(got, id, "f-unix") != twin {
			t.Errorf("explain --fact %s:\n%s\nwant what f-unix gives:\n%s", id, got, twin)
		}
	}
	if got := queryOne(t, path, `SELECT count(DISTINCT days_since_access) || '|' || count(*) FROM mem_facts_scored
		WHERE id IN ('f-unix', 'f-pg', 'f-spaced')`); got != "1|3" {
		t.Errorf("mem_facts_scored: distinct ages|rows = %s, want 1|3", got)
	}
	for _, s := range []string{"2026-02-13 06:54:15+02", "2026-02-13 06:54:15 +02:00"} {
		m := decodeJSON(t, ok(t, "sweep", "--dry-run", "--json", "--wall-now", s, "--db", path))
		if num(t, m, "wall_time") != float64(now.Unix()) {
			t.Errorf("--wall-now %q: wall_time %v, want %d", s, m["wall_time"], now.Unix())
		}
	}
	wantUsage(t, mw(t, "sweep", "--dry-run", "--wall-now", "2026-02-13 06:54:15 Z", "--db", path), "--wall-now")
}
