package schema_test

import (
	"context"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/schema"
)

// TestMappedObjectDropsKeepTheApps: going below the mapping's step drops
// memworker's change capture and indexes on an app's tables, and leaves an
// app's own trigger and index whose names only share the prefix.
func TestMappedObjectDropsKeepTheApps(t *testing.T) {
	db, _ := openFile(t)
	if _, err := schema.Up(db); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)`,
		`CREATE TABLE audit (id INTEGER)`,
		// memworker's, as declaring a mapping makes them
		`CREATE TRIGGER mem_map_notes_queue_insert AFTER INSERT ON notes BEGIN INSERT INTO mem_dirty_blocks (id) VALUES (CAST(NEW.id AS TEXT)); END`,
		`CREATE INDEX mem_map_5_notes_id_text ON notes (CAST(id AS TEXT))`,
		// the app's own
		`CREATE TRIGGER mem_map_notes_audit AFTER DELETE ON notes BEGIN INSERT INTO audit VALUES (OLD.id); END`,
		`CREATE INDEX mem_map_notes_body ON notes (body)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	drops, err := schema.MappedObjectDrops(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(drops, "\n")
	want := "DROP INDEX IF EXISTS main.\"mem_map_5_notes_id_text\"\nDROP TRIGGER IF EXISTS main.\"mem_map_notes_queue_insert\""
	if got != want {
		t.Errorf("drops:\n%s\nwant:\n%s", got, want)
	}
	if _, err := schema.Down(db, schema.DownOptions{All: true, Force: true}); err != nil {
		t.Fatal(err)
	}
	var left string
	if err := db.QueryRow(`SELECT group_concat(name, ' ') FROM (SELECT name FROM sqlite_master WHERE name LIKE 'mem_map%' ORDER BY name)`).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != "mem_map_notes_audit mem_map_notes_body" {
		t.Errorf("after migrate down --all the file holds %q, want the app's own two", left)
	}
}
