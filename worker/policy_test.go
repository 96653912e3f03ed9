package worker_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker"
)

// Relation policies (SPEC §4.2, references 003 and 004). Every fixture has
// rows just before and just after each death time or minimum.
//
// Helpers here are prefixed lc so they stay apart from the curate tests'.

// lcWall is the fixed wall clock of the tests that do not query the views
// (the views read the real time).
var lcWall = time.Date(2026, 3, 1, 4, 30, 0, 0, time.UTC)

const lcDay = 86400

// lcAgo is the unix time days before wall.
func lcAgo(wall time.Time, days float64) int64 {
	return wall.Unix() - int64(math.Round(days*lcDay))
}

// lcSweep sweeps at active-hours clock now and wall clock wall.
func lcSweep(t *testing.T, db *worker.DB, now float64, wall time.Time) *worker.Report {
	t.Helper()
	r, err := worker.Sweep(context.Background(), db, worker.SweepOptions{Now: &now, WallNow: &wall})
	if err != nil {
		t.Fatalf("sweep at %v / %s: %v", now, wall.Format(time.RFC3339), err)
	}
	return r
}

func lcExec(t *testing.T, db *worker.DB, query string, args ...any) {
	t.Helper()
	if _, err := db.SQL.Exec(query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// lcHash is the sha256 of a file, "absent" when it does not exist.
func lcHash(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "absent"
	}
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// lcEmptyHash is the sha256 of an empty file.
const lcEmptyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// lcHashes hashes a database file and its WAL.
func lcHashes(t *testing.T, path string) map[string]string {
	t.Helper()
	return map[string]string{path: lcHash(t, path), path + "-wal": lcHash(t, path+"-wal")}
}

// lcSameFiles fails unless no file changed. A read-only open may leave an
// empty WAL where there was none: no content, so not a change of the data.
func lcSameFiles(t *testing.T, before, after map[string]string) {
	t.Helper()
	for f, h := range before {
		got := after[f]
		if got == h || (h == "absent" && got == lcEmptyHash) {
			continue
		}
		t.Errorf("%s changed: %s -> %s", filepath.Base(f), h, got)
	}
}

// lcPair is an edge's subject_id in mem_events: json_array(from, to).
func lcPair(from, to string) string {
	b, _ := json.Marshal([]string{from, to})
	return string(b)
}

type lcEvent struct {
	ID      int64
	SweepID sql.NullInt64
	At      int64
	Kind    string
	Subject string
	Action  string
	Reason  string
	Detail  map[string]any
}

// lcEvents lists the events matching a WHERE clause, oldest first.
func lcEvents(t *testing.T, db *worker.DB, where string, args ...any) []lcEvent {
	t.Helper()
	rows, err := db.SQL.Query(`SELECT id, sweep_id, at, subject_kind, subject_id, action, coalesce(reason, ''),
		coalesce(detail, '{}') FROM mem_events WHERE `+where+` ORDER BY id`, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []lcEvent
	for rows.Next() {
		var e lcEvent
		var detail string
		if err := rows.Scan(&e.ID, &e.SweepID, &e.At, &e.Kind, &e.Subject, &e.Action, &e.Reason, &detail); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(detail), &e.Detail); err != nil {
			t.Fatalf("event %d detail %q: %v", e.ID, detail, err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// lcEdgeEvents lists the events of one edge.
func lcEdgeEvents(t *testing.T, db *worker.DB, from, to string) []lcEvent {
	t.Helper()
	return lcEvents(t, db, `subject_kind = 'edge' AND subject_id = ?`, lcPair(from, to))
}

// lcActions is the actions of a list of events, in order.
func lcActions(events []lcEvent) []string {
	out := []string{}
	for _, e := range events {
		out = append(out, e.Action)
	}
	return out
}

// lcNum reads a number at a dotted path of an event detail.
func lcNum(t *testing.T, detail map[string]any, path string) float64 {
	t.Helper()
	var v any = detail
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("detail %v: %s is not an object", detail, path)
		}
		v = m[k]
	}
	f, ok := v.(float64)
	if !ok {
		t.Fatalf("detail %v: %s is %T, want a number", detail, path, v)
	}
	return f
}

// lcDump renders every table a sweep may change except mem_sweeps, for
// "nothing changed" comparisons.
func lcDump(t *testing.T, db *worker.DB) string {
	t.Helper()
	var b strings.Builder
	for _, table := range []string{"mem_config", "mem_blocks", "mem_block_tags", "mem_edges", "mem_edge_policies", "mem_facts", "mem_events"} {
		rows, err := db.SQL.Query(`SELECT * FROM ` + table + ` ORDER BY rowid`)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		fmt.Fprintf(&b, "%s %v\n", table, cols)
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				rows.Close()
				t.Fatal(err)
			}
			for i, v := range vals {
				if s, ok := v.([]byte); ok {
					vals[i] = string(s)
				}
			}
			fmt.Fprintf(&b, "  %v\n", vals)
		}
		rows.Close()
	}
	return b.String()
}

// lcPolicy is the report's tally for one relation type.
func lcPolicy(t *testing.T, r *worker.Report, relation string) worker.PolicyCount {
	t.Helper()
	for _, p := range r.Policies {
		if p.RelationType == relation {
			return p
		}
	}
	t.Fatalf("report has no policy %q: %+v", relation, r.Policies)
	return worker.PolicyCount{}
}

// lcBlocks inserts knowledge blocks that block archival never touches
// (no last_reinforced_hours), so only policies act on their edges.
func lcBlocks(ids ...string) string {
	var vals []string
	for _, id := range ids {
		vals = append(vals, fmt.Sprintf("('%s', 'knowledge', NULL)", id))
	}
	return "INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES " + strings.Join(vals, ", ") + ";"
}

// lcEdge inserts one edge; lastActive and lastObserved may be nil.
func lcEdge(t *testing.T, db *worker.DB, from, to, relation string, weight float64, lastActive, lastObserved any, pinned bool) {
	t.Helper()
	lcExec(t, db, `INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, relation_type, origin,
		last_active_hours, last_observed_at, pinned) VALUES (?, ?, ?, 0, ?, 'observed', ?, ?, ?)`,
		from, to, weight, relation, lastActive, lastObserved, pinned)
}

func lcPolicyRow(t *testing.T, db *worker.DB, relation, model, params, clock string, threshold any, action, orphans string) {
	t.Helper()
	lcExec(t, db, `INSERT INTO mem_edge_policies (relation_type, model, params, clock, threshold, action, orphans)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, relation, model, params, clock, threshold, action, orphans)
}

// lcExpectEdges checks which of the named edges ("from-to") remain.
func lcExpectEdges(t *testing.T, db *worker.DB, keep, gone []string) {
	t.Helper()
	got := edgeSet(t, db)
	for _, k := range keep {
		if !got[k] {
			t.Errorf("edge %s was removed, want it kept", k)
		}
	}
	for _, k := range gone {
		if got[k] {
			t.Errorf("edge %s is still there, want it removed", k)
		}
	}
}

// lcViewSet lists the edges ("from-to") of a view.
func lcViewSet(t *testing.T, db *worker.DB, view string) map[string]bool {
	t.Helper()
	rows, err := db.SQL.Query(`SELECT from_id || '-' || to_id FROM ` + view)
	if err != nil {
		t.Fatalf("%s: %v", view, err)
	}
	defer rows.Close()
	set := map[string]bool{}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		set[k] = true
	}
	return set
}

func lcExcluded(t *testing.T, db *worker.DB, from, to string) int {
	t.Helper()
	return scalar[int](t, db, `SELECT excluded FROM mem_edges WHERE from_id = ? AND to_id = ?`, from, to)
}

// TestPolicyHalfLifeExclude: half-life 90 days on the wall clock, minimum
// 0.10, soft exclusion (reference 004). 290 days: 0.5^(290/90) = 0.107,
// kept; 310 days: 0.5^(310/90) = 0.092, excluded but kept for audit. The
// views read the real time, so the fixture is anchored on it.
func TestPolicyHalfLifeExclude(t *testing.T) {
	db, _ := newMemory(t, lcBlocks("a", "b", "c", "d", "e"))
	wall := time.Now().Truncate(time.Second)
	lcPolicyRow(t, db, "works_on", "half_life", `{"half_life":"90d"}`, "wall", 0.10, "exclude", "keep")
	lcEdge(t, db, "a", "b", "works_on", 1.0, 0, lcAgo(wall, 290), false)
	lcEdge(t, db, "a", "c", "works_on", 1.0, 0, lcAgo(wall, 310), false)
	lcEdge(t, db, "a", "d", "works_on", 1.0, 0, lcAgo(wall, 1000), true)
	lcEdge(t, db, "a", "e", "works_on", 1.0, 0, lcAgo(wall, 1), false)

	// Before any sweep the views already tell live from decayed.
	live, decayed := lcViewSet(t, db, "mem_edges_live"), lcViewSet(t, db, "mem_edges_decayed")
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

	r := lcSweep(t, db, 0, wall)
	lcExpectEdges(t, db, []string{"a-b", "a-c", "a-d", "a-e"}, nil)
	if got := lcExcluded(t, db, "a", "c"); got != 1 {
		t.Errorf("a-c excluded = %d, want 1", got)
	}
	for _, k := range []string{"b", "d", "e"} {
		if got := lcExcluded(t, db, "a", k); got != 0 {
			t.Errorf("a-%s excluded = %d, want 0", k, got)
		}
	}
	ev := lcEdgeEvents(t, db, "a", "c")
	if len(ev) != 1 || ev[0].Action != "exclude" || ev[0].Reason != "below_minimum:works_on" {
		t.Fatalf("a-c events %+v, want one exclude below_minimum:works_on", ev)
	}
	if got, want := lcNum(t, ev[0].Detail, "effective_weight"), math.Pow(0.5, 310.0/90); !near(got, want, 1e-9) {
		t.Errorf("exclude event effective weight %v, want %v", got, want)
	}
	if got := lcNum(t, ev[0].Detail, "threshold"); got != 0.10 {
		t.Errorf("exclude event threshold %v, want 0.10", got)
	}
	if got := lcNum(t, ev[0].Detail, "elapsed"); !near(got, 310, 1e-9) {
		t.Errorf("exclude event elapsed %v days, want 310", got)
	}
	if n := len(lcEvents(t, db, `subject_kind = 'edge' AND subject_id != ?`, lcPair("a", "c"))); n != 0 {
		t.Errorf("%d events for other edges, want 0", n)
	}
	want := worker.PolicyCount{RelationType: "works_on", Processed: 3, Decayed: 0, BelowMinimum: 1, Pinned: 1, Excluded: 1}
	if got := lcPolicy(t, r, "works_on"); got != want {
		t.Errorf("policy counts %+v, want %+v", got, want)
	}
	if r.TotalEdgesAfter != 4 {
		t.Errorf("total_edges_after %d, want 4 (an excluded edge stays)", r.TotalEdgesAfter)
	}
	if !strings.Contains(r.Summary, "1 works_on edges excluded") {
		t.Errorf("summary %q does not mention the exclusion", r.Summary)
	}
	live, decayed = lcViewSet(t, db, "mem_edges_live"), lcViewSet(t, db, "mem_edges_decayed")
	if live["a-c"] || !decayed["a-c"] || !live["a-b"] || decayed["a-b"] || !live["a-d"] {
		t.Errorf("after the sweep live=%v decayed=%v", live, decayed)
	}

	// A second sweep at the same clock excludes nothing new.
	r = lcSweep(t, db, 0, wall)
	want = worker.PolicyCount{RelationType: "works_on", Processed: 3, BelowMinimum: 1, Pinned: 1}
	if got := lcPolicy(t, r, "works_on"); got != want {
		t.Errorf("second sweep policy counts %+v, want %+v", got, want)
	}
	if got := lcActions(lcEdgeEvents(t, db, "a", "c")); !slices.Equal(got, []string{"exclude"}) {
		t.Errorf("a-c events after a second sweep %v", got)
	}

	// Re-observation: live at once, before any sweep; the next sweep
	// readmits it and logs the readmission.
	lcExec(t, db, `UPDATE mem_edges SET weight = 1.0, last_observed_at = ? WHERE from_id = 'a' AND to_id = 'c'`, time.Now().Unix())
	live, decayed = lcViewSet(t, db, "mem_edges_live"), lcViewSet(t, db, "mem_edges_decayed")
	if !live["a-c"] || decayed["a-c"] {
		t.Errorf("re-observed a-c: live=%v decayed=%v, want live at once", live["a-c"], decayed["a-c"])
	}
	later := wall.Add(time.Minute)
	r = lcSweep(t, db, 0, later)
	if got := lcExcluded(t, db, "a", "c"); got != 0 {
		t.Errorf("re-observed a-c excluded = %d after the sweep, want 0", got)
	}
	ev = lcEdgeEvents(t, db, "a", "c")
	if got := lcActions(ev); !slices.Equal(got, []string{"exclude", "readmit"}) {
		t.Fatalf("a-c events %v, want exclude then readmit", got)
	}
	if ev[1].Reason != "reobserved:works_on" {
		t.Errorf("readmit reason %q", ev[1].Reason)
	}
	want = worker.PolicyCount{RelationType: "works_on", Processed: 3, Pinned: 1, Readmitted: 1}
	if got := lcPolicy(t, r, "works_on"); got != want {
		t.Errorf("readmitting sweep policy counts %+v, want %+v", got, want)
	}
}

// TestPolicyHalfLifeDelete: the same curve with action 'delete' removes the
// 310-day edge with a decay event 'policy:<relation>' and keeps the 290-day one.
func TestPolicyHalfLifeDelete(t *testing.T) {
	db, _ := newMemory(t, lcBlocks("a", "b", "c"))
	lcPolicyRow(t, db, "works_on", "half_life", `{"half_life":"90d"}`, "wall", 0.10, "delete", "keep")
	lcEdge(t, db, "a", "b", "works_on", 1.0, nil, lcAgo(lcWall, 290), false)
	lcEdge(t, db, "a", "c", "works_on", 1.0, nil, lcAgo(lcWall, 310), false)

	r := lcSweep(t, db, 0, lcWall)
	lcExpectEdges(t, db, []string{"a-b"}, []string{"a-c"})
	ev := lcEdgeEvents(t, db, "a", "c")
	if len(ev) != 1 || ev[0].Action != "decay" || ev[0].Reason != "policy:works_on" {
		t.Fatalf("a-c events %+v, want one decay policy:works_on", ev)
	}
	if ev[0].SweepID.Int64 != r.SweepID || ev[0].At != lcWall.Unix() {
		t.Errorf("event sweep %v at %d, want sweep %d at %d", ev[0].SweepID, ev[0].At, r.SweepID, lcWall.Unix())
	}
	if got, want := lcNum(t, ev[0].Detail, "effective_weight"), math.Pow(0.5, 310.0/90); !near(got, want, 1e-9) {
		t.Errorf("decay event effective weight %v, want %v", got, want)
	}
	if got := lcNum(t, ev[0].Detail, "edge.last_observed_at"); got != float64(lcAgo(lcWall, 310)) {
		t.Errorf("snapshot last_observed_at %v", got)
	}
	if ev[0].Detail["edge"].(map[string]any)["relation_type"] != "works_on" {
		t.Errorf("snapshot %v lacks the relation type", ev[0].Detail["edge"])
	}
	want := worker.PolicyCount{RelationType: "works_on", Processed: 2, Decayed: 1}
	if got := lcPolicy(t, r, "works_on"); got != want {
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
	r = lcSweep(t, db, 0, lcWall)
	if got := lcPolicy(t, r, "works_on"); got.Decayed != 0 || got.Processed != 1 {
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
			db, _ := newMemory(t, lcBlocks("a", "b", "c", "d", "e", "f", "g", "h"))
			lcPolicyRow(t, db, "next_turn", model, `{"rate":0.25,"hold":"4h"}`, "active_hours", nil, "delete", "keep")
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
				lcEdge(t, db, "a", e.to, "next_turn", e.weight, now-e.elapsed, nil, false)
				if e.dies {
					gone = append(gone, "a-"+e.to)
				} else {
					keep = append(keep, "a-"+e.to)
				}
			}
			lcExec(t, db, `UPDATE mem_config SET value = ? WHERE key = 'active_hours'`, now)
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
			lcExpectEdges(t, db, keep, gone)
			if want := (worker.PolicyCount{RelationType: "next_turn", Processed: 7, Decayed: 3}); lcPolicy(t, r, "next_turn") != want {
				t.Errorf("policy counts %+v, want %+v", lcPolicy(t, r, "next_turn"), want)
			}
			for _, k := range gone {
				ev := lcEdgeEvents(t, db, "a", k[2:])
				if len(ev) != 1 || ev[0].Reason != "policy:next_turn" || lcNum(t, ev[0].Detail, "effective_weight") != 0 {
					t.Errorf("%s events %+v, want one policy decay at weight 0", k, ev)
				}
			}
		})
	}
}

// TestPolicyLinearWallClock: on the wall clock a rate of 0.25 is per day,
// and a hold of "12h" is half a day.
func TestPolicyLinearWallClock(t *testing.T) {
	db, _ := newMemory(t, lcBlocks("a", "b", "c", "d", "e", "f", "g"))
	lcPolicyRow(t, db, "mentions", "linear", `{"rate":0.25}`, "wall", nil, "delete", "keep")
	lcPolicyRow(t, db, "held", "linear", `{"rate":0.25,"hold":"12h"}`, "wall", nil, "delete", "keep")
	lcEdge(t, db, "a", "b", "mentions", 1.0, nil, lcAgo(lcWall, 3.9), false) // 0.025 left
	lcEdge(t, db, "a", "c", "mentions", 1.0, nil, lcAgo(lcWall, 4), false)   // 1 − 0.25 × 4 = 0
	lcEdge(t, db, "a", "d", "mentions", 0.5, nil, lcAgo(lcWall, 1.9), false) // 0.025 left
	lcEdge(t, db, "a", "e", "mentions", 0.5, nil, lcAgo(lcWall, 2), false)   // 0
	lcEdge(t, db, "a", "f", "held", 0.5, nil, lcAgo(lcWall, 2.4), false)     // 0.5 − 0.25 × 1.9
	lcEdge(t, db, "a", "g", "held", 0.5, nil, lcAgo(lcWall, 2.5), false)     // 0.5 − 0.25 × 2 = 0
	// The active-hours clock is irrelevant to a wall policy.
	lcExec(t, db, `UPDATE mem_edges SET last_active_hours = 0`)
	r := lcSweep(t, db, 1e6, lcWall)
	lcExpectEdges(t, db, []string{"a-b", "a-d", "a-f"}, []string{"a-c", "a-e", "a-g"})
	if got := lcPolicy(t, r, "mentions"); got.Processed != 4 || got.Decayed != 2 {
		t.Errorf("mentions counts %+v", got)
	}
	if got := lcPolicy(t, r, "held"); got.Processed != 2 || got.Decayed != 1 {
		t.Errorf("held counts %+v", got)
	}
	if got := lcNum(t, lcEdgeEvents(t, db, "a", "g")[0].Detail, "elapsed"); !near(got, 2.5, 1e-9) {
		t.Errorf("a-g decayed after %v days, want 2.5", got)
	}
}

// TestPolicyMultiLinear: two tiers (0.5 held 1h then −0.5/h; 0.5 held 4h
// then −0.125/h), scaled by the edge weight; with no threshold an edge goes
// only when every tier is dead (8h), with a threshold below it.
func TestPolicyMultiLinear(t *testing.T) {
	const now = 100.0
	const tiers = `{"tiers":[{"weight":0.5,"hold":1,"rate":0.5},{"weight":0.5,"hold":"4h","rate":0.125}]}`
	db, _ := newMemory(t, lcBlocks("a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m"))
	lcPolicyRow(t, db, "topic", "multi_linear", tiers, "active_hours", nil, "delete", "keep")
	lcPolicyRow(t, db, "topic_min", "multi_linear", tiers, "active_hours", 0.3, "delete", "keep")
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
		lcEdge(t, db, "a", e.to, e.relation, e.weight, now-e.elapsed, nil, false)
		if e.dies {
			gone = append(gone, "a-"+e.to)
		} else {
			keep = append(keep, "a-"+e.to)
		}
	}
	lcExec(t, db, `UPDATE mem_config SET value = ? WHERE key = 'active_hours'`, now)
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
	lcExpectEdges(t, db, keep, gone)
	if got := lcPolicy(t, r, "topic"); got.Processed != 8 || got.Decayed != 2 {
		t.Errorf("topic counts %+v", got)
	}
	if got := lcPolicy(t, r, "topic_min"); got.Processed != 4 || got.Decayed != 2 {
		t.Errorf("topic_min counts %+v", got)
	}
}

// TestPolicyAsymptotic: exponential and power-law policies need a
// threshold; edges either side of the horizon.
func TestPolicyAsymptotic(t *testing.T) {
	const now = 1000.0
	db, _ := newMemory(t, lcBlocks("a", "b", "c", "d", "e", "f", "g", "h", "i"))
	// exp(−0.1 t) < 0.2 from t = ln 5 / 0.1 = 16.09h.
	lcPolicyRow(t, db, "exp", "exponential", `{"lambda":0.1}`, "active_hours", 0.2, "delete", "keep")
	// (1 + t/2)^−1 < 0.25 from t = 6h.
	lcPolicyRow(t, db, "pow", "power_law", `{"alpha":1,"scale":"2h"}`, "active_hours", 0.25, "delete", "keep")
	// (1 + t/2)^−2 < 0.04 from t = 8 days, on the wall clock; scale "48h" = 2 days.
	lcPolicyRow(t, db, "pow_wall", "power_law", `{"alpha":2,"scale":"48h"}`, "wall", 0.04, "delete", "keep")
	// No threshold: the default edge_decay_threshold (0.10); exp(−0.1 t) < 0.1 from 23.03h.
	lcPolicyRow(t, db, "exp_default", "exponential", `{"lambda":0.1}`, "active_hours", nil, "delete", "keep")
	lcEdge(t, db, "a", "b", "exp", 1, now-15.9, nil, false)
	lcEdge(t, db, "a", "c", "exp", 1, now-16.3, nil, false)
	lcEdge(t, db, "a", "d", "pow", 1, now-5.8, nil, false)
	lcEdge(t, db, "a", "e", "pow", 1, now-6.2, nil, false)
	lcEdge(t, db, "a", "f", "pow_wall", 1, now, lcAgo(lcWall, 7.9), false)
	lcEdge(t, db, "a", "g", "pow_wall", 1, now, lcAgo(lcWall, 8.1), false)
	lcEdge(t, db, "a", "h", "exp_default", 1, now-22.9, nil, false)
	lcEdge(t, db, "a", "i", "exp_default", 1, now-23.1, nil, false)
	r := lcSweep(t, db, now, lcWall)
	lcExpectEdges(t, db, []string{"a-b", "a-d", "a-f", "a-h"}, []string{"a-c", "a-e", "a-g", "a-i"})
	checks := []struct {
		to   string
		want float64
	}{{"c", math.Exp(-1.63)}, {"e", 1 / (1 + 6.2/2)}, {"g", math.Pow(1+8.1/2, -2)}, {"i", math.Exp(-2.31)}}
	for _, c := range checks {
		ev := lcEdgeEvents(t, db, "a", c.to)
		if len(ev) != 1 || !near(lcNum(t, ev[0].Detail, "effective_weight"), c.want, 1e-6) {
			t.Errorf("a-%s events %+v, want a decay at %v", c.to, ev, c.want)
		}
	}
	for _, rel := range []string{"exp", "pow", "pow_wall", "exp_default"} {
		if got := lcPolicy(t, r, rel); got.Processed != 2 || got.Decayed != 1 {
			t.Errorf("%s counts %+v, want 2 processed, 1 decayed", rel, got)
		}
	}
}

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
			db, _ := newMemory(t, lcBlocks("a", "b", "c"))
			lcPolicyRow(t, db, "rel", p.model, p.params, p.clock, nil, p.action, "delete")
			lcEdge(t, db, "a", "b", "rel", 0.5, 0, lcAgo(lcWall, 10000), true)
			lcEdge(t, db, "a", "c", "rel", 0.5, 0, lcAgo(lcWall, 10000), false)
			r := lcSweep(t, db, 1e5, lcWall)
			if got := scalar[int](t, db, `SELECT count(*) FROM mem_edges WHERE from_id = 'a' AND to_id = 'b' AND weight = 0.5 AND excluded = 0`); got != 1 {
				t.Errorf("pinned edge changed or removed")
			}
			if ev := lcEdgeEvents(t, db, "a", "b"); len(ev) != 0 {
				t.Errorf("pinned edge events %+v", ev)
			}
			want := worker.PolicyCount{RelationType: "rel", Processed: 1, Pinned: 1, Decayed: 1}
			if p.action == "exclude" {
				want = worker.PolicyCount{RelationType: "rel", Processed: 1, Pinned: 1, BelowMinimum: 1, Excluded: 1}
			}
			if got := lcPolicy(t, r, "rel"); got != want {
				t.Errorf("counts %+v, want %+v", got, want)
			}
			// The pinned edge keeps its ends: no orphan.
			expectStatusLC(t, db, "active", "a", "b")
		})
	}
}

func expectStatusLC(t *testing.T, db *worker.DB, status string, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if got := scalar[string](t, db, `SELECT status FROM mem_blocks WHERE id = ?`, id); got != status {
			t.Errorf("block %s is %s, want %s", id, got, status)
		}
	}
}

// TestPolicyOrphans: orphans = 'delete' archives an end a policy deletion
// leaves with no edge at all (reference 003's orphan detection); 'keep'
// leaves it, and an end with another edge stays.
func TestPolicyOrphans(t *testing.T) {
	const now = 100.0
	db, _ := newMemory(t, lcBlocks("a", "b", "c", "e", "w", "x", "y", "z"))
	lcExec(t, db, `INSERT INTO mem_block_tags VALUES ('x', 'topic'), ('x', 'draft')`)
	lcPolicyRow(t, db, "fade_del", "linear", `{"rate":1}`, "active_hours", nil, "delete", "delete")
	lcPolicyRow(t, db, "fade_keep", "linear", `{"rate":1}`, "active_hours", nil, "delete", "keep")
	lcEdge(t, db, "a", "b", "similar", 0.9, now, nil, false)
	lcEdge(t, db, "a", "w", "similar", 0.9, now, nil, false)
	lcEdge(t, db, "e", "z", "similar", 0.9, now, nil, false)
	lcEdge(t, db, "a", "x", "fade_del", 0.5, now-1, nil, false)  // dies; x has no other edge
	lcEdge(t, db, "w", "z", "fade_del", 0.5, now-1, nil, false)  // dies; both ends keep an edge
	lcEdge(t, db, "c", "y", "fade_keep", 0.5, now-1, nil, false) // dies; c and y kept
	r := sweepAt(t, db, now)
	lcExpectEdges(t, db, []string{"a-b", "a-w", "e-z"}, []string{"a-x", "w-z", "c-y"})
	expectStatusLC(t, db, "archived", "x")
	expectStatusLC(t, db, "active", "a", "b", "c", "e", "w", "y", "z")
	if got := scalar[string](t, db, `SELECT archive_reason FROM mem_blocks WHERE id = 'x'`); got != "orphaned" {
		t.Errorf("x archive_reason %q, want orphaned", got)
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM mem_block_tags WHERE block_id = 'x'`); n != 0 {
		t.Errorf("orphan x keeps %d tags", n)
	}
	ev := lcEvents(t, db, `subject_kind = 'block'`)
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
	if _, err := worker.RestoreBlock(context.Background(), db, "x", lcWall); err != nil {
		t.Fatalf("restore orphan: %v", err)
	}
	expectStatusLC(t, db, "active", "x")
	if n := scalar[int](t, db, `SELECT count(*) FROM mem_block_tags WHERE block_id = 'x'`); n != 2 {
		t.Errorf("restored orphan has %d tags, want 2", n)
	}
}

// TestPolicySkipsTieredPhases: a relation type with a policy is decayed by
// that policy alone — the static prune and temporal decay of §4.1 skip it —
// but block archival still takes its edges with a faded block.
func TestPolicySkipsTieredPhases(t *testing.T) {
	const now = 2000.0
	db, _ := newMemory(t, lcBlocks("a", "b", "c", "d", "e", "f", "p", "q"))
	lcExec(t, db, `INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES ('z', 'observation', 0)`)
	lcPolicyRow(t, db, "depends_on", "half_life", `{"half_life":"90d"}`, "wall", 0.01, "delete", "keep")
	lcPolicyRow(t, db, "session", "linear", `{"rate":0.01}`, "active_hours", nil, "delete", "keep")
	lcPolicyRow(t, db, "cites", "half_life", `{"half_life":"90d"}`, "wall", 0.01, "delete", "keep")
	seen := lcAgo(lcWall, 1)
	// Weight 0.05, count 0: the static prune would take it; the policy keeps
	// it (0.05 × 0.5^(1/90) = 0.0496 ≥ 0.01).
	lcEdge(t, db, "a", "b", "depends_on", 0.05, 0, seen, false)
	// Idle 2000 active hours: temporal decay would take it (0.5 e^−10).
	lcEdge(t, db, "a", "c", "depends_on", 0.5, 0, seen, false)
	// The same rows without a policy go.
	lcEdge(t, db, "d", "e", "similar", 0.05, 0, seen, false)
	lcEdge(t, db, "d", "f", "similar", 0.5, 0, seen, false)
	// A wall policy with no observation time and an active-hours policy with
	// no anchor: no elapsed time, nothing to decay.
	lcEdge(t, db, "p", "q", "depends_on", 0.5, 0, nil, false)
	lcEdge(t, db, "b", "q", "session", 0.5, nil, seen, false)
	// A live policy edge to a faded observation block goes with the block.
	lcEdge(t, db, "a", "z", "cites", 0.2, 0, seen, false)

	r := lcSweep(t, db, now, lcWall)
	lcExpectEdges(t, db, []string{"a-b", "a-c", "p-q", "b-q"}, []string{"d-e", "d-f", "a-z"})
	if r.EdgesPruned != 1 || r.EdgesDecayed != 1 || r.Archived != 1 || r.EdgesRemovedWithBlocks != 1 {
		t.Errorf("report pruned=%d decayed=%d archived=%d with_blocks=%d, want 1 1 1 1",
			r.EdgesPruned, r.EdgesDecayed, r.Archived, r.EdgesRemovedWithBlocks)
	}
	if got := lcActions(lcEdgeEvents(t, db, "a", "z")); !slices.Equal(got, []string{"delete"}) {
		t.Errorf("a-z events %v, want the block archival's delete", got)
	}
	for _, k := range [][2]string{{"a", "b"}, {"a", "c"}, {"p", "q"}, {"b", "q"}} {
		if ev := lcEdgeEvents(t, db, k[0], k[1]); len(ev) != 0 {
			t.Errorf("%s-%s events %+v", k[0], k[1], ev)
		}
	}
	// a-z went with its block, not by its policy.
	if got := lcPolicy(t, r, "cites"); got.Decayed != 0 {
		t.Errorf("cites counts %+v, want nothing decayed by the policy", got)
	}
	if want := (worker.PolicyCount{RelationType: "depends_on", Processed: 2}); lcPolicy(t, r, "depends_on") != want {
		t.Errorf("depends_on counts %+v, want %+v", lcPolicy(t, r, "depends_on"), want)
	}
	if want := (worker.PolicyCount{RelationType: "session"}); lcPolicy(t, r, "session") != want {
		t.Errorf("session counts %+v, want %+v", lcPolicy(t, r, "session"), want)
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
			db, _ := newMemory(t, lcBlocks("a", "b", "c", "d"))
			lcExec(t, db, `INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES ('z', 'observation', 0)`)
			lcPolicyRow(t, db, "good", "linear", `{"rate":1}`, "active_hours", nil, "delete", "delete")
			lcPolicyRow(t, db, "broken_rel", c.model, c.params, "wall", c.threshold, "delete", "keep")
			lcEdge(t, db, "a", "b", "good", 0.5, 0, nil, false)                      // would decay
			lcEdge(t, db, "a", "c", "broken_rel", 0.5, 0, lcAgo(lcWall, 1e4), false) // would decay
			lcEdge(t, db, "a", "d", "similar", 0.05, 0, nil, false)                  // would be pruned
			lcEdge(t, db, "a", "z", "similar", 0.9, 0, nil, false)                   // goes with z
			lcExec(t, db, `INSERT INTO mem_facts (id, segment, last_accessed_at) VALUES ('old', 'context', ?)`, lcAgo(lcWall, 400))
			lcExec(t, db, `INSERT INTO mem_events (at, subject_kind, subject_id, action) VALUES (?, 'fact', 'x', 'feedback')`, lcAgo(lcWall, 400))
			lcExec(t, db, `UPDATE mem_config SET value = 30 WHERE key = 'event_retention_days'`)
			before := lcDump(t, db)
			for _, dry := range []bool{true, false} {
				now := 1000.0
				_, err := worker.Sweep(context.Background(), db, worker.SweepOptions{Now: &now, WallNow: &lcWall, DryRun: dry})
				if err == nil {
					t.Fatalf("dry=%v: sweep succeeded with a broken policy", dry)
				}
				if !strings.Contains(err.Error(), `"broken_rel"`) {
					t.Errorf("dry=%v: error %q does not name the relation type", dry, err)
				}
				if strings.Contains(err.Error(), `"good"`) {
					t.Errorf("dry=%v: error %q blames the good policy", dry, err)
				}
				if after := lcDump(t, db); after != before {
					t.Errorf("dry=%v: the failed sweep changed the database:\nbefore\n%s\nafter\n%s", dry, before, after)
				}
			}
			if got := scalar[string](t, db, `SELECT status FROM mem_sweeps ORDER BY id DESC LIMIT 1`); got != "failed" {
				t.Errorf("the failed sweep is recorded as %q", got)
			}
			// Fixing the row lets the next sweep run.
			lcExec(t, db, `UPDATE mem_edge_policies SET model = 'half_life', params = '{"half_life":"90d"}', threshold = 0.1
				WHERE relation_type = 'broken_rel'`)
			r := lcSweep(t, db, 1000, lcWall)
			lcExpectEdges(t, db, nil, []string{"a-b", "a-c", "a-d", "a-z"})
			if r.Facts.Pruned != 1 || r.EventsExpired != 1 {
				t.Errorf("the repaired sweep: facts %+v, events expired %d", r.Facts, r.EventsExpired)
			}
		})
	}
}

// TestPolicyDurations: durations in params carry m, h or d and are converted
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
	db, _ = newMemory(t, lcBlocks("a", "b", "c", "d", "e"))
	lcPolicyRow(t, db, "held_m", "delayed_linear", `{"rate":1,"hold":"30m"}`, "active_hours", nil, "delete", "keep")
	lcPolicyRow(t, db, "held_bare", "delayed_linear", `{"rate":1,"hold":0.5}`, "active_hours", nil, "delete", "keep")
	lcEdge(t, db, "a", "b", "held_m", 0.5, now-0.99, nil, false)
	lcEdge(t, db, "a", "c", "held_m", 0.5, now-1, nil, false)
	lcEdge(t, db, "a", "d", "held_bare", 0.5, now-0.99, nil, false)
	lcEdge(t, db, "a", "e", "held_bare", 0.5, now-1, nil, false)
	sweepAt(t, db, now)
	lcExpectEdges(t, db, []string{"a-b", "a-d"}, []string{"a-c", "a-e"})
}

// TestDryRunPolicyFacts: with relation policies (exclude, delete with
// orphans) and facts to archive and prune, a dry run through a read-only
// open leaves every byte of the file and predicts the real sweep's counts.
func TestDryRunPolicyFacts(t *testing.T) {
	writer, path := newMemory(t, lcBlocks("a", "b", "c", "d", "e", "x"))
	lcExec(t, writer, `INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES ('obs', 'observation', 0)`)
	lcExec(t, writer, `INSERT INTO mem_block_tags VALUES ('obs', 'standup'), ('x', 'topic')`)
	lcPolicyRow(t, writer, "works_on", "half_life", `{"half_life":"90d"}`, "wall", 0.10, "exclude", "keep")
	lcPolicyRow(t, writer, "next_turn", "delayed_linear", `{"rate":0.25,"hold":"4h"}`, "active_hours", nil, "delete", "delete")
	lcEdge(t, writer, "a", "b", "works_on", 1, 100, lcAgo(lcWall, 290), false)
	lcEdge(t, writer, "a", "c", "works_on", 1, 100, lcAgo(lcWall, 310), false)
	lcEdge(t, writer, "a", "d", "works_on", 1, 100, lcAgo(lcWall, 999), true)
	lcEdge(t, writer, "a", "x", "next_turn", 1, 100-8, nil, false)
	lcEdge(t, writer, "a", "e", "next_turn", 1, 100-7.9, nil, false)
	lcEdge(t, writer, "b", "c", "similar", 0.05, 100, nil, false)
	lcEdge(t, writer, "b", "obs", "similar", 0.5, 100, nil, false)
	lcEdge(t, writer, "c", "d", "similar", 0.15, 0, nil, false) // 0.15 e^−0.5 = 0.091: temporal decay
	for _, f := range []struct {
		id, segment, status string
		days                float64
	}{
		{"ctx-keep", "context", "active", 1}, {"ctx-archive", "context", "active", 30}, {"ctx-prune", "context", "active", 80},
		{"know-archive", "knowledge", "active", 200}, {"know-keep", "knowledge", "active", 40},
		{"me", "identity", "active", 5000}, {"sure", "context", "confirmed", 5000},
	} {
		lcExec(t, writer, `INSERT INTO mem_facts (id, segment, status, last_accessed_at) VALUES (?, ?, ?, ?)`,
			f.id, f.segment, f.status, lcAgo(lcWall, f.days))
	}
	lcExec(t, writer, `UPDATE mem_config SET value = 100 WHERE key = 'active_hours'`)
	if err := writer.Close(); err != nil {
		t.Fatal(err)
	}
	before := lcHashes(t, path)
	ro, err := worker.OpenMemory(path, true)
	if err != nil {
		t.Fatal(err)
	}
	dry, err := worker.Sweep(context.Background(), ro, worker.SweepOptions{DryRun: true, WallNow: &lcWall})
	if err != nil {
		t.Fatal(err)
	}
	if err := ro.Close(); err != nil {
		t.Fatal(err)
	}
	lcSameFiles(t, before, lcHashes(t, path))

	rw, err := worker.OpenMemory(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Close()
	if n := scalar[int](t, rw, `SELECT (SELECT count(*) FROM mem_events) + (SELECT count(*) FROM mem_sweeps)`); n != 0 {
		t.Errorf("the dry run wrote %d events or sweeps", n)
	}
	real, err := worker.Sweep(context.Background(), rw, worker.SweepOptions{WallNow: &lcWall})
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
