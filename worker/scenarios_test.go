package worker_test

// The agent scenarios of reference 002, traced number by number on real
// SQLite files.

import (
	"database/sql"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker"
)

// coRetrieve is the README recipe for co-retrieval and outcome confirmation
// (the reference 002 scenario 4 fix): count + 1 and a fresh anchor.
func coRetrieve(t *testing.T, db *worker.DB, now float64, from, to string) {
	t.Helper()
	mustExec(t, db, `UPDATE mem_edges SET reinforcement_count = reinforcement_count + 1, last_active_hours = :now
		WHERE from_id = :a AND to_id = :b`, sql.Named("now", now), sql.Named("a", from), sql.Named("b", to))
}

// checkEffective asserts the effective weight mem_edges_effective shows for
// an edge at clock now, to the reference's three decimals (it rounds
// intermediate factors, so allow one unit in the last place).
func checkEffective(t *testing.T, db *worker.DB, now float64, from, to string, want float64) {
	t.Helper()
	if got := viewEffective(t, db, now, from, to); !near(got, want, 0.001) {
		t.Errorf("h=%v: %s-%s effective weight %.4f, want %.3f", now, from, to, got, want)
	}
}

func TestScenario01FreshStart(t *testing.T) {
	// 20 blocks learned at h=5; consolidation makes 8 similarity edges
	// (0.45-0.78) anchored at 5; curate runs at once.
	var b strings.Builder
	b.WriteString("INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES ")
	for i := range 20 {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "('b%02d','knowledge',5)", i)
	}
	b.WriteString(";\nINSERT INTO mem_edges (from_id, to_id, weight, last_active_hours) VALUES ")
	weights := []float64{0.45, 0.52, 0.58, 0.61, 0.66, 0.70, 0.74, 0.78}
	for i, w := range weights {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "('b%02d','b%02d',%v,5)", 2*i, 2*i+1, w)
	}
	b.WriteString(";")
	db, _ := newMemory(t, b.String())
	checkEffective(t, db, 5, "b00", "b01", 0.45) // hours_since 0: exp(0) = 1
	r := sweepAt(t, db, 5)
	if len(edgeSet(t, db)) != 8 || r.EdgesDecayed+r.EdgesPruned+r.Archived != 0 || r.TotalEdgesAfter != 8 {
		t.Errorf("fresh graph harmed: %+v", r)
	}
	if strings.Contains(r.Summary, "decayed") || strings.Contains(r.Summary, "Tip") {
		t.Errorf("summary %q", r.Summary)
	}
}

func TestScenario02SteadyState(t *testing.T) {
	db, _ := newMemory(t, `
		INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES
			('py-a','knowledge',200), ('py-b','knowledge',200), ('py-c','knowledge',200);
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES
			('py-a','py-b',0.60,3,200), ('py-b','py-c',0.60,3,200);`)
	checkEffective(t, db, 280, "py-a", "py-b", 0.402)
	if r := sweepAt(t, db, 280); r.EdgesDecayed != 0 {
		t.Errorf("h=280: %d decayed", r.EdgesDecayed)
	}
	coRetrieve(t, db, 280, "py-b", "py-c") // still in use
	checkEffective(t, db, 440, "py-a", "py-b", 0.181)
	coRetrieve(t, db, 440, "py-b", "py-c")
	if r := sweepAt(t, db, 440); r.EdgesDecayed != 0 {
		t.Errorf("h=440: %d decayed", r.EdgesDecayed)
	}
	checkEffective(t, db, 640, "py-a", "py-b", 0.067)
	r := sweepAt(t, db, 640)
	expectEdges(t, db, []string{"py-b-py-c"}, []string{"py-a-py-b"})
	if r.EdgesDecayed != 1 || r.Archived != 0 {
		t.Errorf("h=640: %+v", r)
	}
	expectStatus(t, db, "active", "py-a", "py-b", "py-c") // top-N reinforcement kept the blocks alive
}

func TestScenario03DomainShift(t *testing.T) {
	db, _ := newMemory(t, `
		INSERT INTO mem_blocks (id, category, confidence, reinforcement_count, last_reinforced_hours) VALUES
			('py-async','knowledge',0.9,20,95), ('py-gil','knowledge',0.9,20,95),
			('ds1','knowledge',0.5,0,100), ('ds2','knowledge',0.5,0,100), ('ds3','knowledge',0.5,0,100), ('ds4','knowledge',0.5,0,100);
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES
			('py-async','py-gil',0.60,5,95),
			('ds1','ds2',0.7,0,100), ('ds2','ds3',0.7,0,100), ('ds3','ds4',0.7,0,100), ('ds1','ds4',0.7,0,100);`)
	trace := map[float64]float64{200: 0.355, 280: 0.238, 360: 0.160, 440: 0.107}
	for h := 200.0; h <= 440; h += 40 {
		// Phase B: the agent works on data science only.
		mustExec(t, db, `UPDATE mem_blocks SET last_reinforced_hours = ? WHERE id LIKE 'ds%'`, h)
		for _, e := range [][2]string{{"ds1", "ds2"}, {"ds2", "ds3"}, {"ds3", "ds4"}, {"ds1", "ds4"}} {
			coRetrieve(t, db, h, e[0], e[1])
		}
		if want, ok := trace[h]; ok {
			checkEffective(t, db, h, "py-async", "py-gil", want)
		}
		if r := sweepAt(t, db, h); r.EdgesDecayed != 0 {
			t.Fatalf("h=%v: python edge decayed early (%+v)", h, r)
		}
	}
	checkEffective(t, db, 480, "py-async", "py-gil", 0.088)
	r := sweepAt(t, db, 480)
	expectEdges(t, db, []string{"ds1-ds2"}, []string{"py-async-py-gil"})
	expectStatus(t, db, "active", "py-async", "py-gil")
	if got := num(t, decayEvent(t, db, "py-async", "py-gil").Detail, "effective_weight"); !near(got, 0.088, 0.0005) {
		t.Errorf("decayed at %v, want 0.088", got)
	}
	// Mitigation B: the summary says what happened and what to do.
	if !strings.Contains(r.Summary, "1 edges decayed (4 remain)") || !strings.Contains(r.Summary, "Tip:") {
		t.Errorf("summary %q", r.Summary)
	}
	// Mitigation A: a persistent tally the agent can read later.
	if c := loadConfig(t, db); c.EdgesDecayedTotal != 1 {
		t.Errorf("edges_decayed_total %d", c.EdgesDecayedTotal)
	}
}

func TestScenario04OutcomeRefresh(t *testing.T) {
	// Two outcome edges created at h=10 (weight 0.72) and confirmed 8 times.
	// "stale" had the old upsert (count only); "fresh" had the fix (count and
	// anchor), confirmed every 50 h up to 410.
	db, _ := newMemory(t, `
		INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES
			('a','knowledge',450), ('b','knowledge',450), ('c','knowledge',450), ('d','knowledge',450);
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, origin, last_active_hours) VALUES
			('a','b',0.72,8,'outcome',10),
			('c','d',0.72,0,'outcome',10);`)
	for h := 60.0; h <= 410; h += 50 {
		coRetrieve(t, db, h, "c", "d")
	}
	if n, anchor := scalar[int](t, db, `SELECT reinforcement_count FROM mem_edges WHERE from_id = 'c'`),
		scalar[float64](t, db, `SELECT last_active_hours FROM mem_edges WHERE from_id = 'c'`); n != 8 || anchor != 410 {
		t.Fatalf("recipe left count %d anchor %v", n, anchor)
	}
	checkEffective(t, db, 500, "a", "b", 0.062) // 0.72 × exp(−0.005 × 490)
	checkEffective(t, db, 500, "c", "d", 0.459) // 0.72 × exp(−0.005 × 90)
	r := sweepAt(t, db, 500)
	expectEdges(t, db, []string{"c-d"}, []string{"a-b"})
	if r.EdgesDecayed != 1 {
		t.Errorf("report %+v", r)
	}
}

func TestScenario06IdleAgent(t *testing.T) {
	db, _ := newMemory(t, `
		INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES
			('a','knowledge',10), ('b','knowledge',10), ('c','observation',10), ('d','observation',10);
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES
			('a','b',0.45,0,10), ('a','c',0.60,1,10), ('c','d',0.12,2,10);
		UPDATE mem_config SET value = 10 WHERE key = 'active_hours';`)
	run := func(wall time.Time) *worker.Report {
		return sweepWith(t, db, worker.SweepOptions{WallNow: &wall}) // the clock from mem_config
	}
	start := time.Now()
	if r := run(start); r.ClockHours != 10 || r.EdgesDecayed+r.EdgesPruned != 0 {
		t.Errorf("before the holiday: %+v", r)
	}
	// Three months offline: wall time passes, active hours do not.
	if r := run(start.Add(90 * 24 * time.Hour)); r.ClockHours != 10 || r.EdgesDecayed+r.EdgesPruned != 0 {
		t.Errorf("after the holiday: %+v", r)
	}
	// Back at work for 5 active hours: 0.12 × exp(−0.025 × 5) = 0.106 survives.
	mustExec(t, db, `UPDATE mem_config SET value = 15 WHERE key = 'active_hours'`)
	checkEffective(t, db, 15, "c", "d", 0.106)
	if r := run(start.Add(91 * 24 * time.Hour)); r.ClockHours != 15 || r.EdgesDecayed != 0 {
		t.Errorf("h=15: %+v", r)
	}
	if len(edgeSet(t, db)) != 3 {
		t.Errorf("edges lost: %v", edgeSet(t, db))
	}
}

func TestScenario07OverCalling(t *testing.T) {
	// The same graph swept every 2 active hours, or once: decay is
	// memoryless, so the surviving edges are the same.
	fx := `
		INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES
			('a','knowledge',0), ('b','knowledge',0), ('c','knowledge',0), ('d','observation',0), ('e','mind',0);
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES
			('a','b',0.50,1,48), ('a','c',0.40,2,0), ('a','d',0.60,3,20), ('a','e',0.30,1,0),
			('b','c',0.80,12,0), ('b','d',0.25,1,40), ('c','d',0.90,1,48), ('c','e',0.15,1,10), ('d','e',0.20,0,48);
		UPDATE mem_config SET value = 'off' WHERE key = 'block_archival';`
	often, _ := newMemory(t, fx)
	once, _ := newMemory(t, fx)
	// Edge last active at 48, curate at 50: 0.50 × exp(−0.01) = 0.495.
	checkEffective(t, often, 50, "a", "b", 0.495)
	r := sweepAt(t, often, 50)
	if r.EdgesDecayed != 0 {
		t.Errorf("h=50: %+v", r)
	}
	for h := 52.0; h <= 400; h += 2 {
		sweepAt(t, often, h)
	}
	sweepAt(t, once, 400)
	a, b := edgeSet(t, often), edgeSet(t, once)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("swept every 2 h: %v; swept once: %v", a, b)
	}
	if ca, cb := loadConfig(t, often).EdgesDecayedTotal, loadConfig(t, once).EdgesDecayedTotal; ca != cb || ca == 0 {
		t.Errorf("edges_decayed_total %d vs %d", ca, cb)
	}
}

func TestScenario09RelinkDoesNotRefresh(t *testing.T) {
	db, _ := newMemory(t, `
		INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES
			('a','knowledge',300), ('b','knowledge',300), ('c','knowledge',300), ('d','knowledge',300);
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES
			('a','b',0.5,0,5), ('c','d',0.5,0,5);`)
	// At h=100 consolidation re-links a-b (ignored); c-d is co-retrieved.
	mustExec(t, db, `INSERT OR IGNORE INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours)
		VALUES ('a','b',0.5,0,100)`)
	coRetrieve(t, db, 100, "c", "d")
	if anchor := scalar[float64](t, db, `SELECT last_active_hours FROM mem_edges WHERE from_id = 'a'`); anchor != 5 {
		t.Fatalf("INSERT OR IGNORE refreshed the anchor to %v", anchor)
	}
	checkEffective(t, db, 340, "a", "b", 0.094)
	checkEffective(t, db, 340, "c", "d", 0.151)
	sweepAt(t, db, 340)
	expectEdges(t, db, []string{"c-d"}, []string{"a-b"})
}

func TestScenario10LegacyNullEdges(t *testing.T) {
	db, _ := newMemory(t, `
		INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES
			('a','knowledge',10000), ('b','knowledge',10000), ('c','knowledge',10000), ('d','knowledge',10000);
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES
			('a','b',0.60,0,NULL),   -- well weighted: only static pruning, which it passes
			('a','c',0.05,0,NULL),   -- static prune
			('a','d',0.60,0,NULL);   -- co-retrieved at 100: joins temporal decay`)
	coRetrieve(t, db, 100, "a", "d")
	r := sweepAt(t, db, 200)
	expectEdges(t, db, []string{"a-b", "a-d"}, []string{"a-c"})
	if r.EdgesPruned != 1 || r.EdgesDecayed != 0 {
		t.Errorf("h=200: %+v", r)
	}
	mustExec(t, db, `UPDATE mem_blocks SET last_reinforced_hours = 9990`) // the blocks are in use
	r = sweepAt(t, db, 10000)
	expectEdges(t, db, []string{"a-b"}, []string{"a-d"})
	if r.EdgesDecayed != 1 {
		t.Errorf("h=10000: %+v", r)
	}
}

func TestScenario11TwoThresholds(t *testing.T) {
	const fx = `
		INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES
			('a','knowledge',400), ('b','knowledge',400), ('c','knowledge',400);
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES
			('a','b',0.35,0,10),   -- moderate score, never co-retrieved
			('a','c',0.60,0,0);    -- valid but never co-retrieved: ln 6 / 0.005 = 358.4 h`
	t.Run("moderate edge at 500", func(t *testing.T) {
		db, _ := newMemory(t, fx)
		mustExec(t, db, `DELETE FROM mem_edges WHERE to_id = 'c'`)
		checkEffective(t, db, 500, "a", "b", 0.030) // static prune spares 0.35; temporal decay does not
		r := sweepAt(t, db, 500)
		if r.EdgesPruned != 0 || r.EdgesDecayed != 1 {
			t.Errorf("h=500: %+v", r)
		}
	})
	t.Run("strong edge at 358 and 359", func(t *testing.T) {
		db, _ := newMemory(t, fx)
		mustExec(t, db, `DELETE FROM mem_edges WHERE to_id = 'b'`)
		checkEffective(t, db, 358, "a", "c", 0.1002)
		if r := sweepAt(t, db, 358); r.EdgesPruned != 0 || r.EdgesDecayed != 0 {
			t.Errorf("h=358: %+v", r)
		}
		checkEffective(t, db, 359, "a", "c", 0.0997)
		sweepAt(t, db, 359)
		expectEdges(t, db, nil, []string{"a-c"})
	})
	t.Run("temporal threshold 0.05 (option A)", func(t *testing.T) {
		db, _ := newMemory(t, fx)
		setConfig(t, db, "edge_decay_threshold", "0.05")
		sweepAt(t, db, 359) // a-b 0.061, a-c 0.0997: both above 0.05
		expectEdges(t, db, []string{"a-b", "a-c"}, nil)
		r := sweepAt(t, db, 500) // a-b 0.030; a-c 0.6 e^-2.5 = 0.049
		expectEdges(t, db, nil, []string{"a-b", "a-c"})
		if r.EdgesDecayed != 2 || r.EdgesPruned != 0 {
			t.Errorf("h=500: %+v", r)
		}
	})
}

func TestScenario12EstablishedCliff(t *testing.T) {
	db, _ := newMemory(t, `
		INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES
			('a','knowledge',500), ('b','knowledge',500), ('c','knowledge',500), ('d','knowledge',500);
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES
			('a','b',0.5,9,0), ('c','d',0.5,10,0);`)
	checkEffective(t, db, 500, "a", "b", 0.041)
	checkEffective(t, db, 500, "c", "d", 0.143)
	r := sweepAt(t, db, 500)
	expectEdges(t, db, []string{"c-d"}, []string{"a-b"})
	if r.EdgesDecayed != 1 || len(r.DecayedSample) != 1 || !near(r.DecayedSample[0].EffectiveWeight, 0.041, 0.0005) {
		t.Errorf("report %+v", r)
	}
	// Count 9 is not a death sentence: the edge still survives 300 h (0.112).
	db2, _ := newMemory(t, `
		INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES ('a','knowledge',300), ('b','knowledge',300);
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES ('a','b',0.5,9,0);`)
	sweepAt(t, db2, 300)
	expectEdges(t, db2, []string{"a-b"}, nil)
}

func TestScenario13AgentConnect(t *testing.T) {
	db, _ := newMemory(t, `
		INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES
			('a','knowledge',900), ('b','knowledge',900), ('c','knowledge',900);
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, relation_type, origin, last_active_hours, note) VALUES
			('a','b',0.85,0,'supports','agent',100,'B elaborates A''s core theorem'),
			('a','c',0.85,0,'similar','similarity',100,NULL);`)
	checkEffective(t, db, 900, "a", "b", 0.85)  // the view shows agent edges undecayed
	checkEffective(t, db, 900, "a", "c", 0.016) // 0.85 × exp(−0.005 × 800)
	r := sweepAt(t, db, 900)
	expectEdges(t, db, []string{"a-b"}, []string{"a-c"})
	if r.EdgesDecayed != 1 {
		t.Errorf("report %+v", r)
	}
}

func TestScenario14AlwaysOn(t *testing.T) {
	db, _ := newMemory(t, `
		INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES
			('a','knowledge',10), ('b','knowledge',10), ('c','knowledge',10);
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES
			('a','b',0.60,1,10), ('b','c',0.60,1,10);`)
	trace := map[float64]float64{280: 0.155, 320: 0.127, 360: 0.104}
	for h := 40.0; h <= 360; h += 40 {
		coRetrieve(t, db, h, "b", "c") // the other edge is in daily use
		if want, ok := trace[h]; ok {
			checkEffective(t, db, h, "a", "b", want)
		}
		if r := sweepAt(t, db, h); r.EdgesDecayed != 0 {
			t.Fatalf("h=%v: %+v", h, r)
		}
	}
	checkEffective(t, db, 400, "a", "b", 0.085)
	sweepAt(t, db, 400)
	expectEdges(t, db, []string{"b-c"}, []string{"a-b"})
	expectStatus(t, db, "active", "a", "b", "c")
}

func TestScenario16MassDecay(t *testing.T) {
	// 100 blocks learned in session 1, edges anchored at h=10; blocks used
	// on their own since (reinforced at 990); no co-retrieval for 990 h.
	var b strings.Builder
	b.WriteString("INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES ")
	for i := range 100 {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "('b%03d','knowledge',990)", i)
	}
	b.WriteString(";\nINSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES ")
	n := 0
	for i := range 100 {
		for _, step := range []int{1, 2} {
			if i+step >= 100 {
				continue
			}
			if n > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "('b%03d','b%03d',%v,%d,10)", i, i+step, 0.3+0.7*float64((i*37+step)%100)/100, (i+step)%6)
			n++
		}
	}
	b.WriteString(";")
	maxEffective := 1.0 * math.Exp(-0.005*990) // 0.0071: every edge is below 0.10

	t.Run("no cap", func(t *testing.T) {
		db, _ := newMemory(t, b.String())
		r := sweepAt(t, db, 1000)
		if r.EdgesDecayed != int64(n) || r.TotalEdgesAfter != 0 || len(edgeSet(t, db)) != 0 {
			t.Fatalf("report %+v", r)
		}
		for _, s := range r.DecayedSample {
			if s.EffectiveWeight > maxEffective {
				t.Errorf("sample %+v above %v", s, maxEffective)
			}
		}
		want := fmt.Sprintf("Curated: %d edges decayed, 5 reinforced.", n)
		if !strings.HasPrefix(r.Summary, want) || !strings.Contains(r.Summary, "reduced significantly") || strings.Contains(r.Summary, "Tip:") {
			t.Errorf("summary %q, want %q and an escalation", r.Summary, want)
		}
		expectStatus(t, db, "active", "b000", "b050", "b099")
	})
	t.Run("max_decay_fraction 0.3", func(t *testing.T) {
		db, _ := newMemory(t, b.String())
		setConfig(t, db, "max_decay_fraction", "0.3")
		r := sweepAt(t, db, 1000)
		first := int64(math.Floor(0.3 * float64(n)))
		if r.EdgesDecayed != first || r.EdgesDeferred != int64(n)-first || r.TotalEdgesAfter != int64(n)-first {
			t.Errorf("h=1000: %+v", r)
		}
		if !strings.Contains(r.Summary, "reduced significantly") { // 30% > 25%
			t.Errorf("summary %q", r.Summary)
		}
		left := int64(n) - first
		r = sweepAt(t, db, 1040)
		if second := int64(math.Floor(0.3 * float64(left))); r.EdgesDecayed != second || r.EdgesDeferred != left-second {
			t.Errorf("h=1040: %+v", r)
		}
	})
}
