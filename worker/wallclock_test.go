package worker_test

// Wall-clock columns as apps write them (docs/facts.md): unix seconds (integer
// or real) and ISO-8601 / SQLite datetime text give the same decisions in
// the sweep, the views, explain and feedback; anything else is a bad row,
// skipped, counted and named, that stops nothing.

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// wallForm writes an instant the way one kind of app does: as text (or a
// number) and as the unix seconds it stands for.
type wallForm struct {
	name   string
	format func(at time.Time) (value any, seconds any)
}

// unixValue is the unix seconds of an instant: an integer on a whole
// second, else a real.
func unixValue(at time.Time) any {
	if at.Nanosecond() == 0 {
		return at.Unix()
	}
	return float64(at.Unix()) + float64(at.Nanosecond())/1e9
}

// textForm formats the instant, first moved to its precision, in zone.
func textForm(layout string, precision time.Duration, plus time.Duration, zone *time.Location) func(time.Time) (any, any) {
	return func(at time.Time) (any, any) {
		at = at.Truncate(precision).Add(plus)
		return at.In(zone).Format(layout), unixValue(at)
	}
}

var (
	plus2    = time.FixedZone("", 2*3600)
	minus530 = time.FixedZone("", -(5*3600 + 30*60))
)

// wallForms are the forms every wall-clock column takes.
var wallForms = []wallForm{
	{"unix-integer", func(at time.Time) (any, any) { return at.Unix(), at.Unix() }},
	{"unix-real", func(at time.Time) (any, any) {
		v := float64(at.Unix()) + 0.25
		return v, v
	}},
	{"sqlite-datetime", textForm("2006-01-02 15:04:05", time.Second, 0, time.UTC)},
	{"iso-z", textForm("2006-01-02T15:04:05Z", time.Second, 0, time.UTC)},
	{"iso-fraction", textForm("2006-01-02 15:04:05.000", time.Second, 250*time.Millisecond, time.UTC)},
	{"iso-offset-fraction", textForm("2006-01-02T15:04:05.000000-07:00", time.Second, 125*time.Millisecond, plus2)},
	{"iso-offset-basic", textForm("2006-01-02T15:04:05-0700", time.Second, 0, minus530)},
	{"iso-z-offset", textForm("2006-01-02T15:04:05.0Z07:00", time.Second, 500*time.Millisecond, time.UTC)},
	{"minutes", textForm("2006-01-02 15:04", time.Minute, 0, time.UTC)},
	{"minutes-t", textForm("2006-01-02T15:04", time.Minute, 0, time.UTC)},
	{"date", textForm("2006-01-02", 24*time.Hour, 0, time.UTC)},
}

// badWallValues are values no wall-clock column takes.
var badWallValues = map[string]any{
	"garbage":    "yesterday",
	"no-day":     "2026-02-29 10:00:00", // 2026 is not a leap year
	"hour-24":    "2026-01-05 24:00:00",
	"space-zone": "2026-01-05 10:00:00 UTC",
	"blob":       []byte{0, 1},
	"trailing":   "2026-01-05T10:00:00Zjunk",
}

// TestWallClockFacts: facts whose access time (or, never accessed, creation
// time) is text are scored, scheduled and swept exactly as their twins in
// unix seconds, either side of both thresholds; an access time in any form
// makes created_at irrelevant; bad values are named invalid rows.
func TestWallClockFacts(t *testing.T) {
	db, _ := newMemory(t, "")
	wall := pinWall(t, db, fixedWall)
	d15 := factCrossing(0.40, 0.08, 0, 0.15)
	d05 := factCrossing(0.40, 0.08, 0, 0.05)
	// Each form truncates by at most a day, which never takes a fact
	// across a threshold from 1.5 days away.
	ages := []struct {
		label string
		days  float64
		want  string
	}{{"above-0.15", d15 - 1.5, "keep"}, {"below-0.15", d15 + 1.5, "archive"}, {"below-0.05", d05 + 1.5, "prune"}}
	type twin struct{ text, unix, want string }
	var twins []twin
	insert := func(id, column string, v any) {
		mustExec(t, db, `INSERT INTO mem_facts (id, segment, content, created_at) VALUES (?, 'context', 'about '||?, 1)`, id, id)
		if column == "created_at" {
			mustExec(t, db, `UPDATE mem_facts SET created_at = ?, last_accessed_at = NULL WHERE id = ?`, v, id)
		} else {
			mustExec(t, db, `UPDATE mem_facts SET last_accessed_at = ? WHERE id = ?`, v, id)
		}
	}
	for _, column := range []string{"last_accessed_at", "created_at"} {
		for _, f := range wallForms {
			for _, a := range ages {
				value, seconds := f.format(wall.Add(-time.Duration(a.days * daySeconds * float64(time.Second))))
				tw := twin{fmt.Sprintf("%s/%s/%s", column, f.name, a.label), fmt.Sprintf("%s/%s/%s/unix", column, f.name, a.label), a.want}
				insert(tw.text, column, value)
				insert(tw.unix, column, seconds)
				twins = append(twins, tw)
			}
		}
	}
	// An access time makes created_at irrelevant, whatever it holds.
	for name, v := range map[string]any{"iso": "2020-01-01T00:00:00Z", "garbage": "long ago", "real": 1.5} {
		id := "created-" + name + "/accessed-old"
		mustExec(t, db, `INSERT INTO mem_facts (id, segment, last_accessed_at, created_at) VALUES (?, 'context', ?, ?)`,
			id, daysAgo(wall, d05+1.5), v)
		twins = append(twins, twin{id, "last_accessed_at/unix-integer/below-0.05", "prune"})
	}
	bad := map[string]string{}
	for name, v := range badWallValues {
		for _, column := range []string{"last_accessed_at", "created_at"} {
			id := "bad-" + column + "/" + name
			insert(id, column, v)
			bad[id] = column
		}
	}

	// The view scores each text row as its twin, and skips the bad rows.
	viewed := map[string][2]any{}
	rows, err := db.SQL.Query(`SELECT id, score, action FROM mem_facts_scored`)
	if err != nil {
		t.Fatalf("mem_facts_scored: %v", err)
	}
	for rows.Next() {
		var id, action string
		var score float64
		if err := rows.Scan(&id, &score, &action); err != nil {
			t.Fatal(err)
		}
		viewed[id] = [2]any{score, action}
	}
	rows.Close()
	for _, tw := range twins {
		got, ok := viewed[tw.text]
		if !ok {
			t.Errorf("%s: not in mem_facts_scored", tw.text)
			continue
		}
		if want := viewed[tw.unix]; !near(got[0].(float64), want[0].(float64), 1e-12) || got[1] != tw.want || want[1] != tw.want {
			t.Errorf("%s: view %v, twin %v, want action %s", tw.text, got, want, tw.want)
		}
	}
	for id := range bad {
		if _, ok := viewed[id]; ok {
			t.Errorf("%s: a bad row is in mem_facts_scored", id)
		}
	}

	r := sweepAtWall(t, db, 0, wall)
	if r.InvalidRows.Count != int64(len(bad)) {
		t.Errorf("invalid rows %d, want %d: %+v", r.InvalidRows.Count, len(bad), r.InvalidRows.Sample)
	}
	problems := map[string]string{}
	rows, err = db.SQL.Query(`SELECT id, problem FROM mem_fact_due WHERE problem IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, problem string
		if err := rows.Scan(&id, &problem); err != nil {
			t.Fatal(err)
		}
		problems[id] = problem
	}
	rows.Close()
	for id, column := range bad {
		if p := problems[id]; !strings.HasPrefix(p, column+" is ") {
			t.Errorf("%s: problem %q, want it to name %s", id, p, column)
		}
		if row := factRow(t, db, id); row == nil || row["status"] != "active" {
			t.Errorf("%s: a bad row was touched: %v", id, row)
		}
	}
	if len(problems) != len(bad) {
		t.Errorf("problems %v, want the %d bad rows alone", problems, len(bad))
	}
	fate := func(id string) string {
		row := factRow(t, db, id)
		switch {
		case row == nil:
			return "prune"
		case row["status"] == "archived":
			return "archive"
		}
		return "keep"
	}
	due := func(id string) any {
		return scalar[any](t, db, `SELECT due_wall FROM mem_fact_due WHERE id = ?`, id)
	}
	for _, tw := range twins {
		if got, twin := fate(tw.text), fate(tw.unix); got != tw.want || twin != tw.want {
			t.Errorf("%s: swept to %s (its twin %s), want %s", tw.text, got, twin, tw.want)
		}
		if tw.want != "keep" {
			ev := eventsFor(t, db, "fact", tw.text)
			tev := eventsFor(t, db, "fact", tw.unix)
			if len(ev) != 1 || len(tev) != 1 || !near(num(t, ev[0].Detail, "days_since_access"), num(t, tev[0].Detail, "days_since_access"), 1e-9) {
				t.Errorf("%s: events %+v, twin's %+v", tw.text, ev, tev)
			}
			continue
		}
		// Kept: scheduled for the same instant as its twin.
		if got, want := due(tw.text), due(tw.unix); got == nil || want == nil || !near(got.(float64), want.(float64), 1e-6) {
			t.Errorf("%s: due at %v, its twin at %v", tw.text, got, want)
		}
	}

	// Three days on, an incremental sweep archives every kept pair alike.
	later := wall.Add(3 * 24 * time.Hour)
	r = sweepAtWall(t, db, 0, later)
	if r.Full {
		t.Error("the second sweep was full; want the incremental one")
	}
	for _, tw := range twins {
		if tw.want == "keep" {
			if got, twin := fate(tw.text), fate(tw.unix); got != "archive" || twin != "archive" {
				t.Errorf("%s three days later: %s (its twin %s), want both archived", tw.text, got, twin)
			}
		}
	}
	if r.InvalidRows.Count != int64(len(bad)) {
		t.Errorf("second sweep: invalid rows %d, want %d", r.InvalidRows.Count, len(bad))
	}
}

// TestWallClockEdges: edges under wall-clock policies whose last_observed_at
// is text decay, are excluded and are scheduled exactly as their twins in
// unix seconds, either side of the threshold, in the sweep and the views;
// bad values are named invalid rows the views leave out.
func TestWallClockEdges(t *testing.T) {
	var leaves []string
	for i := range 2*len(wallForms)*2*2 + 2*len(badWallValues) {
		leaves = append(leaves, fmt.Sprintf("n%03d", i))
	}
	db, _ := newMemory(t, knowledgeBlocks(append([]string{"a"}, leaves...)...))
	wall := pinWall(t, db, fixedWall)
	// A 10-day half-life below 0.5: the threshold is crossed at 10 days.
	addPolicy(t, db, "seen", "half_life", `{"half_life": "10d"}`, "wall", 0.5, "delete", "keep")
	addPolicy(t, db, "heard", "half_life", `{"half_life": "10d"}`, "wall", 0.5, "exclude", "keep")
	type twin struct {
		text, unix, relation string
		below                bool
	}
	var twins []twin
	next := 0
	leaf := func() string { next++; return "a-" + leaves[next-1] }
	add := func(relation string, observed any) string {
		key := leaf()
		addEdge(t, db, "a", strings.TrimPrefix(key, "a-"), relation, 1.0, nil, observed, false)
		return key
	}
	for _, relation := range []string{"seen", "heard"} {
		for _, f := range wallForms {
			for _, days := range []float64{8.5, 11.5} {
				value, seconds := f.format(wall.Add(-time.Duration(days * daySeconds * float64(time.Second))))
				twins = append(twins, twin{add(relation, value), add(relation, seconds), relation, days > 10})
			}
		}
	}
	bad := map[string]bool{}
	for _, relation := range []string{"seen", "heard"} {
		for _, v := range badWallValues {
			bad[add(relation, v)] = true
		}
	}

	type viewRow struct {
		effective float64
		state     string
	}
	view := map[string]viewRow{}
	rows, err := db.SQL.Query(`SELECT from_id || '-' || to_id, effective_weight, state FROM mem_edges_effective`)
	if err != nil {
		t.Fatalf("mem_edges_effective: %v", err)
	}
	for rows.Next() {
		var k string
		var v viewRow
		if err := rows.Scan(&k, &v.effective, &v.state); err != nil {
			t.Fatal(err)
		}
		view[k] = v
	}
	rows.Close()
	for _, tw := range twins {
		got, want := view[tw.text], view[tw.unix]
		wantState := map[bool]string{true: "decayed", false: "live"}[tw.below]
		if got.state != wantState || want.state != wantState || !near(got.effective, want.effective, 1e-12) {
			t.Errorf("%s (%s): view %+v, twin %+v, want %s", tw.text, tw.relation, got, want, wantState)
		}
	}
	for k := range bad {
		if _, ok := view[k]; ok {
			t.Errorf("%s: a bad row is in mem_edges_effective", k)
		}
	}
	for _, v := range []string{"mem_edges_live", "mem_edges_decayed"} {
		viewSet(t, db, v)
	}

	r := sweepAtWall(t, db, 0, wall)
	if r.InvalidRows.Count != int64(len(bad)) {
		t.Errorf("invalid rows %d, want %d: %+v", r.InvalidRows.Count, len(bad), r.InvalidRows.Sample)
	}
	for k := range bad {
		from, to, _ := strings.Cut(k, "-")
		p := scalar[string](t, db, `SELECT coalesce(problem, '') FROM mem_edge_due WHERE from_id = ? AND to_id = ?`, from, to)
		if !strings.HasPrefix(p, "last_observed_at is ") {
			t.Errorf("%s: problem %q, want it to name last_observed_at", k, p)
		}
	}
	edges := edgeSet(t, db)
	for k := range bad {
		if !edges[k] {
			t.Errorf("%s: a bad row was removed", k)
		}
	}
	state := func(k string) string {
		from, to, _ := strings.Cut(k, "-")
		switch {
		case !edges[k]:
			return "deleted"
		case excludedFlag(t, db, from, to) != 0:
			return "excluded"
		}
		return "live"
	}
	for _, tw := range twins {
		want := "live"
		if tw.below {
			want = map[string]string{"seen": "deleted", "heard": "excluded"}[tw.relation]
		}
		if got, twin := state(tw.text), state(tw.unix); got != want || twin != want {
			t.Errorf("%s (%s): %s, its twin %s, want %s", tw.text, tw.relation, got, twin, want)
		}
		if want != "live" {
			continue
		}
		due := func(k string) float64 {
			from, to, _ := strings.Cut(k, "-")
			return scalar[float64](t, db, `SELECT due_wall FROM mem_edge_due WHERE from_id = ? AND to_id = ?`, from, to)
		}
		if got, twin := due(tw.text), due(tw.unix); !near(got, twin, 1e-6) || math.Abs(got-float64(wall.Unix())) > 2*daySeconds {
			t.Errorf("%s: due at %v, its twin at %v", tw.text, got, twin)
		}
	}

	// Three days on, an incremental sweep takes every live pair alike.
	r = sweepAtWall(t, db, 0, wall.Add(3*24*time.Hour))
	if r.Full {
		t.Error("the second sweep was full; want the incremental one")
	}
	edges = edgeSet(t, db)
	for _, tw := range twins {
		want := map[string]string{"seen": "deleted", "heard": "excluded"}[tw.relation]
		if got, twin := state(tw.text), state(tw.unix); got != want || twin != want {
			t.Errorf("%s (%s) three days later: %s, its twin %s, want %s", tw.text, tw.relation, got, twin, want)
		}
	}
}
