package main

import (
	"context"
	"fmt"
	"testing"

	"github.com/memdecay/memdecay/internal/rqcluster"
	"github.com/memdecay/memdecay/schema"
)

// On an rqlite cluster started with -fk (foreign keys on), migrating down
// through the rebuild of mem_edges and up again, and down to nothing, never
// deletes an app's row: rqlite runs DROP TABLE with its implicit DELETE,
// which would cascade into an app table that references mem_edges or
// mem_blocks with ON DELETE CASCADE. Each node's own copy is checked.
func TestRqliteMigrateKeepsAppRowsWithForeignKeysOn(t *testing.T) {
	so, err := rqcluster.Extension()
	if err != nil {
		t.Fatal(err)
	}
	c := rqcluster.StartT(t, rqcluster.Options{Nodes: 2, Extension: so, Args: []string{"-fk"}})
	u := c.Nodes()[0].URL
	ok(t, "--db", u, "migrate", "up")
	leader, err := c.Leader(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := leader.Execute(context.Background(),
		`INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES ('a', 'knowledge', 1), ('b', 'knowledge', 1), ('c', 'knowledge', 1)`,
		`INSERT INTO mem_edges (from_id, to_id, weight, last_active_hours) VALUES ('a', 'b', 0.5, 1), ('b', 'c', 0.5, 1)`,
		`CREATE TABLE edge_notes (from_id TEXT, to_id TEXT, body TEXT,
			FOREIGN KEY (from_id, to_id) REFERENCES mem_edges (from_id, to_id) ON DELETE CASCADE)`,
		`CREATE TABLE block_notes (block_id TEXT REFERENCES mem_blocks (id) ON DELETE CASCADE, body TEXT)`,
		`INSERT INTO edge_notes VALUES ('a', 'b', 'x'), ('b', 'c', 'y')`,
		`INSERT INTO block_notes VALUES ('a', 'x'), ('b', 'y'), ('c', 'z')`,
	); err != nil {
		t.Fatal(err)
	}
	// The cluster enforces foreign keys: a note on a missing edge is refused.
	if err := leader.Execute(context.Background(), `INSERT INTO edge_notes VALUES ('x', 'y', 'no such edge')`); err == nil {
		t.Fatal("rqlited -fk accepted a note on a missing edge: foreign keys are not on, the test would prove nothing")
	}
	appRows := `SELECT (SELECT count(*) FROM edge_notes) || ' ' || (SELECT count(*) FROM block_notes)`
	latest, _ := schema.Latest()
	for v := latest; v > 5; v-- {
		ok(t, "--db", u, "migrate", "down")
	}
	eachNode(t, c, appRows, "2 3")
	ok(t, "--db", u, "migrate", "up")
	eachNode(t, c, appRows, "2 3")
	eachNode(t, c, `SELECT version FROM mem_schema_migrations`, fmt.Sprint(latest))
	ok(t, "--db", u, "migrate", "down", "--all", "--force")
	eachNode(t, c, appRows, "2 3")
	// Enforcement is back on afterwards.
	if err := leader.Execute(context.Background(), `INSERT INTO block_notes VALUES ('nobody', 'no such block')`); err == nil {
		t.Error("after the migrations, the cluster accepts a note on a missing block: foreign keys were left off")
	}
}
