package worker_test

// What memworker says is true: every edge a sweep removes is counted in
// the escalation, the summary, the JSON and the removals plot.

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/worker"
)

// massRemovalFixture: a clique a–d of six recent edges, a faded block z
// whose two edges go with it, and a policy edge p–q that its half-life
// policy removes: 3 of 9 edges go (33 %), none by static prune or tiered
// decay.
const massRemovalFixture = `
	UPDATE mem_config SET value = 0 WHERE key = 'reinforce_top_n';
	INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES
		('a','knowledge',1000), ('b','knowledge',1000), ('c','knowledge',1000), ('d','knowledge',1000),
		('z','knowledge',0), ('p','knowledge',NULL), ('q','knowledge',NULL);
	INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES
		('a','b',0.9,1,1000), ('a','c',0.9,1,1000), ('a','d',0.9,1,1000),
		('b','c',0.9,1,1000), ('b','d',0.9,1,1000), ('c','d',0.9,1,1000),
		('a','z',0.2,0,1000), ('b','z',0.2,0,1000);
	INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, relation_type, last_active_hours) VALUES
		('p','q',0.5,0,'mentioned',0);
	INSERT INTO mem_edge_policies (relation_type, model, params, clock, threshold, action, orphans) VALUES
		('mentioned','half_life','{"half_life":1}','active_hours',0.05,'delete','keep');`

// TestEveryRemovalEscalates: edges removed with their blocks and by a
// policy count towards the 25 % escalation and are named in the summary
// and in the JSON total, in a dry run and in the sweep itself.
func TestEveryRemovalEscalates(t *testing.T) {
	for _, dry := range []bool{true, false} {
		db, _ := newMemory(t, massRemovalFixture)
		now := 1000.0
		r := sweepWith(t, db, worker.SweepOptions{Now: &now, DryRun: dry})
		if r.Archived != 1 || r.EdgesRemovedWithBlocks != 2 || r.EdgesPruned != 0 || r.EdgesDecayed != 0 {
			t.Fatalf("dry run %v: report %+v", dry, r)
		}
		if r.EdgesRemoved != 3 || r.EdgesBefore != 9 || r.TotalEdgesAfter != 6 {
			t.Errorf("dry run %v: edges removed %d of %d, %d after; want 3 of 9, 6 after", dry, r.EdgesRemoved, r.EdgesBefore, r.TotalEdgesAfter)
		}
		want := "Curated: 1 archived with 2 edges, 1 mentioned edges decayed (6 remain)."
		if !strings.HasPrefix(r.Summary, want) {
			t.Errorf("dry run %v: summary %q, want it to start %q", dry, r.Summary, want)
		}
		if !strings.Contains(r.Summary, "reduced significantly (33% of edges removed)") {
			t.Errorf("dry run %v: summary %q does not escalate", dry, r.Summary)
		}
	}
}

// TestRemovalKindsInSummary: each kind of edge removal alone is named, and
// the escalation takes it on both sides of 25 %.
func TestRemovalKindsInSummary(t *testing.T) {
	// 1 of 4 edges goes with its block: named, 25 % is not above.
	db, _ := newMemory(t, `
		UPDATE mem_config SET value = 0 WHERE key = 'reinforce_top_n';
		INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES
			('a','knowledge',1000), ('b','knowledge',1000), ('c','knowledge',1000), ('z','knowledge',0);
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES
			('a','b',0.9,1,1000), ('a','c',0.9,1,1000), ('b','c',0.9,1,1000), ('a','z',0.2,0,1000);`)
	r := sweepAt(t, db, 1000)
	if want := "Curated: 1 archived with 1 edges."; r.Summary != want {
		t.Errorf("summary %q, want %q", r.Summary, want)
	}
	// The plot's removals read the same counts from the recorded sweep.
	d, err := worker.Plot(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Sweeps) != 1 || d.Sweeps[0].EdgesRemovedWithBlocks != 1 || d.Sweeps[0].Archived != 1 {
		t.Errorf("plotted sweeps %+v, want one with 1 block archived and 1 edge with it", d.Sweeps)
	}
}

// TestPlotCountsPolicyRemovals: the removals plot has each sweep's policy
// decays and edges removed with blocks, as its report has them.
func TestPlotCountsPolicyRemovals(t *testing.T) {
	db, _ := newMemory(t, massRemovalFixture)
	r := sweepAt(t, db, 1000)
	d, err := worker.Plot(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Sweeps) != 1 {
		t.Fatalf("plotted sweeps %+v", d.Sweeps)
	}
	s := d.Sweeps[0]
	if s.EdgesRemovedWithBlocks != r.EdgesRemovedWithBlocks || s.EdgesPolicy != 1 || s.Archived != 1 {
		t.Errorf("plotted %+v, report %+v", s, r)
	}
}

// TestBridgeThresholdActiveOnly: the bridge threshold is taken over the
// degrees of the active blocks only (docs/sweep.md). A clique of inbox blocks
// and a pair of archived ones, all heavier than any active block, would
// raise d[floor(0.8 n)] to 3.0 and leave the faded lb (0.95) unprotected;
// over the active blocks it is 0.95, so lb stays and lc (0.94) goes.
func TestBridgeThresholdActiveOnly(t *testing.T) {
	db, _ := newMemory(t, `
		INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES
			('h','knowledge',1000), ('l2','knowledge',1000), ('l3','knowledge',1000), ('l4','knowledge',1000),
			('l5','knowledge',1000), ('l6','knowledge',1000), ('l7','knowledge',1000), ('l8','knowledge',1000),
			('lb','knowledge',0), ('lc','knowledge',0);
		INSERT INTO mem_blocks (id, category, status, last_reinforced_hours) VALUES
			('i1','knowledge','inbox',1000), ('i2','knowledge','inbox',1000), ('i3','knowledge','inbox',1000),
			('i4','knowledge','inbox',1000), ('x1','knowledge','archived',0), ('x2','knowledge','archived',0);
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES
			('h','l2',0.2,0,1000), ('h','l3',0.3,0,1000), ('h','l4',0.4,0,1000), ('h','l5',0.5,0,1000),
			('h','l6',0.6,0,1000), ('h','l7',0.7,0,1000), ('h','l8',0.8,0,1000),
			('h','lb',0.95,0,1000), ('h','lc',0.94,0,1000),
			('i1','i2',1,0,1000), ('i1','i3',1,0,1000), ('i1','i4',1,0,1000),
			('i2','i3',1,0,1000), ('i2','i4',1,0,1000), ('i3','i4',1,0,1000),
			('x1','x2',1.5,0,1000);`)
	r := sweepAt(t, db, 1000)
	if r.BridgeThreshold == nil || *r.BridgeThreshold != fixedDegree(0.95) {
		t.Fatalf("bridge threshold %v, want 0.95 (over the active blocks) in fixed point", fmtPtr(r.BridgeThreshold))
	}
	expectStatus(t, db, "active", "lb", "h")
	expectStatus(t, db, "archived", "lc")
	expectStatus(t, db, "inbox", "i1", "i2", "i3", "i4")
	expectEdges(t, db, []string{"h-lb", "i1-i2"}, []string{"h-lc"})
}

// TestBridgeResolution: weighted degrees are kept in fixed point, each
// edge's strength rounded to a multiple of 2^-32 (docs/graph-scores.md), and
// bridge protection compares them at that resolution. With the threshold at
// 0.5, a faded block of degree 0.5 − 2^-34 rounds to 0.5 and is protected;
// one of 0.5 − 2^-31 is a whole step below and is archived.
func TestBridgeResolution(t *testing.T) {
	db, _ := newMemory(t, `
		INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES
			('h','knowledge',1000), ('l1','knowledge',1000), ('l2','knowledge',1000), ('l3','knowledge',1000),
			('l4','knowledge',1000), ('l5','knowledge',1000), ('l6','knowledge',1000), ('lt','knowledge',1000),
			('c-hair','knowledge',0), ('c-step','knowledge',0);
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES
			('h','l1',0.15,0,1000), ('h','l2',0.2,0,1000), ('h','l3',0.25,0,1000), ('h','l4',0.3,0,1000),
			('h','l5',0.35,0,1000), ('h','l6',0.4,0,1000), ('h','lt',0.5,0,1000);`)
	hair, step := 0.5-math.Ldexp(1, -34), 0.5-math.Ldexp(1, -31)
	mustExec(t, db, `INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours)
		VALUES ('c-hair','h',?,0,1000), ('c-step','h',?,0,1000)`, hair, step)
	if fixedDegree(hair) != 0.5 || fixedDegree(step) != step {
		t.Fatalf("fixture: %v rounds to %v, %v to %v", hair, fixedDegree(hair), step, fixedDegree(step))
	}
	r := sweepAt(t, db, 1000)
	if r.BridgeThreshold == nil || *r.BridgeThreshold != 0.5 {
		t.Fatalf("bridge threshold %v, want 0.5", fmtPtr(r.BridgeThreshold))
	}
	expectStatus(t, db, "active", "c-hair")
	expectStatus(t, db, "archived", "c-step")
}

// TestExplainEdgeUnderPolicy: explain --edge takes its numbers from
// mem_edges_effective, so an edge under a half-life policy on the wall
// clock is explained on its policy's curve, clock and threshold, with when
// it decays; decayed lists it among the edges closest to decay.
func TestExplainEdgeUnderPolicy(t *testing.T) {
	db, _ := newMemory(t, knowledgeBlocks("a", "b", "c", "d"))
	wall := pinWall(t, db, fixedWall)
	addPolicy(t, db, "cites", "half_life", `{"half_life":"10d"}`, "wall", 0.05, "delete", "keep")
	// 0.025 days before the weight of 1 halves below 0.05 (at 10 log2(20) days).
	addEdge(t, db, "a", "b", "cites", 1, 100, daysAgo(wall, 10*math.Log2(20)-0.025), false)
	addEdge(t, db, "c", "d", "similar", 0.5, 100, nil, false)
	mustExec(t, db, `UPDATE mem_config SET value = 110 WHERE key = 'active_hours'`)
	ctx := context.Background()

	x, err := worker.ExplainEdge(ctx, db, "b", "a")
	if err != nil {
		t.Fatal(err)
	}
	var eff, threshold, left, elapsed float64
	if err := db.SQL.QueryRow(`SELECT effective_weight, threshold, time_left, elapsed FROM mem_edges_effective
		WHERE from_id = 'a' AND to_id = 'b'`).Scan(&eff, &threshold, &left, &elapsed); err != nil {
		t.Fatal(err)
	}
	if !near(left, 0.025, 1e-4) || !near(eff, 0.0501, 1e-4) {
		t.Fatalf("fixture: view says effective %v, %v days left", eff, left)
	}
	if x.Model != "half_life" || x.Clock != "wall" || x.Lambda != nil || x.EffectiveWeight != eff || x.Threshold != threshold ||
		x.TimeLeft == nil || *x.TimeLeft != left || x.Elapsed == nil || *x.Elapsed != elapsed {
		t.Errorf("explain %+v; view: effective %v, threshold %v, %v days left, elapsed %v", x, eff, threshold, left, elapsed)
	}
	if !strings.Contains(x.Verdict, "0.0501 ≥ 0.0500") || !strings.Contains(x.Verdict, "36 min") {
		t.Errorf("verdict %q: want the policy's numbers and when (in 36 min)", x.Verdict)
	}
	// The tiered edge beside it keeps its λ and its horizon in active hours.
	y, err := worker.ExplainEdge(ctx, db, "c", "d")
	if err != nil {
		t.Fatal(err)
	}
	if y.Model != "tiered" || y.Clock != "active_hours" || y.Lambda == nil || *y.Lambda != 0.005 || y.DecaysAtHours == nil {
		t.Errorf("tiered edge: %+v", y)
	}

	_, soon, err := worker.Decayed(ctx, db, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(soon) != 2 || soon[0].From != "a" || soon[0].Clock != "wall" || soon[0].TimeLeft != left || soon[0].HoursLeft != left*24 {
		t.Errorf("closest to decay: %+v, want a—b first with %v days left", soon, left)
	}
}

// TestHumanSpan: times as a person reads them, on either clock.
func TestHumanSpan(t *testing.T) {
	for _, c := range []struct {
		v     float64
		clock string
		want  string
	}{
		{460517, "active_hours", "52.6 years"}, {4605.17, "active_hours", "192 days"}, {460.517, "active_hours", "19 days"},
		{92.1034, "active_hours", "3.8 days"}, {30, "active_hours", "30 h"}, {0.5, "active_hours", "30 min"},
		{0.025, "wall", "36 min"}, {298.974, "wall", "299 days"}, {1000, "wall", "2.74 years"}, {1, "wall", "24 h"},
		{0, "wall", "0 s"}, {math.Inf(1), "wall", "never"},
	} {
		if got := worker.HumanSpan(c.v, c.clock); got != c.want {
			t.Errorf("HumanSpan(%v, %s) = %q, want %q", c.v, c.clock, got, c.want)
		}
	}
}

// TestPlotDataTruths: the tier pair of an edge is one group whichever end
// is which; a policy curve that is a tier's curve says so.
func TestPlotDataTruths(t *testing.T) {
	db, _ := newMemory(t, `
		INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES
			('s1','knowledge',NULL), ('s2','knowledge',NULL), ('e1','observation',NULL), ('x2','observation',NULL),
			('a','knowledge',NULL), ('b','knowledge',NULL);
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES
			('e1','s1',0.9,0,100), ('s2','x2',0.9,0,100);
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, relation_type, last_active_hours) VALUES
			('a','b',0.9,0,'linked',100);
		INSERT INTO mem_edge_policies (relation_type, model, params, clock, threshold, action, orphans) VALUES
			('linked','exponential','{"lambda":0.005}','active_hours',NULL,'delete','keep');
		UPDATE mem_config SET value = 100 WHERE key = 'active_hours';`)
	d, err := worker.Plot(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	var groups []string
	for _, g := range d.TimeLeft {
		groups = append(groups, fmt.Sprintf("%s:%d", g.Group, len(g.Values)))
	}
	if got := strings.Join(groups, " "); got != "policy linked:1 tier standard-ephemeral:2" {
		t.Errorf("time-left groups %q, want the two standard/ephemeral edges as one pair", got)
	}
	same := map[string]string{}
	for _, c := range d.Curves {
		same[c.Name] = c.SameAs
	}
	if same["policy linked"] != "tier standard" || same["tier standard"] != "" || same["tier durable"] != "" {
		t.Errorf("same-as: %v, want policy linked the same as tier standard", same)
	}
}
