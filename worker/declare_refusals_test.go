package worker_test

// Declaring a mapping refuses what a sweep would refuse, and what would let
// a sweep damage the app (SPEC §3): every mapping map load accepts sweeps,
// a sweep writes no key, edge end or referenced column, and removes no app
// row that no archive keeps.

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/worker"
	"github.com/memdecay/memdecay/worker/mapping"
)

// declareSchema is the app of the declaration tests: notes and links as
// reviewMapping maps them, and a few columns more for the cases.
const declareSchema = `
CREATE TABLE notes (id INTEGER PRIMARY KEY, state TEXT DEFAULT 'active', used INTEGER, hits INTEGER DEFAULT 0, code TEXT UNIQUE);
CREATE TABLE links (id INTEGER PRIMARY KEY, a INTEGER, b INTEGER, w REAL, t INTEGER, flag INTEGER DEFAULT 0, UNIQUE (a, b, t));
`

// declareRows are notes 1–3 (note 3 faded long ago) and links 1–3 (link 3
// weak, link 2 to note 3).
func declareRows() string {
	r, a := strconv.FormatInt(recent, 10), strconv.FormatInt(ancient, 10)
	return `INSERT INTO notes (id, used) VALUES (1, ` + r + `), (2, ` + r + `), (3, ` + a + `);
INSERT INTO links (id, a, b, w, t) VALUES (1, 1, 2, 0.9, ` + r + `), (2, 1, 3, 0.9, ` + r + `), (3, 2, 1, 0.01, ` + r + `);
`
}

// declaredMapping is reviewMapping with its nodes' and edges' extra lines.
func declaredMapping(extraNodes, extraEdges string) string {
	return reviewMapping(`"id"`, `"id"`, extraNodes, extraEdges)
}

// declareIn creates a migrated file holding schemaSQL and declares the
// mapping toml in it: the file's path and the declaration's error.
func declareIn(t *testing.T, schemaSQL, toml string) (string, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "app.db")
	if err := createMemory(t, path, schemaSQL).Close(); err != nil {
		t.Fatal(err)
	}
	name := "app.toml"
	if strings.HasPrefix(toml, "{") {
		name = "app.json"
	}
	m, err := mapping.Parse(name, []byte(toml))
	if err != nil {
		return path, err
	}
	db, err := worker.OpenMemory(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	return path, worker.DeclareMapping(context.Background(), db, m, "app.toml", reviewWall)
}

// expectRefusedUnchanged declares toml in a file holding schemaSQL and
// checks it is refused, naming each of want, the file left byte for byte
// as it was; it returns the refusal.
func expectRefusedUnchanged(t *testing.T, schemaSQL, toml string, want ...string) error {
	t.Helper()
	path := filepath.Join(t.TempDir(), "app.db")
	if err := createMemory(t, path, schemaSQL).Close(); err != nil {
		t.Fatal(err)
	}
	before := fileHashes(t, path)
	m, err := mapping.Parse("app.toml", []byte(toml))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	db, err := worker.OpenMemory(path, false)
	if err != nil {
		t.Fatal(err)
	}
	err = worker.DeclareMapping(context.Background(), db, m, "app.toml", reviewWall)
	db.Close()
	expectMappingError(t, err, want)
	sameFiles(t, before, fileHashes(t, path))
	return err
}

// TestDeclareRefusesWrittenKeys: a part a sweep writes may not be a key of
// its table, an edge end or a column another table references: a sweep
// would rewrite the app's ids (a count on the key moves id 10 to 11).
func TestDeclareRefusesWrittenKeys(t *testing.T) {
	lastUsedOnKey := strings.Replace(declaredMapping("", ""), `last_used = "used"`, `last_used = "id"`, 1)
	cases := []struct {
		name, extra, toml string
		want              []string
	}{
		{"count on the key", "", declaredMapping(`reinforcement_count = "id"`, ""),
			[]string{`mapping: nodes: reinforcement_count = "id" is the table's key; a sweep writes reinforcement_count, so it cannot be a key, an edge end or a referenced column`}},
		{"last used on the key", "", lastUsedOnKey, []string{`nodes: last_used = "id" is the table's key`}},
		{"archive reason on an integer key", "", declaredMapping(`archive_reason = "id"`, ""), []string{`nodes: archive_reason = "id" is the table's key`}},
		{"a unique column", "", declaredMapping(`archive_reason = "code"`, ""), []string{`nodes: archive_reason = "code" is a key of the table`, "unique index"}},
		{"an edge end", "", declaredMapping("", `excluded = "a"`), []string{`edges: excluded = "a" is an edge end (edges.from)`}},
		{"the edge key", "", declaredMapping("", `excluded = "id"`), []string{`edges: excluded = "id" is the table's key`}},
		{"a referenced column", "CREATE TABLE note_refs (n INTEGER REFERENCES notes (hits));", declaredMapping(`reinforcement_count = "hits"`, ""),
			[]string{`nodes: reinforcement_count = "hits" is referenced by a foreign key of note_refs (n)`}},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			expectRefusedUnchanged(t, declareSchema+c.extra+declareRows(), c.toml, c.want...)
		})
	}
	// Other columns are fine, and a written column that holds a foreign key
	// is the app's rule, enforced when a sweep writes it.
	withStates := "CREATE TABLE states (s TEXT PRIMARY KEY);\n" + strings.Replace(declareSchema, "state TEXT DEFAULT 'active'", "state TEXT DEFAULT 'active' REFERENCES states (s)", 1)
	if _, err := declareIn(t, withStates+declareRows(), declaredMapping(`reinforcement_count = "hits"`, `excluded = "flag"`)); err != nil {
		t.Errorf("refused: %v", err)
	}
}

// TestDeclareRefusesCascades: a sweep deletes the links it removes and the
// facts it prunes. Where such a table is the parent of a foreign key that
// cascades or sets NULL or a default, SQLite would change the app's other
// rows with the sweep's removal, and no archive keeps them: refused when
// declared, naming the child table and column and the fix. A node is
// archived by its status, never deleted, so what references nodes is fine.
func TestDeclareRefusesCascades(t *testing.T) {
	for _, action := range []string{"CASCADE", "SET NULL", "SET DEFAULT"} {
		t.Run("links_"+strings.ReplaceAll(action, " ", "_"), func(t *testing.T) {
			expectRefusedUnchanged(t, declareSchema+`CREATE TABLE link_notes (id INTEGER PRIMARY KEY, link_id INTEGER REFERENCES links (id) ON DELETE `+action+`, body TEXT);`+
				declareRows(), declaredMapping("", ""), "edges:", "link_notes.link_id", "ON DELETE "+action, "RESTRICT or NO ACTION")
		})
	}
	t.Run("facts_CASCADE", func(t *testing.T) {
		expectRefusedUnchanged(t, declareFacts+`CREATE TABLE note_links (n INTEGER REFERENCES notes (id) ON DELETE CASCADE);`,
			notesMapping, "facts:", "note_links.n", "ON DELETE CASCADE")
	})
	for _, action := range []string{"RESTRICT", "NO ACTION", ""} {
		extra := `CREATE TABLE link_notes (id INTEGER PRIMARY KEY, link_id INTEGER REFERENCES links (id) ` + strings.TrimSpace("ON DELETE "+action) + `);`
		if action == "" {
			extra = `CREATE TABLE link_notes (id INTEGER PRIMARY KEY, link_id INTEGER REFERENCES links (id));`
		}
		if _, err := declareIn(t, declareSchema+extra+declareRows(), declaredMapping("", "")); err != nil {
			t.Errorf("ON DELETE %q refused: %v", action, err)
		}
	}
	node := `CREATE TABLE note_tags (n INTEGER REFERENCES notes (id) ON DELETE CASCADE, tag TEXT);
		CREATE TABLE link_ends (x INTEGER REFERENCES notes (id) ON DELETE SET NULL);`
	if _, err := declareIn(t, declareSchema+node+declareRows(), declaredMapping("", "")); err != nil {
		t.Errorf("a cascade from the nodes, which are archived by status, refused: %v", err)
	}
	if _, err := declareIn(t, appSchema, memoryTOML(t).JSON()); err != nil {
		t.Errorf("links → memories ON DELETE CASCADE refused: %v", err)
	}
}

// declareFacts is an app's notes table as notesMapping maps its facts.
const declareFacts = `CREATE TABLE notes (id INTEGER PRIMARY KEY, segment TEXT, importance REAL, access_count INTEGER,
	last_access TEXT, created_at TEXT, status TEXT);
`

// TestDeclareRefusesCollidingUntypedKeys: a key column declared with no
// type holds 1 and '1' side by side, which memworker (reading ids as text)
// takes for one row: a sweep stopped on every run (UNIQUE constraint
// failed: refresh_block_rows.id), or removed both links with one event.
// Refused when declared, the app's rows untouched; rows that collide
// after the mapping was declared are skipped and named by every sweep.
func TestDeclareRefusesCollidingUntypedKeys(t *testing.T) {
	untypedNotes := strings.Replace(declareSchema, "notes (id INTEGER PRIMARY KEY", "notes (id PRIMARY KEY", 1)
	untypedLinks := strings.Replace(declareSchema, "links (id INTEGER PRIMARY KEY", "links (id PRIMARY KEY", 1)
	t.Run("nodes", func(t *testing.T) {
		expectRefusedUnchanged(t, untypedNotes+declareRows()+`INSERT INTO notes (id, used) VALUES ('1', 5);`, declaredMapping("", ""),
			"nodes.key", "notes.id has no type", "1 and '1'", "declare the key INTEGER or TEXT")
	})
	t.Run("edges", func(t *testing.T) {
		expectRefusedUnchanged(t, untypedLinks+declareRows()+`INSERT INTO links VALUES ('3', 1, 2, 0.01, 7, 0);`, declaredMapping("", ""),
			"edges.key", "links.id has no type", "3 and '3'")
	})
	t.Run("facts", func(t *testing.T) {
		expectRefusedUnchanged(t, strings.Replace(declareFacts, "id INTEGER PRIMARY KEY", "id PRIMARY KEY", 1)+
			`INSERT INTO notes (id, segment, status) VALUES (7, 'general', 'live'), ('7', 'general', 'live');`, notesMapping,
			"facts.key", "notes.id has no type", "7 and '7'")
	})
	t.Run("written_after_declaring", func(t *testing.T) {
		path, err := declareIn(t, untypedLinks+declareRows(), declaredMapping("", ""))
		if err != nil {
			t.Fatalf("declare: %v", err)
		}
		db := openAsWorker(t, path)
		mustExec(t, db, `INSERT INTO links VALUES ('3', 2, 3, 0.9, ?, 0)`, recent)
		// A collision the app writes later never stops decay: both rows
		// are skipped and named, and the sweep goes on.
		r, err := worker.Sweep(context.Background(), db, worker.SweepOptions{WallNow: &reviewWall})
		if err != nil {
			t.Fatalf("sweep beside a collision written after declaring: %v", err)
		}
		named := 0
		for _, row := range r.InvalidRows.Sample {
			if strings.Contains(row.Problem, "3 and '3' read as one id") {
				named++
			}
		}
		if named != 2 {
			t.Errorf("the report names %d of the two colliding links: %+v", named, r.InvalidRows.Sample)
		}
		if n := scalar[int](t, db, `SELECT count(*) FROM links WHERE CAST(id AS TEXT) = '3'`); n != 2 {
			t.Errorf("%d of the two colliding links left", n)
		}
	})
	t.Run("distinct", func(t *testing.T) {
		path, err := declareIn(t, untypedNotes+declareRows()+`INSERT INTO notes (id, used) VALUES ('x', 5);`, declaredMapping("", ""))
		if err != nil {
			t.Fatalf("declare: %v", err)
		}
		if _, err := worker.Sweep(context.Background(), openAsWorker(t, path), worker.SweepOptions{WallNow: &reviewWall}); err != nil {
			t.Errorf("sweep: %v", err)
		}
	})
}

// TestDeclaredMappingsSweep: one validator decides at declare time and at
// sweep time. Each mapping a sweep cannot go through is refused when
// declared, in the words the sweep says when such a mapping is stored in
// the file all the same; every mapping declared sweeps.
func TestDeclaredMappingsSweep(t *testing.T) {
	noStatus := strings.Replace(declaredMapping("", ""), `status = "state"
status_active = ["active"]
status_archived = "gone"
`, "", 1)
	hoursNodes := strings.Replace(declaredMapping("", ""), `last_used_clock = "unix_seconds"`, `last_used_clock = "active_hours"`, 1)
	withClock := declaredMapping("", "") + `
[clock]
table = "settings"
key_column = "k"
value_column = "v"
active_hours_key = "hours"
`
	excludePolicy := `INSERT INTO mem_edge_policies (relation_type, model, params, clock, threshold, action, orphans)
		VALUES ('similar', 'half_life', '{"half_life":"150h"}', 'active_hours', 0.2, 'exclude', 'keep');`
	cases := []struct {
		name, extra, toml string
		want              []string // nil: declared, and it sweeps
	}{
		{"edge key of three columns", "", strings.Replace(declaredMapping("", ""), `key = "id"
from`, `key = ["a", "b", "t"]
from`, 1), []string{"edges.key: give the edges' key as one column (an INTEGER PRIMARY KEY or a unique column) or two, not rowid or more"}},
		{"edge key rowid", "", strings.Replace(declaredMapping("", ""), `key = "id"
from`, `key = "rowid"
from`, 1), []string{"edges.key: give the edges' key as one column", "not rowid or more"}},
		{"node key rowid", "", reviewMapping(`"rowid"`, `"id"`, "", ""),
			[]string{"nodes.key: give the nodes' key column (an INTEGER PRIMARY KEY or a unique column), not rowid"}},
		{"no status", "", noStatus, []string{"nodes.status: a sweep archives a node by writing its status; name the status column and status_archived"}},
		{"archived is active", "", strings.Replace(declaredMapping("", ""), `status_archived = "gone"`, `status_archived = "active"`, 1),
			[]string{"nodes.status_archived", `"active" is also a value that keeps a node`}},
		{"clock table with wall times", "CREATE TABLE settings (k TEXT PRIMARY KEY, v);", withClock,
			[]string{"clock: the mapping's times are wall times, so it keeps no active-hours clock; drop its [clock] table"}},
		{"two clocks", "", strings.Replace(hoursNodes, `last_used = "used"`, `last_used = "hits"`, 1),
			[]string{"nodes.last_used is on the active_hours clock but edges.last_active on the unix_seconds clock"}},
		{"exclude without a column", excludePolicy, declaredMapping("", ""), []string{`the policy for "similar" softly excludes edges (action exclude)`}},
		{"archive reason on the key", "", declaredMapping(`archive_reason = "id"`, ""), []string{`archive_reason = "id" is the table's key`}},
		{"nodes and links", "", declaredMapping(`reinforcement_count = "hits"`, ""), nil},
		{"exclude with a column", excludePolicy, declaredMapping("", `excluded = "flag"`), nil},
		{"edge key of two columns", "CREATE UNIQUE INDEX links_ab ON links (a, b);", strings.Replace(declaredMapping("", ""), `key = "id"
from`, `key = ["a", "b"]
from`, 1), nil},
		{"edges only", "", declaredMapping("", "")[strings.Index(declaredMapping("", ""), "[edges]"):], nil},
		{"nodes only", "", declaredMapping("", "")[:strings.Index(declaredMapping("", ""), "[edges]")], nil},
	}
	ctx := context.Background()
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			schemaSQL := declareSchema + c.extra + declareRows()
			if c.want == nil {
				path, err := declareIn(t, schemaSQL, c.toml)
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if _, err := worker.Sweep(ctx, openAsWorker(t, path), worker.SweepOptions{WallNow: &reviewWall}); err != nil {
					t.Errorf("declared, but the sweep says: %v", err)
				}
				return
			}
			refusal := expectRefusedUnchanged(t, schemaSQL, c.toml, c.want...)
			// Stored all the same (as an older memworker may have): the
			// sweep refuses it in the same words, before anything changes.
			path := filepath.Join(t.TempDir(), "stored.db")
			db := createMemory(t, path, schemaSQL)
			m, err := mapping.Parse("app.toml", []byte(c.toml))
			if err != nil {
				t.Fatal(err)
			}
			query, args := mapping.StoreSQL(m, "app.toml", reviewWall)
			mustExec(t, db, query, args...)
			db.Close()
			before := fileHashes(t, path)
			db = openAsWorker(t, path)
			_, err = worker.Sweep(ctx, db, worker.SweepOptions{WallNow: &reviewWall})
			if err == nil || !strings.HasSuffix(err.Error(), strings.TrimSuffix(refusal.Error(), "; nothing was changed")) {
				t.Errorf("the sweep of the stored mapping says %v; declaring it said %v", err, refusal)
			}
			if !errors.Is(err, mapping.ErrBadMapping) {
				t.Errorf("the sweep's refusal is not mapping.ErrBadMapping: %v", err)
			}
			db.Close()
			sameFiles(t, before, fileHashes(t, path))
		})
	}
}

// TestDeclareKeepsAppTriggers: an app's own trigger named like the change
// capture a mapping puts on its tables (mem_map_<table>_queue_…) is
// refused, not replaced; one that only shares the prefix stays through
// every declaration.
func TestDeclareKeepsAppTriggers(t *testing.T) {
	const triggers = `CREATE TABLE link_log (id INTEGER, what TEXT);
CREATE TRIGGER mem_map_links_queue_insert AFTER INSERT ON links BEGIN INSERT INTO link_log VALUES (NEW.id, 'new'); END;
CREATE TRIGGER mem_map_mine AFTER DELETE ON links BEGIN INSERT INTO link_log VALUES (OLD.id, 'gone'); END;
`
	expectRefusedUnchanged(t, declareSchema+triggers+declareRows(), declaredMapping("", ""), "mem_map_links_queue_insert", "links", "rename")

	path, err := declareIn(t, declareSchema+triggers+declareRows()+`DROP TRIGGER mem_map_links_queue_insert;`, declaredMapping("", ""))
	if err != nil {
		t.Fatalf("declare: %v", err)
	}
	db := openAsWorker(t, path)
	mine := `SELECT sql FROM sqlite_master WHERE name = 'mem_map_mine'`
	want := `CREATE TRIGGER mem_map_mine AFTER DELETE ON links BEGIN INSERT INTO link_log VALUES (OLD.id, 'gone'); END`
	if got := scalar[string](t, db, mine); got != want {
		t.Errorf("the app's trigger after declaring: %q", got)
	}
	m, err := mapping.Parse("app.toml", []byte(declaredMapping("", "")))
	if err != nil {
		t.Fatal(err)
	}
	if err := worker.DeclareMapping(context.Background(), db, m, "app.toml", reviewWall); err != nil {
		t.Fatalf("declared again: %v", err)
	}
	// The app swaps a change-capture trigger for its own of the same name:
	// a sweep would miss the app's updates, so it refuses, naming it.
	mustExec(t, db, `DROP TRIGGER mem_map_links_queue_update;
		CREATE TRIGGER mem_map_links_queue_update AFTER UPDATE ON links BEGIN INSERT INTO link_log VALUES (NEW.id, 'changed'); END;`)
	_, err = worker.Sweep(context.Background(), db, worker.SweepOptions{WallNow: &reviewWall})
	expectMappingError(t, err, []string{"mem_map_links_queue_update", "rename"})
	mem, _ := mapping.Preset("mem")
	if err := worker.DeclareMapping(context.Background(), db, mem, "mem", reviewWall); err != nil {
		t.Fatalf("map use mem: %v", err)
	}
	if got := scalar[string](t, db, mine); got != want {
		t.Errorf("the app's trigger after map use mem: %q", got)
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM sqlite_master WHERE name = 'mem_map_links_queue_update'`); n != 1 {
		t.Errorf("the app's mem_map_links_queue_update is gone after map use mem")
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM sqlite_master WHERE name LIKE 'mem_map_%' AND sql LIKE '%mem_dirty_%'`); n != 0 {
		t.Errorf("%d change-capture triggers left after map use mem", n)
	}
}
