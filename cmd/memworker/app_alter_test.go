package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdecay/memdecay/schema"
)

// notesSchema is an app's own memory: notes and the links between them, with
// its own foreign keys, and a table memdecay knows nothing of.
const notesSchema = `
CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT, extra TEXT, kind TEXT, state TEXT DEFAULT 'active',
    uses INTEGER DEFAULT 0, last_used_at TEXT);
CREATE TABLE links (id INTEGER PRIMARY KEY,
    src INTEGER NOT NULL REFERENCES notes (id) ON DELETE CASCADE,
    dst INTEGER NOT NULL REFERENCES notes (id) ON DELETE CASCADE,
    kind TEXT NOT NULL, strength REAL, touched_at TEXT);
CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT);
INSERT INTO notes (id, body, kind, last_used_at) VALUES (1, 'a', 'note', '2026-11-01T10:00:00+02:00'),
    (2, 'b', 'note', '2026-11-02T10:00:00+02:00'), (3, 'c', 'goal', '2026-11-03T10:00:00+02:00');
INSERT INTO links (src, dst, kind, strength, touched_at) VALUES (1, 2, 'cites', 0.9, '2026-11-01T10:00:00+02:00'),
    (2, 3, 'cites', 0.8, '2026-11-02T10:00:00+02:00'), (1, 3, 'about', 0.7, '2026-11-03T10:00:00+02:00');
INSERT INTO settings VALUES ('theme', 'dark');
`

const notesMapping = `
[nodes]
table = "notes"
key = "id"
last_used = "last_used_at"
last_used_clock = "iso8601"
category = "kind"
status = "state"
status_active = ["active"]
status_archived = "archived"
reinforcement_count = "uses"

[edges]
table = "links"
key = "id"
from = "src"
to = "dst"
directed = true
kind = "kind"
weight = "strength"
last_active = "touched_at"
last_active_clock = "iso8601"
`

// appMigration is the app's own schema change, run as its ORM or the
// sqlite3 shell would: renames and drops of columns and tables, and a
// table rebuilt outside a transaction (SQLite's twelve steps, in short).
const appMigration = `
ALTER TABLE notes RENAME COLUMN body TO text;
ALTER TABLE notes DROP COLUMN extra;
ALTER TABLE settings RENAME TO app_settings;
CREATE TABLE app_settings_new (name TEXT PRIMARY KEY, value TEXT NOT NULL DEFAULT '');
INSERT INTO app_settings_new SELECT name, value FROM app_settings;
DROP TABLE app_settings;
ALTER TABLE app_settings_new RENAME TO app_settings;
SELECT 'migrated', count(*) FROM app_settings;
`

// plainShell runs script in the sqlite3 shell on path without loading
// memdecay (a connection of the app's own), stopping at the first error.
func plainShell(t *testing.T, path, script string) (string, error) {
	t.Helper()
	cmd := exec.Command("sqlite3", "-bail", path)
	cmd.Stdin = strings.NewReader(script)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestAppMigrationsRunWithoutTheExtension: on a database memworker's
// schema and a mapping were installed into, an app's own migrations run on
// a connection that never loaded memdecay. The release before stored
// views that call memdecay's functions, which SQLite re-checks on every
// ALTER TABLE; migrate up takes them out of the file, and the readers'
// views still answer, over the app's tables, on any connection that loads
// the extension: the sqlite3 shell's and Python's.
func TestAppMigrationsRunWithoutTheExtension(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.db")
	if out, err := plainShell(t, path, notesSchema); err != nil {
		t.Fatalf("the app's schema: %v\n%s", err, out)
	}
	ok(t, "migrate", "up", "--db", path)
	file := filepath.Join(t.TempDir(), "memory.toml")
	if err := os.WriteFile(file, []byte(notesMapping), 0o644); err != nil {
		t.Fatal(err)
	}
	ok(t, "map", "load", file, "--db", path)

	// The schema as the release before the readers' views step left it:
	// its views in the file (down past every step since, one at a time).
	for v := latestVersion(t); v > 17; v-- {
		ok(t, "migrate", "down", "--db", path)
	}
	if out, err := plainShell(t, path, "BEGIN;\n"+appMigration+"ROLLBACK;\n"); err == nil || !strings.Contains(out, "no such function") {
		t.Fatalf("before the step, the app's migration should fail on the stored views; got %v\n%s", err, out)
	}

	ok(t, "migrate", "up", "--db", path)
	out, err := plainShell(t, path, appMigration)
	if err != nil || !strings.Contains(out, "migrated|1") {
		t.Fatalf("the app's migration without memdecay: %v\n%s", err, out)
	}
	if objs := queryRows(t, path, `SELECT name FROM sqlite_schema WHERE sql LIKE '%decay_tier(%' OR sql LIKE '%lambda_edge(%'
		OR sql LIKE '%effective_weight(%' OR sql LIKE '%tideline_score(%' OR sql LIKE '%policy_curve(%'`); len(objs) > 0 {
		t.Errorf("schema objects still call memdecay's functions: %v", objs)
	}

	// The readers' views, over the app's links, on connections of its own.
	so := os.Getenv("MEMDECAY_SO")
	if so == "" {
		t.Fatal("MEMDECAY_SO is not set: run make unit (or set it to build/memdecay.so)")
	}
	const query = `SELECT count(*), group_concat(end_a || '>' || end_b, ' ') FROM (SELECT * FROM mem_edges_effective ORDER BY end_a, end_b)`
	out, err = plainShell(t, path, ".load "+strings.TrimSuffix(so, ".so")+"\n"+query+";\n")
	if want := "3|1>2 1>3 2>3\n"; err != nil || out != want {
		t.Errorf("mem_edges_effective in the sqlite3 shell: %v\n%s\nwant %s", err, out, want)
	}
	py := exec.Command("/usr/bin/python3", "-c", `
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1])
conn.enable_load_extension(True)
conn.load_extension(sys.argv[2])
print(conn.execute(sys.argv[3]).fetchone())
print(conn.execute("SELECT count(*) FROM mem_edges_effective WHERE end_a = '1'").fetchone())
`, path, so, query)
	pyOut, err := py.CombinedOutput()
	if want := "(3, '1>2 1>3 2>3')\n(2,)\n"; err != nil || string(pyOut) != want {
		t.Errorf("the views from Python: %v\n%s\nwant %s", err, pyOut, want)
	}
	ok(t, "sweep", "--db", path)
}

// TestInvalidRowsNamedByTheAppsTable: through a mapping, a bad row is
// named with the app's own table, by the sweep and by decayed --invalid.
func TestInvalidRowsNamedByTheAppsTable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.db")
	if out, err := plainShell(t, path, notesSchema+`INSERT INTO links (id, src, dst, kind, strength, touched_at) VALUES (9, 1, 2, 'about', 'strong', NULL);`); err != nil {
		t.Fatalf("the app's schema: %v\n%s", err, out)
	}
	ok(t, "migrate", "up", "--db", path)
	file := filepath.Join(t.TempDir(), "memory.toml")
	if err := os.WriteFile(file, []byte(notesMapping), 0o644); err != nil {
		t.Fatal(err)
	}
	ok(t, "map", "load", file, "--db", path)
	if r := ok(t, "sweep", "--db", path); !strings.Contains(r.stdout, "skipped invalid edge of links 9: links.strength is text") {
		t.Errorf("sweep's output does not name the app's table:\n%s", r.stdout)
	}
	if r := ok(t, "decayed", "--invalid", "--db", path); !strings.Contains(r.stdout, "links") || strings.Contains(r.stdout, "mem_edges") {
		t.Errorf("decayed --invalid does not name the app's table:\n%s", r.stdout)
	}
}

// latestVersion is the schema version migrate up installs.
func latestVersion(t *testing.T) uint {
	t.Helper()
	v, err := schema.Latest()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestUpgradeKeepsDerivedStateOnAppTables: on an app's own tables, with
// its foreign keys (ON DELETE CASCADE) and memworker's change capture on
// them, migrate down and up across steps that keep the derived state (the
// archives' index of subjects, the reads recorded for tune), with the app
// writing and altering its tables meanwhile on a connection that never
// loaded memdecay: the next sweep is incremental, and leaves the app's
// rows, its events and its report as on a copy never migrated.
func TestUpgradeKeepsDerivedStateOnAppTables(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.db")
	// Notes 5 to 7 and their links outlive the first sweep; the second
	// finds them due through the derived state it stored.
	const recent = `INSERT INTO notes (id, body, kind, last_used_at) VALUES (5, 'e', 'note', '2026-11-03T10:00:00+02:00'),
    (6, 'f', 'note', '2026-11-03T10:00:00+02:00'), (7, 'g', 'goal', '2026-11-03T10:00:00+02:00');
INSERT INTO links (src, dst, kind, strength, touched_at) VALUES (5, 6, 'cites', 0.6, '2026-11-03T10:00:00+02:00'),
    (6, 7, 'about', 0.9, '2026-11-03T10:00:00+02:00');
`
	if out, err := plainShell(t, path, notesSchema+recent); err != nil {
		t.Fatalf("the app's schema: %v\n%s", err, out)
	}
	at := okAt(t, time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC))
	at("migrate", "up", "--db", path)
	file := filepath.Join(t.TempDir(), "memory.toml")
	if err := os.WriteFile(file, []byte(notesMapping), 0o644); err != nil {
		t.Fatal(err)
	}
	at("map", "load", file, "--db", path)
	at("sweep", "--wall-now", "2026-11-03T09:00:00Z", "--db", path) // derived state and its fingerprint stored

	latest := latestVersion(t)
	layout := schema.DerivedLayout(latest)
	if layout >= latest-1 {
		t.Fatalf("steps %d and %d should keep the derived state (schema.DerivedLayout %d)", latest-1, latest, layout)
	}
	never, migrated := filepath.Join(t.TempDir(), "never.db"), filepath.Join(t.TempDir(), "migrated.db")
	for _, dst := range []string{never, migrated} {
		if out, err := plainShell(t, path, "VACUUM INTO '"+dst+"';\n"); err != nil {
			t.Fatalf("copying the file: %v\n%s", err, out)
		}
	}
	for v := latest; v > layout; v-- {
		at("migrate", "down", "--db", migrated)
	}
	// The app's writes, its foreign keys on: a link used, a note and a
	// weak link added, a note deleted with its links (CASCADE), a column
	// of its own renamed.
	const appWrites = `PRAGMA foreign_keys = ON;
UPDATE links SET touched_at = '2027-01-20T10:00:00+02:00' WHERE id = 1;
INSERT INTO notes (id, body, kind, last_used_at) VALUES (4, 'd', 'note', '2027-01-20T10:00:00+02:00');
INSERT INTO links (src, dst, kind, strength, touched_at) VALUES (4, 1, 'cites', 0.05, '2027-01-20T10:00:00+02:00');
DELETE FROM notes WHERE id = 3;
ALTER TABLE notes RENAME COLUMN body TO text;
`
	for _, p := range []string{never, migrated} {
		if out, err := plainShell(t, p, appWrites); err != nil {
			t.Fatalf("the app's writes: %v\n%s", err, out)
		}
	}
	at("migrate", "up", "--db", migrated)

	later := okAt(t, time.Date(2027, 1, 21, 0, 0, 0, 0, time.UTC))
	want := decodeJSON(t, later("sweep", "--json", "--wall-now", "2027-01-21T00:00:00Z", "--db", never))
	got := decodeJSON(t, later("sweep", "--json", "--wall-now", "2027-01-21T00:00:00Z", "--db", migrated))
	if got["full"] != false || want["full"] != false {
		t.Errorf("full sweeps: migrated %v, never migrated %v; want both incremental", got["full"], want["full"])
	}
	if removed := want["edges_pruned"].(float64) + want["edges_decayed"].(float64); removed == 0 {
		t.Fatalf("the sweep removed no link: %v", want)
	}
	for _, k := range []string{"archived", "edges_pruned", "edges_decayed", "edges_removed_with_blocks", "reinforced",
		"total_edges_after", "bridge_threshold"} {
		if fmt.Sprint(got[k]) != fmt.Sprint(want[k]) {
			t.Errorf("%s: %v after migrating down and up, %v never migrated", k, got[k], want[k])
		}
	}
	for _, q := range []string{`SELECT * FROM notes ORDER BY id`, `SELECT * FROM links ORDER BY id`,
		`SELECT subject_kind, subject_id, action, reason, detail FROM mem_events ORDER BY id`} {
		if g, w := queryRows(t, migrated, q), queryRows(t, never, q); strings.Join(g, "\n") != strings.Join(w, "\n") {
			t.Errorf("%s after migrating down and up:\n%s\nnever migrated:\n%s", q, strings.Join(g, "\n"), strings.Join(w, "\n"))
		}
	}
	if out, err := plainShell(t, migrated, "PRAGMA foreign_key_check;\n"); err != nil || out != "" {
		t.Errorf("foreign keys after the sweep: %v\n%s", err, out)
	}
}
