package worker

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateViews = flag.Bool("update-views", false, "rewrite the views migration ("+viewsMigration+") from views.go")

// viewsMigration is the migration that makes the views as views.go writes
// them now. A change to a rule they read makes the next migration: name
// it here and run go test ./worker -run TestSchemaViewsAreViewsGo
// -update-views (the migrations before stay as they were).
const viewsMigration = "0017_views_finite_range"

// viewsMigrationText is the up step of viewsMigration: the views dropped,
// then made again from views.go.
func viewsMigrationText() string {
	var b strings.Builder
	b.WriteString(`-- The views, as worker/views.go writes them from the rules the sweep
-- uses (validity, wall-clock seconds, the models that die at weight 0, the
-- 'auto' threshold). Generated: go test ./worker -run
-- TestSchemaViewsAreViewsGo -update-views.
`)
	for _, v := range viewsDropped {
		b.WriteString("DROP VIEW " + v + ";\n")
	}
	for _, v := range schemaViews() {
		b.WriteString("\n" + v + ";\n")
	}
	return b.String()
}

// TestSchemaViewsAreViewsGo: the schema's views are views.go's, byte for
// byte, so a reader's view and a sweep decide by one rule text.
func TestSchemaViewsAreViewsGo(t *testing.T) {
	path := filepath.Join("..", "schema", "migrations", viewsMigration+".up.sql")
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
		t.Fatalf("%s is not the views views.go writes; run go test ./worker -run TestSchemaViewsAreViewsGo -update-views", path)
	}
	db := migratedDB(t)
	for _, stmt := range schemaViews() {
		var n int
		if err := db.SQL.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'view' AND sql = ?`, stmt).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("the schema holds no view made by\n%s", stmt)
		}
	}
}
