package worker_test

// Generated memories: a big one with enough rows for many chunks, small
// random ones for the incremental/full property, the app writes made
// between or during sweeps, and the checks run on them (the state two
// copies must share, one event per removal).

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker"
)

// bigClock and bigWall are when the generated memories were last active.
const bigClock = 1000.0

var bigWall = time.Unix(1_800_000_000, 0).UTC()

// bigMemory writes a migrated WAL memory of nBlocks blocks, nEdges edges
// (tiered, two relation policies, a few pinned, agent, unanchored and
// invalid ones) and 200 facts, closes it and returns its path. Blocks and
// edges were last active up to 700 hours before bigClock, so a sweep some
// hours later archives, prunes, decays and excludes plenty.
func bigMemory(t *testing.T, seed int64, nBlocks, nEdges int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "memory.db")
	db := createMemory(t, path, "")
	defer db.Close()
	if err := db.UseWAL(); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(seed))
	tx, err := db.SQL.Begin()
	if err != nil {
		t.Fatal(err)
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := tx.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`INSERT INTO mem_edge_policies (relation_type, model, params, clock, threshold, action, orphans) VALUES
		('works_on', 'half_life', '{"half_life":"30d"}', 'wall', 0.2, 'exclude', 'keep'),
		('chat', 'linear', '{"rate":0.01,"hold":"10h"}', 'active_hours', NULL, 'delete', 'delete')`)
	for i := range nBlocks {
		exec(`INSERT INTO mem_blocks (id, category, confidence, reinforcement_count, last_reinforced_hours) VALUES (?, ?, ?, ?, ?)`,
			bigBlock(i), propCategories[rng.Intn(len(propCategories))], float64(rng.Intn(100))/100, rng.Intn(12),
			bigClock-float64(rng.Intn(700)))
		if rng.Intn(4) == 0 {
			exec(`INSERT OR IGNORE INTO mem_block_tags VALUES (?, ?)`, bigBlock(i), propTags[rng.Intn(len(propTags))])
		}
	}
	insertEdge, err := tx.Prepare(`INSERT OR IGNORE INTO mem_edges (from_id, to_id, weight, reinforcement_count, relation_type,
		origin, last_active_hours, last_observed_at, pinned) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		t.Fatal(err)
	}
	defer insertEdge.Close()
	for n := 0; n < nEdges; {
		a, b := rng.Intn(nBlocks), rng.Intn(nBlocks)
		if a == b {
			continue
		}
		a, b = min(a, b), max(a, b)
		var weight any = float64(rng.Intn(1000)) / 1000
		if rng.Intn(500) == 0 {
			weight = "heavy"
		}
		var anchor any = bigClock - float64(rng.Intn(500))
		if rng.Intn(20) == 0 {
			anchor = nil
		}
		count := 0
		if rng.Intn(5) > 1 {
			count = rng.Intn(14)
		}
		res, err := insertEdge.Exec(bigBlock(a), bigBlock(b), weight, count,
			[]string{"similar", "similar", "similar", "similar", "similar", "similar", "similar", "similar", "works_on", "chat"}[rng.Intn(10)],
			[]string{"similarity", "similarity", "outcome", "observed", "agent"}[rng.Intn(5)],
			anchor, bigWall.Unix()-int64(rng.Intn(90*86400)), boolInt(rng.Intn(100) == 0))
		if err != nil {
			t.Fatal(err)
		}
		if k, _ := res.RowsAffected(); k == 1 {
			n++
		}
	}
	for i := range 200 {
		exec(`INSERT INTO mem_facts (id, segment, access_count, last_accessed_at, status) VALUES (?, ?, ?, ?, ?)`,
			fmt.Sprintf("f%03d", i), propSegments[rng.Intn(len(propSegments))], rng.Intn(5),
			bigWall.Unix()-int64(rng.Intn(60*86400)), []string{"active", "active", "active", "confirmed"}[rng.Intn(4)])
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return path
}

// bigBlock is the id of a bigMemory block.
func bigBlock(i int) string { return fmt.Sprintf("b%04d", i) }

// appWrites is a burst of app writes on a bigMemory: co-retrievals, new
// edges, deletions, recategorised blocks, retags and fact recalls.
func appWrites(t *testing.T, db *sql.DB, rng *rand.Rand, nBlocks, n int, clock float64, wall int64) {
	t.Helper()
	for range n {
		var q string
		var args []any
		switch rng.Intn(8) {
		case 0, 1, 2:
			q = `UPDATE mem_edges SET reinforcement_count = reinforcement_count + 1, last_active_hours = ?
				WHERE (from_id, to_id) = (SELECT from_id, to_id FROM mem_edges ORDER BY from_id, to_id LIMIT 1 OFFSET ?)`
			args = []any{clock, rng.Intn(2000)}
		case 3, 4:
			a, b := rng.Intn(nBlocks), rng.Intn(nBlocks)
			if a == b {
				continue
			}
			q = `INSERT OR IGNORE INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours, last_observed_at)
				VALUES (?, ?, ?, 0, ?, ?)`
			args = []any{bigBlock(min(a, b)), bigBlock(max(a, b)), float64(rng.Intn(1000)) / 1000, clock, wall}
		case 5:
			q = `DELETE FROM mem_edges WHERE (from_id, to_id) = (SELECT from_id, to_id FROM mem_edges ORDER BY from_id, to_id LIMIT 1 OFFSET ?)`
			args = []any{rng.Intn(2000)}
		case 6:
			q = `UPDATE mem_blocks SET category = ?, last_reinforced_hours = ? WHERE id = ? AND status = 'active'`
			args = []any{propCategories[rng.Intn(len(propCategories))], clock - float64(rng.Intn(300)), bigBlock(rng.Intn(nBlocks))}
		case 7:
			q = `UPDATE mem_facts SET access_count = access_count + 1, last_accessed_at = ? WHERE id = ? AND status = 'active'`
			args = []any{wall, fmt.Sprintf("f%03d", rng.Intn(200))}
		}
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// The pools random memories and app writes draw from.
var propCategories = []string{"knowledge", "mind", "observation", "project"}

var propTags = []string{"self/constitutional", "self/value", "self/goal", "python", "misc"}

var propSegments = []string{"identity", "correction", "preference", "knowledge", "context", "context"}

// randomMemory is SQL making a random memory: two relation policies, 24
// blocks, up to 80 edges and 20 facts.
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

// randomEdge is SQL linking two random blocks of a randomMemory.
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
				WHERE (from_id, to_id) = (SELECT from_id, to_id FROM mem_edges ORDER BY from_id, to_id LIMIT 1 OFFSET %d)`, clock, rng.Intn(60)))
		case 4:
			qs = append(qs, fmt.Sprintf(`UPDATE mem_edges SET weight = 1.0, last_observed_at = %d
				WHERE (from_id, to_id) = (SELECT from_id, to_id FROM mem_edges WHERE relation_type = 'works_on' ORDER BY from_id, to_id LIMIT 1 OFFSET %d)`, wall, rng.Intn(10)))
		case 5:
			qs = append(qs, fmt.Sprintf(`INSERT OR IGNORE INTO mem_block_tags VALUES ('b%02d', '%s')`, rng.Intn(24), propTags[rng.Intn(len(propTags))]))
		case 6:
			qs = append(qs, fmt.Sprintf(`DELETE FROM mem_block_tags WHERE rowid = (SELECT rowid FROM mem_block_tags ORDER BY block_id, tag LIMIT 1 OFFSET %d)`, rng.Intn(8)))
		case 7:
			qs = append(qs, fmt.Sprintf(`UPDATE mem_blocks SET category = '%s', last_reinforced_hours = %v WHERE id = 'b%02d' AND status = 'active'`,
				propCategories[rng.Intn(len(propCategories))], clock-float64(rng.Intn(50)), rng.Intn(24)))
		case 8:
			qs = append(qs, fmt.Sprintf(`DELETE FROM mem_edges WHERE (from_id, to_id) = (SELECT from_id, to_id FROM mem_edges ORDER BY from_id, to_id LIMIT 1 OFFSET %d)`, rng.Intn(60)))
		case 9:
			qs = append(qs, fmt.Sprintf(`UPDATE mem_facts SET access_count = access_count + 1, last_accessed_at = %d WHERE id = 'f%02d' AND status = 'active'`,
				wall, rng.Intn(20)))
		}
	}
	return qs
}

// boolInt is SQLite's boolean.
func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// openPair creates two empty migrated memories, each in its own temp dir.
func openPair(t *testing.T) (*worker.DB, *worker.DB) {
	t.Helper()
	a, _ := newMemory(t, "")
	b, _ := newMemory(t, "")
	return a, b
}

// randomPair is two files holding one random memory (seed), and the
// generator it was drawn from, to draw more.
func randomPair(t *testing.T, seed int64) (a, b *worker.DB, rng *rand.Rand) {
	t.Helper()
	rng = rand.New(rand.NewSource(seed))
	a, b = openPair(t)
	for _, q := range randomMemory(rng) {
		mustExec(t, a, q)
		mustExec(t, b, q)
	}
	return a, b, rng
}

// twinHistory gives two copies of one random memory (seed) the same random
// app writes, steps times, moving the clocks now and then; after each
// step's writes it calls sweep with both copies, the step and the clocks.
func twinHistory(t *testing.T, seed int64, steps int, sweep func(a, b *worker.DB, step int, clock float64, wall time.Time)) {
	t.Helper()
	rng := rand.New(rand.NewSource(seed))
	a, b := openPair(t)
	both := func(query string) {
		t.Helper()
		for _, db := range []*worker.DB{a, b} {
			if _, err := db.SQL.Exec(query); err != nil {
				t.Fatalf("seed %d: %s: %v", seed, query, err)
			}
		}
	}
	for _, q := range randomMemory(rng) {
		both(q)
	}
	clock, wall := 100.0, time.Unix(1_800_000_000, 0)
	for step := 0; step < steps; step++ {
		for _, q := range randomWrites(rng, clock, wall.Unix()) {
			both(q)
		}
		if rng.Intn(4) > 0 {
			clock += float64(rng.Intn(120))
			wall = wall.Add(time.Duration(rng.Intn(40*24)) * time.Hour)
		}
		sweep(a, b, step, clock, wall)
	}
}

// incSweep sweeps at clock and wall, in full or incrementally, in chunks of 7.
func incSweep(t *testing.T, db *worker.DB, clock float64, wall time.Time, full bool) *worker.Report {
	t.Helper()
	r, err := worker.Sweep(context.Background(), db, worker.SweepOptions{Now: &clock, WallNow: &wall, Full: full, ChunkSize: 7})
	if err != nil {
		t.Fatalf("sweep (full %v): %v", full, err)
	}
	expectEdgesAfter(t, db, r)
	return r
}

// memoryState renders every row the sweeps may change, and the removals
// logged, in a stable order.
func memoryState(t *testing.T, db *worker.DB) string {
	t.Helper()
	state, err := readMemoryState(db)
	if err != nil {
		t.Fatal(err)
	}
	return state
}

// readMemoryState is memoryState's reading, for callers that wait for a
// copy to become readable (a node restarting).
func readMemoryState(db *worker.DB) (string, error) {
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
			return "", err
		}
		for rows.Next() {
			var c [6]any
			if err := rows.Scan(&c[0], &c[1], &c[2], &c[3], &c[4], &c[5]); err != nil {
				rows.Close()
				return "", err
			}
			fmt.Fprintf(&b, "%v\n", c)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return "", err
		}
	}
	return b.String(), nil
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

// checkRemovalsLogged checks, against the memory at origPath, that every
// edge, block and fact a sweep newer than base removed or archived has
// exactly one event, and no event names a row that is still there. Edges
// an app (re)inserted meanwhile ("from-to" in relinked) are left out: the
// app may link again what a sweep removed.
func checkRemovalsLogged(t *testing.T, db *sql.DB, origPath string, base int64, relinked ...[2]string) {
	t.Helper()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `ATTACH DATABASE ? AS orig`, origPath); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(ctx, `DETACH DATABASE orig`)
	if _, err := conn.ExecContext(ctx, `CREATE TEMP TABLE IF NOT EXISTS ops_relinked (subject TEXT PRIMARY KEY);
		DELETE FROM temp.ops_relinked`); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(ctx, `DROP TABLE temp.ops_relinked`)
	for _, p := range relinked {
		if _, err := conn.ExecContext(ctx, `INSERT OR IGNORE INTO temp.ops_relinked VALUES (?)`, edgeSubject(p[0], p[1])); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ what, query string }{
		{"removed edges without exactly one event", `SELECT json_array(o.from_id, o.to_id) FROM orig.mem_edges o
			WHERE NOT EXISTS (SELECT 1 FROM main.mem_edges e WHERE e.from_id = o.from_id AND e.to_id = o.to_id)
			  AND (SELECT count(*) FROM main.mem_events v WHERE v.sweep_id > ?1 AND v.subject_kind = 'edge'
			       AND v.subject_id = json_array(o.from_id, o.to_id) AND v.action IN ('prune', 'decay', 'delete')) != 1
			  AND json_array(o.from_id, o.to_id) NOT IN (SELECT subject FROM temp.ops_relinked)`},
		{"edges still there with a removal event", `SELECT v.subject_id FROM main.mem_events v
			WHERE v.sweep_id > ?1 AND v.subject_kind = 'edge' AND v.action IN ('prune', 'decay', 'delete')
			  AND EXISTS (SELECT 1 FROM main.mem_edges e WHERE e.from_id = v.subject_id ->> '$[0]' AND e.to_id = v.subject_id ->> '$[1]')
			  AND v.subject_id NOT IN (SELECT subject FROM temp.ops_relinked)`},
		{"archived blocks without exactly one event", `SELECT o.id FROM orig.mem_blocks o JOIN main.mem_blocks b ON b.id = o.id
			WHERE o.status = 'active' AND b.status = 'archived'
			  AND (SELECT count(*) FROM main.mem_events v WHERE v.sweep_id > ?1 AND v.subject_kind = 'block'
			       AND v.subject_id = o.id AND v.action = 'archive') != 1`},
		{"active blocks with an archive event", `SELECT v.subject_id FROM main.mem_events v JOIN main.mem_blocks b ON b.id = v.subject_id
			WHERE v.sweep_id > ?1 AND v.subject_kind = 'block' AND b.status = 'active'`},
		{"archived or pruned facts without exactly one event", `SELECT o.id FROM orig.mem_facts o
			WHERE o.status = 'active' AND coalesce((SELECT f.status FROM main.mem_facts f WHERE f.id = o.id), 'pruned') != 'active'
			  AND (SELECT count(*) FROM main.mem_events v WHERE v.sweep_id > ?1 AND v.subject_kind = 'fact'
			       AND v.subject_id = o.id) != 1`},
		{"active facts with an event", `SELECT v.subject_id FROM main.mem_events v JOIN main.mem_facts f ON f.id = v.subject_id
			WHERE v.sweep_id > ?1 AND v.subject_kind = 'fact' AND f.status = 'active'`},
	} {
		rows, err := conn.QueryContext(ctx, c.query, base)
		if err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		var bad []string
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			bad = append(bad, s)
		}
		rows.Close()
		if len(bad) > 0 {
			t.Errorf("%s: %d, e.g. %v", c.what, len(bad), bad[:min(5, len(bad))])
		}
	}
}
