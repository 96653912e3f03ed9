package worker_test

// Rules of docs/sweep.md for edges, each on a real SQLite file with rows on
// both sides of every threshold: tiers, the established cliff, anchors,
// origins, pins, the decay cap and thresholds, and the tallies they keep.

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/worker"
)

// TestTierPrecedence sees each block's tier through the edge it shares with
// an ephemeral partner: λ_edge = λ_tier × 0.5, so a weight-0.5 edge survives
// at elapsed 1.5/λ_edge (0.112) and decays at 1.7/λ_edge (0.091).
func TestTierPrecedence(t *testing.T) {
	edgeLambda := map[string]float64{"permanent": 0.000005, "durable": 0.0005, "standard": 0.005, "ephemeral": 0.025}
	cases := []struct {
		name, category string
		tags           []string
		tier           string
	}{
		{"constitutional tag beats category observation", "observation", []string{"self/constitutional"}, "permanent"},
		{"constitutional tag beats self/value and mind", "mind", []string{"self/value", "self/constitutional"}, "permanent"},
		{"self/value beats category observation", "observation", []string{"self/value"}, "durable"},
		{"self/constraint beats category observation", "observation", []string{"self/constraint"}, "durable"},
		{"self/goal beats category observation", "observation", []string{"self/goal", "python"}, "durable"},
		{"category mind is durable", "mind", nil, "durable"},
		{"category observation is ephemeral", "observation", []string{"python", "self/other"}, "ephemeral"},
		{"category knowledge is standard", "knowledge", nil, "standard"},
		{"no category is standard", "", []string{"project"}, "standard"},
	}
	for _, c := range cases {
		for _, side := range []struct {
			factor  float64
			survive bool
		}{{1.5, true}, {1.7, false}} {
			t.Run(fmt.Sprintf("%s/elapsed %.1f÷λ", c.name, side.factor), func(t *testing.T) {
				cat := "NULL"
				if c.category != "" {
					cat = "'" + c.category + "'"
				}
				var tags []string
				for _, tag := range c.tags {
					tags = append(tags, fmt.Sprintf("INSERT INTO mem_block_tags VALUES ('x', '%s');", tag))
				}
				db, _ := newMemory(t, fixture(
					fmt.Sprintf(`INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES ('x', %s, 0), ('zz', 'observation', 0);`, cat),
					strings.Join(tags, "\n"),
					`INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES ('x', 'zz', 0.5, 1, 0);`,
					`UPDATE mem_config SET value = 'off' WHERE key = 'block_archival';`))
				if got := scalar[string](t, db, `SELECT tier FROM mem_block_tiers WHERE id = 'x'`); got != c.tier {
					t.Fatalf("tier = %s, want %s", got, c.tier)
				}
				lam := edgeLambda[c.tier]
				now := side.factor / lam
				r := sweepAt(t, db, now)
				if side.survive {
					expectEdges(t, db, []string{"x-zz"}, nil)
					if r.EdgesDecayed != 0 {
						t.Errorf("edges_decayed = %d, want 0", r.EdgesDecayed)
					}
					return
				}
				expectEdges(t, db, nil, []string{"x-zz"})
				ev := decayEvent(t, db, "x", "zz")
				if got := num(t, ev.Detail, "lambda"); !near(got, lam, lam*1e-9) {
					t.Errorf("event lambda = %v, want %v", got, lam)
				}
				if got := num(t, ev.Detail, "effective_weight"); !near(got, 0.5*math.Exp(-1.7), 1e-9) {
					t.Errorf("event effective_weight = %v, want %v", got, 0.5*math.Exp(-1.7))
				}
			})
		}
	}
}

// TestEstablishedThreshold: reference 002 scenario 12 (weight 0.5, anchor 0,
// clock 500): count 9 decays (0.041), count 10 survives (0.143); the
// established_edge_threshold setting moves the cliff.
func TestEstablishedThreshold(t *testing.T) {
	const fx = `
		INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES
			('a','knowledge',500), ('b','knowledge',500), ('c','knowledge',500),
			('d','knowledge',500), ('e','knowledge',500), ('f','knowledge',500);
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES
			('a','b',0.5,9,0), ('c','d',0.5,10,0), ('e','f',0.5,12,0);`
	standard := 0.5 * math.Exp(-0.005*500)     // 0.041
	established := 0.5 * math.Exp(-0.0025*500) // 0.143
	for _, c := range []struct {
		threshold string
		keep      []string
		gone      []string
	}{
		{"", []string{"c-d", "e-f"}, []string{"a-b"}},
		{"12", []string{"e-f"}, []string{"a-b", "c-d"}},
		{"9", []string{"a-b", "c-d", "e-f"}, nil},
	} {
		t.Run("threshold "+c.threshold, func(t *testing.T) {
			db, _ := newMemory(t, fx)
			if c.threshold != "" {
				setConfig(t, db, "established_edge_threshold", c.threshold)
			} else if got := viewEffective(t, db, 500, "c", "d"); !near(got, 0.143, 0.0005) || !near(got, established, 1e-12) {
				t.Errorf("count 10 effective weight = %v, want 0.143", got)
			}
			r := sweepAt(t, db, 500)
			expectEdges(t, db, c.keep, c.gone)
			if r.EdgesDecayed != int64(len(c.gone)) {
				t.Errorf("edges_decayed = %d, want %d", r.EdgesDecayed, len(c.gone))
			}
			for _, k := range c.gone {
				from, to, _ := strings.Cut(k, "-")
				if got := num(t, decayEvent(t, db, from, to).Detail, "effective_weight"); !near(got, standard, 1e-12) || !near(got, 0.041, 0.0005) {
					t.Errorf("%s decayed at %v, want 0.041", k, got)
				}
			}
		})
	}
}

// TestNullAnchor: an edge without last_active_hours is never temporally
// decayed, but the static prune (weight < 0.10 and count 0) still applies.
func TestNullAnchor(t *testing.T) {
	db, _ := newMemory(t, `
		INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES
			('a','knowledge',10000), ('b','knowledge',10000), ('c','knowledge',10000), ('d','knowledge',10000),
			('e','knowledge',10000), ('f','knowledge',10000), ('g','knowledge',10000);
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES
			('a','b',0.5,0,NULL),     -- no anchor: survives any clock
			('a','c',0.09,0,NULL),    -- static prune
			('a','d',0.0999,0,NULL),  -- static prune, just below
			('a','e',0.10,0,NULL),    -- at the threshold: kept
			('a','f',0.09,1,NULL),    -- reinforced once: neither phase
			('a','g',0.5,0,0);        -- control: anchored, decays`)
	r := sweepAt(t, db, 10000)
	expectEdges(t, db, []string{"a-b", "a-e", "a-f"}, []string{"a-c", "a-d", "a-g"})
	if r.EdgesPruned != 2 || r.EdgesDecayed != 1 {
		t.Errorf("pruned %d decayed %d, want 2 and 1", r.EdgesPruned, r.EdgesDecayed)
	}
	for _, to := range []string{"c", "d"} {
		ev := eventsFor(t, db, "edge", edgeSubject("a", to))
		if len(ev) != 1 || ev[0].Action != "prune" || ev[0].Reason != "static" {
			t.Errorf("a-%s events %+v, want one static prune", to, ev)
		}
	}
}

// TestAgentOrigin: origin 'agent' is never temporally decayed; the static
// prune still removes a weight < 0.10 agent edge with no reinforcement.
func TestAgentOrigin(t *testing.T) {
	db, _ := newMemory(t, `
		INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES
			('a','knowledge',10000), ('b','knowledge',10000), ('c','knowledge',10000), ('d','knowledge',10000),
			('e','knowledge',10000), ('f','knowledge',10000), ('g','knowledge',10000), ('h','observation',10000);
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, origin, last_active_hours) VALUES
			('a','b',0.5,0,'agent',0),
			('a','c',0.85,3,'agent',0),
			('a','d',0.09,0,'agent',0),      -- static prune applies
			('a','e',0.09,1,'agent',0),      -- reinforced: static spares it, decay skips it
			('a','f',0.5,0,'similarity',0),
			('a','g',0.5,3,'outcome',0),
			('a','h',0.5,0,'observed',0);`)
	r := sweepAt(t, db, 10000)
	expectEdges(t, db, []string{"a-b", "a-c", "a-e"}, []string{"a-d", "a-f", "a-g", "a-h"})
	if r.EdgesPruned != 1 || r.EdgesDecayed != 3 {
		t.Errorf("pruned %d decayed %d, want 1 and 3", r.EdgesPruned, r.EdgesDecayed)
	}
}

// TestPinned: no phase removes a pinned edge, and a pinned edge keeps both
// its blocks from archival.
func TestPinned(t *testing.T) {
	db, _ := newMemory(t, `
		INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES
			('a','knowledge',1000), ('b','knowledge',1000), ('c','knowledge',1000), ('d','knowledge',1000),
			('f1','knowledge',0), ('f2','knowledge',0), ('f3','knowledge',0), ('f4','knowledge',0);
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours, pinned) VALUES
			('a','b',0.05,0,1000,1),  -- static candidate, pinned
			('a','c',0.5,1,0,1),      -- temporal candidate, pinned
			('a','f1',0.3,0,1000,1),  -- pinned: protects faded f1
			('b','f1',0.3,1,1000,0),  -- stays because f1 stays
			('b','f2',0.3,1,1000,0),  -- goes with faded f2 (no pinned edge)
			('c','d',0.5,1,0,0),      -- control: decays
			('f3','f4',0.3,0,1000,1); -- pinned between two faded blocks`)
	r := sweepAt(t, db, 1000)
	expectEdges(t, db, []string{"a-b", "a-c", "a-f1", "b-f1", "f3-f4"}, []string{"b-f2", "c-d"})
	expectStatus(t, db, "active", "f1", "f3", "f4")
	expectStatus(t, db, "archived", "f2")
	if r.Archived != 1 || r.EdgesRemovedWithBlocks != 1 || r.EdgesPruned != 0 || r.EdgesDecayed != 1 {
		t.Errorf("report %+v", r)
	}
	// Bridge protection is not what saved f1, f3, f4: their degrees are below
	// the threshold (block a, 0.919).
	if r.BridgeThreshold == nil || *r.BridgeThreshold != fixedDegree(0.05, 0.5+math.Log(2)*0.1, 0.3) {
		t.Errorf("bridge threshold = %v, want block a's degree 0.919", r.BridgeThreshold)
	}
}

// TestClockBehindAnchor: an anchor ahead of the clock counts as elapsed 0;
// the weight is never amplified (a 0.09 edge still decays, a block's
// recency never exceeds 1).
func TestClockBehindAnchor(t *testing.T) {
	db, _ := newMemory(t, `
		INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES
			('a','knowledge',500), ('b','knowledge',500), ('c','knowledge',500), ('d','knowledge',2000);
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES
			('a','b',0.09,1,600),   -- amplified it would be 0.148 and survive
			('a','c',0.11,1,600),
			('a','d',0.5,1,10000);`)
	if got := viewEffective(t, db, 500, "a", "d"); got != 0.5 {
		t.Errorf("view effective weight with anchor ahead = %v, want 0.5", got)
	}
	if got := scalar[float64](t, db, `SELECT elapsed_hours FROM mem_edges_effective WHERE from_id = 'a' AND to_id = 'd'`); got != 0 {
		t.Errorf("view elapsed = %v, want 0", got)
	}
	r := sweepAt(t, db, 500)
	expectEdges(t, db, []string{"a-c", "a-d"}, []string{"a-b"})
	expectStatus(t, db, "active", "d")
	ev := decayEvent(t, db, "a", "b")
	if got := num(t, ev.Detail, "effective_weight"); got != 0.09 {
		t.Errorf("effective weight = %v, want 0.09 (never amplified)", got)
	}
	if got := num(t, ev.Detail, "elapsed_hours"); got < 0 {
		t.Logf("note: decay event records elapsed_hours %v (raw, unclamped); effective weight used 0", got)
	}
	if len(r.DecayedSample) != 1 || r.DecayedSample[0].EffectiveWeight > r.DecayedSample[0].Weight {
		t.Errorf("decayed sample %+v", r.DecayedSample)
	}

	// Top-N recency: a block reinforced "in the future" scores recency 1,
	// not e^10, so the block with more confidence wins.
	db2, _ := newMemory(t, `
		INSERT INTO mem_blocks (id, category, confidence, last_reinforced_hours) VALUES
			('x','knowledge',0.5,1500), ('y','knowledge',0.6,500);
		UPDATE mem_config SET value = 1 WHERE key = 'reinforce_top_n';`)
	sweepAt(t, db2, 500)
	if x, y := blockOf(t, db2, "x"), blockOf(t, db2, "y"); x.Count != 0 || y.Count != 1 {
		t.Errorf("reinforced x=%d y=%d, want only y (recency clamped at 1)", x.Count, y.Count)
	}
}

// TestDecayCap: max_decay_fraction 0.5 with 5 candidates removes the 2 with
// the lowest effective weight and defers 3.
func TestDecayCap(t *testing.T) {
	const fx = `
		INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES
			('a','knowledge',500), ('b','knowledge',500), ('c','knowledge',500), ('d','knowledge',500),
			('e','knowledge',500), ('f','knowledge',500), ('g','knowledge',500);
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES
			('a','b',0.50,1,0),    -- 0.0410
			('a','c',0.20,1,300),  -- 0.0736
			('a','d',0.30,1,0),    -- 0.0246 lowest
			('a','e',0.15,1,200),  -- 0.0335
			('a','f',0.25,1,250),  -- 0.0716
			('a','g',0.50,1,400);  -- 0.303: not a candidate`
	t.Run("0.5", func(t *testing.T) {
		db, _ := newMemory(t, fx)
		setConfig(t, db, "max_decay_fraction", "0.5")
		r := sweepAt(t, db, 500)
		expectEdges(t, db, []string{"a-b", "a-c", "a-f", "a-g"}, []string{"a-d", "a-e"})
		if r.EdgesDecayed != 2 || r.EdgesDeferred != 3 || r.TotalEdgesAfter != 4 {
			t.Errorf("report %+v", r)
		}
		if !strings.Contains(r.Summary, "2 edges decayed (4 remain)") || !strings.Contains(r.Summary, "3 deferred") {
			t.Errorf("summary %q", r.Summary)
		}
		if len(r.DecayedSample) != 2 || r.DecayedSample[0].To != "d" || r.DecayedSample[1].To != "e" {
			t.Errorf("decayed sample %+v, want a-d then a-e", r.DecayedSample)
		}
		// Same clock: the cap was spent; nothing more goes.
		r = sweepAt(t, db, 500)
		if r.EdgesDecayed != 0 || r.EdgesDeferred != 3 {
			t.Errorf("same clock: %+v", r)
		}
		// 40 h later: candidates a-b 0.0336, a-f 0.0587, a-c 0.0602; floor(1.5) = 1.
		r = sweepAt(t, db, 540)
		expectEdges(t, db, []string{"a-c", "a-f", "a-g"}, []string{"a-b"})
		if r.EdgesDecayed != 1 || r.EdgesDeferred != 2 {
			t.Errorf("at 540: %+v", r)
		}
	})
	t.Run("1 (default)", func(t *testing.T) {
		db, _ := newMemory(t, fx)
		r := sweepAt(t, db, 500)
		expectEdges(t, db, []string{"a-g"}, []string{"a-b", "a-c", "a-d", "a-e", "a-f"})
		if r.EdgesDecayed != 5 || r.EdgesDeferred != 0 {
			t.Errorf("report %+v", r)
		}
	})
	t.Run("0", func(t *testing.T) {
		db, _ := newMemory(t, fx)
		setConfig(t, db, "max_decay_fraction", "0")
		r := sweepAt(t, db, 500)
		if r.EdgesDecayed != 0 || r.EdgesDeferred != 5 || r.TotalEdgesAfter != 6 {
			t.Errorf("report %+v", r)
		}
	})
}

// TestDecayThresholdSeparate: edge_decay_threshold governs temporal decay,
// edge_prune_threshold the static prune; 'auto' ties the first to the second.
func TestDecayThresholdSeparate(t *testing.T) {
	const fx = `
		INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES
			('a','knowledge',500), ('b','knowledge',500), ('c','knowledge',500), ('d','knowledge',500), ('e','knowledge',500);
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES
			('a','b',0.5,1,0),      -- 0.041
			('a','c',0.5,1,100),    -- 0.068
			('a','d',0.09,0,NULL),  -- static
			('a','e',0.11,0,NULL);`
	for _, c := range []struct {
		name       string
		set        map[string]string
		keep, gone []string
	}{
		{"defaults", nil, []string{"a-e"}, []string{"a-b", "a-c", "a-d"}},
		{"decay 0.05", map[string]string{"edge_decay_threshold": "0.05"}, []string{"a-c", "a-e"}, []string{"a-b", "a-d"}},
		{"prune 0.12, decay 0.05", map[string]string{"edge_prune_threshold": "0.12", "edge_decay_threshold": "0.05"},
			[]string{"a-c"}, []string{"a-b", "a-d", "a-e"}},
		{"prune 0.05, decay auto", map[string]string{"edge_prune_threshold": "0.05"}, []string{"a-c", "a-d", "a-e"}, []string{"a-b"}},
		{"prune 0.05, decay 0.07", map[string]string{"edge_prune_threshold": "0.05", "edge_decay_threshold": "0.07"},
			[]string{"a-d", "a-e"}, []string{"a-b", "a-c"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			db, _ := newMemory(t, fx)
			for k, v := range c.set {
				setConfig(t, db, k, v)
			}
			sweepAt(t, db, 500)
			expectEdges(t, db, c.keep, c.gone)
		})
	}
}

// TestCurateBookkeeping: last_curate_at follows the clock and
// edges_decayed_total accumulates across sweeps; a dry run changes neither.
func TestCurateBookkeeping(t *testing.T) {
	db, _ := newMemory(t, `
		INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES
			('a','knowledge',900), ('b','knowledge',900), ('c','knowledge',900), ('d','knowledge',900);
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES
			('a','b',0.5,1,0), ('a','c',0.5,1,0),   -- decay at 500
			('a','d',0.5,1,450);                    -- 0.5 e^-0.25 at 500, 0.5 e^-2.25 = 0.053 at 900`)
	if c := loadConfig(t, db); c.LastCurateAt != nil || c.EdgesDecayedTotal != 0 {
		t.Fatalf("fresh config %+v", c)
	}
	sweepAt(t, db, 500)
	if c := loadConfig(t, db); c.LastCurateAt == nil || *c.LastCurateAt != 500 || c.EdgesDecayedTotal != 2 {
		t.Errorf("after 500: last_curate_at %v total %d", c.LastCurateAt, c.EdgesDecayedTotal)
	}
	if r := dryRunAt(t, db, 900); r.EdgesDecayed != 1 {
		t.Errorf("dry run at 900 decays %d, want 1", r.EdgesDecayed)
	}
	if c := loadConfig(t, db); *c.LastCurateAt != 500 || c.EdgesDecayedTotal != 2 {
		t.Errorf("dry run changed last_curate_at %v / total %d", *c.LastCurateAt, c.EdgesDecayedTotal)
	}
	sweepAt(t, db, 900)
	sweepAt(t, db, 900)
	if c := loadConfig(t, db); *c.LastCurateAt != 900 || c.EdgesDecayedTotal != 3 {
		t.Errorf("after 900: last_curate_at %v total %d, want 900 and 3", *c.LastCurateAt, c.EdgesDecayedTotal)
	}
	if st, err := worker.GetStatus(context.Background(), db); err != nil || st.EdgesDecayed != 3 {
		t.Errorf("status %+v %v", st, err)
	}
}
