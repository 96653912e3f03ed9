package sweep

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/memdecay/memdecay/worker/internal/report"
	"github.com/memdecay/memdecay/worker/internal/store"
)

// A sweep saves its plan in mem_sweep_plans before applying it, so a sweep
// cut off mid-apply is finished by the next sweep at the same clock. Each
// row is a JSON array of the plan row's columns, and goes in the same
// transaction as its chunk is applied (forget_saved), so the pages the plan
// took are reused by the events that follow rather than left free.

// savedPlan is what a resumed sweep needs besides the planned rows: the
// report as planned and the queue marks its refresh covered.
type savedPlan struct {
	Settings  string        `json:"settings"` // planSettings when it was made
	Report    report.Report `json:"report"`
	BlockMark int64         `json:"block_mark"`
	EdgeMark  int64         `json:"edge_mark"`
	FactMark  int64         `json:"fact_mark"`
	// NetDegrees: the plan's edge removals are out of the stored degrees
	// (sweep.netDegrees); a plan saved before this field counts them.
	NetDegrees bool `json:"net_degrees,omitempty"`
}

// savedSteps lists the plan tables an apply reads (their columns come from
// the tables themselves, temp.sql); only the rows a step acts on are saved.
var savedSteps = []struct{ table, where string }{
	{"plan_blocks", ""},
	{"plan_edges", "phase != 'block_archived'"},
	{"plan_flags", ""},
	{"plan_facts", "action IN ('archive', 'prune')"},
	{"plan_reinforce", ""},
}

// planColumns lists a plan table's columns, in order (rowid stands for the
// seq of a table that has none).
func (s *sweep) planColumns(ctx context.Context, table string) ([]string, error) {
	rows, err := s.db.Querier().QueryContext(ctx, "SELECT * FROM temp."+table+" LIMIT 0")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	if len(cols) == 0 {
		return nil, fmt.Errorf("no plan table temp.%s", table)
	}
	if cols[0] != "seq" {
		cols = append([]string{"rowid"}, cols...)
	}
	return cols, nil
}

// savePlan copies the plan into mem_sweep_plans in bounded transactions,
// then marks the sweep resumable in the same transaction as the last rows.
func (s *sweep) savePlan(ctx context.Context) error {
	meta, err := json.Marshal(savedPlan{Settings: s.planSettings(), Report: s.report, BlockMark: s.marks.block, EdgeMark: s.marks.edge, FactMark: s.marks.fact,
		NetDegrees: s.netDegrees})
	if err != nil {
		return err
	}
	markResumable := func() error {
		_, err := s.db.Querier().ExecContext(ctx, `UPDATE mem_sweeps SET plan = ? WHERE id = ?`, string(meta), s.report.SweepID)
		return err
	}
	maxRows := make([]int64, len(savedSteps))
	last := -1 // the last step with rows to save
	for i, st := range savedSteps {
		if maxRows[i], err = s.lastRow(ctx, st.table); err != nil {
			return err
		}
		if maxRows[i] > 0 {
			last = i
		}
	}
	if last < 0 {
		return s.db.InTx(ctx, markResumable)
	}
	for i, st := range savedSteps[:last+1] {
		cols, err := s.planColumns(ctx, st.table)
		if err != nil {
			return err
		}
		where := "rowid BETWEEN :lo AND :hi"
		if st.where != "" {
			where += " AND " + st.where
		}
		// The step is bound, not written into the SQL: a replica renames
		// the working tables a statement names, and would rename it too.
		query := fmt.Sprintf(`INSERT INTO main.mem_sweep_plans (sweep_id, step, seq, row)
			SELECT :sweep, :step, rowid, json_array(%s) FROM temp.%s WHERE %s`, strings.Join(cols, ", "), st.table, where)
		maxRow := maxRows[i]
		rows := s.db.TxRows(s.opt.ChunkSize)
		save := func(lo, hi int64) error {
			_, err := s.db.Querier().ExecContext(ctx, query, s.args(append(chunkArgs(lo, hi), sql.Named("step", st.table))...)...)
			return err
		}
		for lo := int64(1); lo <= maxRow; {
			var hi int64
			err := s.db.InTx(ctx, func() (err error) {
				if hi, err = rows.Take(lo, maxRow, save); err == nil && i == last && hi == maxRow {
					err = markResumable()
				}
				return err
			})
			if err != nil {
				return err
			}
			rows.Took(hi - lo + 1)
			lo = hi + 1
		}
	}
	return nil
}

// restorePlan loads a cut-off sweep's saved plan into the temp tables the
// apply steps read; rows it already applied are gone from the file, and the
// apply's unchanged-row check skips them.
func (s *sweep) restorePlan(ctx context.Context) error {
	for _, st := range savedSteps {
		cols, err := s.planColumns(ctx, st.table)
		if err != nil {
			return err
		}
		extracts := make([]string, len(cols))
		for i := range cols {
			extracts[i] = fmt.Sprintf("json_extract(row, '$[%d]')", i)
		}
		query := fmt.Sprintf(`INSERT INTO temp.%s (%s) SELECT %s FROM main.mem_sweep_plans WHERE sweep_id = ? AND step = ? ORDER BY seq`,
			st.table, strings.Join(cols, ", "), strings.Join(extracts, ", "))
		if _, err := s.db.Querier().ExecContext(ctx, query, s.report.SweepID, st.table); err != nil {
			return err
		}
	}
	id := s.report.SweepID
	s.report = s.saved.Report
	s.report.SweepID = id
	s.marks.block, s.marks.edge, s.marks.fact = s.saved.BlockMark, s.saved.EdgeMark, s.saved.FactMark
	s.netDegrees = s.saved.NetDegrees
	s.report.Resumed = true
	return nil
}

// discardStalePlan drops a cut-off sweep's saved plan when the settings
// it was made under have changed since (a threshold, a policy, the decay
// cap, archival, top N): that sweep ends as interrupted, what it removed
// stays removed with its events, and this sweep plans afresh under the
// settings of now.
func (s *sweep) discardStalePlan(ctx context.Context) error {
	if !s.resume || s.saved.Settings == s.planSettings() {
		return nil
	}
	stale := s.report.SweepID
	err := s.db.InTx(ctx, func() error {
		q := s.db.Querier()
		id, err := store.NextSweepID(ctx, q)
		if err != nil {
			return err
		}
		s.report.SweepID = id
		if _, err := q.ExecContext(ctx, `UPDATE mem_sweeps SET status = 'interrupted', plan = NULL, finished_at = ? WHERE id = ?`,
			time.Now().Unix(), stale); err != nil {
			return err
		}
		if _, err := q.ExecContext(ctx, `DELETE FROM mem_sweep_plans WHERE sweep_id = ?`, stale); err != nil {
			return err
		}
		return s.recordNew(ctx, q, store.LeaseClaim{ID: id, Owner: s.opt.Owner, Until: time.Now().Add(LeaseDuration).Unix()}, false)
	})
	if err != nil {
		return fmt.Errorf("sweep: discarding the plan of sweep %d, made under other settings: %w", stale, err)
	}
	s.resume = false
	s.report.DiscardedPlanOf = stale
	return nil
}
