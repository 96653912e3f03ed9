package schema_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"

	migratesqlite "github.com/golang-migrate/migrate/v4/database/sqlite3"

	"github.com/memdecay/memdecay/schema"
)

// dumpAll renders every schema object and every row of the app's tables.
func dumpAll(t *testing.T, db *sql.DB) string {
	t.Helper()
	var b strings.Builder
	rows, err := db.Query(`SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_master ORDER BY type, name`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var typ, name, tbl, text string
		if err := rows.Scan(&typ, &name, &tbl, &text); err != nil {
			t.Fatal(err)
		}
		b.WriteString(typ + " " + name + " " + tbl + " " + text + "\n")
		if typ == "table" {
			tables = append(tables, name)
		}
	}
	rows.Close()
	for _, tb := range tables {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM "` + tb + `"`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s: %d rows\n", tb, n)
	}
	return b.String()
}

// An object of the app's holding a name a migration needs stops the
// migration with a short message naming it, and everything the command had
// already done is undone: the app's schema is left exactly as it was, with
// no version table and nothing dirty.
func TestClashRefusedNothingChanged(t *testing.T) {
	for _, c := range []struct{ name, app, want string }{
		{"table in the first step", `CREATE TABLE mem_events (id INTEGER PRIMARY KEY, what TEXT); INSERT INTO mem_events (what) VALUES ('mine')`,
			"table named mem_events"},
		// Created by the fifth step: the four before it are rolled back too.
		{"view in a later step", `CREATE TABLE notes (x); CREATE VIEW mem_clock AS SELECT x FROM notes`, "view named mem_clock"},
		{"index", `CREATE TABLE notes (x); CREATE INDEX mem_sweep_plans ON notes (x)`, "an index named mem_sweep_plans"},
	} {
		t.Run(c.name, func(t *testing.T) {
			db, _ := openFile(t)
			if _, err := db.Exec(c.app); err != nil {
				t.Fatal(err)
			}
			before := dumpAll(t, db)
			_, err := schema.Up(db)
			if err == nil {
				t.Fatal("migrate up over a clashing object succeeded")
			}
			msg := err.Error()
			for _, want := range []string{c.want, "does not expect", "nothing was changed"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not say %q", msg, want)
				}
			}
			if len(msg) > 400 || strings.Contains(msg, "CREATE") || strings.Count(msg, "\n") > 0 {
				t.Errorf("error is not short (%d chars, SQL or several lines): %s", len(msg), msg)
			}
			if after := dumpAll(t, db); after != before {
				t.Errorf("a refused migration changed the file:\n%s\nwant:\n%s", after, before)
			}
			if v, dirty, err := schema.Version(db); v != 0 || dirty || err != nil {
				t.Errorf("version after the refusal: %d dirty=%v %v", v, dirty, err)
			}
		})
	}
}

// A step that fails half-way through a command leaves the file at the
// version it had, clean: the steps before it in the same command are undone.
func TestFailedStepLeavesVersionClean(t *testing.T) {
	db, _ := openFile(t)
	db.SetMaxOpenConns(1) // the PRAGMA check below reads the migration's connection
	mustUp(t, db)
	for v, _, _ := schema.Version(db); v > 4; v, _, _ = schema.Version(db) {
		if _, err := schema.Down(db, schema.DownOptions{Force: true}); err != nil {
			t.Fatal(err)
		}
	}
	// Step 5 runs, then step 6 stops right after its PRAGMA
	// legacy_alter_table = ON, on a table of the app's named like the
	// table it builds.
	if _, err := db.Exec(`CREATE TABLE mem_edges_rebuilt (app TEXT)`); err != nil {
		t.Fatal(err)
	}
	before := dumpAll(t, db)
	_, err := schema.Up(db)
	if err == nil || !strings.Contains(err.Error(), "migration 6") || !strings.Contains(err.Error(), "table named mem_edges_rebuilt") {
		t.Fatalf("up over a clashing table: %v", err)
	}
	if after := dumpAll(t, db); after != before {
		t.Errorf("the step before the failing one was kept:\n%s\nwant:\n%s", after, before)
	}
	if v, dirty, err := schema.Version(db); v != 4 || dirty || err != nil {
		t.Errorf("version after a failed step: %d dirty=%v %v, want 4 clean", v, dirty, err)
	}
	var legacy int
	if err := db.QueryRow(`PRAGMA legacy_alter_table`).Scan(&legacy); err != nil || legacy != 0 {
		t.Errorf("legacy_alter_table %d (%v) after a failed migration", legacy, err)
	}
}

// Every object memdecay makes is prefixed mem_ (SQLite's own automatic
// indexes aside), the version table's index included, so an app that runs
// golang-migrate itself gets its own version_unique index.
func TestEveryObjectPrefixed(t *testing.T) {
	db, _ := openFile(t)
	mustUp(t, db)
	var others []string
	rows, err := db.Query(`SELECT type || ' ' || name FROM sqlite_master
		WHERE name NOT LIKE 'mem\_%' ESCAPE '\' AND name NOT LIKE 'sqlite\_autoindex\_mem\_%' ESCAPE '\'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		rows.Scan(&s)
		others = append(others, s)
	}
	rows.Close()
	if len(others) > 0 {
		t.Errorf("objects without the mem_ prefix: %v", others)
	}

	// The app's own golang-migrate, after memdecay, indexes its own table.
	drv, err := migratesqlite.WithInstance(db, &migratesqlite.Config{})
	if err != nil {
		t.Fatal(err)
	}
	_ = drv
	var on string
	if err := db.QueryRow(`SELECT tbl_name FROM sqlite_master WHERE type = 'index' AND name = 'version_unique'`).Scan(&on); err != nil || on != "schema_migrations" {
		t.Errorf("the app's golang-migrate index version_unique is on %q (%v), want schema_migrations", on, err)
	}
	// And memdecay, after the app's golang-migrate, still works.
	if _, err := schema.Down(db, schema.DownOptions{All: true, Force: true}); err != nil {
		t.Fatal(err)
	}
	mustUp(t, db)
	if err := schema.Check(db); err != nil {
		t.Fatal(err)
	}
}

// A file migrated by earlier memworkers, through golang-migrate's driver,
// has version_unique on mem_schema_migrations: the next migrate renames it.
func TestOldVersionIndexRenamed(t *testing.T) {
	db, _ := openFile(t)
	mustUp(t, db)
	if _, err := db.Exec(`DROP INDEX mem_schema_migrations_version;
		CREATE UNIQUE INDEX version_unique ON mem_schema_migrations (version)`); err != nil {
		t.Fatal(err)
	}
	mustUp(t, db) // nothing pending: only the index changes
	var names []string
	rows, _ := db.Query(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'mem_schema_migrations' ORDER BY name`)
	for rows.Next() {
		var s string
		rows.Scan(&s)
		names = append(names, s)
	}
	rows.Close()
	if strings.Join(names, ",") != "mem_schema_migrations_version" {
		t.Errorf("indexes on the version table: %v", names)
	}
}

// A file another tool left dirty is refused until migrate force records a
// version; force refuses a version this binary does not know.
func TestForceClearsDirty(t *testing.T) {
	db, _ := openFile(t)
	mustUp(t, db)
	latest, _ := schema.Latest()
	if _, err := db.Exec(`UPDATE mem_schema_migrations SET dirty = 1`); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{"check": schema.Check(db), "up": upErr(db), "down": downErr(db)} {
		if err == nil || !strings.Contains(err.Error(), "dirty") || !strings.Contains(err.Error(), "migrate force") {
			t.Errorf("%s on a dirty file: %v, want the dirty state and the way out", name, err)
		}
	}
	if err := schema.Force(db, latest+1); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("force to an unknown version: %v", err)
	}
	// A guard is asked, inside the transaction, before the version changes.
	if err := schema.Force(db, latest, func(context.Context, *sql.Conn) error { return errors.New("held") }); err == nil || err.Error() != "held" {
		t.Errorf("force with a refusing guard: %v", err)
	}
	if err := schema.Force(db, latest); err != nil {
		t.Fatal(err)
	}
	if err := schema.Check(db); err != nil {
		t.Errorf("after force: %v", err)
	}
	// A clean file is refused: forcing it would make migrate run the wrong steps.
	if err := schema.Force(db, 1); err == nil || !strings.Contains(err.Error(), "clean") {
		t.Errorf("force on a clean file: %v", err)
	}
	if v, _, _ := schema.Version(db); v != latest {
		t.Errorf("a refused force changed the version to %d", v)
	}
}

// A guard runs inside the transaction and stops the migration before
// anything changes.
func TestGuardStopsMigration(t *testing.T) {
	db, _ := openFile(t)
	mustUp(t, db)
	before := dumpAll(t, db)
	stop := errors.New("a sweep is running")
	called := false
	guard := func(ctx context.Context, conn *sql.Conn) error {
		called = true
		var n int
		// The guard sees the database through the migration's own connection.
		if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM mem_sweeps`).Scan(&n); err != nil {
			return err
		}
		return stop
	}
	if _, err := schema.Down(db, schema.DownOptions{Force: true}, guard); !errors.Is(err, stop) || !called {
		t.Errorf("down with a refusing guard: %v (called %v)", err, called)
	}
	if after := dumpAll(t, db); after != before {
		t.Error("a guarded migration changed the file")
	}
	// Nothing to do: the guard is not asked.
	called = false
	if _, err := schema.Up(db, guard); err != nil || called {
		t.Errorf("up with nothing pending: %v (guard called %v)", err, called)
	}
}
