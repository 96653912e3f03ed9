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
	var byViews []string
	rows, err := db.SQL.Query(`SELECT to_id FROM mem_edges WHERE from_id = 'a'
		AND to_id NOT IN (SELECT to_id FROM mem_edges_effective WHERE from_id = 'a') ORDER BY to_id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		byViews = append(byViews, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(bySweep)
	if len(bySweep) == 0 || len(bySweep) == n {
		t.Fatalf("%d of %d edges invalid: the table proves nothing", len(bySweep), n)
	}
	if !slices.Equal(bySweep, byViews) {
		for _, id := range bySweep {
			if !slices.Contains(byViews, id) {
				t.Errorf("edge a-%s: the sweep skips it, the views show it: %s", id, scalar[string](t, db,
					`SELECT quote(weight) || ' ' || quote(reinforcement_count) || ' ' || quote(pinned) || ' ' || quote(last_active_hours) FROM mem_edges WHERE to_id = ?`, id))
			}
		}
		for _, id := range byViews {
			if !slices.Contains(bySweep, id) {
				t.Errorf("edge a-%s: the views leave it out, the sweep takes it: %s", id, scalar[string](t, db,
					`SELECT quote(weight) || ' ' || quote(reinforcement_count) || ' ' || quote(pinned) || ' ' || quote(last_active_hours) FROM mem_edges WHERE to_id = ?`, id))
			}
		}
	}
}
