package sweep

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"time"

	"github.com/memdecay/memdecay/ext/shim"
	"github.com/memdecay/memdecay/worker/internal/store"
	"github.com/memdecay/memdecay/worker/internal/sweepsql"
)

// The worker's derived state (mem_block_state, mem_edge_due, mem_fact_due)
// says when each row next needs a decision. Triggers queue the rows an app
// changes (mem_dirty_*); a refresh recomputes the queued rows, a full
// refresh every row (refresh.sql, sync.sql).

// queueMarks: the rows queued after the from marks and up to the marks
// are refreshed by a sweep's next refresh; everything up to the marks is
// cleared when it finishes.
type queueMarks struct {
	blockFrom, edgeFrom, factFrom int64
	block, edge, fact             int64
}

// execInTx runs statements built at run time in one write transaction
// (none: nothing).
func (s *sweep) execInTx(ctx context.Context, stmts []string) error {
	if len(stmts) == 0 {
		return nil
	}
	return s.db.InTx(ctx, func() error {
		for _, stmt := range stmts {
			if _, err := s.db.Querier().ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	})
}

// keepRowsMax: a queue with more rows than this after its mark is cleared
// a batch at a time instead of emptied whole.
const keepRowsMax = 10000

// prepare resets the temp tables and stages the relation policies.
func (s *sweep) prepare(ctx context.Context) error {
	if err := s.mapped.Install(ctx, s.db.Querier()); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	missing, err := s.mapped.MissingObjects(ctx, s.db.Querier())
	if err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	if len(missing) > 0 {
		// What changed since is unknown: every row is read, and (but in a
		// dry run) the change capture goes back on the app's tables.
		s.opt.Full = true
		if !s.opt.DryRun {
			if err := s.execInTx(ctx, missing); err != nil {
				return fmt.Errorf("sweep: putting the mapping's change capture back on the app's tables: %w", err)
			}
		}
	}
	if s.mapped != nil && !s.opt.DryRun {
		// The archives of the app's tables: made by the declaration, but
		// a mapping declared before the archive existed, or a table that
		// gained a column since, needs them made or widened first.
		steps, err := sweepsql.ArchiveSteps(ctx, s.db.Querier(), s.mapped.Map)
		if err != nil {
			return fmt.Errorf("sweep: %w", err)
		}
		if err := s.execInTx(ctx, steps); err != nil {
			return fmt.Errorf("sweep: making the archives of the app's tables: %w", err)
		}
	}
	if s.archives, err = sweepsql.ReadArchives(ctx, s.db.Querier()); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	for _, name := range []string{"plan_drop", "plan_create"} {
		if _, err := s.db.Exec(ctx, name); err != nil {
			return fmt.Errorf("sweep: %w", err)
		}
	}
	if err := s.loadDueSoon(ctx); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	return s.loadPolicies(ctx)
}

// refreshPart is one kind of row a refresh covers.
type refreshPart struct {
	queue, ids, fill, chunk string
	mark                    *int64
}

// refresh recomputes the derived state of the rows queued after the from
// marks (or, full, of every row, into the temp shadow tables): blocks first
// (an edge's due time depends on its ends' tiers), then edges, then facts.
// Queue marks are taken before each part, so rows queued meanwhile wait.
func (s *sweep) refresh(ctx context.Context, full bool) error {
	parts := []refreshPart{
		{"mem_dirty_blocks", "refresh_ids", "refresh_blocks", "refresh_blocks", &s.marks.block},
		{"mem_dirty_edges", "refresh_edges", "refresh_edges", "refresh_edges", &s.marks.edge},
		{"mem_dirty_facts", "refresh_ids", "refresh_facts", "refresh_facts", &s.marks.fact},
	}
	for _, p := range parts {
		var err error
		if *p.mark, err = s.db.Count(ctx, "SELECT coalesce(max(seq), 0) FROM main."+p.queue); err != nil {
			return err
		}
		if full && p.chunk == "refresh_edges" {
			if err := s.refreshEveryEdge(ctx); err != nil {
				return err
			}
			continue
		}
		if err := s.refreshPart(ctx, p, full); err != nil {
			return err
		}
	}
	return nil
}

// refreshEveryEdge evaluates every edge in one pass, in table order, for
// the plan (refresh_edges_all takes their due times from that later), puts
// the unusable ones into the temp shadow and, on a file, counts the
// degrees from that evaluation. On a file all of it reads one snapshot, so
// when the edges evaluated are all the edges there, none is unusable and
// the pass that looks for them is left out; the count is the plan's edges
// before (edgesCounted).
func (s *sweep) refreshEveryEdge(ctx context.Context) error {
	if _, err := s.db.Exec(ctx, "fill_block_rates"); err != nil {
		return err
	}
	hashed, err := s.ratesHashed(ctx)
	if err != nil {
		return err
	}
	if s.opt.signals.RatesHashed != nil {
		s.opt.signals.RatesHashed(hashed)
	}
	evaluate := "evaluate_edges_all"
	if hashed {
		evaluate = "evaluate_edges_all_hashed"
	}
	if _, err := s.db.Exec(ctx, evaluate); err != nil {
		return err
	}
	invalid := true
	if s.db.Snapshots() {
		all, err := s.countEdges(ctx)
		if err != nil {
			return err
		}
		evaluated, err := s.lastRow(ctx, "sweep_edges")
		if err != nil {
			return err
		}
		s.edgesCounted, invalid = &all, evaluated != all
	}
	if invalid {
		if _, err := s.db.Exec(ctx, "refresh_edges_invalid"); err != nil {
			return err
		}
	}
	if !s.db.Snapshots() {
		return nil
	}
	summed, err := s.sumEnds(ctx, "edge_strengths", "block_degree")
	if err != nil {
		return err
	}
	if !summed {
		if _, err := s.db.Exec(ctx, "degrees_from_evaluation"); err != nil {
			return err
		}
	}
	_, err = s.db.Exec(ctx, "degrees_store")
	return err
}

// hashTables says whether the sweep may use the linked build's hash tables
// (memdecay_block_rate, memdecay_sum_ends): on a file (the functions are on
// the sweep's connection), through memworker's own tables (text ids: a hash
// of the bytes finds what SQL's equality finds).
func (s *sweep) hashTables() bool {
	return s.db.Snapshots() && s.mapped == nil && !s.opt.noHashTables
}

// sumEnds fills the temp table target with the sums of the rows of the
// statement source by both their ends, by memdecay_sum_ends, where it can
// (hashTables) and they fit in its memory; false when it did not, and the
// caller groups them by SQL: the same rows.
func (s *sweep) sumEnds(ctx context.Context, source, target string) (bool, error) {
	if !s.hashTables() {
		return false, nil
	}
	if _, err := s.db.Querier().ExecContext(ctx, "DELETE FROM temp."+target); err != nil {
		return false, err
	}
	began := time.Now()
	var written sql.NullInt64
	err := s.db.Querier().QueryRowContext(ctx, "SELECT memdecay_sum_ends(?, ?)", s.opt.sql().Stmts(source)[0], target).Scan(&written)
	store.TraceTook("memdecay_sum_ends "+source, began)
	if s.opt.signals.Summed != nil {
		s.opt.signals.Summed(source, written.Valid)
	}
	return written.Valid, err
}

// ratesHashed says whether the full evaluation finds its edges' ends'
// rates with memdecay_block_rate's hash table rather than by a join: where
// the hash tables may be used (hashTables), and block_rates fits in the
// memory the function may hold it in. Otherwise the join, the same
// numbers.
func (s *sweep) ratesHashed(ctx context.Context) (bool, error) {
	if !s.hashTables() {
		return false, nil
	}
	size, err := s.db.Count(ctx, fmt.Sprintf(
		"SELECT count(*) * %d + coalesce(sum(length(CAST(id AS BLOB))), 0) FROM temp.block_rates", shim.BlockRateRowBytes))
	return size <= shim.BlockRatesMaxBytes, err
}

// refreshPart refreshes one kind of row, a chunk at a time: in bounded
// write transactions, or (full) at once into the temp shadow tables in the
// caller's snapshot.
func (s *sweep) refreshPart(ctx context.Context, p refreshPart, full bool) error {
	if _, err := s.db.Querier().ExecContext(ctx, "DELETE FROM temp."+p.ids); err != nil {
		return err
	}
	fill := p.fill + "_queued"
	if full {
		fill = p.fill + "_all"
	}
	if _, err := s.db.Exec(ctx, fill); err != nil {
		return err
	}
	names := []string{p.chunk}
	if p.chunk == "refresh_blocks" {
		names = []string{"refresh_blocks", "refresh_blocks_store"}
		if !full {
			names = []string{"refresh_blocks", "refresh_blocks_retier", "refresh_blocks_store"}
		}
		// A full refresh recounts every degree: on a file from the edges'
		// evaluation, which comes after the blocks (degrees_later); in
		// place, where the block states are written now, in a pass of its
		// own over the edges. Otherwise degrees are kept by delta
		// (refresh_edges, remove_edges).
		if full {
			degrees := "degrees_all"
			if s.db.Snapshots() {
				degrees = "degrees_later"
			}
			if _, err := s.db.Exec(ctx, degrees); err != nil {
				return err
			}
		}
	}
	size, aside := s.opt.ChunkSize, full && s.db.Snapshots()
	if aside {
		size = math.MaxInt32 // temp tables only, in the caller's snapshot
	}
	queued := 1 // a refresh of queued rows keeps what it may (refresh_blocks_store)
	if full {
		queued = 0
	}
	return s.chunks(ctx, p.ids, size, !aside, func(lo, hi int64) error {
		for _, n := range names {
			if _, err := s.db.Exec(ctx, n, append(chunkArgs(lo, hi), sql.Named("queued", queued))...); err != nil {
				return err
			}
		}
		return nil
	})
}

// planFull computes every row's derived state into temp tables that shadow
// the main ones, then plans from them, all in the caller's read snapshot;
// only the usable edges' due times are left to refresh_edges_all, which
// takes them from the plan's evaluation once the snapshot has ended.
func (s *sweep) planFull(ctx context.Context) error {
	if _, err := s.db.Exec(ctx, "shadow_state"); err != nil {
		return err
	}
	if err := s.refresh(ctx, true); err != nil {
		return fmt.Errorf("sweep: refreshing derived state: %w", err)
	}
	return s.plan(ctx, true)
}

// forgetFingerprint clears the stored fingerprint while derived state is
// rewritten: a sweep cut off meanwhile makes the next one full.
func (s *sweep) forgetFingerprint(ctx context.Context) error {
	return s.db.InTx(ctx, func() error {
		_, err := s.db.Querier().ExecContext(ctx, `DELETE FROM main.mem_config WHERE key = 'derived_fingerprint'`)
		return err
	})
}

// planInPlace computes every row's derived state where there is no read
// snapshot to compute it aside (a replica): in place, in bounded
// transactions, then plans every row.
func (s *sweep) planInPlace(ctx context.Context) error {
	if err := s.forgetFingerprint(ctx); err != nil {
		return err
	}
	if err := s.refresh(ctx, true); err != nil {
		return fmt.Errorf("sweep: refreshing derived state: %w", err)
	}
	return s.plan(ctx, true)
}

// syncDerived copies the derived rows a full refresh changed into the main
// tables in bounded transactions. Until the sweep finishes, the stored
// fingerprint is cleared, so a sweep cut off here makes the next one full.
func (s *sweep) syncDerived(ctx context.Context) error {
	// The ranking's bounds go with the rows (rank.go), its scales first.
	var epoch int64
	if s.rankScale != nil {
		epoch = s.rankScale.Epoch
	}
	if _, err := s.db.Exec(ctx, "sync_collect", sql.Named("epoch", epoch)); err != nil {
		return err
	}
	if s.rankScale != nil {
		if err := s.db.InTx(ctx, func() error { return s.setRankScale(ctx, *s.rankScale) }); err != nil {
			return err
		}
		s.rankStored = true
	}
	if err := s.forgetFingerprint(ctx); err != nil {
		return err
	}
	if err := s.derivedChunks(ctx, "sync_rows", "sync_apply"); err != nil {
		return err
	}
	s.netDegrees = true // sync_collect left the plan's removals out
	_, err := s.db.Exec(ctx, "drop_shadow_state")
	return err
}
