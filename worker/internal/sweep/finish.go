package sweep

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/internal/report"
	"github.com/memdecay/memdecay/worker/internal/settings"
	"github.com/memdecay/memdecay/worker/internal/store"
	"github.com/memdecay/memdecay/worker/internal/sweepsql"
)

// The end of a sweep: reinforce and record it (finish), then tidy up what
// it leaves behind (settle): its own changes refreshed, the queues
// cleared, old events expired (housekeeping.sql).

// finish stores the rank bounds and folds the removals' degrees
// (storeRankBounds), then reinforces, advances last_curate_at and records
// the sweep, in the last transaction of those.
func (s *sweep) finish(ctx context.Context) error {
	r := &s.report
	// The counting reads many rows: done before the write transaction, so
	// an app's writer never waits on it. The events counted are all
	// committed, and only this sweep writes them.
	if err := s.appliedReport(ctx); err != nil {
		return err
	}
	if err := s.countEdgesAfter(ctx); err != nil {
		return err
	}
	// A full sweep's removals leave the degrees far from those it planned
	// with: the threshold of the degrees it left is where the next sweep's
	// bridge threshold starts (bridge_threshold's g). Only a hint: any
	// start gives the same threshold.
	var bridgeHint sql.NullFloat64
	if r.Full && !r.Resumed {
		// Of the degrees left: those the removals logged are folded first.
		if err := s.foldDegrees(ctx); err != nil {
			return fmt.Errorf("folding the removals' degrees: %w", err)
		}
		var err error
		if bridgeHint, err = s.bridgeThreshold(ctx); err != nil {
			return err
		}
	}
	// The rank bounds and the degrees folded, then the sweep's record: in
	// the same transaction on a file. A replica's transaction cannot read
	// its own writes, and the record reads the plan first.
	record := func() error {
		q := s.db.Querier()
		if err := s.reinforce(ctx); err != nil {
			return err
		}
		if err := settings.SetConfig(ctx, q, "last_curate_at", fmt.Sprint(s.clock.Hours)); err != nil {
			return err
		}
		if err := s.mapped.RecordCurate(ctx, q, s.clock.Hours); err != nil {
			return err
		}
		if _, err := q.ExecContext(ctx, `UPDATE mem_config SET value = value + ? WHERE key = 'edges_decayed_total'`,
			r.EdgesDecayed+r.Removals()["edges_policy_decayed"]); err != nil {
			return err
		}
		if _, err := q.ExecContext(ctx, `INSERT INTO mem_config (key, value) VALUES ('derived_fingerprint', ?)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, s.fingerprint); err != nil {
			return err
		}
		if err := s.keepEdgeCount(ctx); err != nil {
			return err
		}
		if bridgeHint.Valid {
			if _, err := q.ExecContext(ctx, `INSERT INTO mem_config (key, value) VALUES ('bridge_hint', json_object('sweep', ?, 'threshold', ?))
				ON CONFLICT (key) DO UPDATE SET value = excluded.value`, s.claim.ID, bridgeHint.Float64); err != nil {
				return err
			}
		}
		r.Summary = r.BuildSummary()
		return s.recordSweep(ctx, q, "done")
	}
	var err error
	if s.db.Snapshots() {
		err = s.storeRankBounds(ctx, record)
	} else if err = s.storeRankBounds(ctx, nil); err == nil {
		err = s.inTxGuarded(ctx, record)
	}
	if err != nil {
		return err
	}
	return s.keptReinforcements(ctx)
}

// keptReinforcements takes the reinforcements an app's trigger ignored
// off the report, which names those blocks, and records the report again.
// Read once committed: a replica's transaction cannot read its own writes.
func (s *sweep) keptReinforcements(ctx context.Context) error {
	type kept struct{ id, kind string }
	rows, err := memdb.QueryAll(ctx, s.db.Querier(), `SELECT i.id, p.kind FROM temp.sweep_invalid i
		JOIN temp.plan_reinforce p ON p.id = i.id
		WHERE i.kind = 'block' AND i.problem = `+sweepsql.Literal(sweepsql.ReinforceKeptProblem)+` ORDER BY i.id, p.kind`,
		func(rows *sql.Rows, v *kept) error { return rows.Scan(&v.id, &v.kind) })
	if err != nil || len(rows) == 0 {
		return err
	}
	r := &s.report
	named := map[string]bool{}
	for _, k := range rows {
		if k.kind == "constitutional" {
			r.ConstitutionalReinforced--
		} else {
			r.Reinforced--
		}
		if named[k.id] {
			continue
		}
		named[k.id] = true
		r.InvalidRows.Count++
		if len(r.InvalidRows.Sample) < report.InvalidSampleSize || s.opt.allInvalid {
			r.InvalidRows.Sample = append(r.InvalidRows.Sample, report.InvalidRow{Kind: "block", ID: k.id,
				Problem: sweepsql.ReinforceKeptProblem, Table: s.mapped.TableOf("block")})
		}
	}
	r.Summary = r.BuildSummary()
	return s.recordSweep(ctx, s.db.Querier(), "done")
}

// countEdgesAfter sets the report's edges after the sweep. The edges
// before it, less those its events remove, are that number when no edge
// was queued since the refresh's mark: every write of an edge queues it
// but the sweep's own removals, which its events name (a plan a sweep
// cut off took its count in another run: counted again). Otherwise they are
// counted: a pass over the edges' narrowest index.
func (s *sweep) countEdgesAfter(ctx context.Context) error {
	r := &s.report
	if !r.Resumed {
		queued, err := s.db.Count(ctx, "SELECT EXISTS (SELECT 1 FROM main.mem_dirty_edges WHERE seq > ?)", s.marks.edge)
		if err != nil {
			return err
		}
		if queued == 0 {
			r.CountEdgesRemoved()
			r.TotalEdgesAfter = r.EdgesBefore - r.EdgesRemoved
			s.countMark = s.marks.edge
			return nil
		}
	}
	// Counted with the edge queue's end, at one snapshot.
	return s.db.Querier().QueryRowContext(ctx, s.opt.sql().Expand(`SELECT (SELECT count(*) FROM @EDGES),
		(SELECT coalesce(max(seq), 0) FROM main.mem_dirty_edges)`)).Scan(&r.TotalEdgesAfter, &s.countMark)
}

// keepEdgeCount keeps, on a file, the edges the sweep left with the queue
// mark they are exact at, for the sweeps after it (edges_kept).
func (s *sweep) keepEdgeCount(ctx context.Context) error {
	if !s.db.Snapshots() {
		return nil
	}
	of, err := s.edgesOf(ctx)
	if err != nil {
		return err
	}
	_, err = s.db.Exec(ctx, "edges_counted_keep", sql.Named("edges", s.report.TotalEdgesAfter),
		sql.Named("count_mark", s.countMark), sql.Named("edges_of", of))
	return err
}

// countEdges counts the edges the sweep decides on (memworker's, or the
// app's through its mapping).
func (s *sweep) countEdges(ctx context.Context) (int64, error) {
	return s.db.Count(ctx, s.opt.sql().Expand("SELECT count(*) FROM @EDGES"))
}

// settle refreshes what this sweep changed itself (degrees of blocks that
// lost edges, reinforced blocks, archived rows), so the next sweep starts
// with nothing queued by this one, then clears the queues and expires old
// events.
func (s *sweep) settle(ctx context.Context) error {
	done := store.Phase("settle")
	s.marks.blockFrom, s.marks.edgeFrom, s.marks.factFrom = s.marks.block, s.marks.edge, s.marks.fact
	if err := s.refresh(ctx, false); err != nil {
		return fmt.Errorf("sweep: refreshing derived state: %w", err)
	}
	done()
	done = store.Phase("clear queues")
	if err := s.clearQueues(ctx, false); err != nil {
		return fmt.Errorf("sweep: clearing queues: %w", err)
	}
	done()
	if err := s.expireEvents(ctx); err != nil {
		return fmt.Errorf("sweep: expire old events: %w", err)
	}
	return nil
}

// clearQueues drops the queue entries this sweep refreshed and the saved
// plans of this and earlier sweeps, in bounded transactions. Entries left
// by an interrupted sweep are refreshed again next time, which is harmless.
// midSweep keeps each queue's entry at its mark: SQLite numbers a new row
// after the largest left, and entries queued later in this sweep must
// number above its marks to be refreshed by its settle.
func (s *sweep) clearQueues(ctx context.Context, midSweep bool) error {
	keep := int64(0)
	if midSweep {
		keep = 1
	} else if err := s.db.InTx(ctx, func() error {
		_, err := s.db.Exec(ctx, "edges_counted_check")
		return err
	}); err != nil {
		return err
	}
	// A table is emptied whole, which SQLite does by freeing its pages
	// rather than row by row (much the cheapest for the big queue a first
	// sweep leaves), keeping the few rows queued after the mark; one table
	// per transaction, and only while no other connection writes.
	marks := map[string]int64{
		"mem_dirty_blocks": s.marks.block - keep, "mem_dirty_edges": s.marks.edge - keep,
		"mem_dirty_facts": s.marks.fact - keep, "mem_sweep_plans": s.report.SweepID,
	}
	for _, t := range sweepsql.EmptiedWhole {
		if s.db.OthersWriting() {
			break // beside an app's writes, short batches below
		}
		mark, ok := marks[t.Table]
		if !ok {
			panic("worker: no mark for " + t.Table)
		}
		err := s.db.InTx(ctx, func() error {
			newer, err := s.db.Count(ctx, "SELECT count(*) FROM (SELECT 1 FROM main."+t.Table+" WHERE "+t.Key+" > ? LIMIT ?)",
				mark, keepRowsMax+1)
			if err != nil || newer > keepRowsMax {
				return err // too many: left to the batches below
			}
			_, err = s.db.Exec(ctx, "empty_"+t.Table, sql.Named("mark", mark))
			return err
		})
		if err != nil {
			return err
		}
	}
	// Otherwise a bounded batch at a time (queue rows go in runs of seq).
	limit := int64(10 * s.opt.ChunkSize)
	for {
		err := s.db.InTx(ctx, func() error {
			if _, err := s.db.Exec(ctx, "clear_queues", sql.Named("limit", limit), sql.Named("keep", keep)); err != nil {
				return err
			}
			_, err := s.db.Exec(ctx, "clear_plan", sql.Named("limit", limit))
			return err
		})
		if err != nil || s.db.Changed() == 0 {
			return err
		}
	}
}

// expireEvents removes events, and the records of sweeps, older than
// event_retention_days (0 keeps them forever), in bounded chunks, and
// counts them in the stored report.
func (s *sweep) expireEvents(ctx context.Context) error {
	if s.cfg.EventRetentionDays <= 0 {
		return nil
	}
	cutoff := s.retentionCutoff()
	type expiry struct {
		name  string
		list  []string
		count *int64
	}
	expiries := []expiry{{"expire_events", s.opt.sql().Stmts("expire_events"), &s.report.EventsExpired}}
	for _, a := range s.archives {
		expiries = append(expiries, expiry{"expire " + a.Name, []string{sweepsql.ExpireArchive(a.Name)}, &s.report.EventsExpired})
	}
	var accessesExpired int64 // the reads kept for memworker tune: not events, so not counted as such
	if stmt := s.mapped.ExpireAccesses(s.clock.Hours - s.cfg.EventRetentionDays*24); stmt != "" {
		expiries = append(expiries, expiry{"expire mem_accesses", []string{stmt}, &accessesExpired})
	}
	expiries = append(expiries, expiry{"expire_sweeps", s.opt.sql().Stmts("expire_sweeps"), &s.report.SweepsExpired})
	for _, expire := range expiries {
		for {
			err := s.db.InTx(ctx, func() error {
				_, err := s.db.ExecList(ctx, expire.name, expire.list, sql.Named("cutoff", cutoff), sql.Named("sweep", s.report.SweepID),
					sql.Named("limit", int64(s.opt.ChunkSize)))
				return err
			})
			if err != nil {
				return err
			}
			n := s.db.Changed()
			*expire.count += n
			if n < int64(s.opt.ChunkSize) {
				break
			}
		}
	}
	if s.report.EventsExpired == 0 && s.report.SweepsExpired == 0 {
		return nil
	}
	return s.db.InTx(ctx, func() error { return s.recordSweep(ctx, s.db.Querier(), "done") })
}
