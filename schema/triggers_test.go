package schema_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/memdecay/memdecay/schema"
)

// The triggers a migrated file carries are memworker's own; one an app
// adds, or one of memworker's an app rewrote, is not among them.
func TestOwnTriggers(t *testing.T) {
	own, err := schema.OwnTriggers("sqlite3")
	if err != nil {
		t.Fatal(err)
	}
	if len(own) == 0 {
		t.Fatal("no trigger of memworker's own")
	}
	db := openMigrated(t)
	onlyOwn := func() bool {
		t.Helper()
		ok, err := schema.OnlyOwnTriggers(context.Background(), db, "sqlite3")
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !onlyOwn() {
		got, _ := schema.Triggers(context.Background(), db)
		t.Fatalf("a migrated file's triggers differ from OwnTriggers:\n%v\n%v", got, own)
	}
	mustExec(t, db, `CREATE TRIGGER app_log AFTER DELETE ON mem_edges BEGIN SELECT 1; END`)
	if onlyOwn() {
		t.Error("an app's trigger read as memworker's own")
	}
	mustExec(t, db, `DROP TRIGGER app_log`)
	mustExec(t, db, `DROP TRIGGER mem_edges_queue_update`)
	mustExec(t, db, `CREATE TRIGGER mem_edges_queue_update AFTER UPDATE ON mem_edges BEGIN SELECT 1; END`)
	if onlyOwn() {
		t.Error("memworker's trigger rewritten by an app read as memworker's own")
	}
}

func openMigrated(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+t.TempDir()+"/own.db?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := schema.Up(db); err != nil {
		t.Fatal(err)
	}
	return db
}

func mustExec(t *testing.T, db *sql.DB, q string) {
	t.Helper()
	if _, err := db.Exec(q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}
