package worker_test

// A sweep on rqlite runs as replicaStore: working tables in main, derived
// state refreshed in place, each transaction one request. On a file in the
// same mode it must end exactly where the file's own sweep does.

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker"
)

func TestReplicaSweepMatchesFile(t *testing.T) {
	seeds := 12
	if testing.Short() {
		seeds = 4
	}
	for seed := int64(1); seed <= int64(seeds); seed++ {
		t.Run(fmt.Sprintf("seed_%d", seed), func(t *testing.T) {
			twinHistory(t, seed, 8, func(file, replica *worker.DB, step int, clock float64, wall time.Time) {
				full := step == 5 // a --full sweep on an established memory too
				rf := incSweep(t, file, clock, wall, full)
				rr, err := worker.SweepReplicated(context.Background(), replica,
					worker.SweepOptions{Now: &clock, WallNow: &wall, Full: full, ChunkSize: 7})
				if err != nil {
					t.Fatalf("seed %d step %d: replicated sweep: %v", seed, step, err)
				}
				if a, b := memoryState(t, file), memoryState(t, replica); a != b {
					t.Fatalf("seed %d step %d at clock %v: file and replicated sweeps differ\nfile:\n%s\nreplicated:\n%s",
						seed, step, clock, diffLines(a, b), diffLines(b, a))
				}
				if reportCounts(rf) != reportCounts(rr) || rf.InvalidRows.Count != rr.InvalidRows.Count {
					t.Fatalf("seed %d step %d: reports differ\nfile       %s\nreplicated %s", seed, step, reportCounts(rf), reportCounts(rr))
				}
				if left := scalar[int64](t, replica, `SELECT count(*) FROM sqlite_master WHERE name LIKE 'mem\_work\_%' ESCAPE '\'`); left != 0 {
					t.Fatalf("seed %d step %d: %d working tables left in the file", seed, step, left)
				}
				if step < 7 {
					return
				}
				// The derived state kept in place is what the file's sweeps keep.
				for _, table := range []string{"mem_block_state", "mem_edge_due", "mem_fact_due"} {
					q := "SELECT * FROM " + table + " ORDER BY 1, 2"
					_, a := dumpRows(t, file, q)
					if _, b := dumpRows(t, replica, q); a != b {
						t.Fatalf("seed %d: %s differs\nfile:\n%s\nreplicated:\n%s", seed, table, diffLines(a, b), diffLines(b, a))
					}
				}
			})
		})
	}
}

// TestReplicaSweepMatchesFileOnBigMemory: policies, pinned, agent and
// invalid edges, facts: the first sweep and a later one, on two copies.
func TestReplicaSweepMatchesFileOnBigMemory(t *testing.T) {
	orig := bigMemory(t, 5, 80, 900)
	file, replica := openAsWorker(t, copyMemory(t, orig)), openAsWorker(t, copyMemory(t, orig))
	wall := time.Unix(1_800_000_000, 0)
	for _, clock := range []float64{500, 640} {
		rf := incSweep(t, file, clock, wall, false)
		rr, err := worker.SweepReplicated(context.Background(), replica, worker.SweepOptions{Now: &clock, WallNow: &wall, ChunkSize: 7})
		if err != nil {
			t.Fatal(err)
		}
		if a, b := memoryState(t, file), memoryState(t, replica); a != b {
			t.Fatalf("clock %v: file and replicated sweeps differ\nfile:\n%s\nreplicated:\n%s", clock, diffLines(a, b), diffLines(b, a))
		}
		if reportCounts(rf) != reportCounts(rr) {
			t.Fatalf("clock %v: reports differ\nfile       %s\nreplicated %s", clock, reportCounts(rf), reportCounts(rr))
		}
		if rr.EdgesPruned+rr.EdgesDecayed == 0 {
			t.Fatalf("clock %v: nothing removed; the memory should have edges to remove", clock)
		}
		wall = wall.Add(72 * time.Hour)
	}
}
