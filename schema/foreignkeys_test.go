package schema_test

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/memdecay/memdecay/schema"
)

// No migration deletes an app's row, with foreign keys on: DROP TABLE
// deletes every row first when they are enforced, so an app table whose
// foreign key cascades from a mem_ table would be emptied by a step that
// rebuilds (6, up and down) or drops (1, down) that table.
func TestMigrationsKeepAppRowsWithForeignKeysOn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.db")
	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=5000&_foreign_keys=1")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // the pragma is the connection's: one connection sees it throughout
	mustUp(t, db)
	mustExecAll(t, db,
		`INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES ('a', 'knowledge', 1), ('b', 'knowledge', 1), ('c', 'knowledge', 1)`,
		`INSERT INTO mem_edges (from_id, to_id, weight, last_active_hours) VALUES ('a', 'b', 0.5, 1), ('b', 'c', 0.5, 1)`,
		`CREATE TABLE edge_notes (from_id TEXT, to_id TEXT, body TEXT,
			FOREIGN KEY (from_id, to_id) REFERENCES mem_edges (from_id, to_id) ON DELETE CASCADE)`,
		`CREATE TABLE block_notes (block_id TEXT REFERENCES mem_blocks (id) ON DELETE CASCADE, body TEXT)`,
		`CREATE TABLE block_owners (block_id TEXT REFERENCES mem_blocks (id) ON DELETE SET NULL, owner TEXT)`,
		`INSERT INTO edge_notes VALUES ('a', 'b', 'x'), ('b', 'c', 'y')`,
		`INSERT INTO block_notes VALUES ('a', 'x'), ('b', 'y'), ('c', 'z')`,
		`INSERT INTO block_owners VALUES ('a', 'me')`,
	)
	var on bool
	if err := db.QueryRow(`PRAGMA foreign_keys`).Scan(&on); err != nil || !on {
		t.Fatalf("foreign keys are not on (%v): the test would prove nothing", err)
	}
	check := func(when string) {
		t.Helper()
		var notes, blockNotes, owners int
		if err := db.QueryRow(`SELECT (SELECT count(*) FROM edge_notes), (SELECT count(*) FROM block_notes),
			(SELECT count(*) FROM block_owners WHERE block_id = 'a')`).Scan(&notes, &blockNotes, &owners); err != nil {
			t.Fatal(err)
		}
		if notes != 2 || blockNotes != 3 || owners != 1 {
			t.Errorf("%s: the app's rows changed: %d edge notes (want 2), %d block notes (want 3), %d owners of a (want 1)",
				when, notes, blockNotes, owners)
		}
		if err := db.QueryRow(`PRAGMA foreign_keys`).Scan(&on); err != nil || !on {
			t.Errorf("%s: foreign keys were left off (%v)", when, err)
		}
	}
	latest, _ := schema.Latest()
	for v := latest; v > 5; v-- { // down through the rebuild of step 6
		if _, err := schema.Down(db, schema.DownOptions{}); err != nil {
			t.Fatalf("down from %d: %v", v, err)
		}
	}
	check("down to 5")
	mustUp(t, db) // up through the rebuild
	check("up again")
	if _, err := schema.Down(db, schema.DownOptions{All: true, Force: true}); err != nil {
		t.Fatal(err)
	}
	check("down --all --force")
}

func mustExecAll(t *testing.T, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}
