package worker

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
)

// savedPlan is what a resumed sweep needs besides the planned rows: the
// report as planned and the queue marks its refresh covered.
type savedPlan struct {
	Report    Report `json:"report"`
	BlockMark int64  `json:"block_mark"`
	EdgeMark  int64  `json:"edge_mark"`
	FactMark  int64  `json:"fact_mark"`
}

// planSteps lists the plan tables an apply reads, with their columns (seq
// first); only the rows a step acts on are saved.
var planSteps = []struct {
	table, where string
	columns      []string
}{
	{"plan_blocks", "", []string{"seq", "id", "last_reinforced_hours", "recency", "tier"}},
	{"plan_edges", "phase != 'block_archived'", []string{"seq", "from_id", "to_id", "phase", "relation_type", "orphans", "weight",
		"reinforcement_count", "last_active_hours", "last_observed_at", "effective", "lambda", "elapsed"}},
	{"plan_flags", "", []string{"seq", "from_id", "to_id", "relation_type", "excluded_to", "weight", "last_active_hours",
		"last_observed_at", "effective", "threshold", "elapsed"}},
	{"plan_facts", "action IN ('archive', 'prune')", []string{"seq", "id", "tier", "status", "importance", "decay_rate",
		"access_count", "last_accessed_at", "days", "score", "action"}},
	{"plan_reinforce", "", []string{"rowid", "id", "kind"}},
}

// savePlan copies the plan into mem_sweep_plans in bounded transactions,
// then marks the sweep resumable in the same transaction as the last rows.
func (s *sweep) savePlan(ctx context.Context) error {
	for _, st := range planSteps {
		pairs := make([]string, len(st.columns))
		for i, c := range st.columns {
			pairs[i] = fmt.Sprintf("'%s', %s", c, c)
		}
		where := "rowid BETWEEN :lo AND :hi"
		if st.where != "" {
			where += " AND " + st.where
		}
		query := fmt.Sprintf(`INSERT INTO main.mem_sweep_plans (sweep_id, step, seq, row)
			SELECT :sweep, '%s', rowid, json_object(%s) FROM temp.%s WHERE %s`, st.table, strings.Join(pairs, ", "), st.table, where)
		maxRow, err := s.count(ctx, "SELECT coalesce(max(rowid), 0) FROM temp."+st.table)
		if err != nil {
			return err
		}
		rows := s.txRows(s.opt.ChunkSize)
		for lo, step := int64(1), int64(0); lo <= maxRow; lo += step {
			err := s.inTx(ctx, func() error {
				step = rows.next()
				_, err := s.conn.ExecContext(ctx, query, s.args(sql.Named("lo", lo), sql.Named("hi", lo+step-1))...)
				return err
			})
			if err != nil {
				return err
			}
			rows.took(step)
		}
	}
	meta, err := json.Marshal(savedPlan{Report: s.report, BlockMark: s.blockMark, EdgeMark: s.edgeMark, FactMark: s.factMark})
	if err != nil {
		return err
	}
	return s.inTx(ctx, func() error {
		_, err := s.conn.ExecContext(ctx, `UPDATE mem_sweeps SET plan = ? WHERE id = ?`, string(meta), s.report.SweepID)
		return err
	})
}

// restorePlan loads a cut-off sweep's saved plan into the temp tables the
// apply steps read; rows it already applied are gone from the file, and the
// apply's unchanged-row check skips them.
func (s *sweep) restorePlan(ctx context.Context) error {
	for _, st := range planSteps {
		extracts := make([]string, len(st.columns))
		for i, c := range st.columns {
			extracts[i] = fmt.Sprintf("json_extract(row, '$.%s')", c)
		}
		query := fmt.Sprintf(`INSERT INTO temp.%s (%s) SELECT %s FROM main.mem_sweep_plans WHERE sweep_id = ? AND step = ? ORDER BY seq`,
			st.table, strings.Join(st.columns, ", "), strings.Join(extracts, ", "))
		if _, err := s.conn.ExecContext(ctx, query, s.report.SweepID, st.table); err != nil {
			return err
		}
	}
	id := s.report.SweepID
	s.report = s.saved.Report
	s.report.SweepID = id
	s.blockMark, s.edgeMark, s.factMark = s.saved.BlockMark, s.saved.EdgeMark, s.saved.FactMark
	s.report.Resumed = true
	return nil
}
