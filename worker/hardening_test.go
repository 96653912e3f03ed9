package worker_test

import (
	"context"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/worker"
)

// A linear curve dies at weight <= 0 whether its threshold is NULL or 0
// (docs/policies.md): with threshold 0 the edge that reached 0 goes too.
func TestLinearThresholdZeroRemoves(t *testing.T) {
	for _, threshold := range []any{nil, 0.0} {
		db, _ := newMemory(t, knowledgeBlocks("a", "b", "c"))
		addPolicy(t, db, "cites", "linear", `{"rate": 0.01}`, "active_hours", threshold, "delete", "keep")
		addEdge(t, db, "a", "b", "cites", 1.0, 0, nil, false)  // 1 - 0.01 × 100 = 0: dead
		addEdge(t, db, "a", "c", "cites", 1.0, 50, nil, false) // 0.5 left
		mustExec(t, db, `UPDATE mem_config SET value = 100 WHERE key = 'active_hours'`)
		// The views say so before the sweep, as the sweep decides.
		if decayed := viewSet(t, db, "mem_edges_decayed"); !decayed["a-b"] || decayed["a-c"] {
			t.Errorf("threshold %v: mem_edges_decayed %v, want a-b alone", threshold, decayed)
		}
		sweepAt(t, db, 100)
		expectEdges(t, db, []string{"a-c"}, []string{"a-b"})
	}
}

// One non-finite number in a row (a weight, count or anchor of an edge; a
// block's anchor, count or confidence; a fact's access time or decay rate)
// makes that row invalid: skipped, counted and named; every other row is
// swept, and dry runs and the views keep working.
func TestNonFiniteRowsAreSkipped(t *testing.T) {
	db, _ := newMemory(t, knowledgeBlocks("a", "b", "c", "d", "e", "f", "g"))
	for _, e := range []struct {
		from, to, col string
	}{{"a", "b", "weight"}, {"a", "c", "reinforcement_count"}, {"a", "d", "last_active_hours"}} {
		mustExec(t, db, `INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours)
			VALUES (?, ?, 0.5, 0, 0)`, e.from, e.to)
		mustExec(t, db, `UPDATE mem_edges SET `+e.col+` = 9e999 WHERE from_id = ? AND to_id = ?`, e.from, e.to)
	}
	mustExec(t, db, `INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES ('e', 'f', 0.01, 0, 0)`)
	mustExec(t, db, `UPDATE mem_blocks SET last_reinforced_hours = -9e999 WHERE id = 'g'`)
	mustExec(t, db, `INSERT INTO mem_facts (id, segment, last_accessed_at) VALUES ('inf-access', 'context', 9e999)`)
	mustExec(t, db, `INSERT INTO mem_facts (id, segment, decay_rate) VALUES ('inf-rate', 'context', 9e999)`)

	now := 100.0
	dry, err := worker.Sweep(context.Background(), db, worker.SweepOptions{Now: &now, DryRun: true})
	if err != nil {
		t.Fatalf("dry run: %v", err)
	}
	r := sweepAt(t, db, now)
	for _, rep := range []*worker.Report{dry, r} {
		if rep.InvalidRows.Count != 6 {
			t.Errorf("invalid rows %d, want 6: %v", rep.InvalidRows.Count, rep.InvalidRows.Sample)
		}
		for _, s := range rep.InvalidRows.Sample {
			if !strings.Contains(s.Problem, "finite") {
				t.Errorf("%s %s: problem %q, want it to say the number is not finite", s.Kind, s.ID, s.Problem)
			}
		}
	}
	// The valid weak edge is pruned; the invalid ones are left alone.
	expectEdges(t, db, []string{"a-b", "a-c", "a-d"}, []string{"e-f"})
	for _, view := range []string{"mem_edges_live", "mem_edges_decayed", "mem_facts_scored"} {
		if _, err := db.SQL.Exec(`SELECT count(*) FROM ` + view); err != nil {
			t.Errorf("%s: %v", view, err)
		}
	}
}

// The integer -2^63 is a finite number, whose absolute value SQLite
// cannot hold: in an edge's wall-clock anchor or a fact's access time it
// is a time like any other, and neither a sweep nor a view stops with
// "integer overflow" on it.
func TestSmallestIntegerIsAFiniteTime(t *testing.T) {
	db, _ := newMemory(t, knowledgeBlocks("a", "b", "c"))
	mustExec(t, db, `INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours, last_observed_at)
		VALUES ('a', 'b', 0.5, 0, 90, -9223372036854775808), ('a', 'c', 0.01, 0, 90, NULL)`)
	mustExec(t, db, `INSERT INTO mem_facts (id, segment, last_accessed_at) VALUES ('ancient', 'context', -9223372036854775808)`)
	now := 100.0
	if _, err := worker.Sweep(context.Background(), db, worker.SweepOptions{Now: &now, DryRun: true}); err != nil {
		t.Fatalf("dry run: %v", err)
	}
	r := sweepAt(t, db, now)
	if r.InvalidRows.Count != 0 {
		t.Errorf("invalid rows %v, want none", r.InvalidRows.Sample)
	}
	expectEdges(t, db, []string{"a-b"}, []string{"a-c"})
	for _, view := range []string{"mem_edges_effective", "mem_edges_live", "mem_edges_decayed", "mem_facts_scored"} {
		if _, err := db.SQL.Exec(`SELECT count(*) FROM ` + view); err != nil {
			t.Errorf("%s: %v", view, err)
		}
	}
}

// pinned is 0 or 1; anything else makes the edge a bad row, never read as
// pinned or as not pinned by accident.
func TestPinnedNotZeroOrOneIsInvalid(t *testing.T) {
	db, _ := newMemory(t, knowledgeBlocks("a", "b", "c", "d", "e"))
	for i, pinned := range []any{"yes", 2, -1, 0.5} {
		to := string(rune('b' + i))
		mustExec(t, db, `INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours, pinned)
			VALUES ('a', ?, 0.01, 0, 0, ?)`, to, pinned)
	}
	r := sweepAt(t, db, 100)
	if r.InvalidRows.Count != 4 {
		t.Errorf("invalid rows %d, want 4: %v", r.InvalidRows.Count, r.InvalidRows.Sample)
	}
	for _, s := range r.InvalidRows.Sample {
		if !strings.Contains(s.Problem, "pinned") {
			t.Errorf("%s: problem %q, want it to name pinned", s.ID, s.Problem)
		}
	}
	expectEdges(t, db, []string{"a-b", "a-c", "a-d", "a-e"}, nil)
}

// Settings out of range are refused with an error naming the key, before
// anything changes.
func TestSettingsOutOfRange(t *testing.T) {
	ctx := context.Background()
	db, _ := newMemory(t, "")
	for _, c := range []struct{ key, value string }{
		{"edge_prune_threshold", "2"}, {"edge_decay_threshold", "1.5"}, {"edge_prune_threshold", "9e999"},
		{"active_hours", "9e999"}, {"wall_clock", "inf"},
	} {
		before := scalar[string](t, db, `SELECT CAST(value AS TEXT) FROM mem_config WHERE key = ?`, c.key)
		err := worker.SetConfig(ctx, db.SQL, c.key, c.value)
		if err == nil || !strings.Contains(err.Error(), c.key) {
			t.Errorf("config set %s %s: %v, want an error naming the key", c.key, c.value, err)
		}
		if after := scalar[string](t, db, `SELECT CAST(value AS TEXT) FROM mem_config WHERE key = ?`, c.key); after != before {
			t.Errorf("%s changed from %q to %q", c.key, before, after)
		}
	}
	// The ends of each range are taken.
	for _, c := range []struct{ key, value string }{
		{"edge_prune_threshold", "1"}, {"edge_prune_threshold", "0"}, {"edge_decay_threshold", "1"}, {"edge_decay_threshold", "auto"},
	} {
		if err := worker.SetConfig(ctx, db.SQL, c.key, c.value); err != nil {
			t.Errorf("config set %s %s: %v, want it taken", c.key, c.value, err)
		}
	}
	// The clock only moves forward, and never to an infinity.
	if _, err := worker.AdvanceClock(ctx, db, 1e308); err != nil {
		t.Fatal(err)
	}
	if _, err := worker.AdvanceClock(ctx, db, 1e308); err == nil || !strings.Contains(err.Error(), "finite") {
		t.Errorf("advancing the clock past the largest number: %v, want an error", err)
	}
	if got := scalar[float64](t, db, `SELECT value FROM mem_config WHERE key = 'active_hours'`); got != 1e308 {
		t.Errorf("active_hours %v after a refused advance, want 1e308", got)
	}
	if err := worker.SetConfig(ctx, db.SQL, "active_hours", "1e308"); err != nil {
		t.Errorf("setting the clock to where it is: %v, want it taken", err)
	}
	if err := worker.SetConfig(ctx, db.SQL, "active_hours", "5"); err == nil || !strings.Contains(err.Error(), "back") {
		t.Errorf("moving the clock back: %v, want it refused", err)
	}
	if err := worker.SetConfigForce(ctx, db.SQL, "active_hours", "5"); err != nil {
		t.Errorf("moving the clock back with force: %v", err)
	}
}

// A policy threshold that is text or not finite fails the sweep with the
// policy named, before anything changes.
func TestPolicyThresholdMustBeANumber(t *testing.T) {
	for _, threshold := range []any{"abc", "9e999"} {
		db, _ := newMemory(t, knowledgeBlocks("a", "b"))
		mustExec(t, db, `INSERT INTO mem_edge_policies (relation_type, model, params, clock, threshold, action, orphans)
			VALUES ('cites', 'half_life', '{"half_life": 10}', 'active_hours', ?, 'delete', 'keep')`, threshold)
		addEdge(t, db, "a", "b", "cites", 1.0, 0, nil, false)
		now := 100.0
		_, err := worker.Sweep(context.Background(), db, worker.SweepOptions{Now: &now})
		if err == nil || !strings.Contains(err.Error(), `"cites"`) || !strings.Contains(err.Error(), "threshold") {
			t.Errorf("threshold %v: %v, want an error naming the policy and its threshold", threshold, err)
		}
		expectEdges(t, db, []string{"a-b"}, nil)
	}
}

// A saved plan is resumed only under the settings it was made under: cut a
// sweep off mid-apply, change the thresholds, the decay cap and archival,
// and the next sweep at the same clock plans afresh under the new ones,
// removing nothing they keep. What the first sweep removed stays removed,
// with its events.
func TestResumeDiscardsPlanOfOtherSettings(t *testing.T) {
	path := bigMemory(t, 7, 200, 2500)
	db := openAsWorker(t, path)
	clock, wall := bigClock+300, bigWall
	ctx, cancel := context.WithCancel(context.Background())
	_, err := worker.Sweep(ctx, db, worker.WithChunk(worker.SweepOptions{Now: &clock, WallNow: &wall, ChunkSize: 50, SoloChunkSize: 50}, func(step string, done, total int64) {
		if step == "plan_edges" && done > 0 && done < total {
			cancel()
		}
	}))
	cancel()
	if err == nil {
		t.Fatal("the sweep finished before it could be cut off")
	}
	cut := scalar[int64](t, db, `SELECT id FROM mem_sweeps ORDER BY id DESC LIMIT 1`)
	left := scalar[int64](t, db, `SELECT count(*) FROM mem_edges`)
	logged := scalar[int64](t, db, `SELECT count(*) FROM mem_events WHERE sweep_id = ?`, cut)
	if logged == 0 {
		t.Fatal("the cut-off sweep removed nothing")
	}
	for key, value := range map[string]string{"edge_prune_threshold": "0", "max_decay_fraction": "0", "block_archival": "off"} {
		mustExec(t, db, `UPDATE mem_config SET value = ? WHERE key = ?`, value, key)
	}
	mustExec(t, db, `DELETE FROM mem_edge_policies`)
	r, err := worker.Sweep(context.Background(), db, worker.SweepOptions{Now: &clock, WallNow: &wall})
	if err != nil {
		t.Fatal(err)
	}
	if r.Resumed || r.DiscardedPlanOf != cut || r.SweepID == cut {
		t.Errorf("resumed %v, discarded the plan of %d (want %d), sweep %d", r.Resumed, r.DiscardedPlanOf, cut, r.SweepID)
	}
	if !strings.Contains(r.Summary, "Planned afresh") {
		t.Errorf("summary %q does not say the plan was discarded", r.Summary)
	}
	if r.EdgesPruned+r.EdgesDecayed+r.Archived+r.OrphansArchived != 0 || scalar[int64](t, db, `SELECT count(*) FROM mem_edges`) != left {
		t.Errorf("removed under settings that keep everything: %+v", r)
	}
	if got := scalar[int64](t, db, `SELECT count(*) FROM mem_events WHERE sweep_id = ?`, cut); got != logged {
		t.Errorf("the cut-off sweep's events: %d, were %d", got, logged)
	}
	if got := scalar[string](t, db, `SELECT status FROM mem_sweeps WHERE id = ?`, cut); got != "interrupted" {
		t.Errorf("the cut-off sweep is %q, want interrupted", got)
	}
	if n := scalar[int64](t, db, `SELECT count(*) FROM mem_sweep_plans`); n != 0 {
		t.Errorf("%d saved plan rows left", n)
	}
}

// A sweep at a clock already swept changes nothing, reinforcement
// included: run --every on an idle app must not inflate the counts.
func TestSameClockReinforcesNothing(t *testing.T) {
	db, _ := newMemory(t, knowledgeBlocks("a", "b", "c"))
	mustExec(t, db, `INSERT INTO mem_block_tags VALUES ('c', 'self/constitutional')`)
	addEdge(t, db, "a", "b", "similar", 0.8, 100, nil, false)
	first := sweepAt(t, db, 100)
	if first.Reinforced == 0 || first.ConstitutionalReinforced == 0 {
		t.Fatalf("the first sweep reinforced nothing: %+v", first)
	}
	counts := dumpTables(t, db)
	again := sweepAt(t, db, 100)
	if again.Reinforced != 0 || again.ConstitutionalReinforced != 0 {
		t.Errorf("a second sweep at the same clock reinforced %d (+%d constitutional)", again.Reinforced, again.ConstitutionalReinforced)
	}
	if got := dumpTables(t, db); got != counts {
		t.Errorf("a second sweep at the same clock changed rows:\n%s", diffLines(got, counts))
	}
	if later := sweepAt(t, db, 101); later.Reinforced == 0 {
		t.Errorf("a sweep at a later clock reinforced nothing: %+v", later)
	}
}
