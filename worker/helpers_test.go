package worker_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/memdecay/memdecay/schema"
	"github.com/memdecay/memdecay/worker"
)

// newMemory creates a migrated memory database in a temp dir, runs the
// fixture SQL in it and returns it open for writing.
func newMemory(t *testing.T, fixture string) (*worker.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "memory.db")
	db, err := worker.Open(path, worker.OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := schema.Up(db.SQL); err != nil {
		t.Fatal(err)
	}
	if fixture != "" {
		if _, err := db.SQL.Exec(fixture); err != nil {
			t.Fatalf("fixture: %v", err)
		}
	}
	return db, path
}

func sweepAt(t *testing.T, db *worker.DB, now float64) *worker.Report {
	t.Helper()
	r, err := worker.Sweep(context.Background(), db, worker.SweepOptions{Now: &now})
	if err != nil {
		t.Fatalf("sweep at %v: %v", now, err)
	}
	return r
}

// edgeSet lists the remaining edges as "from-to".
func edgeSet(t *testing.T, db *worker.DB) map[string]bool {
	t.Helper()
	rows, err := db.SQL.Query("SELECT from_id || '-' || to_id FROM mem_edges")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	set := map[string]bool{}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		set[k] = true
	}
	return set
}

func scalar[T any](t *testing.T, db *worker.DB, query string, args ...any) T {
	t.Helper()
	var v T
	if err := db.SQL.QueryRow(query, args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return v
}
