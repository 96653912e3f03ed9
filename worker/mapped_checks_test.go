package worker_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker"
	"github.com/memdecay/memdecay/worker/mapping"
)

// TestMappedBadMappingRefused: a mapping that does not fit the schema is
// refused when declared, with one line naming the table and the column,
// and the file is left byte for byte as it was.
func TestMappedBadMappingRefused(t *testing.T) {
	cases := []struct {
		name   string
		schema func(string) string // the app's schema, changed
		mutate func(m *mapping.Mapping)
		want   []string
	}{
		{"missing table", nil, func(m *mapping.Mapping) { m.Edges.Table = "linkz" }, []string{"edges.table", "linkz"}},
		{"missing column", nil, func(m *mapping.Mapping) { m.Edges.Weight = "strenght" }, []string{"links", "strenght"}},
		{"missing key column", nil, func(m *mapping.Mapping) { m.Nodes.Key = mapping.Key{"uid"} }, []string{"memories", "uid"}},
		{"key not unique", nil, func(m *mapping.Mapping) { m.Edges.Key = mapping.Key{"src"} }, []string{"links", "src", "not unique"}},
		{"composite key not unique", nil, func(m *mapping.Mapping) { m.Edges.Key = mapping.Key{"src", "dst"} }, []string{"links", "src, dst", "not unique"}},
		{"rowid of a WITHOUT ROWID table", func(s string) string {
			return strings.Replace(s, "UNIQUE (src, dst, kind));", "UNIQUE (src, dst, kind)) WITHOUT ROWID;", 1)
		}, func(m *mapping.Mapping) { m.Edges.Key = mapping.Key{"rowid"} }, []string{"links", "WITHOUT ROWID"}},
		{"a view", func(s string) string { return s + "\nCREATE VIEW recent_links AS SELECT * FROM links;" },
			func(m *mapping.Mapping) { m.Edges.Table = "recent_links" }, []string{"recent_links", "view"}},
		{"weights in a text column", nil, func(m *mapping.Mapping) { m.Edges.Weight = "kind" }, []string{"links.kind", "TEXT"}},
		{"active hours in a text column", nil, func(m *mapping.Mapping) { m.Nodes.LastUsedClock = mapping.ClockActiveHours },
			[]string{"memories.last_used_at", "TEXT"}},
		{"ids of two kinds", func(s string) string { return strings.Replace(s, "src INTEGER NOT NULL", "src TEXT NOT NULL", 1) },
			nil, []string{"links.src", "memories.id"}},
		{"a generated column written", func(s string) string {
			return strings.Replace(s, "created_at TEXT);", "created_at TEXT, uses_total INTEGER GENERATED ALWAYS AS (uses + 0) VIRTUAL);", 1)
		}, func(m *mapping.Mapping) { m.Nodes.Reinforcement = "uses_total" }, []string{"memories.uses_total", "generated"}},
		{"one column in two written parts", nil, func(m *mapping.Mapping) { m.Nodes.ArchiveReason = "state" }, []string{"memories.state"}},
		{"memworker's own table", nil, func(m *mapping.Mapping) { m.Edges.Table = "mem_edges" }, []string{"mem_edges"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			schema := appSchema
			if c.schema != nil {
				schema = c.schema(schema)
			}
			path := filepath.Join(t.TempDir(), "memory.db")
			db := createMemory(t, path, schema)
			tx, err := db.SQL.Begin()
			if err != nil {
				t.Fatal(err)
			}
			appShape.write(t, tx, restoreGraph(), appShape.base)
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			db.Close()
			m := memoryTOML(t)
			if c.mutate != nil {
				c.mutate(m)
			}
			before := fileHashes(t, path)
			db = openAsWorker(t, path)
			err = worker.DeclareMapping(context.Background(), db, m, "memory.toml", appShape.base.wall)
			expectMappingError(t, err, c.want)
			if n := scalar[int](t, db, `SELECT count(*) FROM mem_mapping`); n != 0 {
				t.Errorf("%d mappings stored", n)
			}
			db.Close()
			sameFiles(t, before, fileHashes(t, path))
		})
	}
}

// TestMappedSchemaDriftRefused: a mapping is checked again before every
// use. Once the app's schema no longer fits the mapping it declared, a
// sweep, a dry run and a restore are each refused with one line naming
// the table and column, and the file is left byte for byte as it was.
func TestMappedSchemaDriftRefused(t *testing.T) {
	cases := []struct {
		name, ddl string
		want      []string
	}{
		{"a column renamed", `ALTER TABLE links RENAME COLUMN strength TO weight`, []string{"links", "strength"}},
		{"a column dropped", `ALTER TABLE memories DROP COLUMN uses`, []string{"memories", "uses"}},
		{"a table dropped", `DROP TABLE links`, []string{"links"}},
		{"a column retyped", `CREATE TABLE links_new (id INTEGER PRIMARY KEY,
				src INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
				dst INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
				kind TEXT NOT NULL, strength TEXT, hits INTEGER DEFAULT 0, touched_at TEXT, UNIQUE (src, dst, kind));
			INSERT INTO links_new SELECT * FROM links;
			DROP TABLE links;
			ALTER TABLE links_new RENAME TO links;`, []string{"links.strength", "TEXT"}},
	}
	ctx := context.Background()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := appShape
			g := restoreGraph()
			db, path := shapedMemory(t, s, g, s.base)
			mustExec(t, db, c.ddl)
			db.Close()
			before := fileHashes(t, path)
			db = openAsWorker(t, path)
			a, b := s.restoreKey(g.Links[8])
			for _, op := range []struct {
				name string
				run  func() error
			}{
				{"sweep", func() error { _, err := worker.Sweep(ctx, db, s.opt(s.base, worker.SweepOptions{})); return err }},
				{"dry run", func() error {
					_, err := worker.Sweep(ctx, db, s.opt(s.base, worker.SweepOptions{DryRun: true}))
					return err
				}},
				{"restore edge", func() error { _, err := worker.RestoreEdge(ctx, db, a, b, s.base.wall); return err }},
				{"restore block", func() error { _, err := worker.RestoreBlock(ctx, db, s.nodeSubject(5), s.base.wall); return err }},
			} {
				t.Run(op.name, func(t *testing.T) { expectMappingError(t, op.run(), c.want) })
			}
			db.Close()
			sameFiles(t, before, fileHashes(t, path))
		})
	}
}

// expectMappingError checks err is a mapping's refusal: ErrBadMapping, one
// line, naming each of want.
func expectMappingError(t *testing.T, err error, want []string) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted, want an error naming %q", want)
	}
	if !errors.Is(err, mapping.ErrBadMapping) {
		t.Errorf("not mapping.ErrBadMapping: %v", err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("more than one line: %q", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q does not name %q", err, w)
		}
	}
}

// TestMappedChangeCaptureRestored: a mapping whose change capture is not
// on the app's tables (declared by an older memworker, or dropped by the
// app) would let incremental sweeps miss the app's writes. A sweep finds
// it missing, reads every row and puts it back; a dry run only reads.
func TestMappedChangeCaptureRestored(t *testing.T) {
	s := appShape
	db, _ := shapedMemory(t, s, randomGraph(11, 60, 300, s.gen), s.base)
	sweepShape(t, s, db, s.base, worker.SweepOptions{})
	const captured = `SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'mem_map_%_queue_%'`
	want := scalar[int](t, db, captured)
	if want != 6 {
		t.Fatalf("%d change-capture triggers on memories and links, want 6", want)
	}
	for _, name := range []string{"mem_map_links_queue_update", "mem_map_links_queue_insert"} {
		mustExec(t, db, `DROP TRIGGER "`+name+`"`)
	}
	// Unseen by any queue: a link weakened below the prune threshold.
	id := scalar[int64](t, db, `SELECT min(id) FROM links`)
	mustExec(t, db, `UPDATE links SET strength = 0.01, hits = 0 WHERE id = ?`, id)

	c := s.base.after(1)
	dry := sweepShape(t, s, db, c, worker.SweepOptions{DryRun: true})
	if dry.EdgesPruned == 0 { // a dry run reads every row
		t.Error("the dry run does not prune the weakened link")
	}
	if got := scalar[int](t, db, captured); got != want-2 {
		t.Errorf("the dry run changed the triggers: %d, want %d", got, want-2)
	}
	r := sweepShape(t, s, db, c, worker.SweepOptions{})
	if !r.Full {
		t.Error("the sweep was not full though the change capture was missing")
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM links WHERE id = ?`, id); n != 0 {
		t.Error("the weakened link the queues never saw is still there")
	}
	if got := scalar[int](t, db, captured); got != want {
		t.Errorf("%d change-capture triggers after the sweep, want %d", got, want)
	}
	// From now on the app's writes are queued again.
	mustExec(t, db, `UPDATE links SET strength = 0.01, hits = 0 WHERE id = (SELECT min(id) FROM links)`)
	if r := sweepShape(t, s, db, c.after(1), worker.SweepOptions{}); r.Full || r.EdgesPruned != 1 {
		t.Errorf("the next sweep: full %v, %d pruned; want an incremental sweep pruning the link weakened since", r.Full, r.EdgesPruned)
	}
}

// TestMappedFacts: an app's own notes table as the facts (ISO-8601 times,
// integer ids, statuses of its own) is swept in place as the same facts
// in mem_facts are, each on both sides of the lifecycle thresholds, and
// restore brings a pruned and an archived note back.
func TestMappedFacts(t *testing.T) {
	ctx := context.Background()
	wall := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	type note struct {
		id                 int
		segment            string
		importance         float64
		accesses           int
		lastAccess, status string // lastAccess "" is NULL
	}
	notes := []note{
		{1, "context", 0.2, 0, "2026-01-01T00:00:00Z", "live"},        // short, long idle: pruned
		{2, "context", 0.9, 5, "2026-02-28T12:00:00Z", "live"},        // short, fresh: kept
		{3, "knowledge", 0.3, 0, "", "live"},                          // long, never accessed, created long ago: archived
		{4, "knowledge", 0.3, 0, "", "pinned"},                        // confirmed: immune
		{5, "identity", 0.85, 0, "2020-01-01T00:00:00Z", "live"},      // permanent: immune
		{6, "knowledge", 0.6, 3, "2026-02-20T00:00:00+00:00", "live"}, // long, recent: kept
		{7, "nonsense", 0.5, 0, "2026-02-20T00:00:00Z", "live"},       // no tier: an invalid row, named
	}
	appDB := createMemory(t, filepath.Join(t.TempDir(), "app.db"), `CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT,
		segment TEXT, importance REAL, access_count INTEGER NOT NULL DEFAULT 0, last_access TEXT, created_at TEXT, status TEXT)`)
	memDB := createMemory(t, filepath.Join(t.TempDir(), "mem.db"), "")
	memStatus := map[string]string{"live": "active", "pinned": "confirmed"}
	for _, n := range notes {
		var last any
		if n.lastAccess != "" {
			last = n.lastAccess
		}
		mustExec(t, appDB, `INSERT INTO notes VALUES (?, 'n', ?, ?, ?, ?, '2025-06-01T00:00:00Z', ?)`,
			n.id, n.segment, n.importance, n.accesses, last, n.status)
		mustExec(t, memDB, `INSERT INTO mem_facts (id, content, segment, importance, access_count, last_accessed_at, created_at, status)
			VALUES (?, 'n', ?, ?, ?, ?, '2025-06-01T00:00:00Z', ?)`, strconv.Itoa(n.id), n.segment, n.importance, n.accesses, last, memStatus[n.status])
	}
	m, err := mapping.Parse("notes.toml", []byte(notesMapping))
	if err != nil {
		t.Fatal(err)
	}
	if err := worker.DeclareMapping(ctx, appDB, m, "notes.toml", wall); err != nil {
		t.Fatal(err)
	}
	ra, err := worker.Sweep(ctx, appDB, worker.SweepOptions{WallNow: &wall})
	if err != nil {
		t.Fatal(err)
	}
	rm, err := worker.Sweep(ctx, memDB, worker.SweepOptions{WallNow: &wall})
	if err != nil {
		t.Fatal(err)
	}
	if ra.Facts != rm.Facts || ra.Facts.Archived != 1 || ra.Facts.Pruned != 1 || ra.InvalidRows.Count != 1 || rm.InvalidRows.Count != 1 {
		t.Fatalf("facts: app %+v (%d invalid), mem %+v (%d invalid); want one archived, one pruned, one invalid alike",
			ra.Facts, ra.InvalidRows.Count, rm.Facts, rm.InvalidRows.Count)
	}
	states := func(db *worker.DB, query string) string {
		rows, err := db.SQL.Query(query)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for rows.Next() {
			var v string
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			out = append(out, v)
		}
		if err := errorsOf(rows); err != nil {
			t.Fatal(err)
		}
		return strings.Join(out, " ")
	}
	app := states(appDB, `SELECT id || ':' || CASE status WHEN 'live' THEN 'active' WHEN 'pinned' THEN 'confirmed' ELSE status END FROM notes ORDER BY id`)
	mem := states(memDB, `SELECT id || ':' || status FROM mem_facts ORDER BY CAST(id AS INTEGER)`)
	if app != mem || app != "2:active 3:archived 4:confirmed 5:active 6:active 7:active" {
		t.Fatalf("after the sweep\napp %s\nmem %s", app, mem)
	}
	if got := states(appDB, `SELECT subject_id || ':' || action FROM mem_events ORDER BY id`); got != "1:prune 3:archive" {
		t.Errorf("events %s", got)
	}
	// explain --fact reads the note through the mapping as the sweep does.
	x, err := worker.ExplainFact(ctx, appDB, "2", wall)
	if err != nil {
		t.Fatal(err)
	}
	if x.Tier != "short" || x.Status != "active" || x.AccessCount != 5 || x.Invalid || x.Action != "keep" {
		t.Errorf("explain fact 2: %+v", x)
	}
	if x, err := worker.ExplainFact(ctx, appDB, "7", wall); err != nil || !x.Invalid {
		t.Errorf("explain fact 7 (no tier): %+v, %v; want an invalid row", x, err)
	}
	before := quotedRow(t, appDB, "notes", "id = 2")
	for _, id := range []string{"1", "3"} {
		if _, err := worker.RestoreFact(ctx, appDB, id, wall); err != nil {
			t.Fatalf("restore fact %s: %v", id, err)
		}
	}
	if _, err := worker.RestoreFact(ctx, appDB, "3", wall); !errors.Is(err, worker.ErrNothingToRestore) {
		t.Errorf("restoring fact 3 twice: %v, want ErrNothingToRestore", err)
	}
	row := quotedRow(t, appDB, "notes", "id = 1")
	want := map[string]string{"id": "1", "body": "'n'", "segment": "'context'", "importance": "0.2", "access_count": "0",
		"last_access": "'2026-03-01T00:00:00Z'", "created_at": "'2025-06-01T00:00:00Z'", "status": "'live'"}
	for k, v := range want {
		if row[k] != v {
			t.Errorf("restored note 1: %s = %s, want %s", k, row[k], v)
		}
	}
	if got := quotedRow(t, appDB, "notes", "id = 3")["status"]; got != "'live'" {
		t.Errorf("restored note 3 is %s", got)
	}
	if after := quotedRow(t, appDB, "notes", "id = 2"); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("a restore changed note 2: %v, was %v", after, before)
	}

	// Fact feedback writes the app's own columns, each in its own form.
	later := wall.Add(time.Hour)
	c, err := worker.Recall(ctx, appDB, "2", false, later)
	if err != nil {
		t.Fatal(err)
	}
	row = quotedRow(t, appDB, "notes", "id = 2")
	if c.AccessCountAfter != 6 || row["access_count"] != "6" || row["last_access"] != "'2026-03-01T01:00:00Z'" || row["status"] != "'live'" {
		t.Errorf("recall of note 2: %+v; row %v", c, row)
	}
	c, err = worker.Feedback(ctx, appDB, "6", true, later)
	if err != nil {
		t.Fatal(err)
	}
	if got := quotedRow(t, appDB, "notes", "id = 6")["importance"]; c.ImportanceAfter <= 0.6 || got != strconv.FormatFloat(c.ImportanceAfter, 'g', 17, 64) && got != fmt.Sprint(c.ImportanceAfter) {
		t.Errorf("feedback up on note 6: importance %v → %v, the row holds %s", c.ImportanceBefore, c.ImportanceAfter, got)
	}
	if got := states(appDB, `SELECT subject_id || ':' || action FROM mem_events WHERE action IN ('recall', 'feedback') ORDER BY id`); got != "2:recall 6:feedback" {
		t.Errorf("feedback events %s", got)
	}
	if _, err := worker.Recall(ctx, appDB, "3", false, later); err != nil {
		t.Errorf("recall of the restored note 3: %v", err)
	}
}

// TestMappedBadRowsNamed: a bad row of the app's tables is skipped and
// named by the app's own table and column, and the sweep goes on.
func TestMappedBadRowsNamed(t *testing.T) {
	s := appShape
	db, _ := shapedMemory(t, s, randomGraph(21, 40, 120, s.gen), s.base)
	first := scalar[int64](t, db, `SELECT min(id) FROM links`)
	mustExec(t, db, `UPDATE links SET strength = 'strong' WHERE id = ?`, first)
	mustExec(t, db, `UPDATE links SET touched_at = 'yesterday' WHERE id = ?`, first+1)
	mustExec(t, db, `UPDATE memories SET uses = -3 WHERE id = (SELECT min(id) FROM memories)`)
	r := sweepShape(t, s, db, s.base, worker.SweepOptions{})
	var got []string
	for _, v := range r.InvalidRows.Sample {
		got = append(got, v.Kind+" "+v.ID+": "+v.Problem)
	}
	want := []string{
		"block " + strconv.FormatInt(scalar[int64](t, db, `SELECT min(id) FROM memories`), 10) + ": memories.uses is negative",
		"edge " + strconv.FormatInt(first, 10) + ": links.strength is text",
		"edge " + strconv.FormatInt(first+1, 10) + ": links.touched_at is text",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("bad rows named\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM links WHERE id IN (?, ?)`, first, first+1); n != 2 {
		t.Errorf("%d of the 2 bad links are left: a sweep never touches a bad row", n)
	}
}

// TestMappedSweepDue: through a mapping "a sweep is due" reads the clock the
// sweeps run on (elfmem's own total_active_hours), as status and run
// --when-due both do.
func TestMappedSweepDue(t *testing.T) {
	s := elfmemShape
	db, _ := shapedMemory(t, s, randomGraph(31, 30, 60, s.gen), s.base)
	sweepShape(t, s, db, s.base, worker.SweepOptions{})
	for _, c := range []struct {
		later float64
		due   bool
	}{{0, false}, {10, false}, {40, true}, {55, true}} {
		s.setClock(t, db, s.base.after(c.later))
		st, err := worker.GetStatus(context.Background(), db)
		if err != nil {
			t.Fatal(err)
		}
		if st.CurateDue != c.due || st.ActiveHours != s.base.hours+c.later || *st.HoursSinceCurate != c.later {
			t.Errorf("%v h after the sweep: due %v (want %v), clock %v (want %v), %v h since",
				c.later, st.CurateDue, c.due, st.ActiveHours, s.base.hours+c.later, *st.HoursSinceCurate)
		}
	}
}

// TestMappedNullCountsAreZero: counts and flags an app leaves NULL (columns
// with no default) read as 0, as memworker's own rows start: the rows are
// swept, and a reinforcement writes the count it reaches.
func TestMappedNullCountsAreZero(t *testing.T) {
	s := appShape
	db, _ := shapedMemory(t, s, randomGraph(41, 40, 120, s.gen), s.base)
	mustExec(t, db, `UPDATE links SET hits = NULL`)
	mustExec(t, db, `UPDATE memories SET uses = NULL`)
	r := sweepShape(t, s, db, s.base, worker.SweepOptions{})
	if r.InvalidRows.Count != 0 || r.Reinforced == 0 {
		t.Fatalf("with NULL counts: %d invalid rows (want 0), %d reinforced; %s", r.InvalidRows.Count, r.Reinforced, r.Summary)
	}
	// Each reinforcement adds 1 (a block both constitutional and in the top
	// N gets 2); the others keep their NULL.
	if n := scalar[int](t, db, `SELECT coalesce(sum(uses), 0) FROM memories`); n != int(r.Reinforced+r.ConstitutionalReinforced) {
		t.Errorf("the memories' uses add up to %d, want the %d reinforcements", n, r.Reinforced+r.ConstitutionalReinforced)
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM memories WHERE uses = 0`); n != 0 {
		t.Errorf("the sweep wrote 0 into %d memories' NULL uses", n)
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM links WHERE hits IS NOT NULL`); n != 0 {
		t.Errorf("the sweep wrote %d links' NULL hits", n)
	}
}
