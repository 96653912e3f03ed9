package worker_test

import (
	"context"
	"database/sql"
	"math"
	"math/rand"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker"
)

// TestIncrementalRankingPicksTheTopOfAll: two copies of one memory through
// the same hourly history, one swept incrementally (its ranking scores
// only the blocks that changed and those whose bound could reach the top),
// one in full (every block scored). After every sweep both reinforced the
// same blocks and hold the same rows. The history raises blocks into the
// top (confidence, count, a new constitutional tag, new edges), lowers
// the largest degree past maxAlpha (the incremental copy then scores
// every block again), and moves the clock on by an hour or a few; on both
// file and replicated stores.
func TestIncrementalRankingPicksTheTopOfAll(t *testing.T) {
	nBlocks := 600
	orig := bigMemory(t, 7, nBlocks, 2500)
	sweeps := map[string]func(context.Context, *worker.DB, worker.SweepOptions) (*worker.Report, error){
		"file": worker.Sweep, "replicated": worker.SweepReplicated,
	}
	for mode, sweep := range sweeps {
		t.Run(mode, func(t *testing.T) {
			rankHistory(t, orig, nBlocks, sweep)
		})
	}
	// With one bound scored first, the blocks that reach the top are found
	// by the cut.
	defer worker.SetRankSeed(1)()
	t.Run("cut", func(t *testing.T) { rankHistory(t, orig, nBlocks, worker.Sweep) })
}

func rankHistory(t *testing.T, orig string, nBlocks int, sweep func(context.Context, *worker.DB, worker.SweepOptions) (*worker.Report, error)) {
	{
		{
			inc, full := openAsWorker(t, copyMemory(t, orig)), openAsWorker(t, copyMemory(t, orig))
			rngInc, rngFull, rng := rand.New(rand.NewSource(9)), rand.New(rand.NewSource(9)), rand.New(rand.NewSource(10))
			both := func(q string, args ...any) {
				t.Helper()
				for _, db := range []*worker.DB{inc, full} {
					if _, err := db.SQL.Exec(q, args...); err != nil {
						t.Fatalf("%s: %v", q, err)
					}
				}
			}
			clock, wall := bigClock+100, bigWall
			incremental, fewest, fellBack := 0, int64(nBlocks), false
			for step := range 14 {
				if step > 0 {
					appWrites(t, inc.SQL, rngInc, nBlocks, 25, clock, wall.Unix())
					appWrites(t, full.SQL, rngFull, nBlocks, 25, clock, wall.Unix())
				}
				block := bigBlock(rng.Intn(nBlocks))
				switch step {
				case 3: // a block no one ranked high becomes the most trusted and used
					both(`UPDATE mem_blocks SET confidence = 1, reinforcement_count = 40, last_reinforced_hours = ? WHERE id = ?`, clock, block)
				case 5: // a new constitutional block
					both(`INSERT OR IGNORE INTO mem_block_tags VALUES (?, 'self/constitutional')`, block)
				case 7: // a block gains many strong edges
					for i := range 30 {
						other := bigBlock((rng.Intn(nBlocks-1) + 1 + i) % nBlocks)
						if other != block {
							both(`INSERT OR IGNORE INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES (?, ?, 1, 9, ?)`,
								min(block, other), max(block, other), clock)
						}
					}
				case 10: // the hubs lose their edges: the largest degree falls by more than maxAlpha
					both(`DELETE FROM mem_edges WHERE from_id IN (SELECT id FROM hubs) OR to_id IN (SELECT id FROM hubs)`)
				case 12: // confidence falls: bounds stay, scores drop
					both(`UPDATE mem_blocks SET confidence = confidence / 2 WHERE id IN (SELECT id FROM mem_blocks ORDER BY reinforcement_count DESC LIMIT 20)`)
				}
				if step == 9 {
					both(`CREATE TABLE hubs AS SELECT id FROM mem_block_state WHERE degree > 0.6 * (SELECT max(degree) FROM mem_block_state)`)
				}
				ranked := false
				opt := worker.WithRanked(worker.SweepOptions{Now: &clock, WallNow: &wall, ChunkSize: 50}, func(all bool, scored int64) {
					ranked = true
					if step > 0 && !all {
						incremental++
						fewest = min(fewest, scored)
					}
					if step == 10 && all {
						fellBack = true
					}
				})

				ri, err := sweep(context.Background(), inc, opt)
				if err != nil {
					t.Fatal(err)
				}
				if !ranked {
					t.Fatalf("step %d: the sweep ranked nothing", step)
				}
				rf, err := sweep(context.Background(), full, worker.SweepOptions{Now: &clock, WallNow: &wall, ChunkSize: 50, Full: true})
				if err != nil {
					t.Fatal(err)
				}
				if a, b := memoryState(t, inc), memoryState(t, full); a != b {
					t.Fatalf("step %d at clock %v: incremental and full ranking differ\nincremental:\n%s\nfull:\n%s",
						step, clock, diffLines(a, b), diffLines(b, a))
				}
				if ri.Reinforced != rf.Reinforced || ri.ConstitutionalReinforced != rf.ConstitutionalReinforced {
					t.Fatalf("step %d: reinforced %d+%d incrementally, %d+%d in full", step,
						ri.Reinforced, ri.ConstitutionalReinforced, rf.Reinforced, rf.ConstitutionalReinforced)
				}
				clock += float64(1 + rng.Intn(3))
				wall = wall.Add(time.Hour)
			}
			if incremental < 10 {
				t.Errorf("%d of 13 later sweeps ranked incrementally", incremental)
			}
			if fewest > int64(nBlocks/3) {
				t.Errorf("an incremental ranking scored at least %d of %d blocks", fewest, nBlocks)
			}
			if !fellBack {
				t.Error("the sweep after the hubs lost their edges did not score every block")
			}
		}
	}
}

// TestRankBoundKeptWhileNothingWentUp: a block's rank bound outlives a
// refresh of the block only while none of what its score is made of went
// up: each input raised forgets it, each lowered keeps it (read between
// the refresh and the bounds the sweep stores, at the step that stores
// them).
func TestRankBoundKeptWhileNothingWentUp(t *testing.T) {
	base := `INSERT INTO mem_blocks (id, category, confidence, reinforcement_count, last_reinforced_hours) VALUES
		('h', 'knowledge', 1, 50, 100), ('x', 'knowledge', 0.5, 2, 90), ('y', 'knowledge', 0.5, 0, 90),
		('w', 'knowledge', 0.5, 0, 90), ('z', 'knowledge', 0.5, 0, 90);
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES
		('h', 'y', 0.9, 5, 100), ('h', 'w', 0.9, 5, 100), ('h', 'z', 0.9, 5, 100), ('w', 'x', 0.9, 0, 100), ('x', 'y', 0.9, 0, 100);
		UPDATE mem_config SET value = '1' WHERE key = 'reinforce_top_n';`
	_, orig := newMemory(t, base)
	{
		db := openAsWorker(t, orig)
		sweepAt(t, db, 100)
		db.Close()
	}
	for _, c := range []struct {
		name, write string
		kept        bool
	}{
		{"confidence up", `UPDATE mem_blocks SET confidence = 0.9 WHERE id = 'x'`, false},
		{"confidence down", `UPDATE mem_blocks SET confidence = 0.2 WHERE id = 'x'`, true},
		{"count up", `UPDATE mem_blocks SET reinforcement_count = 5 WHERE id = 'x'`, false},
		{"count down", `UPDATE mem_blocks SET reinforcement_count = 1 WHERE id = 'x'`, true},
		{"reinforced later", `UPDATE mem_blocks SET last_reinforced_hours = 99 WHERE id = 'x'`, false},
		{"reinforced earlier", `UPDATE mem_blocks SET last_reinforced_hours = 50 WHERE id = 'x'`, true},
		{"never reinforced", `UPDATE mem_blocks SET last_reinforced_hours = NULL WHERE id = 'x'`, true},
		{"slower tier", `UPDATE mem_blocks SET category = 'mind' WHERE id = 'x'`, false},
		{"faster tier", `UPDATE mem_blocks SET category = 'observation' WHERE id = 'x'`, true},
		{"an edge more", `INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES ('x', 'z', 0.9, 0, 100)`, false},
		{"an edge less", `DELETE FROM mem_edges WHERE from_id = 'w' AND to_id = 'x'`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := openAsWorker(t, copyMemory(t, orig))
			old := scalar[float64](t, db, `SELECT rank_bound FROM mem_block_state WHERE id = 'x'`)
			if old <= -1e300 {
				t.Fatalf("x has no rank bound after the first sweep (%v)", old)
			}
			mustExec(t, db, c.write)
			var seen *float64
			now := 101.0
			opt := worker.WithChunk(worker.SweepOptions{Now: &now}, func(step string, done, total int64) {
				if step == "plan_rank" && done == 0 && seen == nil {
					var b sql.NullFloat64
					if err := db.SQL.QueryRow(`SELECT rank_bound FROM mem_block_state WHERE id = 'x'`).Scan(&b); err != nil {
						t.Error(err)
					}
					v := math.NaN()
					if b.Valid {
						v = b.Float64
					}
					seen = &v
				}
			})

			if _, err := worker.Sweep(context.Background(), db, opt); err != nil {
				t.Fatal(err)
			}
			switch {
			case seen == nil:
				t.Fatal("the sweep stored no rank bounds")
			case c.kept && *seen != old:
				t.Errorf("the bound went from %v to %v, want it kept", old, *seen)
			case !c.kept && !math.IsNaN(*seen):
				t.Errorf("the bound %v was kept (was %v), want it forgotten", *seen, old)
			}
		})
	}
}
