package worker_test

// A sweep through a mapping never breaks the app's own rules (SPEC §3):
// it removes no app row it does not archive, honours the app's foreign
// keys, and a row the app's rules refuse to change (or silently keep) is
// skipped and named, never counted as changed nor a reason to stop.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker"
)

// rulesApp is an app of notes and links: five weak links (ids 1–5,
// weight 0.05, which a static prune removes) and five strong ones (ids
// 11–15) between fresh notes 1–6, and a faded note 7 (no bridge) with one
// link (id 6, weight 0.2) to note 1.
const rulesApp = `
CREATE TABLE notes (id INTEGER PRIMARY KEY, state TEXT DEFAULT 'active', used INTEGER, hits INTEGER DEFAULT 0);
CREATE TABLE links (id INTEGER PRIMARY KEY, a INTEGER REFERENCES notes (id), b INTEGER REFERENCES notes (id), w REAL, t INTEGER);
`

// rulesRows fills rulesApp's tables.
func rulesRows() string {
	var b strings.Builder
	for i := 1; i <= 6; i++ {
		fmt.Fprintf(&b, "INSERT INTO notes (id, used) VALUES (%d, %d);\n", i, recent)
	}
	fmt.Fprintf(&b, "INSERT INTO notes (id, used) VALUES (7, %d);\n", ancient)
	for i := 1; i <= 5; i++ {
		fmt.Fprintf(&b, "INSERT INTO links (id, a, b, w, t) VALUES (%d, %d, %d, 0.05, %d);\n", i, i, i+1, recent)
	}
	fmt.Fprintf(&b, "INSERT INTO links (id, a, b, w, t) VALUES (6, 7, 1, 0.2, %d);\n", recent)
	for i := 1; i <= 5; i++ {
		fmt.Fprintf(&b, "INSERT INTO links (id, a, b, w, t) VALUES (%d, %d, %d, 0.9, %d);\n", 10+i, i, i+1, recent)
	}
	return b.String()
}

// rulesMapping maps rulesApp, the notes' use count as their reinforcement.
var rulesMapping = reviewMapping(`"id"`, `"id"`, `reinforcement_count = "hits"`, "")

// rulesDB is a migrated file holding rulesApp, its extra schema and its
// rows, with the mapping declared, opened as the worker opens it.
func rulesDB(t *testing.T, extra string) (*worker.DB, string) {
	t.Helper()
	return reviewDBAt(t, rulesApp+extra+rulesRows(), rulesMapping)
}

// invalidNamed lists the report's invalid rows as kind id: problem.
func invalidNamed(r *worker.Report) []string {
	var out []string
	for _, v := range r.InvalidRows.Sample {
		out = append(out, v.Kind+" "+v.ID+": "+v.Problem)
	}
	slices.Sort(out)
	return out
}

// expectNamed fails unless the report names exactly the rows want (each a
// prefix "kind id: problem start").
func expectNamed(t *testing.T, r *worker.Report, want ...string) {
	t.Helper()
	got := invalidNamed(r)
	ok := len(got) == len(want) && r.InvalidRows.Count == int64(len(want))
	for i := 0; ok && i < len(want); i++ {
		ok = strings.HasPrefix(got[i], want[i])
	}
	if !ok {
		t.Errorf("invalid rows %d %q, want %q", r.InvalidRows.Count, got, want)
	}
}

// linkIDs lists the links left, but the strong ones (11–15).
func linkIDs(t *testing.T, db *worker.DB) string {
	t.Helper()
	return scalar[string](t, db, `SELECT coalesce(group_concat(id, ','), '') FROM (SELECT id FROM links WHERE id < 11 ORDER BY id)`)
}

// TestAppRulesRestrictHoldsLink: a link a RESTRICT (or NO ACTION) child
// references stays, named as refused; the others are pruned with their
// archive rows; the app's foreign keys hold and the sweep succeeds.
func TestAppRulesRestrictHoldsLink(t *testing.T) {
	for _, action := range []string{"ON DELETE RESTRICT", "", "DEFERRABLE INITIALLY DEFERRED"} {
		t.Run(strings.ReplaceAll(strings.TrimSpace(action+" x"), " ", "_"), func(t *testing.T) {
			db, _ := rulesDB(t, `CREATE TABLE link_notes (id INTEGER PRIMARY KEY, link_id INTEGER REFERENCES links (id) `+action+`, body TEXT);`+
				`INSERT INTO link_notes (link_id, body) VALUES (2, 'x'), (4, 'y'), (4, 'z');`)
			r := mustReviewSweep(t, db, reviewWall)
			if r.EdgesPruned != 3 {
				t.Errorf("%d links pruned, want 3 (%s)", r.EdgesPruned, r.Summary)
			}
			expectNamed(t, r, "edge 2: prune refused: ", "edge 4: prune refused: ")
			if got := linkIDs(t, db); got != "2,4" {
				t.Errorf("links left %s, want 2,4 (6 goes with its faded note)", got)
			}
			if n := scalar[int](t, db, `SELECT count(*) FROM link_notes`); n != 3 {
				t.Errorf("%d link notes, want 3", n)
			}
			if n := scalar[int](t, db, `SELECT count(*) FROM mem_events WHERE subject_kind = 'edge' AND action = 'prune'`); n != 3 {
				t.Errorf("%d prune events, want 3", n)
			}
			appIntact(t, db)
			// The next sweep names them again, and removes nothing more.
			r = mustReviewSweep(t, db, reviewWall.Add(time.Minute))
			expectNamed(t, r, "edge 2: prune refused: ", "edge 4: prune refused: ")
			if r.EdgesPruned != 0 {
				t.Errorf("second sweep pruned %d", r.EdgesPruned)
			}
		})
	}
}

// TestAppRulesCascadeNeverFires: a table whose foreign key would cascade
// (or set NULL) from the links is refused when the mapping is declared;
// one the app adds later never loses a row to a sweep: the sweep refuses
// the mapping as it stands now, or keeps the links it references, named.
func TestAppRulesCascadeNeverFires(t *testing.T) {
	for _, action := range []string{"ON DELETE CASCADE", "ON DELETE SET NULL"} {
		t.Run(strings.ReplaceAll(action, " ", "_"), func(t *testing.T) {
			db, _ := rulesDB(t, "")
			mustExec(t, db, `CREATE TABLE link_notes (id INTEGER PRIMARY KEY, link_id INTEGER REFERENCES links (id) `+action+`, body TEXT);
				INSERT INTO link_notes (link_id, body) VALUES (2, 'x'), (4, 'y');`)
			r, err := reviewSweep(t, db, reviewWall)
			if got := scalar[string](t, db, `SELECT group_concat(coalesce(link_id, 'NULL'), ',') FROM link_notes`); got != "2,4" {
				t.Errorf("link notes' links %s, want 2,4", got)
			}
			appIntact(t, db)
			if err != nil {
				if got := linkIDs(t, db); got != "1,2,3,4,5,6" {
					t.Errorf("the sweep failed (%v) and links left are %s", err, got)
				}
				return
			}
			if r.EdgesPruned != 3 {
				t.Errorf("%d pruned, want 3", r.EdgesPruned)
			}
			expectNamed(t, r, "edge 2: prune refused: referenced by link_notes.link_id ("+action+")",
				"edge 4: prune refused: referenced by link_notes.link_id ("+action+")")
		})
	}
}

// TestAppRulesSweepEnforcesForeignKeys: the sweep's own connection runs
// with the app's foreign keys on while it writes the app's tables, so an
// archival whose new status a foreign key forbids is refused and named,
// not written.
func TestAppRulesSweepEnforcesForeignKeys(t *testing.T) {
	db, _ := reviewDBAt(t, `CREATE TABLE states (name TEXT PRIMARY KEY);
		INSERT INTO states VALUES ('active');
		CREATE TABLE notes (id INTEGER PRIMARY KEY, state TEXT DEFAULT 'active' REFERENCES states (name), used INTEGER, hits INTEGER DEFAULT 0);
		CREATE TABLE links (id INTEGER PRIMARY KEY, a INTEGER REFERENCES notes (id), b INTEGER REFERENCES notes (id), w REAL, t INTEGER);`+
		rulesRows(), rulesMapping)
	r := mustReviewSweep(t, db, reviewWall)
	expectNamed(t, r, "block 7: archive refused: ")
	if r.Archived != 0 {
		t.Errorf("%d archived, want 0", r.Archived)
	}
	if got := scalar[string](t, db, `SELECT state FROM notes WHERE id = 7`); got != "active" {
		t.Errorf("note 7 is %s", got)
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM mem_events WHERE subject_kind = 'block'`); n != 0 {
		t.Errorf("%d block events", n)
	}
	appIntact(t, db)
}

// TestAppRulesRefusedUpdates: an app rule that refuses an update (a
// BEFORE UPDATE trigger that aborts, a CHECK on a written column) stops
// only that change, named; the sweep goes on, its other changes made.
func TestAppRulesRefusedUpdates(t *testing.T) {
	for _, c := range []struct{ name, extra string }{
		{"trigger on archive", `CREATE TRIGGER keep7 BEFORE UPDATE OF state ON notes WHEN OLD.id = 7 AND NEW.state != OLD.state BEGIN SELECT RAISE(ABORT, 'note 7 stays'); END;`},
		{"check on status", `CREATE TABLE x (y); DROP TABLE x;`},
	} {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			schema := rulesApp
			if c.name == "check on status" {
				schema = strings.Replace(rulesApp, "state TEXT DEFAULT 'active'", "state TEXT DEFAULT 'active' CHECK (state IN ('active', 'done'))", 1)
			}
			db, _ := reviewDBAt(t, schema+c.extra+rulesRows(), rulesMapping)
			r := mustReviewSweep(t, db, reviewWall)
			expectNamed(t, r, "block 7: archive refused: ")
			if r.Archived != 0 || r.EdgesPruned != 5 || r.Skipped != 0 {
				t.Errorf("%s; skipped %d", r.Summary, r.Skipped)
			}
			if got := scalar[string](t, db, `SELECT state FROM notes WHERE id = 7`); got != "active" {
				t.Errorf("note 7 is %s", got)
			}
			if got := linkIDs(t, db); got != "6" {
				t.Errorf("links left %s, want 6 (note 7's link stays with it)", got)
			}
			if n := scalar[int](t, db, `SELECT count(*) FROM mem_events WHERE subject_kind = 'block' OR action = 'delete'`); n != 0 {
				t.Errorf("%d events of the refused archival", n)
			}
		})
	}
}

// TestAppRulesRefusedReinforcement: an app rule refusing the
// reinforcement's update of a node (its use count, its time of use)
// stops only that node's reinforcement, named; the sweep is recorded. The
// reinforcements run without a savepoint until one is refused: the
// finish's transaction then runs again, guarded, and stores what it
// stores without the rule (the ranking's scales).
func TestAppRulesRefusedReinforcement(t *testing.T) {
	// A first sweep, then an incremental one a day later (whose finish
	// stores the ranking's bounds in its own transactions).
	later := reviewWall.Add(24 * time.Hour)
	free, _ := reviewDBAt(t, rulesApp+rulesRows(), rulesMapping)
	freeScale := map[time.Time]string{}
	for _, w := range []time.Time{reviewWall, later} {
		mustReviewSweep(t, free, w)
		if freeScale[w] = scalar[string](t, free, `SELECT coalesce(max(value), '') FROM mem_config WHERE key = 'rank_scale'`); freeScale[w] == "" {
			t.Fatalf("at %v: no rank_scale stored without the rule", w)
		}
	}
	for _, c := range []struct{ name, schema string }{
		{"trigger", rulesApp + `CREATE TRIGGER frozen BEFORE UPDATE OF hits ON notes WHEN OLD.id = 1 BEGIN SELECT RAISE(ABORT, 'note 1 is frozen'); END;`},
		{"check", strings.Replace(rulesApp, "hits INTEGER DEFAULT 0", "hits INTEGER DEFAULT 0 CHECK (id != 1 OR hits = 0)", 1)},
	} {
		t.Run(c.name, func(t *testing.T) {
			db, _ := reviewDBAt(t, c.schema+rulesRows(), rulesMapping)
			sweepAt := func(w time.Time) *worker.Report {
				guarded := 0
				r, err := worker.Sweep(context.Background(), db, worker.WithGuarded(worker.SweepOptions{WallNow: &w}, func() { guarded++ }))
				if err != nil {
					t.Fatal(err)
				}
				if guarded != 1 {
					t.Errorf("at %v: the sweep turned guarded %d times, want once (the refusal came unguarded)", w, guarded)
				}
				if scale := scalar[string](t, db, `SELECT coalesce(max(value), '') FROM mem_config WHERE key = 'rank_scale'`); scale != freeScale[w] {
					t.Errorf("at %v: rank_scale %q, want %q as without the rule", w, scale, freeScale[w])
				}
				return r
			}
			r := sweepAt(reviewWall)
			named := invalidNamed(r)
			if len(named) != 1 || !strings.HasPrefix(named[0], "block 1: reinforce refused: ") {
				t.Errorf("invalid rows %q, want block 1's reinforcement refused", named)
			}
			if n := scalar[int](t, db, `SELECT hits FROM notes WHERE id = 1`); n != 0 {
				t.Errorf("note 1 hits %d", n)
			}
			if n := scalar[int](t, db, `SELECT count(*) FROM notes WHERE hits > 0`); int64(n) != r.Reinforced || n == 0 {
				t.Errorf("%d notes reinforced, report says %d", n, r.Reinforced)
			}
			if n := scalar[int](t, db, `SELECT count(*) FROM mem_sweeps WHERE status = 'done'`); n != 1 {
				t.Errorf("%d sweeps recorded done", n)
			}
			sweepAt(later)
		})
	}
}

// TestAppRulesIgnoredDeleteNotLogged: a BEFORE DELETE trigger that
// RAISE(IGNORE)s keeps its link; the sweep neither counts it nor archives
// it, names it, and restore has nothing to put back.
func TestAppRulesIgnoredDeleteNotLogged(t *testing.T) {
	db, _ := rulesDB(t, `CREATE TRIGGER keep3 BEFORE DELETE ON links WHEN OLD.id = 3 BEGIN SELECT RAISE(IGNORE); END;`)
	r := mustReviewSweep(t, db, reviewWall)
	if r.EdgesPruned != 4 {
		t.Errorf("%d pruned, want 4 (%s)", r.EdgesPruned, r.Summary)
	}
	expectNamed(t, r, "edge 3: removal kept by app")
	if got := linkIDs(t, db); got != "3" {
		t.Errorf("links left %s", got)
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM mem_events WHERE subject_kind = 'edge' AND subject_id = '3'`); n != 0 {
		t.Errorf("%d events for the kept link", n)
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM mem_events WHERE subject_kind = 'edge' AND action = 'prune'`); n != 4 {
		t.Errorf("%d prune events, want 4", n)
	}
	// The next sweep, the trigger gone, removes it.
	mustExec(t, db, `DROP TRIGGER keep3`)
	r = mustReviewSweep(t, db, reviewWall.Add(time.Minute))
	if r.EdgesPruned != 1 || r.InvalidRows.Count != 0 {
		t.Errorf("after the trigger went: %s; invalid %q", r.Summary, invalidNamed(r))
	}
}

// TestAppRulesIgnoredUpdateNotLogged: a BEFORE UPDATE trigger that
// RAISE(IGNORE)s keeps its note active: the sweep does not count it
// archived, writes no archive row for it or its links, and names it.
func TestAppRulesIgnoredUpdateNotLogged(t *testing.T) {
	db, _ := rulesDB(t, `CREATE TRIGGER keep7 BEFORE UPDATE OF state ON notes WHEN OLD.id = 7 AND NEW.state != OLD.state BEGIN SELECT RAISE(IGNORE); END;`)
	r := mustReviewSweep(t, db, reviewWall)
	if r.Archived != 0 || r.EdgesRemovedWithBlocks != 0 {
		t.Errorf("%s", r.Summary)
	}
	expectNamed(t, r, "block 7: archive kept by app")
	if got := linkIDs(t, db); got != "6" {
		t.Errorf("links left %s, want 6", got)
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM mem_events WHERE subject_kind = 'block' OR action = 'delete'`); n != 0 {
		t.Errorf("%d events of the kept archival", n)
	}
	if _, err := worker.RestoreBlock(context.Background(), db, "7", reviewWall); err == nil {
		t.Errorf("restore of the kept note found something to restore")
	}
}

// TestAppRulesIgnoredReinforce: a BEFORE UPDATE trigger that
// RAISE(IGNORE)s a note's use count keeps it as it was: the sweep names
// the note, does not count it reinforced (nor in the report it records),
// and reinforces the others.
func TestAppRulesIgnoredReinforce(t *testing.T) {
	db, _ := rulesDB(t, `CREATE TRIGGER keep_hits BEFORE UPDATE OF hits ON notes WHEN OLD.id = 2 BEGIN SELECT RAISE(IGNORE); END;`)
	r := mustReviewSweep(t, db, reviewWall)
	if r.Reinforced != 4 || r.Archived != 1 || r.EdgesPruned != 5 || r.Skipped != 0 {
		t.Errorf("%s; skipped %d", r.Summary, r.Skipped)
	}
	expectNamed(t, r, "block 2: reinforce kept by app: its update was ignored")
	if got := scalar[string](t, db, `SELECT group_concat(id || '=' || hits, ' ') FROM (SELECT id, hits FROM notes ORDER BY id)`); got != "1=1 2=0 3=1 4=1 5=1 6=0 7=0" {
		t.Errorf("hits %s", got)
	}
	recorded := scalar[string](t, db, `SELECT json_extract(result, '$.reinforced') || ' ' || json_extract(result, '$.invalid_rows.count') || ' ' ||
		json_extract(result, '$.summary') FROM mem_sweeps WHERE status = 'done'`)
	if want := "4 1 " + r.Summary; recorded != want {
		t.Errorf("recorded %q, want %q", recorded, want)
	}
	// The app lets go: the next sweep reinforces it.
	mustExec(t, db, `DROP TRIGGER keep_hits`)
	r = mustReviewSweep(t, db, reviewWall.Add(time.Minute))
	if r.InvalidRows.Count != 0 || scalar[int](t, db, `SELECT hits FROM notes WHERE id = 2`) == 0 {
		t.Errorf("after the trigger went: %s; invalid %q", r.Summary, invalidNamed(r))
	}
}

// TestAppRulesIgnoredReinforceOwnTables: the same on memworker's own
// blocks, whose trigger keeps a block's reinforcement count.
func TestAppRulesIgnoredReinforceOwnTables(t *testing.T) {
	db, _ := newMemory(t, refusalFixture())
	before := sweepChunked(t, db, 1000, fixedWall, worker.SweepOptions{ChunkSize: 8})
	if before.Reinforced == 0 {
		t.Fatalf("the fixture reinforces nothing: %s", before.Summary)
	}
	kept := scalar[string](t, db, `SELECT id FROM mem_blocks WHERE reinforcement_count > 0 ORDER BY id LIMIT 1`)
	mustExec(t, db, `CREATE TRIGGER keep_count BEFORE UPDATE OF reinforcement_count ON mem_blocks WHEN OLD.id = '`+kept+`'
		BEGIN SELECT RAISE(IGNORE); END;`)
	count := scalar[int](t, db, `SELECT reinforcement_count FROM mem_blocks WHERE id = ?`, kept)
	r := sweepChunked(t, db, 1001, fixedWall, worker.SweepOptions{ChunkSize: 8})
	if r.Reinforced != before.Reinforced-1 {
		t.Errorf("%d reinforced, want %d: %s", r.Reinforced, before.Reinforced-1, r.Summary)
	}
	expectNamed(t, r, "block "+kept+": reinforce kept by app")
	if got := scalar[int](t, db, `SELECT reinforcement_count FROM mem_blocks WHERE id = ?`, kept); got != count {
		t.Errorf("count %d, want %d", got, count)
	}
}

// TestAppRulesOwnTablesReferenced: an app's tables that reference
// memworker's own (a note on an edge, a link to a fact) hold what they
// reference, whatever their ON DELETE: on a file whose app enforces its
// foreign keys, no sweep deletes a row an app row references (RESTRICT
// would refuse it, CASCADE would take the app's row with it, unarchived).
func TestAppRulesOwnTablesReferenced(t *testing.T) {
	db, _ := newMemory(t, refusalFixture()+`
		CREATE TABLE edge_notes (a TEXT, b TEXT, body TEXT, FOREIGN KEY (a, b) REFERENCES mem_edges (from_id, to_id) ON DELETE CASCADE);
		CREATE TABLE block_edge_notes (a TEXT, b TEXT, FOREIGN KEY (a, b) REFERENCES mem_edges ON DELETE RESTRICT);
		CREATE TABLE fact_links (fact_id TEXT REFERENCES mem_facts (id) ON DELETE SET NULL);
		INSERT INTO edge_notes VALUES ('a', 'e05', 'x'), ('a', 'e40', 'y');
		INSERT INTO block_edge_notes VALUES ('a', 'obs2');
		INSERT INTO fact_links VALUES ('f03');`)
	for i := range 6 {
		mustExec(t, db, `INSERT INTO mem_facts (id, segment, tier, importance, decay_rate, access_count, last_accessed_at, content)
			VALUES (?, 'context', 'short', 0.3, 0.5, 0, ?, 'fact')`, fmt.Sprintf("f%02d", i), daysAgo(fixedWall, 400))
	}
	r := sweepChunked(t, db, 1000, fixedWall, worker.SweepOptions{ChunkSize: 8})
	compareDegrees(t, db.SQL, "after the sweep")
	expectNamed(t, r,
		`block obs2: archive refused: its edge ["a","obs2"] is referenced by block_edge_notes.a, b (ON DELETE RESTRICT)`,
		`edge ["a","e05"]: decay refused: referenced by edge_notes.a, b (ON DELETE CASCADE)`,
		`edge ["a","e40"]: decay refused: referenced by edge_notes.a, b (ON DELETE CASCADE)`,
		`fact f03: prune refused: referenced by fact_links.fact_id (ON DELETE SET NULL)`)
	if r.EdgesDecayed != 58 || r.Archived != 1 || r.Facts.Pruned != 5 || r.Skipped != 0 {
		t.Errorf("%s; facts %+v; skipped %d", r.Summary, r.Facts, r.Skipped)
	}
	expectEdges(t, db, []string{"a-e05", "a-e40", "a-obs2"}, []string{"a-e04", "a-obs"})
	expectStatus(t, db, "active", "obs2")
	if n := scalar[int](t, db, `SELECT count(*) FROM edge_notes`); n != 2 {
		t.Errorf("%d edge notes, want 2", n)
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM fact_links WHERE fact_id = 'f03'`); n != 1 {
		t.Errorf("fact f03's link is gone")
	}
	appIntact(t, db)
}

// TestAppRulesIgnoredOnOwnTables: triggers that silently keep rows
// (RAISE(IGNORE)) on memworker's own tables: an edge's delete, a block's
// archival, an edge's exclusion and a fact's prune each stay undone,
// named as kept by the app, with no event, not counted as done nor as
// skipped; the rest is done as planned.
func TestAppRulesIgnoredOnOwnTables(t *testing.T) {
	db, _ := newMemory(t, refusalFixture()+`
		CREATE TRIGGER keep BEFORE DELETE ON mem_edges WHEN OLD.note = 'keep' AND OLD.to_id != 'obs' BEGIN SELECT RAISE(IGNORE); END;
		CREATE TRIGGER keep_block BEFORE UPDATE OF status ON mem_blocks WHEN NEW.status = 'archived' AND OLD.id = 'obs2'
			BEGIN SELECT RAISE(IGNORE); END;
		CREATE TRIGGER keep_flag BEFORE UPDATE OF excluded ON mem_edges WHEN OLD.note = 'keep' BEGIN SELECT RAISE(IGNORE); END;
		CREATE TRIGGER keep_fact BEFORE DELETE ON mem_facts WHEN OLD.content = 'keep' BEGIN SELECT RAISE(IGNORE); END;`)
	for i := range 4 {
		content := "fact"
		if i == 2 {
			content = "keep"
		}
		mustExec(t, db, `INSERT INTO mem_facts (id, segment, tier, importance, decay_rate, access_count, last_accessed_at, content)
			VALUES (?, 'context', 'short', 0.3, 0.5, 0, ?, ?)`, fmt.Sprintf("f%02d", i), daysAgo(fixedWall, 400), content)
	}
	r := sweepChunked(t, db, 1000, fixedWall, worker.SweepOptions{ChunkSize: 8})
	compareDegrees(t, db.SQL, "after the sweep")
	expectNamed(t, r,
		"block obs2: archive kept by app",
		`edge ["a","e03"]: removal kept by app`, `edge ["a","e31"]: removal kept by app`, `edge ["a","e59"]: removal kept by app`,
		`edge ["c1","c2"]: exclude kept by app`,
		"fact f02: prune kept by app")
	if r.EdgesDecayed != 57 || r.Archived != 1 || r.EdgesRemovedWithBlocks != 1 || r.Facts.Pruned != 3 || r.Skipped != 0 ||
		policyCount(t, r, "cites").Excluded != 0 {
		t.Errorf("%s; facts %+v; skipped %d", r.Summary, r.Facts, r.Skipped)
	}
	expectEdges(t, db, []string{"a-e03", "a-e31", "a-e59", "a-obs2", "c1-c2"}, []string{"a-obs", "a-e04"})
	expectStatus(t, db, "active", "obs2")
	expectStatus(t, db, "archived", "obs")
	if n := scalar[int](t, db, `SELECT count(*) FROM mem_events WHERE subject_id IN ('obs2', 'f02', json_array('a', 'e03'),
		json_array('a', 'e31'), json_array('a', 'e59'), json_array('c1', 'c2'), json_array('a', 'obs2'))`); n != 0 {
		t.Errorf("%d events for rows the app kept", n)
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM mem_events WHERE action = 'decay'`); n != 57 {
		t.Errorf("%d decay events, want 57", n)
	}
	// The app lets go: the next sweep makes the changes.
	mustExec(t, db, `DROP TRIGGER keep; DROP TRIGGER keep_block; DROP TRIGGER keep_flag; DROP TRIGGER keep_fact`)
	r = sweepChunked(t, db, 1001, fixedWall, worker.SweepOptions{ChunkSize: 8})
	if r.InvalidRows.Count != 0 || r.EdgesDecayed != 3 || r.Archived != 1 || r.Facts.Pruned != 1 || policyCount(t, r, "cites").Excluded != 1 {
		t.Errorf("after the triggers went: %s; facts %+v; invalid %q", r.Summary, r.Facts, invalidNamed(r))
	}
}

// TestAppRulesRefusedKeepDegrees: the degrees stored after a sweep whose
// changes an app's triggers refused (RAISE(ABORT)) are those a recount
// gives, after a first (full) sweep and after the next one.
func TestAppRulesRefusedKeepDegrees(t *testing.T) {
	db, _ := newMemory(t, refusalFixture()+appTriggers)
	sweepChunked(t, db, 1000, fixedWall, worker.SweepOptions{ChunkSize: 8})
	compareDegrees(t, db.SQL, "after the first sweep")
	sweepChunked(t, db, 1000.5, fixedWall, worker.SweepOptions{ChunkSize: 8})
	compareDegrees(t, db.SQL, "after the second sweep")
	mustExec(t, db, `DROP TRIGGER keep`)
	sweepChunked(t, db, 1001, fixedWall, worker.SweepOptions{ChunkSize: 8})
	compareDegrees(t, db.SQL, "after the trigger went")
}

// TestAppRulesDryRunNamesHeld: a dry run names the rows the app's foreign
// keys hold as the sweep does, and counts what the sweep then does.
func TestAppRulesDryRunNamesHeld(t *testing.T) {
	db, _ := rulesDB(t, `CREATE TABLE link_notes (id INTEGER PRIMARY KEY, link_id INTEGER REFERENCES links (id), body TEXT);
		INSERT INTO link_notes (link_id, body) VALUES (2, 'x'), (4, 'y'), (6, 'z');`)
	w := reviewWall
	dry, err := worker.Sweep(context.Background(), db, worker.SweepOptions{WallNow: &w, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	r := mustReviewSweep(t, db, reviewWall)
	if mappedCounts(dry) != mappedCounts(r) || !slices.Equal(invalidNamed(dry), invalidNamed(r)) {
		t.Errorf("dry run %s %q\nsweep   %s %q", mappedCounts(dry), invalidNamed(dry), mappedCounts(r), invalidNamed(r))
	}
	expectNamed(t, r, "block 7: archive refused: its edge 6 is referenced by link_notes.link_id (ON DELETE NO ACTION)",
		"edge 2: prune refused: ", "edge 4: prune refused: ")
}
