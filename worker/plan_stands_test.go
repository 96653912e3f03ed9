package worker_test

import (
	"context"
	"testing"

	"github.com/memdecay/memdecay/worker"
)

// TestDefaultSweepTakesItsPlanWhileUntouched: a default sweep archiving no
// block, on a file whose triggers are memworker's own, takes each chunk of
// its edge removals as planned while no other connection has committed
// since the plan, and looks at each edge again in a chunk after one has:
//   - alone, every chunk is taken as planned;
//   - with an app's write to a table of its own before each chunk, none is,
//     and the file ends the same;
//   - with an app's change to a planned edge before the first chunk, every
//     chunk looks again (the app's commit could have changed an edge of
//     any), and the edge stays, counted as changed since the plan.
func TestDefaultSweepTakesItsPlanWhileUntouched(t *testing.T) {
	memory, clock, wall := removalsMemory(t)
	open := func() *worker.DB {
		db := memory()
		mustExec(t, db, `CREATE TABLE app_probe (n INTEGER)`)
		return db
	}
	type run struct {
		report      *worker.Report
		stands      bool
		asPlanned   []bool
		appWroteFor int
	}
	sweep := func(db *worker.DB, before func(done int64)) run {
		t.Helper()
		var r run
		opt := worker.SweepOptions{Now: &clock, WallNow: &wall, ChunkSize: 40, SoloChunkSize: 40}
		opt = worker.WithPlanStands(opt, func(s bool) { r.stands = s })
		opt = worker.WithChunkAsPlanned(opt, func(p bool) { r.asPlanned = append(r.asPlanned, p) })
		opt = worker.WithChunk(opt, func(step string, done, total int64) {
			if step == "plan_edges" && done < total && before != nil {
				before(done) // on another connection of the pool: the sweep's is pinned
				r.appWroteFor++
			}
		})
		rep, err := worker.Sweep(context.Background(), db, opt)
		if err != nil {
			t.Fatal(err)
		}
		r.report = rep
		return r
	}
	count := func(flags []bool, want bool) (n int) {
		for _, f := range flags {
			if f == want {
				n++
			}
		}
		return n
	}

	alone := open()
	ra := sweep(alone, nil)
	if ra.report.EdgesPruned == 0 || ra.report.EdgesDecayed == 0 {
		t.Fatalf("pruned %d, decayed %d: the memory should have edges of both to remove", ra.report.EdgesPruned, ra.report.EdgesDecayed)
	}
	if !ra.stands || len(ra.asPlanned) < 3 || count(ra.asPlanned, true) != len(ra.asPlanned) {
		t.Fatalf("alone: plan stands %v, chunks taken as planned %v: want it to stand and every one of 3 or more", ra.stands, ra.asPlanned)
	}

	busy := open()
	rb := sweep(busy, func(done int64) { mustExec(t, busy, `INSERT INTO app_probe VALUES (?)`, done) })
	if rb.appWroteFor < 3 || count(rb.asPlanned, true) != 0 {
		t.Fatalf("with an app writing before each of %d chunks: taken as planned %v, want none", rb.appWroteFor, rb.asPlanned)
	}
	mustExec(t, busy, `DELETE FROM app_probe`)
	if a, b := wholeFile(t, alone, true), wholeFile(t, busy, true); a != b {
		t.Fatalf("the sweep that took its plan and the one that looked again differ\nas planned:\n%s\nlooked again:\n%s", diffLines(a, b), diffLines(b, a))
	}
	if reportCounts(ra.report) != reportCounts(rb.report) {
		t.Fatalf("reports differ\nas planned   %s\nlooked again %s", reportCounts(ra.report), reportCounts(rb.report))
	}

	var from, to string
	if err := alone.SQL.QueryRow(`SELECT from_id, to_id FROM mem_archive_mem_edges WHERE mem_action = 'prune'
		ORDER BY from_id, to_id LIMIT 1`).Scan(&from, &to); err != nil {
		t.Fatal(err)
	}
	changed := open()
	rc := sweep(changed, func(done int64) {
		if done == 0 {
			mustExec(t, changed, `UPDATE mem_edges SET weight = 0.99 WHERE from_id = ? AND to_id = ?`, from, to)
		}
	})
	if len(rc.asPlanned) < 3 || count(rc.asPlanned, true) != 0 {
		t.Fatalf("with an app's change before the first chunk only: taken as planned %v, want none", rc.asPlanned)
	}
	if w := scalar[float64](t, changed, `SELECT weight FROM mem_edges WHERE from_id = ? AND to_id = ?`, from, to); w != 0.99 {
		t.Errorf("the edge the app changed after the plan: weight %v, want it kept at 0.99", w)
	}
	if rc.report.Skipped != 1 || rc.report.EdgesPruned != ra.report.EdgesPruned-1 {
		t.Errorf("skipped %d, pruned %d: want 1 skipped, %d pruned", rc.report.Skipped, rc.report.EdgesPruned, ra.report.EdgesPruned-1)
	}
}
