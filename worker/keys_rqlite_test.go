package worker_test

import (
	"context"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker"
)

// TestKeysRqliteSkipped: on an rqlite cluster as on a file, mapped rows
// whose keys read as one id, or are NULL, are invalid rows named with the
// app's table, unchanged on every node, and every other row is swept.
func TestKeysRqliteSkipped(t *testing.T) {
	db, path := reviewDBAt(t, keysSchema+keysRows(), keysMapping)
	mustExec(t, db, keysCollisions())
	mustExec(t, db, `INSERT INTO notes (id, used) VALUES (NULL, ?)`, ancient)
	db.Close()
	c := startCluster(t, 3, path)
	followers, err := c.Followers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	node := openNode(t, followers[0])
	want := append([]string{"notes NULL: notes.id is NULL"}, collidingInvalid...)
	for i, at := range []time.Time{reviewWall, reviewWall.Add(time.Hour)} {
		r, err := worker.Sweep(context.Background(), node, worker.SweepOptions{WallNow: &at})
		if err != nil {
			t.Fatalf("sweep %d on rqlite: %v", i, err)
		}
		expectInvalid(t, "rqlite sweep", r.InvalidRows.Count, r.InvalidRows.Sample, want...)
		if i == 0 && (r.Archived != 1 || r.EdgesRemovedWithBlocks != 1 || r.EdgesPruned != 1 || r.Facts.Pruned != 1) {
			t.Errorf("%s; facts %+v: want note 3 archived with link 2, link 6 pruned, fact 9 pruned", r.Summary, r.Facts)
		}
	}
	everyNodeAnswers(t, c, `SELECT group_concat(quote(id) || ' ' || state, ', ') FROM (SELECT id, state FROM notes
		WHERE id IS NULL OR CAST(id AS TEXT) IN ('3', '5') ORDER BY id)`, "NULL active, 3 gone, 5 active, '5' active")
	everyNodeAnswers(t, c, `SELECT group_concat(quote(id), ', ') FROM (SELECT id FROM links ORDER BY id)`, "1, 3, '3'")
	everyNodeAnswers(t, c, `SELECT group_concat(quote(id) || ' ' || status, ', ') FROM (SELECT id, status FROM user_facts ORDER BY id)`,
		"7 live, 8 live, '7' live, X'37' live")
}
