package worker_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker"
	"github.com/memdecay/memdecay/worker/mapping"
)

// restoreApp is an app whose link 10 is weak (pruned by the first sweep),
// and whose note 3 was last used long ago (archived with its links 11 and
// 12). endCol is the name of the links' from column.
func restoreApp(t *testing.T, endCol string) *worker.DB {
	t.Helper()
	q := `"` + strings.ReplaceAll(endCol, `"`, `""`) + `"`
	db, _ := newMemory(t, `
		CREATE TABLE notes (id INTEGER PRIMARY KEY, kind TEXT, state TEXT NOT NULL DEFAULT 'active', last_used_at TEXT);
		CREATE TABLE links (id INTEGER PRIMARY KEY, `+q+` INTEGER NOT NULL, dst INTEGER NOT NULL, kind TEXT NOT NULL,
			strength REAL, touched_at TEXT);
		INSERT INTO notes VALUES (1, 'note', 'active', '2027-02-28T12:00:00+02:00'), (2, 'note', 'active', '2027-02-28T12:00:00+02:00'),
			(3, 'note', 'active', '2025-01-01T00:00:00+02:00'), (4, 'note', 'active', '2027-02-28T12:00:00+02:00');
		INSERT INTO links VALUES (10, 1, 2, 'cites', 0.05, '2027-02-28T12:00:00+02:00'),
			(11, 3, 1, 'cites', 0.9, '2027-02-28T12:00:00+02:00'), (12, 2, 3, 'cites', 0.9, '2027-02-28T12:00:00+02:00'),
			(13, 1, 4, 'cites', 0.9, '2027-02-28T12:00:00+02:00'), (14, 2, 4, 'cites', 0.9, '2027-02-28T12:00:00+02:00')`)
	declareLinks(t, db, "links", endCol)
	return db
}

// declareLinks declares the notes and the links of table (from column
// endCol) as the database's mapping.
func declareLinks(t *testing.T, db *worker.DB, table, endCol string) {
	t.Helper()
	m, err := mapping.Parse("m.json", []byte(`{
		"nodes": {"table": "notes", "key": "id", "category": "kind", "status": "state", "status_active": ["active"],
		          "status_archived": "archived", "last_used": "last_used_at", "last_used_clock": "iso8601"},
		"edges": {"table": "`+table+`", "key": "id", "from": "`+strings.ReplaceAll(endCol, `"`, `\"`)+`", "to": "dst", "directed": true,
		          "kind": "kind", "weight": "strength", "last_active": "touched_at", "last_active_clock": "iso8601"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := worker.DeclareMapping(context.Background(), db, m, "m.json", mappedWall); err != nil {
		t.Fatal(err)
	}
}

// sweepApp sweeps db once at mappedWall and checks what the fixture
// expects: link 10 pruned, note 3 archived with its two links.
func sweepApp(t *testing.T, db *worker.DB) {
	t.Helper()
	wall := mappedWall
	r, err := worker.Sweep(context.Background(), db, worker.SweepOptions{WallNow: &wall})
	if err != nil {
		t.Fatal(err)
	}
	if r.Archived != 1 || scalar[int](t, db, `SELECT count(*) FROM links`) != 2 {
		t.Fatalf("the sweep archived %d notes and left %d links; want 1 and 2", r.Archived, scalar[int](t, db, `SELECT count(*) FROM links`))
	}
}

// A column the app added since a link's removal, NOT NULL with a default,
// takes its default when the link is restored (its archived row has none).
func TestRestoreTakesTheDefaultOfANewColumn(t *testing.T) {
	db := restoreApp(t, "src")
	sweepApp(t, db)
	mustExec(t, db, `ALTER TABLE links ADD COLUMN label TEXT NOT NULL DEFAULT 'plain'`)
	if _, err := worker.RestoreEdge(context.Background(), db, "10", "", mappedWall); err != nil {
		t.Fatalf("restoring link 10: %v", err)
	}
	if got := scalar[string](t, db, `SELECT label FROM links WHERE id = 10`); got != "plain" {
		t.Errorf("the restored link's label is %q, want the column's default", got)
	}
	// After a sweep has added the column to the archive, the same.
	wall := mappedWall.Add(time.Hour)
	if _, err := worker.Sweep(context.Background(), db, worker.SweepOptions{WallNow: &wall}); err != nil {
		t.Fatal(err)
	}
	if _, err := worker.RestoreBlock(context.Background(), db, "3", mappedWall.Add(2*time.Hour)); err != nil {
		t.Fatalf("restoring note 3: %v", err)
	}
	if got := scalar[string](t, db, `SELECT group_concat(id || ':' || label, ' ') FROM (SELECT * FROM links WHERE id IN (11, 12) ORDER BY id)`); got != "11:plain 12:plain" {
		t.Errorf("the links restored with note 3: %q, want both with the default label", got)
	}
}

// A link whose end the app deleted since is not restored: it would dangle.
func TestRestoreRefusesALinkWithoutItsEnd(t *testing.T) {
	db := restoreApp(t, "src")
	sweepApp(t, db)
	mustExec(t, db, `DELETE FROM notes WHERE id = 2`)
	_, err := worker.RestoreEdge(context.Background(), db, "10", "", mappedWall)
	if err == nil || !strings.Contains(err.Error(), "end 2 is no longer in notes") {
		t.Fatalf("restoring link 10 whose end 2 is gone: %v", err)
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM links WHERE id = 10`); n != 0 {
		t.Errorf("link 10 is back without its end")
	}
}

// A row goes back only to the table it was removed from: once the mapping
// names another links table, the removal from the first is not restored
// into it.
func TestRestoreOnlyIntoTheTableItLeft(t *testing.T) {
	db := restoreApp(t, "src")
	sweepApp(t, db)
	mustExec(t, db, `CREATE TABLE links2 (id INTEGER PRIMARY KEY, src INTEGER NOT NULL, dst INTEGER NOT NULL, kind TEXT NOT NULL,
		strength REAL, touched_at TEXT)`)
	declareLinks(t, db, "links2", "src")
	_, err := worker.RestoreEdge(context.Background(), db, "10", "", mappedWall)
	if !errors.Is(err, worker.ErrNothingToRestore) || !strings.Contains(err.Error(), "links2") {
		t.Fatalf("restoring link 10 into links2: %v", err)
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM links2`); n != 0 {
		t.Errorf("links2 holds %d rows removed from links", n)
	}
}

// A double quote in an end column's name: a note's links come back with it.
func TestRestoreBlockWithQuotedEndColumn(t *testing.T) {
	db := restoreApp(t, `src"a`)
	sweepApp(t, db)
	r, err := worker.RestoreBlock(context.Background(), db, "3", mappedWall.Add(time.Hour))
	if err != nil {
		t.Fatalf("restoring note 3: %v", err)
	}
	if r.Edges != 2 || scalar[int](t, db, `SELECT count(*) FROM links WHERE id IN (11, 12)`) != 2 {
		t.Errorf("note 3 came back with %d links (skipped %v), want its 2", r.Edges, r.EdgesSkipped)
	}
}

// A link the app never stamped (no time of last activity) comes back the
// same: a restore anchors a link's time only where it had one.
func TestRestoreKeepsANullTime(t *testing.T) {
	db := restoreApp(t, "src")
	mustExec(t, db, `INSERT INTO links VALUES (15, 1, 4, 'about', 0.05, NULL)`)
	wall := mappedWall
	if _, err := worker.Sweep(context.Background(), db, worker.SweepOptions{WallNow: &wall}); err != nil {
		t.Fatal(err)
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM links WHERE id = 15`); n != 0 {
		t.Fatalf("the weak link 15 was not pruned")
	}
	if _, err := worker.RestoreEdge(context.Background(), db, "15", "", mappedWall); err != nil {
		t.Fatalf("restoring link 15: %v", err)
	}
	if got := scalar[string](t, db, `SELECT quote(touched_at) || ' ' || strength FROM links WHERE id = 15`); got != "NULL 0.05" {
		t.Errorf("restored link 15: %s, want its NULL time and its weight", got)
	}
}
