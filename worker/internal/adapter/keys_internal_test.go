package adapter

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/mapping"
)

// keysMappingJSON maps notes, links and facts by their column id.
const keysMappingJSON = `{
 "nodes": {"table": "notes", "key": "id", "last_used": "used", "status": "state", "status_active": ["active"], "status_archived": "gone"},
 "edges": {"table": "links", "key": "id", "from": "a", "to": "b", "weight": "w", "last_active": "t"},
 "facts": {"table": "facts", "key": "id", "segment": "segment", "created_at": "created", "status": "state",
           "status_active": ["live"], "status_archived": "gone"}}`

// adaptedFor is the adapter of keysMappingJSON over tables whose key
// columns are declared keyType, on a file holding the indexes the mapping
// declares, with its views set up on conn.
func adaptedFor(t *testing.T, keyType string) (*Adapted, *sql.Conn) {
	t.Helper()
	ctx := context.Background()
	db, err := memdb.Open(filepath.Join(t.TempDir(), "app.db"), memdb.OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ends := strings.Replace(keyType, "PRIMARY KEY", "", 1)
	ends = strings.Replace(ends, "UNIQUE", "", 1)
	if _, err := db.SQL.Exec(`CREATE TABLE notes (id ` + keyType + `, state TEXT, used REAL);
		CREATE TABLE links (id ` + keyType + `, a ` + ends + ` NOT NULL, b ` + ends + ` NOT NULL, w REAL, t REAL);
		CREATE TABLE facts (id ` + keyType + `, segment TEXT, created INTEGER, state TEXT);
		CREATE TABLE mem_segments (segment TEXT PRIMARY KEY, tier TEXT, importance REAL, decay_rate REAL);
		CREATE TABLE mem_edge_policies (relation_type TEXT, action TEXT);`); err != nil {
		t.Fatal(err)
	}
	m, err := mapping.Parse("m.json", []byte(keysMappingJSON))
	if err != nil {
		t.Fatal(err)
	}
	indexes, err := mappedIndexes(ctx, db.SQL, m)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range indexes {
		if _, err := db.SQL.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	a, err := adapt(ctx, db.SQL, m, false)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.SQL.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := a.SetUp(ctx, conn); err != nil {
		t.Fatal(err)
	}
	return a, conn
}

// TestKeysProbedOnlyWhereTheyCan: only a key column of no type holds two
// values that read as one id, and only a column that may hold NULL holds
// NULL: the adapter's views and the sweep's statements pay for the probe
// of either only where the app's key can have it, and the probe of
// colliding keys goes through the index on CAST(id AS TEXT) that the
// mapping declares (memworker's own tables keep their statements,
// testdata/statements.golden).
func TestKeysProbedOnlyWhereTheyCan(t *testing.T) {
	for _, c := range []struct {
		keyType         string
		collide, isNull bool
	}{
		{"INTEGER PRIMARY KEY", false, false},
		{"INTEGER NOT NULL UNIQUE", false, false},
		{"TEXT UNIQUE", false, true},
		{"PRIMARY KEY", true, true},
		{"NOT NULL UNIQUE", true, false},
	} {
		t.Run(strings.ReplaceAll(c.keyType, " ", "_"), func(t *testing.T) {
			a, conn := adaptedFor(t, c.keyType)
			statements := strings.Join(a.setup, "\n") + strings.Join(a.Tables.Stmts("remove_edges"), "\n")
			if got := strings.Contains(statements, "NOT EXISTS (SELECT 1 FROM main.\"notes\" x"); got != c.collide {
				t.Errorf("the views probe for colliding keys: %v, want %v", got, c.collide)
			}
			invalid := strings.Join(a.Tables.Stmts("plan_invalid"), "\n")
			if got := strings.Contains(invalid, "read as one"); got != c.collide {
				t.Errorf("plan_invalid names colliding keys: %v, want %v", got, c.collide)
			}
			if got := strings.Contains(invalid, `.id is NULL`); got != c.isNull {
				t.Errorf("plan_invalid names NULL keys: %v, want %v", got, c.isNull)
			}
			if !c.collide {
				return
			}
			for view, key := range map[string]string{"mem_map_blocks": "id", "mem_map_edges": "from_id", "mem_map_facts": "id"} {
				plan := queryPlan(t, conn, `SELECT * FROM temp.`+view+` WHERE `+key+` = '1'`)
				if strings.Contains(plan, "SCAN") || !strings.Contains(plan, "_id_text") {
					t.Errorf("%s by id reads:\n%s", view, plan)
				}
			}
		})
	}
}

// queryPlan is EXPLAIN QUERY PLAN's details of query, a line each.
func queryPlan(t *testing.T, conn *sql.Conn, query string) string {
	t.Helper()
	rows, err := conn.QueryContext(context.Background(), `EXPLAIN QUERY PLAN `+query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		out = append(out, detail)
	}
	return strings.Join(out, "\n")
}
