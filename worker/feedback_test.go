package worker_test

// What an agent does to facts between sweeps (docs/facts.md): feedback,
// recall and explain, and how they move the next sweep.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker"
)

// TestFeedback: up → importance + 0.05 (max 1), clock reset, count + 1;
// down → importance − 0.10 (min 0), clock and count untouched. Each is
// logged as a 'feedback' event.
func TestFeedback(t *testing.T) {
	ctx := context.Background()
	db, _ := newMemory(t, "")
	old := daysAgo(fixedWall, 10)
	mustExec(t, db, `INSERT INTO mem_facts (id, segment, importance, access_count, last_accessed_at) VALUES
		('hi', 'preference', 0.98, 3, ?), ('mid', 'preference', NULL, 3, ?), ('lo', 'context', 0.05, 3, ?)`, old, old, old)
	type state struct {
		importance float64
		count      int64
		last       int64
	}
	get := func(id string) state {
		var s state
		if err := db.SQL.QueryRow(`SELECT importance, access_count, last_accessed_at FROM mem_facts WHERE id = ?`, id).
			Scan(&s.importance, &s.count, &s.last); err != nil {
			t.Fatal(err)
		}
		return s
	}
	steps := []struct {
		id      string
		up      bool
		at      time.Time
		want    state
		clamped bool
	}{
		{"hi", true, fixedWall, state{1.0, 4, fixedWall.Unix()}, true},
		{"hi", true, fixedWall.Add(time.Hour), state{1.0, 5, fixedWall.Add(time.Hour).Unix()}, true},
		{"mid", true, fixedWall, state{0.75, 4, fixedWall.Unix()}, false},
		{"mid", false, fixedWall.Add(time.Hour), state{0.65, 4, fixedWall.Unix()}, false},
		{"lo", false, fixedWall, state{0, 3, old}, true},
		{"lo", false, fixedWall, state{0, 3, old}, true},
	}
	for i, s := range steps {
		before := get(s.id)
		c, err := worker.Feedback(ctx, db, s.id, s.up, s.at)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		got := get(s.id)
		if !near(got.importance, s.want.importance, 1e-12) || got.count != s.want.count || got.last != s.want.last {
			t.Errorf("step %d (%s up=%v): %+v, want %+v", i, s.id, s.up, got, s.want)
		}
		if c.ImportanceBefore != before.importance || c.ImportanceAfter != got.importance || c.ImportanceClamped != s.clamped ||
			c.AccessCountAfter != got.count || c.ClockReset != s.up || !c.Recorded || c.LastAccessedAt == nil || *c.LastAccessedAt != float64(got.last) {
			t.Errorf("step %d: change %+v for %+v -> %+v", i, c, before, got)
		}
		ev := eventsWhere(t, db, `subject_kind = 'fact' AND subject_id = ?`, s.id)
		last := ev[len(ev)-1]
		dir := map[bool]string{true: "up", false: "down"}[s.up]
		if last.Action != "feedback" || last.Reason != dir || last.At != s.at.Unix() {
			t.Errorf("step %d: event %+v, want feedback %s at %d", i, last, dir, s.at.Unix())
		}
		if !near(num(t, last.Detail, "importance_before"), before.importance, 1e-12) ||
			!near(num(t, last.Detail, "importance_after"), got.importance, 1e-12) {
			t.Errorf("step %d: event detail %v", i, last.Detail)
		}
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM mem_events WHERE action = 'feedback'`); n != len(steps) {
		t.Errorf("%d feedback events, want %d", n, len(steps))
	}
}

// TestRecall: a recall bumps the access count and resets the clock, logged
// as 'recall'; a passive auto-recall changes no byte of the file.
func TestRecall(t *testing.T) {
	ctx := context.Background()
	db, path := newMemory(t, "")
	old := daysAgo(fixedWall, 10)
	mustExec(t, db, `INSERT INTO mem_facts (id, segment, access_count, last_accessed_at) VALUES ('f', 'knowledge', 2, ?)`, old)

	c, err := worker.Recall(ctx, db, "f", false, fixedWall)
	if err != nil {
		t.Fatal(err)
	}
	var importance float64
	var count, last int64
	read := func() {
		if err := db.SQL.QueryRow(`SELECT importance, access_count, last_accessed_at FROM mem_facts WHERE id = 'f'`).
			Scan(&importance, &count, &last); err != nil {
			t.Fatal(err)
		}
	}
	read()
	if importance != 0.60 || count != 3 || last != fixedWall.Unix() {
		t.Errorf("after recall: importance %v count %d last %d, want 0.60 3 %d", importance, count, last, fixedWall.Unix())
	}
	if !c.Recorded || !c.ClockReset || c.AccessCountAfter != 3 || c.ImportanceAfter != 0.60 {
		t.Errorf("recall change %+v", c)
	}
	ev := eventsWhere(t, db, `subject_kind = 'fact' AND subject_id = 'f'`)
	if len(ev) != 1 || ev[0].Action != "recall" || ev[0].At != fixedWall.Unix() {
		t.Errorf("events %+v, want one recall", ev)
	}

	before := fileHashes(t, path)
	dump := dumpTables(t, db)
	c, err = worker.Recall(ctx, db, "f", true, fixedWall.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if c.Recorded || c.ClockReset || c.AccessCountAfter != 3 {
		t.Errorf("auto-recall change %+v", c)
	}
	sameFiles(t, before, fileHashes(t, path))
	if got := dumpTables(t, db); got != dump {
		t.Errorf("auto-recall changed the database:\n%s\n%s", dump, got)
	}
	read()
	if count != 3 || last != fixedWall.Unix() {
		t.Errorf("after auto-recall: count %d last %d", count, last)
	}
}

// TestFactUnknownAndArchived: an unknown id is ErrNoFact everywhere; an
// archived fact takes no feedback until restored.
func TestFactUnknownAndArchived(t *testing.T) {
	ctx := context.Background()
	db, _ := newMemory(t, `INSERT INTO mem_facts (id, segment, status, last_accessed_at) VALUES ('gone', 'context', 'archived', 0)`)
	calls := map[string]func() error{
		"feedback up":   func() error { _, err := worker.Feedback(ctx, db, "nope", true, fixedWall); return err },
		"feedback down": func() error { _, err := worker.Feedback(ctx, db, "nope", false, fixedWall); return err },
		"recall":        func() error { _, err := worker.Recall(ctx, db, "nope", false, fixedWall); return err },
		"auto-recall":   func() error { _, err := worker.Recall(ctx, db, "nope", true, fixedWall); return err },
		"explain":       func() error { _, err := worker.ExplainFact(ctx, db, "nope", fixedWall); return err },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, worker.ErrNoFact) {
			t.Errorf("%s of an unknown fact: %v, want ErrNoFact", name, err)
		}
	}
	dump := dumpTables(t, db)
	for _, up := range []bool{true, false} {
		if _, err := worker.Feedback(ctx, db, "gone", up, fixedWall); err == nil || errors.Is(err, worker.ErrNoFact) {
			t.Errorf("feedback (up=%v) on an archived fact: %v", up, err)
		}
	}
	if _, err := worker.Recall(ctx, db, "gone", false, fixedWall); err == nil {
		t.Error("recall of an archived fact succeeded")
	}
	if got := dumpTables(t, db); got != dump {
		t.Errorf("refused feedback changed the database")
	}
}

// TestFeedbackMovesTheSweep: feedback and recall change what the next sweep
// does. A context fact just above 0.15 goes below it when marked down; one
// past 0.05 survives when recalled or marked up; its twin without is pruned.
func TestFeedbackMovesTheSweep(t *testing.T) {
	ctx := context.Background()
	db, _ := newMemory(t, "")
	d15 := factCrossing(0.40, 0.08, 0, 0.15)
	d05 := factCrossing(0.40, 0.08, 0, 0.05)
	if s := factScore(0.30, 0.08, d15-0.5, 0); s >= 0.15 {
		t.Fatalf("fixture: a down-voted fact scores %v", s)
	}
	for id, days := range map[string]float64{"down": d15 - 0.5, "twin-down": d15 - 0.5,
		"recalled": d05 + 0.5, "upvoted": d05 + 0.5, "twin-old": d05 + 0.5, "auto": d05 + 0.5} {
		mustExec(t, db, `INSERT INTO mem_facts (id, segment, last_accessed_at) VALUES (?, 'context', ?)`, id, daysAgo(fixedWall, days))
	}
	for _, call := range []func() error{
		func() error { _, err := worker.Feedback(ctx, db, "down", false, fixedWall); return err },
		func() error { _, err := worker.Recall(ctx, db, "recalled", false, fixedWall); return err },
		func() error { _, err := worker.Feedback(ctx, db, "upvoted", true, fixedWall); return err },
		func() error { _, err := worker.Recall(ctx, db, "auto", true, fixedWall); return err },
	} {
		if err := call(); err != nil {
			t.Fatal(err)
		}
	}
	r := sweepAtWall(t, db, 0, fixedWall)
	statuses := map[string]string{}
	rows, err := db.SQL.Query(`SELECT id, status FROM mem_facts`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, status string
		if err := rows.Scan(&id, &status); err != nil {
			t.Fatal(err)
		}
		statuses[id] = status
	}
	rows.Close()
	want := map[string]string{"down": "archived", "twin-down": "active", "recalled": "active", "upvoted": "active"}
	for id, status := range want {
		if statuses[id] != status {
			t.Errorf("%s is %q, want %s", id, statuses[id], status)
		}
	}
	for _, id := range []string{"twin-old", "auto"} {
		if _, ok := statuses[id]; ok {
			t.Errorf("%s survived the sweep, want it pruned", id)
		}
	}
	if r.Facts.Archived != 1 || r.Facts.Pruned != 2 {
		t.Errorf("fact counts %+v", r.Facts)
	}
}

// TestExplainFact: the score, the action and the days until each threshold,
// which match reference 001's formula solved in closed form.
func TestExplainFact(t *testing.T) {
	ctx := context.Background()
	db, _ := newMemory(t, "")
	d15 := factCrossing(0.40, 0.08, 0, 0.15)
	d05 := factCrossing(0.40, 0.08, 0, 0.05)
	k05 := factCrossing(0.60, 0.03, 0, 0.05)
	for _, f := range []struct {
		id, segment, status string
		days                float64
	}{
		{"ctx", "context", "active", 0}, {"ctx-old", "context", "active", d15 + 1}, {"know", "knowledge", "active", 10},
		{"me", "identity", "active", 1000}, {"sure", "context", "confirmed", 1000}, {"shelved", "context", "archived", 1000},
	} {
		mustExec(t, db, `INSERT INTO mem_facts (id, segment, status, last_accessed_at) VALUES (?, ?, ?, ?)`, f.id, f.segment, f.status, daysAgo(fixedWall, f.days))
	}
	// Never accessed: days since creation.
	mustExec(t, db, `INSERT INTO mem_facts (id, segment, created_at) VALUES ('new', 'context', ?)`, daysAgo(fixedWall, 2))
	in := func(d float64) *float64 { return &d }
	// same compares days to a threshold, nil meaning never.
	same := func(got, want *float64) bool {
		if got == nil || want == nil {
			return got == nil && want == nil
		}
		return near(*got, *want, 1e-4)
	}
	show := func(p *float64) string {
		if p == nil {
			return "nil"
		}
		return fmt.Sprint(*p)
	}
	cases := []struct {
		id, action     string
		days, score    float64
		archive, prune *float64
	}{
		{"ctx", "keep", 0, 0.40, in(d15), in(d05)},
		{"ctx-old", "archive", d15 + 1, factScore(0.40, 0.08, d15+1, 0), in(0), in(d05 - d15 - 1)},
		{"know", "keep", 10, factScore(0.60, 0.03, 10, 0), in(k05 - 10), nil},
		{"me", "keep", 1000, 1, nil, nil},
		{"sure", "keep", 1000, factScore(0.40, 0.08, 1000, 0), nil, nil},
		{"new", "keep", 2, factScore(0.40, 0.08, 2, 0), in(d15 - 2), in(d05 - 2)},
	}
	for _, c := range cases {
		x, err := worker.ExplainFact(ctx, db, c.id, fixedWall)
		if err != nil {
			t.Fatalf("%s: %v", c.id, err)
		}
		if x.Action != c.action || !near(x.DaysSinceAccess, c.days, 1e-4) || !near(x.Score, c.score, 1e-6) ||
			!same(x.ArchiveInDays, c.archive) || !same(x.PruneInDays, c.prune) {
			t.Errorf("%s: action %s days %v score %v archive in %s prune in %s\nwant %s %v %v %s %s (%s)",
				c.id, x.Action, x.DaysSinceAccess, x.Score, show(x.ArchiveInDays), show(x.PruneInDays),
				c.action, c.days, c.score, show(c.archive), show(c.prune), x.Verdict)
		}
	}
	x, err := worker.ExplainFact(ctx, db, "shelved", fixedWall)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(x.Verdict, "restore") {
		t.Errorf("archived fact verdict %q", x.Verdict)
	}
	// The explanation agrees with the sweep.
	r := sweepAtWall(t, db, 0, fixedWall)
	if r.Facts.Archived != 1 || r.Facts.Pruned != 0 {
		t.Errorf("sweep %+v, want only ctx-old archived", r.Facts)
	}
	if got := scalar[string](t, db, `SELECT status FROM mem_facts WHERE id = 'ctx-old'`); got != "archived" {
		t.Errorf("ctx-old is %s", got)
	}
}
