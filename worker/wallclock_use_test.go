package worker_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker"
)

// TestWallClockExplainAndFeedback: explain, feedback and recall read a
// text access time as its twin in unix seconds, and name a bad one
// instead of failing on it.
func TestWallClockExplainAndFeedback(t *testing.T) {
	ctx := context.Background()
	db, _ := newMemory(t, "")
	at := fixedWall.Add(-12*24*time.Hour + 250*time.Millisecond)
	iso := at.In(plus2).Format("2006-01-02T15:04:05.000-07:00")
	seconds := unixValue(at).(float64)
	mustExec(t, db, `INSERT INTO mem_facts (id, segment, last_accessed_at, created_at) VALUES
		('iso', 'context', ?, 'a while ago'), ('unix', 'context', ?, 1), ('iso-created', 'context', NULL, ?),
		('bad', 'context', 'last Tuesday', 1), ('bad-down', 'context', 'last Tuesday', 1), ('bad-up', 'context', x'00', 1)`,
		iso, seconds, iso)

	twin, err := worker.ExplainFact(ctx, db, "unix", fixedWall)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"iso", "iso-created"} {
		x, err := worker.ExplainFact(ctx, db, id, fixedWall)
		if err != nil {
			t.Fatalf("explain %s: %v", id, err)
		}
		if x.Invalid || !near(x.DaysSinceAccess, twin.DaysSinceAccess, 1e-9) || !near(x.Score, twin.Score, 1e-12) ||
			x.Action != twin.Action || x.ArchiveInDays == nil || !near(*x.ArchiveInDays, *twin.ArchiveInDays, 1e-9) {
			t.Errorf("explain %s: %+v, want it as %+v", id, x, twin)
		}
	}
	x, err := worker.ExplainFact(ctx, db, "bad", fixedWall)
	if err != nil {
		t.Fatalf("explain of a bad row: %v, want an explanation", err)
	}
	if !x.Invalid || !strings.Contains(x.Verdict, "last_accessed_at is text 'last Tuesday'") || x.Action != "" {
		t.Errorf("explain of a bad row: %+v, want it invalid, naming its access time", x)
	}

	// Recall --auto and feedback down leave the access time as it was, and
	// report it in unix seconds.
	for _, call := range []func() (*worker.FactChange, error){
		func() (*worker.FactChange, error) { return worker.Recall(ctx, db, "iso", true, fixedWall) },
		func() (*worker.FactChange, error) { return worker.Feedback(ctx, db, "iso", false, fixedWall) },
	} {
		c, err := call()
		if err != nil {
			t.Fatalf("on a text access time: %v", err)
		}
		if c.LastAccessedAt == nil || *c.LastAccessedAt != seconds || c.Problem != "" {
			t.Errorf("change %+v, want last_accessed_at %v", c, seconds)
		}
	}
	if got := scalar[string](t, db, `SELECT last_accessed_at FROM mem_facts WHERE id = 'iso'`); got != iso {
		t.Errorf("the access time became %q, want %q untouched", got, iso)
	}
	c, err := worker.Feedback(ctx, db, "iso", true, fixedWall)
	if err != nil || c.LastAccessedAt == nil || *c.LastAccessedAt != float64(fixedWall.Unix()) {
		t.Errorf("feedback up: %+v, %v; want the clock reset", c, err)
	}

	// On a bad access time, feedback down still counts and says what is
	// wrong; feedback up writes a good one.
	c, err = worker.Feedback(ctx, db, "bad-down", false, fixedWall)
	if err != nil {
		t.Fatalf("feedback down on a bad row: %v", err)
	}
	if c.LastAccessedAt != nil || !strings.Contains(c.Problem, "last_accessed_at is text") {
		t.Errorf("feedback down on a bad row: %+v, want its problem named", c)
	}
	c, err = worker.Feedback(ctx, db, "bad-up", true, fixedWall)
	if err != nil || c.Problem != "" || c.LastAccessedAt == nil {
		t.Errorf("feedback up on a bad row: %+v, %v; want it repaired", c, err)
	}
	r := sweepAtWall(t, db, 0, fixedWall)
	if r.InvalidRows.Count != 2 {
		t.Errorf("invalid rows %+v, want bad and bad-down", r.InvalidRows)
	}
}

// TestWallClockRestore: a fact pruned and an edge decayed with text
// wall-clock columns keep that text in their events and get it back, byte
// for byte, when restored (the anchors alone are refreshed).
func TestWallClockRestore(t *testing.T) {
	ctx := context.Background()
	db, _ := newMemory(t, knowledgeBlocks("a", "b"))
	created := "2025-06-30T23:59:59.123456+05:30"
	accessed := "2025-09-01 08:00:00"
	observed := "2026-01-02T03:04:05Z"
	mustExec(t, db, `INSERT INTO mem_facts (id, segment, last_accessed_at, content, created_at) VALUES ('f', 'context', ?, 'old', ?)`,
		accessed, created)
	addPolicy(t, db, "seen", "half_life", `{"half_life": "10d"}`, "wall", 0.5, "delete", "keep")
	addEdge(t, db, "a", "b", "seen", 1.0, nil, observed, false)
	mustExec(t, db, `UPDATE mem_edges SET created_at = ? WHERE from_id = 'a'`, created)

	r := sweepAtWall(t, db, 0, fixedWall)
	if r.Facts.Pruned != 1 || policyCount(t, r, "seen").Decayed != 1 {
		t.Fatalf("fixture: %s", r.Summary)
	}
	snap := eventsFor(t, db, "fact", "f")[0].Detail["fact"].(map[string]any)
	if snap["created_at"] != created || snap["last_accessed_at"] != accessed {
		t.Errorf("fact snapshot %v, want the texts as written", snap)
	}
	edge := edgeEvents(t, db, "a", "b")[0].Detail["edge"].(map[string]any)
	if edge["created_at"] != created || edge["last_observed_at"] != observed {
		t.Errorf("edge snapshot %v, want the texts as written", edge)
	}

	restoreAt := fixedWall.Add(time.Hour)
	if _, err := worker.RestoreFact(ctx, db, "f", restoreAt); err != nil {
		t.Fatal(err)
	}
	if _, err := worker.RestoreEdge(ctx, db, "a", "b", restoreAt); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`SELECT created_at FROM mem_facts WHERE id = 'f'`, `SELECT created_at FROM mem_edges WHERE from_id = 'a'`} {
		if got := scalar[[]byte](t, db, q); string(got) != created {
			t.Errorf("%s: %q, want %q byte for byte", q, got, created)
		}
	}
	if got := scalar[string](t, db, `SELECT typeof(created_at) || typeof(last_accessed_at) FROM mem_facts`); got != "textinteger" {
		t.Errorf("restored fact columns are %s, want text created_at and the access time reset", got)
	}
	if r := sweepAtWall(t, db, 0, restoreAt); r.Facts.Pruned+r.Facts.Archived != 0 || policyCount(t, r, "seen").Decayed != 0 {
		t.Errorf("sweep after restore: %s", r.Summary)
	}
}
