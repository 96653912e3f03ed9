package sweep

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/internal/report"
	"github.com/memdecay/memdecay/worker/internal/sweepsql"
)

// The report's counts: from the plan first (what a dry run reports), then
// from this sweep's events once applied (counts.go is the one place that
// knows how each removal is counted).

// planReport fills the report from the plan; a real sweep recounts from
// its events once applied (the same, unless an app wrote meanwhile).
func (s *sweep) planReport(ctx context.Context, deferred int64) error {
	r := &s.report
	r.EdgesDeferred = deferred
	counts := []struct {
		dst   *int64
		query string
	}{
		{&r.Archived, "SELECT count(*) FROM temp.plan_blocks"},
		{&r.OrphansArchived, "SELECT count(*) FROM temp.plan_orphans"},
		{&r.ConstitutionalReinforced, "SELECT count(*) FROM temp.plan_reinforce WHERE kind = 'constitutional'"},
		{&r.Reinforced, "SELECT count(*) FROM temp.plan_reinforce WHERE kind = 'top'"},
		{&r.InvalidRows.Count, "SELECT count(*) FROM temp.sweep_invalid"},
		// Processed and immune count every usable fact, whichever the sweep
		// had to look at, so full and incremental sweeps report alike.
		{&r.Facts.Processed, `SELECT count(*) FROM @FACTS f WHERE f.status IN ('active', 'confirmed')
			AND NOT EXISTS (SELECT 1 FROM mem_fact_due d WHERE d.id = f.id AND d.problem IS NOT NULL)`},
		{&r.Facts.Immune, `SELECT count(*) FROM @FACTS f WHERE f.status IN ('active', 'confirmed')
			AND (f.tier = 'permanent' OR f.status = 'confirmed')
			AND NOT EXISTS (SELECT 1 FROM mem_fact_due d WHERE d.id = f.id AND d.problem IS NOT NULL)`},
		{&r.Facts.Archived, "SELECT count(*) FROM temp.plan_facts WHERE action = 'archive'"},
		{&r.Facts.Pruned, "SELECT count(*) FROM temp.plan_facts WHERE action = 'prune'"},
	}
	for _, c := range counts {
		n, err := s.db.Count(ctx, s.opt.sql().Expand(c.query))
		if err != nil {
			return err
		}
		*c.dst = n
	}
	// The planned edges by phase, in one pass over a plan that may hold
	// every edge.
	if err := s.db.Querier().QueryRowContext(ctx, `SELECT count(*) FILTER (WHERE phase = 'block_archived'),
		count(*) FILTER (WHERE phase = 'static'), count(*) FILTER (WHERE phase = 'temporal') FROM temp.plan_edges`).Scan(
		&r.EdgesRemovedWithBlocks, &r.EdgesPruned, &r.EdgesDecayed); err != nil {
		return err
	}
	r.Facts.Kept = r.Facts.Processed - r.Facts.Immune - r.Facts.Archived - r.Facts.Pruned
	if err := s.policyReport(ctx); err != nil {
		return err
	}
	r.TotalEdgesAfter = r.EdgesBefore - r.EdgesRemovedWithBlocks - r.EdgesPruned - r.EdgesDecayed
	for _, p := range r.Policies {
		r.TotalEdgesAfter -= p.Decayed
	}
	var err error
	limit := report.InvalidSampleSize
	if s.opt.allInvalid {
		limit = -1 // no limit
	}
	if r.InvalidRows.Sample, err = memdb.QueryAll(ctx, s.db.Querier(),
		fmt.Sprintf(`SELECT kind, id, problem FROM temp.sweep_invalid ORDER BY kind, id LIMIT %d`, limit),
		func(rows *sql.Rows, v *report.InvalidRow) error { return rows.Scan(&v.Kind, &v.ID, &v.Problem) }); err != nil {
		return err
	}
	for i, v := range r.InvalidRows.Sample {
		r.InvalidRows.Sample[i].Problem = s.mapped.AppNames(v.Kind, v.Problem)
		r.InvalidRows.Sample[i].Table = s.mapped.TableOf(v.Kind)
	}
	r.DecayedSample, err = memdb.QueryAll(ctx, s.db.Querier(), s.opt.sql().Expand(`SELECT @END_A, @END_B, weight, effective FROM temp.plan_edges
		WHERE phase IN ('temporal', 'policy') ORDER BY phase DESC, effective, from_id, to_id LIMIT 5`),
		func(rows *sql.Rows, v *report.EdgeSample) error {
			return rows.Scan(&v.From, &v.To, &v.Weight, &v.EffectiveWeight)
		})
	return err
}

// policyReport tallies each relation policy: removals and flag changes
// from the plan, the other counts over all the policy's edges, so full and
// incremental sweeps report alike. below_minimum is after this sweep.
func (s *sweep) policyReport(ctx context.Context) error {
	var err error
	s.report.Policies, err = memdb.QueryAll(ctx, s.db.Querier(), s.opt.sql().Expand(`
		SELECT p.relation_type,
		       (SELECT count(*) FROM valid_edges e WHERE e.relation_type = p.relation_type AND NOT e.pinned
		           AND (CASE p.clock WHEN 'wall' THEN e.last_observed_at ELSE e.last_active_hours END) IS NOT NULL
		           AND NOT EXISTS (SELECT 1 FROM temp.plan_edges x WHERE x.from_id = e.from_id AND x.to_id = e.to_id
		                           AND x.phase = 'block_archived')),
		       (SELECT count(*) FROM temp.plan_edges e WHERE e.relation_type = p.relation_type AND e.phase = 'policy'),
		       (SELECT count(*) FROM @EDGES e WHERE e.relation_type = p.relation_type AND e.excluded AND NOT e.pinned)
		         + (SELECT count(*) FROM temp.plan_flags f WHERE f.relation_type = p.relation_type AND f.excluded_to)
		         - (SELECT count(*) FROM temp.plan_flags f WHERE f.relation_type = p.relation_type AND NOT f.excluded_to),
		       (SELECT count(*) FROM @EDGES e WHERE e.relation_type = p.relation_type AND e.pinned),
		       (SELECT count(*) FROM temp.plan_flags f WHERE f.relation_type = p.relation_type AND f.excluded_to),
		       (SELECT count(*) FROM temp.plan_flags f WHERE f.relation_type = p.relation_type AND NOT f.excluded_to)
		FROM temp.sweep_policy p ORDER BY p.relation_type`),
		func(rows *sql.Rows, c *report.PolicyCount) error {
			return rows.Scan(&c.RelationType, &c.Processed, &c.Decayed, &c.BelowMinimum, &c.Pinned, &c.Excluded, &c.Readmitted)
		})
	return err
}

// appliedReport recounts removals from this sweep's events, which commit
// with the changes they record.
func (s *sweep) appliedReport(ctx context.Context) error {
	r := &s.report
	// Skipped counts planned decisions an app's write overtook. Edges going
	// with an archived block and orphans are taken as found when applied.
	planned := r.Archived + r.EdgesPruned + r.EdgesDecayed + r.Facts.Archived + r.Facts.Pruned
	byPolicy := map[string]*report.PolicyCount{}
	for i := range r.Policies {
		p := &r.Policies[i]
		planned += p.Decayed + p.Excluded + p.Readmitted
		p.Decayed, p.Excluded, p.Readmitted = 0, 0, 0
		byPolicy[p.RelationType] = p
	}
	r.Archived, r.OrphansArchived, r.EdgesRemovedWithBlocks, r.EdgesPruned, r.EdgesDecayed = 0, 0, 0, 0, 0
	r.Facts.Archived, r.Facts.Pruned = 0, 0
	rows, err := s.db.Querier().QueryContext(ctx, sweepsql.SweepEventCounts(s.archives), sql.Named("sweep", r.SweepID))
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var kind, action, reason string
		var n int64
		if err := rows.Scan(&kind, &action, &reason, &n); err != nil {
			return err
		}
		relation := sweepsql.PolicyOfReason(reason)
		switch {
		case kind == "block" && action == "remove_row":
			// A dependent row that went with its block: counted with it.
		case kind == "block" && reason == "orphaned":
			r.OrphansArchived += n
		case kind == "block":
			r.Archived += n
		case kind == "fact" && action == "archive":
			r.Facts.Archived += n
		case kind == "fact" && action == "prune":
			r.Facts.Pruned += n
		case action == "delete":
			r.EdgesRemovedWithBlocks += n
		case action == "prune":
			r.EdgesPruned += n
		case action == "decay" && reason == "temporal":
			r.EdgesDecayed += n
		case byPolicy[relation] != nil && action == "decay":
			byPolicy[relation].Decayed += n
		case byPolicy[relation] != nil && action == "exclude":
			byPolicy[relation].Excluded += n
		case byPolicy[relation] != nil && action == "readmit":
			byPolicy[relation].Readmitted += n
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows.Close()
	// The rows the app's rules held or kept while applied (apply.sql):
	// invalid rows, and no longer planned changes.
	var held, heldPlanned int64
	if err := s.db.Querier().QueryRowContext(ctx, `SELECT count(*), coalesce(sum(planned), 0) FROM temp.sweep_invalid
		WHERE planned IS NOT NULL`).Scan(&held, &heldPlanned); err != nil {
		return err
	}
	if held > 0 {
		r.InvalidRows.Count += held
		limit := int64(report.InvalidSampleSize - len(r.InvalidRows.Sample))
		if s.opt.allInvalid {
			limit = held
		}
		more, err := memdb.QueryAll(ctx, s.db.Querier(),
			fmt.Sprintf(`SELECT kind, id, problem FROM temp.sweep_invalid WHERE planned IS NOT NULL ORDER BY kind, id LIMIT %d`, max(limit, 0)),
			func(rows *sql.Rows, v *report.InvalidRow) error { return rows.Scan(&v.Kind, &v.ID, &v.Problem) })
		if err != nil {
			return err
		}
		for _, v := range more {
			v.Problem, v.Table = s.mapped.AppNames(v.Kind, v.Problem), s.mapped.TableOf(v.Kind)
			r.InvalidRows.Sample = append(r.InvalidRows.Sample, v)
		}
		planned -= heldPlanned
	}
	r.Facts.Kept = r.Facts.Processed - r.Facts.Immune - r.Facts.Archived - r.Facts.Pruned
	applied := r.Archived + r.EdgesPruned + r.EdgesDecayed + r.Facts.Archived + r.Facts.Pruned
	for _, p := range r.Policies {
		applied += p.Decayed + p.Excluded + p.Readmitted
	}
	r.Skipped = planned - applied
	return nil
}
