package schema_test

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/schema"
)

// atVersion5 installs the schema up to version 5, the last with a rowid
// mem_edges, and fills it the way an app does, with its own index and
// trigger on mem_edges.
func atVersion5(t *testing.T) *sql.DB {
	t.Helper()
	db, _ := openFile(t)
	db.SetMaxOpenConns(1)
	mustUp(t, db)
	for v, _, _ := schema.Version(db); v > 5; v, _, _ = schema.Version(db) {
		if _, err := schema.Down(db, schema.DownOptions{Force: true}); err != nil {
			t.Fatal(err)
		}
	}
	var b strings.Builder
	b.WriteString(`INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES ('b000', 'knowledge', 1)`)
	for i := 1; i < 60; i++ {
		fmt.Fprintf(&b, ", ('b%03d', 'mind', %d)", i, i)
	}
	b.WriteString(";\n")
	// Rows inserted out of key order, with every kind of value an app may
	// leave: text, NULL, a blob, a huge number, a note.
	for i := 59; i > 0; i-- {
		fmt.Fprintf(&b, `INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, relation_type, origin,
			last_active_hours, last_observed_at, pinned, note, created_at, excluded)
			VALUES ('b%03d', 'b%03d', %s, %d, 'similar', 'outcome', %s, 1800000000, %d, 'note %d', 1700000000, %d);`+"\n",
			i%7, 59-i/2+i%3, []string{"0.5", "'heavy'", "NULL", "x'00ff'", "1e300"}[i%5], i%4,
			[]string{"10.5", "NULL"}[i%2], i%2, i, i%2)
	}
	b.WriteString(`CREATE TABLE app_edge_log (from_id TEXT, to_id TEXT);
		CREATE INDEX app_edges_note ON mem_edges (note);
		CREATE TRIGGER app_edges_log AFTER INSERT ON mem_edges BEGIN
			INSERT INTO app_edge_log VALUES (NEW.from_id, NEW.to_id);
		END;`)
	if _, err := db.Exec(b.String()); err != nil {
		t.Fatal(err)
	}
	return db
}

func mustUp(t *testing.T, db *sql.DB) {
	t.Helper()
	if _, err := schema.Up(db); err != nil {
		t.Fatal(err)
	}
}

// edgeRows renders mem_edges in key order, every column with its type.
func edgeRows(t *testing.T, db *sql.DB) string {
	t.Helper()
	rows, err := db.Query(`SELECT quote(from_id), quote(to_id), quote(weight), quote(reinforcement_count), quote(relation_type),
		quote(origin), quote(last_active_hours), quote(last_observed_at), quote(pinned), quote(note), quote(created_at),
		quote(excluded) FROM mem_edges ORDER BY from_id, to_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var c [12]string
		ptrs := make([]any, len(c))
		for i := range c {
			ptrs[i] = &c[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintln(&b, strings.Join(c[:], " "))
	}
	return b.String()
}

// edgeObjects lists mem_edges' indexes and triggers.
func edgeObjects(t *testing.T, db *sql.DB) string {
	t.Helper()
	rows, err := db.Query(`SELECT type || ' ' || name FROM sqlite_master
		WHERE tbl_name = 'mem_edges' AND type IN ('index', 'trigger') AND sql IS NOT NULL ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	return strings.Join(names, ", ")
}

func withoutRowid(t *testing.T, db *sql.DB) bool {
	t.Helper()
	_, err := db.Exec(`SELECT rowid FROM mem_edges LIMIT 1`)
	return err != nil
}

// TestEdgesRebuildKeepsEverything: the migration that stores mem_edges by
// key keeps every row to the byte, the queue triggers, the views and the
// app's own index and trigger, and its down step does too.
func TestEdgesRebuildKeepsEverything(t *testing.T) {
	db := atVersion5(t)
	rows, objects := edgeRows(t, db), edgeObjects(t, db)
	if n := strings.Count(rows, "\n"); n != 59 || !strings.Contains(objects, "app_edges_note") {
		t.Fatalf("the app's file: %d edges, objects %s", n, objects)
	}
	if withoutRowid(t, db) {
		t.Fatal("mem_edges has no rowid at version 5")
	}
	mustUp(t, db)
	if !withoutRowid(t, db) {
		t.Error("mem_edges still has a rowid after the migration")
	}
	if got := edgeRows(t, db); got != rows {
		t.Errorf("rows changed by the migration:\nbefore:\n%s\nafter:\n%s", rows, got)
	}
	// Every object stays but mem_edges_relation, which step 12 drops.
	if want := strings.Replace(objects, "index mem_edges_relation, ", "", 1); edgeObjects(t, db) != want {
		t.Errorf("indexes and triggers: before %s; after %s", objects, edgeObjects(t, db))
	}
	// The triggers work: the queue's and the app's.
	var queued, logged, viewed int
	err := db.QueryRow(`SELECT count(*) FROM mem_dirty_edges`).Scan(&queued)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO mem_edges (from_id, to_id, weight) VALUES ('b000', 'b059', 0.4)`); err != nil {
		t.Fatal(err)
	}
	err = db.QueryRow(`SELECT (SELECT count(*) FROM mem_dirty_edges) - ?, (SELECT count(*) FROM app_edge_log),
		(SELECT count(*) FROM mem_edges_effective)`, queued).Scan(&queued, &logged, &viewed)
	if err != nil || queued != 1 || logged != 1 || viewed == 0 {
		t.Errorf("after an insert: %d queued, %d logged by the app's trigger, %d rows in mem_edges_effective, %v", queued, logged, viewed, err)
	}
	// The constraints hold.
	for _, bad := range []string{
		`INSERT INTO mem_edges (from_id, to_id, weight) VALUES ('b000', 'b059', 0.1)`,
		`INSERT INTO mem_edges (from_id, to_id, weight) VALUES ('b059', 'b000', 0.1)`,
		`INSERT INTO mem_edges (from_id, to_id, weight, origin) VALUES ('b001', 'b058', 0.1, 'guess')`,
	} {
		if _, err := db.Exec(bad); err == nil {
			t.Errorf("accepted: %s", bad)
		}
	}
	rows = edgeRows(t, db)
	for v, _, _ := schema.Version(db); v > 5; v, _, _ = schema.Version(db) {
		if _, err := schema.Down(db, schema.DownOptions{Force: true}); err != nil {
			t.Fatal(err)
		}
	}
	if withoutRowid(t, db) {
		t.Error("mem_edges has no rowid after the down step")
	}
	if got := edgeRows(t, db); got != rows {
		t.Errorf("rows changed by the down step:\nbefore:\n%s\nafter:\n%s", rows, got)
	}
	if got := edgeObjects(t, db); got != objects {
		t.Errorf("indexes and triggers after the down step: %s, want %s", got, objects)
	}
}

// TestEdgesRebuildRefusesUnknownColumns: a column an app added to
// mem_edges would be lost by the rebuild, so the migration is refused,
// naming it, and nothing changes.
func TestEdgesRebuildRefusesUnknownColumns(t *testing.T) {
	db := atVersion5(t)
	if _, err := db.Exec(`ALTER TABLE mem_edges ADD COLUMN app_score REAL DEFAULT 7`); err != nil {
		t.Fatal(err)
	}
	rows := edgeRows(t, db)
	_, err := schema.Up(db)
	if err == nil || !strings.Contains(err.Error(), "app_score") || !strings.Contains(err.Error(), "mem_edges") {
		t.Fatalf("up with an app's column: %v", err)
	}
	if v, _, _ := schema.Version(db); v != 5 {
		t.Errorf("version %d after the refusal, want 5", v)
	}
	if got := edgeRows(t, db); got != rows || withoutRowid(t, db) {
		t.Error("the refused migration changed mem_edges")
	}
}
