package schema_test

import (
	"database/sql"
	"maps"
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
	triggers := func() map[string]string {
		t.Helper()
		rows, err := db.Query(`SELECT name, sql FROM sqlite_master WHERE type = 'trigger'`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		got := map[string]string{}
		for rows.Next() {
			var name, text string
			if err := rows.Scan(&name, &text); err != nil {
				t.Fatal(err)
			}
			got[name] = text
		}
		return got
	}
	if !maps.Equal(triggers(), own) {
		t.Fatalf("a migrated file's triggers differ from OwnTriggers:\n%v\n%v", triggers(), own)
	}
	mustExec(t, db, `CREATE TRIGGER app_log AFTER DELETE ON mem_edges BEGIN SELECT 1; END`)
	if maps.Equal(triggers(), own) {
		t.Error("an app's trigger read as memworker's own")
	}
	mustExec(t, db, `DROP TRIGGER app_log`)
	mustExec(t, db, `DROP TRIGGER mem_edges_queue_update`)
	mustExec(t, db, `CREATE TRIGGER mem_edges_queue_update AFTER UPDATE ON mem_edges BEGIN SELECT 1; END`)
	if maps.Equal(triggers(), own) {
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
