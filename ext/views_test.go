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

// TestViewsHostileStoredQueries: the readers' views run only what
// mem_reader_views holds as a read-only SELECT; a query that writes, one
// that is not SQL, a missing row or a file without the table is an error
// naming the view, never a crash, and nothing is written.
func TestViewsHostileStoredQueries(t *testing.T) {
	path, db := migratedFile(t)
	_, err := db.Exec(`
		UPDATE mem_reader_views SET sql = 'DELETE FROM mem_config' WHERE name = 'mem_clock';
		UPDATE mem_reader_views SET sql = 'not sql at all (' WHERE name = 'mem_block_tiers';
		UPDATE mem_reader_views SET sql = 'SELECT 1 AS a; DELETE FROM mem_config' WHERE name = 'mem_facts_scored';
		DELETE FROM mem_reader_views WHERE name = 'mem_edges_live';
		UPDATE mem_reader_views SET sql = 'SELECT 1 AS a' || char(0) || 'x' WHERE name = 'mem_edges_decayed';`)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	for view, want := range map[string]string{
		"mem_clock":         "memdecay: mem_clock: the query mem_reader_views holds for it is not a read-only SELECT",
		"mem_block_tiers":   "memdecay: mem_block_tiers: ",
		"mem_edges_live":    "memdecay: mem_edges_live: mem_reader_views holds no query for it",
		"mem_facts_scored":  "memdecay: mem_facts_scored: ",
		"mem_edges_decayed": "",
	} {
		r := runShell(t, path, "SELECT * FROM "+view+";\nSELECT 'config', count(*) FROM mem_config;\n")
		checkSurvived(t, r)
		if want != "" && !strings.Contains(r.stderr, want) {
			t.Errorf("%s: stderr %q, want %q", view, r.stderr, want)
		}
		if !strings.Contains(r.stdout, "config|") || strings.Contains(r.stdout, "config|0") {
			t.Errorf("%s: mem_config after reading the view: %q", view, r.stdout)
		}
	}
	empty := filepath.Join(t.TempDir(), "empty.db")
	r := runShell(t, empty, "SELECT * FROM mem_edges_live;\n")
	checkSurvived(t, r)
	if !strings.Contains(r.stderr, "memdecay: mem_edges_live: this database has no memdecay schema") {
		t.Errorf("a file without memdecay's schema: %q", r.stderr)
	}
}
