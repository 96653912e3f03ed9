package sweep

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/memdecay/memdecay/worker/internal/report"
)

// A dry run with List lists its plan: every row the sweep would change,
// read from the plan's temp tables before the dry run rolls back, once
// planHolds has taken out the rows an app's foreign keys hold. A part of
// the list is one SELECT over a plan table (p, or e for an edge's), the
// row itself as v (memworker's table, or the adapter's view of the app's),
// each column of listColumns an expression or NULL.

// listColumns are the columns every part of the list selects, in the
// order listPlan scans them.
var listColumns = []string{"kind", "action", "reason", "subject", "key", "end_a", "end_b", "block", "relation_type", "tier",
	"weight", "effective", "lambda", "elapsed", "unit", "recency", "score", "threshold", "degree", "count", "rank"}

// listPart is one SELECT of the list: its columns (the others NULL), the
// rest of its query (FROM … ORDER BY), in the dialect of the tables swept.
type listPart struct {
	cols map[string]string
	from string
}

// listParts are the plan's changes in the order the sweep makes them:
// blocks archived; edges removed (in key order, each with why); orphans;
// exclusions and readmissions; facts archived and pruned; reinforcements.
func (s *sweep) listParts() []listPart {
	blockKey, _ := s.mapped.ListedKey("block", "v")
	edgeKey, _ := s.mapped.ListedKey("edge", "v")
	factKey, _ := s.mapped.ListedKey("fact", "v")
	// An edge's elapsed time is in days on a policy's wall clock.
	edgeUnit := "CASE WHEN e.elapsed IS NULL THEN NULL WHEN sp.clock = 'wall' THEN 'days' ELSE 'hours' END"
	return []listPart{{
		cols: map[string]string{"kind": "'block'", "action": "'archive'", "reason": "'decayed'", "subject": "p.id", "key": blockKey,
			"tier": "p.tier", "recency": "p.recency", "lambda": "s.lambda", "elapsed": "max(0, :now - p.last_reinforced_hours)",
			"unit": "'hours'", "threshold": ":block_threshold", "degree": "s.degree"},
		from: `FROM temp.plan_blocks p LEFT JOIN @NODES v ON v.id = p.id LEFT JOIN mem_block_state s ON s.id = p.id ORDER BY p.id`,
	}, {
		cols: map[string]string{"kind": "'edge'",
			"action":  "CASE e.phase WHEN 'block_archived' THEN 'delete' WHEN 'static' THEN 'prune' ELSE 'decay' END",
			"reason":  "CASE e.phase WHEN 'policy' THEN 'policy:' || e.relation_type ELSE e.phase END",
			"subject": "@SUBJECT_E", "key": edgeKey, "end_a": "v.@END_A", "end_b": "v.@END_B",
			"block":         "CASE WHEN e.phase != 'block_archived' THEN NULL WHEN e.@END_A IN (SELECT id FROM temp.plan_blocks) THEN e.@END_A ELSE e.@END_B END",
			"relation_type": "v.relation_type", "weight": "e.weight", "effective": "e.effective", "lambda": "e.lambda",
			"elapsed": "e.elapsed", "unit": edgeUnit, "count": "e.reinforcement_count",
			"threshold": `CASE e.phase WHEN 'static' THEN :prune_threshold WHEN 'temporal' THEN :decay_threshold
				WHEN 'policy' THEN CASE WHEN sp.to_zero THEN 0 ELSE sp.threshold END END`},
		from: `FROM temp.plan_edges e LEFT JOIN @EDGES v ON v.@KEY_A = e.from_id AND v.@KEY_B = e.to_id
			LEFT JOIN temp.sweep_policy sp ON sp.relation_type = e.relation_type ORDER BY e.from_id, e.to_id`,
	}, {
		cols: map[string]string{"kind": "'block'", "action": "'archive'", "reason": "'orphaned'", "subject": "p.id", "key": blockKey},
		from: `FROM temp.plan_orphans p LEFT JOIN @NODES v ON v.id = p.id ORDER BY p.id`,
	}, {
		cols: map[string]string{"kind": "'edge'", "action": "CASE WHEN e.excluded_to THEN 'exclude' ELSE 'readmit' END",
			"reason":  "CASE WHEN e.excluded_to THEN 'below_minimum' ELSE 'reobserved' END || ':' || e.relation_type",
			"subject": "@SUBJECT_E", "key": edgeKey, "end_a": "v.@END_A", "end_b": "v.@END_B", "relation_type": "e.relation_type",
			"weight": "e.weight", "effective": "e.effective", "elapsed": "e.elapsed", "unit": edgeUnit, "threshold": "e.threshold"},
		from: `FROM temp.plan_flags e LEFT JOIN @EDGES v ON v.@KEY_A = e.from_id AND v.@KEY_B = e.to_id
			LEFT JOIN temp.sweep_policy sp ON sp.relation_type = e.relation_type ORDER BY e.from_id, e.to_id`,
	}, {
		// lifecycle_action's thresholds: a short fact is pruned below
		// prune_score and archived below archive_score, a long one
		// archived below prune_score.
		cols: map[string]string{"kind": "'fact'", "action": "p.action", "reason": "'faded'", "subject": "p.id", "key": factKey,
			"tier": "p.tier", "score": "p.score", "elapsed": "p.days", "unit": "'days'",
			"threshold": "CASE WHEN p.action = 'prune' OR p.tier = 'long' THEN :prune_score ELSE :archive_score END"},
		from: `FROM temp.plan_facts p LEFT JOIN @FACTS v ON v.id = p.id WHERE p.action IN ('archive', 'prune') ORDER BY p.id`,
	}, {
		cols: map[string]string{"kind": "'block'", "action": "'reinforce'", "reason": "p.kind", "subject": "p.id", "key": blockKey,
			"score": "r.score", "degree": "r.degree", "count": "r.count", "rank": "r.rank"},
		from: `FROM temp.plan_reinforce p LEFT JOIN @NODES v ON v.id = p.id
			LEFT JOIN (SELECT id, score, degree, count, row_number() OVER (ORDER BY score DESC, id) AS rank FROM temp.plan_rank) r
			       ON r.id = p.id AND p.kind = 'top'
			ORDER BY p.kind = 'top', r.rank, p.id`,
	}}
}

// listPlan reads the list of the plan's changes.
func (s *sweep) listPlan(ctx context.Context) ([]report.PlannedChange, error) {
	out := []report.PlannedChange{}
	keyCols := map[string][]string{}
	for _, kind := range []string{"block", "edge", "fact"} {
		_, keyCols[kind] = s.mapped.ListedKey(kind, "v")
	}
	for _, part := range s.listParts() {
		exprs := make([]string, len(listColumns))
		for i, c := range listColumns {
			exprs[i] = "NULL"
			if x, ok := part.cols[c]; ok {
				exprs[i] = x
			}
		}
		query := s.opt.sql().Expand("SELECT " + strings.Join(exprs, ", ") + "\n" + part.from)
		rows, err := s.db.Querier().QueryContext(ctx, query, s.args()...)
		if err != nil {
			return nil, fmt.Errorf("listing the plan: %w", err)
		}
		for rows.Next() {
			c, err := s.scanPlanned(rows, keyCols)
			if err != nil {
				rows.Close()
				return nil, fmt.Errorf("listing the plan: %w", err)
			}
			out = append(out, c)
		}
		if err := rows.Err(); err != nil {
			rows.Close()
			return nil, fmt.Errorf("listing the plan: %w", err)
		}
		rows.Close()
	}
	return out, nil
}

// scanPlanned reads one row of listColumns.
func (s *sweep) scanPlanned(rows *sql.Rows, keyCols map[string][]string) (report.PlannedChange, error) {
	var c report.PlannedChange
	var key, endA, endB, block, relation, tier, unit sql.NullString
	var weight, effective, lambda, elapsed, recency, score, threshold, degree, count sql.NullFloat64
	var rank sql.NullInt64
	if err := rows.Scan(&c.Kind, &c.Action, &c.Reason, &c.Subject, &key, &endA, &endB, &block, &relation, &tier,
		&weight, &effective, &lambda, &elapsed, &unit, &recency, &score, &threshold, &degree, &count, &rank); err != nil {
		return c, err
	}
	c.Table, c.KeyColumns = s.mapped.ListedTable(c.Kind), keyCols[c.Kind]
	if key.Valid {
		// Numbers as the table holds them: an integer key stays exact.
		dec := json.NewDecoder(bytes.NewReader([]byte(key.String)))
		dec.UseNumber()
		if err := dec.Decode(&c.Key); err != nil {
			return c, fmt.Errorf("the key of %s %s: %w", c.Kind, c.Subject, err)
		}
	}
	c.From, c.To, c.Block, c.RelationType, c.Tier, c.ElapsedUnit = endA.String, endB.String, block.String, relation.String, tier.String, unit.String
	for _, f := range []struct {
		dst **float64
		v   sql.NullFloat64
	}{{&c.Weight, weight}, {&c.Effective, effective}, {&c.Lambda, lambda}, {&c.Elapsed, elapsed}, {&c.Recency, recency},
		{&c.Score, score}, {&c.Threshold, threshold}, {&c.Degree, degree}, {&c.ReinforcementCount, count}} {
		if f.v.Valid {
			v := f.v.Float64
			*f.dst = &v
		}
	}
	c.Rank = rank.Int64
	return c, nil
}

// replanOrphans decides the plan's orphans again once planHolds has
// taken the rows an app's foreign keys hold out of the plan: an end of a
// held edge keeps it, so the sweep will not find it orphaned. The rule is
// plan_policy's own, its last statement.
func (s *sweep) replanOrphans(ctx context.Context) error {
	if s.report.OrphansArchived == 0 {
		return nil
	}
	list := s.opt.sql().Stmts("plan_policy")
	orphans := list[len(list)-1]
	if !strings.HasPrefix(orphans, "INSERT INTO plan_orphans") {
		panic("worker: plan_policy no longer ends with the orphans' statement")
	}
	if _, err := s.db.ExecList(ctx, "replan orphans", []string{"DELETE FROM plan_orphans", orphans}); err != nil {
		return err
	}
	n, err := s.db.Count(ctx, "SELECT count(*) FROM temp.plan_orphans")
	s.report.OrphansArchived = n
	return err
}
