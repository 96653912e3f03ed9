package worker_test

// The fact lifecycle (docs/facts.md, reference 001): segment defaults and the
// sweep's keep / archive / prune at ages either side of each threshold.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/worker"
)

// factCase is one fact of TestFactLifecycle and what a sweep must do with it.
type factCase struct {
	id, segment, status string
	accessCount         int
	days                float64 // since last access (or since creation with nullAccess)
	nullAccess          bool
	want                string // keep, archive, prune
	immune              bool
}

// TestFactSegmentDefaults: a fact inserted with only its segment gets the
// segment's tier, importance and decay rate from the trigger; values given
// explicitly are kept.
func TestFactSegmentDefaults(t *testing.T) {
	db, _ := newMemory(t, "")
	for _, s := range segmentDefaults {
		mustExec(t, db, `INSERT INTO mem_facts (id, segment) VALUES (?, ?)`, s.Name, s.Name)
		var tier string
		var importance, decayRate float64
		var count int
		if err := db.SQL.QueryRow(`SELECT tier, importance, decay_rate, access_count FROM mem_facts WHERE id = ?`, s.Name).
			Scan(&tier, &importance, &decayRate, &count); err != nil {
			t.Fatal(err)
		}
		if tier != s.Tier || importance != s.Importance || decayRate != s.DecayRate || count != 0 {
			t.Errorf("%s: tier %s importance %v decay_rate %v count %d, want %s %v %v 0",
				s.Name, tier, importance, decayRate, count, s.Tier, s.Importance, s.DecayRate)
		}
		// The same defaults as SQL functions.
		var ft string
		var fi, fd float64
		if err := db.SQL.QueryRow(`SELECT segment_tier(?), segment_importance(?), segment_decay_rate(?)`, s.Name, s.Name, s.Name).
			Scan(&ft, &fi, &fd); err != nil {
			t.Fatal(err)
		}
		if ft != s.Tier || fi != s.Importance || fd != s.DecayRate {
			t.Errorf("segment functions for %s: %s %v %v", s.Name, ft, fi, fd)
		}
	}
	mustExec(t, db, `INSERT INTO mem_facts (id, segment, importance) VALUES ('own', 'preference', 0.98)`)
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
// (docs/facts.md; reference 001's table also archives long facts at 0.05–0.15,
// docs/facts.md wins). The view reads the wall clock pinned in mem_config.
func TestFactLifecycle(t *testing.T) {
	db, _ := newMemory(t, "")
	wall := pinWall(t, db, fixedWall)
	var facts []factCase
	for _, s := range segmentDefaults {
		if s.Tier == "permanent" {
			for _, days := range []float64{0, 10000} {
				facts = append(facts, factCase{id: fmt.Sprintf("%s/%g", s.Name, days), segment: s.Name, status: "active",
					days: days, want: "keep", immune: true})
			}
			continue
		}
		d15 := factCrossing(s.Importance, s.DecayRate, 0, 0.15)
		d05 := factCrossing(s.Importance, s.DecayRate, 0, 0.05)
		wants := map[string][5]string{"short": {"keep", "keep", "archive", "archive", "prune"},
			"long": {"keep", "keep", "keep", "keep", "archive"}}[s.Tier]
		for i, c := range []struct {
			label string
			days  float64
		}{{"fresh", 0}, {"above-0.15", d15 - 0.5}, {"below-0.15", d15 + 0.5}, {"above-0.05", d05 - 0.5}, {"below-0.05", d05 + 0.5}} {
			facts = append(facts, factCase{id: s.Name + "/" + c.label, segment: s.Name, status: "active", days: c.days, want: wants[i]})
		}
		// Never accessed: the age counts from created_at.
		facts = append(facts, factCase{id: s.Name + "/never-accessed-old", segment: s.Name, status: "active",
			days: d05 + 0.5, nullAccess: true, want: wants[4]})
		facts = append(facts, factCase{id: s.Name + "/never-accessed-new", segment: s.Name, status: "active",
			days: 1, nullAccess: true, want: "keep"})
		// Confirmed: immune at any age.
		facts = append(facts, factCase{id: s.Name + "/confirmed", segment: s.Name, status: "confirmed",
			days: 10000, want: "keep", immune: true})
	}
	// The access count lifts the score by 1 + ln(1 + n) × 0.1.
	d05n := factCrossing(0.40, 0.08, 5, 0.05)
	if d05n-factCrossing(0.40, 0.08, 0, 0.05) < 2 {
		t.Fatal("fixture: the access count should move the crossing by days")
	}
	facts = append(facts,
		factCase{id: "context/recalled-above-0.05", segment: "context", status: "active", accessCount: 5, days: d05n - 0.5, want: "archive"},
		factCase{id: "context/recalled-below-0.05", segment: "context", status: "active", accessCount: 5, days: d05n + 0.5, want: "prune"})

	for _, f := range facts {
		at := daysAgo(wall, f.days)
		if f.nullAccess {
			mustExec(t, db, `INSERT INTO mem_facts (id, segment, status, access_count, content, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
				f.id, f.segment, f.status, f.accessCount, "about "+f.id, at)
		} else {
			mustExec(t, db, `INSERT INTO mem_facts (id, segment, status, access_count, content, last_accessed_at) VALUES (?, ?, ?, ?, ?, ?)`,
				f.id, f.segment, f.status, f.accessCount, "about "+f.id, at)
		}
	}
	segment := map[string]int{}
	for i, s := range segmentDefaults {
		segment[s.Name] = i
	}
	modelScore := func(f factCase) float64 {
		s := segmentDefaults[segment[f.segment]]
		if s.Tier == "permanent" {
			return 1
		}
		return factScore(s.Importance, s.DecayRate, f.days, float64(f.accessCount))
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
		before[f.id] = factRow(t, db, f.id)
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

	r := sweepAtWall(t, db, 0, wall)
	if r.Facts != want {
		t.Errorf("fact counts %+v, want %+v", r.Facts, want)
	}
	if !strings.Contains(r.Summary, fmt.Sprintf("%d facts archived, %d facts pruned", want.Archived, want.Pruned)) {
		t.Errorf("summary %q", r.Summary)
	}
	for _, f := range facts {
		row := factRow(t, db, f.id)
		ev := eventsWhere(t, db, `subject_kind = 'fact' AND subject_id = ?`, f.id)
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
			days := num(t, ev[0].Detail, "days_since_access")
			if !near(days, f.days, 1e-4) {
				t.Errorf("%s: event days %v, want %v", f.id, days, f.days)
			}
			g := f
			g.days = days
			if got := num(t, ev[0].Detail, "score"); !near(got, modelScore(g), 1e-12) {
				t.Errorf("%s: event score %v, want %v", f.id, got, modelScore(g))
			}
		}
	}
	if got := scalar[string](t, db, `SELECT action FROM mem_facts_scored WHERE id = 'knowledge/below-0.05'`); got != "archived" {
		t.Errorf("view action of an archived fact %q", got)
	}

	// A second sweep at the same clock archives and prunes nothing.
	events := scalar[int](t, db, `SELECT count(*) FROM mem_events`)
	r = sweepAtWall(t, db, 0, wall)
	want2 := worker.FactCounts{Processed: want.Processed - want.Archived - want.Pruned, Kept: want.Kept, Immune: want.Immune}
	if r.Facts != want2 {
		t.Errorf("second sweep fact counts %+v, want %+v", r.Facts, want2)
	}
	if got := scalar[int](t, db, `SELECT count(*) FROM mem_events`); got != events {
		t.Errorf("second sweep wrote %d events", got-events)
	}
	// Much later, the permanent and confirmed facts are still untouched.
	r = sweepAtWall(t, db, 0, wall.AddDate(50, 0, 0))
	for _, f := range facts {
		if f.immune {
			if row := factRow(t, db, f.id); row == nil || row["status"] != f.status {
				t.Errorf("%s after 50 years: %v", f.id, row)
			}
		}
	}
	if r.Facts.Immune != want.Immune || r.Facts.Kept != 0 {
		t.Errorf("50 years later: %+v", r.Facts)
	}
}
