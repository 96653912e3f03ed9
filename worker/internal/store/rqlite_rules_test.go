package store

import (
	"testing"
)

// The rules of the replica store, each with cases on both sides.

func TestReplicatedSQLNamesWorkingTablesOnly(t *testing.T) {
	for in, want := range map[string]string{
		"CREATE TEMP TABLE plan_edges (seq INTEGER PRIMARY KEY)": "CREATE TABLE mem_work_plan_edges (seq INTEGER PRIMARY KEY)",
		"CREATE TEMP VIEW valid_edges AS SELECT 1":               "CREATE VIEW mem_work_valid_edges AS SELECT 1",
		"SELECT count(*) FROM temp.plan_edges":                   "SELECT count(*) FROM mem_work_plan_edges",
		"DROP TABLE IF EXISTS temp.mem_edge_due":                 "DROP TABLE IF EXISTS mem_work_mem_edge_due",
		// Derived tables and columns keep their names.
		"SELECT p.plan_edges, degree FROM mem_edge_due":       "SELECT p.plan_edges, degree FROM mem_edge_due",
		"INSERT INTO block_degree SELECT * FROM plan_edges_x": "INSERT INTO mem_work_block_degree SELECT * FROM plan_edges_x",
		"FROM plan_edges_planned p JOIN plan_edges q":         "FROM mem_work_plan_edges_planned p JOIN mem_work_plan_edges q",
	} {
		if got := replicatedSQL(in); got != want {
			t.Errorf("replicatedSQL(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}
