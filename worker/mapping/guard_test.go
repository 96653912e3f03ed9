package mapping_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/worker/mapping"
)

// A JSON mapping that gives a key twice is refused, as TOML refuses it:
// encoding/json alone would keep the last one silently.
func TestJSONDuplicateKeysRefused(t *testing.T) {
	cases := []struct{ text, want string }{
		{`{"edges": {"table": "links", "key": "id", "from": "src", "to": "dst", "table": "memories"}}`, "the key edges.table is given twice"},
		{`{"edges": {"table": "links", "key": "id", "from": "src", "to": "dst"}, "edges": {"table": "links"}}`, "the key edges is given twice"},
		{`{"edges": {"table": "links", "key": "id", "from": "src", "To": "dst", "to": "src"}}`, "the key edges.to is given twice"},
		{`{"nodes": {"table": "memories", "key": "id", "tags": {"column": "tags", "column": "kind"}}}`, "the key nodes.tags.column is given twice"},
	}
	for _, c := range cases {
		_, err := mapping.Parse("m.json", []byte(c.text))
		if err == nil || !errors.Is(err, mapping.ErrBadMapping) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.text, err, c.want)
		}
	}
	toml := "[edges]\ntable = \"links\"\ntable = \"memories\"\n"
	if _, err := mapping.Parse("m.toml", []byte(toml)); err == nil {
		t.Errorf("TOML with a key given twice accepted")
	}
	// The same value twice in a list, or the same key in two objects, is fine.
	ok := `{"nodes": {"table": "memories", "key": "id", "status": "state", "status_active": ["active", "active"], "status_archived": "archived"},
		"edges": {"table": "links", "key": "id", "from": "src", "to": "dst"}}`
	if _, err := mapping.Parse("m.json", []byte(ok)); err != nil {
		t.Errorf("refused: %v", err)
	}
}

// A refusal naming a huge or unprintable name shows it cut and quoted, on
// one line.
func TestRefusalsCutNames(t *testing.T) {
	ctx := context.Background()
	huge := strings.Repeat("x", 10000)
	db := openDB(t, appSchema+`CREATE TABLE "`+huge+`" (id INTEGER PRIMARY KEY, "`+huge+`" REAL);`)
	cases := []struct{ name, text string }{
		{"missing column", `{"edges": {"table": "links", "key": "id", "from": "src", "to": "dst", "weight": "` + huge + `"}}`},
		{"missing table", `{"edges": {"table": "` + huge + `y", "key": "id", "from": "src", "to": "dst"}}`},
		{"listed columns", `{"edges": {"table": "` + huge + `", "key": "id", "from": "src", "to": "dst"}}`},
		{"a newline", `{"edges": {"table": "links", "key": "id", "from": "src", "to": "dst", "weight": "a\nb"}}`},
		{"unknown key", `{"edges": {"table": "links", "` + huge + `": 1}}`},
		{"clock", `{"nodes": {"table": "memories", "key": "id", "last_used": "last_used_at", "last_used_clock": "` + huge + `"}}`},
	}
	for _, c := range cases {
		m, err := mapping.Parse("m.json", []byte(c.text))
		if err == nil {
			err = m.Validate(ctx, db)
		}
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		if msg := err.Error(); len(msg) > 600 || strings.Contains(msg, "\n") {
			t.Errorf("%s: a refusal of %d bytes: %.200q", c.name, len(msg), msg)
		}
	}
}

// What a sweep refuses, the mapping's check refuses in the same words.
func TestUnsweepableRefused(t *testing.T) {
	ctx := context.Background()
	db := openDB(t, appSchema)
	nodes := func(extra string) string {
		return `{"nodes": {"table": "memories", "key": "id", "status": "state", "status_active": ["active", "new"], "status_archived": "archived"` + extra + `}}`
	}
	cases := []struct{ name, text, want string }{
		{"no status", `{"nodes": {"table": "memories", "key": "id"}}`,
			"nodes.status: a sweep archives a node by writing its status; name the status column and status_archived"},
		{"archived is active", strings.Replace(nodes(""), `"status_archived": "archived"`, `"status_archived": "new"`, 1),
			`nodes.status_archived: "new" is also a value that keeps a node`},
		{"node key rowid", strings.Replace(nodes(""), `"key": "id"`, `"key": "rowid"`, 1),
			"nodes.key: give the nodes' key column (an INTEGER PRIMARY KEY or a unique column), not rowid"},
		{"facts key rowid", `{"facts": {"table": "notes", "key": "rowid", "tier": "body", "created_at": "body", "status": "body",
			"status_active": ["a"], "status_archived": "b"}}`, "facts.key: give the facts' key column"},
		{"archived is confirmed", `{"facts": {"table": "notes", "key": "id", "tier": "body", "created_at": "body", "status": "body",
			"status_active": ["a"], "status_confirmed": ["b"], "status_archived": "b"}}`, `facts.status_archived: "b" is also a value that keeps a fact`},
		{"count on the key", nodes(`, "reinforcement_count": "id"`),
			`nodes: reinforcement_count = "id" is the table's key; a sweep writes reinforcement_count, so it cannot be a key, an edge end or a referenced column`},
	}
	for _, c := range cases {
		m, err := mapping.Parse("m.json", []byte(c.text))
		if err == nil {
			err = m.Validate(ctx, db)
		}
		if err == nil || !errors.Is(err, mapping.ErrBadMapping) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	m, err := mapping.Parse("m.json", []byte(nodes("")))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Validate(ctx, db); err != nil {
		t.Errorf("refused: %v", err)
	}
}

// Keys of no type whose rows read as one id (1 and '1') are refused when
// a mapping is declared (Mapping.Validate); a declared mapping in use
// (Declared.Validate: before a sweep, a reader, map show) passes, its
// sweeps skipping and naming such rows, and is still refused for any
// other mistake.
func TestCollidingKeysRefusedOnlyWhenDeclaring(t *testing.T) {
	ctx := context.Background()
	db := openDB(t, `CREATE TABLE notes (id PRIMARY KEY, state TEXT);
		INSERT INTO notes VALUES (1, 'active'), ('1', 'active'), (2, 'active');`)
	m, err := mapping.Parse("m.json", []byte(`{"nodes": {"table": "notes", "key": "id", "status": "state", "status_active": ["active"], "status_archived": "gone"}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `nodes.key: notes.id has no type (declared ""), and rows hold 1 and '1', which memworker reads as one id`
	if err := m.Validate(ctx, db); err == nil || !errors.Is(err, mapping.ErrBadMapping) || !strings.Contains(err.Error(), want) {
		t.Errorf("declaring: %v, want %q", err, want)
	}
	declared := &mapping.Declared{Mapping: m, Source: "m.json"}
	if err := declared.Validate(ctx, db); err != nil {
		t.Errorf("in use: %v", err)
	}
	if _, err := db.Exec(`CREATE TRIGGER mem_map_notes_queue_insert AFTER INSERT ON notes BEGIN SELECT 1; END`); err != nil {
		t.Fatal(err)
	}
	if err := declared.Validate(ctx, db); err == nil || !strings.Contains(err.Error(), `the app's trigger "mem_map_notes_queue_insert"`) {
		t.Errorf("in use, with a trigger of the app's named as memworker's change capture: %v", err)
	}
}
