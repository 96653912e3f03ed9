package main

import (
	"strings"
	"testing"
	"time"
)

// TestWallClockTextInCommands: explain --fact and fact feedback read an
// ISO-8601 access time as the instant it names (the same as its twin in
// unix seconds), and name an access time that is no time instead of
// failing on it.
func TestWallClockTextInCommands(t *testing.T) {
	path := demoDB(t)
	now := time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC)
	exec1(t, path, `INSERT INTO mem_facts (id, segment, last_accessed_at, created_at) VALUES
		('f-iso', 'context', '2026-01-05T02:00:00+02:00', '2025-12-01 09:00:00'), ('f-unix', 'context', 1767571200, 1),
		('f-created', 'context', NULL, '2026-01-05'), ('f-bad', 'context', 'last week', 1)`)
	twin := mwAt(t, now, "explain", "--fact", "f-unix", "--db", path)
	if twin.code != exitOK || !strings.Contains(twin.stdout, "last use   10.0 days ago") {
		t.Fatalf("explain of the twin: %v", twin)
	}
	for _, id := range []string{"f-iso", "f-created"} {
		r := mwAt(t, now, "explain", "--fact", id, "--db", path)
		if r.code != exitOK || strings.ReplaceAll(r.stdout, id, "f-unix") != twin.stdout {
			t.Errorf("explain --fact %s: %v\nwant what f-unix gives:\n%s", id, r, twin.stdout)
		}
	}
	r := mwAt(t, now, "explain", "--fact", "f-bad", "--json", "--db", path)
	if r.code != exitOK {
		t.Fatalf("explain of a bad row: %v", r)
	}
	if m := decodeJSON(t, r); m["invalid"] != true || !strings.Contains(m["verdict"].(string), "last_accessed_at is text 'last week'") {
		t.Errorf("explain of a bad row: %v", m)
	}

	m := decodeJSON(t, mwAt(t, now, "fact", "feedback", "f-iso", "down", "--json", "--db", path))
	if num(t, m, "last_accessed_at") != 1767571200 || m["problem"] != nil {
		t.Errorf("feedback down on an ISO access time: %v", m)
	}
	if got := queryOne(t, path, `SELECT last_accessed_at FROM mem_facts WHERE id = 'f-iso'`); got != "2026-01-05T02:00:00+02:00" {
		t.Errorf("feedback down changed the access time to %q", got)
	}
	r = mwAt(t, now, "fact", "feedback", "f-bad", "down", "--db", path)
	if r.code != exitOK || !strings.Contains(r.stdout, "sweeps skip it while last_accessed_at is text 'last week'") {
		t.Errorf("feedback down on a bad access time: %v", r)
	}
	r = mwAt(t, now, "fact", "feedback", "f-bad", "up", "--db", path)
	if r.code != exitOK || strings.Contains(r.stdout, "skip") {
		t.Errorf("feedback up on a bad access time: %v", r)
	}
	if got := queryOne(t, path, `SELECT last_accessed_at FROM mem_facts WHERE id = 'f-bad'`); got != "1768435200" {
		t.Errorf("feedback up left the access time at %q, want now", got)
	}
}
