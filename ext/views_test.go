package main

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/schema"
)

// TestViewsUnderUntrustedSchema: the views work in the sqlite3 shell with
// the extension loaded and PRAGMA trusted_schema=OFF (the safe setting,
// under which a view may call only innocuous functions; SQLite's JSON
// functions are not), and their tiers follow the tag rules: a tag that
// holds a comma or spaces never passes for a rule tag.
func TestViewsUnderUntrustedSchema(t *testing.T) {
	path, db := migratedFile(t)
	_, err := db.Exec(`
		INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES
			('core', 'knowledge', 1), ('goal', 'knowledge', 1), ('obs', 'observation', 1), ('odd', 'knowledge', 1),
			('pad', 'knowledge', 1);
		INSERT INTO mem_block_tags VALUES ('core', 'self/constitutional'), ('core', 'topic'), ('goal', 'self/goal'),
			('odd', 'x,self/constitutional'), ('odd', 'say "hi"'), ('odd', 'line
break'), ('pad', ' self/goal'), ('pad', 'self/value' || char(10));
		INSERT INTO mem_edges (from_id, to_id, weight, last_active_hours) VALUES ('core', 'goal', 0.5, 1), ('goal', 'obs', 0.5, 1);
		INSERT INTO mem_facts (id, segment, last_accessed_at) VALUES ('f', 'context', 1800000000);`)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	r := runShell(t, path, `.bail on
PRAGMA trusted_schema = OFF;
SELECT 'count', (SELECT count(*) FROM mem_edges_effective), (SELECT count(*) FROM mem_edges_live),
       (SELECT count(*) FROM mem_edges_decayed), (SELECT count(*) FROM mem_facts_scored), (SELECT count(*) FROM mem_clock);
SELECT id, tier FROM mem_block_tiers ORDER BY id;
`)
	checkSurvived(t, r)
	want := "count|2|2|0|1|1\ncore|permanent\ngoal|durable\nobs|ephemeral\nodd|standard\npad|standard\n"
	if r.exitCode != 0 || r.stdout != want {
		t.Errorf("views under trusted_schema=OFF:\n%s\nstderr: %s\nwant:\n%s", r.stdout, strings.TrimSpace(r.stderr), want)
	}
}

// migratedFile is a fresh file with the memory schema installed, and a
// connection to it (with the functions linked in) for the test's rows.
func migratedFile(t *testing.T) (string, *sql.DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m.db")
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=rwc")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := schema.Up(db); err != nil {
		db.Close()
		t.Fatalf("migrating %s: %v", path, err)
	}
	return path, db
}
