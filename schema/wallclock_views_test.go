package schema_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/schema"
)

// TestWallClockViewsDown: the views of version 8 read wall-clock text
// through try_unix_seconds (at the latest version, the readers' views the
// extension serves from mem_reader_views); going down to version 7 puts
// back, word for word, the views version 7 had (0005_clock).
func TestWallClockViewsDown(t *testing.T) {
	db, _ := openFile(t)
	if _, err := schema.Up(db); err != nil {
		t.Fatal(err)
	}
	views := func(table string) map[string]string {
		rows, err := db.Query(`SELECT name, sql FROM ` + table + ` WHERE name IN
			('mem_edges_effective', 'mem_edges_live', 'mem_edges_decayed', 'mem_facts_scored')`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		m := map[string]string{}
		for rows.Next() {
			var name, sql string
			if err := rows.Scan(&name, &sql); err != nil {
				t.Fatal(err)
			}
			m[name] = sql
		}
		return m
	}
	for _, name := range []string{"mem_edges_effective", "mem_facts_scored"} {
		if !strings.Contains(views("mem_reader_views")[name], "try_unix_seconds") {
			t.Errorf("%s at the latest version does not read wall clocks through try_unix_seconds", name)
		}
	}
	for v, _, _ := schema.Version(db); v > 7; v, _, _ = schema.Version(db) {
		if _, err := schema.Down(db, schema.DownOptions{Force: true}); err != nil {
			t.Fatal(err)
		}
	}
	text, err := os.ReadFile("migrations/0005_clock.up.sql")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, m := range regexp.MustCompile(`(?s)CREATE VIEW (mem_edges_\w+|mem_facts_scored) AS.*?;\n`).FindAllStringSubmatch(string(text), -1) {
		want[m[1]] = strings.TrimSuffix(m[0], ";\n")
	}
	got := views("sqlite_master")
	if len(want) != 4 {
		t.Fatalf("found %d views in 0005_clock.up.sql", len(want))
	}
	for name, sql := range want {
		if got[name] != sql {
			t.Errorf("%s at version 7:\n%s\nwant (0005_clock):\n%s", name, got[name], sql)
		}
	}
}
