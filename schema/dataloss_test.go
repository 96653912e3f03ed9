package schema_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/schema"
)

// A down step that drops data is refused only while the database holds
// some of it: step 5 with and without a pinned wall clock, step 2 with and
// without a soft-excluded edge.
func TestDownRefusesOnlyWhenDataWouldGo(t *testing.T) {
	db, _ := openFile(t)
	mustUp(t, db)
	down := func(to uint) {
		t.Helper()
		for v, _, _ := schema.Version(db); v > to; v, _, _ = schema.Version(db) {
			if _, err := schema.Down(db, schema.DownOptions{Force: true}); err != nil {
				t.Fatal(err)
			}
		}
	}
	refusal := func() string {
		t.Helper()
		_, err := schema.Down(db, schema.DownOptions{})
		if err == nil {
			return ""
		}
		if !errors.Is(err, schema.ErrDropsData) {
			t.Fatalf("down: %v", err)
		}
		return err.Error()
	}

	down(5)
	if msg := refusal(); msg != "" {
		t.Errorf("step 5 with no pinned wall clock was refused: %s", msg)
	}
	mustUp(t, db)
	down(5)
	mustExecAll(t, db, `UPDATE mem_config SET value = 1767225600 WHERE key = 'wall_clock'`)
	if msg := refusal(); !strings.Contains(msg, "step 5 drops a pinned wall clock") {
		t.Errorf("step 5 with a pinned wall clock: %q", msg)
	}

	down(2)
	mustExecAll(t, db,
		`INSERT INTO mem_blocks (id, category) VALUES ('a', 'knowledge'), ('b', 'knowledge')`,
		`INSERT INTO mem_edges (from_id, to_id, weight, excluded) VALUES ('a', 'b', 0.5, 1)`)
	if msg := refusal(); !strings.Contains(msg, "step 2 drops the soft exclusions") {
		t.Errorf("step 2 with an excluded edge: %q", msg)
	}
	if v, _, _ := schema.Version(db); v != 2 {
		t.Errorf("a refused down moved the version to %d", v)
	}
	mustExecAll(t, db, `UPDATE mem_edges SET excluded = 0`)
	if msg := refusal(); msg != "" {
		t.Errorf("step 2 with no excluded edge was refused: %s", msg)
	}
	if v, _, _ := schema.Version(db); v != 1 {
		t.Errorf("after step 2 down the version is %d, want 1", v)
	}
}
