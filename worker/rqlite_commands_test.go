package worker_test

// restore, fact feedback and recall on rqlite clusters: each leaves on
// every node's own copy what it leaves in a file, and a change another
// writer makes between its reads and its writes is found after COMMIT,
// not overwritten.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memdecay/memdecay/internal/rqcluster"
	"github.com/memdecay/memdecay/worker"
)

// restoreMemory is restoreFixture with, at clock 100, an edge the static
// prune removes (k1—k4), one temporal decay removes (k2—k4: 0.15 × e^−0.5
// = 0.091 < 0.10), a context fact pruned and one archived, with the wall
// clock pinned.
func restoreMemory(t *testing.T) string {
	t.Helper()
	db, path := newMemory(t, restoreFixture+`
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, origin, last_active_hours) VALUES
			('k1', 'k4', 0.05, 0, 'similarity', 100), ('k2', 'k4', 0.15, 1, 'similarity', 0);`)
	pinWall(t, db, fixedWall)
	d15, d05 := factCrossing(0.40, 0.08, 0, 0.15), factCrossing(0.40, 0.08, 0, 0.05)
	mustExec(t, db, `INSERT INTO mem_facts (id, segment, last_accessed_at) VALUES ('f-pruned', 'context', ?), ('f-archived', 'context', ?)`,
		daysAgo(fixedWall, d05+1), daysAgo(fixedWall, (d15+d05)/2))
	return path
}

// outcome is what one call returned, as text to compare a file's with a
// cluster's.
func outcome(v any, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// nodeRows is what one node's own copy answers to a query of one text
// column (Node.Query: level none, never forwarded to the leader).
func nodeRows(t *testing.T, n *rqcluster.Node, query string) []string {
	t.Helper()
	rows, err := n.Column(context.Background(), query)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// fileRows is what a file answers to a query of one text column.
func fileRows(t *testing.T, db *worker.DB, query string) []string {
	t.Helper()
	rows, err := db.SQL.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// onEveryNode waits until every running node's own copy answers query
// with want (a follower applies the log a moment after the leader).
func onEveryNode(t *testing.T, c *rqcluster.Cluster, query string, want []string) {
	t.Helper()
	if err := c.EveryNodeAnswers(context.Background(), query, want, 30*time.Second); err != nil {
		t.Fatal(err)
	}
}

// TestRqliteRestoreAsOnAFile: restores of edges, blocks and facts through a
// follower give the file's answers, refusals included, and leave on every
// node the file's rows: an edge that came back meanwhile is skipped and
// counted, never overwritten.
func TestRqliteRestoreAsOnAFile(t *testing.T) {
	ctx := context.Background()
	orig := restoreMemory(t)
	file := openAsWorker(t, copyMemory(t, orig))
	c := startCluster(t, 3, orig)
	followers, err := c.Followers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cluster := openNode(t, followers[0])
	for _, db := range []*worker.DB{file, cluster} {
		r := sweepAtWall(t, db, 100, fixedWall)
		if r.Archived != 2 || r.EdgesPruned != 1 || r.EdgesDecayed != 1 || r.Facts.Archived != 1 || r.Facts.Pruned != 1 {
			t.Fatalf("fixture: the sweep at 100: %s", reportCounts(r))
		}
	}
	type call func(db *worker.DB) (any, error)
	edge := func(a, b string) call {
		return func(db *worker.DB) (any, error) { return worker.RestoreEdge(ctx, db, a, b, fixedWall) }
	}
	block := func(id string) call {
		return func(db *worker.DB) (any, error) { return worker.RestoreBlock(ctx, db, id, fixedWall) }
	}
	fact := func(id string) call {
		return func(db *worker.DB) (any, error) { return worker.RestoreFact(ctx, db, id, fixedWall) }
	}
	steps := []struct {
		what  string
		call  call
		check func(r *worker.Restored, err error) bool
	}{
		{"an edge to an archived block", edge("k1", "obs"),
			func(r *worker.Restored, err error) bool {
				return err != nil && strings.Contains(err.Error(), "restore the block first")
			}},
		{"a pruned edge, ends given backwards", edge("k4", "k1"),
			func(r *worker.Restored, err error) bool { return err == nil && r.Edges == 1 && r.Warning != "" }},
		{"a decayed edge", edge("k2", "k4"),
			func(r *worker.Restored, err error) bool { return err == nil && r.Edges == 1 && r.Warning == "" }},
		{"the decayed edge again", edge("k2", "k4"),
			func(r *worker.Restored, err error) bool { return errors.Is(err, worker.ErrNothingToRestore) }},
		{"block obs", block("obs"), func(r *worker.Restored, err error) bool {
			return err == nil && r.Edges == 2 && slices.Equal(r.EdgesSkipped, []string{"obs — obs2"})
		}},
		{"the app links k4 and obs2 again", func(db *worker.DB) (any, error) {
			_, err := db.SQL.Exec(`INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, origin, last_active_hours)
				VALUES ('k4', 'obs2', 0.77, 0, 'similarity', 100)`)
			return nil, err
		}, func(r *worker.Restored, err error) bool { return err == nil }},
		{"block obs2, one of its edges back already", block("obs2"), func(r *worker.Restored, err error) bool {
			return err == nil && r.Edges == 1 && slices.Equal(r.EdgesSkipped, []string{"k4 — obs2"})
		}},
		{"block obs again", block("obs"), func(r *worker.Restored, err error) bool { return errors.Is(err, worker.ErrNothingToRestore) }},
		{"a pruned fact", fact("f-pruned"), func(r *worker.Restored, err error) bool { return err == nil && r.Kind == "fact" }},
		{"an archived fact", fact("f-archived"), func(r *worker.Restored, err error) bool { return err == nil && r.Kind == "fact" }},
		{"the archived fact again", fact("f-archived"),
			func(r *worker.Restored, err error) bool { return errors.Is(err, worker.ErrNothingToRestore) }},
		{"a fact never removed", fact("nope"),
			func(r *worker.Restored, err error) bool { return errors.Is(err, worker.ErrNothingToRestore) }},
	}
	for _, s := range steps {
		onFile := outcome(s.call(file))
		v, err := s.call(cluster)
		r, _ := v.(*worker.Restored)
		if !s.check(r, err) {
			t.Fatalf("%s on the cluster: %s", s.what, outcome(v, err))
		}
		if got := outcome(v, err); got != onFile {
			t.Errorf("%s:\n cluster %s\n file    %s", s.what, got, onFile)
		}
	}
	expectEveryNode(t, c, memoryState(t, file))
	for query, want := range map[string][]string{
		// Anchors refreshed to the clock (100); the app's own k4—obs2 kept.
		`SELECT from_id || '-' || to_id || ' ' || quote(weight) || ' ' || quote(last_active_hours) FROM mem_edges
			WHERE 'k4' IN (from_id, to_id) OR 'obs' IN (from_id, to_id) OR 'obs2' IN (from_id, to_id) ORDER BY 1`: {
			"k1-k4 0.05 100.0", "k1-obs 0.3 100.0", "k2-k4 0.15 100.0", "k2-obs 0.35 100.0", "k3-k4 0.9 100.0",
			"k4-obs2 0.77 100.0", "obs-obs2 0.3 100.0"},
		// One restore event for each row that came back, none for k4—obs2.
		`SELECT subject_kind || ' ' || subject_id || ' ' || count(*) FROM mem_events WHERE action = 'restore'
			GROUP BY subject_kind, subject_id ORDER BY 1`: {
			"block obs 1", "block obs2 1", `edge ["k1","k4"] 1`, `edge ["k1","obs"] 1`, `edge ["k2","k4"] 1`,
			`edge ["k2","obs"] 1`, `edge ["obs","obs2"] 1`, "fact f-archived 1", "fact f-pruned 1"},
		`SELECT id || ' ' || status || ' ' || last_accessed_at FROM mem_facts ORDER BY id`: {
			fmt.Sprintf("f-archived active %d", fixedWall.Unix()), fmt.Sprintf("f-pruned active %d", fixedWall.Unix())},
		`SELECT id || ' ' || status FROM mem_blocks WHERE id LIKE 'obs%' ORDER BY id`: {"obs active", "obs2 active"},
	} {
		if got := fileRows(t, file, query); !slices.Equal(got, want) {
			t.Errorf("the file answers %s\n got %q\nwant %q", query, got, want)
		}
		onEveryNode(t, c, query, want)
	}
}

// TestRqliteFactFeedbackAsOnAFile: feedback and recall through a follower
// give the file's answers and leave the file's rows and events on every
// node; refusals change nothing.
func TestRqliteFactFeedbackAsOnAFile(t *testing.T) {
	ctx := context.Background()
	old := daysAgo(fixedWall, 20)
	db, orig := newMemory(t, fmt.Sprintf(`INSERT INTO mem_facts (id, segment, importance, access_count, last_accessed_at, status) VALUES
		('hi', 'preference', 0.98, 3, %[1]d, 'active'), ('mid', 'context', NULL, 3, %[1]d, 'active'),
		('lo', 'context', 0.05, 3, %[1]d, 'active'), ('odd', 'context', 0.5, 0, 'not a time', 'active'),
		('shelved', 'context', NULL, 0, %[1]d, 'archived')`, old))
	db.Close()
	file := openAsWorker(t, copyMemory(t, orig))
	c := startCluster(t, 3, orig)
	followers, err := c.Followers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cluster := openNode(t, followers[1])
	type call func(db *worker.DB) (*worker.FactChange, error)
	feedback := func(id string, up bool) call {
		return func(db *worker.DB) (*worker.FactChange, error) { return worker.Feedback(ctx, db, id, up, fixedWall) }
	}
	recall := func(id string, auto bool) call {
		return func(db *worker.DB) (*worker.FactChange, error) { return worker.Recall(ctx, db, id, auto, fixedWall) }
	}
	steps := []struct {
		what  string
		call  call
		check func(c *worker.FactChange, err error) bool
	}{
		{"up, clamped at 1", feedback("hi", true), func(c *worker.FactChange, err error) bool {
			return err == nil && c.ImportanceAfter == 1 && c.ImportanceClamped && c.AccessCountAfter == 4 && c.ClockReset
		}},
		{"down, clamped at 0", feedback("lo", false), func(c *worker.FactChange, err error) bool {
			return err == nil && c.ImportanceAfter == 0 && c.ImportanceClamped && c.AccessCountAfter == 3 && !c.ClockReset
		}},
		{"recall", recall("mid", false), func(c *worker.FactChange, err error) bool {
			return err == nil && c.AccessCountAfter == 4 && c.ClockReset && c.LastAccessedAt != nil && *c.LastAccessedAt == float64(fixedWall.Unix())
		}},
		{"auto-recall", recall("mid", true), func(c *worker.FactChange, err error) bool {
			return err == nil && !c.Recorded && c.AccessCountAfter == 4
		}},
		{"down on a bad access time", feedback("odd", false), func(c *worker.FactChange, err error) bool {
			return err == nil && c.Problem != "" && c.LastAccessedAt == nil
		}},
		{"up on a bad access time", feedback("odd", true), func(c *worker.FactChange, err error) bool {
			return err == nil && c.Problem == "" && c.LastAccessedAt != nil
		}},
		{"up on an archived fact", feedback("shelved", true), func(c *worker.FactChange, err error) bool {
			return err != nil && strings.Contains(err.Error(), "restore it first")
		}},
		{"recall of an unknown fact", recall("nope", false), func(c *worker.FactChange, err error) bool { return errors.Is(err, worker.ErrNoFact) }},
	}
	for _, s := range steps {
		onFile := outcome(s.call(file))
		got, err := s.call(cluster)
		if !s.check(got, err) {
			t.Fatalf("%s on the cluster: %s", s.what, outcome(got, err))
		}
		if outcome(got, err) != onFile {
			t.Errorf("%s:\n cluster %s\n file    %s", s.what, outcome(got, err), onFile)
		}
	}
	wall := fixedWall.Unix()
	for query, want := range map[string][]string{
		`SELECT id || ' ' || quote(importance) || ' ' || access_count || ' ' || quote(last_accessed_at) || ' ' || status
			FROM mem_facts ORDER BY id`: {
			fmt.Sprintf("hi 1.0 4 %d active", wall), fmt.Sprintf("lo 0.0 3 %d active", old), fmt.Sprintf("mid 0.4 4 %d active", wall),
			fmt.Sprintf("odd 0.45 1 %d active", wall), fmt.Sprintf("shelved 0.4 0 %d archived", old)},
		`SELECT subject_id || ' ' || action || ' ' || reason || ' ' || detail FROM mem_events ORDER BY id`: {
			`hi feedback up {"importance_before":0.98,"importance_after":1.0,"access_count":4,"clock_reset":1}`,
			`lo feedback down {"importance_before":0.05,"importance_after":0.0,"access_count":3,"clock_reset":0}`,
			`mid recall recall {"importance_before":0.4,"importance_after":0.4,"access_count":4,"clock_reset":1}`,
			`odd feedback down {"importance_before":0.5,"importance_after":0.4,"access_count":0,"clock_reset":0}`,
			`odd feedback up {"importance_before":0.4,"importance_after":0.45,"access_count":1,"clock_reset":1}`},
	} {
		if got := fileRows(t, file, query); !slices.Equal(got, want) {
			t.Errorf("the file answers %s\n got %q\nwant %q", query, got, want)
		}
		onEveryNode(t, c, query, want)
	}
}

// TestRqliteWritesCheckedAfterCommit: on rqlite another writer can change
// the memory between a restore's reads and its writes. Its conditional
// writes then leave that writer's rows alone, and what applied is read
// after COMMIT: an edge that came back is refused or skipped and counted,
// a block restored meanwhile is refused, feedback starts again from the
// importance it now finds. With nothing changed in between, the same calls
// apply.
func TestRqliteWritesCheckedAfterCommit(t *testing.T) {
	ctx := context.Background()
	orig := restoreMemory(t)
	c := startCluster(t, 1, orig)
	n := c.Nodes()[0]
	db := openNode(t, n)
	sweepAtWall(t, db, 100, fixedWall)
	mustExec(t, db, `INSERT INTO mem_facts (id, segment, importance, last_accessed_at) VALUES ('f', 'preference', 0.5, 0)`)
	meanwhile := func(stmts ...any) {
		worker.BetweenReadsAndWrites(t, func() {
			if len(stmts) > 0 {
				if err := n.Execute(ctx, stmts...); err != nil {
					t.Error(err)
				}
				stmts = nil // once: a second attempt finds the memory as it is
			}
		})
	}
	restoresOf := func(subject string) []string {
		return nodeRows(t, n, `SELECT count(*) || '' FROM mem_events WHERE action = 'restore' AND subject_id = '`+subject+`'`)
	}

	// k2—k4 comes back from the app after the reads: the restore is refused
	// and the app's row stays.
	meanwhile(`INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, origin) VALUES ('k2', 'k4', 0.6, 2, 'outcome')`)
	if _, err := worker.RestoreEdge(ctx, db, "k2", "k4", fixedWall); !errors.Is(err, worker.ErrNothingToRestore) || !strings.Contains(err.Error(), "exists already") {
		t.Errorf("restoring an edge the app linked again meanwhile: %v, want exists already", err)
	}
	if got := nodeRows(t, n, `SELECT quote(weight) || ' ' || reinforcement_count FROM mem_edges WHERE from_id = 'k2' AND to_id = 'k4'`); !slices.Equal(got, []string{"0.6 2"}) {
		t.Errorf("k2—k4 is %q, want the app's row (0.6 2)", got)
	}
	if got := restoresOf(`["k2","k4"]`); !slices.Equal(got, []string{"0"}) {
		t.Errorf("%s restore events for k2—k4, want 0", got)
	}
	// Nothing in between: k1—k4 comes back.
	meanwhile()
	if r, err := worker.RestoreEdge(ctx, db, "k1", "k4", fixedWall); err != nil || r.Edges != 1 {
		t.Errorf("restoring k1—k4: %+v, %v", r, err)
	}
	if got := restoresOf(`["k1","k4"]`); !slices.Equal(got, []string{"1"}) {
		t.Errorf("%s restore events for k1—k4, want 1", got)
	}

	// k2—obs comes back while obs is restored: skipped and counted, k1—obs
	// restored.
	meanwhile(`INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, origin) VALUES ('k2', 'obs', 0.8, 1, 'outcome')`)
	r, err := worker.RestoreBlock(ctx, db, "obs", fixedWall)
	if err != nil || r.Edges != 1 || !slices.Equal(r.EdgesSkipped, []string{"obs — obs2", "k2 — obs"}) {
		t.Errorf("restoring obs: %+v, %v; want k1—obs back, k2—obs and obs—obs2 skipped", r, err)
	}
	if got := nodeRows(t, n, `SELECT from_id || '-' || to_id || ' ' || quote(weight) FROM mem_edges WHERE 'obs' IN (from_id, to_id) ORDER BY 1`); !slices.Equal(got, []string{"k1-obs 0.3", "k2-obs 0.8"}) {
		t.Errorf("obs's edges %q, want k1-obs restored and the app's k2-obs", got)
	}
	for subject, want := range map[string]string{"obs": "1", `["k1","obs"]`: "1", `["k2","obs"]`: "0"} {
		if got := restoresOf(subject); !slices.Equal(got, []string{want}) {
			t.Errorf("%s restore events for %s, want %s", got, subject, want)
		}
	}

	// obs2 is made active by someone else after the reads: refused, and
	// nothing of obs2's restore is written.
	meanwhile(`UPDATE mem_blocks SET status = 'active' WHERE id = 'obs2'`)
	if _, err := worker.RestoreBlock(ctx, db, "obs2", fixedWall); !errors.Is(err, worker.ErrNothingToRestore) || !strings.Contains(err.Error(), "is active") {
		t.Errorf("restoring a block activated meanwhile: %v, want is active", err)
	}
	if got := nodeRows(t, n, `SELECT count(*) || ' ' || (SELECT count(*) FROM mem_block_tags WHERE block_id = 'obs2') FROM mem_edges WHERE 'obs2' IN (from_id, to_id)`); !slices.Equal(got, []string{"0 0"}) {
		t.Errorf("obs2's edges and tags %q, want none restored", got)
	}
	if got := restoresOf("obs2"); !slices.Equal(got, []string{"0"}) {
		t.Errorf("%s restore events for obs2, want 0", got)
	}

	// Another vote lands between the reads and the writes: this one starts
	// again and applies on top of it.
	meanwhile(`UPDATE mem_facts SET importance = 0.7 WHERE id = 'f'`)
	fc, err := worker.Feedback(ctx, db, "f", true, fixedWall)
	if err != nil || fc.ImportanceBefore != 0.7 || fc.ImportanceAfter != 0.75 || fc.AccessCountAfter != 1 {
		t.Errorf("feedback after another change: %+v, %v; want 0.7 → 0.75, count 1", fc, err)
	}
	if got := nodeRows(t, n, `SELECT quote(importance) || ' ' || access_count || ' ' || (SELECT count(*) FROM mem_events WHERE subject_id = 'f') FROM mem_facts WHERE id = 'f'`); !slices.Equal(got, []string{"0.75 1 1"}) {
		t.Errorf("fact f (importance, count, events) %q, want 0.75 1 1", got)
	}
}
