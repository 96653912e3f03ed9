package worker_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker"
)

// TestFullSweepKeepsOneDueRowPerEdge: a --full sweep writes the due times
// range by range in key order; the due rows of edges the app deleted
// meanwhile go, at the first key, in the middle and past the last key,
// while every edge still there keeps one. On a file and as on rqlite.
func TestFullSweepKeepsOneDueRowPerEdge(t *testing.T) {
	orig := bigMemory(t, 47, 80, 900)
	clock, wall := bigClock+150, bigWall.Add(30*24*time.Hour)
	sweeps := map[string]func(context.Context, *worker.DB, worker.SweepOptions) (*worker.Report, error){
		"file": worker.Sweep, "replicated": worker.SweepReplicated,
	}
	for mode, sweep := range sweeps {
		t.Run(mode, func(t *testing.T) {
			db := openAsWorker(t, copyMemory(t, orig))
			if _, err := sweep(context.Background(), db, worker.SweepOptions{Now: &clock, WallNow: &wall, ChunkSize: 7}); err != nil {
				t.Fatal(err)
			}
			gone := `SELECT * FROM (SELECT from_id, to_id FROM mem_edges ORDER BY 1, 2 LIMIT 1)
				UNION ALL SELECT * FROM (SELECT from_id, to_id FROM mem_edges ORDER BY 1, 2 LIMIT 1 OFFSET 200)
				UNION ALL SELECT * FROM (SELECT from_id, to_id FROM mem_edges ORDER BY 1 DESC, 2 DESC LIMIT 1)`
			if n := scalar[int64](t, db, `SELECT count(*) FROM mem_edge_due WHERE (from_id, to_id) IN (`+gone+`)`); n != 3 {
				t.Fatalf("before: %d of the 3 edges to delete have a due row, want 3", n)
			}
			if _, err := db.SQL.Exec(`DELETE FROM mem_edges WHERE (from_id, to_id) IN (` + gone + `)`); err != nil {
				t.Fatal(err)
			}
			later := clock + 40
			if _, err := sweep(context.Background(), db, worker.SweepOptions{Now: &later, WallNow: &wall, Full: true, ChunkSize: 7}); err != nil {
				t.Fatal(err)
			}
			if n := scalar[int64](t, db, `SELECT count(*) FROM mem_edge_due d WHERE NOT EXISTS (
				SELECT 1 FROM mem_edges e WHERE e.from_id = d.from_id AND e.to_id = d.to_id)`); n != 0 {
				t.Errorf("%d due rows of edges that are gone", n)
			}
			if n := scalar[int64](t, db, `SELECT count(*) FROM mem_edges e WHERE NOT EXISTS (
				SELECT 1 FROM mem_edge_due d WHERE e.from_id = d.from_id AND e.to_id = d.to_id)`); n != 0 {
				t.Errorf("%d edges still there have no due row", n)
			}
		})
	}
}

// TestDueRowsOfEdgesThePlanMayRemove: a full sweep writes the due row of
// every edge it keeps, looking up in the plan only those it may remove
// (a static prune, below the decay threshold), and none of an edge it
// removes, whose removal then settles its ends' degrees once (a due row
// left to it would take its strength off them twice): each side of the decay
// threshold (0.5·e^(−0.005·321) = 0.1002 kept, at 323 h 0.0993 removed),
// a pinned static prune, and with a decay cap of a half, a candidate the
// cap keeps.
func TestDueRowsOfEdgesThePlanMayRemove(t *testing.T) {
	const fx = `
		INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES
			('a','knowledge',1000), ('b','knowledge',1000), ('c','knowledge',1000), ('d','knowledge',1000);
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours, pinned) VALUES
			('a','b',0.5,0,679,0),   -- 321 h: just above the threshold, kept
			('a','c',0.5,0,677,0),   -- 323 h: just below, a candidate
			('b','c',0.05,0,1000,1), -- a static prune, pinned: kept
			('b','d',0.05,0,1000,0), -- a static prune
			('c','d',0.5,0,0,0);     -- 1000 h: far below, a candidate`
	for _, c := range []struct {
		cap        string
		kept, gone []string
	}{
		{"1", []string{"a-b", "b-c"}, []string{"a-c", "b-d", "c-d"}},
		{"0.5", []string{"a-b", "a-c", "b-c"}, []string{"b-d", "c-d"}}, // the cap keeps the higher of two
	} {
		t.Run("max_decay_fraction "+c.cap, func(t *testing.T) {
			db, _ := newMemory(t, fx)
			setConfig(t, db, "block_archival", "off")
			setConfig(t, db, "max_decay_fraction", c.cap)
			if r := sweepAt(t, db, 1000); !r.Full {
				t.Fatal("the first sweep is not full")
			}
			expectEdges(t, db, c.kept, c.gone)
			due := column(t, db, `SELECT from_id || '-' || to_id FROM mem_edge_due ORDER BY 1`)
			if !slices.Equal(due, c.kept) {
				t.Errorf("due rows %v, want one per edge kept %v", due, c.kept)
			}
			// A removal settles its ends' degrees once: they count the edges kept.
			if n := scalar[int64](t, db, `SELECT count(*) FROM mem_block_state s
				WHERE abs(s.degree - (SELECT total(weight) FROM mem_edges e WHERE s.id IN (e.from_id, e.to_id))) > 1e-9`); n != 0 {
				t.Errorf("%d blocks' degrees are not the strength of the edges they keep", n)
			}
		})
	}
}
