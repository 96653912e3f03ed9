package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/schema"
)

// appTables is an app's own memory: integer ids, ISO-8601 times, directed
// links of several kinds, its foreign keys and a trigger of its own.
const appTables = `
CREATE TABLE memories (id INTEGER PRIMARY KEY, body TEXT, kind TEXT, tags TEXT, state TEXT DEFAULT 'active',
	confidence REAL DEFAULT 0.5, uses INTEGER DEFAULT 0, last_used_at TEXT, created_at TEXT);
CREATE TABLE links (id INTEGER PRIMARY KEY, src INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
	dst INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE, kind TEXT NOT NULL, strength REAL,
	hits INTEGER DEFAULT 0, touched_at TEXT, UNIQUE (src, dst, kind));
CREATE TRIGGER links_touch AFTER UPDATE OF hits ON links BEGIN UPDATE links SET touched_at = datetime('now') WHERE id = NEW.id; END;
INSERT INTO memories (body, kind, tags, last_used_at) VALUES ('a', 'note', '["x"]', '2026-01-02T03:04:05Z'), ('b', 'goal', '["self/goal"]', '2026-02-01 00:00:00+02');
INSERT INTO links (src, dst, kind, strength, touched_at) VALUES (1, 2, 'related', 0.5, '2026-01-05T00:00:00Z'), (1, 2, 'causes', 0.9, '2026-01-05T00:00:00Z');
`

// appMapping is the app's mapping file, shared with the mapping's own tests.
var appMapping = func() string {
	b, err := os.ReadFile("../../worker/mapping/testdata/memory.toml")
	if err != nil {
		panic(err)
	}
	return string(b)
}()

// appDBWithMapping makes the app's database, migrated, and its mapping
// file beside it.
func appDBWithMapping(t *testing.T, dir string) (db, file string) {
	t.Helper()
	db = filepath.Join(dir, "app.db")
	ok(t, "migrate", "up", "--db", db)
	exec1(t, db, appTables)
	file = filepath.Join(dir, "memory.toml")
	if err := os.WriteFile(file, []byte(appMapping), 0o644); err != nil {
		t.Fatal(err)
	}
	return db, file
}

// TestGoldenMap: what map show, map load --check, map load and map use
// print, as a user reads them.
func TestGoldenMap(t *testing.T) {
	tr := newTranscript(t)
	db, file := appDBWithMapping(t, tr.dir)
	tr.run("map", "show", "--db", db)
	tr.run("map", "load", "--check", file, "--db", db)
	tr.run("map", "load", file, "--db", db)
	tr.run("map", "show", "--json", "--db", db)
	tr.run("map", "use", "mem", "--db", db)
	tr.check("map")
}

// A mapping that does not fit is refused before anything changes, with one
// line naming the table and column; --check stores nothing; a declared
// mapping survives only a forced migrate down.
func TestMapRefusalsChangeNothing(t *testing.T) {
	dir := t.TempDir()
	db, file := appDBWithMapping(t, dir)
	before := fileHash(t, db)
	ok(t, "map", "load", "--check", file, "--db", db)
	if fileHash(t, db) != before {
		t.Error("map load --check changed the file")
	}
	bad := filepath.Join(dir, "bad.toml")
	for text, want := range map[string][]string{
		strings.Replace(appMapping, `weight = "strength"`, `weight = "strenght"`, 1):        {"edges.weight", "links has no column strenght", "nothing was changed"},
		strings.Replace(appMapping, `key = "id"`+"\n"+`from`, `key = "src"`+"\n"+`from`, 1): {"edges.key", "(src) is not unique in links", "nothing was changed"},
		strings.Replace(appMapping, `last_used_clock = "iso8601"`, ``, 1):                   {"nodes.last_used", "memories.last_used_at is declared TEXT", "last_used_clock"},
		strings.Replace(appMapping, `table = "links"`, `table = "linkz"`, 1):                {"edges.table", "no table linkz"},
		appMapping + "\n[facts]\ntable = \"memories\"\n":                                    {"facts: give key"},
		strings.Replace(appMapping, `directed = true`, `directed = true`+"\nweigth = 1", 1): {"unknown key edges.weigth"},
	} {
		if err := os.WriteFile(bad, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		r := mw(t, "map", "load", bad, "--db", db)
		wantExit(t, r, exitFailure, want...)
		if strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("more than one line: %s", r.stderr)
		}
		if fileHash(t, db) != before {
			t.Fatalf("a refused mapping changed the file (%s)", want[0])
		}
	}
	wantUsage(t, mw(t, "map", "use", "nope", "--db", db), `no preset "nope"`, "elfmem, mem")
	wantUsage(t, mw(t, "map", "load", "--db", db), "give one FILE")

	// Not while a sweep runs: it reads the mapping once, when it starts.
	release := holdLease(t, db)
	held := fileHash(t, db)
	wantExit(t, mw(t, "map", "load", file, "--db", db), exitBusy, "already running")
	if fileHash(t, db) != held {
		t.Error("map load beside a running sweep changed the file")
	}
	release()
	ok(t, "map", "load", file, "--db", db)
	if got := queryOne(t, db, `SELECT source FROM mem_mapping`); got != "memory.toml" {
		t.Errorf("stored source %q", got)
	}
	// status says which tables the mapping names; decayed, explain and
	// plot read the app's tables. None changes the file.
	declared := fileHash(t, db)
	if r := ok(t, "status", "--db", db); !strings.Contains(r.stdout, "mapping       memory.toml (nodes memories, edges links): swept in place") {
		t.Errorf("status does not name the mapping:\n%s", r.stdout)
	}
	if m := decodeJSON(t, ok(t, "status", "--json", "--db", db)); m["mapping"] != "memory.toml" || m["mapping_tables"] != "nodes memories, edges links" {
		t.Errorf("status --json: mapping %v, tables %v", m["mapping"], m["mapping_tables"])
	}
	if r := ok(t, "decayed", "--db", db); !strings.Contains(r.stdout, "recent removals:") || !strings.Contains(r.stdout, "closest to decay:") {
		t.Errorf("decayed through the mapping:\n%s", r.stdout)
	}
	wantExit(t, mw(t, "explain", "--edge", "1", "2", "--db", db), exitFailure, "names a link by its key of one column")
	if r := ok(t, "explain", "--edge", "2", "--db", db); !strings.Contains(r.stdout, "edge 1 — 2 (causes, link 2)") {
		t.Errorf("explain --edge 2 through the mapping:\n%s", r.stdout)
	}
	ok(t, "plot", "--json", "--db", db)
	if fileHash(t, db) != declared {
		t.Error("a refused command changed the file")
	}
	for v, _ := schema.Latest(); v > 11; v-- { // steps that drop no data go down freely
		ok(t, "migrate", "down", "--db", db)
	}
	wantExit(t, mw(t, "migrate", "down", "--db", db), exitFailure, "step 11 drops the declared mapping", "--force")
	if got := queryOne(t, db, `SELECT count(*) FROM sqlite_master WHERE name LIKE 'mem_map_%'`); got == "0" {
		t.Fatal("the declared mapping put no triggers or indexes on the app's tables")
	}
	// Below the mapping's step its triggers would queue into tables that
	// go: they go first, and the app's writes keep working.
	ok(t, "migrate", "down", "--force", "--db", db)
	if got := queryOne(t, db, `SELECT count(*) FROM sqlite_master WHERE name LIKE 'mem_map_%'`); got != "0" {
		t.Errorf("%s of the mapping's triggers and indexes are left", got)
	}
	ok(t, "migrate", "down", "--all", "--force", "--db", db)
	exec1(t, db, `INSERT INTO memories (id, kind) VALUES (99, 'note'); UPDATE memories SET uses = 1 WHERE id = 99;
		INSERT INTO links (src, dst, kind, strength) VALUES (99, 99, 'x', 1); DELETE FROM links; DELETE FROM memories`)
}

// An app built on elfmem's own schema declares the preset elfmem with no
// mapping to write.
func TestMapUseElfmem(t *testing.T) {
	db := filepath.Join(t.TempDir(), "elf.db")
	ok(t, "migrate", "up", "--db", db)
	exec1(t, db, `
CREATE TABLE blocks (id TEXT NOT NULL PRIMARY KEY, content TEXT NOT NULL, category TEXT NOT NULL, source TEXT NOT NULL,
	created_at TEXT NOT NULL, status TEXT NOT NULL, archive_reason TEXT, confidence FLOAT NOT NULL,
	reinforcement_count INTEGER NOT NULL, decay_lambda FLOAT NOT NULL, last_reinforced_at FLOAT NOT NULL, embedding BLOB);
CREATE TABLE block_tags (block_id TEXT NOT NULL REFERENCES blocks (id) ON DELETE CASCADE, tag TEXT NOT NULL, UNIQUE (block_id, tag));
CREATE TABLE edges (from_id TEXT NOT NULL REFERENCES blocks (id) ON DELETE CASCADE, to_id TEXT NOT NULL REFERENCES blocks (id) ON DELETE CASCADE,
	weight FLOAT NOT NULL, reinforcement_count INTEGER NOT NULL, created_at TEXT NOT NULL, relation_type TEXT DEFAULT 'similar' NOT NULL,
	origin TEXT DEFAULT 'similarity' NOT NULL, last_active_hours FLOAT, note TEXT, UNIQUE (from_id, to_id));
CREATE TABLE contradictions (block_a_id TEXT NOT NULL REFERENCES blocks (id) ON DELETE CASCADE,
	block_b_id TEXT NOT NULL REFERENCES blocks (id) ON DELETE CASCADE, score FLOAT NOT NULL, resolved INTEGER NOT NULL,
	created_at TEXT NOT NULL, CONSTRAINT uq_contradiction UNIQUE (block_a_id, block_b_id));
CREATE TABLE system_config (key TEXT NOT NULL PRIMARY KEY, value TEXT NOT NULL);`)
	r := ok(t, "map", "use", "elfmem", "--db", db)
	for _, want := range []string{"preset elfmem", "nodes: table blocks, key id", "edges: table edges, key from_id, to_id, undirected",
		"clock: table system_config, key = 'total_active_hours' holds the active hours",
		"dependents           contradictions by block_a_id, block_b_id (archived with the node, restored with it)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("map use elfmem lacks %q:\n%s", want, r.stdout)
		}
	}
	m := decodeJSON(t, ok(t, "map", "show", "--json", "--db", db))
	if m["fits_schema"] != true || m["source"] != "preset elfmem" {
		t.Errorf("map show --json: %v", m)
	}
	// A schema that no longer fits is said so, with exit 1.
	exec1(t, db, `ALTER TABLE edges RENAME COLUMN weight TO strength`)
	wantExit(t, mw(t, "map", "show", "--db", db), exitFailure, "edges.weight", "edges has no column weight")
}
