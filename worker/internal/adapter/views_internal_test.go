package adapter

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/worker/internal/testdb"

	"github.com/memdecay/memdecay/worker/internal/sweepsql"
)

var updateViews = flag.Bool("update-views", false, "rewrite the readers' views migration ("+viewsMigration+") from views.go")

// viewsMigration is the migration that stores the readers' views as
// views.go writes them now. A change to a rule they read makes the next
// migration: name it here and run go test ./worker/internal/adapter -run
// TestSchemaViewsAreViewsGo -update-views (the migrations before stay as
// they were). memworker's migrate up and a declared mapping store them
// too, so a database whose mapping is not mem reads its own.
const viewsMigration = "0018_reader_views"

// viewsMigrationText is the up step of viewsMigration: the views the file
// held dropped, the table of the readers' views made and filled from
// views.go.
func viewsMigrationText() string {
	var b strings.Builder
	b.WriteString(`-- The readers' views leave the file's schema: SQLite re-checks every view
-- on ALTER TABLE, so a stored view that calls a memdecay function broke an
-- app's own migrations on every connection without the extension. The
-- extension serves each view under its name (an eponymous virtual table)
-- from its query here, on every connection that loads it. Generated from
-- worker/views.go: go test ./worker -run TestSchemaViewsAreViewsGo
-- -update-views.
`)
	for _, v := range viewsDropped {
		b.WriteString("DROP VIEW IF EXISTS " + v + ";\n")
	}
	b.WriteString("\nCREATE TABLE " + readerViewsTable + " (\n    name TEXT PRIMARY KEY,\n    sql  TEXT NOT NULL\n);\n")
	for _, v := range memViews.readerViews(nil) {
		b.WriteString("\nINSERT INTO " + readerViewsTable + " (name, sql) VALUES (" + sweepsql.Literal(v.name) + ",\n" + sweepsql.Literal(v.query) + ");\n")
	}
	return b.String()
}

// TestSchemaViewsAreViewsGo: the readers' views a migrated file serves are
// views.go's, byte for byte, so a reader's view and a sweep decide by one
// rule text, and the file's schema holds no view of them.
func TestSchemaViewsAreViewsGo(t *testing.T) {
	path := filepath.Join("..", "..", "..", "schema", "migrations", viewsMigration+".up.sql")
	if *updateViews {
		if err := os.WriteFile(path, []byte(viewsMigrationText()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(file) != viewsMigrationText() {
		t.Fatalf("%s is not the views views.go writes; run go test ./worker/internal/adapter -run TestSchemaViewsAreViewsGo -update-views", path)
	}
	db := testdb.Migrated(t)
	for _, v := range memViews.readerViews(nil) {
		var n int
		if err := db.SQL.QueryRow(`SELECT count(*) FROM `+readerViewsTable+` WHERE name = ? AND sql = ?`, v.name, v.query).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("the file serves no view %s made by\n%s", v.name, v.query)
		}
		if _, err := db.SQL.Exec(`SELECT * FROM ` + v.name + ` LIMIT 1`); err != nil {
			t.Errorf("%s: %v", v.name, err)
		}
	}
	var views int
	if err := db.SQL.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE type = 'view' AND name IN ('` + strings.Join(viewsDropped, "', '") + `')`).Scan(&views); err != nil {
		t.Fatal(err)
	}
	if views != 0 {
		t.Errorf("the file's schema still holds %d of the readers' views", views)
	}
}
