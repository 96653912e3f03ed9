package worker_test

import (
	"context"
	"fmt"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdecay/memdecay/schema"
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
			rng := rand.New(rand.NewSource(seed))
			inc, full := openPair(t)
			both := func(query string, args ...any) {
				t.Helper()
				for _, db := range []*worker.DB{inc, full} {
					if _, err := db.SQL.Exec(query, args...); err != nil {
						t.Fatalf("seed %d: %s: %v", seed, query, err)
					}
				}
			}
			for _, q := range randomMemory(rng) {
				both(q)
			}
			clock, wall := 100.0, time.Unix(1_800_000_000, 0)
			for step := 0; step < 8; step++ {
				for _, q := range randomWrites(rng, clock, wall.Unix()) {
					both(q)
				}
				if rng.Intn(4) > 0 {
					clock += float64(rng.Intn(120))
					wall = wall.Add(time.Duration(rng.Intn(40*24)) * time.Hour)
				}
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
			}
		})
	}
}

func openPair(t *testing.T) (*worker.DB, *worker.DB) {
	t.Helper()
	var dbs [2]*worker.DB
	for i := range dbs {
		db, err := worker.Open(filepath.Join(t.TempDir(), "memory.db"), worker.OpenOptions{Create: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		if _, err := schema.Up(db.SQL); err != nil {
			t.Fatal(err)
		}
		dbs[i] = db
	}
	return dbs[0], dbs[1]
}

func incSweep(t *testing.T, db *worker.DB, clock float64, wall time.Time, full bool) *worker.Report {
	t.Helper()
	r, err := worker.Sweep(context.Background(), db, worker.SweepOptions{Now: &clock, WallNow: &wall, Full: full, ChunkSize: 7})
	if err != nil {
		t.Fatalf("sweep (full %v): %v", full, err)
	}
	return r
}

var propCategories = []string{"knowledge", "mind", "observation", "project"}
var propTags = []string{"self/constitutional", "self/value", "self/goal", "python", "misc"}
var propSegments = []string{"identity", "correction", "preference", "knowledge", "context", "context"}

func randomMemory(rng *rand.Rand) []string {
	var qs []string
	qs = append(qs, `INSERT INTO mem_edge_policies (relation_type, model, params, clock, threshold, action, orphans) VALUES
		('works_on', 'half_life', '{"half_life":"30d"}', 'wall', 0.2, 'exclude', 'keep'),
		('chat', 'linear', '{"rate":0.01,"hold":"10h"}', 'active_hours', NULL, 'delete', 'delete')`)
	for i := 0; i < 24; i++ {
		qs = append(qs, fmt.Sprintf(`INSERT INTO mem_blocks (id, category, confidence, reinforcement_count, last_reinforced_hours)
			VALUES ('b%02d', '%s', %.2f, %d, %d)`, i, propCategories[rng.Intn(len(propCategories))], rng.Float64(), rng.Intn(12), rng.Intn(100)))
		if rng.Intn(3) == 0 {
			qs = append(qs, fmt.Sprintf(`INSERT OR IGNORE INTO mem_block_tags VALUES ('b%02d', '%s')`, i, propTags[rng.Intn(len(propTags))]))
		}
	}
	for i := 0; i < 80; i++ {
		qs = append(qs, randomEdge(rng, 100, 1_800_000_000))
	}
	for i := 0; i < 20; i++ {
		qs = append(qs, fmt.Sprintf(`INSERT INTO mem_facts (id, segment, access_count, last_accessed_at, status) VALUES ('f%02d', '%s', %d, %d, '%s')`,
			i, propSegments[rng.Intn(len(propSegments))], rng.Intn(5), 1_800_000_000-rng.Intn(60*86400),
			[]string{"active", "active", "active", "confirmed"}[rng.Intn(4)]))
	}
	return qs
}

func randomEdge(rng *rand.Rand, clock float64, wall int64) string {
	a, b := rng.Intn(24), rng.Intn(24)
	for a == b {
		b = rng.Intn(24)
	}
	if a > b {
		a, b = b, a
	}
	anchor := "NULL"
	if rng.Intn(10) > 0 {
		anchor = fmt.Sprint(clock - float64(rng.Intn(400)))
	}
	relation := []string{"similar", "similar", "similar", "works_on", "chat"}[rng.Intn(5)]
	origin := []string{"similarity", "outcome", "agent", "observed"}[rng.Intn(4)]
	weight := fmt.Sprintf("%.3f", rng.Float64())
	if rng.Intn(40) == 0 {
		weight = "'heavy'"
	}
	return fmt.Sprintf(`INSERT OR IGNORE INTO mem_edges (from_id, to_id, weight, reinforcement_count, relation_type, origin,
		last_active_hours, last_observed_at, pinned) VALUES ('b%02d', 'b%02d', %s, %d, '%s', '%s', %s, %d, %d)`,
		a, b, weight, rng.Intn(14), relation, origin, anchor, wall-int64(rng.Intn(90*86400)), boolInt(rng.Intn(25) == 0))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// randomWrites is what an app does between sweeps: new edges, co-retrieval,
// re-observation, retagging, recategorising, deletions, fact use.
func randomWrites(rng *rand.Rand, clock float64, wall int64) []string {
	var qs []string
	for i := rng.Intn(12); i > 0; i-- {
		switch rng.Intn(10) {
		case 0, 1:
			qs = append(qs, randomEdge(rng, clock, wall))
		case 2, 3:
			qs = append(qs, fmt.Sprintf(`UPDATE mem_edges SET reinforcement_count = reinforcement_count + 1, last_active_hours = %v
				WHERE rowid = (SELECT rowid FROM mem_edges ORDER BY from_id, to_id LIMIT 1 OFFSET %d)`, clock, rng.Intn(60)))
		case 4:
			qs = append(qs, fmt.Sprintf(`UPDATE mem_edges SET weight = 1.0, last_observed_at = %d
				WHERE rowid = (SELECT rowid FROM mem_edges WHERE relation_type = 'works_on' ORDER BY from_id, to_id LIMIT 1 OFFSET %d)`, wall, rng.Intn(10)))
		case 5:
			qs = append(qs, fmt.Sprintf(`INSERT OR IGNORE INTO mem_block_tags VALUES ('b%02d', '%s')`, rng.Intn(24), propTags[rng.Intn(len(propTags))]))
		case 6:
			qs = append(qs, fmt.Sprintf(`DELETE FROM mem_block_tags WHERE rowid = (SELECT rowid FROM mem_block_tags ORDER BY block_id, tag LIMIT 1 OFFSET %d)`, rng.Intn(8)))
		case 7:
			qs = append(qs, fmt.Sprintf(`UPDATE mem_blocks SET category = '%s', last_reinforced_hours = %v WHERE id = 'b%02d' AND status = 'active'`,
				propCategories[rng.Intn(len(propCategories))], clock-float64(rng.Intn(50)), rng.Intn(24)))
		case 8:
			qs = append(qs, fmt.Sprintf(`DELETE FROM mem_edges WHERE rowid = (SELECT rowid FROM mem_edges ORDER BY from_id, to_id LIMIT 1 OFFSET %d)`, rng.Intn(60)))
		case 9:
			qs = append(qs, fmt.Sprintf(`UPDATE mem_facts SET access_count = access_count + 1, last_accessed_at = %d WHERE id = 'f%02d' AND status = 'active'`,
				wall, rng.Intn(20)))
		}
	}
	return qs
}

// memoryState renders every row the sweeps may change, and the removals
// logged, in a stable order.
func memoryState(t *testing.T, db *worker.DB) string {
	t.Helper()
	var b strings.Builder
	for _, q := range []string{
		`SELECT 'edge', from_id, to_id, quote(weight), reinforcement_count, excluded FROM mem_edges ORDER BY 2, 3`,
		`SELECT 'block', id, status, coalesce(archive_reason, ''), reinforcement_count, quote(last_reinforced_hours) FROM mem_blocks ORDER BY 2`,
		`SELECT 'tag', block_id, tag, '', '', '' FROM mem_block_tags ORDER BY 2, 3`,
		`SELECT 'fact', id, status, '', access_count, '' FROM mem_facts ORDER BY 2`,
		`SELECT 'event', subject_kind, subject_id, action, reason, count(*) FROM mem_events GROUP BY 2, 3, 4, 5 ORDER BY 2, 3, 4, 5`,
	} {
		rows, err := db.SQL.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var c [6]any
			if err := rows.Scan(&c[0], &c[1], &c[2], &c[3], &c[4], &c[5]); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%v\n", c)
		}
		rows.Close()
	}
	return b.String()
}

// diffLines lists the lines of a missing from b.
func diffLines(a, b string) string {
	in := map[string]bool{}
	for _, l := range strings.Split(b, "\n") {
		in[l] = true
	}
	var out []string
	for _, l := range strings.Split(a, "\n") {
		if !in[l] {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestStoredStateMatchesFull: the derived state incremental sweeps keep
// (degrees to the last bit, tiers, due times) is what a full sweep computes
// from scratch: a --full sweep at the same clock, which removes nothing
// new, leaves it unchanged.
func TestStoredStateMatchesFull(t *testing.T) {
	derived := func(db *worker.DB) string {
		var b strings.Builder
		for _, q := range []string{
			`SELECT id, tier, quote(degree), coalesce(problem, '') FROM mem_block_state ORDER BY 1`,
			`SELECT from_id || ' ' || to_id, quote(due_hours), quote(due_wall), coalesce(problem, '') FROM mem_edge_due ORDER BY 1`,
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
