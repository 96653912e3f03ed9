package sweepsql

import (
	"context"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/worker/internal/testdb"
)

// TestMigrationMakesTheArchivesOfArchiveGo: the schema's archive step
// holds, for memworker's own tables, the statements archive.go writes
// (archiveDDL, eventsView), so a mapping's archives and the view remade
// over them are of one shape with memworker's own.
func TestMigrationMakesTheArchivesOfArchiveGo(t *testing.T) {
	db := testdb.Migrated(t)
	var want []string
	for _, a := range memArchives {
		want = append(want, archiveDDL(a)...)
	}
	want = append(want, eventsView(memArchives)...)
	for _, stmt := range want {
		if !strings.HasPrefix(stmt, "CREATE ") {
			continue
		}
		var n int
		if err := db.SQL.QueryRow(`SELECT count(*) FROM sqlite_master WHERE sql = ?`, stmt).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("the schema holds no object made by\n%s", stmt)
		}
	}
	got, err := ReadArchives(context.Background(), db.SQL)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(memArchives) {
		t.Fatalf("mem_archives lists %d archives, want %d", len(got), len(memArchives))
	}
	for i, a := range got {
		if w := memArchives[i]; a.Name != w.Name || a.kind != w.kind || a.source != w.source || strings.Join(a.cols, ",") != strings.Join(w.cols, ",") {
			t.Errorf("archive %d: %+v, want %+v", i, a, w)
		}
	}
}
