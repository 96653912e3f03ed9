package worker_test

// Operations tests: the daemon (Run), sweeps racing each other, a worker
// killed with SIGKILL at random points, an app writing beside a long sweep,
// and interrupted sweeps in the incremental/full property. None of them
// waits with a sleep: the daemon runs on the test goroutine and is steered
// from its AfterRound hook and its log, sweeps from their Progress hook.

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/memdecay/memdecay/schema"
	"github.com/memdecay/memdecay/worker"
)

// --- a memory big enough for many chunks ---------------------------------

// opsClock and opsWall are when the generated memories were last active.
const opsClock = 1000.0

var opsWall = time.Unix(1_800_000_000, 0).UTC()

// bigMemory writes a migrated WAL memory of nBlocks blocks, nEdges edges
// (tiered, two relation policies, a few pinned, agent, unanchored and
// invalid ones) and 200 facts, closes it and returns its path. Blocks and
// edges were last active up to 700 hours before opsClock, so a sweep some
// hours later archives, prunes, decays and excludes plenty.
func bigMemory(t *testing.T, seed int64, nBlocks, nEdges int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "memory.db")
	db, err := worker.Open(path, worker.OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := schema.Up(db.SQL); err != nil {
		t.Fatal(err)
	}
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
			opsBlock(i), propCategories[rng.Intn(len(propCategories))], float64(rng.Intn(100))/100, rng.Intn(12),
			opsClock-float64(rng.Intn(700)))
		if rng.Intn(4) == 0 {
			exec(`INSERT OR IGNORE INTO mem_block_tags VALUES (?, ?)`, opsBlock(i), propTags[rng.Intn(len(propTags))])
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
		var anchor any = opsClock - float64(rng.Intn(500))
		if rng.Intn(20) == 0 {
			anchor = nil
		}
		count := 0
		if rng.Intn(5) > 1 {
			count = rng.Intn(14)
		}
		res, err := insertEdge.Exec(opsBlock(a), opsBlock(b), weight, count,
			[]string{"similar", "similar", "similar", "similar", "similar", "similar", "similar", "similar", "works_on", "chat"}[rng.Intn(10)],
			[]string{"similarity", "similarity", "outcome", "observed", "agent"}[rng.Intn(5)],
			anchor, opsWall.Unix()-int64(rng.Intn(90*86400)), boolInt(rng.Intn(100) == 0))
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
			opsWall.Unix()-int64(rng.Intn(60*86400)), []string{"active", "active", "active", "confirmed"}[rng.Intn(4)])
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return path
}

func opsBlock(i int) string { return fmt.Sprintf("b%04d", i) }

// opsWrites is a burst of app writes on a bigMemory: co-retrievals, new
// edges, deletions, recategorised blocks, retags and fact recalls.
func opsWrites(t *testing.T, db *sql.DB, rng *rand.Rand, nBlocks, n int, clock float64, wall int64) {
	t.Helper()
	for range n {
		var q string
		var args []any
		switch rng.Intn(8) {
		case 0, 1, 2:
			q = `UPDATE mem_edges SET reinforcement_count = reinforcement_count + 1, last_active_hours = ?
				WHERE rowid = (SELECT rowid FROM mem_edges ORDER BY from_id, to_id LIMIT 1 OFFSET ?)`
			args = []any{clock, rng.Intn(2000)}
		case 3, 4:
			a, b := rng.Intn(nBlocks), rng.Intn(nBlocks)
			if a == b {
				continue
			}
			q = `INSERT OR IGNORE INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours, last_observed_at)
				VALUES (?, ?, ?, 0, ?, ?)`
			args = []any{opsBlock(min(a, b)), opsBlock(max(a, b)), float64(rng.Intn(1000)) / 1000, clock, wall}
		case 5:
			q = `DELETE FROM mem_edges WHERE rowid = (SELECT rowid FROM mem_edges ORDER BY from_id, to_id LIMIT 1 OFFSET ?)`
			args = []any{rng.Intn(2000)}
		case 6:
			q = `UPDATE mem_blocks SET category = ?, last_reinforced_hours = ? WHERE id = ? AND status = 'active'`
			args = []any{propCategories[rng.Intn(len(propCategories))], clock - float64(rng.Intn(300)), opsBlock(rng.Intn(nBlocks))}
		case 7:
			q = `UPDATE mem_facts SET access_count = access_count + 1, last_accessed_at = ? WHERE id = ? AND status = 'active'`
			args = []any{wall, fmt.Sprintf("f%03d", rng.Intn(200))}
		}
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// copyMemory copies a closed memory file into a fresh temp dir.
func copyMemory(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "memory.db")
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(src + suffix)
		if errors.Is(err, os.ErrNotExist) && suffix != "" {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst+suffix, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// openOps opens a memory the way the worker does, closed at cleanup.
func openOps(t *testing.T, path string) *worker.DB {
	t.Helper()
	db, err := worker.OpenMemory(path, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// appConn opens a file the way an app does: plain database/sql, WAL, a
// busy timeout, one connection.
func appConn(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=5000&_journal_mode=WAL")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

func opsSweep(t *testing.T, db *worker.DB, clock float64, wall time.Time, opt worker.SweepOptions) *worker.Report {
	t.Helper()
	opt.Now, opt.WallNow = &clock, &wall
	opt.ChunkSize = cmp.Or(opt.ChunkSize, 20)
	r, err := worker.Sweep(context.Background(), db, opt)
	if err != nil {
		t.Fatalf("sweep at %v: %v", clock, err)
	}
	return r
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

func integrityOK(t *testing.T, db *sql.DB) {
	t.Helper()
	var res string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&res); err != nil || res != "ok" {
		t.Fatalf("integrity_check: %q, %v", res, err)
	}
}

// --- the daemon -------------------------------------------------------------

// memoryIn creates a migrated memory at path with the fixture loaded and
// closes it.
func memoryIn(t *testing.T, path, fixture string) {
	t.Helper()
	db, err := worker.Open(path, worker.OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := schema.Up(db.SQL); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SQL.Exec(fixture); err != nil {
		t.Fatal(err)
	}
}

// logRecords parses JSON log lines.
func logRecords(t *testing.T, b *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	dec := json.NewDecoder(bytes.NewReader(b.Bytes()))
	for {
		var m map[string]any
		if err := dec.Decode(&m); err == io.EOF {
			return out
		} else if err != nil {
			t.Fatalf("log is not JSON lines: %v\n%s", err, b)
		}
		out = append(out, m)
	}
}

func countMsg(records []map[string]any, msg string) int {
	n := 0
	for _, r := range records {
		if r["msg"] == msg {
			n++
		}
	}
	return n
}

// hookHandler calls hook with every record before logging it: the test's
// signal for what the daemon does between rounds.
type hookHandler struct {
	slog.Handler
	hook func(slog.Record)
}

func (h hookHandler) Handle(ctx context.Context, r slog.Record) error {
	h.hook(r)
	return h.Handler.Handle(ctx, r)
}

// TestRunEvery: the daemon sweeps at once and then every interval; rounds
// at an unchanged clock remove nothing; cancelling stops it with nil.
func TestRunEvery(t *testing.T) {
	db, path := newMemory(t, richFixture)
	setConfig(t, db, "active_hours", "500")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const want = 4
	var logs bytes.Buffer
	var reports []*worker.Report
	err := worker.Run(ctx, path, worker.RunOptions{
		Every:  2 * time.Millisecond,
		Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
		AfterRound: func(results []worker.FleetResult) {
			if len(results) != 1 || results[0].Report == nil {
				t.Errorf("round %d: %+v", len(reports)+1, results)
				cancel()
				return
			}
			reports = append(reports, results[0].Report)
			if len(reports) == want {
				cancel()
			}
		},
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(reports) != want {
		t.Fatalf("%d rounds, want %d", len(reports), want)
	}
	if r := reports[0]; r.ClockHours != 500 || r.EdgesDecayed != 2 || r.Archived != 2 {
		t.Errorf("first round: clock %v, decayed %d, archived %d; want 500, 2, 2", r.ClockHours, r.EdgesDecayed, r.Archived)
	}
	for i, r := range reports[1:] {
		if r.Archived+r.EdgesPruned+r.EdgesDecayed != 0 {
			t.Errorf("round %d at the same clock removed something: %s", i+2, r.Summary)
		}
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM mem_sweeps WHERE status = 'done'`); n != want {
		t.Errorf("%d sweeps done, want %d", n, want)
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM mem_sweeps WHERE status != 'done'`); n != 0 {
		t.Errorf("%d sweeps not done", n)
	}
	recs := logRecords(t, &logs)
	for msg, n := range map[string]int{"memworker running": 1, "swept": want, "memworker stopping": 1} {
		if got := countMsg(recs, msg); got != n {
			t.Errorf("%d %q log lines, want %d\n%s", got, msg, n, logs.String())
		}
	}
}

// TestRunWhenDue: with --when-due the daemon sweeps a file only once
// active_hours − last_curate_at reaches curate_interval_hours (a file never
// swept is due at once), polling in between.
func TestRunWhenDue(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	memoryIn(t, a, richFixture)
	memoryIn(t, b, richFixture)
	dbA := openOps(t, a)
	setConfig(t, dbA, "active_hours", "500")
	sweepWith(t, dbA, worker.SweepOptions{}) // last_curate_at = 500
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type step struct {
		advance float64  // active hours added to a.db after the round
		swept   []string // files swept in the round
	}
	script := []step{
		{swept: []string{b}, advance: 39.5}, // b was never swept; a is 0 h past its sweep
		{advance: 0.25},                     // a at 39.5 h
		{advance: 0.25},                     // a at 39.75 h
		{swept: []string{a}},                // a at 40 h: due
		{},                                  // nothing due
	}
	round := 0
	err := worker.Run(ctx, filepath.Join(dir, "*.db"), worker.RunOptions{
		WhenDue: true,
		Poll:    time.Millisecond,
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
		AfterRound: func(results []worker.FleetResult) {
			s := script[round]
			var swept []string
			for _, r := range results {
				if r.Report == nil {
					t.Errorf("round %d: %s failed: %s", round+1, r.Path, r.Error)
				}
				swept = append(swept, r.Path)
			}
			if !slices.Equal(swept, s.swept) {
				t.Errorf("round %d swept %v, want %v", round+1, swept, s.swept)
			}
			if s.advance > 0 {
				if _, err := worker.AdvanceClock(ctx, dbA, s.advance); err != nil {
					t.Error(err)
				}
			}
			if round++; round == len(script) || t.Failed() {
				cancel()
			}
		},
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if round != len(script) {
		t.Fatalf("%d rounds, want %d", round, len(script))
	}
	if got := scalar[string](t, dbA, `SELECT group_concat(clock_hours, ',') FROM (SELECT clock_hours FROM mem_sweeps ORDER BY id)`); got != "500.0,540.0" {
		t.Errorf("a.db swept at %s, want 500 then 540", got)
	}
	if got := loadConfig(t, dbA).LastCurateAt; got == nil || *got != 540 {
		t.Errorf("a.db last_curate_at %v, want 540", fmtPtr(got))
	}
}

// TestRunFailingRound: a file that is not SQLite among good ones fails its
// round; the daemon logs it, still sweeps the others, backs off (doubling
// from BackoffMin to BackoffMax) and goes on until the file is fixed.
func TestRunFailingRound(t *testing.T) {
	dir := t.TempDir()
	good1, bad, good2 := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db"), filepath.Join(dir, "c.db")
	memoryIn(t, good1, richFixture)
	memoryIn(t, good2, richFixture)
	if err := os.WriteFile(bad, []byte("not a database\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a guard, not a wait
	defer cancel()
	var logs bytes.Buffer
	rounds := 0
	err := worker.Run(ctx, filepath.Join(dir, "*.db"), worker.RunOptions{
		Every:      time.Hour, // only the backoff brings the next round soon
		BackoffMin: time.Millisecond,
		BackoffMax: 4 * time.Millisecond,
		Logger:     slog.New(slog.NewJSONHandler(&logs, nil)),
		AfterRound: func(results []worker.FleetResult) {
			rounds++
			if len(results) != 3 {
				t.Errorf("round %d: %d results, want 3", rounds, len(results))
				cancel()
				return
			}
			for _, r := range results {
				failed := r.Report == nil
				if wantFail := r.Path == bad && rounds < 5; failed != wantFail {
					t.Errorf("round %d: %s failed %v (%s), want %v", rounds, r.Path, failed, r.Error, wantFail)
				}
				if failed && !strings.Contains(r.Error, "not a SQLite database") {
					t.Errorf("round %d: error %q", rounds, r.Error)
				}
			}
			switch rounds {
			case 4: // the operator replaces the stray file with a memory
				os.Remove(bad)
				memoryIn(t, bad, richFixture)
			case 5:
				cancel()
			}
		},
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if rounds != 5 {
		t.Fatalf("%d rounds, want 5 (the daemon did not retry after a failed round)", rounds)
	}
	recs := logRecords(t, &logs)
	var retries []string
	for _, r := range recs {
		switch r["msg"] {
		case "round failed; backing off":
			retries = append(retries, fmt.Sprint(r["retry_in"]))
		case "sweep failed":
			if r["db"] != bad || r["level"] != "ERROR" {
				t.Errorf("sweep failed line %v", r)
			}
		}
	}
	if want := []string{"1ms", "2ms", "4ms", "4ms"}; !slices.Equal(retries, want) {
		t.Errorf("backoffs %v, want %v", retries, want)
	}
	if n := countMsg(recs, "sweep failed"); n != 4 {
		t.Errorf("%d sweep failed lines, want 4", n)
	}
	if n := countMsg(recs, "round done"); n != 5 {
		t.Errorf("%d round done lines, want 5", n)
	}
	for _, p := range []string{good1, good2} {
		db := openOps(t, p)
		if n := scalar[int](t, db, `SELECT count(*) FROM mem_sweeps WHERE status = 'done'`); n != 5 {
			t.Errorf("%s: %d sweeps, want 5 (one per round)", p, n)
		}
	}
}

// TestRunPatternMatchesNothing: a glob with no match fails the round, is
// logged and backed off; once a file appears the daemon sweeps it. The test
// steps by the daemon's own log lines (AfterRound does not see a round whose
// pattern matched nothing).
func TestRunPatternMatchesNothing(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a guard, not a wait
	defer cancel()
	var logs bytes.Buffer
	failures, rounds := 0, 0
	var errs []string
	log := slog.New(hookHandler{slog.NewJSONHandler(&logs, nil), func(r slog.Record) {
		switch r.Message {
		case "round":
			r.Attrs(func(a slog.Attr) bool {
				if a.Key == "err" {
					errs = append(errs, a.Value.String())
				}
				return true
			})
		case "round failed; backing off":
			if failures++; failures == 3 {
				memoryIn(t, filepath.Join(dir, "late.db"), richFixture)
			}
		}
	}})
	err := worker.Run(ctx, filepath.Join(dir, "*.db"), worker.RunOptions{
		Every: time.Hour, BackoffMin: time.Millisecond, BackoffMax: time.Millisecond, Logger: log,
		AfterRound: func(results []worker.FleetResult) {
			if len(results) == 0 {
				return // a round that found no file, should the daemon report those
			}
			rounds++
			if len(results) != 1 || results[0].Report == nil {
				t.Errorf("round after the file appeared: %+v", results)
			}
			cancel()
		},
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if failures != 3 || rounds != 1 {
		t.Fatalf("%d failed rounds and %d swept, want 3 and 1\n%s", failures, rounds, logs.String())
	}
	for _, e := range errs {
		if !strings.Contains(e, "matches no file") {
			t.Errorf("round error %q", e)
		}
	}
}

// TestRunStopsMidSweep: cancelling while a sweep is in flight stops it
// after its current chunk, records it as interrupted and returns nil.
func TestRunStopsMidSweep(t *testing.T) {
	orig := bigMemory(t, 3, 60, 400)
	path := copyMemory(t, orig)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var calls atomic.Int32
	var logs bytes.Buffer
	rounds := 0
	err := worker.Run(ctx, path, worker.RunOptions{
		Every:  time.Hour,
		Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
		Sweep: worker.SweepOptions{ChunkSize: 5, Progress: func(string, int64, int64) {
			if calls.Add(1) == 10 {
				cancel()
			}
		}},
		AfterRound: func([]worker.FleetResult) { rounds++ },
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if rounds != 1 {
		t.Errorf("%d rounds, want 1", rounds)
	}
	db := openOps(t, path)
	if got := scalar[string](t, db, `SELECT group_concat(status) FROM mem_sweeps`); got != "interrupted" {
		t.Errorf("sweeps %q, want one interrupted", got)
	}
	recs := logRecords(t, &logs)
	if countMsg(recs, "sweep interrupted") != 1 || countMsg(recs, "memworker stopping") != 1 || countMsg(recs, "sweep failed") != 0 {
		t.Errorf("log:\n%s", logs.String())
	}
	integrityOK(t, db.SQL)
	checkRemovalsLogged(t, db.SQL, orig, 0)
}

// TestRunValidate: exactly one trigger, and the cron expression parses;
// Run refuses a bad configuration before touching any file.
func TestRunValidate(t *testing.T) {
	for _, c := range []struct {
		name string
		opt  worker.RunOptions
		ok   bool
		want string
	}{
		{"no trigger", worker.RunOptions{}, false, "exactly one of"},
		{"every and when-due", worker.RunOptions{Every: time.Hour, WhenDue: true}, false, "exactly one of"},
		{"schedule and every", worker.RunOptions{Schedule: "30 4 * * 0", Every: time.Hour}, false, "exactly one of"},
		{"all three", worker.RunOptions{Schedule: "30 4 * * 0", Every: time.Hour, WhenDue: true}, false, "exactly one of"},
		{"negative every", worker.RunOptions{Every: -time.Second}, false, "exactly one of"},
		{"bad cron field", worker.RunOptions{Schedule: "61 * * * *"}, false, `"61 * * * *"`},
		{"not cron", worker.RunOptions{Schedule: "every sunday"}, false, "every sunday"},
		{"six fields", worker.RunOptions{Schedule: "0 30 4 * * 0"}, false, "--schedule"},
		{"every", worker.RunOptions{Every: time.Hour}, true, ""},
		{"when-due", worker.RunOptions{WhenDue: true}, true, ""},
		{"schedule", worker.RunOptions{Schedule: "30 4 * * 0"}, true, ""},
		{"descriptor", worker.RunOptions{Schedule: "@daily"}, true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.opt.Validate()
			if c.ok {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Validate = %v, want an error containing %q", err, c.want)
			}
			missing := filepath.Join(t.TempDir(), "missing.db")
			if runErr := worker.Run(context.Background(), missing, c.opt); runErr == nil || runErr.Error() != err.Error() {
				t.Errorf("Run = %v, want %v", runErr, err)
			}
			if _, statErr := os.Stat(missing); !errors.Is(statErr, os.ErrNotExist) {
				t.Errorf("Run created %s", missing)
			}
		})
	}
}

// TestRunScheduleStops: a cron schedule whose next time is far off still
// stops at once when the context ends.
func TestRunScheduleStops(t *testing.T) {
	_, path := newMemory(t, richFixture)
	ctx, cancel := context.WithCancel(context.Background())
	var logs bytes.Buffer
	log := slog.New(hookHandler{slog.NewJSONHandler(&logs, nil), func(r slog.Record) {
		if r.Message == "memworker running" {
			cancel()
		}
	}})
	if err := worker.Run(ctx, path, worker.RunOptions{Schedule: "0 0 1 1 *", Logger: log,
		AfterRound: func([]worker.FleetResult) { t.Error("a round ran") }}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if n := countMsg(logRecords(t, &logs), "memworker stopping"); n != 1 {
		t.Errorf("log:\n%s", logs.String())
	}
}

// --- sweeps racing sweeps ---------------------------------------------------

// TestConcurrentSweepsEndLikeOne: two workers sweep the same file at the
// same clock at once, each with its own handle. Either one is refused
// (ErrSweepRunning) and the file ends as after one sweep, or they run one
// after the other and it ends as after two sweeps at one clock, which
// remove exactly what one does (only reinforcement runs twice, SPEC §4.4).
// Every removal has exactly one event either way.
func TestConcurrentSweepsEndLikeOne(t *testing.T) {
	orig := bigMemory(t, 11, 150, 1500)
	clock, wall := opsClock+120, opsWall.Add(20*24*time.Hour)
	refDB := openOps(t, copyMemory(t, orig))
	opsSweep(t, refDB, clock, wall, worker.SweepOptions{})
	once := memoryState(t, refDB)
	opsSweep(t, refDB, clock, wall, worker.SweepOptions{})
	twice := memoryState(t, refDB)
	removals := func(state string) string { // the rows and events, without reinforcement
		var keep []string
		for _, l := range strings.Split(state, "\n") {
			if !strings.HasPrefix(l, "[block ") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	if removals(once) != removals(twice) {
		t.Fatalf("a second sweep at the same clock changed rows or events:\n%s", diffLines(twice, once))
	}
	outcomes := map[string]int{}
	for i := range 6 {
		path := copyMemory(t, orig)
		dbs := [2]*worker.DB{openOps(t, path), openOps(t, path)}
		var errs [2]error
		start := make(chan struct{})
		var wg sync.WaitGroup
		for k := range dbs {
			wg.Go(func() {
				<-start
				now, w := clock, wall
				_, errs[k] = worker.Sweep(context.Background(), dbs[k], worker.SweepOptions{Now: &now, WallNow: &w, ChunkSize: 20,
					Owner: fmt.Sprintf("worker %d", k)})
			})
		}
		close(start)
		wg.Wait()
		busy := 0
		for k, err := range errs {
			switch {
			case errors.Is(err, worker.ErrSweepRunning):
				busy++
				if !strings.Contains(err.Error(), fmt.Sprintf("worker %d", 1-k)) {
					t.Errorf("iteration %d: refusal %q does not name the other worker", i, err)
				}
			case err != nil:
				t.Fatalf("iteration %d: worker %d: %v", i, k, err)
			}
		}
		got := memoryState(t, dbs[0])
		var want string
		switch busy {
		case 1:
			outcomes["one refused"]++
			want = once
		case 0:
			outcomes["one after the other"]++
			want = twice
		default:
			t.Fatalf("iteration %d: both refused: %v", i, errs)
		}
		if got != want {
			t.Fatalf("iteration %d (%d refused): state differs from the reference\nhere, not there:\n%s\nthere, not here:\n%s",
				i, busy, diffLines(got, want), diffLines(want, got))
		}
		if n := scalar[int](t, dbs[0], `SELECT count(*) FROM mem_sweeps WHERE status = 'running'`); n != 0 {
			t.Errorf("iteration %d: %d sweeps left running", i, n)
		}
		checkRemovalsLogged(t, dbs[0].SQL, orig, 0)
	}
	t.Logf("outcomes: %v", outcomes)
}

// --- kill -9 ------------------------------------------------------------------

// buildMemworker builds cmd/memworker (with this test binary's build tags)
// into the test's temp dir.
func buildMemworker(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = "/usr/local/go/bin/go"
	}
	out := filepath.Join(t.TempDir(), "memworker")
	args := []string{"build", "-o", out}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "-tags" && s.Value != "" {
				args = append(args, "-tags", s.Value)
			}
		}
	}
	cmd := exec.Command(goTool, append(args, "github.com/memdecay/memdecay/cmd/memworker")...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	return out
}

// TestKillNineConverges kills `memworker sweep` with SIGKILL at random
// moments (before it starts, while it refreshes, plans or applies, after it
// finished) and checks that the file is intact, every removal so far has
// exactly one event, and one more sweep at the same clock finishes the job
// as an uninterrupted sweep does. Half the iterations run with block
// archival off, half with it on (where bridge protection, decided on the
// graph before the sweep, must not be decided again on a graph a killed
// sweep already thinned).
func TestKillNineConverges(t *testing.T) {
	iterations := 15
	if testing.Short() {
		iterations = 4
	}
	bin := buildMemworker(t)
	const nBlocks = 250
	clock, wall := opsClock+400, opsWall.Add(30*24*time.Hour)
	args := func(path string) []string {
		return []string{"sweep", "--db", path, "--now", fmt.Sprint(clock), "--wall-now", fmt.Sprint(wall.Unix()), "--chunk", "20", "--pause", "0"}
	}
	type variant struct {
		archival    string
		orig        string
		base        int64  // the sweep before the killed ones
		once, twice string // states after one and two uninterrupted sweeps at clock
	}
	var variants []*variant
	for _, archival := range []string{"off", "auto"} {
		v := &variant{archival: archival, orig: bigMemory(t, 9, nBlocks, 3000)}
		// A first sweep leaves derived state behind, then the app writes:
		// the killed sweeps are incremental, as in production.
		db := openOps(t, v.orig)
		setConfig(t, db, "block_archival", archival)
		v.base = opsSweep(t, db, opsClock, opsWall, worker.SweepOptions{ChunkSize: 500}).SweepID
		opsWrites(t, db.SQL, rand.New(rand.NewSource(9)), nBlocks, 300, opsClock+40, opsWall.Add(48*time.Hour).Unix())
		db.Close()

		// The references sweep in big chunks, the binary in chunks of 20:
		// chunking must not change the result.
		ref := openOps(t, copyMemory(t, v.orig))
		big := worker.SweepOptions{ChunkSize: worker.DefaultChunkSize}
		r := opsSweep(t, ref, clock, wall, big)
		if r.EdgesBefore-r.TotalEdgesAfter < 200 || (archival == "auto") != (r.Archived > 0) || r.Full {
			t.Fatalf("archival %s: the reference sweep does not have the work the test needs: %s (full %v)", archival, r.Summary, r.Full)
		}
		v.once = memoryState(t, ref)
		opsSweep(t, ref, clock, wall, big)
		v.twice = memoryState(t, ref) // for kills that land after the sweep finished
		ref.Close()
		variants = append(variants, v)
	}

	// The binary's own sweep: the same result, and how long one takes here,
	// to spread the kills over.
	whole := copyMemory(t, variants[0].orig)
	start := time.Now()
	if out, err := exec.Command(bin, args(whole)...).CombinedOutput(); err != nil {
		t.Fatalf("memworker sweep: %v\n%s", err, out)
	}
	span := time.Since(start)
	if got := memoryState(t, openOps(t, whole)); got != variants[0].once {
		t.Fatalf("the binary's sweep differs from the in-process one:\n%s", diffLines(got, variants[0].once))
	}

	rng := rand.New(rand.NewSource(15))
	landed := map[string]int{}
	leaseBlocked := 0
	for i := range iterations {
		v := variants[i%2]
		path := copyMemory(t, v.orig)
		var delay time.Duration
		switch i % 3 {
		case 0: // microseconds: mostly before the sweep starts
			delay = time.Duration(rng.Intn(2000)) * time.Microsecond
		case 1: // anywhere in a sweep's time, process start included
			delay = time.Duration(rng.Int63n(int64(span)))
		case 2: // late: mostly while it applies its plan, sometimes after
			delay = span/2 + time.Duration(rng.Int63n(int64(span/2+span/10)))
		}
		cmd := exec.Command(bin, args(path)...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		<-time.After(delay) // the random moment of the kill, not a wait for anything
		cmd.Process.Signal(syscall.SIGKILL)
		err := cmd.Wait()
		killed := false
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			ws, _ := ee.Sys().(syscall.WaitStatus)
			killed = ws.Signaled() && ws.Signal() == syscall.SIGKILL
			if !killed {
				t.Fatalf("iteration %d: memworker failed on its own: %v", i, err)
			}
		} else if err != nil {
			t.Fatal(err)
		}

		db := openOps(t, path)
		integrityOK(t, db.SQL)
		checkRemovalsLogged(t, db.SQL, v.orig, v.base)
		status := scalar[string](t, db, `SELECT coalesce((SELECT status FROM mem_sweeps WHERE id > ? ORDER BY id DESC LIMIT 1), 'none')`, v.base)
		if !killed {
			status = "exited"
		}
		applied := scalar[int](t, db, `SELECT count(*) FROM mem_events WHERE sweep_id > ?`, v.base)
		switch {
		case status == "running" && applied > 0:
			landed[v.archival+" applying"]++
		case status == "running":
			landed[v.archival+" refreshing or planning"]++
		default:
			landed[v.archival+" "+status]++
		}
		want := v.once
		if status == "done" || status == "exited" {
			want = v.twice
		}
		// A SIGKILLed worker cannot release its lease. The next sweep takes
		// over when the owner is a dead process on this host; were it
		// refused, expire the lease by hand (LeaseDuration is a minute).
		now, w := clock, wall
		_, err = worker.Sweep(context.Background(), db, worker.SweepOptions{Now: &now, WallNow: &w})
		if errors.Is(err, worker.ErrSweepRunning) {
			leaseBlocked++
			mustExec(t, db, `UPDATE mem_sweeps SET lease_until = 0 WHERE status = 'running'`)
			_, err = worker.Sweep(context.Background(), db, worker.SweepOptions{Now: &now, WallNow: &w})
		}
		if err != nil {
			t.Fatalf("iteration %d: the sweep after the kill: %v", i, err)
		}
		if n := scalar[int](t, db, `SELECT count(*) FROM mem_sweeps WHERE status = 'running'`); n != 0 {
			t.Errorf("iteration %d: %d sweeps still marked running", i, n)
		}
		checkRemovalsLogged(t, db.SQL, v.orig, v.base)
		if got := memoryState(t, db); got != want {
			t.Fatalf("iteration %d (archival %s, killed after %v, sweep %s, %d events): the finishing sweep did not converge\n"+
				"here, not in the reference:\n%s\nin the reference, not here:\n%s",
				i, v.archival, delay, status, applied, diffLines(got, want), diffLines(want, got))
		}
		// Finished means finished: nothing is left to remove at this clock.
		r := opsSweep(t, db, clock, wall, worker.SweepOptions{ChunkSize: worker.DefaultChunkSize})
		if n := r.Archived + r.EdgesPruned + r.EdgesDecayed + r.Facts.Archived + r.Facts.Pruned; n != 0 {
			t.Errorf("iteration %d: another sweep at the same clock still removed %d rows: %s", i, n, r.Summary)
		}
		db.Close()
	}
	t.Logf("a sweep takes %v here; kills landed (archival, where): %v; leases that refused the next sweep: %d",
		span, landed, leaseBlocked)
}

// TestCutSweepKeepsBridgeDecision: a faded hub is a bridge on the graph
// before the sweep (degree 3.6 ≥ d[4] = 3.0), so the sweep keeps it while
// decaying its four edges. Cut after two of them, the sweep is finished by
// the next one at the same clock, which must keep the hub too, although on
// the thinned graph (degree 1.8 < 1.9) it would no longer be a bridge.
func TestCutSweepKeepsBridgeDecision(t *testing.T) {
	const fixture = `
		INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES
			('hub','observation',0), ('a','knowledge',495), ('b','knowledge',495), ('c','knowledge',495),
			('d','knowledge',495), ('e','knowledge',495);
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES
			('a','hub',0.9,0,0), ('b','hub',0.9,0,0), ('c','hub',0.9,0,0), ('d','hub',0.9,0,0),
			('a','e',1.0,0,495), ('b','e',1.0,0,495), ('c','e',1.0,0,495);`
	now := 500.0
	ref, _ := newMemory(t, fixture)
	if r := sweepWith(t, ref, worker.SweepOptions{Now: &now, ChunkSize: 1}); r.Archived != 0 || r.EdgesDecayed != 4 {
		t.Fatalf("uninterrupted sweep: %s", r.Summary)
	}
	db, _ := newMemory(t, fixture)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := worker.Sweep(ctx, db, worker.SweepOptions{Now: &now, ChunkSize: 1, Progress: func(step string, done, _ int64) {
		if step == "plan_edges" && done == 2 {
			cancel()
		}
	}})
	if err == nil {
		t.Fatal("the sweep was not cut")
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM mem_events`); n == 0 || n == 4 {
		t.Fatalf("%d edges decayed before the cut, want some but not all", n)
	}
	sweepWith(t, db, worker.SweepOptions{Now: &now, ChunkSize: 1})
	if got, want := memoryState(t, db), memoryState(t, ref); got != want {
		t.Errorf("the finished sweep differs from an uninterrupted one\nhere, not there:\n%s\nthere, not here:\n%s",
			diffLines(got, want), diffLines(want, got))
	}
}

// --- an app writing beside a sweep -------------------------------------------------

// TestWriterBesideSweep: while a sweep of a few thousand edges applies in
// chunks of 20, an app with its own connection (WAL, busy_timeout 5000)
// inserts and co-retrieves edges every ~2 ms. No write may fail, no
// refreshed or new edge may be removed (unless its block was archived with
// everything touching it), and every removal has exactly one event.
func TestWriterBesideSweep(t *testing.T) {
	const nBlocks = 250
	orig := bigMemory(t, 21, nBlocks, 3000)
	path := copyMemory(t, orig)
	db := openOps(t, path)
	app := appConn(t, path)
	clock, wall := opsClock+150, opsWall.Add(30*24*time.Hour)
	// Co-retrieval targets: heavy enough that a refreshed edge never decays.
	var targets [][2]string
	rows, err := db.SQL.Query(`SELECT from_id, to_id FROM mem_edges WHERE relation_type = 'similar' AND typeof(weight) = 'real'
		AND weight >= 0.5 ORDER BY from_id, to_id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var p [2]string
		if err := rows.Scan(&p[0], &p[1]); err != nil {
			t.Fatal(err)
		}
		targets = append(targets, p)
	}
	rows.Close()

	stop := make(chan struct{})
	var touched, inserted [][2]string
	var writes, failed int
	var worst time.Duration
	var firstErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		rng := rand.New(rand.NewSource(21))
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			var res sql.Result
			var err error
			var pair [2]string
			began := time.Now()
			insert := rng.Intn(3) == 0
			if insert {
				a, b := rng.Intn(nBlocks), rng.Intn(nBlocks)
				if a == b {
					continue
				}
				pair = [2]string{opsBlock(min(a, b)), opsBlock(max(a, b))}
				res, err = app.Exec(`INSERT OR IGNORE INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours,
					last_observed_at) VALUES (?, ?, ?, 0, ?, ?)`, pair[0], pair[1], 0.5+rng.Float64()/2, clock, wall.Unix())
			} else {
				pair = targets[rng.Intn(len(targets))]
				res, err = app.Exec(`UPDATE mem_edges SET reinforcement_count = reinforcement_count + 1, last_active_hours = ?
					WHERE from_id = ? AND to_id = ?`, clock, pair[0], pair[1])
			}
			worst = max(worst, time.Since(began))
			writes++
			if err != nil {
				failed++
				firstErr = cmp.Or(firstErr, err)
				continue
			}
			if n, _ := res.RowsAffected(); n == 1 {
				touched = append(touched, pair)
				if insert {
					inserted = append(inserted, pair)
				}
			}
		}
	})
	r, err := worker.Sweep(context.Background(), db, worker.SweepOptions{Now: &clock, WallNow: &wall, ChunkSize: 20,
		Pause: worker.DefaultPause})
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("sweep: %v", err)
	}
	t.Logf("app writes during the sweep: %d (%d failed), worst latency %v; sweep: %s, %d planned rows skipped",
		writes, failed, worst, r.Summary, r.Skipped)
	if failed > 0 {
		t.Errorf("%d of %d app writes failed, first: %v", failed, writes, firstErr)
	}
	if r.Skipped < 0 || r.Skipped > int64(len(touched)) {
		t.Errorf("report skipped %d planned rows; the app wrote %d rows", r.Skipped, len(touched))
	}
	if writes < 5 {
		t.Logf("the sweep was over before the app wrote much (%d writes)", writes)
	}
	for _, p := range touched {
		present := scalar[int](t, db, `SELECT count(*) FROM mem_edges WHERE from_id = ? AND to_id = ?`, p[0], p[1])
		if present == 1 {
			continue
		}
		ev := eventsFor(t, db, "edge", edgeSubject(p[0], p[1]))
		if len(ev) == 0 || ev[len(ev)-1].Reason != "block_archived" {
			t.Errorf("edge %s-%s, written by the app during the sweep, was removed: %+v", p[0], p[1], ev)
		}
	}
	relinked := 0
	for _, p := range inserted {
		if len(eventsFor(t, db, "edge", edgeSubject(p[0], p[1]))) > 0 {
			relinked++
		}
	}
	t.Logf("the app linked %d new edges, %d of them pairs the sweep removed or then removed with their block", len(inserted), relinked)
	integrityOK(t, db.SQL)
	checkRemovalsLogged(t, db.SQL, orig, 0, inserted...)
}

// TestRefreshDuringSweepWins: an app refreshes edges the sweep planned to
// decay, between its chunks (from the Progress hook, on a connection of its
// own): those edges stay, with no event, and the sweep counts them as
// skipped; everything else ends exactly as without the app.
func TestRefreshDuringSweepWins(t *testing.T) {
	orig := bigMemory(t, 31, 200, 2500)
	clock, wall := opsClock+150, opsWall.Add(30*24*time.Hour)
	ref := openOps(t, copyMemory(t, orig))
	opsSweep(t, ref, clock, wall, worker.SweepOptions{})
	var decayed [][2]string
	rows, err := ref.SQL.Query(`SELECT json_extract(subject_id, '$[0]'), json_extract(subject_id, '$[1]') FROM mem_events
		WHERE subject_kind = 'edge' AND action = 'decay' AND reason = 'temporal' ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var p [2]string
		if err := rows.Scan(&p[0], &p[1]); err != nil {
			t.Fatal(err)
		}
		decayed = append(decayed, p)
	}
	rows.Close()
	if len(decayed) < 100 {
		t.Fatalf("only %d temporal decays in the reference", len(decayed))
	}
	rng := rand.New(rand.NewSource(31))
	rng.Shuffle(len(decayed), func(i, j int) { decayed[i], decayed[j] = decayed[j], decayed[i] })
	early, late := decayed[:20], decayed[20:60]
	// A link the app makes onto a block the sweep is about to archive goes
	// with the block (recorded), and is no planned decision overtaken.
	fading := scalar[string](t, ref, `SELECT subject_id FROM mem_events WHERE subject_kind = 'block' AND action = 'archive' ORDER BY id DESC LIMIT 1`)
	partner := scalar[string](t, ref, `SELECT id FROM mem_blocks b WHERE id != ?1
		AND NOT EXISTS (SELECT 1 FROM mem_edges e WHERE e.from_id = min(b.id, ?1) AND e.to_id = max(b.id, ?1))
		AND NOT EXISTS (SELECT 1 FROM mem_events v WHERE v.subject_kind = 'edge' AND v.subject_id = json_array(min(b.id, ?1), max(b.id, ?1)))
		ORDER BY id LIMIT 1`, fading)
	link := [2]string{min(partner, fading), max(partner, fading)}

	path := copyMemory(t, orig)
	db := openOps(t, path)
	app := appConn(t, path)
	refreshed := map[[2]string]bool{}
	refresh := func(pairs [][2]string) {
		for _, p := range pairs {
			res, err := app.Exec(`UPDATE mem_edges SET reinforcement_count = reinforcement_count + 1, last_active_hours = ?
				WHERE from_id = ? AND to_id = ?`, clock, p[0], p[1])
			if err != nil {
				t.Errorf("app write between chunks: %v", err)
				continue
			}
			if n, _ := res.RowsAffected(); n == 1 {
				refreshed[p] = true
			}
		}
	}
	r := opsSweep(t, db, clock, wall, worker.SweepOptions{Progress: func(step string, done, total int64) {
		if step == "plan_blocks" && done == 0 {
			if _, err := app.Exec(`INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours)
				VALUES (?, ?, 0.9, 0, ?)`, link[0], link[1], clock); err != nil {
				t.Errorf("app link between chunks: %v", err)
			}
		}
		if step != "plan_edges" {
			return
		}
		switch {
		case done == 0: // planned, nothing applied yet
			refresh(early)
		case done >= total/2 && late != nil: // half applied
			refresh(late)
			late = nil
		}
	}})
	if late != nil {
		t.Fatal("the edge step never reached its middle")
	}
	if len(refreshed) < 30 {
		t.Fatalf("only %d planned edges were still there to refresh", len(refreshed))
	}
	if r.Skipped != int64(len(refreshed)) {
		t.Errorf("report skipped %d, want %d (the refreshed edges)", r.Skipped, len(refreshed))
	}
	for p := range refreshed {
		if n := scalar[int](t, db, `SELECT count(*) FROM mem_edges WHERE from_id = ? AND to_id = ? AND last_active_hours = ?`,
			p[0], p[1], clock); n != 1 {
			t.Errorf("refreshed edge %s-%s was removed", p[0], p[1])
		}
		if ev := eventsFor(t, db, "edge", edgeSubject(p[0], p[1])); len(ev) != 0 {
			t.Errorf("refreshed edge %s-%s has events %+v", p[0], p[1], ev)
		}
		// The plan gave it no due time (it was to go); the app's write
		// queued it, so the sweep's settling stored one.
		if n := scalar[int](t, db, `SELECT count(*) FROM mem_edge_due WHERE from_id = ? AND to_id = ?`, p[0], p[1]); n != 1 {
			t.Errorf("refreshed edge %s-%s has %d due rows, want 1", p[0], p[1], n)
		}
	}
	if ev := eventsFor(t, db, "edge", edgeSubject(link[0], link[1])); len(ev) != 1 || ev[0].Reason != "block_archived" {
		t.Errorf("the app's link %s-%s onto archived block %s: events %+v, want one block_archived", link[0], link[1], fading, ev)
	}
	// Apart from the refreshed edges and the link, the rows and events are
	// the reference's.
	needles := []string{" " + edgeSubject(link[0], link[1]) + " "} // how memoryState names an edge: its row, its events
	for p := range refreshed {
		needles = append(needles, "[edge "+p[0]+" "+p[1]+" ", " "+edgeSubject(p[0], p[1])+" ")
	}
	without := func(state string) string {
		var keep []string
		for _, l := range strings.Split(state, "\n") {
			if !slices.ContainsFunc(needles, func(n string) bool { return strings.Contains(l, n) }) {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	if got, want := without(memoryState(t, db)), without(memoryState(t, ref)); got != want {
		t.Errorf("beyond the refreshed edges, the sweep differs from the reference\nhere, not there:\n%s\nthere, not here:\n%s",
			diffLines(got, want), diffLines(want, got))
	}
	checkRemovalsLogged(t, db.SQL, orig, 0)
}

// TestSweepCheckpointsForAWritingApp: SQLite checkpoints inside the commit
// of whichever connection finds the WAL long, so a sweep that left its
// pages in the WAL would make an app's next write copy them. While an app
// commits between its chunks, the sweep copies its own pages into the file
// after each commit: before each chunk, nothing of the chunk before is
// left in the WAL.
func TestSweepCheckpointsForAWritingApp(t *testing.T) {
	orig := bigMemory(t, 41, 200, 2500)
	clock, wall := opsClock+150, opsWall.Add(30*24*time.Hour)
	path := copyMemory(t, orig)
	db := openOps(t, path)
	app := appConn(t, path)
	if _, err := app.Exec(`CREATE TABLE app_log (n INTEGER)`); err != nil {
		t.Fatal(err)
	}
	checked, wrote := 0, 0
	opsSweep(t, db, clock, wall, worker.SweepOptions{Progress: func(step string, done, total int64) {
		if step != "plan_edges" {
			return
		}
		if wrote > 0 {
			if frames, copied := walProgress(t, path); copied != frames {
				t.Errorf("before the chunk at %d of %d: %d of %d WAL frames not copied into the file",
					done, total, frames-copied, frames)
			}
			checked++
		}
		if _, err := app.Exec(`INSERT INTO app_log (n) VALUES (?)`, wrote); err != nil {
			t.Fatalf("app write between chunks: %v", err)
		}
		wrote++
	}})
	if checked < 10 {
		t.Fatalf("only %d chunks checked", checked)
	}
	integrityOK(t, db.SQL)
}

// TestSoloChunks: alone on the file, a sweep applies SoloChunkSize rows per
// transaction (and syncs its derived state four times that); once an app
// has committed between its chunks, every step takes ChunkSize.
func TestSoloChunks(t *testing.T) {
	orig := bigMemory(t, 43, 200, 2500)
	clock, wall := opsClock+150, opsWall.Add(30*24*time.Hour)
	// steps sweeps a fresh copy and returns the rows each transaction of
	// the edge removals and of the sync took, the app writing before each
	// one when app is set; hold is the sweep's SoloHold.
	steps := func(app bool, hold time.Duration) map[string][]int64 {
		path := copyMemory(t, orig)
		db := openOps(t, path)
		conn := appConn(t, path)
		if _, err := conn.Exec(`CREATE TABLE app_log (n INTEGER)`); err != nil {
			t.Fatal(err)
		}
		dones := map[string][]int64{}
		opsSweep(t, db, clock, wall, worker.SweepOptions{ChunkSize: 20, SoloChunkSize: 200, SoloHold: hold, Progress: func(step string, done, total int64) {
			if step != "plan_edges" && step != "sync_rows" {
				return
			}
			dones[step] = append(dones[step], done)
			if app && done < total {
				if _, err := conn.Exec(`INSERT INTO app_log (n) VALUES (?)`, done); err != nil {
					t.Fatalf("app write between chunks: %v", err)
				}
			}
		}})
		rows := map[string][]int64{}
		for step, d := range dones {
			for i := 1; i+1 < len(d); i++ { // the last chunk may be short
				rows[step] = append(rows[step], d[i]-d[i-1])
			}
		}
		return rows
	}
	check := func(what string, rows []int64, want int64, atLeast int) {
		t.Helper()
		if len(rows) < atLeast {
			t.Fatalf("%s: only %d full chunks (%v)", what, len(rows), rows)
		}
		for i, n := range rows {
			if n != want {
				t.Errorf("%s: transaction %d took %d rows, want %d", what, i+1, n, want)
			}
		}
	}
	// Alone, each step's first transaction takes its rows at ChunkSize
	// (the sync's are syncChunkFactor times as many), then, within an
	// hour's hold, all that SoloChunkSize allows.
	alone := steps(false, time.Hour)
	check("alone, first edges", alone["plan_edges"][:1], 20, 1)
	check("alone, edges", alone["plan_edges"][1:], 200, 3)
	check("alone, first sync", alone["sync_rows"][:1], 80, 1)
	check("alone, sync", alone["sync_rows"][1:], 800, 1)
	// No transaction fits in a nanosecond's hold: they stay at ChunkSize.
	held := steps(false, time.Nanosecond)
	check("alone, held, edges", held["plan_edges"], 20, 3)
	check("alone, held, sync", held["sync_rows"], 80, 3)
	// The app writes before each transaction: each one, the first
	// included, sees that once it holds the lock.
	beside := steps(true, time.Hour)
	check("beside an app, edges", beside["plan_edges"], 20, 3)
	check("beside an app, sync", beside["sync_rows"], 20, 3)
}

// walProgress reads, without taking part, how many frames the WAL holds and
// how many of them a checkpoint has copied into the file: mxFrame and
// nBackfill of the WAL-index header in the -shm file (sqlite.org/walformat.html,
// native byte order).
func walProgress(t *testing.T, path string) (frames, copied uint32) {
	t.Helper()
	shm, err := os.ReadFile(path + "-shm")
	if err != nil {
		t.Fatal(err)
	}
	if len(shm) < 136 {
		t.Fatalf("-shm file of %d bytes", len(shm))
	}
	return binary.NativeEndian.Uint32(shm[16:]), binary.NativeEndian.Uint32(shm[96:])
}

// --- interruptions in the incremental/full property ---------------------------

// TestIncrementalMatchesFullThroughInterruptions: as TestIncrementalMatchesFull,
// but sweeps of either copy are sometimes cancelled at a random chunk (from
// the Progress hook) and finished by the next sweep at the same clock; the
// copies must still end identical after every step.
// Seeds alternate block archival off and on.
func TestIncrementalMatchesFullThroughInterruptions(t *testing.T) {
	seeds := 6
	if testing.Short() {
		seeds = 4
	}
	cuts := map[string]int{} // where the cuts landed, by step
	for seed := int64(101); seed < 101+int64(seeds); seed++ {
		archival := []string{"off", "auto"}[seed%2]
		t.Run(fmt.Sprintf("seed_%d_archival_%s", seed, archival), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			inc, full := openPair(t)
			both := func(query string) {
				t.Helper()
				for _, db := range []*worker.DB{inc, full} {
					if _, err := db.SQL.Exec(query); err != nil {
						t.Fatalf("%s: %v", query, err)
					}
				}
			}
			for _, db := range []*worker.DB{inc, full} {
				if err := db.UseWAL(); err != nil {
					t.Fatal(err)
				}
				setConfig(t, db, "block_archival", archival)
			}
			for _, q := range randomMemory(rng) {
				both(q)
			}
			clock, wall := 100.0, time.Unix(1_800_000_000, 0)
			for step := range 6 {
				for _, q := range randomWrites(rng, clock, wall.Unix()) {
					both(q)
				}
				if rng.Intn(4) > 0 {
					clock += float64(rng.Intn(120))
					wall = wall.Add(time.Duration(rng.Intn(40*24)) * time.Hour)
				}
				var how [2]string
				for k, db := range []*worker.DB{inc, full} {
					isFull := k == 1
					finished := false
					for tries := 0; !finished && rng.Intn(3) > 0 && tries < 3; tries++ {
						at := 1 + rng.Intn(30)
						var where string
						finished, where = cancelledSweep(t, db, clock, wall, isFull, at)
						if !finished {
							cuts[archival+" "+where]++
							how[k] += fmt.Sprintf("cut at progress call %d (%s); ", at, where)
						}
					}
					if !finished {
						incSweep(t, db, clock, wall, isFull)
					}
				}
				if a, b := memoryState(t, inc), memoryState(t, full); a != b {
					t.Fatalf("step %d at clock %v (incremental: %s full: %s): the copies differ\nincremental:\n%s\nfull:\n%s",
						step, clock, how[0], how[1], diffLines(a, b), diffLines(b, a))
				}
			}
		})
	}
	t.Logf("sweeps cut short, by archival setting and step: %v", cuts)
}

// cancelledSweep sweeps with its context cancelled at the at-th Progress
// call; it reports whether the sweep finished before that, and else the
// step it was cut in.
func cancelledSweep(t *testing.T, db *worker.DB, clock float64, wall time.Time, full bool, at int) (bool, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	where := ""
	_, err := worker.Sweep(ctx, db, worker.SweepOptions{Now: &clock, WallNow: &wall, Full: full, ChunkSize: 7,
		Progress: func(step string, _, _ int64) {
			if calls++; calls == at {
				where = step
				cancel()
			}
		}})
	if err == nil {
		return true, ""
	}
	if ctx.Err() == nil {
		t.Fatalf("sweep (full %v): %v", full, err)
	}
	if got := scalar[string](t, db, `SELECT status FROM mem_sweeps ORDER BY id DESC LIMIT 1`); got != "interrupted" {
		t.Errorf("a cancelled sweep is recorded as %q, want interrupted", got)
	}
	return false, where
}

// TestSweepSettlesItsQueue: before it ends, a sweep refreshes what was
// queued while it ran (its own removals and reinforcements, and an app's
// write made meanwhile) and leaves the queues empty; the app's write is not
// lost: its due time is stored, and the next sweep acts on it.
func TestSweepSettlesItsQueue(t *testing.T) {
	path := bigMemory(t, 41, 200, 2500)
	clock, wall := opsClock+150, opsWall.Add(30*24*time.Hour)
	db := openOps(t, path)
	app := appConn(t, path)
	pair := [2]string{}
	if err := app.QueryRow(`SELECT min(a.id, b.id), max(a.id, b.id) FROM mem_blocks a, mem_blocks b
		WHERE a.id < b.id AND a.status = 'active' AND b.status = 'active'
		  AND NOT EXISTS (SELECT 1 FROM mem_edges e WHERE e.from_id = a.id AND e.to_id = b.id)
		ORDER BY a.id, b.id LIMIT 1`).Scan(&pair[0], &pair[1]); err != nil {
		t.Fatal(err)
	}
	written := false
	r := opsSweep(t, db, clock, wall, worker.SweepOptions{Progress: func(step string, done, total int64) {
		if step == "plan_edges" && done >= total/2 && !written {
			// Weak and never reinforced: a static prune, for the next sweep.
			if _, err := app.Exec(`INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours)
				VALUES (?, ?, 0.01, 0, ?)`, pair[0], pair[1], clock); err != nil {
				t.Errorf("app write during the sweep: %v", err)
			}
			written = true
		}
	}})
	if !written || r.EdgesDecayed+r.EdgesPruned == 0 {
		t.Fatalf("the sweep removed nothing or never reached its middle: %+v", r)
	}
	for _, q := range []string{"mem_dirty_edges", "mem_dirty_blocks", "mem_dirty_facts", "mem_sweep_plans"} {
		if n := scalar[int64](t, db, "SELECT count(*) FROM "+q); n != 0 {
			t.Fatalf("%d rows left in %s after the sweep", n, q)
		}
	}
	if due := scalar[float64](t, db, `SELECT due_hours FROM mem_edge_due WHERE from_id = ? AND to_id = ?`, pair[0], pair[1]); due > clock {
		t.Fatalf("the app's weak edge is due at %v, after the clock %v", due, clock)
	}
	if n := scalar[int64](t, db, `SELECT count(*) FROM mem_edge_due d
		WHERE NOT EXISTS (SELECT 1 FROM mem_edges e WHERE e.from_id = d.from_id AND e.to_id = d.to_id)`); n != 0 {
		t.Fatalf("%d due rows of edges that are gone", n)
	}
	next := opsSweep(t, db, clock, wall, worker.SweepOptions{})
	if next.EdgesPruned != 1 || scalar[int64](t, db, `SELECT count(*) FROM mem_edges WHERE from_id = ? AND to_id = ?`, pair[0], pair[1]) != 0 {
		t.Fatalf("the next sweep pruned %d edges; want the app's weak edge", next.EdgesPruned)
	}
}
