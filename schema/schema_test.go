package schema_test

import (
	"database/sql"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/memdecay/memdecay/ext/shim" // the views need the functions
	"github.com/memdecay/memdecay/schema"
)

func openFile(t *testing.T) (*sql.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "app.db")
	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

func TestUpDownEveryStep(t *testing.T) {
	db, _ := openFile(t)
	if _, err := db.Exec(`CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('keep me')`); err != nil {
		t.Fatal(err)
	}
	latest, err := schema.Latest()
	if err != nil || latest < 3 {
		t.Fatalf("latest %d, %v", latest, err)
	}
	if err := schema.Check(db); !errors.Is(err, schema.ErrNotInstalled) {
		t.Fatalf("check before install: %v", err)
	}
	if v, err := schema.Up(db); err != nil || v != latest {
		t.Fatalf("up: %d, %v", v, err)
	}
	if err := schema.Check(db); err != nil {
		t.Fatal(err)
	}
	for v := latest; v > 0; v-- {
		got, err := schema.Down(db, schema.DownOptions{Force: true})
		if err != nil || got != v-1 {
			t.Fatalf("down from %d: %d, %v", v, got, err)
		}
	}
	var memTables int
	db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name LIKE 'mem\_%' ESCAPE '\' AND tbl_name != ?`, schema.VersionTable).Scan(&memTables)
	if memTables != 0 {
		t.Errorf("%d mem_ objects left after every down", memTables)
	}
	if _, err := schema.Up(db); err != nil {
		t.Fatalf("up again: %v", err)
	}
	var body string
	if err := db.QueryRow(`SELECT body FROM notes`).Scan(&body); err != nil || body != "keep me" {
		t.Errorf("the app's table changed: %q, %v", body, err)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	db, _ := openFile(t)
	if _, err := schema.Up(db); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE ` + schema.VersionTable + ` SET version = 999`); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{"check": schema.Check(db), "up": upErr(db), "down": downErr(db)} {
		if !errors.Is(err, schema.ErrTooNew) || !strings.Contains(err.Error(), "999") {
			t.Errorf("%s on a newer schema: %v", name, err)
		}
	}
}

func upErr(db *sql.DB) error { _, err := schema.Up(db); return err }
func downErr(db *sql.DB) error {
	_, err := schema.Down(db, schema.DownOptions{Force: true})
	return err
}

// TestAppWritesWithoutExtension: an app that never loads memdecay (the
// plain sqlite3 shell here) must be able to write every mem_ table: no
// memdecay function in a table, index, default, CHECK or trigger.
func TestAppWritesWithoutExtension(t *testing.T) {
	db, path := openFile(t)
	if _, err := schema.Up(db); err != nil {
		t.Fatal(err)
	}
	db.Close()
	shell, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Fatal("the sqlite3 shell is not on PATH: install it (apt-get install sqlite3)")
	}
	script := `.bail on
PRAGMA foreign_keys = ON;
UPDATE mem_config SET value = value + 8 WHERE key = 'active_hours';
INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES ('a', 'knowledge', 8), ('b', 'mind', 8);
INSERT INTO mem_block_tags VALUES ('a', 'self/goal');
INSERT INTO mem_edges (from_id, to_id, weight, last_active_hours) VALUES ('a', 'b', 0.5, 8);
UPDATE mem_edges SET reinforcement_count = reinforcement_count + 1, last_active_hours = 9;
INSERT INTO mem_edges (from_id, to_id, weight, origin, last_active_hours) VALUES ('a', 'b', 0.7, 'outcome', 9)
  ON CONFLICT (from_id, to_id) DO UPDATE SET reinforcement_count = reinforcement_count + 1, last_active_hours = 9;
INSERT INTO mem_facts (id, segment, last_accessed_at) VALUES ('f', 'context', 1800000000);
UPDATE mem_facts SET importance = min(1.0, importance + 0.05), access_count = access_count + 1;
INSERT INTO mem_edge_policies (relation_type, model, params, clock, threshold, action) VALUES ('works_on', 'half_life', '{"half_life":"90d"}', 'wall', 0.1, 'exclude');
DELETE FROM mem_block_tags;
DELETE FROM mem_edges;
DELETE FROM mem_facts;
DELETE FROM mem_blocks;
SELECT 'tier', tier FROM mem_facts;
SELECT 'ok';
`
	cmd := exec.Command(shell, path)
	cmd.Stdin = strings.NewReader(script)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasSuffix(strings.TrimSpace(string(out)), "ok") {
		t.Fatalf("plain sqlite3 writes failed: %v\n%s", err, out)
	}
	// The segment trigger filled the defaults before the delete.
	cmd = exec.Command(shell, path, `INSERT INTO mem_facts (id, segment) VALUES ('g', 'knowledge'); SELECT tier, importance, decay_rate FROM mem_facts WHERE id = 'g';`)
	out, err = cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "long|0.6|0.03" {
		t.Errorf("segment defaults without the extension: %q, %v", out, err)
	}
}
