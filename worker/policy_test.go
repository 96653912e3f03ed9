package worker_test

// Relation policies (docs/policies.md, references 003 and 004) beside the rest of
// the sweep: pinned edges, orphans, the tiered phases they replace, broken
// policy rows, and dry runs.

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/worker"
)

// TestPolicyPinned: a pinned edge never decays under any model or clock,
// however old; its unpinned twin does. The policy counts it as pinned, not
// processed.
func TestPolicyPinned(t *testing.T) {
	policies := []struct {
		model, params, clock string
		action               string
	}{
		{"exponential", `{"lambda":0.1}`, "active_hours", "delete"},
		{"half_life", `{"half_life":"1h"}`, "active_hours", "delete"},
		{"half_life", `{"half_life":"1d"}`, "wall", "exclude"},
		{"linear", `{"rate":1}`, "active_hours", "delete"},
		{"linear", `{"rate":1}`, "wall", "delete"},
		{"delayed_linear", `{"rate":1,"hold":"30m"}`, "active_hours", "delete"},
		{"multi_linear", `{"tiers":[{"weight":1,"hold":0,"rate":1}]}`, "active_hours", "delete"},
		{"power_law", `{"alpha":2}`, "active_hours", "exclude"},
	}
	for _, p := range policies {
		t.Run(p.model+" "+p.clock+" "+p.action, func(t *testing.T) {
			db, _ := newMemory(t, knowledgeBlocks("a", "b", "c"))
			addPolicy(t, db, "rel", p.model, p.params, p.clock, nil, p.action, "delete")
			addEdge(t, db, "a", "b", "rel", 0.5, 0, daysAgo(fixedWall, 10000), true)
			addEdge(t, db, "a", "c", "rel", 0.5, 0, daysAgo(fixedWall, 10000), false)
			r := sweepAtWall(t, db, 1e5, fixedWall)
			if got := scalar[int](t, db, `SELECT count(*) FROM mem_edges WHERE from_id = 'a' AND to_id = 'b' AND weight = 0.5 AND excluded = 0`); got != 1 {
				t.Errorf("pinned edge changed or removed")
			}
			if ev := edgeEvents(t, db, "a", "b"); len(ev) != 0 {
				t.Errorf("pinned edge events %+v", ev)
			}
			want := worker.PolicyCount{RelationType: "rel", Processed: 1, Pinned: 1, Decayed: 1}
			if p.action == "exclude" {
				want = worker.PolicyCount{RelationType: "rel", Processed: 1, Pinned: 1, BelowMinimum: 1, Excluded: 1}
			}
			if got := policyCount(t, r, "rel"); got != want {
				t.Errorf("counts %+v, want %+v", got, want)
			}
			// The pinned edge keeps its ends: no orphan.
			expectStatus(t, db, "active", "a", "b")
		})
	}
}

// TestPolicyOrphans: orphans = 'delete' archives an end a policy deletion
// leaves with no edge at all (reference 003's orphan detection); 'keep'
// leaves it, and an end with another edge stays.
func TestPolicyOrphans(t *testing.T) {
	const now = 100.0
	db, _ := newMemory(t, knowledgeBlocks("a", "b", "c", "e", "w", "x", "y", "z"))
	mustExec(t, db, `INSERT INTO mem_block_tags VALUES ('x', 'topic'), ('x', 'draft')`)
	addPolicy(t, db, "fade_del", "linear", `{"rate":1}`, "active_hours", nil, "delete", "delete")
	addPolicy(t, db, "fade_keep", "linear", `{"rate":1}`, "active_hours", nil, "delete", "keep")
	addEdge(t, db, "a", "b", "similar", 0.9, now, nil, false)
	addEdge(t, db, "a", "w", "similar", 0.9, now, nil, false)
	addEdge(t, db, "e", "z", "similar", 0.9, now, nil, false)
	addEdge(t, db, "a", "x", "fade_del", 0.5, now-1, nil, false)  // dies; x has no other edge
	addEdge(t, db, "w", "z", "fade_del", 0.5, now-1, nil, false)  // dies; both ends keep an edge
	addEdge(t, db, "c", "y", "fade_keep", 0.5, now-1, nil, false) // dies; c and y kept
	r := sweepAt(t, db, now)
	expectEdges(t, db, []string{"a-b", "a-w", "e-z"}, []string{"a-x", "w-z", "c-y"})
	expectStatus(t, db, "archived", "x")
	expectStatus(t, db, "active", "a", "b", "c", "e", "w", "y", "z")
	if got := scalar[string](t, db, `SELECT archive_reason FROM mem_blocks WHERE id = 'x'`); got != "orphaned" {
		t.Errorf("x archive_reason %q, want orphaned", got)
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM mem_block_tags WHERE block_id = 'x'`); n != 0 {
		t.Errorf("orphan x keeps %d tags", n)
	}
	ev := eventsWhere(t, db, `subject_kind = 'block'`)
	if len(ev) != 1 || ev[0].Subject != "x" || ev[0].Action != "archive" || ev[0].Reason != "orphaned" {
		t.Fatalf("block events %+v, want one archive of x (orphaned)", ev)
	}
	if ev[0].Detail["block"].(map[string]any)["id"] != "x" {
		t.Errorf("orphan event detail %v", ev[0].Detail)
	}
	if r.OrphansArchived != 1 || r.Archived != 0 {
		t.Errorf("report orphans_archived=%d archived=%d, want 1 0", r.OrphansArchived, r.Archived)
	}
	if !strings.Contains(r.Summary, "1 orphans archived") {
		t.Errorf("summary %q", r.Summary)
	}
	// The orphan is archived with its event, so it can be restored.
	if _, err := worker.RestoreBlock(context.Background(), db, "x", fixedWall); err != nil {
		t.Fatalf("restore orphan: %v", err)
	}
	expectStatus(t, db, "active", "x")
	if n := scalar[int](t, db, `SELECT count(*) FROM mem_block_tags WHERE block_id = 'x'`); n != 2 {
		t.Errorf("restored orphan has %d tags, want 2", n)
	}
}

// TestPolicySkipsTieredPhases: a relation type with a policy is decayed by
// that policy alone — the static prune and temporal decay of §4.1 skip it —
// but block archival still takes its edges with a faded block.
func TestPolicySkipsTieredPhases(t *testing.T) {
	const now = 2000.0
	db, _ := newMemory(t, knowledgeBlocks("a", "b", "c", "d", "e", "f", "p", "q"))
	mustExec(t, db, `INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES ('z', 'observation', 0)`)
	addPolicy(t, db, "depends_on", "half_life", `{"half_life":"90d"}`, "wall", 0.01, "delete", "keep")
	addPolicy(t, db, "session", "linear", `{"rate":0.01}`, "active_hours", nil, "delete", "keep")
	addPolicy(t, db, "cites", "half_life", `{"half_life":"90d"}`, "wall", 0.01, "delete", "keep")
	seen := daysAgo(fixedWall, 1)
	// Weight 0.05, count 0: the static prune would take it; the policy keeps
	// it (0.05 × 0.5^(1/90) = 0.0496 ≥ 0.01).
	addEdge(t, db, "a", "b", "depends_on", 0.05, 0, seen, false)
	// Idle 2000 active hours: temporal decay would take it (0.5 e^−10).
	addEdge(t, db, "a", "c", "depends_on", 0.5, 0, seen, false)
	// The same rows without a policy go.
	addEdge(t, db, "d", "e", "similar", 0.05, 0, seen, false)
	addEdge(t, db, "d", "f", "similar", 0.5, 0, seen, false)
	// A wall policy with no observation time and an active-hours policy with
	// no anchor: no elapsed time, nothing to decay.
	addEdge(t, db, "p", "q", "depends_on", 0.5, 0, nil, false)
	addEdge(t, db, "b", "q", "session", 0.5, nil, seen, false)
	// A live policy edge to a faded observation block goes with the block.
	addEdge(t, db, "a", "z", "cites", 0.2, 0, seen, false)

	r := sweepAtWall(t, db, now, fixedWall)
	expectEdges(t, db, []string{"a-b", "a-c", "p-q", "b-q"}, []string{"d-e", "d-f", "a-z"})
	if r.EdgesPruned != 1 || r.EdgesDecayed != 1 || r.Archived != 1 || r.EdgesRemovedWithBlocks != 1 {
		t.Errorf("report pruned=%d decayed=%d archived=%d with_blocks=%d, want 1 1 1 1",
			r.EdgesPruned, r.EdgesDecayed, r.Archived, r.EdgesRemovedWithBlocks)
	}
	if got := eventActions(edgeEvents(t, db, "a", "z")); !slices.Equal(got, []string{"delete"}) {
		t.Errorf("a-z events %v, want the block archival's delete", got)
	}
	for _, k := range [][2]string{{"a", "b"}, {"a", "c"}, {"p", "q"}, {"b", "q"}} {
		if ev := edgeEvents(t, db, k[0], k[1]); len(ev) != 0 {
			t.Errorf("%s-%s events %+v", k[0], k[1], ev)
		}
	}
	// a-z went with its block, not by its policy.
	if got := policyCount(t, r, "cites"); got.Decayed != 0 {
		t.Errorf("cites counts %+v, want nothing decayed by the policy", got)
	}
	if want := (worker.PolicyCount{RelationType: "depends_on", Processed: 2}); policyCount(t, r, "depends_on") != want {
		t.Errorf("depends_on counts %+v, want %+v", policyCount(t, r, "depends_on"), want)
	}
	if want := (worker.PolicyCount{RelationType: "session"}); policyCount(t, r, "session") != want {
		t.Errorf("session counts %+v, want %+v", policyCount(t, r, "session"), want)
	}
}

// TestPolicyBroken: a policy row the sweep cannot use fails the sweep (real
// or dry) with an error naming its relation type, before anything changes —
// not the other policies' edges, facts or blocks either.
func TestPolicyBroken(t *testing.T) {
	cases := []struct {
		name, model, params string
		threshold           any
	}{
		{"unknown model", "sigmoid", `{}`, nil},
		{"params not JSON", "half_life", `{"half_life": 90`, nil},
		{"params not an object", "half_life", `[90]`, nil},
		{"negative rate", "linear", `{"rate":-0.25}`, nil},
		{"negative lambda", "exponential", `{"lambda":-1}`, 0.1},
		{"unknown params key", "half_life", `{"halflife":"90d"}`, 0.1},
		{"key of another model", "half_life", `{"half_life":"90d","rate":1}`, 0.1},
		{"unknown tier key", "multi_linear", `{"tiers":[{"weight":1,"rate":1,"delay":2}]}`, nil},
		{"no tiers", "multi_linear", `{"tiers":[]}`, nil},
		{"bad duration", "half_life", `{"half_life":"90x"}`, 0.1},
		{"zero half-life", "half_life", `{"half_life":0}`, 0.1},
		{"missing half-life", "half_life", `{}`, 0.1},
		{"negative threshold", "half_life", `{"half_life":"90d"}`, -0.1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db, _ := newMemory(t, knowledgeBlocks("a", "b", "c", "d"))
			mustExec(t, db, `INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES ('z', 'observation', 0)`)
			addPolicy(t, db, "good", "linear", `{"rate":1}`, "active_hours", nil, "delete", "delete")
			addPolicy(t, db, "broken_rel", c.model, c.params, "wall", c.threshold, "delete", "keep")
			addEdge(t, db, "a", "b", "good", 0.5, 0, nil, false)                           // would decay
			addEdge(t, db, "a", "c", "broken_rel", 0.5, 0, daysAgo(fixedWall, 1e4), false) // would decay
			addEdge(t, db, "a", "d", "similar", 0.05, 0, nil, false)                       // would be pruned
			addEdge(t, db, "a", "z", "similar", 0.9, 0, nil, false)                        // goes with z
			mustExec(t, db, `INSERT INTO mem_facts (id, segment, last_accessed_at) VALUES ('old', 'context', ?)`, daysAgo(fixedWall, 400))
			mustExec(t, db, `INSERT INTO mem_events (at, subject_kind, subject_id, action) VALUES (?, 'fact', 'x', 'feedback')`, daysAgo(fixedWall, 400))
			mustExec(t, db, `UPDATE mem_config SET value = 30 WHERE key = 'event_retention_days'`)
			before := dumpTables(t, db)
			for _, dry := range []bool{true, false} {
				now := 1000.0
				_, err := worker.Sweep(context.Background(), db, worker.SweepOptions{Now: &now, WallNow: &fixedWall, DryRun: dry})
				if err == nil {
					t.Fatalf("dry=%v: sweep succeeded with a broken policy", dry)
				}
				if !strings.Contains(err.Error(), `"broken_rel"`) {
					t.Errorf("dry=%v: error %q does not name the relation type", dry, err)
				}
				if strings.Contains(err.Error(), `"good"`) {
					t.Errorf("dry=%v: error %q blames the good policy", dry, err)
				}
				if after := dumpTables(t, db); after != before {
					t.Errorf("dry=%v: the failed sweep changed the database:\nbefore\n%s\nafter\n%s", dry, before, after)
				}
			}
			if got := scalar[string](t, db, `SELECT status FROM mem_sweeps ORDER BY id DESC LIMIT 1`); got != "failed" {
				t.Errorf("the failed sweep is recorded as %q", got)
			}
			// Fixing the row lets the next sweep run.
			mustExec(t, db, `UPDATE mem_edge_policies SET model = 'half_life', params = '{"half_life":"90d"}', threshold = 0.1
				WHERE relation_type = 'broken_rel'`)
			r := sweepAtWall(t, db, 1000, fixedWall)
			expectEdges(t, db, nil, []string{"a-b", "a-c", "a-d", "a-z"})
			if r.Facts.Pruned != 1 || r.EventsExpired != 1 {
				t.Errorf("the repaired sweep: facts %+v, events expired %d", r.Facts, r.EventsExpired)
			}
		})
	}
}

// TestDryRunPolicyFacts: with relation policies (exclude, delete with
// orphans) and facts to archive and prune, a dry run through a read-only
// open leaves every byte of the file and predicts the real sweep's counts.
func TestDryRunPolicyFacts(t *testing.T) {
	writer, path := newMemory(t, knowledgeBlocks("a", "b", "c", "d", "e", "x"))
	mustExec(t, writer, `INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES ('obs', 'observation', 0)`)
	mustExec(t, writer, `INSERT INTO mem_block_tags VALUES ('obs', 'standup'), ('x', 'topic')`)
	addPolicy(t, writer, "works_on", "half_life", `{"half_life":"90d"}`, "wall", 0.10, "exclude", "keep")
	addPolicy(t, writer, "next_turn", "delayed_linear", `{"rate":0.25,"hold":"4h"}`, "active_hours", nil, "delete", "delete")
	addEdge(t, writer, "a", "b", "works_on", 1, 100, daysAgo(fixedWall, 290), false)
	addEdge(t, writer, "a", "c", "works_on", 1, 100, daysAgo(fixedWall, 310), false)
	addEdge(t, writer, "a", "d", "works_on", 1, 100, daysAgo(fixedWall, 999), true)
	addEdge(t, writer, "a", "x", "next_turn", 1, 100-8, nil, false)
	addEdge(t, writer, "a", "e", "next_turn", 1, 100-7.9, nil, false)
	addEdge(t, writer, "b", "c", "similar", 0.05, 100, nil, false)
	addEdge(t, writer, "b", "obs", "similar", 0.5, 100, nil, false)
	addEdge(t, writer, "c", "d", "similar", 0.15, 0, nil, false) // 0.15 e^−0.5 = 0.091: temporal decay
	for _, f := range []struct {
		id, segment, status string
		days                float64
	}{
		{"ctx-keep", "context", "active", 1}, {"ctx-archive", "context", "active", 30}, {"ctx-prune", "context", "active", 80},
		{"know-archive", "knowledge", "active", 200}, {"know-keep", "knowledge", "active", 40},
		{"me", "identity", "active", 5000}, {"sure", "context", "confirmed", 5000},
	} {
		mustExec(t, writer, `INSERT INTO mem_facts (id, segment, status, last_accessed_at) VALUES (?, ?, ?, ?)`,
			f.id, f.segment, f.status, daysAgo(fixedWall, f.days))
	}
	mustExec(t, writer, `UPDATE mem_config SET value = 100 WHERE key = 'active_hours'`)
	if err := writer.Close(); err != nil {
		t.Fatal(err)
	}
	before := fileHashes(t, path)
	ro, err := worker.OpenMemory(path, true)
	if err != nil {
		t.Fatal(err)
	}
	dry, err := worker.Sweep(context.Background(), ro, worker.SweepOptions{DryRun: true, WallNow: &fixedWall})
	if err != nil {
		t.Fatal(err)
	}
	if err := ro.Close(); err != nil {
		t.Fatal(err)
	}
	sameFiles(t, before, fileHashes(t, path))

	rw, err := worker.OpenMemory(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Close()
	if n := scalar[int](t, rw, `SELECT (SELECT count(*) FROM mem_events) + (SELECT count(*) FROM mem_sweeps)`); n != 0 {
		t.Errorf("the dry run wrote %d events or sweeps", n)
	}
	real, err := worker.Sweep(context.Background(), rw, worker.SweepOptions{WallNow: &fixedWall})
	if err != nil {
		t.Fatal(err)
	}
	counts := func(r *worker.Report) string {
		return fmt.Sprintf("archived=%d orphans=%d with_blocks=%d pruned=%d decayed=%d after=%d policies=%+v facts=%+v sample=%v summary=%q",
			r.Archived, r.OrphansArchived, r.EdgesRemovedWithBlocks, r.EdgesPruned, r.EdgesDecayed, r.TotalEdgesAfter,
			r.Policies, r.Facts, r.DecayedSample, r.Summary)
	}
	if d, w := counts(dry), counts(real); d != w {
		t.Errorf("the dry run predicted\n  %s\nthe sweep did\n  %s", d, w)
	}
	// The fixture exercises every kind of change.
	wantPolicies := []worker.PolicyCount{
		{RelationType: "next_turn", Processed: 2, Decayed: 1},
		{RelationType: "works_on", Processed: 2, BelowMinimum: 1, Pinned: 1, Excluded: 1},
	}
	wantFacts := worker.FactCounts{Processed: 7, Archived: 2, Pruned: 1, Kept: 2, Immune: 2}
	if !reflect.DeepEqual(real.Policies, wantPolicies) || real.Facts != wantFacts || real.Archived != 1 ||
		real.OrphansArchived != 1 || real.EdgesPruned != 1 || real.EdgesDecayed != 1 {
		t.Errorf("real sweep %s\nwant policies %+v facts %+v, 1 archived, 1 orphan, 1 pruned, 1 decayed",
			counts(real), wantPolicies, wantFacts)
	}
}

// TestPolicyOrphansWhateverTheChunks: a block whose edges go in one sweep,
// one deleted by a policy with orphans = 'delete' and one pruned, is an
// orphan however the sweep's transactions are cut (each edge its own, or
// all together), as the plan foresees; the other end of the pruned edge,
// which no such policy touched, stays.
func TestPolicyOrphansWhateverTheChunks(t *testing.T) {
	const now = 100.0
	for _, chunk := range []int{1, 1000} {
		t.Run(fmt.Sprint(chunk), func(t *testing.T) {
			db, _ := newMemory(t, knowledgeBlocks("a", "b", "x", "y"))
			addPolicy(t, db, "fade_del", "linear", `{"rate":1}`, "active_hours", nil, "delete", "delete")
			addEdge(t, db, "a", "b", "similar", 0.9, now, nil, false)
			addEdge(t, db, "a", "x", "fade_del", 0.5, now-1, nil, false) // dies by the policy
			addEdge(t, db, "x", "y", "similar", 0.01, now, nil, false)   // pruned: below the static threshold
			r := sweepChunked(t, db, now, fixedWall, worker.SweepOptions{ChunkSize: chunk, SoloChunkSize: chunk})
			expectEdges(t, db, []string{"a-b"}, []string{"a-x", "x-y"})
			expectStatus(t, db, "archived", "x")
			expectStatus(t, db, "active", "a", "b", "y")
			if r.OrphansArchived != 1 {
				t.Errorf("%d orphans archived, want 1: %s", r.OrphansArchived, r.Summary)
			}
		})
	}
}
