package worker_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker"
)

// The fact lifecycle (SPEC §4.3, reference 001): importance-scaled score,
// segment defaults, the sweep's keep / archive / prune, feedback and recall.

// lcSegments is the segment defaults table of SPEC §2 and reference 001.
var lcSegments = []struct {
	segment, tier         string
	importance, decayRate float64
}{
	{"identity", "permanent", 0.85, 0.01},
	{"correction", "long", 0.80, 0.015},
	{"relationship", "long", 0.75, 0.02},
	{"preference", "long", 0.70, 0.02},
	{"project", "long", 0.65, 0.025},
	{"knowledge", "long", 0.60, 0.03},
	{"context", "short", 0.40, 0.08},
}

// lcLambda is reference 001's decay rate per day: ln2 / (11.25 (1 + importance)) × 0.8 × (1 + decay_rate).
func lcLambda(importance, decayRate float64) float64 {
	return math.Ln2 / (11.25 * (1 + importance)) * 0.8 * (1 + decayRate)
}

// lcScore is reference 001's effective score of a non-permanent fact.
func lcScore(importance, decayRate, days, accessCount float64) float64 {
	s := importance * math.Exp(-lcLambda(importance, decayRate)*days) * (1 + math.Log(1+accessCount)*0.1)
	return math.Min(1, math.Max(0, s))
}

// lcCrossing solves lcScore = threshold for the days since access.
func lcCrossing(importance, decayRate, accessCount, threshold float64) float64 {
	return math.Log(importance*(1+math.Log(1+accessCount)*0.1)/threshold) / lcLambda(importance, decayRate)
}

type lcFact struct {
	id, segment, status string
	accessCount         int
	days                float64 // since last access (or since creation with nullAccess)
	nullAccess          bool
	want                string // keep, archive, prune
	immune              bool
}

// factRow reads a fact row as column → value.
func lcFactRow(t *testing.T, db *worker.DB, id string) map[string]any {
	t.Helper()
	rows, err := db.SQL.Query(`SELECT id, segment, tier, importance, decay_rate, access_count, last_accessed_at, status,
		content, created_at FROM mem_facts WHERE id = ?`, id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	if !rows.Next() {
		return nil
	}
	cols, _ := rows.Columns()
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	for i, c := range cols {
		switch v := vals[i].(type) {
		case []byte:
			m[c] = string(v)
		case int64:
			m[c] = float64(v) // as JSON reads it back
		default:
			m[c] = v
		}
	}
	return m
}

// TestFactSegmentDefaults: a fact inserted with only its segment gets the
// segment's tier, importance and decay rate from the trigger; values given
// explicitly are kept.
func TestFactSegmentDefaults(t *testing.T) {
	db, _ := newMemory(t, "")
	for _, s := range lcSegments {
		lcExec(t, db, `INSERT INTO mem_facts (id, segment) VALUES (?, ?)`, s.segment, s.segment)
		var tier string
		var importance, decayRate float64
		var count int
		if err := db.SQL.QueryRow(`SELECT tier, importance, decay_rate, access_count FROM mem_facts WHERE id = ?`, s.segment).
			Scan(&tier, &importance, &decayRate, &count); err != nil {
			t.Fatal(err)
		}
		if tier != s.tier || importance != s.importance || decayRate != s.decayRate || count != 0 {
			t.Errorf("%s: tier %s importance %v decay_rate %v count %d, want %s %v %v 0",
				s.segment, tier, importance, decayRate, count, s.tier, s.importance, s.decayRate)
		}
		// The same defaults as SQL functions.
		var ft string
		var fi, fd float64
		if err := db.SQL.QueryRow(`SELECT segment_tier(?), segment_importance(?), segment_decay_rate(?)`, s.segment, s.segment, s.segment).
			Scan(&ft, &fi, &fd); err != nil {
			t.Fatal(err)
		}
		if ft != s.tier || fi != s.importance || fd != s.decayRate {
			t.Errorf("segment functions for %s: %s %v %v", s.segment, ft, fi, fd)
		}
	}
	lcExec(t, db, `INSERT INTO mem_facts (id, segment, importance) VALUES ('own', 'preference', 0.98)`)
	if got := scalar[float64](t, db, `SELECT importance FROM mem_facts WHERE id = 'own'`); got != 0.98 {
		t.Errorf("explicit importance became %v", got)
	}
	if got := scalar[string](t, db, `SELECT tier || ' ' || decay_rate FROM mem_facts WHERE id = 'own'`); got != "long 0.02" {
		t.Errorf("explicit importance: the rest filled as %q", got)
	}
}

// TestFactLifecycle: every segment at ages either side of the scores 0.15
// and 0.05 (solved from reference 001's formula), plus permanent, confirmed,
// recalled and never-accessed facts. Short: kept ≥ 0.15, archived below,
// pruned below 0.05. Long: kept down to 0.05, archived below, never pruned
// (SPEC §4.3; reference 001's table also archives long facts at 0.05–0.15,
// the SPEC wins). The view reads the real time, so the clock is the real now.
func TestFactLifecycle(t *testing.T) {
	db, _ := newMemory(t, "")
	wall := time.Now().Truncate(time.Second)
	var facts []lcFact
	for _, s := range lcSegments {
		if s.tier == "permanent" {
			for _, days := range []float64{0, 10000} {
				facts = append(facts, lcFact{id: fmt.Sprintf("%s/%g", s.segment, days), segment: s.segment, status: "active",
					days: days, want: "keep", immune: true})
			}
			continue
		}
		d15 := lcCrossing(s.importance, s.decayRate, 0, 0.15)
		d05 := lcCrossing(s.importance, s.decayRate, 0, 0.05)
		wants := map[string][5]string{"short": {"keep", "keep", "archive", "archive", "prune"},
			"long": {"keep", "keep", "keep", "keep", "archive"}}[s.tier]
		for i, c := range []struct {
			label string
			days  float64
		}{{"fresh", 0}, {"above-0.15", d15 - 0.5}, {"below-0.15", d15 + 0.5}, {"above-0.05", d05 - 0.5}, {"below-0.05", d05 + 0.5}} {
			facts = append(facts, lcFact{id: s.segment + "/" + c.label, segment: s.segment, status: "active", days: c.days, want: wants[i]})
		}
		// Never accessed: the age counts from created_at.
		facts = append(facts, lcFact{id: s.segment + "/never-accessed-old", segment: s.segment, status: "active",
			days: d05 + 0.5, nullAccess: true, want: wants[4]})
		facts = append(facts, lcFact{id: s.segment + "/never-accessed-new", segment: s.segment, status: "active",
			days: 1, nullAccess: true, want: "keep"})
		// Confirmed: immune at any age.
		facts = append(facts, lcFact{id: s.segment + "/confirmed", segment: s.segment, status: "confirmed",
			days: 10000, want: "keep", immune: true})
	}
	// The access count lifts the score by 1 + ln(1 + n) × 0.1.
	d05n := lcCrossing(0.40, 0.08, 5, 0.05)
	if d05n-lcCrossing(0.40, 0.08, 0, 0.05) < 2 {
		t.Fatal("fixture: the access count should move the crossing by days")
	}
	facts = append(facts,
		lcFact{id: "context/recalled-above-0.05", segment: "context", status: "active", accessCount: 5, days: d05n - 0.5, want: "archive"},
		lcFact{id: "context/recalled-below-0.05", segment: "context", status: "active", accessCount: 5, days: d05n + 0.5, want: "prune"})

	for _, f := range facts {
		at := lcAgo(wall, f.days)
		if f.nullAccess {
			lcExec(t, db, `INSERT INTO mem_facts (id, segment, status, access_count, content, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
				f.id, f.segment, f.status, f.accessCount, "about "+f.id, at)
		} else {
			lcExec(t, db, `INSERT INTO mem_facts (id, segment, status, access_count, content, last_accessed_at) VALUES (?, ?, ?, ?, ?, ?)`,
				f.id, f.segment, f.status, f.accessCount, "about "+f.id, at)
		}
	}
	segment := map[string]int{}
	for i, s := range lcSegments {
		segment[s.segment] = i
	}
	modelScore := func(f lcFact) float64 {
		s := lcSegments[segment[f.segment]]
		if s.tier == "permanent" {
			return 1
		}
		return lcScore(s.importance, s.decayRate, f.days, float64(f.accessCount))
	}

	// mem_facts_scored shows the score and what a sweep would do.
	for _, f := range facts {
		var score float64
		var action string
		if err := db.SQL.QueryRow(`SELECT score, action FROM mem_facts_scored WHERE id = ?`, f.id).Scan(&score, &action); err != nil {
			t.Fatalf("%s: %v", f.id, err)
		}
		if want := modelScore(f); !near(score, want, 1e-6) {
			t.Errorf("%s: view score %v, want %v", f.id, score, want)
		}
		if action != f.want {
			t.Errorf("%s: view action %s, want %s", f.id, action, f.want)
		}
	}
	before := map[string]map[string]any{}
	var want worker.FactCounts
	for _, f := range facts {
		before[f.id] = lcFactRow(t, db, f.id)
		want.Processed++
		switch {
		case f.immune:
			want.Immune++
		case f.want == "archive":
			want.Archived++
		case f.want == "prune":
			want.Pruned++
		default:
			want.Kept++
		}
	}

	r := lcSweep(t, db, 0, wall)
	if r.Facts != want {
		t.Errorf("fact counts %+v, want %+v", r.Facts, want)
	}
	if !strings.Contains(r.Summary, fmt.Sprintf("%d facts archived, %d facts pruned", want.Archived, want.Pruned)) {
		t.Errorf("summary %q", r.Summary)
	}
	for _, f := range facts {
		row := lcFactRow(t, db, f.id)
		ev := lcEvents(t, db, `subject_kind = 'fact' AND subject_id = ?`, f.id)
		switch f.want {
		case "keep":
			if row == nil || row["status"] != f.status || len(ev) != 0 {
				t.Errorf("%s: row %v events %+v, want it untouched", f.id, row, ev)
			}
		case "archive":
			if row == nil || row["status"] != "archived" {
				t.Errorf("%s: row %v, want it archived", f.id, row)
			}
			if len(ev) != 1 || ev[0].Action != "archive" || ev[0].Reason != "faded" || ev[0].SweepID.Int64 != r.SweepID {
				t.Fatalf("%s: events %+v, want one archive", f.id, ev)
			}
		case "prune":
			if row != nil {
				t.Errorf("%s: row %v, want it pruned", f.id, row)
			}
			if len(ev) != 1 || ev[0].Action != "prune" || ev[0].Reason != "faded" {
				t.Fatalf("%s: events %+v, want one prune", f.id, ev)
			}
			// The snapshot is the whole row, so restore can bring it back.
			snap, _ := ev[0].Detail["fact"].(map[string]any)
			for col, v := range before[f.id] {
				if snap[col] != v {
					t.Errorf("%s: snapshot %s = %v (%T), want %v (%T)", f.id, col, snap[col], snap[col], v, v)
				}
			}
		}
		if len(ev) == 1 {
			// The fixture's ages are whole seconds, so the score is checked
			// at the days the sweep saw.
			days := lcNum(t, ev[0].Detail, "days_since_access")
			if !near(days, f.days, 1e-4) {
				t.Errorf("%s: event days %v, want %v", f.id, days, f.days)
			}
			g := f
			g.days = days
			if got := lcNum(t, ev[0].Detail, "score"); !near(got, modelScore(g), 1e-12) {
				t.Errorf("%s: event score %v, want %v", f.id, got, modelScore(g))
			}
		}
	}
	if got := scalar[string](t, db, `SELECT action FROM mem_facts_scored WHERE id = 'knowledge/below-0.05'`); got != "archived" {
		t.Errorf("view action of an archived fact %q", got)
	}

	// A second sweep at the same clock archives and prunes nothing.
	events := scalar[int](t, db, `SELECT count(*) FROM mem_events`)
	r = lcSweep(t, db, 0, wall)
	want2 := worker.FactCounts{Processed: want.Processed - want.Archived - want.Pruned, Kept: want.Kept, Immune: want.Immune}
	if r.Facts != want2 {
		t.Errorf("second sweep fact counts %+v, want %+v", r.Facts, want2)
	}
	if got := scalar[int](t, db, `SELECT count(*) FROM mem_events`); got != events {
		t.Errorf("second sweep wrote %d events", got-events)
	}
	// Much later, the permanent and confirmed facts are still untouched.
	r = lcSweep(t, db, 0, wall.AddDate(50, 0, 0))
	for _, f := range facts {
		if f.immune {
			if row := lcFactRow(t, db, f.id); row == nil || row["status"] != f.status {
				t.Errorf("%s after 50 years: %v", f.id, row)
			}
		}
	}
	if r.Facts.Immune != want.Immune || r.Facts.Kept != 0 {
		t.Errorf("50 years later: %+v", r.Facts)
	}
}

// TestFeedback: up → importance + 0.05 (max 1), clock reset, count + 1;
// down → importance − 0.10 (min 0), clock and count untouched. Each is
// logged as a 'feedback' event.
func TestFeedback(t *testing.T) {
	ctx := context.Background()
	db, _ := newMemory(t, "")
	old := lcAgo(lcWall, 10)
	lcExec(t, db, `INSERT INTO mem_facts (id, segment, importance, access_count, last_accessed_at) VALUES
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
		{"hi", true, lcWall, state{1.0, 4, lcWall.Unix()}, true},
		{"hi", true, lcWall.Add(time.Hour), state{1.0, 5, lcWall.Add(time.Hour).Unix()}, true},
		{"mid", true, lcWall, state{0.75, 4, lcWall.Unix()}, false},
		{"mid", false, lcWall.Add(time.Hour), state{0.65, 4, lcWall.Unix()}, false},
		{"lo", false, lcWall, state{0, 3, old}, true},
		{"lo", false, lcWall, state{0, 3, old}, true},
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
			c.AccessCountAfter != got.count || c.ClockReset != s.up || !c.Recorded || c.LastAccessedAt == nil || *c.LastAccessedAt != got.last {
			t.Errorf("step %d: change %+v for %+v -> %+v", i, c, before, got)
		}
		ev := lcEvents(t, db, `subject_kind = 'fact' AND subject_id = ?`, s.id)
		last := ev[len(ev)-1]
		dir := map[bool]string{true: "up", false: "down"}[s.up]
		if last.Action != "feedback" || last.Reason != dir || last.At != s.at.Unix() {
			t.Errorf("step %d: event %+v, want feedback %s at %d", i, last, dir, s.at.Unix())
		}
		if !near(lcNum(t, last.Detail, "importance_before"), before.importance, 1e-12) ||
			!near(lcNum(t, last.Detail, "importance_after"), got.importance, 1e-12) {
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
	old := lcAgo(lcWall, 10)
	lcExec(t, db, `INSERT INTO mem_facts (id, segment, access_count, last_accessed_at) VALUES ('f', 'knowledge', 2, ?)`, old)

	c, err := worker.Recall(ctx, db, "f", false, lcWall)
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
	if importance != 0.60 || count != 3 || last != lcWall.Unix() {
		t.Errorf("after recall: importance %v count %d last %d, want 0.60 3 %d", importance, count, last, lcWall.Unix())
	}
	if !c.Recorded || !c.ClockReset || c.AccessCountAfter != 3 || c.ImportanceAfter != 0.60 {
		t.Errorf("recall change %+v", c)
	}
	ev := lcEvents(t, db, `subject_kind = 'fact' AND subject_id = 'f'`)
	if len(ev) != 1 || ev[0].Action != "recall" || ev[0].At != lcWall.Unix() {
		t.Errorf("events %+v, want one recall", ev)
	}

	before := lcHashes(t, path)
	dump := lcDump(t, db)
	c, err = worker.Recall(ctx, db, "f", true, lcWall.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if c.Recorded || c.ClockReset || c.AccessCountAfter != 3 {
		t.Errorf("auto-recall change %+v", c)
	}
	lcSameFiles(t, before, lcHashes(t, path))
	if got := lcDump(t, db); got != dump {
		t.Errorf("auto-recall changed the database:\n%s\n%s", dump, got)
	}
	read()
	if count != 3 || last != lcWall.Unix() {
		t.Errorf("after auto-recall: count %d last %d", count, last)
	}
}

// TestFactUnknownAndArchived: an unknown id is ErrNoFact everywhere; an
// archived fact takes no feedback until restored.
func TestFactUnknownAndArchived(t *testing.T) {
	ctx := context.Background()
	db, _ := newMemory(t, `INSERT INTO mem_facts (id, segment, status, last_accessed_at) VALUES ('gone', 'context', 'archived', 0)`)
	calls := map[string]func() error{
		"feedback up":   func() error { _, err := worker.Feedback(ctx, db, "nope", true, lcWall); return err },
		"feedback down": func() error { _, err := worker.Feedback(ctx, db, "nope", false, lcWall); return err },
		"recall":        func() error { _, err := worker.Recall(ctx, db, "nope", false, lcWall); return err },
		"auto-recall":   func() error { _, err := worker.Recall(ctx, db, "nope", true, lcWall); return err },
		"explain":       func() error { _, err := worker.ExplainFact(ctx, db, "nope", lcWall); return err },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, worker.ErrNoFact) {
			t.Errorf("%s of an unknown fact: %v, want ErrNoFact", name, err)
		}
	}
	dump := lcDump(t, db)
	for _, up := range []bool{true, false} {
		if _, err := worker.Feedback(ctx, db, "gone", up, lcWall); err == nil || errors.Is(err, worker.ErrNoFact) {
			t.Errorf("feedback (up=%v) on an archived fact: %v", up, err)
		}
	}
	if _, err := worker.Recall(ctx, db, "gone", false, lcWall); err == nil {
		t.Error("recall of an archived fact succeeded")
	}
	if got := lcDump(t, db); got != dump {
		t.Errorf("refused feedback changed the database")
	}
}

// TestFeedbackMovesTheSweep: feedback and recall change what the next sweep
// does. A context fact just above 0.15 goes below it when marked down; one
// past 0.05 survives when recalled or marked up; its twin without is pruned.
func TestFeedbackMovesTheSweep(t *testing.T) {
	ctx := context.Background()
	db, _ := newMemory(t, "")
	d15 := lcCrossing(0.40, 0.08, 0, 0.15)
	d05 := lcCrossing(0.40, 0.08, 0, 0.05)
	if s := lcScore(0.30, 0.08, d15-0.5, 0); s >= 0.15 {
		t.Fatalf("fixture: a down-voted fact scores %v", s)
	}
	for id, days := range map[string]float64{"down": d15 - 0.5, "twin-down": d15 - 0.5,
		"recalled": d05 + 0.5, "upvoted": d05 + 0.5, "twin-old": d05 + 0.5, "auto": d05 + 0.5} {
		lcExec(t, db, `INSERT INTO mem_facts (id, segment, last_accessed_at) VALUES (?, 'context', ?)`, id, lcAgo(lcWall, days))
	}
	for _, call := range []func() error{
		func() error { _, err := worker.Feedback(ctx, db, "down", false, lcWall); return err },
		func() error { _, err := worker.Recall(ctx, db, "recalled", false, lcWall); return err },
		func() error { _, err := worker.Feedback(ctx, db, "upvoted", true, lcWall); return err },
		func() error { _, err := worker.Recall(ctx, db, "auto", true, lcWall); return err },
	} {
		if err := call(); err != nil {
			t.Fatal(err)
		}
	}
	r := lcSweep(t, db, 0, lcWall)
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
	d15 := lcCrossing(0.40, 0.08, 0, 0.15)
	d05 := lcCrossing(0.40, 0.08, 0, 0.05)
	k05 := lcCrossing(0.60, 0.03, 0, 0.05)
	for _, f := range []struct {
		id, segment, status string
		days                float64
	}{
		{"ctx", "context", "active", 0}, {"ctx-old", "context", "active", d15 + 1}, {"know", "knowledge", "active", 10},
		{"me", "identity", "active", 1000}, {"sure", "context", "confirmed", 1000}, {"shelved", "context", "archived", 1000},
	} {
		lcExec(t, db, `INSERT INTO mem_facts (id, segment, status, last_accessed_at) VALUES (?, ?, ?, ?)`, f.id, f.segment, f.status, lcAgo(lcWall, f.days))
	}
	// Never accessed: days since creation.
	lcExec(t, db, `INSERT INTO mem_facts (id, segment, created_at) VALUES ('new', 'context', ?)`, lcAgo(lcWall, 2))
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
		{"ctx-old", "archive", d15 + 1, lcScore(0.40, 0.08, d15+1, 0), in(0), in(d05 - d15 - 1)},
		{"know", "keep", 10, lcScore(0.60, 0.03, 10, 0), in(k05 - 10), nil},
		{"me", "keep", 1000, 1, nil, nil},
		{"sure", "keep", 1000, lcScore(0.40, 0.08, 1000, 0), nil, nil},
		{"new", "keep", 2, lcScore(0.40, 0.08, 2, 0), in(d15 - 2), in(d05 - 2)},
	}
	for _, c := range cases {
		x, err := worker.ExplainFact(ctx, db, c.id, lcWall)
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
	x, err := worker.ExplainFact(ctx, db, "shelved", lcWall)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(x.Verdict, "restore") {
		t.Errorf("archived fact verdict %q", x.Verdict)
	}
	// The explanation agrees with the sweep.
	r := lcSweep(t, db, 0, lcWall)
	if r.Facts.Archived != 1 || r.Facts.Pruned != 0 {
		t.Errorf("sweep %+v, want only ctx-old archived", r.Facts)
	}
	if got := scalar[string](t, db, `SELECT status FROM mem_facts WHERE id = 'ctx-old'`); got != "archived" {
		t.Errorf("ctx-old is %s", got)
	}
}
