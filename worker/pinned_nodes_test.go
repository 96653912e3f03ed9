package worker_test

import (
	"context"
	"testing"

	"github.com/memdecay/memdecay/worker"
)

// TestMappedPinnedNodes: a node the app pins (nodes.pinned) is never
// archived, faded as it is; the unpinned one beside it is, and so is the
// pinned one once the app unpins it. A dry run lists what the sweep does.
func TestMappedPinnedNodes(t *testing.T) {
	db := reviewDB(t, `CREATE TABLE notes (slug TEXT PRIMARY KEY, state TEXT NOT NULL DEFAULT 'active', seen TEXT, keep INTEGER NOT NULL DEFAULT 0);`, `[nodes]
table = "notes"
key = "slug"
last_used = "seen"
last_used_clock = "iso8601"
status = "state"
status_active = ["active"]
status_archived = "archived"
pinned = "keep"
`)
	mustExec(t, db, `INSERT INTO notes (slug, seen, keep) VALUES ('fresh', '2026-03-01T23:00:00Z', 0),
		('old', '2025-01-01T00:00:00Z', 0), ('old-pinned', '2025-01-01T00:00:00Z', 1), ('old-flagged', '2025-01-01T00:00:00Z', 'yes')`)
	w := reviewWall
	dry, err := worker.Sweep(context.Background(), db, worker.SweepOptions{WallNow: &w, DryRun: true, List: true})
	if err != nil {
		t.Fatal(err)
	}
	var archives []string
	for _, p := range dry.Planned {
		if p.Action == "archive" {
			archives = append(archives, p.Subject)
		}
	}
	if len(archives) != 1 || archives[0] != "old" {
		t.Errorf("the dry run archives %q, want old alone", archives)
	}
	r := mustReviewSweep(t, db, reviewWall)
	if r.Archived != 1 {
		t.Errorf("%s", r.Summary)
	}
	if got := scalar[string](t, db, `SELECT group_concat(slug || ':' || state, ' ') FROM (SELECT * FROM notes ORDER BY slug)`); got != "fresh:active old:archived old-flagged:active old-pinned:active" {
		t.Errorf("notes %s", got)
	}
	// (The top-N reinforcement took the pinned ones too: faded again.)
	mustExec(t, db, `UPDATE notes SET keep = 0, seen = '2025-01-01T00:00:00Z' WHERE slug = 'old-pinned'`)
	r = mustReviewSweep(t, db, reviewWall.Add(3600e9))
	if r.Archived != 1 || scalar[string](t, db, `SELECT state FROM notes WHERE slug = 'old-pinned'`) != "archived" {
		t.Errorf("once unpinned: %s", r.Summary)
	}
}
