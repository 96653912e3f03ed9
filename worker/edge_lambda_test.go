package worker_test

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/worker"
)

// An edge's decay rate is computed in SQL from its ends' stored rates
// (rules.go): it must be lambda_edge of their tiers, bit for bit, for every
// pair of tiers, a missing end, counts either side of the established
// threshold, and any threshold.
func TestEdgeLambdaInSQL(t *testing.T) {
	// Each end a block of its tier (category, tags), or none (x).
	tiers := map[string]struct{ category, tag string }{
		"p": {"knowledge", "self/constitutional"}, "d": {"mind", ""}, "s": {"knowledge", ""}, "e": {"observation", ""},
	}
	ends := []string{"p", "d", "s", "e", "x"}
	var blocks, tags, edges []string
	block := func(id, tier string) {
		if b, ok := tiers[tier]; ok {
			blocks = append(blocks, fmt.Sprintf("('%s', '%s', 1)", id, b.category))
			if b.tag != "" {
				tags = append(tags, fmt.Sprintf("('%s', '%s')", id, b.tag))
			}
		}
	}
	for _, a := range ends {
		for _, c := range ends {
			for _, count := range []string{"0", "1", "2.5", "3", "9", "9.999", "10", "11", "1e300"} {
				n := len(edges)
				from, to := fmt.Sprintf("%03d-1%s", n, a), fmt.Sprintf("%03d-2%s", n, c)
				block(from, a)
				block(to, c)
				edges = append(edges, fmt.Sprintf("('%s', '%s', 0.5, %s, 1)", from, to, count))
			}
		}
	}
	db, _ := newMemory(t, "")
	mustExec(t, db, `INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES `+strings.Join(blocks, ", "))
	mustExec(t, db, `INSERT INTO mem_block_tags VALUES `+strings.Join(tags, ", "))
	mustExec(t, db, `PRAGMA foreign_keys = OFF`) // the x ends have no block
	mustExec(t, db, `INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES `+strings.Join(edges, ", "))
	sweepAt(t, db, 1) // every block's state, with its tier and rate
	for _, established := range []float64{10, 3, 0, 2.5} {
		var differ, total int
		q := `SELECT count(*) FILTER (WHERE NOT (` + worker.EdgeLambdaSQL() + ` = lambda_edge(coalesce(ta.tier, 'standard'),
				coalesce(tb.tier, 'standard'), e.reinforcement_count, :established))), count(*)
			FROM mem_edges e LEFT JOIN mem_block_state ta ON ta.id = e.from_id LEFT JOIN mem_block_state tb ON tb.id = e.to_id`
		if err := db.SQL.QueryRow(q, sql.Named("established", established)).Scan(&differ, &total); err != nil {
			t.Fatal(err)
		}
		if total != len(edges) || differ != 0 {
			t.Errorf("established %v: %d of %d edges' rates differ from lambda_edge (want %d edges)", established, differ, total, len(edges))
		}
	}
	if tiersSeen := scalar[int](t, db, `SELECT count(DISTINCT tier) FROM mem_block_state`); tiersSeen != 4 {
		t.Errorf("%d tiers among the blocks, want 4", tiersSeen)
	}
}
