package worker_test

// Relation policy curves (docs/policies.md, references 003 and 004): half-life,
// linear, multi-linear, exponential and power-law, on either clock, with
// rows just before and just after each death time or minimum.

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker"
)

// TestPolicyHalfLifeExclude: half-life 90 days on the wall clock, minimum
// 0.10, soft exclusion (reference 004). 290 days: 0.5^(290/90) = 0.107,
// kept; 310 days: 0.5^(310/90) = 0.092, excluded but kept for audit. The
// views read the wall clock pinned in mem_config.
func TestPolicyHalfLifeExclude(t *testing.T) {
	db, _ := newMemory(t, knowledgeBlocks("a", "b", "c", "d", "e"))
	wall := pinWall(t, db, fixedWall)
	addPolicy(t, db, "works_on", "half_life", `{"half_life":"90d"}`, "wall", 0.10, "exclude", "keep")
	addEdge(t, db, "a", "b", "works_on", 1.0, 0, daysAgo(wall, 290), false)
	addEdge(t, db, "a", "c", "works_on", 1.0, 0, daysAgo(wall, 310), false)
	addEdge(t, db, "a", "d", "works_on", 1.0, 0, daysAgo(wall, 1000), true)
	addEdge(t, db, "a", "e", "works_on", 1.0, 0, daysAgo(wall, 1), false)

	// Before any sweep the views already tell live from decayed.
	live, decayed := viewSet(t, db, "mem_edges_live"), viewSet(t, db, "mem_edges_decayed")
	for _, k := range []string{"a-b", "a-d", "a-e"} {
		if !live[k] || decayed[k] {
			t.Errorf("%s: live=%v decayed=%v before the sweep, want live", k, live[k], decayed[k])
		}
	}
	if live["a-c"] || !decayed["a-c"] {
		t.Errorf("a-c: live=%v decayed=%v before the sweep, want decayed", live["a-c"], decayed["a-c"])
	}
	for _, c := range []struct {
		edge string
		days float64
	}{{"b", 290}, {"c", 310}} {
		got := scalar[float64](t, db, `SELECT effective_weight FROM mem_edges_effective WHERE from_id = 'a' AND to_id = ?`, c.edge)
		if want := math.Pow(0.5, c.days/90); !near(got, want, 1e-5) {
			t.Errorf("a-%s effective weight %v, want %v", c.edge, got, want)
		}
	}

	r := sweepAtWall(t, db, 0, wall)
	expectEdges(t, db, []string{"a-b", "a-c", "a-d", "a-e"}, nil)
	if got := excludedFlag(t, db, "a", "c"); got != 1 {
		t.Errorf("a-c excluded = %d, want 1", got)
	}
	for _, k := range []string{"b", "d", "e"} {
		if got := excludedFlag(t, db, "a", k); got != 0 {
			t.Errorf("a-%s excluded = %d, want 0", k, got)
		}
	}
	ev := edgeEvents(t, db, "a", "c")
	if len(ev) != 1 || ev[0].Action != "exclude" || ev[0].Reason != "below_minimum:works_on" {
		t.Fatalf("a-c events %+v, want one exclude below_minimum:works_on", ev)
	}
	if got, want := num(t, ev[0].Detail, "effective_weight"), math.Pow(0.5, 310.0/90); !near(got, want, 1e-9) {
		t.Errorf("exclude event effective weight %v, want %v", got, want)
	}
	if got := num(t, ev[0].Detail, "threshold"); got != 0.10 {
		t.Errorf("exclude event threshold %v, want 0.10", got)
	}
	if got := num(t, ev[0].Detail, "elapsed"); !near(got, 310, 1e-9) {
		t.Errorf("exclude event elapsed %v days, want 310", got)
	}
	if n := len(eventsWhere(t, db, `subject_kind = 'edge' AND subject_id != ?`, edgeSubject("a", "c"))); n != 0 {
		t.Errorf("%d events for other edges, want 0", n)
	}
	want := worker.PolicyCount{RelationType: "works_on", Processed: 3, Decayed: 0, BelowMinimum: 1, Pinned: 1, Excluded: 1}
	if got := policyCount(t, r, "works_on"); got != want {
		t.Errorf("policy counts %+v, want %+v", got, want)
	}
	if r.TotalEdgesAfter != 4 {
		t.Errorf("total_edges_after %d, want 4 (an excluded edge stays)", r.TotalEdgesAfter)
	}
	if !strings.Contains(r.Summary, "1 works_on edges excluded") {
		t.Errorf("summary %q does not mention the exclusion", r.Summary)
	}
	live, decayed = viewSet(t, db, "mem_edges_live"), viewSet(t, db, "mem_edges_decayed")
	if live["a-c"] || !decayed["a-c"] || !live["a-b"] || decayed["a-b"] || !live["a-d"] {
		t.Errorf("after the sweep live=%v decayed=%v", live, decayed)
	}

	// A second sweep at the same clock excludes nothing new.
	r = sweepAtWall(t, db, 0, wall)
	want = worker.PolicyCount{RelationType: "works_on", Processed: 3, BelowMinimum: 1, Pinned: 1}
	if got := policyCount(t, r, "works_on"); got != want {
		t.Errorf("second sweep policy counts %+v, want %+v", got, want)
	}
	if got := eventActions(edgeEvents(t, db, "a", "c")); !slices.Equal(got, []string{"exclude"}) {
		t.Errorf("a-c events after a second sweep %v", got)
	}

	// Re-observation: live at once, before any sweep; the next sweep
	// readmits it and logs the readmission.
	mustExec(t, db, `UPDATE mem_edges SET weight = 1.0, last_observed_at = ? WHERE from_id = 'a' AND to_id = 'c'`, wall.Unix())
	live, decayed = viewSet(t, db, "mem_edges_live"), viewSet(t, db, "mem_edges_decayed")
	if !live["a-c"] || decayed["a-c"] {
		t.Errorf("re-observed a-c: live=%v decayed=%v, want live at once", live["a-c"], decayed["a-c"])
	}
	later := wall.Add(time.Minute)
	r = sweepAtWall(t, db, 0, later)
	if got := excludedFlag(t, db, "a", "c"); got != 0 {
		t.Errorf("re-observed a-c excluded = %d after the sweep, want 0", got)
	}
	ev = edgeEvents(t, db, "a", "c")
	if got := eventActions(ev); !slices.Equal(got, []string{"exclude", "readmit"}) {
		t.Fatalf("a-c events %v, want exclude then readmit", got)
	}
	if ev[1].Reason != "reobserved:works_on" {
		t.Errorf("readmit reason %q", ev[1].Reason)
	}
	want = worker.PolicyCount{RelationType: "works_on", Processed: 3, Pinned: 1, Readmitted: 1}
	if got := policyCount(t, r, "works_on"); got != want {
		t.Errorf("readmitting sweep policy counts %+v, want %+v", got, want)
	}
}

// TestPolicyHalfLifeDelete: the same curve with action 'delete' removes the
// 310-day edge with a decay event 'policy:<relation>' and keeps the 290-day one.
func TestPolicyHalfLifeDelete(t *testing.T) {
	db, _ := newMemory(t, knowledgeBlocks("a", "b", "c"))
	addPolicy(t, db, "works_on", "half_life", `{"half_life":"90d"}`, "wall", 0.10, "delete", "keep")
	addEdge(t, db, "a", "b", "works_on", 1.0, nil, daysAgo(fixedWall, 290), false)
	addEdge(t, db, "a", "c", "works_on", 1.0, nil, daysAgo(fixedWall, 310), false)

	r := sweepAtWall(t, db, 0, fixedWall)
	expectEdges(t, db, []string{"a-b"}, []string{"a-c"})
	ev := edgeEvents(t, db, "a", "c")
	if len(ev) != 1 || ev[0].Action != "decay" || ev[0].Reason != "policy:works_on" {
		t.Fatalf("a-c events %+v, want one decay policy:works_on", ev)
	}
	if ev[0].SweepID.Int64 != r.SweepID || ev[0].At != fixedWall.Unix() {
		t.Errorf("event sweep %v at %d, want sweep %d at %d", ev[0].SweepID, ev[0].At, r.SweepID, fixedWall.Unix())
	}
	if got, want := num(t, ev[0].Detail, "effective_weight"), math.Pow(0.5, 310.0/90); !near(got, want, 1e-9) {
		t.Errorf("decay event effective weight %v, want %v", got, want)
	}
	if got := num(t, ev[0].Detail, "edge.last_observed_at"); got != float64(daysAgo(fixedWall, 310)) {
		t.Errorf("snapshot last_observed_at %v", got)
	}
	if ev[0].Detail["edge"].(map[string]any)["relation_type"] != "works_on" {
		t.Errorf("snapshot %v lacks the relation type", ev[0].Detail["edge"])
	}
	want := worker.PolicyCount{RelationType: "works_on", Processed: 2, Decayed: 1}
	if got := policyCount(t, r, "works_on"); got != want {
		t.Errorf("policy counts %+v, want %+v", got, want)
	}
	if r.EdgesDecayed != 0 || r.EdgesPruned != 0 || r.TotalEdgesAfter != 1 {
		t.Errorf("report decayed=%d pruned=%d after=%d, want 0 0 1", r.EdgesDecayed, r.EdgesPruned, r.TotalEdgesAfter)
	}
	if len(r.DecayedSample) != 1 || r.DecayedSample[0].From != "a" || r.DecayedSample[0].To != "c" {
		t.Errorf("decayed sample %+v", r.DecayedSample)
	}
	if !strings.Contains(r.Summary, "1 works_on edges decayed") {
		t.Errorf("summary %q", r.Summary)
	}
	// Idempotent: nothing more at the same clock.
	r = sweepAtWall(t, db, 0, fixedWall)
	if got := policyCount(t, r, "works_on"); got.Decayed != 0 || got.Processed != 1 {
		t.Errorf("second sweep %+v", got)
	}
}

// TestPolicyLinearHoldActiveHours: linear, rate 0.25 per active hour after a
// 4h hold, no threshold: an edge dies at hold + weight/rate exactly (weight
// ≤ 0), not a moment before.
func TestPolicyLinearHoldActiveHours(t *testing.T) {
	const now = 100.0
	for _, model := range []string{"linear", "delayed_linear"} {
		t.Run(model, func(t *testing.T) {
			db, _ := newMemory(t, knowledgeBlocks("a", "b", "c", "d", "e", "f", "g", "h"))
			addPolicy(t, db, "next_turn", model, `{"rate":0.25,"hold":"4h"}`, "active_hours", nil, "delete", "keep")
			edges := []struct {
				to      string
				weight  float64
				elapsed float64
				dies    bool
			}{
				{"b", 0.5, 3.99, false}, // in the hold: full weight
				{"c", 0.5, 5.99, false}, // 0.0025 left
				{"d", 0.5, 6, true},     // 4 + 0.5/0.25: exactly 0
				{"e", 0.5, 7, true},
				{"f", 1.0, 7.99, false}, // 0.0025 left
				{"g", 1.0, 8, true},     // 4 + 1/0.25
				{"h", 0.5, -3, false},   // anchor ahead of the clock: elapsed 0
			}
			var keep, gone []string
			for _, e := range edges {
				addEdge(t, db, "a", e.to, "next_turn", e.weight, now-e.elapsed, nil, false)
				if e.dies {
					gone = append(gone, "a-"+e.to)
				} else {
					keep = append(keep, "a-"+e.to)
				}
			}
			mustExec(t, db, `UPDATE mem_config SET value = ? WHERE key = 'active_hours'`, now)
			for _, e := range edges {
				got := scalar[float64](t, db, `SELECT effective_weight FROM mem_edges_effective WHERE from_id = 'a' AND to_id = ?`, e.to)
				el := math.Max(0, e.elapsed)
				want := e.weight
				if el >= 4 {
					want = math.Max(0, e.weight-0.25*(el-4))
				}
				if !near(got, want, 1e-9) {
					t.Errorf("a-%s at %vh: effective weight %v, want %v", e.to, e.elapsed, got, want)
				}
				left := scalar[float64](t, db, `SELECT hours_left FROM mem_edges_effective WHERE from_id = 'a' AND to_id = ?`, e.to)
				if wantLeft := math.Max(0, 4+e.weight/0.25-el); !near(left, wantLeft, 1e-9) {
					t.Errorf("a-%s hours_left %v, want %v", e.to, left, wantLeft)
				}
			}
			r := sweepAt(t, db, now)
			expectEdges(t, db, keep, gone)
			if want := (worker.PolicyCount{RelationType: "next_turn", Processed: 7, Decayed: 3}); policyCount(t, r, "next_turn") != want {
				t.Errorf("policy counts %+v, want %+v", policyCount(t, r, "next_turn"), want)
			}
			for _, k := range gone {
				ev := edgeEvents(t, db, "a", k[2:])
				if len(ev) != 1 || ev[0].Reason != "policy:next_turn" || num(t, ev[0].Detail, "effective_weight") != 0 {
					t.Errorf("%s events %+v, want one policy decay at weight 0", k, ev)
				}
			}
		})
	}
}

// TestPolicyLinearWallClock: on the wall clock a rate of 0.25 is per day,
// and a hold of "12h" is half a day.
func TestPolicyLinearWallClock(t *testing.T) {
	db, _ := newMemory(t, knowledgeBlocks("a", "b", "c", "d", "e", "f", "g"))
	addPolicy(t, db, "mentions", "linear", `{"rate":0.25}`, "wall", nil, "delete", "keep")
	addPolicy(t, db, "held", "linear", `{"rate":0.25,"hold":"12h"}`, "wall", nil, "delete", "keep")
	addEdge(t, db, "a", "b", "mentions", 1.0, nil, daysAgo(fixedWall, 3.9), false) // 0.025 left
	addEdge(t, db, "a", "c", "mentions", 1.0, nil, daysAgo(fixedWall, 4), false)   // 1 − 0.25 × 4 = 0
	addEdge(t, db, "a", "d", "mentions", 0.5, nil, daysAgo(fixedWall, 1.9), false) // 0.025 left
	addEdge(t, db, "a", "e", "mentions", 0.5, nil, daysAgo(fixedWall, 2), false)   // 0
	addEdge(t, db, "a", "f", "held", 0.5, nil, daysAgo(fixedWall, 2.4), false)     // 0.5 − 0.25 × 1.9
	addEdge(t, db, "a", "g", "held", 0.5, nil, daysAgo(fixedWall, 2.5), false)     // 0.5 − 0.25 × 2 = 0
	// The active-hours clock is irrelevant to a wall policy.
	mustExec(t, db, `UPDATE mem_edges SET last_active_hours = 0`)
	r := sweepAtWall(t, db, 1e6, fixedWall)
	expectEdges(t, db, []string{"a-b", "a-d", "a-f"}, []string{"a-c", "a-e", "a-g"})
	if got := policyCount(t, r, "mentions"); got.Processed != 4 || got.Decayed != 2 {
		t.Errorf("mentions counts %+v", got)
	}
	if got := policyCount(t, r, "held"); got.Processed != 2 || got.Decayed != 1 {
		t.Errorf("held counts %+v", got)
	}
	if got := num(t, edgeEvents(t, db, "a", "g")[0].Detail, "elapsed"); !near(got, 2.5, 1e-9) {
		t.Errorf("a-g decayed after %v days, want 2.5", got)
	}
}

// TestPolicyMultiLinear: two tiers (0.5 held 1h then −0.5/h; 0.5 held 4h
// then −0.125/h), scaled by the edge weight; with no threshold an edge goes
// only when every tier is dead (8h), with a threshold below it.
func TestPolicyMultiLinear(t *testing.T) {
	const now = 100.0
	const tiers = `{"tiers":[{"weight":0.5,"hold":1,"rate":0.5},{"weight":0.5,"hold":"4h","rate":0.125}]}`
	db, _ := newMemory(t, knowledgeBlocks("a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m"))
	addPolicy(t, db, "topic", "multi_linear", tiers, "active_hours", nil, "delete", "keep")
	addPolicy(t, db, "topic_min", "multi_linear", tiers, "active_hours", 0.3, "delete", "keep")
	model := func(weight, e float64) float64 {
		tier := func(w, hold, rate float64) float64 {
			if e < hold {
				return w
			}
			return math.Max(0, w-rate*(e-hold))
		}
		return weight * (tier(0.5, 1, 0.5) + tier(0.5, 4, 0.125))
	}
	edges := []struct {
		to, relation string
		weight       float64
		elapsed      float64
		dies         bool
	}{
		{"b", "topic", 1, 0.5, false},  // 1.0: both tiers held
		{"c", "topic", 1, 1.5, false},  // 0.25 + 0.5
		{"d", "topic", 1, 3, false},    // first tier dead: 0.5
		{"e", "topic", 1, 6, false},    // 0.25
		{"f", "topic", 1, 7.99, false}, // 0.00125
		{"g", "topic", 1, 8, true},     // every tier dead
		{"h", "topic", 0.5, 3, false},  // scaled: 0.25
		{"i", "topic", 0.5, 8, true},
		{"j", "topic_min", 1, 3, false}, // 0.5
		{"k", "topic_min", 1, 5, false}, // 0.375
		{"l", "topic_min", 1, 6, true},  // 0.25 < 0.3
		{"m", "topic_min", 1, 7, true},  // 0.125
	}
	var keep, gone []string
	for _, e := range edges {
		addEdge(t, db, "a", e.to, e.relation, e.weight, now-e.elapsed, nil, false)
		if e.dies {
			gone = append(gone, "a-"+e.to)
		} else {
			keep = append(keep, "a-"+e.to)
		}
	}
	mustExec(t, db, `UPDATE mem_config SET value = ? WHERE key = 'active_hours'`, now)
	for _, e := range edges {
		var got float64
		var state string
		if err := db.SQL.QueryRow(`SELECT effective_weight, state FROM mem_edges_effective WHERE from_id = 'a' AND to_id = ?`, e.to).
			Scan(&got, &state); err != nil {
			t.Fatal(err)
		}
		if want := model(e.weight, e.elapsed); !near(got, want, 1e-9) {
			t.Errorf("a-%s at %vh: effective weight %v, want %v", e.to, e.elapsed, got, want)
		}
		if wantState := map[bool]string{true: "decayed", false: "live"}[e.dies]; state != wantState {
			t.Errorf("a-%s state %s, want %s", e.to, state, wantState)
		}
	}
	r := sweepAt(t, db, now)
	expectEdges(t, db, keep, gone)
	if got := policyCount(t, r, "topic"); got.Processed != 8 || got.Decayed != 2 {
		t.Errorf("topic counts %+v", got)
	}
	if got := policyCount(t, r, "topic_min"); got.Processed != 4 || got.Decayed != 2 {
		t.Errorf("topic_min counts %+v", got)
	}
}

// TestPolicyAsymptotic: exponential and power-law policies need a
// threshold; edges either side of the horizon.
func TestPolicyAsymptotic(t *testing.T) {
	const now = 1000.0
	db, _ := newMemory(t, knowledgeBlocks("a", "b", "c", "d", "e", "f", "g", "h", "i"))
	// exp(−0.1 t) < 0.2 from t = ln 5 / 0.1 = 16.09h.
	addPolicy(t, db, "exp", "exponential", `{"lambda":0.1}`, "active_hours", 0.2, "delete", "keep")
	// (1 + t/2)^−1 < 0.25 from t = 6h.
	addPolicy(t, db, "pow", "power_law", `{"alpha":1,"scale":"2h"}`, "active_hours", 0.25, "delete", "keep")
	// (1 + t/2)^−2 < 0.04 from t = 8 days, on the wall clock; scale "48h" = 2 days.
	addPolicy(t, db, "pow_wall", "power_law", `{"alpha":2,"scale":"48h"}`, "wall", 0.04, "delete", "keep")
	// No threshold: the default edge_decay_threshold (0.10); exp(−0.1 t) < 0.1 from 23.03h.
	addPolicy(t, db, "exp_default", "exponential", `{"lambda":0.1}`, "active_hours", nil, "delete", "keep")
	addEdge(t, db, "a", "b", "exp", 1, now-15.9, nil, false)
	addEdge(t, db, "a", "c", "exp", 1, now-16.3, nil, false)
	addEdge(t, db, "a", "d", "pow", 1, now-5.8, nil, false)
	addEdge(t, db, "a", "e", "pow", 1, now-6.2, nil, false)
	addEdge(t, db, "a", "f", "pow_wall", 1, now, daysAgo(fixedWall, 7.9), false)
	addEdge(t, db, "a", "g", "pow_wall", 1, now, daysAgo(fixedWall, 8.1), false)
	addEdge(t, db, "a", "h", "exp_default", 1, now-22.9, nil, false)
	addEdge(t, db, "a", "i", "exp_default", 1, now-23.1, nil, false)
	r := sweepAtWall(t, db, now, fixedWall)
	expectEdges(t, db, []string{"a-b", "a-d", "a-f", "a-h"}, []string{"a-c", "a-e", "a-g", "a-i"})
	checks := []struct {
		to   string
		want float64
	}{{"c", math.Exp(-1.63)}, {"e", 1 / (1 + 6.2/2)}, {"g", math.Pow(1+8.1/2, -2)}, {"i", math.Exp(-2.31)}}
	for _, c := range checks {
		ev := edgeEvents(t, db, "a", c.to)
		if len(ev) != 1 || !near(num(t, ev[0].Detail, "effective_weight"), c.want, 1e-6) {
			t.Errorf("a-%s events %+v, want a decay at %v", c.to, ev, c.want)
		}
	}
	for _, rel := range []string{"exp", "pow", "pow_wall", "exp_default"} {
		if got := policyCount(t, r, rel); got.Processed != 2 || got.Decayed != 1 {
			t.Errorf("%s counts %+v, want 2 processed, 1 decayed", rel, got)
		}
	}
}

// TestPolicyDurations: durations in params carry m, h, d or w and are converted
// to the clock's unit (hours on active_hours, days on wall); bare numbers
// and texts without a suffix are already in that unit.
func TestPolicyDurations(t *testing.T) {
	db, _ := newMemory(t, "")
	cases := []struct {
		model, params, clock string
		key                  string
		want                 float64
	}{
		{"half_life", `{"half_life":"90d"}`, "wall", "half_life", 90},
		{"half_life", `{"half_life":"90d"}`, "active_hours", "half_life", 2160},
		{"half_life", `{"half_life":"2160h"}`, "wall", "half_life", 90},
		{"half_life", `{"half_life":"2w"}`, "wall", "half_life", 14},
		{"half_life", `{"half_life":"2w"}`, "active_hours", "half_life", 336},
		{"half_life", `{"half_life":90}`, "wall", "half_life", 90},
		{"half_life", `{"half_life":"90"}`, "wall", "half_life", 90},
		{"half_life", `{"half_life":90}`, "active_hours", "half_life", 90},
		{"half_life", `{"half_life":"4h"}`, "active_hours", "half_life", 4},
		{"half_life", `{"half_life":"4h"}`, "wall", "half_life", 4.0 / 24},
		{"delayed_linear", `{"rate":0.25,"hold":"30m"}`, "active_hours", "hold", 0.5},
		{"delayed_linear", `{"rate":0.25,"hold":"30m"}`, "wall", "hold", 0.5 / 24},
		{"delayed_linear", `{"rate":0.25,"hold":0.5}`, "active_hours", "hold", 0.5},
		{"linear", `{"rate":0.25,"hold":"30m"}`, "wall", "rate", 0.25}, // a rate is never converted
		{"power_law", `{"alpha":1,"scale":"2d"}`, "active_hours", "scale", 48},
		{"power_law", `{"alpha":1,"scale":"48h"}`, "wall", "scale", 2},
	}
	for _, c := range cases {
		text := scalar[string](t, db, `SELECT policy_curve(?, ?, ?)`, c.model, c.params, c.clock)
		var curve map[string]any
		if err := json.Unmarshal([]byte(text), &curve); err != nil {
			t.Fatalf("policy_curve(%s, %s, %s) = %q: %v", c.model, c.params, c.clock, text, err)
		}
		if got, _ := curve[c.key].(float64); !near(got, c.want, 1e-12) || curve["model"] != c.model {
			t.Errorf("policy_curve(%s, %s, %s) = %s, want %s %v", c.model, c.params, c.clock, text, c.key, c.want)
		}
	}
	tiers := scalar[string](t, db, `SELECT policy_curve('multi_linear', '{"tiers":[{"weight":1,"hold":"30m","rate":2},{"weight":1,"hold":"1d","rate":1}]}', 'active_hours')`)
	var curve struct{ Tiers []map[string]float64 }
	if err := json.Unmarshal([]byte(tiers), &curve); err != nil || len(curve.Tiers) != 2 ||
		curve.Tiers[0]["hold"] != 0.5 || curve.Tiers[1]["hold"] != 24 || curve.Tiers[0]["rate"] != 2 {
		t.Errorf("multi_linear tiers %s (%v)", tiers, err)
	}

	// The same in a sweep: a 30m hold and a bare 0.5 hold give one death
	// time, weight 0.5 at rate 1: 0.5 + 0.5 = 1 active hour.
	const now = 10.0
	db, _ = newMemory(t, knowledgeBlocks("a", "b", "c", "d", "e"))
	addPolicy(t, db, "held_m", "delayed_linear", `{"rate":1,"hold":"30m"}`, "active_hours", nil, "delete", "keep")
	addPolicy(t, db, "held_bare", "delayed_linear", `{"rate":1,"hold":0.5}`, "active_hours", nil, "delete", "keep")
	addEdge(t, db, "a", "b", "held_m", 0.5, now-0.99, nil, false)
	addEdge(t, db, "a", "c", "held_m", 0.5, now-1, nil, false)
	addEdge(t, db, "a", "d", "held_bare", 0.5, now-0.99, nil, false)
	addEdge(t, db, "a", "e", "held_bare", 0.5, now-1, nil, false)
	sweepAt(t, db, now)
	expectEdges(t, db, []string{"a-b", "a-d"}, []string{"a-c", "a-e"})
}
