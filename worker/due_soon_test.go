package worker_test

// The list of edges due soon (mem_edge_soon) stands in for a pass over
// every due row while its horizon covers a sweep's clock. A history of
// sweeps a few hours apart, with an app writing between and during them,
// full sweeps and sweeps cut off mid-apply, must end exactly as the same
// history with the list built again before every sweep (from that pass),
// and after every sweep the list must hold every due row at or before its
// horizon, with its due times, and nothing else.

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker"
)

func TestDueSoonListStandsInForTheScan(t *testing.T) {
	for seed := int64(401); seed <= 406; seed++ {
		t.Run(fmt.Sprint("seed_", seed), func(t *testing.T) {
			listed, scanned, rng := randomPair(t, seed)
			clock, wall := 100.0, time.Unix(1_800_000_000, 0)
			used, cut := 0, 0
			for step := range 40 {
				writes := randomWrites(rng, clock, wall.Unix())
				for _, q := range writes {
					mustExec(t, listed, q)
					mustExec(t, scanned, q)
				}
				full, cutNow := step%10 == 9, step%7 == 3
				clock += float64(rng.Intn(9))
				wall = wall.Add(time.Duration(rng.Intn(9)) * time.Hour)
				if cutNow {
					clock += float64(50 + rng.Intn(100)) // enough removals to cut between
				}
				var during []string
				if step%3 == 1 {
					during = randomWrites(rng, clock, wall.Unix())
				}
				// The scanned copy has no horizon: its sweep builds the
				// list again from every due row.
				mustExec(t, scanned, `DELETE FROM mem_config WHERE key = 'due_soon'`)
				before := scalar[string](t, listed, `SELECT coalesce((SELECT value FROM mem_config WHERE key = 'due_soon'), '')`)
				var errs [2]error
				for i, db := range []*worker.DB{listed, scanned} {
					ctx, cancel := context.WithCancel(context.Background())
					pending := during
					opt := worker.SweepOptions{Now: &clock, WallNow: &wall, ChunkSize: 3, SoloChunkSize: 3, Full: full}
					_, errs[i] = worker.Sweep(ctx, db, worker.WithChunk(opt, func(step string, done, total int64) {
						if step != "plan_edges" || done == 0 || done == total {
							return
						}
						for _, q := range pending {
							if _, err := db.SQL.Exec(q); err != nil {
								t.Errorf("app write during the sweep: %v", err)
							}
						}
						pending = nil
						if cutNow {
							cancel()
						}
					}))
					cancel()
				}
				if errors.Is(errs[0], context.Canceled) && errors.Is(errs[1], context.Canceled) {
					cut++
					checkDueSoon(t, listed, fmt.Sprintf("step %d, cut", step))
					incSweep(t, listed, clock, wall, false) // resumes the plan
					mustExec(t, scanned, `DELETE FROM mem_config WHERE key = 'due_soon'`)
					incSweep(t, scanned, clock, wall, false)
				} else if errs[0] != nil || errs[1] != nil {
					t.Fatalf("step %d: listed %v, scanned %v", step, errs[0], errs[1])
				}
				after := scalar[string](t, listed, `SELECT coalesce((SELECT value FROM mem_config WHERE key = 'due_soon'), '')`)
				if before != "" && after == before {
					used++
				}
				checkDueSoon(t, listed, fmt.Sprintf("step %d", step))
				if a, b := memoryState(t, listed), memoryState(t, scanned); a != b {
					t.Fatalf("step %d: rows differ\nlisted:\n%s\nscanned:\n%s", step, diffLines(a, b), diffLines(b, a))
				}
				if a, b := derivedState(t, listed), derivedState(t, scanned); a != b {
					t.Fatalf("step %d: derived state differs\nlisted:\n%s\nscanned:\n%s", step, diffLines(a, b), diffLines(b, a))
				}
			}
			if used < 15 || cut == 0 {
				t.Fatalf("the list stood in for the scan in %d sweeps of 40 and %d were cut: the history does not test it", used, cut)
			}
		})
	}
}

// checkDueSoon checks the list of edges due soon against the due rows: it
// holds every one at or before its horizon, with its due times, and no
// other row; with no horizon, nothing is checked (no sweep reads it).
func checkDueSoon(t *testing.T, db *worker.DB, where string) {
	t.Helper()
	const horizon = `(SELECT json_extract(value, '$.hours') AS h, json_extract(value, '$.wall') AS w
		FROM mem_config WHERE key = 'due_soon')`
	if scalar[int](t, db, `SELECT count(*) FROM `+horizon) == 0 {
		return
	}
	missing := scalar[int](t, db, `SELECT count(*) FROM mem_edge_due d, `+horizon+` z
		WHERE (d.due_hours <= z.h OR d.due_wall <= z.w)
		  AND NOT EXISTS (SELECT 1 FROM mem_edge_soon s WHERE s.from_id = d.from_id AND s.to_id = d.to_id
		                  AND s.due_hours IS d.due_hours AND s.due_wall IS d.due_wall)`)
	extra := scalar[int](t, db, `SELECT count(*) FROM mem_edge_soon s, `+horizon+` z
		WHERE NOT EXISTS (SELECT 1 FROM mem_edge_due d WHERE d.from_id = s.from_id AND d.to_id = s.to_id
		                  AND d.due_hours IS s.due_hours AND d.due_wall IS s.due_wall
		                  AND (d.due_hours <= z.h OR d.due_wall <= z.w))`)
	if missing != 0 || extra != 0 {
		t.Fatalf("%s: the list of edges due soon misses %d due rows and has %d it should not", where, missing, extra)
	}
}
