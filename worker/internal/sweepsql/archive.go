package sweepsql

import (
	"context"
	"fmt"
	"strings"

	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/mapping"
)

// The typed archive. Each removal a sweep makes (an edge removed, a block
// archived, a fact archived or pruned) is one row of the archive of the
// table the row left: mem_archive_<table>, holding the row's own columns,
// unchanged (typeless columns: SQLite converts nothing), and the event's
// own columns, all named mem_…: its id, sweep, times, subject, action,
// reason and the numbers that decided it. Every other event (exclusions,
// restores, feedback, and every event written before the archive existed)
// is a row of mem_event_log. mem_events is a view over the log and every
// archive, with the columns it always had: an archive row's detail is
// built on read, the JSON the event would have held.
//
// One counter (mem_event_ids) numbers the log and the archives, so
// mem_events' ids stay unique and in the order things happened: a sweep's
// insert takes its ids from it (NEXT_EVENT_ID) and then moves it past them
// (the bump statements); the log's own trigger moves it past each row
// written there.
//
// mem_archives lists the archives, and which kind of subject each holds,
// so the view (eventsView) and retention cover an archive made for a
// mapping that is no longer in force.

// Archive is one archive table: its name, the kind of subject its rows
// are ('edge', 'block' or 'fact'), the table its rows left, and that
// table's columns, in order.
type Archive struct {
	Name, kind, source string
	cols               []string
}

// archiveName is the archive of a table.
func archiveName(table string) string { return "mem_archive_" + table }

// archiveEventCols are the event's own columns of every archive.
var archiveEventCols = []string{"mem_event_id", "mem_sweep_id", "mem_at", "mem_clock_hours", "mem_subject", "mem_action", "mem_reason"}

// archiveNumbers are the columns, by kind of subject, of the numbers that
// decided a removal, and the keys of an event's detail that show them.
var archiveNumbers = map[string][][2]string{
	"edge":  {{"mem_effective_weight", "effective_weight"}, {"mem_lambda", "lambda"}, {"mem_elapsed", "elapsed"}, {"mem_archived_block", "archived_block"}},
	"block": {{"mem_tags", "tags"}, {"mem_tier", "tier"}, {"mem_recency", "recency"}},
	"fact":  {{"mem_score", "score"}, {"mem_days_since_access", "days_since_access"}},
}

// memArchives are the archives of memworker's own tables, made by the
// schema's step 14.
var memArchives = []Archive{
	{archiveName("mem_edges"), "edge", "mem_edges", EdgeColumns},
	{archiveName("mem_blocks"), "block", "mem_blocks", BlockColumns},
	{archiveName("mem_facts"), "fact", "mem_facts", FactColumns},
}

// reservedColumn is true for a name an archive's own columns take.
func reservedColumn(name string) bool {
	name = strings.ToLower(name)
	for _, c := range archiveEventCols {
		if name == c {
			return true
		}
	}
	for _, nums := range archiveNumbers {
		for _, n := range nums {
			if name == n[0] {
				return true
			}
		}
	}
	return false
}

// archiveInsertCols are the columns an insert into an archive of a kind
// names first: the event's, then the numbers.
func archiveInsertCols(kind string) string {
	cols := append([]string{}, archiveEventCols...)
	for _, n := range archiveNumbers[kind] {
		cols = append(cols, n[0])
	}
	return strings.Join(cols, ", ")
}

// archiveDDL creates an archive: the event's columns, typed as
// mem_event_log's, then the numbers and the row's columns, typeless; an
// index finds a sweep's events. None finds a subject's: each removal would
// write a random leaf of it. The archive is in the order of its ids, so a
// restore reads it from the newest row back (LastRemoval).
func archiveDDL(a Archive) []string {
	cols := []string{"mem_event_id INTEGER PRIMARY KEY", "mem_sweep_id INTEGER", "mem_at INTEGER NOT NULL", "mem_clock_hours REAL",
		"mem_subject TEXT NOT NULL", "mem_action TEXT NOT NULL", "mem_reason TEXT"}
	for _, n := range archiveNumbers[a.kind] {
		cols = append(cols, n[0])
	}
	for _, c := range a.cols {
		cols = append(cols, Ident(c))
	}
	return []string{
		"CREATE TABLE " + Ident(a.Name) + " (\n    " + strings.Join(cols, ",\n    ") + "\n)",
		"CREATE INDEX " + Ident(a.Name+"_sweep") + " ON " + Ident(a.Name) + " (mem_sweep_id)",
		"INSERT INTO mem_archives (name, kind, source) VALUES (" + Literal(a.Name) + ", " + Literal(a.kind) + ", " + Literal(a.source) + ")",
	}
}

// archiveDetail is the detail of an archive's row alias r, as the event
// held it: the row's snapshot under its kind's key and the numbers (an
// edge's elapsed time is 'elapsed' under a relation policy, else
// 'elapsed_hours'), the fields that are NULL left out.
func archiveDetail(a Archive, r string) string {
	parts := []string{Literal(a.kind), ColumnInfo{Names: a.cols}.Snapshot(r)}
	for _, n := range archiveNumbers[a.kind] {
		key, val := Literal(n[1]), r+"."+n[0]
		switch n[1] {
		case "elapsed":
			key = "CASE WHEN substr(" + r + ".mem_reason, 1, 7) = 'policy:' THEN 'elapsed' ELSE 'elapsed_hours' END"
		case "tags":
			val = "json(" + val + ")"
		}
		parts = append(parts, key, val)
	}
	return "json_patch('{}', json_object(" + strings.Join(parts, ", ") + "))"
}

// eventsView is the statements that (re)make mem_events over the log and
// the archives, and its trigger that writes an event inserted into it to
// the log (as an app or a script wrote events before).
func eventsView(archives []Archive) []string {
	arms := []string{"SELECT id, sweep_id, at, clock_hours, subject_kind, subject_id, action, reason, detail FROM mem_event_log"}
	for _, a := range archives {
		arms = append(arms, "SELECT r.mem_event_id, r.mem_sweep_id, r.mem_at, r.mem_clock_hours, "+Literal(a.kind)+
			", r.mem_subject, r.mem_action, r.mem_reason,\n       "+archiveDetail(a, "r")+"\nFROM "+Ident(a.Name)+" r")
	}
	return []string{
		"DROP VIEW IF EXISTS mem_events",
		"CREATE VIEW mem_events (id, sweep_id, at, clock_hours, subject_kind, subject_id, action, reason, detail) AS\n" +
			strings.Join(arms, "\nUNION ALL\n"),
		`CREATE TRIGGER mem_events_insert INSTEAD OF INSERT ON mem_events BEGIN
INSERT INTO mem_event_log (id, sweep_id, at, clock_hours, subject_kind, subject_id, action, reason, detail)
VALUES ((SELECT next FROM mem_event_ids), NEW.sweep_id, NEW.at, NEW.clock_hours, NEW.subject_kind, NEW.subject_id,
        NEW.action, NEW.reason, NEW.detail);
END`,
	}
}

// SweepEventCounts counts the events of the sweep :sweep by subject kind,
// action and reason, from the log and from each archive itself: through
// mem_events, every row would be copied out of its arm first (a first
// sweep's hundreds of thousands).
func SweepEventCounts(archives []Archive) string {
	arms := []string{"SELECT subject_kind, action, coalesce(reason, ''), count(*) FROM main.mem_event_log WHERE sweep_id = :sweep GROUP BY 1, 2, 3"}
	for _, a := range archives {
		arms = append(arms, "SELECT "+Literal(a.kind)+", mem_action, coalesce(mem_reason, ''), count(*) FROM main."+Ident(a.Name)+
			" WHERE mem_sweep_id = :sweep GROUP BY 2, 3")
	}
	return strings.Join(arms, "\nUNION ALL\n")
}

// NextEventID is the id of the next event (the counter's; ids after it
// follow in the statement's order).
const NextEventID = `(SELECT next FROM main.mem_event_ids)`

// bumpEventIDs moves the counter past the ids an insert into the archive
// table took (the macros BUMP_IDS_EDGES, BUMP_IDS_NODES, BUMP_IDS_FACTS
// of apply.sql).
func bumpEventIDs(table string) string {
	return `UPDATE main.mem_event_ids SET next = max(next, coalesce((SELECT max(mem_event_id) FROM ` + table + `), 0) + 1)`
}

// chunkEvents holds for the archive rows a chunk's insert just wrote and
// perhaps a few before them: an insert takes the ids above every row of
// its archive, and it wrote at most as many rows as the table counted
// holds (the macros CHUNK_EVENTS_* of apply.sql), so they are a range of
// ids at the archive's end, found with no index of subjects.
func chunkEvents(archive, counted string) string {
	return `mem_event_id > (SELECT max(mem_event_id) FROM ` + archive + `) - (SELECT count(*) FROM ` + counted + `)`
}

// EventLogInsert begins an INSERT … SELECT of events into the log; the
// SELECT's first value is the event's id, nextEventID (the log's trigger
// moves the counter past each row).
const EventLogInsert = `INSERT INTO mem_event_log (id, sweep_id, at, clock_hours, subject_kind, subject_id, action, reason, detail)`

// ReadArchives reads the archives mem_archives lists, with their columns.
func ReadArchives(ctx context.Context, q memdb.Querier) ([]Archive, error) {
	rows, err := q.QueryContext(ctx, `SELECT name, kind, source FROM mem_archives ORDER BY rowid`)
	if err != nil {
		return nil, fmt.Errorf("reading the archives: %w", err)
	}
	var out []Archive
	for rows.Next() {
		var a Archive
		if err := rows.Scan(&a.Name, &a.kind, &a.source); err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, a)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range out {
		cols, err := ReadColumns(ctx, q, out[i].Name)
		if err != nil {
			return nil, err
		}
		for _, c := range cols.Names {
			if !reservedColumn(c) {
				out[i].cols = append(out[i].cols, c)
			}
		}
	}
	return out, nil
}

// ArchiveSteps are the statements that give each table a mapping removes
// rows from its archive: made when missing, given the columns the table
// gained since; and, when any of that changes, mem_events made again over
// every archive. It only reads (rqlite cannot read after a write in a
// transaction).
func ArchiveSteps(ctx context.Context, q memdb.Querier, m *mapping.Mapping) ([]string, error) {
	if m.IsDefault() {
		return nil, nil
	}
	have, err := ReadArchives(ctx, q)
	if err != nil {
		return nil, err
	}
	byName := map[string]int{}
	for i, a := range have {
		byName[a.Name] = i
	}
	var want []Archive
	add := func(kind, table string) error {
		cols, err := ReadColumns(ctx, q, table)
		if err != nil {
			return err
		}
		for _, c := range cols.Names {
			if reservedColumn(c) {
				return fmt.Errorf("mapping: %s.%s: memworker's archive of the table keeps its own column of that name; rename the column", table, c)
			}
		}
		for _, w := range want {
			if w.Name == archiveName(table) && w.kind != kind {
				return fmt.Errorf("mapping: %s holds both %ss and %ss; a table plays one role", table, w.kind, kind)
			}
		}
		want = append(want, Archive{archiveName(table), kind, table, cols.Names})
		return nil
	}
	if n := m.Nodes; n != nil {
		if err := add("block", n.Table); err != nil {
			return nil, err
		}
	}
	if e := m.Edges; e != nil {
		if err := add("edge", e.Table); err != nil {
			return nil, err
		}
	}
	if f := m.Facts; f != nil {
		if err := add("fact", f.Table); err != nil {
			return nil, err
		}
	}
	var steps []string
	for _, w := range want {
		i, ok := byName[w.Name]
		if !ok {
			steps = append(steps, archiveDDL(w)...)
			have, byName[w.Name] = append(have, w), len(have)
			continue
		}
		if have[i].kind != w.kind {
			return nil, fmt.Errorf("mapping: %s: its archive %s holds %ss, not %ss", w.source, w.Name, have[i].kind, w.kind)
		}
		kept := map[string]bool{}
		for _, c := range have[i].cols {
			kept[strings.ToLower(c)] = true
		}
		for _, c := range w.cols {
			if !kept[strings.ToLower(c)] {
				steps = append(steps, "ALTER TABLE "+Ident(w.Name)+" ADD COLUMN "+Ident(c))
				have[i].cols = append(have[i].cols, c)
			}
		}
	}
	if len(steps) == 0 {
		return nil, nil
	}
	return append(steps, eventsView(have)...), nil
}

// ArchiveOf is the archive of the table a mapping's role keeps its rows
// in, or memworker's own.
func ArchiveOf(m *mapping.Mapping, kind string) string {
	table := map[string]string{"edge": "mem_edges", "block": "mem_blocks", "fact": "mem_facts"}[kind]
	if m != nil && !m.IsDefault() {
		switch {
		case kind == "edge" && m.Edges != nil:
			table = m.Edges.Table
		case kind == "block" && m.Nodes != nil:
			table = m.Nodes.Table
		case kind == "fact" && m.Facts != nil:
			table = m.Facts.Table
		}
	}
	return "main." + Ident(archiveName(table))
}

// ExpireArchive deletes a chunk (:limit) of an archive's rows older than
// :cutoff. Its rows are in the order they were written, so the oldest
// come first: the statement reads the chunk, not the archive.
func ExpireArchive(name string) string {
	t := "main." + Ident(name)
	return `DELETE FROM ` + t + ` WHERE mem_event_id IN (SELECT mem_event_id FROM (
    SELECT mem_event_id, mem_at FROM ` + t + ` ORDER BY mem_event_id LIMIT :limit) WHERE mem_at < :cutoff)`
}

// CountExpiredArchive is how many rows expireArchive would delete, chunk
// after chunk: those before the first that has not expired.
func CountExpiredArchive(name string) string {
	t := "main." + Ident(name)
	return `SELECT count(*) FROM ` + t + ` WHERE mem_event_id < coalesce(
    (SELECT mem_event_id FROM ` + t + ` WHERE mem_at >= :cutoff ORDER BY mem_event_id LIMIT 1), 9223372036854775807)`
}

// LatestRemovals is the newest :limit removals and exclusions of
// mem_events (id, sweep, time, clock, subject, action, reason), newest
// first: the newest of the log and of each archive, each read backwards
// by id, then merged (through the view, every event would be read).
func LatestRemovals(archives []Archive) string {
	arms := []string{`SELECT * FROM (SELECT id, sweep_id, at, coalesce(clock_hours, 0), subject_kind, subject_id, action, coalesce(reason, '')
    FROM mem_event_log WHERE action IN ('archive', 'prune', 'decay', 'delete', 'exclude') ORDER BY id DESC LIMIT :limit)`}
	for _, a := range archives {
		arms = append(arms, `SELECT * FROM (SELECT mem_event_id, mem_sweep_id, mem_at, coalesce(mem_clock_hours, 0), `+Literal(a.kind)+
			`, mem_subject, mem_action, coalesce(mem_reason, '') FROM `+Ident(a.Name)+` ORDER BY mem_event_id DESC LIMIT :limit)`)
	}
	return strings.Join(arms, "\nUNION ALL\n") + "\nORDER BY 1 DESC LIMIT :limit"
}

// EventCount is the number of events mem_events shows, counted table by
// table (through the view, every row would be built).
func EventCount(archives []Archive) string {
	counts := []string{`(SELECT count(*) FROM mem_event_log)`}
	for _, a := range archives {
		counts = append(counts, `(SELECT count(*) FROM `+Ident(a.Name)+`)`)
	}
	return "(" + strings.Join(counts, " + ") + ")"
}

// LastRemoval is the newest removal (id, sweep_id, subject, action) of the
// subject the expression subject names, of one of actions (an SQL list),
// from the archive (ArchiveOf) or the log (events written before the typed
// archives): a row goes back only to the table it left. No index finds a
// subject in an archive, which is in the order of its ids: it is read from
// its newest row back, and the read stops at the subject's removal (one
// long ago reads the archive through, once).
func LastRemoval(archive, kind, subject, actions string) string {
	return `WITH s (v) AS (SELECT ` + subject + `)
SELECT id, sweep_id, subject, action FROM (
    SELECT * FROM (SELECT mem_event_id AS id, mem_sweep_id AS sweep_id, mem_subject AS subject, mem_action AS action FROM ` + archive + `
        WHERE mem_subject = (SELECT v FROM s) AND mem_action IN (` + actions + `) ORDER BY mem_event_id DESC LIMIT 1)
    UNION ALL
    SELECT * FROM (SELECT id, sweep_id, subject_id, action FROM main.mem_event_log
        WHERE subject_kind = ` + Literal(kind) + ` AND subject_id = (SELECT v FROM s) AND action IN (` + actions + `) ORDER BY id DESC LIMIT 1))
ORDER BY id DESC LIMIT 1`
}
