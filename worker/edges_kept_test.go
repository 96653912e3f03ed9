package worker_test

import (
	"context"
	"testing"

	"github.com/memdecay/memdecay/worker"
)

// TestEdgesKeptWhileNothingChanged: an incremental sweep takes the edges
// the last sweep left, and what the edge writes queued since changed of
// them, instead of counting them, only while no write can have gone
// untold: an edge written while the last sweep settled (after its count),
// while this one refreshes, a change of the schema, and a sweep in between
// that did not finish make it count again. Every sweep's total_edges_after
// is the file's count (expectEdgesAfter).
func TestEdgesKeptWhileNoWriteUntold(t *testing.T) {
	db, _ := newMemory(t, `
		INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES
			('a','knowledge',1000), ('b','knowledge',1000), ('c','knowledge',1000), ('d','knowledge',1000);
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES
			('a','b',0.9,1,1000), ('a','c',0.8,0,1000), ('b','c',0.7,2,1000), ('c','d',0.6,0,1000);`)
	clock := 1000.0
	writing := false // an app writes beside the sweep under way
	sweep := func(name string, wantKept bool, opt ...func(worker.SweepOptions) worker.SweepOptions) {
		t.Helper()
		var told []bool
		o := worker.WithEdgesKept(worker.SweepOptions{Now: &clock}, func(kept bool) { told = append(told, kept) })
		for _, f := range opt {
			o = f(o)
		}
		r, err := worker.Sweep(context.Background(), db, o)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !writing { // an app's write beside it comes after its count
			expectEdgesAfter(t, db, r)
		}
		if len(told) != 1 || told[0] != wantKept {
			t.Errorf("%s: edges kept %v, want [%v]", name, told, wantKept)
		}
	}
	if r := sweepAt(t, db, clock); !r.Full {
		t.Fatal("the first sweep was not full")
	}
	sweep("a sweep at the same clock, nothing changed", true)
	clock++
	sweep("an hour later, nothing changed", true)

	mustExec(t, db, `INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES ('a','d',0.5,0,1001)`)
	clock++
	sweep("after an app's new edge", true)
	sweep("the same clock again", true)
	mustExec(t, db, `DELETE FROM mem_edges WHERE from_id = 'a' AND to_id = 'd';
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES ('b','d',0.5,0,1002);
		DELETE FROM mem_edges WHERE from_id = 'b' AND to_id = 'd';
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES ('a','d',0.4,0,1002);
		DELETE FROM mem_edges WHERE from_id = 'a' AND to_id = 'd'`)
	sweep("after an app's deletion, and an edge written and deleted twice", true)
	mustExec(t, db, `UPDATE mem_edges SET weight = 0.95 WHERE from_id = 'a' AND to_id = 'b'`)
	sweep("after an app's update", true)

	// beside has the app write an edge (values) at the first refresh of
	// blocks the sweep tells of after a step (after; "" for any): as it
	// refreshes, or once it is recorded, as it settles.
	beside := func(after, values string) func(worker.SweepOptions) worker.SweepOptions {
		wrote, ready := false, after == ""
		return func(o worker.SweepOptions) worker.SweepOptions {
			return worker.WithChunk(o, func(step string, done, total int64) {
				ready = ready || (step == after && done == total)
				if step == "refresh_ids" && ready && !wrote {
					wrote, writing = true, true
					if _, err := db.SQL.Exec(`INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours)
						VALUES ` + values); err != nil {
						t.Errorf("app write: %v", err)
					}
				}
			})
		}
	}
	// An app's edge written while the sweep refreshes, after it took the
	// edges before: it counts them.
	mustExec(t, db, `UPDATE mem_blocks SET confidence = 0.7 WHERE id = 'a'`)
	sweep("a sweep an app writes beside as it refreshes", false, beside("", `('a','d',0.5,0,1002)`))
	if !writing {
		t.Fatal("no refresh of the app's block: the app wrote nothing while the sweep refreshed")
	}
	writing = false
	sweep("after it", true)

	// An app's edge written while the last sweep settles, after it counted
	// (the rank bounds' last transaction records the sweep).
	clock++
	sweep("a sweep an app writes beside", true, beside("plan_rank", `('b','d',0.5,0,1003)`))
	if !writing {
		t.Fatal("no refresh after the sweep was recorded: the app wrote nothing while it settled")
	}
	writing = false
	sweep("after an edge written while the last sweep settled", false)

	mustExec(t, db, `CREATE INDEX app_edges_by_weight ON mem_edges (weight)`)
	sweep("after the app changed the schema", false)
	sweep("the schema unchanged since", true)

	// A sweep cut off after it removed an edge: its removals queue nothing,
	// and it recorded no count.
	mustExec(t, db, `DELETE FROM mem_edges WHERE from_id = 'c' AND to_id = 'd';
		DELETE FROM mem_dirty_edges;
		INSERT INTO mem_sweeps (started_at, clock_hours, dry_run, status) VALUES (0, 1003, 0, 'interrupted')`)
	sweep("after a sweep that did not finish", false)
	sweep("after that one", true)
}
