package worker_test

// Restore (docs/facts.md, docs/sweep.md: archive and prune can be undone) and the event
// log's retention.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker"
)

// restoreFixture: at clock 100 the observation blocks obs and obs2 have
// faded (recency e^−5 = 0.0067) and are not bridges (degrees 0.9 and 0.6
// against a threshold of 2.65); the knowledge blocks are fresh.
const restoreFixture = `
	UPDATE mem_config SET value = 100 WHERE key = 'active_hours';
	INSERT INTO mem_blocks (id, category, last_reinforced_hours, content) VALUES
		('k1', 'knowledge', 100, 'one'), ('k2', 'knowledge', 100, 'two'),
		('k3', 'knowledge', 100, 'three'), ('k4', 'knowledge', 100, 'four'),
		('obs', 'observation', 0, 'Standup moved.'), ('obs2', 'observation', 0, 'Lunch order.');
	INSERT INTO mem_block_tags VALUES ('obs', 'standup'), ('obs', 'meeting'), ('obs2', 'food'), ('k1', 'python');
	INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, origin, last_active_hours, note, created_at) VALUES
		('k1', 'k2', 0.9, 15, 'outcome', 100, NULL, 1000), ('k1', 'k3', 0.9, 15, 'outcome', 100, NULL, 1000),
		('k2', 'k3', 0.9, 15, 'outcome', 100, NULL, 1000), ('k3', 'k4', 0.9, 15, 'outcome', 100, NULL, 1000),
		('k1', 'obs', 0.3, 2, 'similarity', 90, 'k1 to obs', 1001), ('k2', 'obs', 0.35, 0, 'observed', 95, 'k2 to obs', 1002),
		('obs', 'obs2', 0.3, 0, 'similarity', 99, 'between archived', 1003), ('k4', 'obs2', 0.3, 1, 'agent', 98, NULL, 1004);`

// TestRestoreBlock: a block archived by a sweep comes back active with its
// tags and the edges removed with it whose other end is active; an edge to
// a still-archived block waits until that block is restored too.
func TestRestoreBlock(t *testing.T) {
	ctx := context.Background()
	db, _ := newMemory(t, restoreFixture)
	before := map[string]map[string]any{}
	for _, e := range [][2]string{{"k1", "obs"}, {"k2", "obs"}, {"obs", "obs2"}, {"k4", "obs2"}} {
		before[e[0]+"-"+e[1]] = edgeRow(t, db, e[0], e[1])
	}
	r := sweepAtWall(t, db, 100, fixedWall)
	if r.Archived != 2 || r.EdgesRemovedWithBlocks != 4 {
		t.Fatalf("fixture: sweep archived %d blocks and %d edges, want 2 and 4", r.Archived, r.EdgesRemovedWithBlocks)
	}
	expectStatus(t, db, "archived", "obs", "obs2")
	if tags := blockTags(t, db, "obs"); len(tags) != 0 {
		t.Fatalf("fixture: archived obs keeps tags %v", tags)
	}

	// An edge cannot come back while an end is archived.
	if _, err := worker.RestoreEdge(ctx, db, "k1", "obs", fixedWall); err == nil || errors.Is(err, worker.ErrNothingToRestore) {
		t.Errorf("restoring an edge to an archived block: %v, want a 'restore the block first' error", err)
	}

	res, err := worker.RestoreBlock(ctx, db, "obs", fixedWall)
	if err != nil {
		t.Fatal(err)
	}
	if res.Kind != "block" || res.ID != "obs" || res.Edges != 2 || !slices.Equal(res.EdgesSkipped, []string{"obs — obs2"}) {
		t.Errorf("restore obs: %+v, want 2 edges and obs — obs2 skipped", res)
	}
	b := blockOf(t, db, "obs")
	if b.Status != "active" || b.Reason.Valid || !b.LastReinforced.Valid || b.LastReinforced.Float64 != 100 {
		t.Errorf("restored obs: %+v, want active, no archive reason, reinforced at the clock (100)", b)
	}
	if tags := blockTags(t, db, "obs"); !slices.Equal(tags, []string{"meeting", "standup"}) {
		t.Errorf("restored obs tags %v", tags)
	}
	expectEdges(t, db, []string{"k1-obs", "k2-obs"}, []string{"obs-obs2", "k4-obs2"})
	for _, k := range [][2]string{{"k1", "obs"}, {"k2", "obs"}} {
		expectRestoredEdge(t, db, k[0], k[1], before[k[0]+"-"+k[1]], 100, nil)
	}
	if ev := restoreEvents(t, db, "block", "obs"); len(ev) != 1 {
		t.Errorf("block restore events %+v", ev)
	}
	for _, k := range [][2]string{{"k1", "obs"}, {"k2", "obs"}} {
		if ev := restoreEvents(t, db, "edge", edgeSubject(k[0], k[1])); len(ev) != 1 {
			t.Errorf("%s-%s restore events %+v", k[0], k[1], ev)
		}
	}

	// The other archived block: now both ends of obs-obs2 are active.
	res, err = worker.RestoreBlock(ctx, db, "obs2", fixedWall)
	if err != nil {
		t.Fatal(err)
	}
	if res.Edges != 2 || len(res.EdgesSkipped) != 0 {
		t.Errorf("restore obs2: %+v, want 2 edges", res)
	}
	expectEdges(t, db, []string{"k1-obs", "k2-obs", "obs-obs2", "k4-obs2"}, nil)
	expectRestoredEdge(t, db, "obs", "obs2", before["obs-obs2"], 100, nil)
	expectRestoredEdge(t, db, "k4", "obs2", before["k4-obs2"], 100, nil)
	if tags := blockTags(t, db, "obs2"); !slices.Equal(tags, []string{"food"}) {
		t.Errorf("restored obs2 tags %v", tags)
	}

	// Nothing left to restore.
	for _, id := range []string{"obs", "obs2", "k1", "nope"} {
		if _, err := worker.RestoreBlock(ctx, db, id, fixedWall); !errors.Is(err, worker.ErrNothingToRestore) {
			t.Errorf("restore block %s again: %v, want ErrNothingToRestore", id, err)
		}
	}
	if _, err := worker.RestoreEdge(ctx, db, "k1", "obs", fixedWall); !errors.Is(err, worker.ErrNothingToRestore) {
		t.Errorf("restore a restored edge: %v, want ErrNothingToRestore", err)
	}

	// The next sweep at the same clock, and one an hour later, leave them.
	edges := len(edgeSet(t, db))
	for _, now := range []float64{100, 101} {
		r = sweepAtWall(t, db, now, fixedWall)
		if r.Archived != 0 || r.EdgesRemovedWithBlocks != 0 || r.EdgesPruned != 0 || r.EdgesDecayed != 0 {
			t.Errorf("sweep at %v after restore: %s", now, r.Summary)
		}
		expectStatus(t, db, "active", "obs", "obs2")
		if got := len(edgeSet(t, db)); got != edges {
			t.Errorf("sweep at %v after restore: %d edges, want %d", now, got, edges)
		}
	}
}

// expectRestoredEdge checks a restored edge equals its snapshot except the
// anchors, refreshed to the restore's clocks (so the next sweep keeps it).
func expectRestoredEdge(t *testing.T, db *worker.DB, from, to string, snap map[string]any, now float64, wall *int64) {
	t.Helper()
	got := edgeRow(t, db, from, to)
	if got == nil {
		t.Errorf("edge %s-%s is missing", from, to)
		return
	}
	for col, v := range snap {
		want := v
		switch {
		case col == "last_active_hours" && v != nil:
			want = now
		case col == "last_observed_at" && v != nil:
			want = float64(*wall)
		}
		if got[col] != want {
			t.Errorf("restored %s-%s: %s = %v, want %v", from, to, col, got[col], want)
		}
	}
}

// TestRestoreEdge: an edge removed by temporal decay, by the static prune or
// by a relation policy comes back from its event's snapshot, anchors
// refreshed; the next sweep at the same clock keeps the decayed ones.
func TestRestoreEdge(t *testing.T) {
	ctx := context.Background()
	db, _ := newMemory(t, knowledgeBlocks("a", "b", "c", "d", "e"))
	mustExec(t, db, `UPDATE mem_config SET value = 1000 WHERE key = 'active_hours'`)
	addPolicy(t, db, "works_on", "half_life", `{"half_life":"90d"}`, "wall", 0.10, "delete", "keep")
	mustExec(t, db, `INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, relation_type, origin, last_active_hours,
		last_observed_at, note, created_at) VALUES
		('a', 'b', 0.5, 0, 'similar', 'similarity', 0, NULL, 'temporal: 0.5 e^-5', 1001),
		('a', 'c', 0.05, 0, 'similar', 'observed', 1000, NULL, 'static prune', 1002),
		('a', 'd', 1.0, 0, 'works_on', 'observed', 0, ?, 'policy: 310 days', 1003),
		('a', 'e', 0.9, 0, 'similar', 'similarity', 1000, NULL, 'never removed', 1004)`, daysAgo(fixedWall, 310))
	before := map[string]map[string]any{}
	for _, k := range []string{"b", "c", "d"} {
		before[k] = edgeRow(t, db, "a", k)
	}
	r := sweepAtWall(t, db, 1000, fixedWall)
	if r.EdgesDecayed != 1 || r.EdgesPruned != 1 || policyCount(t, r, "works_on").Decayed != 1 {
		t.Fatalf("fixture: %s", r.Summary)
	}
	expectEdges(t, db, []string{"a-e"}, []string{"a-b", "a-c", "a-d"})

	restoreAt := fixedWall.Add(time.Minute)
	wall := restoreAt.Unix()
	for _, k := range []string{"b", "d"} {
		// Either order of the ends names the same edge.
		res, err := worker.RestoreEdge(ctx, db, k, "a", restoreAt)
		if err != nil {
			t.Fatalf("restore a-%s: %v", k, err)
		}
		removal := edgeEvents(t, db, "a", k)[0]
		if res.Kind != "edge" || res.Edges != 1 || res.FromEvent != removal.ID {
			t.Errorf("restore a-%s: %+v, want from event %d", k, res, removal.ID)
		}
		expectRestoredEdge(t, db, "a", k, before[k], 1000, &wall)
		if ev := restoreEvents(t, db, "edge", edgeSubject("a", k)); len(ev) != 1 || ev[0].At != wall {
			t.Errorf("a-%s restore events %+v", k, ev)
		}
		if _, err := worker.RestoreEdge(ctx, db, "a", k, restoreAt); !errors.Is(err, worker.ErrNothingToRestore) {
			t.Errorf("restore a-%s twice: %v, want ErrNothingToRestore", k, err)
		}
	}
	// The statically pruned edge comes back as it was. (Its weight is still
	// below the prune threshold, so whether the next sweep keeps it is not
	// asserted here.)
	if _, err := worker.RestoreEdge(ctx, db, "a", "c", restoreAt); err != nil {
		t.Fatalf("restore a-c: %v", err)
	}
	expectRestoredEdge(t, db, "a", "c", before["c"], 1000, &wall)
	for _, k := range [][2]string{{"a", "e"}, {"b", "c"}} {
		if _, err := worker.RestoreEdge(ctx, db, k[0], k[1], restoreAt); !errors.Is(err, worker.ErrNothingToRestore) {
			t.Errorf("restore %s-%s (never removed): %v, want ErrNothingToRestore", k[0], k[1], err)
		}
	}

	// The next sweep at the same clock does not decay the restored edges
	// again: their anchors are now.
	r = sweepAtWall(t, db, 1000, restoreAt)
	expectEdges(t, db, []string{"a-b", "a-d", "a-e"}, nil)
	if r.EdgesDecayed != 0 || policyCount(t, r, "works_on").Decayed != 0 {
		t.Errorf("sweep after restore: %s", r.Summary)
	}
}

// TestRestoreFact: a pruned fact is re-created from its event's snapshot and
// an archived one set active, both with the access clock reset, each with a
// restore event; the next sweep at the same clock keeps them.
func TestRestoreFact(t *testing.T) {
	ctx := context.Background()
	db, _ := newMemory(t, "")
	mustExec(t, db, `INSERT INTO mem_facts (id, segment, access_count, last_accessed_at, content, created_at) VALUES
		('ctx-pruned', 'context', 2, ?, 'the standup moved to 10:00', 1700000000),
		('ctx-archived', 'context', 0, ?, 'lunch on Fridays', 1700000001),
		('know-archived', 'knowledge', 0, ?, 'WAL readers never block', 1700000002),
		('fresh', 'context', 0, ?, 'just said', 1700000003)`,
		daysAgo(fixedWall, 120), daysAgo(fixedWall, 30), daysAgo(fixedWall, 200), daysAgo(fixedWall, 0))
	mustExec(t, db, `INSERT INTO mem_facts (id, segment, tier, importance, decay_rate, last_accessed_at, content, created_at) VALUES
		('own', 'context', 'short', 0.3, 0.5, ?, 'explicit values', 1700000004)`, daysAgo(fixedWall, 120))
	before := map[string]map[string]any{}
	for _, id := range []string{"ctx-pruned", "ctx-archived", "know-archived", "own"} {
		before[id] = factRow(t, db, id)
	}
	r := sweepAtWall(t, db, 0, fixedWall)
	if r.Facts.Pruned != 2 || r.Facts.Archived != 2 {
		t.Fatalf("fixture: %+v", r.Facts)
	}
	restoreAt := fixedWall.Add(time.Hour)
	for _, id := range []string{"ctx-pruned", "own", "ctx-archived", "know-archived"} {
		res, err := worker.RestoreFact(ctx, db, id, restoreAt)
		if err != nil {
			t.Fatalf("restore %s: %v", id, err)
		}
		removal := eventsWhere(t, db, `subject_kind = 'fact' AND subject_id = ? AND action IN ('archive', 'prune')`, id)
		if res.Kind != "fact" || res.ID != id || len(removal) != 1 || res.FromEvent != removal[0].ID {
			t.Errorf("restore %s: %+v, removal events %+v", id, res, removal)
		}
		got := factRow(t, db, id)
		if got == nil {
			t.Fatalf("restored %s is missing", id)
		}
		for col, v := range before[id] {
			want := v
			switch col {
			case "status":
				want = "active"
			case "last_accessed_at":
				want = float64(restoreAt.Unix())
			}
			if got[col] != want {
				t.Errorf("restored %s: %s = %v, want %v", id, col, got[col], want)
			}
		}
		if ev := restoreEvents(t, db, "fact", id); len(ev) != 1 || ev[0].At != restoreAt.Unix() {
			t.Errorf("%s restore events %+v", id, ev)
		}
		if _, err := worker.RestoreFact(ctx, db, id, restoreAt); !errors.Is(err, worker.ErrNothingToRestore) {
			t.Errorf("restore %s twice: %v, want ErrNothingToRestore", id, err)
		}
	}
	for _, id := range []string{"fresh", "nope"} {
		if _, err := worker.RestoreFact(ctx, db, id, restoreAt); !errors.Is(err, worker.ErrNothingToRestore) {
			t.Errorf("restore %s: %v, want ErrNothingToRestore", id, err)
		}
	}
	// The next sweeps, at the first sweep's clock and at the restore's, keep them.
	for _, at := range []time.Time{fixedWall, restoreAt} {
		r = sweepAtWall(t, db, 0, at)
		if r.Facts.Archived != 0 || r.Facts.Pruned != 0 || r.Facts.Processed != 5 {
			t.Errorf("sweep at %s after restore: %+v", at.Format(time.RFC3339), r.Facts)
		}
	}
}

// TestEventRetention: with event_retention_days 30 a sweep removes events
// older than 30 days before its wall clock (in bounded chunks) and counts
// them; 0 keeps every event.
func TestEventRetention(t *testing.T) {
	ages := []struct {
		seconds int64
		old     bool
	}{
		{400 * daySeconds, true}, {31 * daySeconds, true}, {31 * daySeconds, true}, {30*daySeconds + 1, true}, {30*daySeconds + 1, true},
		{30 * daySeconds, false}, {29 * daySeconds, false}, {0, false}, {-daySeconds, false},
	}
	for _, c := range []struct {
		retention string
		chunk     int
		expired   int64
	}{{"30", 0, 5}, {"30", 2, 5}, {"30", 5, 5}, {"0", 0, 0}} {
		t.Run(fmt.Sprintf("retention %s chunk %d", c.retention, c.chunk), func(t *testing.T) {
			db, _ := newMemory(t, "")
			mustExec(t, db, `UPDATE mem_config SET value = ? WHERE key = 'event_retention_days'`, c.retention)
			for i, a := range ages {
				mustExec(t, db, `INSERT INTO mem_events (at, subject_kind, subject_id, action, reason) VALUES (?, 'fact', ?, 'feedback', ?)`,
					fixedWall.Unix()-a.seconds, i, map[bool]string{true: "old", false: "new"}[a.old])
			}
			now := 0.0
			r, err := worker.Sweep(context.Background(), db, worker.SweepOptions{Now: &now, WallNow: &fixedWall, ChunkSize: c.chunk})
			if err != nil {
				t.Fatal(err)
			}
			if r.EventsExpired != c.expired {
				t.Errorf("events_expired %d, want %d", r.EventsExpired, c.expired)
			}
			if got := scalar[int64](t, db, `SELECT count(*) FROM mem_events WHERE reason = 'old'`); got != 5-c.expired {
				t.Errorf("%d old events left, want %d", got, 5-c.expired)
			}
			if got := scalar[int](t, db, `SELECT count(*) FROM mem_events WHERE reason = 'new'`); got != 4 {
				t.Errorf("%d recent events left, want 4", got)
			}
			var stored worker.Report
			if err := json.Unmarshal([]byte(scalar[string](t, db, `SELECT result FROM mem_sweeps WHERE id = ?`, r.SweepID)), &stored); err != nil {
				t.Fatal(err)
			}
			if stored.EventsExpired != c.expired {
				t.Errorf("stored report events_expired %d, want %d", stored.EventsExpired, c.expired)
			}
			// Nothing more to expire at the same clock.
			r, err = worker.Sweep(context.Background(), db, worker.SweepOptions{Now: &now, WallNow: &fixedWall, ChunkSize: c.chunk})
			if err != nil {
				t.Fatal(err)
			}
			if r.EventsExpired != 0 {
				t.Errorf("second sweep expired %d", r.EventsExpired)
			}
		})
	}
}

// TestSweepRecordsExpire: the records of sweeps expire with the events of
// their time (mem_sweeps would otherwise grow by about 1 KB a sweep), all
// but the last one done and any that holds a lease; 0 keeps them all.
func TestSweepRecordsExpire(t *testing.T) {
	for _, c := range []struct {
		retention string
		left      string
	}{{"30", "3 4 5"}, {"0", "1 2 3 4 5"}} {
		t.Run("retention "+c.retention, func(t *testing.T) {
			db, _ := newMemory(t, "")
			mustExec(t, db, `UPDATE mem_config SET value = ? WHERE key = 'event_retention_days'`, c.retention)
			old, recent := fixedWall.Unix()-40*daySeconds, fixedWall.Unix()-daySeconds
			mustExec(t, db, `INSERT INTO mem_sweeps (id, started_at, finished_at, clock_hours, dry_run, status) VALUES
				(1, ?1, ?1, 0, 0, 'done'), (2, ?1, ?1, 0, 0, 'failed'),
				(3, ?1, NULL, 0, 0, 'interrupted'), (4, ?2, ?2, 0, 0, 'done')`, old, recent)
			now := 0.0
			dry, err := worker.Sweep(context.Background(), db, worker.SweepOptions{Now: &now, WallNow: &fixedWall, DryRun: true})
			if err != nil {
				t.Fatal(err)
			}
			r, err := worker.Sweep(context.Background(), db, worker.SweepOptions{Now: &now, WallNow: &fixedWall})
			if err != nil {
				t.Fatal(err)
			}
			if dry.SweepsExpired != r.SweepsExpired {
				t.Errorf("the dry run said %d sweeps expire, the sweep expired %d", dry.SweepsExpired, r.SweepsExpired)
			}
			if got := scalar[string](t, db, `SELECT group_concat(id, ' ') FROM (SELECT id FROM mem_sweeps ORDER BY id)`); got != c.left {
				t.Errorf("sweeps left %q, want %q", got, c.left)
			}
			if want := int64(5 - len(strings.Fields(c.left))); r.SweepsExpired != want {
				t.Errorf("sweeps_expired %d, want %d", r.SweepsExpired, want)
			}
		})
	}
}
