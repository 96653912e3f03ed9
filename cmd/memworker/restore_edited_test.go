package main

import (
	"database/sql"
	"fmt"
	"testing"
)

// TestRestoreEditedEvent: restore --edge takes back only the edge it names.
// An event whose archived row was edited to name another edge (with
// another weight and pin) is refused with an error naming the event and both
// edges; nothing is inserted. Put back as it was, the event restores.
func TestRestoreEditedEvent(t *testing.T) {
	path := demoDB(t)
	subject := `["py-async","py-gil"]`
	event := queryOne(t, path, "SELECT id FROM mem_events WHERE subject_id = ? AND action = 'decay'", subject)
	edit := func(query string) {
		withDB(t, path, func(db *sql.DB) {
			if _, err := db.Exec(query, event); err != nil {
				t.Fatal(err)
			}
		})
	}
	edit(`CREATE TABLE edited_row AS SELECT * FROM mem_archive_mem_edges WHERE mem_event_id = ?`)
	edit(`UPDATE mem_archive_mem_edges SET from_id = 'db-wal', to_id = 'py-gil', weight = 99, pinned = 1 WHERE mem_event_id = ?`)
	edges := queryOne(t, path, "SELECT count(*) FROM mem_edges")
	wantExit(t, mw(t, "restore", "--edge", "py-gil", "py-async", "--db", path), exitFailure,
		fmt.Sprintf(`event #%s records the edge "db-wal" — "py-gil"`, event), "py-async — py-gil", "nothing was restored")
	if got := queryOne(t, path, "SELECT count(*) FROM mem_edges"); got != edges {
		t.Errorf("%s edges after a refused restore, want %s", got, edges)
	}
	if got := queryOne(t, path, "SELECT count(*) FROM mem_edges WHERE weight = 99 OR (from_id = 'db-wal' AND to_id = 'py-gil')"); got != "0" {
		t.Errorf("the edited snapshot's edge came in (%s rows)", got)
	}

	edit(`DELETE FROM mem_archive_mem_edges WHERE mem_event_id = ?; INSERT INTO mem_archive_mem_edges SELECT * FROM edited_row; DROP TABLE edited_row`)
	ok(t, "restore", "--edge", "py-gil", "py-async", "--db", path)
	if got := queryOne(t, path, "SELECT pinned FROM mem_edges WHERE from_id = 'py-async' AND to_id = 'py-gil'"); got != "0" {
		t.Errorf("restored edge pinned = %s", got)
	}
}
