package worker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/memdecay/memdecay/ext/shim"
	"github.com/memdecay/memdecay/worker"
)

// TestFullEvaluationHashedIsTheJoin: a full sweep on a file of memworker's
// own tables finds its edges' ends' rates by memdecay_block_rate's hash
// table, and sums the degrees and what each block loses by
// memdecay_sum_ends, and ends exactly where the same sweep reading them by
// the join and grouping by SQL does: a first sweep, then a full one later,
// then an incremental one, on a memory with every tier, blocks whose
// numbers are not numbers (no rate), and edges to a block that is not
// there (the standard rate).
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
	}{{bigClock + 300, bigWall.Add(10 * 24 * time.Hour), false}, {bigClock + 500, bigWall.Add(20 * 24 * time.Hour), true},
		{bigClock + 700, bigWall.Add(30 * 24 * time.Hour), false}} {
		incremental := i == 2
		sweep := func(db *worker.DB, opt worker.SweepOptions) (*worker.Report, bool, map[string]bool) {
			t.Helper()
			told, byHash, summed := false, false, map[string]bool{}
			opt.Now, opt.WallNow, opt.Full = &at.clock, &at.wall, at.full
			opt = worker.WithSummed(opt, func(source string, fit bool) { summed[source] = fit })
			r, err := worker.Sweep(context.Background(), db, worker.WithRatesHashed(opt, func(h bool) { told, byHash = true, h }))
			if err != nil {
				t.Fatal(err)
			}
			if told == incremental {
				t.Fatalf("sweep %d evaluated every edge: %v", i, told)
			}
			return r, byHash, summed
		}
		rj, byHash, summed := sweep(joined, worker.WithoutHashTables(worker.SweepOptions{}))
		if byHash || len(summed) > 0 {
			t.Fatalf("sweep %d: the sweep by SQL alone used the hash tables: rates %v, sums %v", i, byHash, summed)
		}
		rh, byHash, summed := sweep(hashed, worker.SweepOptions{})
		want := map[string]bool{"edge_strengths": true, "lost_strengths": true}
		if incremental {
			want = map[string]bool{"lost_strengths": true}
		}
		if byHash == incremental || fmt.Sprint(summed) != fmt.Sprint(want) {
			t.Fatalf("sweep %d: a file's own tables: rates by the hash table %v, sums %v; want %v, %v", i, byHash, summed, !incremental, want)
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

// TestRatesHashedOnlyWhereTheyFit: the hash table is asked for only where
// block_rates fits in its memory (shim.BlockRatesMaxBytes, a row's
// BlockRateRowBytes and its id); a copy just past it is read by the join.
// Ephemeral blocks with ids of 4,000 bytes put the two memories on either
// side; both end as a sweep by the join does.
func TestRatesHashedOnlyWhereTheyFit(t *testing.T) {
	const idBytes = 4000
	fits := shim.BlockRatesMaxBytes / (idBytes + shim.BlockRateRowBytes)
	for _, c := range []struct {
		blocks int
		hashed bool
	}{{fits - 50, true}, {fits + 50, false}} {
		_, path := newMemory(t, fmt.Sprintf(`
			WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %d)
			INSERT INTO mem_blocks (id, category, last_reinforced_hours)
			SELECT printf('%%0%dd', i), 'observation', 990 FROM n;
			WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 400)
			INSERT INTO mem_edges (from_id, to_id, weight, last_active_hours)
			SELECT printf('%%0%dd', i), printf('%%0%dd', i + 1 + i %% 7), (i %% 10) / 10.0, 900 + i %% 100 FROM n;`,
			c.blocks, idBytes, idBytes, idBytes))
		joined, _ := sweepCopyAt1000(t, path, worker.WithoutHashTables(worker.SweepOptions{}))
		byHash := false
		db, r := sweepCopyAt1000(t, path, worker.WithRatesHashed(worker.SweepOptions{}, func(h bool) { byHash = h }))
		if r.EdgesPruned == 0 || r.EdgesDecayed == 0 {
			t.Fatalf("%d blocks: pruned %d, decayed %d; the memory should have edges of both to remove", c.blocks, r.EdgesPruned, r.EdgesDecayed)
		}
		if byHash != c.hashed {
			t.Errorf("%d ephemeral blocks with ids of %d bytes (%d fit): hashed %v, want %v", c.blocks, idBytes, fits, byHash, c.hashed)
		}
		if a, b := wholeFile(t, joined, true), wholeFile(t, db, true); a != b {
			t.Fatalf("%d blocks: the join and this sweep differ\njoin:\n%s\nthis:\n%s", c.blocks, diffLines(a, b), diffLines(b, a))
		}
	}
}

// TestSumsByEndsOnlyWhereTheyFit: memdecay_sum_ends sums the degrees of a
// first sweep where their ids fit its memory (shim.SumsMaxBytes, an id's
// SumRowBytes and its bytes); with a few more ids it writes nothing, and
// the sweep groups them by SQL. Blocks with ids of 4,000 bytes, each the
// end of an edge, put the two on either side; both end as a sweep by SQL
// alone does.
func TestSumsByEndsOnlyWhereTheyFit(t *testing.T) {
	const idBytes = 4000
	fits := shim.SumsMaxBytes / (idBytes + shim.SumRowBytes)
	for _, c := range []struct {
		ends int
		fit  bool
	}{{fits - 50, true}, {fits + 50, false}} {
		_, path := newMemory(t, fmt.Sprintf(`
			WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %d)
			INSERT INTO mem_blocks (id, category, last_reinforced_hours)
			SELECT printf('%%0%dd', i), CASE WHEN i %% 3 THEN 'mind' ELSE 'observation' END, 990 FROM n;
			WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %d)
			INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours)
			SELECT printf('%%0%dd', i), printf('%%0%dd', i + 1), (i %% 10) / 10.0, i %% 3, 900 + i %% 100 FROM n;`,
			c.ends, idBytes, c.ends-1, idBytes, idBytes))
		bySQL, _ := sweepCopyAt1000(t, path, worker.WithoutHashTables(worker.SweepOptions{}))
		summed := map[string]bool{}
		db, r := sweepCopyAt1000(t, path, worker.WithSummed(worker.SweepOptions{}, func(source string, fit bool) { summed[source] = fit }))
		if r.EdgesPruned == 0 || r.EdgesDecayed == 0 {
			t.Fatalf("%d ends: pruned %d, decayed %d; the memory should have edges of both to remove", c.ends, r.EdgesPruned, r.EdgesDecayed)
		}
		if fit, told := summed["edge_strengths"]; !told || fit != c.fit {
			t.Errorf("%d ends with ids of %d bytes (%d fit): degrees summed %v (told %v), want %v", c.ends, idBytes, fits, fit, told, c.fit)
		}
		if a, b := wholeFile(t, bySQL, true), wholeFile(t, db, true); a != b {
			t.Fatalf("%d ends: SQL and this sweep differ\nSQL:\n%s\nthis:\n%s", c.ends, diffLines(a, b), diffLines(b, a))
		}
	}
}

// sweepCopyAt1000 sweeps a copy of the memory at path at active hour 1000
// and bigWall.
func sweepCopyAt1000(t *testing.T, path string, opt worker.SweepOptions) (*worker.DB, *worker.Report) {
	t.Helper()
	db := openAsWorker(t, copyMemory(t, path))
	clock, wall := 1000.0, bigWall
	opt.Now, opt.WallNow = &clock, &wall
	r, err := worker.Sweep(context.Background(), db, opt)
	if err != nil {
		t.Fatal(err)
	}
	return db, r
}
