package worker_test

// Incremental sweeps end where full ones do: two copies of a random memory
// through the same history, one swept incrementally and one in full, with
// and without sweeps cut short; and the derived state an incremental sweep
// keeps is what a full sweep computes.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker"
)

// TestIncrementalMatchesFull drives two copies of one random memory through
// the same random history of app writes and sweeps: one copy sweeps
// incrementally, the other with Full. After every sweep both must hold
// exactly the same rows and the same removals.
func TestIncrementalMatchesFull(t *testing.T) {
	seeds := 25
	if testing.Short() {
		seeds = 5
	}
	for seed := int64(1); seed <= int64(seeds); seed++ {
		t.Run(fmt.Sprintf("seed_%d", seed), func(t *testing.T) {
			twinHistory(t, seed, 8, func(inc, full *worker.DB, step int, clock float64, wall time.Time) {
				ri := incSweep(t, inc, clock, wall, false)
				rf := incSweep(t, full, clock, wall, true)
				if step > 0 && ri.Full {
					t.Errorf("seed %d step %d: the incremental copy swept in full", seed, step)
				}
				if a, b := memoryState(t, inc), memoryState(t, full); a != b {
					t.Fatalf("seed %d step %d at clock %v: incremental and full differ\nincremental:\n%s\nfull:\n%s",
						seed, step, clock, diffLines(a, b), diffLines(b, a))
				}
				if ri.Archived != rf.Archived || ri.EdgesPruned != rf.EdgesPruned || ri.EdgesDecayed != rf.EdgesDecayed ||
					ri.Facts != rf.Facts || ri.Reinforced != rf.Reinforced || ri.InvalidRows.Count != rf.InvalidRows.Count {
					t.Fatalf("seed %d step %d: reports differ\nincremental %+v\nfull        %+v", seed, step, ri, rf)
				}
			})
		})
	}
}

// TestIncrementalMatchesFullThroughInterruptions: as TestIncrementalMatchesFull,
// but sweeps of either copy are sometimes cancelled at a random chunk (from
// the Chunk signal) and finished by the next sweep at the same clock; the
// copies must still end identical after every step.
// Seeds alternate block archival off and on.
func TestIncrementalMatchesFullThroughInterruptions(t *testing.T) {
	seeds := 6
	if testing.Short() {
		seeds = 4
	}
	cuts := map[string]int{} // where the cuts landed, by step
	for seed := int64(101); seed < 101+int64(seeds); seed++ {
		archival := []string{"off", "auto"}[seed%2]
		t.Run(fmt.Sprintf("seed_%d_archival_%s", seed, archival), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			inc, full := openPair(t)
			both := func(query string) {
				t.Helper()
				for _, db := range []*worker.DB{inc, full} {
					if _, err := db.SQL.Exec(query); err != nil {
						t.Fatalf("%s: %v", query, err)
					}
				}
			}
			for _, db := range []*worker.DB{inc, full} {
				if err := db.UseWAL(); err != nil {
					t.Fatal(err)
				}
				setConfig(t, db, "block_archival", archival)
			}
			for _, q := range randomMemory(rng) {
				both(q)
			}
			clock, wall := 100.0, time.Unix(1_800_000_000, 0)
			for step := range 6 {
				for _, q := range randomWrites(rng, clock, wall.Unix()) {
					both(q)
				}
				if rng.Intn(4) > 0 {
					clock += float64(rng.Intn(120))
					wall = wall.Add(time.Duration(rng.Intn(40*24)) * time.Hour)
				}
				var how [2]string
				for k, db := range []*worker.DB{inc, full} {
					isFull := k == 1
					finished := false
					for tries := 0; !finished && rng.Intn(3) > 0 && tries < 3; tries++ {
						at := 1 + rng.Intn(30)
						var where string
						finished, where = cancelledSweep(t, db, clock, wall, isFull, at)
						if !finished {
							cuts[archival+" "+where]++
							how[k] += fmt.Sprintf("cut at chunk signal %d (%s); ", at, where)
						}
					}
					if !finished {
						incSweep(t, db, clock, wall, isFull)
					}
				}
				if a, b := memoryState(t, inc), memoryState(t, full); a != b {
					t.Fatalf("step %d at clock %v (incremental: %s full: %s): the copies differ\nincremental:\n%s\nfull:\n%s",
						step, clock, how[0], how[1], diffLines(a, b), diffLines(b, a))
				}
			}
		})
	}
	t.Logf("sweeps cut short, by archival setting and step: %v", cuts)
}

// cancelledSweep sweeps with its context cancelled at the at-th Chunk
// signal; it reports whether the sweep finished before that, and else the
// step it was cut in.
func cancelledSweep(t *testing.T, db *worker.DB, clock float64, wall time.Time, full bool, at int) (bool, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	where := ""
	_, err := worker.Sweep(ctx, db, worker.WithChunk(worker.SweepOptions{Now: &clock, WallNow: &wall, Full: full, ChunkSize: 7}, func(step string, _, _ int64) {
		if calls++; calls == at {
			where = step
			cancel()
		}
	}))
	if err == nil {
		return true, ""
	}
	if ctx.Err() == nil {
		t.Fatalf("sweep (full %v): %v", full, err)
	}
	if got := scalar[string](t, db, `SELECT status FROM mem_sweeps ORDER BY id DESC LIMIT 1`); got != "interrupted" {
		t.Errorf("a cancelled sweep is recorded as %q, want interrupted", got)
	}
	return false, where
}

// TestStoredStateMatchesFull: the derived state incremental sweeps keep
// (degrees to the last bit, tiers, due times) is what a full sweep computes
// from scratch: a --full sweep at the same clock, which removes nothing
// new, leaves it unchanged.
func TestStoredStateMatchesFull(t *testing.T) {
	derived := func(db *worker.DB) string { return derivedState(t, db) }
	for seed := int64(201); seed <= 206; seed++ {
		rng := rand.New(rand.NewSource(seed))
		db, _ := openPair(t)
		for _, q := range randomMemory(rng) {
			if _, err := db.SQL.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		clock, wall := 100.0, time.Unix(1_800_000_000, 0)
		for step := range 5 {
			for _, q := range randomWrites(rng, clock, wall.Unix()) {
				if _, err := db.SQL.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
			clock += float64(rng.Intn(120))
			wall = wall.Add(time.Duration(rng.Intn(40*24)) * time.Hour)
			incSweep(t, db, clock, wall, false)
			before := derived(db)
			if r := incSweep(t, db, clock, wall, true); r.EdgesDecayed+r.EdgesPruned+r.Archived != 0 {
				t.Fatalf("seed %d step %d: a second sweep at the same clock removed rows: %+v", seed, step, r)
			}
			if after := derived(db); before != after {
				t.Fatalf("seed %d step %d: the stored state differs from a full computation\nstored:\n%s\nfull:\n%s",
					seed, step, diffLines(before, after), diffLines(after, before))
			}
		}
	}
}

// derivedState renders the derived state a sweep keeps: each block's tier
// and degree (to the bit), each edge's due times and strength, each
// problem.
func derivedState(t *testing.T, db *worker.DB) string {
	t.Helper()
	var b strings.Builder
	for _, q := range []string{
		`SELECT id, tier, quote(degree), coalesce(problem, '') FROM mem_block_state ORDER BY 1`,
		`SELECT from_id || ' ' || to_id, quote(due_hours) || ' ' || quote(due_wall), quote(strength), coalesce(problem, '')
		 FROM mem_edge_due ORDER BY 1`,
	} {
		rows, err := db.SQL.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var c [4]string
			if err := rows.Scan(&c[0], &c[1], &c[2], &c[3]); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintln(&b, c)
		}
		rows.Close()
	}
	return b.String()
}

// TestCutFullSweepResumesToTheSameState: a full sweep cut off after the
// first transaction of its edge removals, and finished by the next sweep
// from its saved plan, leaves every row, event and derived number (degrees
// to the bit) as the same sweep left uninterrupted does, although its sync
// stored the degrees without the plan's removals before the cut. And when
// an app changes an edge the plan was still to remove, the edge stays and
// the degrees count it again from the next refresh: what a full
// recomputation finds.
func TestCutFullSweepResumesToTheSameState(t *testing.T) {
	cut, changed := 0, 0
	for seed := int64(301); seed <= 312; seed++ {
		whole, resumed, rng := randomPair(t, seed)
		clock, wall := 100.0, time.Unix(1_800_000_000, 0)
		clock += float64(40 + rng.Intn(120))
		incSweep(t, whole, clock, wall, true)
		if !cutInEdgeRemovals(t, resumed, clock, wall) {
			continue // the plan's edge removals fitted in one transaction
		}
		// A cancelled context stops the sweep at a statement's end: the
		// chunk after the signal may still have run.
		if scalar[int](t, resumed, `SELECT count(*) FROM mem_sweep_plans WHERE step = 'plan_edges'`) > 0 {
			cut++
		}
		change := seed%2 == 0
		var from, to string
		if change {
			// An edge the plan still removes (it is there, and in the saved
			// plan) is used again by the app before the sweep resumes. (The
			// rows left after the cut may all be edges of archived blocks,
			// gone with them already: then nothing changes.)
			err := resumed.SQL.QueryRow(`SELECT json_extract(p.row, '$[1]'), json_extract(p.row, '$[2]')
				FROM mem_sweep_plans p JOIN mem_edges e ON e.from_id = json_extract(p.row, '$[1]') AND e.to_id = json_extract(p.row, '$[2]')
				WHERE p.step = 'plan_edges' ORDER BY p.seq DESC LIMIT 1`).Scan(&from, &to)
			switch {
			case errors.Is(err, sql.ErrNoRows):
				change = false
			case err != nil:
				t.Fatal(err)
			default:
				mustExec(t, resumed, `UPDATE mem_edges SET weight = 0.9, last_active_hours = ? WHERE from_id = ? AND to_id = ?`, clock, from, to)
				changed++
			}
		}
		if r := incSweep(t, resumed, clock, wall, false); !r.Resumed {
			t.Fatalf("seed %d: the sweep after the cut did not resume its plan: %+v", seed, r)
		}
		if !change {
			if a, b := memoryState(t, whole), memoryState(t, resumed); a != b {
				t.Fatalf("seed %d: rows after the resumed sweep differ\nwhole:\n%s\nresumed:\n%s", seed, diffLines(a, b), diffLines(b, a))
			}
			if a, b := derivedState(t, whole), derivedState(t, resumed); a != b {
				t.Fatalf("seed %d: derived state after the resumed sweep differs\nwhole:\n%s\nresumed:\n%s", seed, diffLines(a, b), diffLines(b, a))
			}
			continue
		}
		if n := scalar[int](t, resumed, `SELECT count(*) FROM mem_edges WHERE from_id = ? AND to_id = ?`, from, to); n != 1 {
			t.Fatalf("seed %d: the edge the app changed after the plan was removed", seed)
		}
		incSweep(t, resumed, clock, wall, false) // refreshes the app's change
		stored := derivedState(t, resumed)
		if r := incSweep(t, resumed, clock, wall, true); r.EdgesDecayed+r.EdgesPruned+r.Archived != 0 {
			t.Fatalf("seed %d: a full sweep at the same clock removed rows: %+v", seed, r)
		}
		if full := derivedState(t, resumed); stored != full {
			t.Fatalf("seed %d: the stored state differs from a full computation\nstored:\n%s\nfull:\n%s", seed, diffLines(stored, full), diffLines(full, stored))
		}
	}
	if cut < 4 || changed < 2 {
		t.Fatalf("only %d sweeps were cut with edge removals left (%d with a changed edge): the memories are too small", cut, changed)
	}
}

// cutInEdgeRemovals runs a full sweep and cancels it once the first
// transaction of its edge removals has committed, if more are left; it
// reports whether the cut happened there (false: the sweep finished, or
// was cut after its last edge removal).
func cutInEdgeRemovals(t *testing.T, db *worker.DB, clock float64, wall time.Time) bool {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	midway := false
	opt := worker.SweepOptions{Now: &clock, WallNow: &wall, Full: true, ChunkSize: 7, SoloChunkSize: 7} // 7 rows a transaction throughout
	_, err := worker.Sweep(ctx, db, worker.WithChunk(opt, func(step string, done, total int64) {
		if step == "plan_edges" && done > 0 && ctx.Err() == nil {
			midway = done < total
			cancel()
		}
	}))
	if err == nil {
		return false
	}
	if ctx.Err() == nil {
		t.Fatalf("full sweep: %v", err)
	}
	return midway
}
