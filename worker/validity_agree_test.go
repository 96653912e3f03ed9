package worker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/memdecay/memdecay/worker"
)

// The validity of a row is one rule with two readers: the sweep (rules.go,
// which skips, counts and names a bad row) and the views (which leave it
// out). On rows broken every way an app breaks them, both must pick the
// same rows.
func TestViewsAndSweepAgreeOnValidity(t *testing.T) {
	ctx := context.Background()
	values := []string{"0.5", "'0.5'", "'heavy'", "x'00'", "NULL", "-0.5", "9e999", "-9e999", "1e308", "0", "2"}
	counts := []string{"0", "3", "-1", "'x'", "NULL", "1.5", "9e999"}
	pins := []string{"0", "1", "2", "-1", "'yes'", "0.5"}
	db, _ := newMemory(t, knowledgeBlocks("a"))
	n := 0
	for i, w := range values {
		for j, c := range counts {
			pin := pins[(i+j)%len(pins)]
			last := values[(i*3+j)%len(values)]
			mustExec(t, db, fmt.Sprintf(`INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES ('z%03d', 'knowledge', 1)`, n))
			mustExec(t, db, fmt.Sprintf(`INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, pinned, last_active_hours)
				VALUES ('a', 'z%03d', %s, %s, %s, %s)`, n, w, c, pin, last))
			n++
		}
	}
	// A relation type that is a blob: no event could name its policy.
	mustExec(t, db, fmt.Sprintf(`INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES ('z%03d', 'knowledge', 1);
		INSERT INTO mem_edges (from_id, to_id, weight, relation_type, last_active_hours) VALUES ('a', 'z%03d', 0.5, x'01', 1)`, n, n))
	n++
	invalid, err := worker.ListInvalid(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	var bySweep []string
	for _, r := range invalid {
		if r.Kind != "edge" {
			continue
		}
		var ends []string
		if err := json.Unmarshal([]byte(r.ID), &ends); err != nil {
			t.Fatalf("edge id %q: %v", r.ID, err)
		}
		bySweep = append(bySweep, ends[1])
	}
	byViews := column(t, db, `SELECT to_id FROM mem_edges WHERE from_id = 'a'
		AND to_id NOT IN (SELECT to_id FROM mem_edges_effective WHERE from_id = 'a') ORDER BY to_id`)
	sameInvalid(t, "edge", n, bySweep, byViews, func(id string) string {
		return scalar[string](t, db, `SELECT 'a-' || to_id || ': ' || quote(weight) || ' ' || quote(reinforcement_count) || ' ' ||
			quote(pinned) || ' ' || quote(last_active_hours) FROM mem_edges WHERE to_id = ?`, id)
	})
}

// The same for facts: the rows the sweep skips as invalid are the rows
// mem_facts_scored leaves out.
func TestFactViewAndSweepAgreeOnValidity(t *testing.T) {
	ctx := context.Background()
	db, _ := newMemory(t, "")
	pinWall(t, db, fixedWall)
	importances := []string{"0.5", "'0.5'", "'high'", "x'00'", "-0.5", "9e999", "1.5", "NULL"}
	accesses := []string{"0", "3", "-1", "'x'", "2.5"}
	times := []string{"1767225600", "'2026-01-01T00:00:00Z'", "'last week'", "x'01'", "NULL", "9e999"}
	n := 0
	for i, imp := range importances {
		for j, acc := range accesses {
			at := times[(i+j)%len(times)]
			mustExec(t, db, fmt.Sprintf(`INSERT INTO mem_facts (id, segment, importance, access_count, last_accessed_at)
				VALUES ('f%03d', 'knowledge', %s, %s, %s)`, n, imp, acc, at))
			n++
		}
	}
	invalid, err := worker.ListInvalid(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	var bySweep []string
	for _, r := range invalid {
		if r.Kind == "fact" {
			bySweep = append(bySweep, r.ID)
		}
	}
	byView := column(t, db, `SELECT id FROM mem_facts WHERE id NOT IN (SELECT id FROM mem_facts_scored) ORDER BY id`)
	sameInvalid(t, "fact", n, bySweep, byView, func(id string) string {
		return scalar[string](t, db, `SELECT id || ': ' || quote(importance) || ' ' || quote(access_count) || ' ' ||
			quote(last_accessed_at) FROM mem_facts WHERE id = ?`, id)
	})
}

// sameInvalid fails unless the sweep and the views pick the same rows as
// invalid (and some, but not all, of the n rows), naming each row they
// disagree on as describe shows it.
func sameInvalid(t *testing.T, kind string, n int, bySweep, byViews []string, describe func(id string) string) {
	t.Helper()
	slices.Sort(bySweep)
	if len(bySweep) == 0 || len(bySweep) == n {
		t.Fatalf("%d of %d %ss invalid: the table proves nothing", len(bySweep), n, kind)
	}
	for _, id := range bySweep {
		if !slices.Contains(byViews, id) {
			t.Errorf("%s %s: the sweep skips it, the views keep it", kind, describe(id))
		}
	}
	for _, id := range byViews {
		if !slices.Contains(bySweep, id) {
			t.Errorf("%s %s: the views leave it out, the sweep takes it", kind, describe(id))
		}
	}
}

// column is every row of a one-column query.
func column(t *testing.T, db *worker.DB, query string) []string {
	t.Helper()
	rows, err := db.SQL.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
