package main

import (
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
	shell, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Fatalf("the SQL peers need the sqlite3 shell: %v", err)
	}
	t.Chdir("../..")
	ctx := context.Background()
	dir := t.TempDir()
	base := filepath.Join(dir, "base.db")
	db, err := worker.Open(base, worker.OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := schema.Up(db.SQL); err != nil {
		t.Fatal(err)
	}
	for _, q := range boundedGraph {
		if _, err := db.SQL.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()

	want := []string{"a-c", "a-d", "a-e", "a-f", "b-d", "b-e", "c-d"}
	run := func(p Peer, script string) (string, Outcome) {
		path := filepath.Join(dir, p.Key+".db")
		if err := copyFile(base, path); err != nil {
			t.Fatal(err)
		}
		if err := dropEdgeTriggers(ctx, path); err != nil {
			t.Fatal(err)
		}
		if script == "" {
			s, err := boundedScript(ctx, path, 2)
			if err != nil {
				t.Fatal(err)
			}
			script = s
		}
		out, err := shellScript(ctx, shell, path, strings.NewReader(script)).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", p.Name, err, out)
		}
		var o Outcome
		if err := p.parse(out, &o); err != nil {
			t.Fatalf("%s: %v\n%s", p.Name, err, out)
		}
		if got := survivors(t, path); !slices.Equal(got, want) {
			t.Errorf("%s left %v, want %v", p.Name, got, want)
		}
		return path, o
	}
	plainSQL, err := os.ReadFile("bench/plain.sql")
	if err != nil {
		t.Fatal(err)
	}
	_, plain := run(Peer{Key: "plain", Name: "plain SQL"}, string(plainSQL))
	path, bounded := run(Peer{Key: "bounded", Name: "bounded SQL"}, "")
	if plain != bounded || bounded.Pruned != 2 || bounded.Decayed != 2 || bounded.After != 7 {
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
