package worker_test

// Block degrees are kept by delta: a sweep subtracts the strength of the
// edges it removes in the same transaction and never recounts them. After
// any history of app writes, sweeps and writes in the middle of a sweep,
// the stored degrees must equal a recount from the edges, to the bit.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"path/filepath"
	"testing"
	"time"

	"github.com/memdecay/memdecay/schema"
	"github.com/memdecay/memdecay/worker"
)

func TestDegreesByDeltaMatchRecount(t *testing.T) {
	for seed := int64(301); seed <= 312; seed++ {
		t.Run(fmt.Sprint("seed_", seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			db, _ := newMemory(t, "")
			for _, q := range randomMemory(rng) {
				mustExec(t, db, q)
			}
			clock, wall := 100.0, time.Unix(1_800_000_000, 0)
			for step := range 8 {
				for _, q := range randomWrites(rng, clock, wall.Unix()) {
					mustExec(t, db, q)
				}
				clock += float64(rng.Intn(150))
				wall = wall.Add(time.Duration(rng.Intn(40*24)) * time.Hour)
				// Half the sweeps have an app write between two of their
				// transactions: the rows it touches are queued, and their
				// ends' degrees take the difference at the next refresh.
				// A quarter of them are full: their plan's removals have no
				// due row until the apply stores one for an edge it skips.
				opt := worker.SweepOptions{Now: &clock, WallNow: &wall, ChunkSize: 3, SoloChunkSize: 3, Full: step%4 == 3}
				var during []string
				if step%2 == 1 {
					during = randomWrites(rng, clock, wall.Unix())
				}
				if opt.Full {
					// Every edge the full sweep has yet to remove changes.
					during = append(during, `UPDATE mem_edges SET reinforcement_count = reinforcement_count + 1`)
				}
				opt = worker.WithChunk(opt, func(step string, done, total int64) {
					if step == "plan_edges" && done > 0 && len(during) > 0 {
						for _, q := range during {
							if _, err := db.SQL.Exec(q); err != nil {
								t.Errorf("app write during the sweep: %v", err)
							}
						}
						during = nil
					}
				})

				r, err := worker.Sweep(context.Background(), db, opt)
				if err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				// The edges after it are the file's, whether an app wrote
				// some meanwhile (counted) or not (taken from its events).
				if n := scalar[int64](t, db, `SELECT count(*) FROM mem_edges`); r.TotalEdgesAfter != n {
					t.Errorf("step %d: total_edges_after %d, but %d edges are left", step, r.TotalEdgesAfter, n)
				}
				// The writes made during the sweep are refreshed by the
				// sweep's settle when they came before its marks, or by the
				// next sweep: sweep again at the same clock, which removes
				// nothing by delta, so the comparison sees settled state.
				opt.Full = false
				if _, err := worker.Sweep(context.Background(), db, opt); err != nil {
					t.Fatalf("step %d, second sweep: %v", step, err)
				}
				compareDegrees(t, db.SQL, fmt.Sprintf("step %d", step))
				if n := scalar[int](t, db, `SELECT count(*) FROM mem_degree_log`); n != 0 {
					t.Fatalf("step %d: %d strengths logged and not folded after the sweeps", step, n)
				}
			}
		})
	}
}

// TestDegreesLoggedByACutSweep: an incremental sweep cut off between two
// transactions of its edge removals has logged the strengths they took
// off their ends (the stored degrees less them are a recount's), and the
// next sweep folds them before it reads a degree. Resumed, it leaves every
// row and derived number as the same sweep uncut does; under other
// settings, a full sweep leaves the degrees a recount finds.
func TestDegreesLoggedByACutSweep(t *testing.T) {
	cut := 0
	for seed := int64(321); seed <= 328; seed++ {
		whole, resumed, rng := randomPair(t, seed)
		clock, wall := 100.0, time.Unix(1_800_000_000, 0)
		incSweep(t, whole, clock, wall, false)
		incSweep(t, resumed, clock, wall, false)
		clock += float64(60 + rng.Intn(120))
		incSweep(t, whole, clock, wall, false)
		ctx, cancel := context.WithCancel(context.Background())
		opt := worker.SweepOptions{Now: &clock, WallNow: &wall, ChunkSize: 5, SoloChunkSize: 5}
		_, err := worker.Sweep(ctx, resumed, worker.WithChunk(opt, func(step string, done, total int64) {
			if step == "plan_edges" && done > 0 && done < total {
				cancel()
			}
		}))
		cancel()
		if err == nil {
			continue // the removals fitted in one transaction
		}
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if scalar[int](t, resumed, `SELECT count(*) FROM mem_degree_log`) == 0 {
			t.Fatalf("seed %d: the sweep was cut after removing edges, but logged no strength", seed)
		}
		cut++
		compareDegrees(t, resumed.SQL, fmt.Sprintf("seed %d, cut", seed))
		// A step down from the log's schema folds it before it drops it:
		// on a copy, down and up again, the stored degrees are a recount's.
		copied := filepath.Join(t.TempDir(), "copy.db")
		mustExec(t, resumed, `VACUUM INTO ?`, copied)
		down := openAsWorker(t, copied)
		if _, err := schema.Down(down.SQL, schema.DownOptions{}); err != nil {
			t.Fatalf("seed %d: migrate down: %v", seed, err)
		}
		if _, err := schema.Up(down.SQL); err != nil {
			t.Fatalf("seed %d: migrate up: %v", seed, err)
		}
		compareDegrees(t, down.SQL, fmt.Sprintf("seed %d, cut, migrated down and up", seed))
		if seed%2 == 0 {
			// Under other settings the saved plan is discarded, and the
			// next sweep, full, counts every degree again from the edges:
			// the strengths logged before the cut are folded first, not
			// taken off again after.
			mustExec(t, resumed, `UPDATE mem_config SET value = '0.0123' WHERE key = 'edge_prune_threshold'`)
			if r := incSweep(t, resumed, clock, wall, false); r.Resumed || !r.Full {
				t.Fatalf("seed %d: under other settings the sweep after the cut resumed %v, full %v; want a new full one", seed, r.Resumed, r.Full)
			}
			compareDegrees(t, resumed.SQL, fmt.Sprintf("seed %d, after a full sweep under other settings", seed))
			if n := scalar[int](t, resumed, `SELECT count(*) FROM mem_degree_log`); n != 0 {
				t.Fatalf("seed %d: %d strengths left unfolded after the full sweep", seed, n)
			}
			continue
		}
		r := incSweep(t, resumed, clock, wall, false)
		if !r.Resumed {
			t.Fatalf("seed %d: the sweep after the cut did not resume its plan", seed)
		}
		if n := scalar[int64](t, resumed, `SELECT count(*) FROM mem_edges`); r.TotalEdgesAfter != n {
			t.Errorf("seed %d: the resumed sweep's total_edges_after is %d, but %d edges are left", seed, r.TotalEdgesAfter, n)
		}
		if n := scalar[int](t, resumed, `SELECT count(*) FROM mem_degree_log`); n != 0 {
			t.Fatalf("seed %d: %d strengths left unfolded after the resumed sweep", seed, n)
		}
		compareDegrees(t, resumed.SQL, fmt.Sprintf("seed %d, resumed", seed))
		if a, b := memoryState(t, whole), memoryState(t, resumed); a != b {
			t.Fatalf("seed %d: rows after the resumed sweep differ\nwhole:\n%s\nresumed:\n%s", seed, diffLines(a, b), diffLines(b, a))
		}
		if a, b := derivedState(t, whole), derivedState(t, resumed); a != b {
			t.Fatalf("seed %d: derived state after the resumed sweep differs\nwhole:\n%s\nresumed:\n%s", seed, diffLines(a, b), diffLines(b, a))
		}
	}
	if cut < 4 {
		t.Fatalf("only %d sweeps were cut between removals: the memories are too small", cut)
	}
}

// compareDegrees recounts every block's degree in Go from the valid edges
// (each strength rounded to 2^-32, as the sweep's rule says) and compares
// it with mem_block_state, bit for bit.
func compareDegrees(t *testing.T, db *sql.DB, where string) {
	t.Helper()
	want := map[string]float64{}
	rows, err := db.Query(`SELECT from_id, to_id, weight, reinforcement_count FROM mem_edges
		WHERE typeof(weight) IN ('integer', 'real') AND weight >= 0 AND typeof(reinforcement_count) IN ('integer', 'real')
		  AND reinforcement_count >= 0 AND pinned IN (0, 1)
		  AND (last_active_hours IS NULL OR typeof(last_active_hours) IN ('integer', 'real'))
		  AND (last_observed_at IS NULL OR typeof(last_observed_at) IN ('integer', 'real'))`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var from, to string
		var w, c float64
		if err := rows.Scan(&from, &to, &w, &c); err != nil {
			t.Fatal(err)
		}
		s := fixedDegree(math.Min(w+math.Log1p(c)*0.10, 1<<20))
		want[from] += s
		want[to] += s
	}
	rows.Close()
	// A block's degree is its state's less the strengths the removals
	// logged and no sweep has folded yet (none once a sweep is done).
	got := map[string]float64{}
	rows, err = db.Query(`SELECT s.id, s.degree - coalesce(l.strength, 0) FROM mem_block_state s
		LEFT JOIN (SELECT id, sum(strength) AS strength FROM mem_degree_log GROUP BY id) l ON l.id = s.id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		var d float64
		if err := rows.Scan(&id, &d); err != nil {
			t.Fatal(err)
		}
		got[id] = d
	}
	rows.Close()
	var blocks []string
	if err := scanAll(db, `SELECT id FROM mem_blocks ORDER BY id`, &blocks); err != nil {
		t.Fatal(err)
	}
	for _, id := range blocks {
		if got[id] != want[id] {
			t.Errorf("%s: block %s: stored degree %v (%x), recount %v (%x)", where, id, got[id],
				math.Float64bits(got[id]), want[id], math.Float64bits(want[id]))
		}
	}
}

func scanAll(db *sql.DB, query string, out *[]string) error {
	rows, err := db.Query(query)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return err
		}
		*out = append(*out, s)
	}
	return rows.Err()
}

// TestStrengthCap: an edge's strength counts in full up to 2^20 and as
// 2^20 above it, so huge weights (1e308, which once summed to +Inf and
// failed every sweep) leave finite, exact degrees, kept by delta as well.
func TestStrengthCap(t *testing.T) {
	db, _ := newMemory(t, knowledgeBlocks("a", "b", "c", "d", "e"))
	for _, e := range []struct {
		from, to string
		weight   float64
	}{{"a", "b", 1e6}, {"a", "c", 2e6}, {"d", "e", 1e308}, {"c", "d", 1e308}, {"b", "e", 0.5}} {
		mustExec(t, db, `INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours)
			VALUES (?, ?, ?, 0, 100)`, e.from, e.to, e.weight)
	}
	sweepAt(t, db, 100)
	compareDegrees(t, db.SQL, "first sweep")
	const capped = 1 << 20
	for block, want := range map[string]float64{
		"a": fixedDegree(1e6) + capped, // below the cap in full, above it capped
		"d": 2 * capped,                // two edges of 1e308: finite
		"e": capped + fixedDegree(0.5),
	} {
		if got := scalar[float64](t, db, `SELECT degree FROM mem_block_state WHERE id = ?`, block); got != want {
			t.Errorf("block %s: degree %v, want %v", block, got, want)
		}
	}
	// The app removes a capped edge; the next sweep's degrees still match.
	mustExec(t, db, `DELETE FROM mem_edges WHERE from_id = 'c' AND to_id = 'd'`)
	sweepAt(t, db, 101)
	compareDegrees(t, db.SQL, "after the app's delete")
}

// TestDegreeOfABlockBackAgain: a block an app deletes while its edges stay
// (no foreign-key enforcement) loses its state; when it comes back, its
// degree starts from the strengths stored for its edges, those of edges
// deleted meanwhile included, and the deltas of the same refresh bring it
// to the recount, whichever end of each edge it is.
func TestDegreeOfABlockBackAgain(t *testing.T) {
	db, _ := newMemory(t, knowledgeBlocks("a", "b", "c", "d", "e"))
	db.SQL.SetMaxOpenConns(1)
	mustExec(t, db, `PRAGMA foreign_keys = OFF`)
	for _, e := range [][2]string{{"a", "b"}, {"a", "c"}, {"b", "c"}, {"c", "d"}, {"c", "e"}} {
		mustExec(t, db, `INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours)
			VALUES (?, ?, 0.7, 1, 100)`, e[0], e[1])
	}
	sweepAt(t, db, 100)
	compareDegrees(t, db.SQL, "first sweep")
	mustExec(t, db, `DELETE FROM mem_blocks WHERE id = 'c'`)
	sweepAt(t, db, 100)
	if n := scalar[int64](t, db, `SELECT count(*) FROM mem_block_state WHERE id = 'c'`); n != 0 {
		t.Fatalf("the deleted block kept its state")
	}
	for _, q := range []string{
		`DELETE FROM mem_edges WHERE from_id = 'b' AND to_id = 'c'`, // c its to_id, gone
		`DELETE FROM mem_edges WHERE from_id = 'c' AND to_id = 'd'`, // c its from_id, gone
		`UPDATE mem_edges SET reinforcement_count = 5 WHERE from_id = 'a' AND to_id = 'c'`,
		`INSERT INTO mem_blocks (id, category) VALUES ('c', 'knowledge'), ('f', 'knowledge')`,
		`INSERT INTO mem_edges (from_id, to_id, weight, last_active_hours) VALUES ('c', 'f', 0.9, 100)`,
	} {
		mustExec(t, db, q)
	}
	sweepAt(t, db, 100)
	compareDegrees(t, db.SQL, "the block back")
	if got := scalar[float64](t, db, `SELECT degree FROM mem_block_state WHERE id = 'c'`); got == 0 {
		t.Errorf("block c came back with degree 0")
	}
}
