package daemon

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/internal/report"
	"github.com/memdecay/memdecay/worker/internal/sweep"
	"golang.org/x/sync/errgroup"
)

// ExpandPaths turns a database argument into databases: a plain path as
// is, a glob pattern (*, ?, [) into its matches, sorted, and rqlite URLs
// (one, or several separated by commas: each names a cluster) as given,
// never globbed (? and [ belong to a URL). A pattern matching nothing is
// an error.
func ExpandPaths(pattern string) ([]string, error) {
	if memdb.IsRqliteURL(pattern) {
		return memdb.SplitURLs(pattern)
	}
	if !strings.ContainsAny(pattern, "*?[") {
		return []string{pattern}, nil
	}
	matches, err := filepath.Glob(pattern)
	if err != nil {
		return nil, fmt.Errorf("pattern %q: %w", pattern, err)
	}
	// A glob like dir/* also matches SQLite's companion files of each
	// database (-wal, -shm, -journal): they are part of it, not databases.
	all := map[string]bool{}
	for _, m := range matches {
		all[m] = true
	}
	matches = slices.DeleteFunc(matches, func(m string) bool {
		for _, suffix := range []string{"-wal", "-shm", "-journal"} {
			if base, ok := strings.CutSuffix(m, suffix); ok && all[base] {
				return true
			}
		}
		return false
	})
	if len(matches) == 0 {
		return nil, fmt.Errorf("pattern %q matches no file", pattern)
	}
	sort.Strings(matches)
	return matches, nil
}

// IsFleet reports whether a database argument may name several
// databases: a glob of files, or several rqlite URLs.
func IsFleet(db string) bool {
	if memdb.IsRqliteURL(db) {
		return len(memdb.URLList(db)) > 1
	}
	return strings.ContainsAny(db, "*?[")
}

// FleetResult is one file's sweep.
type FleetResult struct {
	Path   string         `json:"path"`
	Report *report.Report `json:"report,omitempty"`
	Error  string         `json:"error,omitempty"`
	Busy   bool           `json:"busy,omitempty"` // another worker holds the lease
}

// FleetTotal adds up a fleet's reports.
type FleetTotal struct {
	Databases              int   `json:"databases"`
	Failed                 int   `json:"failed"`
	Archived               int64 `json:"archived"`
	EdgesPruned            int64 `json:"edges_pruned"`
	EdgesDecayed           int64 `json:"edges_decayed"`
	EdgesRemovedWithBlocks int64 `json:"edges_removed_with_blocks"`
	// EdgesRemoved is every edge removed, of every kind (Report.EdgesRemoved).
	EdgesRemoved             int64 `json:"edges_removed"`
	EdgesDeferred            int64 `json:"edges_deferred"`
	TotalEdgesAfter          int64 `json:"total_edges_after"`
	Reinforced               int64 `json:"reinforced"`
	ConstitutionalReinforced int64 `json:"constitutional_reinforced"`
	FactsArchived            int64 `json:"facts_archived"`
	FactsPruned              int64 `json:"facts_pruned"`
	InvalidRows              int64 `json:"invalid_rows"`
}

// SweepFleet sweeps every database (a file or an rqlite cluster), at most
// jobs at a time, and returns one result per database in the order given,
// with the total.
func SweepFleet(ctx context.Context, paths []string, jobs int, opt sweep.Options) ([]FleetResult, FleetTotal) {
	results := make([]FleetResult, len(paths))
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(max(1, jobs))
	for i, p := range paths {
		g.Go(func() error {
			results[i] = FleetResult{Path: memdb.DisplayName(p)}
			r, err := SweepFile(ctx, p, opt)
			if err != nil {
				results[i].Error = err.Error()
				results[i].Busy = errors.Is(err, memdb.ErrSweepRunning)
				return nil // one file's failure does not stop the others
			}
			results[i].Report = r
			return nil
		})
	}
	g.Wait()
	total := FleetTotal{Databases: len(paths)}
	for _, res := range results {
		r := res.Report
		if r == nil {
			total.Failed++
			continue
		}
		total.Archived += r.Archived
		total.EdgesPruned += r.EdgesPruned
		total.EdgesDecayed += r.EdgesDecayed
		total.EdgesRemovedWithBlocks += r.EdgesRemovedWithBlocks
		total.EdgesRemoved += r.EdgesRemoved
		total.EdgesDeferred += r.EdgesDeferred
		total.TotalEdgesAfter += r.TotalEdgesAfter
		total.Reinforced += r.Reinforced
		total.ConstitutionalReinforced += r.ConstitutionalReinforced
		total.FactsArchived += r.Facts.Archived
		total.FactsPruned += r.Facts.Pruned
		total.InvalidRows += r.InvalidRows.Count
	}
	return results, total
}

// SweepFile opens one memory database (read-only for a dry run), sweeps it
// and closes it.
func SweepFile(ctx context.Context, path string, opt sweep.Options) (*report.Report, error) {
	db, err := memdb.OpenMemory(path, opt.DryRun)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	r, err := sweep.Sweep(ctx, db, opt)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", memdb.DisplayName(path), err)
	}
	return r, nil
}
