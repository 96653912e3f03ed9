package worker_test

import (
	"context"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker"
)

// TestFullEvaluationHashedIsTheJoin: a full sweep on a file of memworker's
// own tables finds its edges' ends' rates by memdecay_block_rate's hash
// table, and ends exactly where the same sweep reading them by the join
// does: a first sweep, then a full one later, on a memory with every tier,
// blocks whose numbers are not numbers (no rate), and edges to a block
// that is not there (the standard rate).
func TestFullEvaluationHashedIsTheJoin(t *testing.T) {
	orig := bigMemory(t, 12, 150, 1800)
	app := openAsApp(t, orig)
	for _, q := range []string{
		`UPDATE mem_blocks SET confidence = 'high' WHERE id IN ('b0003', 'b0040')`,
		`UPDATE mem_blocks SET last_reinforced_hours = 'yesterday' WHERE id = 'b0007'`,
		`INSERT INTO mem_block_tags VALUES ('b0011', 'self/constitutional'), ('b0012', 'self/goal')`,
		`PRAGMA foreign_keys = OFF`,
		`INSERT OR REPLACE INTO mem_edges (from_id, to_id, weight, last_active_hours) VALUES
			('b0003', 'b0007', 0.5, 600), ('b0001', 'gone', 0.4, 700), ('a-gone', 'b0011', 0.3, 650), ('b0012', 'b0100', 0.9, 500)`,
	} {
		if _, err := app.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	app.Close()

	joined, hashed := openAsWorker(t, copyMemory(t, orig)), openAsWorker(t, copyMemory(t, orig))
	for i, at := range []struct {
		clock float64
		wall  time.Time
		full  bool
	}{{bigClock + 300, bigWall.Add(10 * 24 * time.Hour), false}, {bigClock + 500, bigWall.Add(20 * 24 * time.Hour), true}} {
		sweep := func(db *worker.DB, opt worker.SweepOptions) (*worker.Report, bool) {
			t.Helper()
			told, byHash := false, false
			opt.Now, opt.WallNow, opt.Full = &at.clock, &at.wall, at.full
			r, err := worker.Sweep(context.Background(), db, worker.WithRatesHashed(opt, func(h bool) { told, byHash = true, h }))
			if err != nil {
				t.Fatal(err)
			}
			if !told {
				t.Fatalf("sweep %d evaluated no edge in full", i)
			}
			return r, byHash
		}
		rj, byHash := sweep(joined, worker.WithJoinedRates(worker.SweepOptions{}))
		if byHash {
			t.Fatalf("sweep %d: the joined sweep found its rates by the hash table", i)
		}
		rh, byHash := sweep(hashed, worker.SweepOptions{})
		if !byHash {
			t.Fatalf("sweep %d: a file's own tables did not find their rates by the hash table", i)
		}
		if i == 0 && (rh.EdgesDecayed == 0 || rh.EdgesPruned == 0) {
			t.Fatalf("sweep %d: pruned %d, decayed %d; the memory should have edges of both to remove", i, rh.EdgesPruned, rh.EdgesDecayed)
		}
		if a, b := wholeFile(t, joined, true), wholeFile(t, hashed, true); a != b {
			t.Fatalf("sweep %d: the join and the hash table differ\njoin:\n%s\nhash:\n%s", i, diffLines(a, b), diffLines(b, a))
		}
		if reportCounts(rj) != reportCounts(rh) {
			t.Fatalf("sweep %d: reports differ\njoin %s\nhash %s", i, reportCounts(rj), reportCounts(rh))
		}
	}
}
