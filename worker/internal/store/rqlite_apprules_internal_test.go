package store

import (
	"testing"
)

// A replica renames the working tables in a statement's SQL, never in its
// string literals or comments: mem_config's key 'rank_scale', a bound step
// compared with 'plan_edges', keep their text.
func TestReplicatedSQLKeepsLiterals(t *testing.T) {
	for in, want := range map[string]string{
		`INSERT INTO main.mem_config (key, value) VALUES ('rank_scale', ?)`: `INSERT INTO main.mem_config (key, value) VALUES ('rank_scale', ?)`,
		`SELECT max_degree FROM temp.rank_scale`:                            `SELECT max_degree FROM mem_work_rank_scale`,
		`SELECT 'edge', :step = 'plan_edges' FROM apply_kept_keys`:          `SELECT 'edge', :step = 'plan_edges' FROM mem_work_apply_kept_keys`,
		`SELECT 'it''s plan_edges'||plan_edges.seq FROM plan_edges`:         `SELECT 'it''s plan_edges'||mem_work_plan_edges.seq FROM mem_work_plan_edges`,
		"SELECT 1 -- plan_edges' rows\nFROM plan_edges":                     "SELECT 1 -- plan_edges' rows\nFROM mem_work_plan_edges",
		"SELECT /* 'plan_edges */ seq FROM plan_edges WHERE x = 'a'":        "SELECT /* 'plan_edges */ seq FROM mem_work_plan_edges WHERE x = 'a'",
		`SELECT 'unterminated plan_edges`:                                   `SELECT 'unterminated plan_edges`,
	} {
		if got := replicatedSQL(in); got != want {
			t.Errorf("replicatedSQL(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}
