package worker_test

import (
	"context"
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
