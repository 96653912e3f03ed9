package main

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/schema"
)

func TestMigrateFreshFile(t *testing.T) {
	latest, err := schema.Latest()
	if err != nil {
		t.Fatal(err)
	}
	if latest < 2 {
		t.Fatalf("schema.Latest() = %d; this test steps down one version", latest)
	}
	path := filepath.Join(t.TempDir(), "fresh.db")

	// version on a file that does not exist yet is a failure, not a create.
	wantExit(t, mw(t, "migrate", "version", "--db", path), exitFailure, "no such database file")
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("migrate version created %s", path)
	}

	steps := []struct {
		args []string
		want string
	}{
		{[]string{"migrate", "up"}, fmt.Sprintf("schema at version %d\n", latest)},
		{[]string{"migrate", "version"}, fmt.Sprintf("version %d (this memworker knows up to %d)\n", latest, latest)},
		{[]string{"migrate", "up"}, fmt.Sprintf("schema at version %d\n", latest)}, // idempotent
		{[]string{"migrate", "down"}, fmt.Sprintf("schema at version %d\n", latest-1)},
		{[]string{"migrate", "version"}, fmt.Sprintf("version %d (this memworker knows up to %d)\n", latest-1, latest)},
		{[]string{"migrate", "up"}, fmt.Sprintf("schema at version %d\n", latest)},
		{[]string{"migrate", "down", "--all", "--force"}, "schema at version 0\n"},
		{[]string{"migrate", "version"}, fmt.Sprintf("version 0 (this memworker knows up to %d)\n", latest)},
	}
	for _, s := range steps {
		if s.args[len(s.args)-1] == "--force" {
			// Without --force, a down step that drops data is refused,
			// naming what it would drop, and changes nothing.
			unforced := s.args[:len(s.args)-1]
			wantExit(t, mw(t, append(unforced, "--db", path)...), exitFailure, "step 1 drops every mem_ table", "--force", "nothing was changed")
			if v := ok(t, "migrate", "version", "--db", path).stdout; !strings.HasPrefix(v, fmt.Sprintf("version %d ", latest)) {
				t.Errorf("a refused down changed the version: %q", v)
			}
		}
		r := ok(t, append(s.args, "--db", path)...)
		if r.stdout != s.want {
			t.Errorf("memworker %s: stdout %q, want %q", strings.Join(s.args, " "), r.stdout, s.want)
		}
	}
	// down --all leaves no memory table but golang-migrate's own.
	left := queryRows(t, path, `SELECT name FROM sqlite_master WHERE name LIKE 'mem\_%' ESCAPE '\'
		AND tbl_name != 'mem_schema_migrations' ORDER BY name`)
	if len(left) > 0 {
		t.Errorf("migrate down --all left %v", left)
	}
	// A schema that is not installed is reported as such by the other commands.
	wantExit(t, mw(t, "status", "--db", path), exitFailure, "not installed", "migrate up")
}

// appDB makes an app's own database: a table with rows, an index and a view.
func appDB(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "app.db")
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=rwc")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT, score REAL)`,
		`CREATE INDEX notes_title ON notes(title)`,
		`CREATE VIEW note_titles AS SELECT title FROM notes`,
		`INSERT INTO notes (title, body, score) VALUES ('groceries', 'eggs, milk', 1.5), ('todo', NULL, -2),
			('ideas', 'memory decay inside SQLite', 0.25)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// appDump is the app's schema objects and rows.
func appDump(t *testing.T, path string) string {
	t.Helper()
	objects := queryRows(t, path, `SELECT type, name, sql FROM sqlite_master WHERE tbl_name IN ('notes', 'note_titles') ORDER BY name`)
	rows := queryRows(t, path, `SELECT id, title, body, quote(score) FROM notes ORDER BY id`)
	return strings.Join(objects, "\n") + "\n--\n" + strings.Join(rows, "\n")
}

func TestMigrateLeavesTheAppAlone(t *testing.T) {
	path := appDB(t)
	before := appDump(t, path)
	if !strings.Contains(before, "groceries|eggs, milk|1.5") {
		t.Fatalf("fixture dump looks wrong:\n%s", before)
	}

	ok(t, "migrate", "up", "--db", path)
	if got := appDump(t, path); got != before {
		t.Errorf("migrate up changed the app's table:\n%s\nwant:\n%s", got, before)
	}
	tables := queryRows(t, path, `SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name LIKE 'mem\_%' ESCAPE '\' ORDER BY name`)
	for _, want := range []string{"mem_blocks", "mem_edges", "mem_config", "mem_events", "mem_facts", "mem_schema_migrations", "mem_sweeps"} {
		if !strings.Contains(strings.Join(tables, " "), want) {
			t.Errorf("migrate up did not install %s (have %v)", want, tables)
		}
	}
	// The memory schema is usable in the app's file.
	ok(t, "clock", "advance", "5", "--db", path)
	ok(t, "sweep", "--db", path)

	ok(t, "migrate", "down", "--all", "--force", "--db", path)
	if got := appDump(t, path); got != before {
		t.Errorf("migrate down --all changed the app's table:\n%s\nwant:\n%s", got, before)
	}
	left := queryRows(t, path, `SELECT name FROM sqlite_master WHERE name LIKE 'mem\_%' ESCAPE '\'
		AND tbl_name != 'mem_schema_migrations'`)
	if len(left) > 0 {
		t.Errorf("migrate down --all left %v", left)
	}
}

func TestNewerSchemaIsRefused(t *testing.T) {
	path := demoDB(t)
	exec1(t, path, "UPDATE mem_schema_migrations SET version = 999")
	for _, args := range [][]string{
		{"migrate", "up"},
		{"migrate", "down"},
		{"sweep"},
		{"sweep", "--dry-run"},
		{"status"},
	} {
		before := fileHash(t, path)
		r := mw(t, append(args, "--db", path)...)
		wantExit(t, r, exitFailure, "newer", "999")
		if fileHash(t, path) != before {
			t.Errorf("memworker %s on a newer schema changed the file", strings.Join(args, " "))
		}
	}
	// version still reads it, and says how far this binary goes.
	r := ok(t, "migrate", "version", "--db", path)
	if !strings.HasPrefix(r.stdout, "version 999 ") {
		t.Errorf("migrate version: %q", r.stdout)
	}
}
