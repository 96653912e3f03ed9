package worker_test

import (
	"context"
	"testing"
	"time"

	"github.com/memdecay/memdecay/internal/rqcluster"
	"github.com/memdecay/memdecay/worker"
)

// startClusterWith is startCluster with extra rqlited flags (-fk: the
// app's foreign keys enforced on every node).
func startClusterWith(t *testing.T, nodes int, orig string, args ...string) *rqcluster.Cluster {
	t.Helper()
	return startClusterFrom(t, rqcluster.Options{Nodes: nodes, Args: args}, orig, true)
}

// everyNodeAnswers fails unless every node's own copy answers query with want.
func everyNodeAnswers(t *testing.T, c *rqcluster.Cluster, query string, want ...string) {
	t.Helper()
	if err := c.EveryNodeAnswers(context.Background(), query, want, 30*time.Second); err != nil {
		t.Error(err)
	}
}

// TestAppRulesRqliteRestrict: on rqlite with -fk, a link a RESTRICT child
// references stays on every node, named as refused; the others go with
// their archive rows; the sweep succeeds, and the next one at a later
// clock names them again.
func TestAppRulesRqliteRestrict(t *testing.T) {
	db, path := rulesDB(t, `CREATE TABLE link_notes (id INTEGER PRIMARY KEY, link_id INTEGER REFERENCES links (id) ON DELETE RESTRICT, body TEXT);
		INSERT INTO link_notes (link_id, body) VALUES (2, 'x'), (4, 'y'), (4, 'z');`)
	db.Close()
	c := startClusterWith(t, 3, path, "-fk")
	followers, err := c.Followers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	node := openNode(t, followers[0])
	w := reviewWall
	r, err := worker.Sweep(context.Background(), node, worker.SweepOptions{WallNow: &w})
	if err != nil {
		t.Fatalf("sweep on rqlite -fk: %v", err)
	}
	if r.EdgesPruned != 3 || r.Archived != 1 {
		t.Errorf("%s, want 3 links pruned and note 7 archived", r.Summary)
	}
	expectNamed(t, r, "edge 2: prune refused: referenced by link_notes.link_id (ON DELETE RESTRICT)",
		"edge 4: prune refused: referenced by link_notes.link_id (ON DELETE RESTRICT)")
	everyNodeAnswers(t, c, `SELECT id FROM links WHERE id < 11 ORDER BY id`, "2", "4")
	everyNodeAnswers(t, c, `SELECT count(*) FROM link_notes`, "3")
	everyNodeAnswers(t, c, `SELECT count(*) FROM mem_events WHERE subject_kind = 'edge' AND action = 'prune'`, "3")
	everyNodeAnswers(t, c, `SELECT count(*) FROM pragma_foreign_key_check`, "0")

	w = reviewWall.Add(time.Minute)
	r, err = worker.Sweep(context.Background(), node, worker.SweepOptions{WallNow: &w})
	if err != nil {
		t.Fatalf("second sweep: %v", err)
	}
	expectNamed(t, r, "edge 2: prune refused: ", "edge 4: prune refused: ")
}

// TestAppRulesRqliteNoCascade: on rqlite with -fk, a table the app added
// after declaring its mapping, whose foreign key cascades from the links,
// never loses a row to a sweep, nor has one set NULL.
func TestAppRulesRqliteNoCascade(t *testing.T) {
	db, path := rulesDB(t, "")
	mustExec(t, db, `CREATE TABLE link_notes (id INTEGER PRIMARY KEY, link_id INTEGER REFERENCES links (id) ON DELETE CASCADE, body TEXT);
		CREATE TABLE link_marks (id INTEGER PRIMARY KEY, link_id INTEGER REFERENCES links (id) ON DELETE SET NULL);
		INSERT INTO link_notes (link_id, body) VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd'), (5, 'e');
		INSERT INTO link_marks (link_id) VALUES (2);`)
	db.Close()
	c := startClusterWith(t, 1, path, "-fk")
	node := openNode(t, c.Nodes()[0])
	w := reviewWall
	r, err := worker.Sweep(context.Background(), node, worker.SweepOptions{WallNow: &w})
	left := []string{"1", "2", "3", "4", "5", "6"}
	if err == nil {
		// Note 7 fades, with its link 6 (which nothing references).
		left = left[:5]
		if r.EdgesPruned != 0 || r.Archived != 1 {
			t.Errorf("%s: want no link pruned, note 7 archived", r.Summary)
		}
		expectNamed(t, r, "edge 1: prune refused: referenced by link_notes.link_id (ON DELETE CASCADE)",
			"edge 2: prune refused: referenced by link_marks.link_id (ON DELETE SET NULL)",
			"edge 3: prune refused: ", "edge 4: prune refused: ", "edge 5: prune refused: ")
	} else {
		t.Logf("the sweep refuses the mapping as the schema stands: %v", err)
	}
	everyNodeAnswers(t, c, `SELECT count(*) FROM link_notes`, "5")
	everyNodeAnswers(t, c, `SELECT count(*) FROM link_marks WHERE link_id = 2`, "1")
	everyNodeAnswers(t, c, `SELECT id FROM links WHERE id < 11 ORDER BY id`, left...)
}
