package worker_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/worker"
)

// Helpers shared by the curate sweep tests (rules, scenarios, guarantees,
// model). They only read and write rows; no decay formula lives here.

func sweepWith(t *testing.T, db *worker.DB, opt worker.SweepOptions) *worker.Report {
	t.Helper()
	r, err := worker.Sweep(context.Background(), db, opt)
	if err != nil {
		t.Fatalf("sweep %+v: %v", opt, err)
	}
	return r
}

func dryRunAt(t *testing.T, db *worker.DB, now float64) *worker.Report {
	t.Helper()
	return sweepWith(t, db, worker.SweepOptions{Now: &now, DryRun: true})
}

func setConfig(t *testing.T, db *worker.DB, key, value string) {
	t.Helper()
	if err := worker.SetConfig(context.Background(), db.SQL, key, value); err != nil {
		t.Fatal(err)
	}
}

func loadConfig(t *testing.T, db *worker.DB) worker.Config {
	t.Helper()
	c, err := worker.LoadConfig(context.Background(), db.SQL)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustExec(t *testing.T, db *worker.DB, query string, args ...any) {
	t.Helper()
	if _, err := db.SQL.Exec(query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// expectEdges checks that every edge in keep ("from-to") is present and
// every edge in gone is absent.
func expectEdges(t *testing.T, db *worker.DB, keep, gone []string) {
	t.Helper()
	got := edgeSet(t, db)
	for _, k := range keep {
		if !got[k] {
			t.Errorf("edge %s was removed, want it kept", k)
		}
	}
	for _, k := range gone {
		if got[k] {
			t.Errorf("edge %s is still there, want it removed", k)
		}
	}
}

type blockState struct {
	Status         string
	Reason         sql.NullString
	Count          int64
	LastReinforced sql.NullFloat64
	Tags           int
}

func blockOf(t *testing.T, db *worker.DB, id string) blockState {
	t.Helper()
	var b blockState
	err := db.SQL.QueryRow(`SELECT status, archive_reason, reinforcement_count, last_reinforced_hours,
		(SELECT count(*) FROM mem_block_tags WHERE block_id = b.id) FROM mem_blocks b WHERE id = ?`, id).
		Scan(&b.Status, &b.Reason, &b.Count, &b.LastReinforced, &b.Tags)
	if err != nil {
		t.Fatalf("block %s: %v", id, err)
	}
	return b
}

func expectStatus(t *testing.T, db *worker.DB, status string, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if got := blockOf(t, db, id).Status; got != status {
			t.Errorf("block %s status = %s, want %s", id, got, status)
		}
	}
}

// edgeEvent is the decoded detail of the one event recorded for an edge.
type edgeEvent struct {
	Action, Reason string
	Detail         map[string]any
}

// eventsFor returns every event for an edge subject ("from", "to").
func eventsFor(t *testing.T, db *worker.DB, kind, subject string) []edgeEvent {
	t.Helper()
	rows, err := db.SQL.Query(`SELECT action, coalesce(reason, ''), coalesce(detail, '{}') FROM mem_events
		WHERE subject_kind = ? AND subject_id = ? ORDER BY id`, kind, subject)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []edgeEvent
	for rows.Next() {
		var e edgeEvent
		var detail string
		if err := rows.Scan(&e.Action, &e.Reason, &detail); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(detail), &e.Detail); err != nil {
			t.Fatalf("event detail %q: %v", detail, err)
		}
		out = append(out, e)
	}
	return out
}

// edgeSubject is the subject_id the sweep gives an edge: json_array(from, to).
func edgeSubject(from, to string) string {
	b, _ := json.Marshal([]string{from, to})
	return string(b)
}

// decayEvent returns the single decay event of edge from-to, failing the
// test when there is not exactly one.
func decayEvent(t *testing.T, db *worker.DB, from, to string) edgeEvent {
	t.Helper()
	ev := eventsFor(t, db, "edge", edgeSubject(from, to))
	if len(ev) != 1 || ev[0].Action != "decay" {
		t.Fatalf("edge %s-%s: events %+v, want one decay event", from, to, ev)
	}
	return ev[0]
}

func num(t *testing.T, m map[string]any, key string) float64 {
	t.Helper()
	v, ok := m[key].(float64)
	if !ok {
		t.Fatalf("detail %v: %s is %T, want a number", m, key, m[key])
	}
	return v
}

// near reports whether got is within tol of want.
func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

// viewEffective reads mem_edges_effective's effective weight for one edge
// at clock now (the view reads the clock from mem_config).
func viewEffective(t *testing.T, db *worker.DB, now float64, from, to string) float64 {
	t.Helper()
	mustExec(t, db, `UPDATE mem_config SET value = ? WHERE key = 'active_hours'`, now)
	return scalar[float64](t, db, `SELECT effective_weight FROM mem_edges_effective WHERE from_id = ? AND to_id = ?`, from, to)
}

// eventTags reads the tags snapshot of a block event, sorted. The sweep
// stores it as a JSON array or as a string holding one; both are accepted.
func eventTags(t *testing.T, detail map[string]any) []string {
	t.Helper()
	var tags []string
	switch v := detail["tags"].(type) {
	case string:
		if err := json.Unmarshal([]byte(v), &tags); err != nil {
			t.Fatalf("tags snapshot %q: %v", v, err)
		}
	case []any:
		for _, x := range v {
			s, _ := x.(string)
			tags = append(tags, s)
		}
	default:
		t.Fatalf("tags snapshot is %T", v)
	}
	slices.Sort(tags)
	return tags
}

// fixture joins SQL statements into one fixture script.
func fixture(stmts ...string) string { return strings.Join(stmts, "\n") }
