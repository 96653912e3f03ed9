package worker_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/memdecay/memdecay/schema"
	"github.com/memdecay/memdecay/worker"
)

// A migration down to any version and back up leaves a memory that the
// next sweep treats exactly as it treats a copy never migrated: the down
// steps drop derived state (step 3 drops it all) and the up steps recreate
// it empty, so the stored fingerprint must not survive to tell the next
// sweep that nothing needs computing. Steps that keep the derived state
// (schema.DerivedLayout) keep it: across only those, the next sweep is
// incremental and still leaves what a sweep of a copy never migrated does.
func TestMigrateDownAndUpThenSweepAsNeverMigrated(t *testing.T) {
	wall := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	db, path := newMemory(t, richFixture)
	sweepAtWall(t, db, 100, wall) // derived state and its fingerprint stored
	db.Close()
	latest, err := schema.Latest()
	if err != nil {
		t.Fatal(err)
	}
	tables := func(db *worker.DB) string {
		var out string
		for _, q := range []string{
			`SELECT * FROM mem_blocks ORDER BY id`, `SELECT * FROM mem_block_tags ORDER BY 1, 2`,
			`SELECT * FROM mem_edges ORDER BY from_id, to_id`, `SELECT * FROM mem_facts ORDER BY id`} {
			cols, body := dumpRows(t, db, q)
			out += fmt.Sprintf("%v\n%s", cols, body)
		}
		return out
	}
	never := openAsWorker(t, copyMemory(t, path))
	wantReport := sweepAtWall(t, never, 500, wall.Add(400*time.Hour))
	want := tables(never)
	if wantReport.Full {
		t.Fatal("the reference sweep computed every row: its first sweep's derived state was not kept")
	}
	if wantReport.Archived == 0 || wantReport.EdgesDecayed == 0 {
		t.Fatalf("the reference sweep did nothing: %s", reportCounts(wantReport))
	}
	for v := latest - 1; v >= 1; v-- {
		t.Run(fmt.Sprintf("down to %d", v), func(t *testing.T) {
			p := copyMemory(t, path)
			m, err := worker.Open(p, worker.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for at := latest; at > v; at-- {
				if _, err := schema.Down(m.SQL, schema.DownOptions{Force: true}); err != nil {
					t.Fatalf("down from %d: %v", at, err)
				}
			}
			if _, err := schema.Up(m.SQL); err != nil {
				t.Fatal(err)
			}
			m.Close()
			m = openAsWorker(t, p)
			got := sweepAtWall(t, m, 500, wall.Add(400*time.Hour))
			if got.Archived != wantReport.Archived || got.EdgesDecayed != wantReport.EdgesDecayed ||
				got.EdgesPruned != wantReport.EdgesPruned || got.TotalEdgesAfter != wantReport.TotalEdgesAfter {
				t.Errorf("after down to %d and up, the sweep reported %s; never migrated: %s", v, reportCounts(got), reportCounts(wantReport))
			}
			if layout := schema.DerivedLayout(latest); got.Full != (v < layout) {
				t.Errorf("after down to %d and up, the sweep was full: %v; want full only below %d, the newest step that may change the derived state",
					v, got.Full, layout)
			}
			if g := tables(m); g != want {
				t.Errorf("after down to %d and up, the sweep left\n%s\nnever migrated:\n%s", v, g, want)
			}
		})
	}
}
