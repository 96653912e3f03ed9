package worker_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/worker"
)

// Rules of SPEC §4.1, each on a real SQLite file with rows on both sides of
// every threshold.

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
	if r.BridgeThreshold == nil || !near(*r.BridgeThreshold, 0.05+0.5+math.Log(2)*0.1+0.3, 1e-12) {
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

// TestBlockArchival: recency exp(−λ_tier × (now − last_reinforced_hours))
// below 0.05 archives, for every tier, on both sides; the archived block
// loses its tags and edges, each with an event.
func TestBlockArchival(t *testing.T) {
	const now = 300000
	fx := fmt.Sprintf(`
		INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES
			('p-keep','knowledge',%d), ('p-arch','knowledge',%d),   -- permanent λ 0.00001: 299000 h / 300000 h
			('d-keep','mind',%d), ('d-arch','mind',%d),             -- durable λ 0.001: 2990 / 3000
			('s-keep','knowledge',%d), ('s-arch','knowledge',%d),   -- standard λ 0.01: 299 / 300
			('e-keep','observation',%d), ('e-arch','observation',%d), -- ephemeral λ 0.05: 59 / 60
			('h1','knowledge',%[9]d), ('h2','knowledge',%[9]d), ('h3','knowledge',%[9]d), ('h4','knowledge',%[9]d);
		INSERT INTO mem_block_tags VALUES ('p-keep','self/constitutional'), ('p-arch','self/constitutional'),
			('s-arch','python'), ('s-arch','lang');
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES
			('s-arch','s-keep',0.3,1,%[9]d), ('e-keep','s-arch',0.3,1,%[9]d),
			('h1','h2',0.9,10,%[9]d), ('h1','h3',0.9,10,%[9]d), ('h1','h4',0.9,10,%[9]d),
			('h2','h3',0.9,10,%[9]d), ('h2','h4',0.9,10,%[9]d), ('h3','h4',0.9,10,%[9]d);`,
		now-299000, now-300000, now-2990, now-3000, now-299, now-300, now-59, now-60, now)

	t.Run("auto", func(t *testing.T) {
		db, _ := newMemory(t, fx)
		r := sweepAt(t, db, now)
		expectStatus(t, db, "active", "p-keep", "d-keep", "s-keep", "e-keep")
		expectStatus(t, db, "archived", "p-arch", "d-arch", "s-arch", "e-arch")
		for _, id := range []string{"p-arch", "d-arch", "s-arch", "e-arch"} {
			b := blockOf(t, db, id)
			if b.Reason.String != "decayed" || b.Tags != 0 {
				t.Errorf("%s: reason %v, %d tags left", id, b.Reason, b.Tags)
			}
			ev := eventsFor(t, db, "block", id)
			if len(ev) != 1 || ev[0].Action != "archive" || ev[0].Reason != "decayed" {
				t.Errorf("%s events %+v, want one archive/decayed", id, ev)
			}
		}
		if rec := num(t, eventsFor(t, db, "block", "s-arch")[0].Detail, "recency"); !near(rec, math.Exp(-3), 1e-12) {
			t.Errorf("s-arch recency %v, want %v", rec, math.Exp(-3))
		}
		if tags := eventTags(t, eventsFor(t, db, "block", "s-arch")[0].Detail); !slices.Equal(tags, []string{"lang", "python"}) {
			t.Errorf("s-arch event tags %v, want [lang python]", tags)
		}
		expectEdges(t, db, []string{"h1-h2"}, []string{"s-arch-s-keep", "e-keep-s-arch"})
		for _, e := range [][2]string{{"s-arch", "s-keep"}, {"e-keep", "s-arch"}} {
			ev := eventsFor(t, db, "edge", edgeSubject(e[0], e[1]))
			if len(ev) != 1 || ev[0].Action != "delete" || ev[0].Reason != "block_archived" {
				t.Errorf("%v events %+v", e, ev)
			}
		}
		if r.Archived != 4 || r.EdgesRemovedWithBlocks != 2 || r.TotalEdgesAfter != 6 {
			t.Errorf("report %+v", r)
		}
		if !strings.HasPrefix(r.Summary, "Curated: 4 archived") {
			t.Errorf("summary %q", r.Summary)
		}
	})
	t.Run("off", func(t *testing.T) {
		db, _ := newMemory(t, fx)
		setConfig(t, db, "block_archival", "off")
		r := sweepAt(t, db, now)
		if r.Archived != 0 || scalar[int](t, db, `SELECT count(*) FROM mem_blocks WHERE status = 'archived'`) != 0 {
			t.Errorf("archived %d with block_archival off", r.Archived)
		}
		if r.TotalEdgesAfter != 8 {
			t.Errorf("edges after %d, want 8", r.TotalEdgesAfter)
		}
	})
}

// TestBridgeProtection: a faded block whose weighted degree
// Σ(weight + ln(1+count)×0.10) is at or above d[min(floor(0.8n), n−1)] stays.
func TestBridgeProtection(t *testing.T) {
	t.Run("star of ten: threshold is the 9th smallest degree", func(t *testing.T) {
		// Degrees: leaves 0.2..0.8, faded c 0.94, faded b 0.95, hub h = sum.
		// n = 10, floor(0.8n) = 8: d[8] = 0.95 (not the hub's maximum).
		db, _ := newMemory(t, `
			INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES
				('h','knowledge',1000), ('l2','knowledge',1000), ('l3','knowledge',1000), ('l4','knowledge',1000),
				('l5','knowledge',1000), ('l6','knowledge',1000), ('l7','knowledge',1000), ('l8','knowledge',1000),
				('lb','knowledge',0), ('lc','knowledge',0);
			INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES
				('h','l2',0.2,0,1000), ('h','l3',0.3,0,1000), ('h','l4',0.4,0,1000), ('h','l5',0.5,0,1000),
				('h','l6',0.6,0,1000), ('h','l7',0.7,0,1000), ('h','l8',0.8,0,1000),
				('h','lb',0.95,0,1000), ('h','lc',0.94,0,1000);`)
		r := sweepAt(t, db, 1000)
		if r.BridgeThreshold == nil || *r.BridgeThreshold != 0.95 {
			t.Fatalf("bridge threshold %v, want 0.95", r.BridgeThreshold)
		}
		expectStatus(t, db, "active", "lb")
		expectStatus(t, db, "archived", "lc")
		expectEdges(t, db, []string{"h-lb"}, []string{"h-lc"})
	})
	t.Run("reinforcement counts in the degree", func(t *testing.T) {
		// b: 2 × (0.5 + ln4 × 0.10) = 1.27726; c: 2 × 0.6386 = 1.2772.
		// Without the ln(1+count) term b would be 1.0 and lose to c.
		db, _ := newMemory(t, `
			INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES
				('b-faded','knowledge',0), ('c-faded','knowledge',0),
				('f1','knowledge',1000), ('f2','knowledge',1000), ('f3','knowledge',1000);
			INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES
				('b-faded','f1',0.5,3,1000), ('b-faded','f2',0.5,3,1000),
				('c-faded','f2',0.6386,0,1000), ('c-faded','f3',0.6386,0,1000);`)
		r := sweepAt(t, db, 1000)
		want := 2 * (0.5 + math.Log1p(3)*0.10)
		if r.BridgeThreshold == nil || !near(*r.BridgeThreshold, want, 1e-12) {
			t.Fatalf("bridge threshold %v, want %v", r.BridgeThreshold, want)
		}
		expectStatus(t, db, "active", "b-faded")
		expectStatus(t, db, "archived", "c-faded")
	})
	t.Run("n = 0: no protection", func(t *testing.T) {
		db, _ := newMemory(t, `
			INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES
				('x','knowledge',0), ('y','knowledge',1000), ('z','knowledge',0);
			INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES
				('x','y',0,0,1000);   -- strength 0: no non-zero degree anywhere`)
		r := sweepAt(t, db, 1000)
		if r.BridgeThreshold != nil {
			t.Errorf("bridge threshold %v, want none", *r.BridgeThreshold)
		}
		expectStatus(t, db, "archived", "x", "z")
		expectStatus(t, db, "active", "y")
	})
	t.Run("n = 2: one edge protects its faded end", func(t *testing.T) {
		// d = [0.5, 0.5], index min(1, 1) = 1: the faded end is at the threshold.
		db, _ := newMemory(t, `
			INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES ('x','knowledge',0), ('y','knowledge',1000);
			INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES ('x','y',0.5,0,1000);`)
		sweepAt(t, db, 1000)
		expectStatus(t, db, "active", "x", "y")
	})
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

// composite is SPEC §4.1 phase 6's score, for checking fixtures by hand.
func composite(confidence, recency, centrality, reinforcement float64) float64 {
	return (0.30*confidence + 0.05*recency + 0.25*centrality + 0.30*reinforcement) / 0.90
}

// TestReinforcement: constitutional blocks get count+1 and the clock; the
// top N by composite (over what is left after the removals) get the same.
func TestReinforcement(t *testing.T) {
	const now = 1000
	const fx = `
		INSERT INTO mem_blocks (id, category, confidence, reinforcement_count, last_reinforced_hours) VALUES
			('k','knowledge',0.5,0,800),
			('a','knowledge',0.9,0,990),
			('b','knowledge',0.3,8,950),
			('c','knowledge',0.3,0,1000),
			('p','knowledge',0.6,2,1000),
			('q','knowledge',0.1,0,1000), ('x','knowledge',0.1,0,1000), ('y','knowledge',0.1,0,1000);
		INSERT INTO mem_block_tags VALUES ('k','self/constitutional');
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES
			('c','x',0.9,4,1000), ('c','y',0.9,4,1000),
			('p','q',0.9,2,0);   -- decays (0.006): p's centrality is 0 after phase 3`
	// The composites as SPEC §4.1 defines them, after phases 1-5.
	maxCount := math.Log1p(8)
	cDeg := 2 * (0.9 + math.Log1p(4)*0.1)
	scores := map[string]float64{
		"k": composite(0.5, 1, 0, math.Log1p(1)/maxCount),
		"a": composite(0.9, math.Exp(-0.01*10), 0, 0),
		"b": composite(0.3, math.Exp(-0.01*50), 0, 1),
		"c": composite(0.3, 1, 1, 0),
		"p": composite(0.6, 1, 0, math.Log1p(2)/maxCount),
		"x": composite(0.1, 1, (0.9+math.Log1p(4)*0.1)/cDeg, 0),
	}
	if !(scores["b"] > scores["c"] && scores["c"] > scores["p"] && scores["p"] > scores["a"] && scores["a"] > scores["k"] && scores["k"] > scores["x"]) {
		t.Fatalf("fixture does not rank as designed: %v", scores)
	}
	for _, c := range []struct {
		topN string
		top  []string
	}{{"0", nil}, {"2", []string{"b", "c"}}, {"4", []string{"b", "c", "p", "a"}}} {
		t.Run("top "+c.topN, func(t *testing.T) {
			db, _ := newMemory(t, fx)
			setConfig(t, db, "reinforce_top_n", c.topN)
			before := map[string]blockState{}
			for _, id := range []string{"k", "a", "b", "c", "p", "q", "x", "y"} {
				before[id] = blockOf(t, db, id)
			}
			r := sweepAt(t, db, now)
			if r.ConstitutionalReinforced != 1 || r.Reinforced != int64(len(c.top)) {
				t.Errorf("reinforced %d constitutional %d", r.Reinforced, r.ConstitutionalReinforced)
			}
			for id, b := range before {
				want := b.Count
				if id == "k" {
					want++
				}
				for _, top := range c.top {
					if top == id {
						want++
					}
				}
				got := blockOf(t, db, id)
				if got.Count != want {
					t.Errorf("%s count %d, want %d", id, got.Count, want)
				}
				wantAnchor := b.LastReinforced.Float64
				if want != b.Count {
					wantAnchor = now
				}
				if got.LastReinforced.Float64 != wantAnchor {
					t.Errorf("%s last_reinforced_hours %v, want %v", id, got.LastReinforced.Float64, wantAnchor)
				}
			}
		})
	}
	t.Run("constitutional and top: reinforced twice", func(t *testing.T) {
		db, _ := newMemory(t, `
			INSERT INTO mem_blocks (id, category, confidence, reinforcement_count, last_reinforced_hours) VALUES
				('k','knowledge',0.9,4,100), ('z','knowledge',0.1,0,100);
			INSERT INTO mem_block_tags VALUES ('k','self/constitutional');
			UPDATE mem_config SET value = 1 WHERE key = 'reinforce_top_n';`)
		r := sweepAt(t, db, 200)
		if k, z := blockOf(t, db, "k"), blockOf(t, db, "z"); k.Count != 6 || z.Count != 0 || k.LastReinforced.Float64 != 200 {
			t.Errorf("k %+v z %+v, want k 6 at 200, z 0", k, z)
		}
		if r.Reinforced != 1 || r.ConstitutionalReinforced != 1 {
			t.Errorf("report %+v", r)
		}
	})
}

// TestReinforceTies: equal composites go to the smaller id, whatever the
// insertion order.
func TestReinforceTies(t *testing.T) {
	const fx = `
		INSERT INTO mem_blocks (id, category, confidence, reinforcement_count, last_reinforced_hours) VALUES
			('b-twin','knowledge',0.7,3,990), ('a-twin','knowledge',0.7,3,990), ('c-low','knowledge',0.2,0,1000),
			('m3','knowledge',0.1,0,900), ('m1','knowledge',0.1,0,900), ('m2','knowledge',0.1,0,900);
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES
			('a-twin','b-twin',0.8,2,1000);`
	for _, c := range []struct {
		topN string
		top  []string
	}{
		{"1", []string{"a-twin"}},
		{"2", []string{"a-twin", "b-twin"}},
		{"4", []string{"a-twin", "b-twin", "c-low", "m1"}},
		{"5", []string{"a-twin", "b-twin", "c-low", "m1", "m2"}},
	} {
		t.Run("top "+c.topN, func(t *testing.T) {
			db, _ := newMemory(t, fx)
			setConfig(t, db, "reinforce_top_n", c.topN)
			sweepAt(t, db, 1000)
			got := map[string]bool{}
			for id, before := range map[string]int64{"a-twin": 3, "b-twin": 3, "c-low": 0, "m1": 0, "m2": 0, "m3": 0} {
				if blockOf(t, db, id).Count > before {
					got[id] = true
				}
			}
			if len(got) != len(c.top) {
				t.Errorf("reinforced %v, want %v", got, c.top)
			}
			for _, id := range c.top {
				if !got[id] {
					t.Errorf("reinforced %v, want %v", got, c.top)
				}
			}
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
	if st, err := worker.GetStatus(t.Context(), db); err != nil || st.EdgesDecayed != 3 {
		t.Errorf("status %+v %v", st, err)
	}
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
