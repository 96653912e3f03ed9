package worker_test

// The summary line of docs/sweep.md, the report.

import (
	"fmt"
	"strings"
	"testing"
)

// TestSummary checks each part of the summary line (docs/sweep.md, the report), with the
// 25% escalation on both sides.
func TestSummary(t *testing.T) {
	blocks := func(ids ...string) string {
		var parts []string
		for _, id := range ids {
			parts = append(parts, fmt.Sprintf("('%s','knowledge',1000)", id))
		}
		return "INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES " + strings.Join(parts, ", ") + ";"
	}
	noTop := `UPDATE mem_config SET value = 0 WHERE key = 'reinforce_top_n';`

	t.Run("nothing required", func(t *testing.T) {
		db, _ := newMemory(t, fixture(blocks("a", "b", "c"), noTop,
			`INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES ('a','b',0.5,1,990), ('b','c',0.11,1,1000);`))
		if r := sweepAt(t, db, 1000); r.Summary != "Curated: nothing required." {
			t.Errorf("summary %q", r.Summary)
		}
	})
	t.Run("reinforcement is something", func(t *testing.T) {
		db, _ := newMemory(t, blocks("a", "b"))
		if r := sweepAt(t, db, 1000); r.Summary != "Curated: 2 reinforced." {
			t.Errorf("summary %q", r.Summary)
		}
		db2, _ := newMemory(t, fixture(blocks("a", "b"), noTop, `INSERT INTO mem_block_tags VALUES ('a','self/constitutional');`))
		if r := sweepAt(t, db2, 1000); r.Summary != "Curated: 1 constitutional reinforced." {
			t.Errorf("summary %q", r.Summary)
		}
	})
	t.Run("the example line of docs/sweep.md", func(t *testing.T) {
		ids := make([]string, 12)
		for i := range ids {
			ids[i] = fmt.Sprintf("n%02d", i)
		}
		var edges []string
		for i := 0; i < len(ids) && len(edges) < 47; i++ {
			for j := i + 1; j < len(ids) && len(edges) < 47; j++ {
				anchor := 1000
				if len(edges) < 12 {
					anchor = 0 // stale: decays
				}
				edges = append(edges, fmt.Sprintf("('%s','%s',0.5,1,%d)", ids[i], ids[j], anchor))
			}
		}
		db, _ := newMemory(t, fixture(blocks(ids...),
			`INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES ('z1','knowledge',0), ('z2','knowledge',0), ('z3','knowledge',0);`,
			"INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES "+strings.Join(edges, ", ")+";"))
		r := sweepAt(t, db, 1000)
		if want := "Curated: 3 archived, 12 edges decayed (35 remain), 5 reinforced."; !strings.HasPrefix(r.Summary, want) {
			t.Errorf("summary %q, want %q", r.Summary, want)
		}
	})
	for _, c := range []struct {
		name      string
		edges     string
		prefix    string
		escalates bool
		tip       bool
	}{
		// 1 of 4 removed = 25%: not above, so a tip.
		{"decayed 25%", `('a','b',0.5,1,0), ('a','c',0.5,1,1000), ('a','d',0.5,1,1000), ('b','c',0.5,1,1000)`,
			"Curated: 1 edges decayed (3 remain).", false, true},
		// 2 of 7 = 28.6%: escalation instead of the tip.
		{"decayed 28.6%", `('a','b',0.5,1,0), ('a','c',0.5,1,0), ('a','d',0.5,1,1000), ('b','c',0.5,1,1000), ('b','d',0.5,1,1000), ('c','d',0.5,1,1000), ('a','e',0.5,1,1000)`,
			"Curated: 2 edges decayed (5 remain).", true, false},
		// Pruned and decayed together: 1 + 1 of 8 = 25%.
		{"pruned+decayed 25%", `('a','b',0.5,1,0), ('a','c',0.05,0,1000), ('a','d',0.5,1,1000), ('b','c',0.5,1,1000), ('b','d',0.5,1,1000), ('c','d',0.5,1,1000), ('a','e',0.5,1,1000), ('b','e',0.5,1,1000)`,
			"Curated: 1 edges pruned, 1 edges decayed (6 remain).", false, true},
		// Pruned only, 1 of 4: no tip (nothing decayed), no escalation.
		{"pruned 25%", `('a','b',0.05,0,1000), ('a','c',0.5,1,1000), ('a','d',0.5,1,1000), ('b','c',0.5,1,1000)`,
			"Curated: 1 edges pruned.", false, false},
		// Pruned only, 2 of 4: escalation.
		{"pruned 50%", `('a','b',0.05,0,1000), ('a','c',0.05,0,1000), ('a','d',0.5,1,1000), ('b','c',0.5,1,1000)`,
			"Curated: 2 edges pruned.", true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			db, _ := newMemory(t, fixture(blocks("a", "b", "c", "d", "e"), noTop,
				"INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES "+c.edges+";"))
			r := sweepAt(t, db, 1000)
			if !strings.HasPrefix(r.Summary, c.prefix) {
				t.Errorf("summary %q, want prefix %q", r.Summary, c.prefix)
			}
			if got := strings.Contains(r.Summary, "reduced significantly"); got != c.escalates {
				t.Errorf("summary %q: escalation %v, want %v", r.Summary, got, c.escalates)
			}
			if got := strings.Contains(r.Summary, "Tip:"); got != c.tip {
				t.Errorf("summary %q: tip %v, want %v", r.Summary, got, c.tip)
			}
		})
	}
}
