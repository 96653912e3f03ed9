package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMapLoadNamesUnplacedValues: map load --check names, with their
// counts, the values of the app's rows the mapping places nowhere (a
// fact segment with no tier, a status neither active nor archived), and
// what a sweep does with them; map load says it again once declared; a
// mapping that places every value says nothing of it.
func TestMapLoadNamesUnplacedValues(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "app.db")
	ok(t, "migrate", "up", "--db", db)
	exec1(t, db, `
CREATE TABLE notes (id INTEGER PRIMARY KEY, state TEXT, used_at INTEGER);
CREATE TABLE user_facts (id INTEGER PRIMARY KEY, seg TEXT, seen_at INTEGER, st TEXT DEFAULT 'live');
INSERT INTO notes (state, used_at) VALUES ('active', 1), ('active', 1), ('inbox', 1), ('inbox', 1), ('inbox', 1), (NULL, 1);
INSERT INTO user_facts (seg, seen_at) VALUES ('context', 1), ('smalltalk', 1), ('smalltalk', 1);`)
	file := filepath.Join(dir, "app.toml")
	write := func(extra string) {
		text := `[nodes]
table = "notes"
key = "id"
last_used = "used_at"
last_used_clock = "unix_seconds"
status = "state"
status_active = ["active"` + extra + `]
status_archived = "gone"

[facts]
table = "user_facts"
key = "id"
segment = "seg"
last_access = "seen_at"
last_access_clock = "unix_seconds"
status = "st"
status_active = ["live"]
status_archived = "gone"
`
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("")
	want := []string{
		"Values of the app's rows the mapping does not place:",
		`notes.state = "inbox" in 3 rows: neither active nor archived, a sweep leaves them alone`,
		`notes.state = NULL in 1 rows`,
		`user_facts.seg = "smalltalk" in 2 rows: no segment memworker knows, so no tier; a sweep skips them as invalid`,
	}
	for _, args := range [][]string{{"map", "load", "--check", file, "--db", db}, {"map", "load", file, "--db", db}} {
		r := ok(t, args...)
		for _, w := range want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("%s lacks %q:\n%s", strings.Join(args, " "), w, r.stdout)
			}
		}
		if strings.Contains(r.stdout, `"context"`) || strings.Contains(r.stdout, `"active"`+" in") {
			t.Errorf("%s names a placed value:\n%s", strings.Join(args, " "), r.stdout)
		}
	}
	exec1(t, db, `UPDATE notes SET state = 'active' WHERE state IS NULL; UPDATE user_facts SET seg = 'context'`)
	write(`, "inbox"`)
	if r := ok(t, "map", "load", "--check", file, "--db", db); strings.Contains(r.stdout, "does not place") {
		t.Errorf("every value placed, yet:\n%s", r.stdout)
	}
}

// TestSegmentMapPlacesTheAppsSegments: facts.segment_map gives the app's
// own segment values the reference's segments: --check no longer names
// them, and a sweep scores such facts by their segment's defaults
// instead of skipping them as invalid; a value it does not map is still
// named.
func TestSegmentMapPlacesTheAppsSegments(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "app.db")
	ok(t, "migrate", "up", "--db", db)
	// Seen 80 days before the sweep: a context fact (short tier,
	// importance 0.40) has faded below 0.05 by then and is pruned.
	exec1(t, db, `
CREATE TABLE user_facts (id INTEGER PRIMARY KEY, seg TEXT, seen_at INTEGER, st TEXT DEFAULT 'live');
INSERT INTO user_facts (seg, seen_at) VALUES ('smalltalk', 1000000000 - 80 * 86400), ('smalltalk', 1000000000 - 80 * 86400),
    ('banter', 1000000000 - 80 * 86400), ('identity', 1000000000 - 80 * 86400);`)
	file := filepath.Join(dir, "app.toml")
	if err := os.WriteFile(file, []byte(`[facts]
table = "user_facts"
key = "id"
segment = "seg"
last_access = "seen_at"
last_access_clock = "unix_seconds"
status = "st"
status_active = ["live"]
status_archived = "gone"
segment_map = { smalltalk = "context" }
`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := ok(t, "map", "load", file, "--db", db)
	if strings.Contains(r.stdout, `"smalltalk"`) || !strings.Contains(r.stdout, `user_facts.seg = "banter" in 1 rows`) {
		t.Errorf("map load names the mapped segment, or not the unmapped one:\n%s", r.stdout)
	}
	if show := ok(t, "map", "show", "--db", db).stdout; !strings.Contains(show, "segment map          smalltalk → context") {
		t.Errorf("map show lacks the segment map:\n%s", show)
	}
	m := decodeJSON(t, ok(t, "sweep", "--json", "--wall-now", "1000000000", "--db", db))
	facts := m["facts"].(map[string]any)
	if facts["pruned"] != 2.0 {
		t.Errorf("facts %v: want the two smalltalk facts pruned as context facts", facts)
	}
	if got := queryRows(t, db, `SELECT id, seg FROM user_facts ORDER BY id`); strings.Join(got, " ") != "3|banter 4|identity" {
		t.Errorf("user_facts after the sweep: %q, want the banter and identity facts left", got)
	}
	invalid := ok(t, "decayed", "--invalid", "--db", db).stdout
	if !strings.Contains(invalid, "user_facts") || strings.Contains(invalid, "smalltalk") {
		t.Errorf("decayed --invalid: want the banter fact named, not the smalltalk ones:\n%s", invalid)
	}
}
