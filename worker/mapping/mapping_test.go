package mapping_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	_ "github.com/memdecay/memdecay/ext/shim" // mattn's driver, with the functions the views call
	"github.com/memdecay/memdecay/schema"
	"github.com/memdecay/memdecay/worker/mapping"
)

// appSchema is the app of the quickstart: its own memories and links,
// integer ids, ISO-8601 times, directed links of several kinds, its own
// trigger and foreign keys.
const appSchema = `
CREATE TABLE memories (id INTEGER PRIMARY KEY, body TEXT, kind TEXT, tags TEXT, state TEXT DEFAULT 'active',
	confidence REAL DEFAULT 0.5, uses INTEGER DEFAULT 0, last_used_at TEXT, created_at TEXT,
	body_len INTEGER GENERATED ALWAYS AS (length(body)) VIRTUAL);
CREATE TABLE links (id INTEGER PRIMARY KEY, src INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
	dst INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE, kind TEXT NOT NULL, strength REAL,
	hits INTEGER DEFAULT 0, touched_at TEXT, UNIQUE (src, dst, kind));
CREATE TRIGGER memories_touch AFTER UPDATE OF uses ON memories BEGIN SELECT 1; END;
CREATE VIEW recent AS SELECT * FROM memories;
CREATE TABLE notes (id TEXT PRIMARY KEY, body TEXT);
CREATE TABLE keyed (a TEXT, b TEXT, PRIMARY KEY (a, b)) WITHOUT ROWID;
`

const appJSON = `{
  "nodes": {"table": "memories", "key": "id", "last_used": "last_used_at", "last_used_clock": "iso8601",
            "category": "kind", "tags": {"column": "tags"}, "status": "state", "status_active": ["active"],
            "status_archived": "archived", "confidence": "confidence", "reinforcement_count": "uses"},
  "edges": {"table": "links", "key": "id", "from": "src", "to": "dst", "directed": true, "kind": "kind",
            "weight": "strength", "reinforcement_count": "hits", "last_active": "touched_at", "last_active_clock": "iso8601"}
}`

// elfmemSchema is elfmem's own SQLite schema, as elfmem creates it.
const elfmemSchema = `
CREATE TABLE blocks (id TEXT NOT NULL PRIMARY KEY, content TEXT NOT NULL, category TEXT NOT NULL, source TEXT NOT NULL,
	created_at TEXT NOT NULL, status TEXT NOT NULL, archive_reason TEXT, confidence FLOAT NOT NULL,
	reinforcement_count INTEGER NOT NULL, decay_lambda FLOAT NOT NULL, last_reinforced_at FLOAT NOT NULL,
	self_alignment FLOAT, embedding BLOB, embedding_model TEXT, token_count INTEGER, summary TEXT,
	last_session_id TEXT, outcome_evidence FLOAT NOT NULL);
CREATE TABLE block_tags (block_id TEXT NOT NULL REFERENCES blocks (id) ON DELETE CASCADE, tag TEXT NOT NULL,
	CONSTRAINT uq_block_tag UNIQUE (block_id, tag));
CREATE TABLE edges (from_id TEXT NOT NULL REFERENCES blocks (id) ON DELETE CASCADE,
	to_id TEXT NOT NULL REFERENCES blocks (id) ON DELETE CASCADE, weight FLOAT NOT NULL,
	reinforcement_count INTEGER NOT NULL, created_at TEXT NOT NULL, relation_type TEXT DEFAULT 'similar' NOT NULL,
	origin TEXT DEFAULT 'similarity' NOT NULL, last_active_hours FLOAT, note TEXT,
	CONSTRAINT uq_edge UNIQUE (from_id, to_id));
CREATE TABLE contradictions (block_a_id TEXT NOT NULL REFERENCES blocks (id) ON DELETE CASCADE,
	block_b_id TEXT NOT NULL REFERENCES blocks (id) ON DELETE CASCADE, score FLOAT NOT NULL, resolved INTEGER NOT NULL,
	created_at TEXT NOT NULL, CONSTRAINT uq_contradiction UNIQUE (block_a_id, block_b_id));
CREATE TABLE system_config (key TEXT NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE INDEX idx_edges_from ON edges (from_id);
CREATE INDEX idx_edges_to ON edges (to_id);
`

func openDB(t *testing.T, ddl string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(t.TempDir(), "app.db")+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(ddl); err != nil {
		t.Fatal(err)
	}
	return db
}

func TestPresetsFitTheirSchemas(t *testing.T) {
	ctx := context.Background()
	mem := openDB(t, "")
	if _, err := schema.Up(mem); err != nil {
		t.Fatal(err)
	}
	m, err := mapping.Preset("mem")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Validate(ctx, mem); err != nil {
		t.Errorf("the preset mem on a migrated file: %v", err)
	}
	d, err := mapping.Load(ctx, mem)
	if err != nil || d.Source != "" || !d.IsDefault() {
		t.Errorf("a file that declares no mapping: %+v, %v; want the preset mem", d, err)
	}
	elf := openDB(t, elfmemSchema)
	e, err := mapping.Preset("elfmem")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Validate(ctx, elf); err != nil {
		t.Errorf("the preset elfmem on elfmem's schema: %v", err)
	}
	if err := e.Validate(ctx, mem); err == nil || !strings.Contains(err.Error(), "no table blocks") {
		t.Errorf("the preset elfmem on memworker's own schema: %v, want no table blocks", err)
	}
	if _, err := mapping.Preset("nope"); err == nil || !strings.Contains(err.Error(), "elfmem, mem") {
		t.Errorf("an unknown preset: %v", err)
	}
}

// A mapping reads the same from TOML and JSON, fits the app it was written
// for, and survives being stored and read back.
func TestAppMappingParsesAndFits(t *testing.T) {
	ctx := context.Background()
	appTOML, err := os.ReadFile("testdata/memory.toml")
	if err != nil {
		t.Fatal(err)
	}
	fromTOML, err := mapping.Parse("memory.toml", appTOML)
	if err != nil {
		t.Fatal(err)
	}
	fromJSON, err := mapping.Parse("memory.json", []byte(appJSON))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromTOML, fromJSON) {
		t.Errorf("TOML and JSON differ:\n%s\n%s", fromTOML.JSON(), fromJSON.JSON())
	}
	sniffed, err := mapping.Parse("memory.conf", []byte(appJSON))
	if err != nil || !reflect.DeepEqual(sniffed, fromJSON) {
		t.Errorf("JSON in a file named .conf: %v", err)
	}
	db := openDB(t, appSchema)
	if err := fromTOML.Validate(ctx, db); err != nil {
		t.Fatalf("the app's mapping: %v", err)
	}
	if _, err := schema.Up(db); err != nil {
		t.Fatal(err)
	}
	q, args := mapping.StoreSQL(fromTOML, "memory.toml", timeUnix(1795600000))
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatal(err)
	}
	d, err := mapping.Load(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if d.Source != "memory.toml" || d.DeclaredAt.Unix() != 1795600000 || !reflect.DeepEqual(d.Mapping, fromTOML) {
		t.Errorf("stored and read back: %s from %q at %v\nwant %s", d.JSON(), d.Source, d.DeclaredAt, fromTOML.JSON())
	}
}

// Every kind of mistake is refused with one line naming the role, the
// table and the column.
func TestBadMappingsRefused(t *testing.T) {
	ctx := context.Background()
	db := openDB(t, appSchema)
	edges := func(extra string) string {
		return `{"edges": {"table": "links", "key": "id", "from": "src", "to": "dst"` + extra + `}}`
	}
	nodes := func(extra string) string {
		return `{"nodes": {"table": "memories", "key": "id"` + extra + `}}`
	}
	cases := []struct {
		name, text string
		want       []string
	}{
		{"no role", `{}`, []string{"names no role"}},
		{"unknown key", edges(`, "wieght": "strength"`), []string{`unknown key "wieght"`}},
		{"unknown TOML key", "[edges]\ntable = \"links\"\nkey = \"id\"\nfrom = \"src\"\nto = \"dst\"\nwieght = \"x\"\n", []string{"unknown key edges.wieght"}},
		{"no table", `{"edges": {"key": "id", "from": "src", "to": "dst"}}`, []string{"edges: give table"}},
		{"no key", `{"edges": {"table": "links", "from": "src", "to": "dst"}}`, []string{"edges: give key"}},
		{"no ends", `{"edges": {"table": "links", "key": "id"}}`, []string{"give from and to"}},
		{"missing table", `{"edges": {"table": "linkz", "key": "id", "from": "src", "to": "dst"}}`, []string{"edges.table", "no table linkz"}},
		{"a view", `{"nodes": {"table": "recent", "key": "id"}}`, []string{"nodes.table", "recent is a view"}},
		{"missing column", edges(`, "weight": "strenght"`), []string{"edges.weight", "links has no column strenght", "strength"}},
		{"missing key column", `{"nodes": {"table": "memories", "key": "uid"}}`, []string{"nodes.key", "no column uid"}},
		{"key not unique", `{"edges": {"table": "links", "key": "src", "from": "src", "to": "dst"}}`, []string{"edges.key", "(src) is not unique in links"}},
		{"composite key of three", `{"edges": {"table": "links", "key": ["kind", "dst", "src"], "from": "src", "to": "dst"}}`,
			[]string{"edges.key", "or two, not rowid or more"}},
		{"composite key not unique", `{"edges": {"table": "links", "key": ["src", "dst"], "from": "src", "to": "dst"}}`, []string{"(src, dst) is not unique"}},
		{"rowid", `{"edges": {"table": "links", "key": "rowid", "from": "src", "to": "dst"}}`, []string{"edges.key", "not rowid"}},
		{"rowid of WITHOUT ROWID", `{"nodes": {"table": "keyed", "key": "rowid"}}`, []string{"keyed is a WITHOUT ROWID table"}},
		{"numbers in text", edges(`, "weight": "kind"`), []string{"edges.weight", "links.kind is declared TEXT", "needs numbers"}},
		{"hours in text", nodes(`, "last_used": "last_used_at"`), []string{"nodes.last_used", "last_used_clock to iso8601"}},
		{"bad clock", nodes(`, "last_used": "last_used_at", "last_used_clock": "hours"`), []string{`clock "hours" is not one of`}},
		{"wall-only clock", `{"facts": {"table": "notes", "key": "id", "tier": "body", "last_access": "body", "last_access_clock": "active_hours"}}`, []string{"facts.last_access", "on the wall clock"}},
		{"clock without column", nodes(`, "last_used_clock": "iso8601"`), []string{"nodes.last_used_clock is set but nodes.last_used is not"}},
		{"status without values", nodes(`, "status": "state"`), []string{"nodes.status: give status_active"}},
		{"generated written", nodes(`, "reinforcement_count": "body_len"`), []string{"nodes.reinforcement_count", "body_len is a generated column"}},
		{"one column two parts", nodes(`, "status": "state", "status_active": ["active"], "status_archived": "archived", "archive_reason": "state"`),
			[]string{"nodes.archive_reason", "memories.state already plays nodes.status"}},
		{"ids of two kinds", `{"nodes": {"table": "notes", "key": "id"}, "edges": {"table": "links", "key": "id", "from": "src", "to": "dst"}}`,
			[]string{"edges.from", "links.src holds numeric ids", "notes.id is text"}},
		{"one table two roles", `{"nodes": {"table": "links", "key": "id"}, "edges": {"table": "links", "key": "id", "from": "src", "to": "dst"}}`,
			[]string{"edges.table", "links already plays another role"}},
		{"memworker's table", `{"nodes": {"table": "mem_blocks", "key": "id"}}`, []string{"mem_blocks is one of memworker's own tables"}},
		{"weight twice", edges(`, "weight": "strength", "weight_constant": 1`), []string{"weight (a column) or weight_constant, not both"}},
		{"negative constant", edges(`, "weight_constant": -1`), []string{"weight_constant: -1 is not a weight"}},
		{"same end twice", `{"edges": {"table": "links", "key": "id", "from": "src", "to": "src"}}`, []string{"from and to are the same column"}},
		{"tags both ways", nodes(`, "tags": {"column": "tags", "table": "notes"}`), []string{"nodes.tags: give a column, or a table"}},
		{"dependents without columns", nodes(`, "dependents": [{"table": "links"}]`), []string{"nodes.dependents[0]: give table and columns"}},
		{"dependents missing", nodes(`, "dependents": [{"table": "linkz", "columns": ["src"]}]`), []string{"nodes.dependents[0].table", "no table linkz"}},
		{"dependents column missing", nodes(`, "dependents": [{"table": "links", "columns": ["source"]}]`),
			[]string{"nodes.dependents[0].columns", "links has no column source"}},
		{"dependents of another role", `{"nodes": {"table": "memories", "key": "id", "dependents": [{"table": "links", "columns": ["src"]}]},
			"edges": {"table": "links", "key": "id", "from": "src", "to": "dst"}}`, []string{"edges.table", "links already plays another role"}},
		{"dependents ids of another kind", nodes(`, "dependents": [{"table": "notes", "columns": ["id"]}]`),
			[]string{"nodes.dependents[0].columns", "notes.id holds text ids"}},
		{"dependents fit", "[nodes]\ntable = \"memories\"\nkey = \"id\"\nstatus = \"state\"\nstatus_active = [\"active\"]\nstatus_archived = \"archived\"\n[[nodes.dependents]]\ntable = \"links\"\ncolumns = [\"src\", \"dst\"]\n", nil},
		{"facts without age", `{"facts": {"table": "notes", "key": "id", "tier": "body"}}`, []string{"give last_access or created_at"}},
		{"preset in a file", `{"preset": "mem", "nodes": {"table": "memories", "key": "id"}}`, []string{"preset is set by memworker map use"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			name := "m.json"
			if !strings.HasPrefix(strings.TrimSpace(c.text), "{") {
				name = "m.toml"
			}
			m, err := mapping.Parse(name, []byte(c.text))
			if err == nil {
				err = m.Validate(ctx, db)
			}
			expectRefusal(t, err, c.want)
		})
	}
}

func timeUnix(s int64) time.Time { return time.Unix(s, 0) }

// expectRefusal checks err against want: accepted when want is nil, else
// one line of ErrBadMapping holding every part of want.
func expectRefusal(t *testing.T, err error, want []string) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Errorf("refused: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("accepted, want %q", want)
	}
	if !errors.Is(err, mapping.ErrBadMapping) {
		t.Errorf("not ErrBadMapping: %v", err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("more than one line: %q", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q lacks %q", err, w)
		}
	}
}
