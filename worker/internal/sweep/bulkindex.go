package sweep

import (
	"context"
	"fmt"

	"github.com/memdecay/memdecay/worker/internal/store"
	"github.com/memdecay/memdecay/worker/internal/sweepsql"
)

// A bulk sweep that removes a large share of memworker's own edges deletes
// them with mem_edges_to dropped, and builds it again once they are gone:
// one sort of the edges left instead of a random leaf per removal, and an
// index left full rather than with the removals' gaps. Inside the bulk
// sweep's one transaction no other connection sees the index missing;
// its statistics (sqlite_stat1, sqlite_stat4), which DROP INDEX deletes,
// are put back as they were. (A first sweep at 1M edges: the edges' delete
// 0.39 s shorter for a 0.2–0.3 s sort, and a file 12 MB smaller;
// bench/RESULTS.md.) A default sweep keeps the index: its removals span
// many transactions, and an app between them would find it gone.

const (
	edgesToIndex = "mem_edges_to"
	// rebuildShare: the edges step removes at least 1/rebuildShare of the
	// edges. Below about a sixth, keeping the index up to date costs less
	// than sorting the edges left into a new one.
	rebuildShare = 5
)

// statTables are the statistics tables DROP INDEX clears of the index.
var statTables = []string{"sqlite_stat1", "sqlite_stat4"}

// dropEdgesToIndex drops mem_edges_to before the edges step of a bulk
// sweep when rebuilding it afterwards is worth it and safe, and returns
// the statements that build it again (nil: the index stays). It stays
// when the tables are an app's (its indexes are its own), when a trigger
// other than memworker's could read the edges while they go, or when the
// plan deletes edges under a policy that archives their orphaned ends
// (orphan_blocks looks up each end's edges).
func (s *sweep) dropEdgesToIndex(ctx context.Context, table string) ([]string, error) {
	if !s.opt.Bulk || s.mapped != nil || table != "plan_edges" {
		return nil, nil
	}
	q := s.db.Querier()
	var create string
	if err := q.QueryRowContext(ctx, `SELECT coalesce(max(sql), '') FROM main.sqlite_master
		WHERE type = 'index' AND name = ? AND tbl_name = 'mem_edges'`, edgesToIndex).Scan(&create); err != nil {
		return nil, err
	}
	if create == "" {
		return nil, nil
	}
	removals, err := s.db.Count(ctx, "SELECT count(*) FROM temp.plan_edges WHERE phase IN "+sweepsql.RemovalPhases)
	if err != nil {
		return nil, err
	}
	// At least the edges before the sweep less those its archived blocks
	// took are left: short of a fifth of those, no count is needed (a bulk
	// sweep after the first).
	if removals*rebuildShare < s.report.EdgesBefore-s.report.EdgesRemovedWithBlocks {
		return nil, nil
	}
	edges, err := s.db.Count(ctx, "SELECT count(*) FROM main.mem_edges")
	if err != nil || removals*rebuildShare < edges {
		return nil, err
	}
	others, err := s.db.Count(ctx, s.opt.sql().Expand("SELECT @KEPT_EDGES_POSSIBLE")) // an app's trigger on mem_edges
	if err != nil || others > 0 {
		return nil, err
	}
	orphaning, err := s.db.Count(ctx, "SELECT EXISTS (SELECT 1 FROM temp.plan_edges WHERE phase = 'policy' AND orphans = 'delete')")
	if err != nil || orphaning > 0 {
		return nil, err
	}
	var drop, build []string
	for _, stat := range statTables {
		exists, err := s.db.Count(ctx, "SELECT count(*) FROM main.sqlite_master WHERE type = 'table' AND name = ?", stat)
		if err != nil {
			return nil, err
		}
		if exists == 0 {
			continue
		}
		saved := "temp.saved_" + stat
		drop = append(drop, "DROP TABLE IF EXISTS "+saved,
			fmt.Sprintf("CREATE TABLE %s AS SELECT * FROM main.%s WHERE idx = %s", saved, stat, sweepsql.Literal(edgesToIndex)))
		build = append(build, fmt.Sprintf("INSERT INTO main.%s SELECT * FROM %s", stat, saved), "DROP TABLE "+saved)
	}
	drop = append(drop, "DROP INDEX main."+edgesToIndex)
	err = s.db.InTx(ctx, func() error {
		_, err := s.db.ExecList(ctx, "drop_edges_to", drop)
		return err
	})
	if err != nil {
		return nil, err
	}
	return append([]string{create}, build...), nil
}

// rebuildEdgesToIndex builds mem_edges_to again with build, the
// statements dropEdgesToIndex returned.
func (s *sweep) rebuildEdgesToIndex(ctx context.Context, build []string) error {
	done := store.Phase("rebuild " + edgesToIndex)
	defer done()
	err := s.db.InTx(ctx, func() error {
		_, err := s.db.ExecList(ctx, "rebuild_edges_to", build)
		return err
	})
	if err == nil && s.opt.signals.IndexRebuilt != nil {
		s.opt.signals.IndexRebuilt(edgesToIndex)
	}
	return err
}
