package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/schema"
	"github.com/memdecay/memdecay/worker"
)

// boundedGraph is a small graph at clock 1000 with edges on both sides of
// each rule. Blocks are standard (λ 0.01) except e, durable (category mind,
// λ 0.001); λ_edge is the smaller end's λ × 0.5, halved again at 10
// reinforcements, and weight 1.0 falls below the 0.10 threshold once
// λ_edge × elapsed passes ln 10 ≈ 2.303.
var boundedGraph = []string{
	`UPDATE mem_config SET value = 1000 WHERE key = 'active_hours'`,
	`INSERT INTO mem_blocks (id, category, status, last_reinforced_hours) VALUES
		('a', 'fact', 'active', 1000), ('b', 'fact', 'active', 1000), ('c', 'fact', 'active', 1000),
		('d', 'fact', 'active', 1000), ('e', 'mind', 'active', 1000), ('f', 'fact', 'active', 1000)`,
	`INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, origin, last_active_hours, pinned) VALUES
		('a', 'b', 0.05, 0, 'similarity', 1000, 0),        -- static prune
		('d', 'f', 0.09, 0, 'outcome', 1000, 0),           -- static prune
		('a', 'c', 0.10, 0, 'similarity', 1000, 0),        -- at the threshold: kept
		('a', 'd', 0.05, 1, 'similarity', NULL, 0),        -- weak but reinforced, no anchor: kept
		('b', 'e', 0.01, 0, 'similarity', 0, 1),           -- pinned: kept
		('b', 'd', 1.0, 0, 'agent', 0, 0),                 -- agent-asserted: kept
		('b', 'c', 1.0, 0, 'similarity', 1000 - 470, 0),   -- 0.005 × 470 h = 2.35: decayed
		('a', 'f', 1.0, 0, 'similarity', 1000 - 450, 0),   -- 0.005 × 450 h = 2.25: kept
		('a', 'e', 1.0, 0, 'similarity', 1000 - 470, 0),   -- durable end, 0.0005 × 470 h: kept
		('c', 'f', 1.0, 12, 'similarity', 1000 - 930, 0),  -- established, 0.0025 × 930 h = 2.325: decayed
		('c', 'd', 1.0, 12, 'similarity', 1000 - 900, 0)   -- established, 0.0025 × 900 h = 2.25: kept`,
}

// TestBoundedRemovesWhatPlainRemoves runs both SQL peers in the sqlite3
// shell on copies of one small graph: the bounded peer, two rows per
// transaction, must remove the same edges as plain SQL, with one event per
// removed edge that holds the row.
func TestBoundedRemovesWhatPlainRemoves(t *testing.T) {
	chdir(t, "../..")
	ctx := context.Background()
	dir := t.TempDir()
	base := smallGraph(t, dir)

	want := []string{"a-c", "a-d", "a-e", "a-f", "b-d", "b-e", "c-d"}
	run := func(p Peer) (string, Outcome) {
		path := filepath.Join(dir, p.Key+".db")
		if err := copyFile(base, path); err != nil {
			t.Fatal(err)
		}
		if err := p.prepare(ctx, path); err != nil {
			t.Fatal(err)
		}
		before := statDB(t, path)
		o, err := p.Run(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		if o.FileBefore != before || o.FileAfter != statDB(t, path) {
			t.Errorf("%s: file %d -> %d bytes, but os.Stat says %d -> %d", p.Name, o.FileBefore, o.FileAfter, before, statDB(t, path))
		}
		if got := survivors(t, path); !slices.Equal(got, want) {
			t.Errorf("%s left %v, want %v", p.Name, got, want)
		}
		return path, o
	}
	peers := sqlPeers(t, 2)
	_, plain := run(peers[0])
	path, bounded := run(peers[1])
	counts := func(o Outcome) [3]int64 { return [3]int64{o.Pruned, o.Decayed, o.After} }
	if counts(plain) != counts(bounded) || counts(bounded) != [3]int64{2, 2, 7} {
		t.Errorf("counts: plain %+v, bounded %+v; want 2 pruned, 2 decayed, 7 left", plain, bounded)
	}

	conn, err := openDB(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rows, err := conn.QueryContext(ctx, `SELECT subject_id, action, reason, detail FROM mem_events ORDER BY subject_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	wantEvents := map[string]string{`["a","b"]`: "prune", `["d","f"]`: "prune", `["b","c"]`: "decay", `["c","f"]`: "decay"}
	seen := 0
	for rows.Next() {
		var subject, action, reason, detail string
		if err := rows.Scan(&subject, &action, &reason, &detail); err != nil {
			t.Fatal(err)
		}
		seen++
		var d struct {
			Edge struct {
				From   string  `json:"from_id"`
				To     string  `json:"to_id"`
				Weight float64 `json:"weight"`
			} `json:"edge"`
			Effective *float64 `json:"effective_weight"`
		}
		if err := json.Unmarshal([]byte(detail), &d); err != nil {
			t.Fatalf("event of %s: %v: %s", subject, err, detail)
		}
		ends, _ := json.Marshal([]string{d.Edge.From, d.Edge.To})
		if wantEvents[subject] != action || string(ends) != subject || d.Edge.Weight <= 0 {
			t.Errorf("event %s %s (%s): %s", subject, action, reason, detail)
		}
		if action == "decay" && (d.Effective == nil || *d.Effective >= 0.10) {
			t.Errorf("decay event of %s: effective weight %v, want below 0.10", subject, d.Effective)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if seen != len(wantEvents) {
		t.Errorf("%d events, want one per removed edge (%d)", seen, len(wantEvents))
	}
}

// TestScenarioReportsFilesLeft runs the first-sweep scenario with both SQL
// peers, twice each: every run's file sizes are real (the graph's size
// before, and after the size of the file the peer left, which becomes its
// state for the later scenarios).
func TestScenarioReportsFilesLeft(t *testing.T) {
	chdir(t, "../..")
	ctx := context.Background()
	dir := t.TempDir()
	base := smallGraph(t, dir)
	b := &bench{o: Options{Runs: 2}, peers: sqlPeers(t, 2), base: base, work: dir}
	r, err := b.scenario(ctx, b.scenarios()[0])
	if err != nil {
		t.Fatal(err)
	}
	graph := statDB(t, base)
	for _, p := range b.peers {
		runs := r.Runs[p.Key]
		if len(runs) != 2 {
			t.Fatalf("%s: %d runs, want 2", p.Name, len(runs))
		}
		for i, o := range runs {
			if o.FileBefore != graph || o.FileAfter <= 0 {
				t.Errorf("%s run %d: file %d -> %d bytes, want %d before and something after", p.Name, i+1, o.FileBefore, o.FileAfter, graph)
			}
		}
		if left := statDB(t, b.state[p.Key]); runs[1].FileAfter != left {
			t.Errorf("%s: last run reports %d bytes after, but it left %d", p.Name, runs[1].FileAfter, left)
		}
		if before, after := r.largestFile(p.Key); before != graph || after != max(runs[0].FileAfter, runs[1].FileAfter) {
			t.Errorf("%s: largest file %d -> %d bytes, runs %+v", p.Name, before, after, runs)
		}
	}
}

// smallGraph writes boundedGraph with the real schema to dir/base.db.
func smallGraph(t *testing.T, dir string) string {
	t.Helper()
	base := filepath.Join(dir, "base.db")
	db, err := worker.Open(base, worker.OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := schema.Up(db.SQL); err != nil {
		t.Fatal(err)
	}
	for _, q := range boundedGraph {
		if _, err := db.SQL.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return base
}

// sqlPeers are the plain-SQL and bounded-SQL peers as setupPeers makes
// them, the bounded one with chunk rows per transaction.
func sqlPeers(t *testing.T, chunk int64) []Peer {
	t.Helper()
	shell, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Fatalf("the SQL peers need the sqlite3 shell: %v", err)
	}
	plain, err := os.ReadFile("bench/plain.sql")
	if err != nil {
		t.Fatal(err)
	}
	return []Peer{
		{Key: "plain", Name: "plain SQL", prepare: dropEdgeTriggers, cmd: func(ctx context.Context, db string) (*exec.Cmd, error) {
			return shellScript(ctx, shell, db, bytes.NewReader(plain)), nil
		}},
		{Key: "bounded", Name: "bounded SQL", prepare: dropEdgeTriggers, cmd: func(ctx context.Context, db string) (*exec.Cmd, error) {
			script, err := boundedScript(ctx, db, chunk)
			if err != nil {
				return nil, err
			}
			return shellScript(ctx, shell, db, strings.NewReader(script)), nil
		}},
	}
}

// statDB is the database's size as os.Stat sees it: the main file, plus
// its -wal file when one is there.
func statDB(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() == 0 {
		t.Fatalf("%s is empty", path)
	}
	n := fi.Size()
	if wal, err := os.Stat(path + "-wal"); err == nil {
		n += wal.Size()
	}
	return n
}

func survivors(t *testing.T, path string) []string {
	t.Helper()
	conn, err := openDB(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var got []string
	rows, err := conn.Query(`SELECT from_id || '-' || to_id FROM mem_edges ORDER BY from_id, to_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	return got
}

// chdir moves the test into dir (the repository root, where bench/run reads
// its SQL) until it ends.
func chdir(t *testing.T, dir string) {
	t.Helper()
	was, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chdir(was) })
}
