package worker_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker"
)

// TestMappedTimesKeepTheAppsForm: an app that writes its times with a
// +02:00 offset gets them back so from a sweep's reinforcement (a note
// whose time was NULL takes the form most of its notes have) and from a
// restore of a link, the instant right in that offset.
func TestMappedTimesKeepTheAppsForm(t *testing.T) {
	db := reviewDB(t, `CREATE TABLE notes (slug TEXT PRIMARY KEY, state TEXT NOT NULL DEFAULT 'active', seen TEXT, uses INTEGER NOT NULL DEFAULT 0);
CREATE TABLE note_links (id INTEGER PRIMARY KEY, a TEXT REFERENCES notes (slug), b TEXT REFERENCES notes (slug), w REAL, touched TEXT);`, `[nodes]
table = "notes"
key = "slug"
last_used = "seen"
last_used_clock = "iso8601"
status = "state"
status_active = ["active"]
status_archived = "archived"
reinforcement_count = "uses"

[edges]
table = "note_links"
key = "id"
from = "a"
to = "b"
weight = "w"
last_active = "touched"
last_active_clock = "iso8601"
`)
	mustExec(t, db, `INSERT INTO notes (slug, seen) VALUES ('a', '2026-03-02T00:30:00+02:00'), ('b', '2026-03-01T23:00:00.000+02:00'),
		('c', '2026-03-01T22:00:00+02:00'), ('d', NULL)`)
	mustExec(t, db, `INSERT INTO note_links VALUES (1, 'a', 'b', 0.9, '2026-03-01T23:00:00+02:00'), (2, 'a', 'c', 0.01, '2026-03-01T23:00:00+02:00')`)
	r := mustReviewSweep(t, db, reviewWall)
	if r.Reinforced == 0 || r.EdgesPruned != 1 || !r.ClockOnWall {
		t.Fatalf("%s", r.Summary)
	}
	// reviewWall is 2026-03-02T00:00:00Z: 02:00 at +02:00.
	got := scalar[string](t, db, `SELECT group_concat(slug || '=' || coalesce(seen, 'NULL'), ' ') FROM (SELECT * FROM notes WHERE uses > 0 ORDER BY slug)`)
	want := map[string]bool{"a=2026-03-02T02:00:00+02:00": true, "b=2026-03-02T02:00:00.000+02:00": true,
		"c=2026-03-02T02:00:00+02:00": true, "d=2026-03-02T02:00:00+02:00": true}
	if notes := strings.Fields(got); int64(len(notes)) != r.Reinforced {
		t.Errorf("reinforced %q, report says %d", got, r.Reinforced)
	}
	for _, note := range strings.Fields(got) {
		if !want[note] {
			t.Errorf("reinforced %s; want each in its own form (%v)", note, want)
		}
	}
	if _, err := worker.RestoreEdge(context.Background(), db, "2", "", reviewWall.Add(90*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got := scalar[string](t, db, `SELECT touched FROM note_links WHERE id = 2`); got != "2026-03-02T03:30:00+02:00" {
		t.Errorf("restored link touched %s, want 2026-03-02T03:30:00+02:00", got)
	}
}
