package worker_test

// Rules of docs/sweep.md for blocks, each on a real SQLite file with rows on
// both sides of every threshold: archival, bridge protection and
// reinforcement.

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker"
)

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

// starOfTen is a hub h with nine leaves: l2..l8 of degrees 0.2..0.8
// reinforced at 1000, lb of 0.95 and lc of 0.94 reinforced at lbc. n = 10,
// floor(0.8n) = 8: d[8] = 0.95 (not the hub's maximum).
func starOfTen(lbc float64) string {
	return fmt.Sprintf(`
		INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES
			('h','knowledge',1000), ('l2','knowledge',1000), ('l3','knowledge',1000), ('l4','knowledge',1000),
			('l5','knowledge',1000), ('l6','knowledge',1000), ('l7','knowledge',1000), ('l8','knowledge',1000),
			('lb','knowledge',%[1]v), ('lc','knowledge',%[1]v);
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES
			('h','l2',0.2,0,1000), ('h','l3',0.3,0,1000), ('h','l4',0.4,0,1000), ('h','l5',0.5,0,1000),
			('h','l6',0.6,0,1000), ('h','l7',0.7,0,1000), ('h','l8',0.8,0,1000),
			('h','lb',0.95,0,1000), ('h','lc',0.94,0,1000);`, lbc)
}

// TestBridgeProtection: a faded block whose weighted degree
// Σ(weight + ln(1+count)×0.10) is at or above d[min(floor(0.8n), n−1)] stays.
func TestBridgeProtection(t *testing.T) {
	t.Run("star of ten: threshold is the 9th smallest degree", func(t *testing.T) {
		// Degrees: leaves 0.2..0.8, faded c 0.94, faded b 0.95, hub h = sum.
		// n = 10, floor(0.8n) = 8: d[8] = 0.95 (not the hub's maximum).
		db, _ := newMemory(t, starOfTen(0))
		r := sweepAt(t, db, 1000)
		if r.BridgeThreshold == nil || *r.BridgeThreshold != fixedDegree(0.95) {
			t.Fatalf("bridge threshold %v, want 0.95 in fixed point", r.BridgeThreshold)
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
		want := fixedDegree(0.5+math.Log1p(3)*0.10, 0.5+math.Log1p(3)*0.10)
		if r.BridgeThreshold == nil || *r.BridgeThreshold != want {
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

// composite is docs/sweep.md, phase 6's score, for checking fixtures by hand.
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
	// The composites as docs/sweep.md defines them, after phases 1-5.
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

// TestBridgeThresholdOnlyWhenFaded: the threshold reads every block's
// state, so a sweep takes it (and reports it) only when a block faded;
// sweeps with none, at the same clock or later, report none. A block that
// fades later is still judged on the threshold of the graph as it stands,
// from a start no sweep since took.
func TestBridgeThresholdOnlyWhenFaded(t *testing.T) {
	// Every block fresh: d[8] = 0.95.
	db, _ := newMemory(t, starOfTen(1000))
	for i, clock := range []float64{1000, 1000, 1001} {
		if r := sweepAt(t, db, clock); r.BridgeThreshold != nil || r.Archived != 0 {
			t.Fatalf("sweep %d at %v, nothing faded: bridge threshold %v, %d archived; want none, 0", i+1, clock, fmtPtr(r.BridgeThreshold), r.Archived)
		}
	}
	// The app moves two leaves' last use far back: both fade; lb's degree
	// reaches the threshold.
	mustExec(t, db, `UPDATE mem_blocks SET last_reinforced_hours = 0 WHERE id IN ('lb', 'lc')`)
	r := sweepAt(t, db, 1002)
	if r.Full {
		t.Fatal("the sweep after the app's write was full; want incremental")
	}
	if r.BridgeThreshold == nil || *r.BridgeThreshold != fixedDegree(0.95) {
		t.Fatalf("bridge threshold %v, want 0.95 in fixed point", fmtPtr(r.BridgeThreshold))
	}
	expectStatus(t, db, "active", "lb")
	expectStatus(t, db, "archived", "lc")
}

// TestBridgeThresholdFromAnyStart: the threshold's sort starts from the
// last sweep's threshold, or the hint a full sweep left for the sweep
// after it (plan.sql, bridge_threshold); whatever that was (below, at,
// above the threshold now, far off, not a number, none), the threshold is
// the same, ties included.
func TestBridgeThresholdFromAnyStart(t *testing.T) {
	// 40 active blocks in a ring and chords, weights from 17 values: many
	// degrees tie.
	db, _ := newMemory(t, `
		WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 39)
		INSERT INTO mem_blocks (id, category, last_reinforced_hours) SELECT printf('b%02d', i), 'knowledge', 1000 FROM n;
		WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 39)
		INSERT OR IGNORE INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours)
		SELECT min(a, b), max(a, b), 0.05 + (i * 7 % 17) * 0.05, i % 3, 1000
		FROM (SELECT i, printf('b%02d', i) AS a, printf('b%02d', (i + 1 + i % 5) % 40) AS b FROM n) WHERE a != b;
		-- A faded block with no edge: the threshold is taken, of the same degrees.
		INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES ('faded', 'knowledge', 0);`)
	want := dryRunAt(t, db, 1000).BridgeThreshold
	if want == nil {
		t.Fatal("no bridge threshold without a last sweep")
	}
	starts := []string{"0", "-1", "0.01", fmt.Sprint(*want * 0.5), fmt.Sprint(*want), fmt.Sprint(math.Nextafter(*want, 0)),
		fmt.Sprint(math.Nextafter(*want, 9)), fmt.Sprint(*want * 1.5), "1e308", `"x"`, "null"}
	for i, last := range starts {
		if _, err := db.SQL.Exec(`INSERT INTO mem_sweeps (started_at, finished_at, status, result)
			VALUES (0, 0, 'done', '{"bridge_threshold": ' || ? || '}')`, last); err != nil {
			t.Fatal(err)
		}
		if got := dryRunAt(t, db, 1000).BridgeThreshold; got == nil || *got != *want {
			t.Errorf("after a sweep whose threshold was %s: bridge threshold %v, want %v", last, got, *want)
		}
		// The hint for that sweep, then one for the sweep before it (not used).
		hint := starts[(i+4)%len(starts)]
		for _, sweep := range []string{"(SELECT max(id) FROM mem_sweeps)", "(SELECT max(id) - 1 FROM mem_sweeps)"} {
			mustExec(t, db, `INSERT INTO mem_config (key, value) VALUES ('bridge_hint', json_object('sweep', `+sweep+`, 'threshold', json('`+hint+`')))
				ON CONFLICT (key) DO UPDATE SET value = excluded.value`)
			if got := dryRunAt(t, db, 1000).BridgeThreshold; got == nil || *got != *want {
				t.Errorf("after a sweep whose threshold was %s, hint %s for sweep %s: bridge threshold %v, want %v", last, hint, sweep, got, *want)
			}
		}
	}
}

// TestFullSweepLeavesBridgeHint: a full sweep leaves the next sweep the
// threshold of the degrees it left as the start of its sort, named with
// its id; an incremental sweep leaves it as it was.
func TestFullSweepLeavesBridgeHint(t *testing.T) {
	for seed := int64(511); seed <= 514; seed++ {
		db, _, _ := randomPair(t, seed)
		clock, wall := 100.0, time.Unix(1_800_000_000, 0)
		r := incSweep(t, db, clock, wall, true)
		if !r.Full {
			t.Fatalf("seed %d: the first sweep was not full", seed)
		}
		const active = `FROM mem_block_state s JOIN mem_blocks b ON b.id = s.id WHERE b.status = 'active' AND s.degree > 0`
		want := scalar[float64](t, db, `SELECT s.degree `+active+` ORDER BY s.degree
			LIMIT 1 OFFSET (SELECT min(CAST(0.8 * count(*) AS INTEGER), count(*) - 1) `+active+`)`)
		hint := func() string {
			return fmt.Sprint(scalar[int64](t, db, `SELECT json_extract(value, '$.sweep') FROM mem_config WHERE key = 'bridge_hint'`), " ",
				scalar[float64](t, db, `SELECT json_extract(value, '$.threshold') FROM mem_config WHERE key = 'bridge_hint'`))
		}
		got := hint()
		if wantHint := fmt.Sprint(r.SweepID, " ", want); got != wantHint {
			t.Errorf("seed %d: bridge hint %q, want %q (sweep, threshold of the degrees it left)", seed, got, wantHint)
		}
		incSweep(t, db, clock+30, wall.Add(time.Hour), false)
		if again := hint(); again != got {
			t.Errorf("seed %d: an incremental sweep changed the bridge hint from %q to %q", seed, got, again)
		}
	}
}

// TestBridgeThresholdOfBlocksChangedMidSweep: the threshold counts the
// degrees of the blocks active at the plan's snapshot. Blocks an app
// changes after the refresh read their status from the block (the state's
// may be older): one that stays active counts, one moved to the inbox does
// not.
func TestBridgeThresholdOfBlocksChangedMidSweep(t *testing.T) {
	for seed := int64(501); seed <= 506; seed++ {
		db, _, _ := randomPair(t, seed)
		clock, wall := 100.0, time.Unix(1_800_000_000, 0)
		incSweep(t, db, clock, wall, false)
		clock += 2
		// A faded block with no edge, so the sweep takes the threshold.
		mustExec(t, db, `INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES ('faded', 'knowledge', -1e6)`)
		// An edge write, so the refresh has a chunk of edges to tell of.
		mustExec(t, db, `UPDATE mem_edges SET reinforcement_count = reinforcement_count + 1
			WHERE (from_id, to_id) = (SELECT from_id, to_id FROM mem_edges ORDER BY from_id, to_id LIMIT 1)`)
		var want float64
		wrote := false
		opt := worker.SweepOptions{Now: &clock, WallNow: &wall, ChunkSize: 7}
		r, err := worker.Sweep(context.Background(), db, worker.WithChunk(opt, func(step string, done, total int64) {
			if step != "refresh_edges" || done != total || wrote {
				return
			}
			wrote = true
			// The three largest degrees' blocks change and stay active; the
			// next one goes to the inbox.
			ids := column(t, db, `SELECT s.id FROM mem_block_state s JOIN mem_blocks b ON b.id = s.id
				WHERE b.status = 'active' AND s.degree > 0 ORDER BY s.degree DESC, s.id LIMIT 4`)
			for i, id := range ids {
				q := `UPDATE mem_blocks SET confidence = 0.25 WHERE id = ?`
				if i == 3 {
					q = `UPDATE mem_blocks SET status = 'inbox' WHERE id = ?`
				}
				if _, err := db.SQL.Exec(q, id); err != nil {
					t.Errorf("app write: %v", err)
				}
			}
			const active = `FROM mem_block_state s JOIN mem_blocks b ON b.id = s.id WHERE b.status = 'active' AND s.degree > 0`
			want = scalar[float64](t, db, `SELECT s.degree `+active+` ORDER BY s.degree
				LIMIT 1 OFFSET (SELECT min(CAST(0.8 * count(*) AS INTEGER), count(*) - 1) `+active+`)`)
		}))
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if !wrote {
			t.Fatalf("seed %d: the refresh told of no edge chunk: nothing was changed mid-sweep", seed)
		}
		if r.BridgeThreshold == nil || *r.BridgeThreshold != want {
			t.Errorf("seed %d: bridge threshold %v, want %v (the degrees of the blocks active at the plan)", seed, fmtPtr(r.BridgeThreshold), want)
		}
	}
}
