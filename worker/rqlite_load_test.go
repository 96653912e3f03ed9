package worker_test

// memdecay inside rqlited under load: rqlited is a Go program and
// memdecay.so carries a Go runtime of its own, so every call crosses from
// one runtime into the other. Readers and writers call the functions on a
// 3-node cluster at once while a follower is restarted and the leader is
// killed and restarted; every answer must be what the same SQL gives in a
// local SQLite with the same functions, no node may crash, and every node
// must end with the rows a local replay of the writes leaves.

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memdecay/memdecay/internal/rqcluster"
)

// loadSchema is the table the load reads and writes, and the log the
// writers append to; loadRows fills the table with loadN deterministic rows
// (no random(): every node computes the same).
const (
	loadN      = 4000
	loadSchema = `CREATE TABLE r (id INTEGER PRIMARY KEY, weight REAL NOT NULL, reinforcement INTEGER NOT NULL,
		last_active REAL NOT NULL, tags TEXT, category TEXT NOT NULL, half_life REAL NOT NULL, importance REAL NOT NULL,
		decay_rate REAL NOT NULL, access_count INTEGER NOT NULL, segment TEXT NOT NULL, step INTEGER NOT NULL DEFAULT 0)`
	loadLog  = `CREATE TABLE log (writer INTEGER, step INTEGER, low REAL, high REAL, archive INTEGER, PRIMARY KEY (writer, step))`
	loadRows = `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 4000)
		INSERT INTO r (id, weight, reinforcement, last_active, tags, category, half_life, importance, decay_rate, access_count, segment)
		SELECT i, (i * 7919 % 1000) / 1000.0, i % 14, 1000 - (i * 104729 % 700) - (i % 8) / 8.0,
			CASE i % 9 WHEN 0 THEN '["self/constitutional"]' WHEN 1 THEN '["self/value","x"]' WHEN 2 THEN 'self/goal, y'
				WHEN 3 THEN NULL ELSE '[]' END,
			CASE i % 5 WHEN 0 THEN 'mind' WHEN 1 THEN 'observation' WHEN 2 THEN 'knowledge' WHEN 3 THEN 'preference' ELSE 'context' END,
			24 + i % 500, (i % 100) / 100.0, (i % 10) / 100.0, i % 20,
			CASE i % 7 WHEN 0 THEN 'identity' WHEN 1 THEN 'correction' WHEN 2 THEN 'relationship' WHEN 3 THEN 'preference'
				WHEN 4 THEN 'project' WHEN 5 THEN 'knowledge' ELSE 'context' END
		FROM n`
)

// loadColumns are r's columns as a reader returns them before its results,
// so the same query can be run locally on the same inputs.
const loadColumns = `id, weight, reinforcement, last_active, tags, category, half_life, importance, decay_rate, access_count, segment`

// loadQueries are what the readers compute, each over a range of rows.
var loadQueries = []string{
	// edges: tiers, rates, weights, horizons, strengths
	`decay_tier(tags, category), lambda_edge(decay_tier(tags, category), 'standard', reinforcement),
	 effective_weight(weight, lambda_edge(decay_tier(tags, category), 'ephemeral', reinforcement), 1000 - last_active),
	 decay_horizon(weight, lambda_edge(decay_tier(tags, category), 'standard', reinforcement), 0.05),
	 edge_strength(weight, reinforcement)`,
	// curves, a constant JSON argument among them
	`half_life_weight(weight, half_life, 1000 - last_active), linear_weight(weight, 0.001, 1000 - last_active, 24),
	 power_law_weight(weight, 0.5, 1000 - last_active, 10), tier_lambda(decay_tier(tags, category)),
	 multi_linear_weight('[{"weight":0.6,"hold":100,"rate":0.002},{"weight":0.4,"hold":300,"rate":0.001}]', 1000 - last_active)`,
	// facts
	`segment_tier(segment), segment_importance(segment), segment_decay_rate(segment),
	 tideline_score(importance, decay_rate, (1000 - last_active) / 24.0, access_count, segment_tier(segment)),
	 lifecycle_action(tideline_score(importance, decay_rate, (1000 - last_active) / 24.0, access_count, segment_tier(segment)),
		segment_tier(segment), access_count % 5 = 0),
	 tideline_horizon(importance, decay_rate, access_count, 0.15, segment_tier(segment))`,
}

// loadErrorQuery fails on its first row with memdecay's error, which must
// reach the client as it does locally.
const loadErrorQuery = `SELECT effective_weight('heavy', lambda_edge(decay_tier(tags, category), 'standard'), 5) FROM r WHERE id BETWEEN %d AND %d`

// loadWrites are a writer's step k on its own rows (id % writers = w);
// each applies once however often it is sent (the step and the log's key
// guard it), so a request whose answer was lost to a failure is sent again.
var loadWrites = []string{
	`UPDATE r SET weight = CASE step % 2
			WHEN 0 THEN effective_weight(weight, lambda_edge(decay_tier(tags, category), 'standard', reinforcement), 2.5)
			ELSE half_life_weight(weight, half_life, 3) + linear_weight(0.001, 0.0001, step, 2) END,
		reinforcement = reinforcement + 1, access_count = access_count + (step % 3 = 0), step = step + 1
	 WHERE id % :writers = :w AND step = :k - 1`,
	`INSERT OR IGNORE INTO log (writer, step, low, high, archive)
	 SELECT :w, :k, min(effective_weight(weight, tier_lambda(decay_tier(tags, category)), 1000 - last_active)),
		max(tideline_score(importance, decay_rate, (1000 - last_active) / 24.0, access_count, segment_tier(segment))),
		count(*) FILTER (WHERE lifecycle_action(tideline_score(importance, decay_rate, (1000 - last_active) / 24.0, access_count,
			segment_tier(segment)), segment_tier(segment), 0) = 'archive')
	 FROM r WHERE id % :writers = :w`,
}

const (
	loadReaders = 6
	loadWriters = 2
)

func TestRqliteExtensionUnderLoad(t *testing.T) {
	ctx := context.Background()
	so, err := rqcluster.Extension()
	if err != nil {
		t.Fatal(err)
	}
	c := rqcluster.StartT(t, rqcluster.Options{Nodes: 3, Extension: so})
	leader, err := c.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := leader.Execute(ctx, loadSchema, loadLog, loadRows); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitSame(ctx, `SELECT count(*) FROM r`); err != nil {
		t.Fatal(err)
	}
	local := loadLocal(t)
	for _, q := range []string{loadSchema, loadLog, loadRows} {
		if _, err := local.Exec(q); err != nil {
			t.Fatal(err)
		}
	}

	l := &load{t: t, c: c, stop: make(chan struct{})}
	var wg sync.WaitGroup
	for i := range loadReaders {
		wg.Add(1)
		go func() { defer wg.Done(); l.read(int64(i)) }()
	}
	steps := make([]int64, loadWriters)
	for w := range loadWriters {
		wg.Add(1)
		go func() { defer wg.Done(); steps[w] = l.write(w) }()
	}
	stopped := false
	stopLoad := func() {
		if !stopped {
			stopped = true
			close(l.stop)
			wg.Wait()
		}
	}
	defer stopLoad()

	// The faults, each once the load has made some progress since the last.
	l.progress(ctx)
	followers, err := c.Followers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f := followers[0]
	if err := f.Stop(); err != nil {
		t.Fatal(err)
	}
	l.progress(ctx)
	if err := f.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	l.progress(ctx)
	if leader, err = c.Leader(ctx); err != nil {
		t.Fatal(err)
	}
	if err := leader.Kill(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Leader(ctx); err != nil {
		t.Fatal(err)
	}
	l.progress(ctx)
	if err := leader.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	l.progress(ctx)
	stopLoad()
	t.Logf("%d answers checked (%d expected errors), %d refused while nodes were down; writer steps %v",
		l.answers.Load(), l.errorsSeen.Load(), l.refused.Load(), steps)
	if t.Failed() {
		return
	}

	// Every node running, none crashed, and all alike.
	for _, n := range c.Nodes() {
		if !n.Running() {
			t.Errorf("node %s is not running", n.ID)
		}
		log := n.LogTail(1 << 30)
		for _, crash := range []string{"panic:", "fatal error:", "SIGSEGV", "unexpected signal", "cgo argument"} {
			if strings.Contains(log, crash) {
				t.Errorf("node %s's log shows %q:\n%s", n.ID, crash, n.LogTail(60))
			}
		}
	}
	const rowsQuery, logQuery = `SELECT * FROM r ORDER BY id`, `SELECT * FROM log ORDER BY writer, step`
	for _, q := range []string{rowsQuery, logQuery} {
		if err := c.WaitSame(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	// The same writes replayed locally leave the same rows.
	for w, k := range steps {
		for step := int64(1); step <= k; step++ {
			for _, q := range loadWrites {
				if _, err := local.Exec(q, sql.Named("writers", loadWriters), sql.Named("w", w), sql.Named("k", step)); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for _, q := range []string{rowsQuery, logQuery} {
		for _, n := range c.Nodes() {
			got, err := n.Query(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			want := localRows(t, local, q)
			if len(got) != len(want) {
				t.Fatalf("node %s: %d rows for %s, %d locally", n.ID, len(got), q, len(want))
			}
			for i := range want {
				if !sameRow(got[i], want[i]) {
					t.Fatalf("node %s: %s: row %d is %v, locally %v", n.ID, q, i, got[i], want[i])
				}
			}
		}
	}
}

// load is the readers' and writers' shared state.
type load struct {
	t    *testing.T
	c    *rqcluster.Cluster
	stop chan struct{}
	// answers counts the answers checked, writes the writer steps done,
	// refused the requests a node could not take (down, or no leader).
	answers, writes, refused, errorsSeen atomic.Int64
}

// progress waits until the readers have checked 20 more answers and the
// writers made 4 more steps, or fails after a while.
func (l *load) progress(ctx context.Context) {
	l.t.Helper()
	answers, writes := l.answers.Load()+20, l.writes.Load()+4
	deadline := time.Now().Add(30 * time.Second)
	for l.answers.Load() < answers || l.writes.Load() < writes {
		if l.t.Failed() {
			l.t.FailNow() // a reader or writer said why
		}
		if time.Now().After(deadline) {
			l.t.Fatalf("the load stalled: %d answers, %d writer steps (refused %d)", l.answers.Load(), l.writes.Load(), l.refused.Load())
		}
		select {
		case <-ctx.Done():
			l.t.Fatal(ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (l *load) stopping() bool {
	select {
	case <-l.stop:
		return true
	default:
		return false
	}
}

// pick is a running node, at random.
func (l *load) pick(rng *rand.Rand) *rqcluster.Node {
	nodes := l.c.Running()
	if len(nodes) == 0 {
		return nil
	}
	return nodes[rng.Intn(len(nodes))]
}

// read queries random nodes for random ranges of rows, each answer checked
// against the same query run locally on the rows the node returned.
func (l *load) read(seed int64) {
	rng := rand.New(rand.NewSource(seed))
	local := loadLocal(l.t)
	if _, err := local.Exec(loadSchema); err != nil {
		l.t.Error(err)
		return
	}
	var errorLocally string
	if _, err := local.Exec(`SELECT effective_weight('heavy', 0.005, 5)`); err != nil {
		errorLocally = err.Error()
	}
	if !strings.HasPrefix(errorLocally, "memdecay: effective_weight: ") {
		l.t.Errorf("effective_weight('heavy', ...) locally: %q", errorLocally)
		return
	}
	for !l.stopping() && !l.t.Failed() {
		n := l.pick(rng)
		if n == nil {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		lo := 1 + rng.Intn(loadN)
		hi := lo + rng.Intn(300)
		if rng.Intn(20) == 0 {
			lo, hi = 1, loadN // now and then every row
		}
		kind := rng.Intn(len(loadQueries) + 1)
		if kind == len(loadQueries) {
			l.readError(n, lo, hi, errorLocally)
			continue
		}
		q := fmt.Sprintf(`SELECT %s, %s FROM r WHERE id BETWEEN %d AND %d ORDER BY id`, loadColumns, loadQueries[kind], lo, hi)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		got, err := n.Query(ctx, q)
		cancel()
		if err != nil {
			l.unavailable(n, err)
			time.Sleep(10 * time.Millisecond)
			continue
		}
		want, err := l.computeLocally(local, q, got)
		if err != nil {
			l.t.Errorf("computing locally: %v", err)
			return
		}
		for i := range want {
			if !sameRow(got[i], want[i]) {
				l.t.Errorf("node %s answered %v, locally %v\nquery: %s", n.ID, got[i], want[i], q)
				return
			}
		}
		l.answers.Add(1)
	}
}

// computeLocally runs q on a local table holding the input columns of the
// node's answer.
func (l *load) computeLocally(local *sql.DB, q string, got [][]any) ([][]any, error) {
	tx, err := local.Begin()
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`DELETE FROM r`); err != nil {
		return nil, err
	}
	cols := strings.Count(loadColumns, ",") + 1
	insert := fmt.Sprintf(`INSERT INTO r (%s) VALUES (?%s)`, loadColumns, strings.Repeat(", ?", cols-1))
	for _, row := range got {
		if _, err := tx.Exec(insert, row[:cols]...); err != nil {
			return nil, err
		}
	}
	rows, err := tx.Query(q)
	if err != nil {
		return nil, err
	}
	want, err := scanRows(rows)
	if err != nil {
		return nil, err
	}
	if len(want) != len(got) {
		return nil, fmt.Errorf("%d rows locally, %d from the node", len(want), len(got))
	}
	return want, nil
}

// readError expects from the node memdecay's error, as SQLite gives it
// locally (want).
func (l *load) readError(n *rqcluster.Node, lo, hi int, want string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rows, err := n.Query(ctx, fmt.Sprintf(loadErrorQuery, lo, hi))
	switch {
	case err == nil && len(rows) == 0:
		// A node replaying its log after a restart answers from the rows it
		// has applied so far: none yet.
	case err == nil:
		l.t.Errorf("node %s: no error from effective_weight('heavy', ...) but %d rows", n.ID, len(rows))
	case strings.Contains(err.Error(), want):
		l.errorsSeen.Add(1)
		l.answers.Add(1)
	default:
		l.unavailable(n, err)
	}
}

// write makes writer w's steps until the load stops, each sent again
// (through another node) until a node takes it; it returns the steps done.
func (l *load) write(w int) int64 {
	rng := rand.New(rand.NewSource(100 + int64(w)))
	var k int64
	for !l.stopping() && !l.t.Failed() {
		k++
		for _, q := range loadWrites {
			stmt := []any{q, map[string]any{"writers": loadWriters, "w": w, "k": k}}
			deadline := time.Now().Add(30 * time.Second)
			for {
				n := l.pick(rng)
				if n == nil {
					time.Sleep(10 * time.Millisecond)
					continue
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				err := n.Execute(ctx, stmt)
				cancel()
				if err == nil {
					break
				}
				if !l.unavailable(n, err) || time.Now().After(deadline) {
					l.t.Errorf("writer %d step %d: %v", w, k, err)
					return k - 1
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
		l.writes.Add(1)
	}
	return k
}

// unavailable counts an error of a node that is down, restarting (its
// log replayed from the start: no table yet) or without a leader, and
// fails on any other.
func (l *load) unavailable(n *rqcluster.Node, err error) bool {
	msg := err.Error()
	for _, s := range []string{"connection refused", "connection reset", "EOF", "503", "leader not found",
		"not leader", "context deadline exceeded", "store not open", "broken pipe", "server closed idle connection",
		"no such table: r"} {
		if strings.Contains(msg, s) {
			l.refused.Add(1)
			return true
		}
	}
	if !n.Running() {
		l.refused.Add(1)
		return true
	}
	l.t.Errorf("node %s: %v", n.ID, err)
	return false
}

// loadLocal is a local SQLite database with memdecay's functions, as the
// worker opens files.
func loadLocal(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file::memory:")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

// localRows runs a query locally.
func localRows(t *testing.T, db *sql.DB, q string) [][]any {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	out, err := scanRows(rows)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func scanRows(rows *sql.Rows) ([][]any, error) {
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out [][]any
	for rows.Next() {
		row := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range row {
			ptrs[i] = &row[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		for i, v := range row {
			if b, ok := v.([]byte); ok {
				row[i] = string(b)
			}
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

// sameRow compares a node's row with a local one: numbers by value (JSON
// does not say whether a computed 1 was an integer), the rest exactly.
func sameRow(got, want []any) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		a, aNum := number(got[i])
		b, bNum := number(want[i])
		switch {
		case aNum && bNum:
			if a != b {
				return false
			}
		case !reflect.DeepEqual(got[i], want[i]):
			return false
		}
	}
	return true
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}
