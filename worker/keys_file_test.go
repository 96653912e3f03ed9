package worker_test

// Keys a sweep cannot name a row by, through a mapping: a key column of
// no type holding values that read as one id (1 and '1': memworker reads
// ids as text), and a key that is NULL. Such rows are invalid rows:
// skipped, never changed nor removed, counted and named with the app's
// table; every other row is swept as usual, and decay never stops.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker"
)

// keysSchema is an app of notes, links and facts whose keys have no
// declared type (SQLite allows `id PRIMARY KEY`).
const keysSchema = `
CREATE TABLE notes (id PRIMARY KEY, state TEXT DEFAULT 'active', used INTEGER);
CREATE TABLE links (id PRIMARY KEY, a, b, w REAL, t INTEGER);
CREATE TABLE user_facts (id PRIMARY KEY, segment TEXT, importance REAL, access_count INTEGER, last_access INTEGER,
	created_at INTEGER, status TEXT DEFAULT 'live');
`

// keysRows: notes 1, 2, 4 fresh and 3, 5 faded; links 1 (1–2) and 2
// (1–3, which goes with note 3) strong, 3 (2–4) and 6 (1–4) weak enough
// for a static prune; facts 7 and 9 not accessed since 1970, 8 now.
func keysRows() string {
	return fmt.Sprintf(`INSERT INTO notes (id, used) VALUES (1, %[1]d), (2, %[1]d), (3, %[2]d), (4, %[1]d), (5, %[2]d);
INSERT INTO links VALUES (1, 1, 2, 0.9, %[1]d), (2, 1, 3, 0.9, %[1]d), (3, 2, 4, 0.01, %[1]d), (6, 1, 4, 0.01, %[1]d);
INSERT INTO user_facts (id, segment, importance, access_count, last_access, created_at) VALUES
	(7, 'context', 0.4, 0, %[2]d, %[2]d), (8, 'context', 0.4, 0, %[1]d, %[1]d), (9, 'context', 0.4, 0, %[2]d, %[2]d);
`, recent, ancient)
}

// keysMapping maps keysSchema's three tables, on unix seconds.
var keysMapping = reviewMapping(`"id"`, `"id"`, "", "") + `
[facts]
table = "user_facts"
key = "id"
segment = "segment"
importance = "importance"
access_count = "access_count"
last_access = "last_access"
last_access_clock = "unix_seconds"
created_at = "created_at"
created_at_clock = "unix_seconds"
status = "status"
status_active = ["live"]
status_archived = "archived"
`

// keysCollisions are the rows an app writes after declaring the mapping
// whose keys read as those of note 5, link 3 and fact 7.
func keysCollisions() string {
	return fmt.Sprintf(`INSERT INTO notes (id, used) VALUES ('5', %[2]d);
INSERT INTO links VALUES ('3', 2, 4, 0.01, %[1]d);
INSERT INTO user_facts (id, segment, importance, access_count, last_access, created_at) VALUES
	('7', 'context', 0.4, 0, %[2]d, %[2]d), (x'37', 'context', 0.4, 0, %[2]d, %[2]d);
`, recent, ancient)
}

// namedWithTable lists a report's invalid rows as "table id: problem",
// sorted.
func namedWithTable(rows []worker.InvalidRow) []string {
	out := make([]string, len(rows))
	for i, v := range rows {
		out[i] = v.Table + " " + v.ID + ": " + v.Problem
	}
	slices.Sort(out)
	return out
}

// expectInvalid fails unless the invalid rows are exactly want (as
// namedWithTable lists them) and count says as many.
func expectInvalid(t *testing.T, what string, count int64, rows []worker.InvalidRow, want ...string) {
	t.Helper()
	slices.Sort(want)
	if got := namedWithTable(rows); count != int64(len(want)) || !slices.Equal(got, want) {
		t.Errorf("%s: invalid rows %d\n  %s\nwant\n  %s", what, count, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// rowsOf is every row of an app's table, each column quoted, in key order.
func rowsOf(t *testing.T, db *worker.DB, table, where string) string {
	t.Helper()
	cols, err := columnsOf(db.SQL, table)
	if err != nil {
		t.Fatal(err)
	}
	quotes := make([]string, len(cols))
	for i, c := range cols {
		quotes[i] = `quote("` + c + `")`
	}
	return scalar[string](t, db, `SELECT coalesce(group_concat(r, '; '), '') FROM (SELECT `+strings.Join(quotes, " || ',' || ")+
		` AS r FROM `+table+` WHERE `+where+` ORDER BY 1)`)
}

// collidingInvalid are the invalid rows keysCollisions makes.
var collidingInvalid = []string{
	"notes 5: notes.id 5 and '5' read as one id; both skipped",
	"notes '5': notes.id 5 and '5' read as one id; both skipped",
	"links 3: links.id 3 and '3' read as one id; both skipped",
	"links '3': links.id 3 and '3' read as one id; both skipped",
	"user_facts 7: user_facts.id 7 and '7' and X'37' read as one id; all 3 skipped",
	"user_facts '7': user_facts.id 7 and '7' and X'37' read as one id; all 3 skipped",
	"user_facts X'37': user_facts.id 7 and '7' and X'37' read as one id; all 3 skipped",
}

// TestKeysCollidingSkipped: rows an app writes after declaring the
// mapping, whose keys of no type read as another row's id (5 and '5'),
// used to stop every sweep (the mapping refused before each one; before
// that, UNIQUE constraint failed: refresh_block_rows.id, or both links
// removed with one event). They are invalid rows now: never changed nor
// removed, named with the app's table and the keys as the app holds them,
// and every other row is swept as usual, by full and incremental sweeps.
// Once the app tells them apart, the next sweep sweeps them.
func TestKeysCollidingSkipped(t *testing.T) {
	for _, full := range []bool{false, true} {
		t.Run(fmt.Sprintf("full=%v", full), func(t *testing.T) {
			ctx := context.Background()
			db, _ := reviewDBAt(t, keysSchema+keysRows(), keysMapping)
			mustExec(t, db, keysCollisions())
			colliding := map[string]string{"notes": "CAST(id AS TEXT) = '5'", "links": "CAST(id AS TEXT) = '3'", "user_facts": "CAST(id AS TEXT) = '7'"}
			before := map[string]string{}
			for table, where := range colliding {
				before[table] = rowsOf(t, db, table, where)
			}
			r, err := worker.Sweep(ctx, db, worker.SweepOptions{WallNow: &reviewWall, Full: full})
			if err != nil {
				t.Fatalf("sweep: %v", err)
			}
			expectInvalid(t, "sweep", r.InvalidRows.Count, r.InvalidRows.Sample, collidingInvalid...)
			if r.Archived != 1 || r.EdgesRemovedWithBlocks != 1 || r.EdgesPruned != 1 || r.Facts.Archived+r.Facts.Pruned != 1 {
				t.Errorf("%s; facts %+v: want note 3 archived with link 2, link 6 pruned, fact 9 pruned", r.Summary, r.Facts)
			}
			if got := eventSummary(t, db); got != "block 3:archive:decayed, edge 2:delete:block_archived, edge 6:prune:static, fact 9:prune:faded" {
				t.Errorf("events: %s", got)
			}
			for table, where := range colliding {
				if after := rowsOf(t, db, table, where); after != before[table] {
					t.Errorf("%s: the rows that read as one id changed:\n  %s\nwere\n  %s", table, after, before[table])
				}
			}
			// The dry run that decayed --invalid reads names the same rows.
			all, err := worker.ListInvalid(ctx, db)
			if err != nil {
				t.Fatalf("ListInvalid: %v", err)
			}
			expectInvalid(t, "ListInvalid", int64(len(all)), all, collidingInvalid...)
			// The next sweep, later, names them again and does not fail.
			later := reviewWall.Add(time.Hour)
			r, err = worker.Sweep(ctx, db, worker.SweepOptions{WallNow: &later, Full: full})
			if err != nil {
				t.Fatalf("second sweep: %v", err)
			}
			expectInvalid(t, "second sweep", r.InvalidRows.Count, r.InvalidRows.Sample, collidingInvalid...)
			for table, where := range colliding {
				if after := rowsOf(t, db, table, where); after != before[table] {
					t.Errorf("second sweep: %s: the rows that read as one id changed:\n  %s\nwere\n  %s", table, after, before[table])
				}
			}
			// The app gives them distinct ids: the rows are swept again.
			mustExec(t, db, `DELETE FROM notes WHERE id = '5'; DELETE FROM links WHERE id = '3';
				DELETE FROM user_facts WHERE id IN ('7', x'37')`)
			latest := reviewWall.Add(2 * time.Hour)
			r, err = worker.Sweep(ctx, db, worker.SweepOptions{WallNow: &latest, Full: full})
			if err != nil {
				t.Fatalf("third sweep: %v", err)
			}
			expectInvalid(t, "third sweep", r.InvalidRows.Count, r.InvalidRows.Sample)
			if r.Archived != 1 || r.EdgesPruned != 1 || r.Facts.Archived+r.Facts.Pruned != 1 {
				t.Errorf("third sweep: %s; facts %+v: want note 5 archived, link 3 pruned, fact 7 pruned", r.Summary, r.Facts)
			}
			if got := scalar[string](t, db, `SELECT state FROM notes WHERE id = 5`); got != "gone" {
				t.Errorf("note 5 is %q, want gone", got)
			}
			if n := scalar[int](t, db, `SELECT count(*) FROM links WHERE id = 3`); n != 0 {
				t.Errorf("link 3 still there")
			}
		})
	}
}

// TestKeysCollidingStillRefusedWhenDeclared: a mapping declared over rows
// whose keys read as one id is refused, naming them; declared before
// them, it stays in use (the sweep names the rows instead).
func TestKeysCollidingStillRefusedWhenDeclared(t *testing.T) {
	expectRefusedUnchanged(t, keysSchema+keysRows()+keysCollisions(), keysMapping,
		"nodes.key", "notes.id has no type", "5 and '5'", "declare the key INTEGER or TEXT")
	db, _ := reviewDBAt(t, keysSchema+keysRows(), keysMapping)
	mustExec(t, db, keysCollisions())
	if _, err := worker.Mapping(context.Background(), db); err != nil {
		t.Errorf("the declared mapping, read for use: %v", err)
	}
}

// nullKeysSchema is an app whose keys are TEXT columns that may hold
// NULL (a UNIQUE index allows any number of NULLs): notes, links by a
// key of one column or of two, and facts.
func nullKeysSchema(twoColumns bool) string {
	links := `CREATE TABLE links (uid TEXT UNIQUE, a TEXT NOT NULL, b TEXT NOT NULL, w REAL, t INTEGER);`
	if twoColumns {
		links = `CREATE TABLE links (a TEXT, b TEXT, w REAL, t INTEGER, UNIQUE (a, b));`
	}
	return `CREATE TABLE notes (id TEXT UNIQUE, state TEXT DEFAULT 'active', used INTEGER);
CREATE TABLE user_facts (id TEXT UNIQUE, segment TEXT, importance REAL, access_count INTEGER, last_access INTEGER,
	created_at INTEGER, status TEXT DEFAULT 'live');
` + links
}

// TestKeysNullNamed: a row whose key is NULL can be named by no event, so
// a sweep skips it; it used to be left out silently. It is an invalid row
// now, counted and named (the key column that is NULL), never changed,
// for nodes, facts and links by a key of one column or two.
func TestKeysNullNamed(t *testing.T) {
	for _, two := range []bool{false, true} {
		t.Run(fmt.Sprintf("two_columns=%v", two), func(t *testing.T) {
			key, links := `"uid"`, fmt.Sprintf(`INSERT INTO links VALUES ('l1', '1', '2', 0.9, %[1]d), (NULL, '1', '3', 0.01, %[1]d), ('l3', '2', '3', 0.01, %[1]d)`, recent)
			wantLinks := []string{"links NULL: links.uid is NULL"}
			if two {
				key, links = `["a", "b"]`, fmt.Sprintf(`INSERT INTO links VALUES ('1', '2', 0.9, %[1]d), (NULL, '3', 0.01, %[1]d), ('1', NULL, 0.01, %[1]d),
					(NULL, NULL, 0.01, %[1]d), ('2', '3', 0.01, %[1]d)`, recent)
				wantLinks = []string{"links (NULL, '3'): links.a is NULL", "links ('1', NULL): links.b is NULL", "links (NULL, NULL): links.a is NULL"}
			}
			toml := strings.Replace(keysMapping, "[edges]\ntable = \"links\"\nkey = \"id\"", "[edges]\ntable = \"links\"\nkey = "+key, 1)
			db, _ := reviewDBAt(t, nullKeysSchema(two), toml)
			mustExec(t, db, fmt.Sprintf(`INSERT INTO notes (id, used) VALUES ('1', %[1]d), ('2', %[1]d), ('3', %[1]d), (NULL, %[2]d);
				INSERT INTO user_facts (id, segment, importance, access_count, last_access, created_at) VALUES
					('8', 'context', 0.4, 0, %[1]d, %[1]d), (NULL, 'context', 0.4, 0, %[2]d, %[2]d)`, recent, ancient))
			mustExec(t, db, links)
			before := map[string]string{}
			for _, table := range []string{"notes", "links", "user_facts"} {
				before[table] = rowsOf(t, db, table, "true")
			}
			want := append([]string{"notes NULL: notes.id is NULL", "user_facts NULL: user_facts.id is NULL"}, wantLinks...)
			for i, at := range []time.Time{reviewWall, reviewWall.Add(time.Hour)} {
				r, err := worker.Sweep(context.Background(), db, worker.SweepOptions{WallNow: &at})
				if err != nil {
					t.Fatalf("sweep %d: %v", i, err)
				}
				expectInvalid(t, fmt.Sprintf("sweep %d", i), r.InvalidRows.Count, r.InvalidRows.Sample, want...)
				if i == 0 && r.EdgesPruned != 1 {
					t.Errorf("sweep %d: %s: want the weak link with a key pruned", i, r.Summary)
				}
			}
			for _, table := range []string{"notes", "user_facts"} {
				if after := rowsOf(t, db, table, "id IS NULL"); after != strings.Join(nullRows(before[table]), "; ") {
					t.Errorf("%s: the row with a NULL key changed: %s", table, after)
				}
			}
			if n := scalar[int](t, db, `SELECT count(*) FROM links WHERE `+map[bool]string{false: "uid IS NULL", true: "a IS NULL OR b IS NULL"}[two]); n != len(wantLinks) {
				t.Errorf("%d links with a NULL key left, want %d", n, len(wantLinks))
			}
		})
	}
}

// nullRows are the rows of rowsOf's list whose first column is NULL.
func nullRows(list string) []string {
	var out []string
	for _, r := range strings.Split(list, "; ") {
		if strings.HasPrefix(r, "NULL,") {
			out = append(out, r)
		}
	}
	return out
}

// TestKeysInvalidNamedWithAppTable: through a mapping, the report's
// invalid rows, those a rule finds and those the app's rules hold alike,
// name the app's table the row is in (memworker's own rows name none:
// their kind names mem_blocks, mem_edges, mem_facts).
func TestKeysInvalidNamedWithAppTable(t *testing.T) {
	db, _ := reviewDBAt(t, keysSchema+keysRows()+`CREATE TABLE link_notes (id INTEGER PRIMARY KEY, link_id REFERENCES links (id) ON DELETE RESTRICT);
		INSERT INTO link_notes (link_id) VALUES (6);`, keysMapping)
	mustExec(t, db, fmt.Sprintf(`INSERT INTO links VALUES (10, 1, 2, 'heavy', %[1]d);
		INSERT INTO notes (id, used) VALUES (11, 'soon');
		INSERT INTO user_facts (id, segment, importance, access_count, last_access, created_at) VALUES (12, 'context', 'high', 0, %[1]d, %[1]d)`, recent))
	want := []string{
		"links 10: links.w is text",
		"links 6: prune refused: ",
		"notes 11: notes.used is text",
		"user_facts 12: user_facts.importance is text",
	}
	check := func(what string, rows []worker.InvalidRow) {
		t.Helper()
		got := namedWithTable(rows)
		ok := len(got) == len(want)
		for i := 0; ok && i < len(want); i++ {
			ok = strings.HasPrefix(got[i], want[i])
		}
		if !ok {
			t.Errorf("%s: invalid rows\n  %s\nwant\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
	}
	dry, err := worker.Sweep(context.Background(), db, worker.SweepOptions{WallNow: &reviewWall, DryRun: true})
	if err != nil {
		t.Fatalf("dry run: %v", err)
	}
	check("dry run", dry.InvalidRows.Sample)
	check("sweep", mustReviewSweep(t, db, reviewWall).InvalidRows.Sample)
}
