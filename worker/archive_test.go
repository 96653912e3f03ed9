package worker_test

// The typed archive (docs/sweep.md, "Events"): a removal's event is a row
// of the archive of the table the row left, holding the row as it was;
// mem_events shows the archives and the log as one table, in one order of
// ids, and keeps showing the JSON events written before the archive.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/memdecay/memdecay/schema"
	"github.com/memdecay/memdecay/worker"
)

// rowsAsQuoted is every row of a table (or the columns cols of an
// archive) as the quoted values of its columns: a value's type and bytes
// both show (1, 1.0, '1' and X'31' differ).
func rowsAsQuoted(t *testing.T, db *worker.DB, table string, cols []string, where string) map[string]bool {
	t.Helper()
	quoted := make([]string, len(cols))
	for i, c := range cols {
		quoted[i] = `quote("` + c + `")`
	}
	out := map[string]bool{}
	rows, err := db.SQL.Query(`SELECT ` + strings.Join(quoted, ` || ',' || `) + ` FROM "` + table + `" ` + where)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out[s] = true
	}
	return out
}

// tableColumns are a table's columns in order.
func tableColumns(t *testing.T, db *worker.DB, table string) []string {
	t.Helper()
	cols, err := columnsOf(db.SQL, table)
	if err != nil {
		t.Fatal(err)
	}
	return cols
}

// TestArchiveHoldsTheRowsAsTheyWere: through memworker's own tables, an
// app's and elfmem's, every removal of a sweep is one archive row whose
// own columns are the removed (or archived) row exactly as it was before
// the sweep, each value of its own type; one per event mem_events shows.
func TestArchiveHoldsTheRowsAsTheyWere(t *testing.T) {
	for _, s := range allShapes {
		t.Run(s.name, func(t *testing.T) {
			g := restoreGraph()
			db, _ := shapedMemory(t, s, g, s.base)
			nodes, links := "mem_blocks", "mem_edges"
			if s != memShape {
				nodes, links = s.nodes, s.links
			}
			nodeCols, linkCols := tableColumns(t, db, nodes), tableColumns(t, db, links)
			before := map[string]map[string]bool{
				nodes: rowsAsQuoted(t, db, nodes, nodeCols, ""), links: rowsAsQuoted(t, db, links, linkCols, "")}

			r := sweepShape(t, s, db, s.base, worker.SweepOptions{})
			removals := r.Archived + r.EdgesRemovedWithBlocks + r.EdgesPruned + r.EdgesDecayed
			if removals == 0 {
				t.Fatalf("the sweep removed nothing: %s", r.Summary)
			}
			var total int64
			for table, cols := range map[string][]string{nodes: nodeCols, links: linkCols} {
				archive := "mem_archive_" + table
				archived := rowsAsQuoted(t, db, archive, cols, "")
				n := scalar[int64](t, db, `SELECT count(*) FROM "`+archive+`" WHERE mem_sweep_id = ?`, r.SweepID)
				if int64(len(archived)) != n {
					t.Errorf("%s: %d rows, %d distinct", archive, n, len(archived))
				}
				total += n
				for row := range archived {
					if !before[table][row] {
						t.Errorf("%s holds (%s), which %s never held", archive, row, table)
					}
				}
			}
			if total != removals {
				t.Errorf("the archives hold %d rows of the sweep, it made %d removals (%s)", total, removals, r.Summary)
			}
			if n := scalar[int64](t, db, `SELECT count(*) FROM mem_events WHERE sweep_id = ? AND action IN ('archive', 'delete', 'prune', 'decay')`,
				r.SweepID); n != removals {
				t.Errorf("mem_events shows %d removals of the sweep, want %d", n, removals)
			}
		})
	}
}

// TestEventsOneOrderOfIDs: the log's events (a restore, feedback) and the
// archives' (two sweeps) share one sequence of ids, in the order they were
// written, none twice; the counter stands past them all.
func TestEventsOneOrderOfIDs(t *testing.T) {
	ctx := context.Background()
	db, _ := newMemory(t, restoreFixture)
	mustExec(t, db, `INSERT INTO mem_facts (id, segment, tier, importance, decay_rate, last_accessed_at, content) VALUES
		('f1', 'context', 'short', 0.3, 0.5, ?, 'one'), ('f2', 'context', 'long', 0.9, 0.01, ?, 'two')`,
		daysAgo(fixedWall, 400), daysAgo(fixedWall, 1))
	first := sweepAtWall(t, db, 100, fixedWall)
	if _, err := worker.RestoreFact(ctx, db, "f1", fixedWall); err != nil {
		t.Fatal(err)
	}
	if _, err := worker.Recall(ctx, db, "f2", false, fixedWall); err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, `UPDATE mem_facts SET last_accessed_at = ? WHERE id = 'f1'`, daysAgo(fixedWall, 400))
	second := sweepAtWall(t, db, 200, fixedWall.Add(time.Hour))
	if second.Facts.Pruned+second.Facts.Archived == 0 {
		t.Fatalf("the second sweep removed no fact: %+v", second.Facts)
	}
	type ev struct {
		id    int64
		sweep *int64
		act   string
	}
	rows, err := db.SQL.Query(`SELECT id, sweep_id, action FROM mem_events ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	var evs []ev
	for rows.Next() {
		var e ev
		if err := rows.Scan(&e.id, &e.sweep, &e.act); err != nil {
			t.Fatal(err)
		}
		evs = append(evs, e)
	}
	rows.Close()
	// In id order: the first sweep's, the restore, the recall, the second sweep's.
	var order []string
	for i, e := range evs {
		if i > 0 && e.id == evs[i-1].id {
			t.Errorf("id %d twice", e.id)
		}
		what := e.act
		if e.sweep != nil {
			what = fmt.Sprint("sweep ", *e.sweep)
		}
		if len(order) == 0 || order[len(order)-1] != what {
			order = append(order, what)
		}
	}
	want := fmt.Sprint([]string{fmt.Sprint("sweep ", first.SweepID), "restore", "recall", fmt.Sprint("sweep ", second.SweepID)})
	if fmt.Sprint(order) != want {
		t.Errorf("events in id order: %v, want %s", order, want)
	}
	if next := scalar[int64](t, db, `SELECT next FROM mem_event_ids`); next != evs[len(evs)-1].id+1 {
		t.Errorf("the counter stands at %d, the last event is %d", next, evs[len(evs)-1].id)
	}
	// An event inserted into mem_events, as a script would, goes to the
	// log with the next id.
	mustExec(t, db, `INSERT INTO mem_events (at, subject_kind, subject_id, action) VALUES (1, 'fact', 'f2', 'feedback')`)
	if got := scalar[int64](t, db, `SELECT max(id) FROM mem_events`); got != evs[len(evs)-1].id+1 {
		t.Errorf("the inserted event took id %d, want %d", got, evs[len(evs)-1].id+1)
	}
}

// archiveStep is the schema step that made the typed archive.
const archiveStep = 14

// downBelowArchive migrates db down from latest, a step at a time, to the
// step before the archive's.
func downBelowArchive(t *testing.T, db *worker.DB, latest uint) {
	t.Helper()
	for v := latest; v >= archiveStep; v-- {
		if _, err := schema.Down(db.SQL, schema.DownOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if v, _, _ := schema.Version(db.SQL); v != archiveStep-1 {
		t.Fatalf("down to %d, want %d", v, archiveStep-1)
	}
}

// TestJSONHistoryKeptAcrossTheArchive: a database whose events were
// written as JSON (before the archive) keeps them: after migrating up,
// mem_events shows them as they were, restore and decayed read them, and
// new events count on from them. Migrating down again puts every event,
// the archives' too, back into one table with its detail.
func TestJSONHistoryKeptAcrossTheArchive(t *testing.T) {
	ctx := context.Background()
	db, path := newMemory(t, knowledgeBlocks("a", "b")+`UPDATE mem_config SET value = 10 WHERE key = 'active_hours';`)
	latest, err := schema.Latest()
	if err != nil {
		t.Fatal(err)
	}
	downBelowArchive(t, db, latest)
	mustExec(t, db, `INSERT INTO mem_blocks (id, category, status, archive_reason, last_reinforced_hours) VALUES
		('old', 'observation', 'archived', 'decayed', 0);
		INSERT INTO mem_events (id, sweep_id, at, clock_hours, subject_kind, subject_id, action, reason, detail) VALUES
		(7, NULL, 1, 10, 'edge', json_array('a', 'b'), 'prune', 'static', json_object('edge', json_object('from_id', 'a', 'to_id', 'b',
			'weight', 0.05, 'reinforcement_count', 0, 'relation_type', 'similar', 'origin', 'observed', 'last_active_hours', 3.5,
			'pinned', 0, 'note', 'old note', 'created_at', 1700000000, 'excluded', 0), 'effective_weight', 0.05)),
		(8, NULL, 1, 10, 'fact', 'f', 'prune', 'faded', json_object('fact', json_object('id', 'f', 'segment', 'context', 'tier', 'short',
			'importance', 0.3, 'decay_rate', 0.5, 'access_count', 2, 'last_accessed_at', 1, 'status', 'active',
			'content', 'old content', 'created_at', 1700000000), 'score', 0.01)),
		(9, NULL, 1, 10, 'block', 'old', 'archive', 'decayed', json_object('block', json_object('id', 'old'), 'tags', json('["x"]')))`)
	history := dumpRows2(t, db, `SELECT * FROM mem_events ORDER BY id`)
	// An app's view and trigger on the events: the trigger would see no
	// removal once mem_events is a view, so the step is refused, naming
	// it, with nothing changed; the view keeps reading mem_events.
	mustExec(t, db, `CREATE VIEW app_removals AS SELECT id, subject_id, action FROM mem_events WHERE action != 'restore';
		CREATE TABLE app_seen (id INTEGER);
		CREATE TRIGGER app_notify AFTER INSERT ON mem_events BEGIN INSERT INTO app_seen VALUES (NEW.id); END`)
	before := dumpRows2(t, db, `SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name`)
	if _, err := schema.Up(db.SQL); err == nil || !strings.Contains(err.Error(), "app_notify") || !strings.Contains(err.Error(), "nothing was changed") {
		t.Errorf("migrating up with an app's trigger on mem_events: %v, want a refusal naming app_notify", err)
	}
	if got := dumpRows2(t, db, `SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name`); got != before {
		t.Errorf("the refused step changed the schema:\n%s", diffLines(before, got))
	}
	mustExec(t, db, `DROP TRIGGER app_notify`)
	if _, err := schema.Up(db.SQL); err != nil {
		t.Fatal(err)
	}
	if got := dumpRows2(t, db, `SELECT * FROM mem_events ORDER BY id`); got != history {
		t.Errorf("after the archive's step, mem_events shows\n%s\nwant\n%s", got, history)
	}
	events, _, err := worker.Decayed(ctx, db, 10)
	if err != nil || len(events) != 3 || events[0].ID != 9 {
		t.Errorf("decayed: %+v, %v; want the 3 old events, newest first", events, err)
	}
	if _, err := worker.RestoreEdge(ctx, db, "a", "b", fixedWall); err != nil {
		t.Errorf("restore a — b from its JSON event: %v", err)
	}
	if got := scalar[string](t, db, `SELECT note FROM mem_edges WHERE from_id = 'a' AND to_id = 'b'`); got != "old note" {
		t.Errorf("restored note %q", got)
	}
	if _, err := worker.RestoreFact(ctx, db, "f", fixedWall); err != nil {
		t.Errorf("restore fact f from its JSON event: %v", err)
	}
	if _, err := worker.RestoreBlock(ctx, db, "old", fixedWall); err != nil {
		t.Errorf("restore block old from its JSON event: %v", err)
	}
	if id := scalar[int64](t, db, `SELECT min(id) FROM mem_events WHERE action = 'restore'`); id != 10 {
		t.Errorf("the first new event took id %d, want 10", id)
	}

	// A sweep archives into the typed archive; down again, one table.
	mustExec(t, db, `UPDATE mem_edges SET weight = 0.01 WHERE from_id = 'a'`)
	r := sweepAtWall(t, db, 20, fixedWall)
	if r.EdgesPruned != 1 {
		t.Fatalf("the sweep pruned %d edges, want 1 (%s)", r.EdgesPruned, r.Summary)
	}
	all := dumpRows2(t, db, `SELECT * FROM mem_events ORDER BY id`)
	appView := dumpRows2(t, db, `SELECT * FROM app_removals ORDER BY id`)
	if n := scalar[int](t, db, `SELECT count(*) FROM app_removals WHERE id IN (SELECT mem_event_id FROM mem_archive_mem_edges)`); n != 1 {
		t.Errorf("the app's view shows %d of the sweep's archived edges, want 1", n)
	}
	downBelowArchive(t, db, latest)
	if got := dumpRows2(t, db, `SELECT * FROM app_removals ORDER BY id`); got != appView {
		t.Errorf("after the archive's step went, the app's view shows\n%s\nwant\n%s", got, appView)
	}
	if got := dumpRows2(t, db, `SELECT * FROM mem_events ORDER BY id`); got != all {
		t.Errorf("after the archive's step went, mem_events holds\n%s\nwant\n%s", got, all)
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM sqlite_master WHERE name LIKE 'mem\_archive%' ESCAPE '\'`); n != 0 {
		t.Errorf("%d archive objects left after the archive's step went", n)
	}
	_ = path
}

// dumpRows2 renders a query's rows with their columns as one string.
func dumpRows2(t *testing.T, db *worker.DB, query string) string {
	t.Helper()
	cols, body := dumpRows(t, db, query)
	return fmt.Sprint(cols, "\n", body)
}

// TestMappedArchiveFollowsTheTable: a column the app adds after declaring
// its mapping is archived too (the next sweep widens the archive); a
// column named as one of the archive's own is refused when the mapping is
// declared, naming the table and column, before anything changes.
func TestMappedArchiveFollowsTheTable(t *testing.T) {
	ctx := context.Background()
	g := restoreGraph()
	db, _ := shapedMemory(t, appShape, g, appShape.base)
	mustExec(t, db, `ALTER TABLE links ADD COLUMN label TEXT; UPDATE links SET label = 'l' || id`)
	r := sweepShape(t, appShape, db, appShape.base, worker.SweepOptions{})
	if r.EdgesPruned+r.EdgesDecayed == 0 {
		t.Fatalf("nothing pruned or decayed: %s", r.Summary)
	}
	if n := scalar[int64](t, db, `SELECT count(*) FROM mem_archive_links WHERE label = 'l' || id`); n != r.EdgesPruned+r.EdgesDecayed+r.EdgesRemovedWithBlocks {
		t.Errorf("%d archived links keep their label, want %d", n, r.EdgesPruned+r.EdgesDecayed+r.EdgesRemovedWithBlocks)
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM mem_events WHERE sweep_id = ? AND detail ->> '$.edge.label' LIKE 'l%'`, r.SweepID); n == 0 {
		t.Error("no event's detail shows the new column")
	}

	mustExec(t, db, `ALTER TABLE links ADD COLUMN mem_subject TEXT`)
	before := dumpTables(t, db)
	m, _ := appShape.decl(t)
	err := worker.DeclareMapping(ctx, db, m, "memory.toml", appShape.base.wall)
	if err == nil || !strings.Contains(err.Error(), "links.mem_subject") {
		t.Errorf("declaring a mapping of a table with a column mem_subject: %v, want an error naming links.mem_subject", err)
	}
	if after := dumpTables(t, db); after != before {
		t.Errorf("the refused declaration changed the memory:\n%s", diffLines(before, after))
	}
}

// TestArchiveRetention: event_retention_days expires an archive's rows as
// it expires the log's, on both sides of the cutoff (30 days + 1 s goes, 30
// days stays), a chunk at a time, and a dry run counts what a sweep would
// expire.
func TestArchiveRetention(t *testing.T) {
	ages := []struct {
		seconds int64
		old     bool
	}{ // oldest first, as sweeps write them
		{400 * daySeconds, true}, {31 * daySeconds, true}, {30*daySeconds + 1, true},
		{30 * daySeconds, false}, {29 * daySeconds, false}, {0, false},
	}
	for _, chunk := range []int{0, 2} {
		t.Run(fmt.Sprintf("chunk %d", chunk), func(t *testing.T) {
			db, _ := newMemory(t, "")
			setConfig(t, db, "event_retention_days", "30")
			for i, a := range ages {
				why := map[bool]string{true: "old", false: "new"}[a.old]
				mustExec(t, db, `INSERT INTO mem_archive_mem_edges (mem_event_id, mem_at, mem_subject, mem_action, mem_reason, from_id, to_id)
					VALUES ((SELECT next FROM mem_event_ids), ?, json_array('a', ?), 'prune', ?, 'a', ?);
					UPDATE mem_event_ids SET next = next + 1`, fixedWall.Unix()-a.seconds, i, why, i)
				mustExec(t, db, `INSERT INTO mem_archive_mem_facts (mem_event_id, mem_at, mem_subject, mem_action, mem_reason, id)
					VALUES ((SELECT next FROM mem_event_ids), ?, ?, 'prune', ?, ?);
					UPDATE mem_event_ids SET next = next + 1`, fixedWall.Unix()-a.seconds, i, why, i)
			}
			now := 0.0
			dry, err := worker.Sweep(context.Background(), db, worker.SweepOptions{Now: &now, WallNow: &fixedWall, DryRun: true})
			if err != nil {
				t.Fatal(err)
			}
			r, err := worker.Sweep(context.Background(), db, worker.SweepOptions{Now: &now, WallNow: &fixedWall, ChunkSize: chunk})
			if err != nil {
				t.Fatal(err)
			}
			if dry.EventsExpired != 6 || r.EventsExpired != 6 {
				t.Errorf("events expired: dry run %d, sweep %d; want 6 (3 old rows in each archive)", dry.EventsExpired, r.EventsExpired)
			}
			for _, archive := range []string{"mem_archive_mem_edges", "mem_archive_mem_facts"} {
				if n := scalar[int](t, db, `SELECT count(*) FROM `+archive+` WHERE mem_reason = 'old'`); n != 0 {
					t.Errorf("%s keeps %d rows older than 30 days", archive, n)
				}
				if n := scalar[int](t, db, `SELECT count(*) FROM `+archive+` WHERE mem_reason = 'new'`); n != 3 {
					t.Errorf("%s keeps %d rows of the last 30 days, want 3", archive, n)
				}
			}
			if n := scalar[int](t, db, `SELECT count(*) FROM mem_events WHERE reason IN ('old', 'new')`); n != 6 {
				t.Errorf("mem_events shows %d of the archived events, want the 6 recent ones", n)
			}
		})
	}
}

// subjectIndexes lists the indexes of the archives' subjects, by table.
func subjectIndexes(t *testing.T, db *worker.DB) string {
	t.Helper()
	return dumpRows2(t, db, `SELECT tbl_name, name FROM sqlite_master WHERE type = 'index' AND tbl_name LIKE 'mem\_archive\_%' ESCAPE '\'
		AND sql LIKE '%(mem_subject)' ORDER BY tbl_name`)
}

// TestArchivesKeepNoSubjectIndex: no archive keeps an index of subjects,
// a mapping's included (each removal would write a random leaf of it);
// down a step, each archive mem_archives lists has it again, and up, none;
// a sweep and a restore read the archives the same either way.
func TestArchivesKeepNoSubjectIndex(t *testing.T) {
	ctx := context.Background()
	db, _ := shapedMemory(t, appShape, restoreGraph(), appShape.base)
	none := subjectIndexes(t, db)
	if n := scalar[int](t, db, `SELECT count(*) FROM sqlite_master WHERE type = 'index' AND sql LIKE '%(mem_subject)'`); n != 0 {
		t.Fatalf("%d indexes of subjects after migrating and declaring a mapping:\n%s", n, none)
	}
	// Down a step at a time to below the step that dropped them.
	const noSubjectIndexStep = 20
	for {
		v, _, err := schema.Version(db.SQL)
		if err != nil {
			t.Fatal(err)
		}
		if v < noSubjectIndexStep {
			break
		}
		if _, err := schema.Down(db.SQL, schema.DownOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	want := dumpRows2(t, db, `SELECT name AS tbl_name, name || '_subject' AS name FROM mem_archives ORDER BY tbl_name`)
	if got := subjectIndexes(t, db); got != want {
		t.Errorf("below step %d, the indexes of subjects:\n%s\nwant\n%s", noSubjectIndexStep, got, want)
	}
	if _, err := schema.Up(db.SQL); err != nil {
		t.Fatal(err)
	}
	if got := subjectIndexes(t, db); got != none {
		t.Errorf("up again, the indexes of subjects:\n%s", got)
	}
	r := sweepShape(t, appShape, db, appShape.base, worker.SweepOptions{})
	if r.EdgesPruned+r.EdgesDecayed == 0 {
		t.Fatalf("nothing pruned or decayed: %s", r.Summary)
	}
	var key string
	if err := db.SQL.QueryRow(`SELECT mem_subject FROM mem_archive_links WHERE mem_action IN ('prune', 'decay') ORDER BY mem_event_id LIMIT 1`).Scan(&key); err != nil {
		t.Fatal(err)
	}
	got, err := worker.RestoreEdge(ctx, db, key, "", fixedWall)
	if err != nil {
		t.Fatalf("restore link %s: %v", key, err)
	}
	if want := scalar[int64](t, db, `SELECT max(mem_event_id) FROM mem_archive_links WHERE mem_subject = ?`, key); got.FromEvent != want {
		t.Errorf("restore link %s from event #%d, want its last removal #%d", key, got.FromEvent, want)
	}
}
