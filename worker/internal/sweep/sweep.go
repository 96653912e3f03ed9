package sweep

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/memdecay/memdecay/worker/internal/adapter"
	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/internal/report"
	"github.com/memdecay/memdecay/worker/internal/settings"
	"github.com/memdecay/memdecay/worker/internal/store"
	"github.com/memdecay/memdecay/worker/internal/sweepsql"
)

// sweep is one run in progress: the state of the sweep itself. How its
// statements reach the database and how its transactions are paced belong
// to the store (runner.go, pacer.go).
type sweep struct {
	db    store.Store
	opt   Options
	start time.Time
	marks queueMarks
	// What derived state was computed under, and what it must be now.
	fingerprint, storedFingerprint string
	// resume: finish the saved plan of a sweep cut off at this clock.
	resume bool
	saved  savedPlan
	// claim: the lease this sweep holds (its row and owner) while held.
	claim  store.LeaseClaim
	held   bool
	cfg    settings.Config
	clock  settings.Clock
	report report.Report
	// mapped: the app's own tables, through a declared mapping (nil:
	// memworker's own).
	mapped *adapter.Adapted
	// archives: the database's archives (archive.go), each expired with
	// the events.
	archives []sweepsql.Archive
	// The ranking (rank.go): rank_scale as it must be once its bounds are
	// stored (nil: it ranked nothing).
	rankScale *rankScale
	// rankStored: the bounds went with the derived state (syncDerived).
	rankStored bool
	// netDegrees: the stored degrees already leave out the strength of the
	// plan's edge removals (syncDerived), so the apply counts them at 0.
	netDegrees bool
	// holds: by plan table, the statements that find the chunk's rows an
	// app's foreign key holds (refused.go); none when nothing references
	// the tables the sweep deletes from.
	holds map[string][]string
	// guarded: the apply's chunks run under savepoints (refused.go): in a
	// bulk sweep, on a replica, and once an app's rule has refused a
	// change.
	guarded bool
	// soon: the horizon of the list of edges due soon (duesoon.go); nil
	// while there is no list.
	soon *dueSoon
	// edgesCounted: the edges a full refresh on a file counted at the
	// plan's snapshot (refreshEveryEdge); nil: the plan counts them.
	edgesCounted *int64
	// countMark: the edge queue's end at the snapshot where the report's
	// edges after are exact (countEdgesAfter), kept with them.
	countMark int64
	// edgesKept: the edges before the refresh, from the last sweep's count
	// and the edge queue, exact while nothing is queued after mark
	// (keepEdgesBefore); nil: the plan counts them.
	edgesKept *edgesAt
	// planInKeyOrder: the plan's edges are in key order already (plan).
	planInKeyOrder bool
	// planStands: no planned edge can change before the apply picks it
	// (standingPlan), which then takes the plan's removals as they are: in
	// a bulk sweep, always; in a default one, in each transaction whose
	// mark of other connections' commits is still planMark.
	planStands bool
	planMark   int64
}

// Sweep runs the edge curate sweep (docs/sweep.md): plan every phase at one
// snapshot into temp tables, then (unless DryRun) apply the plan in chunks,
// each chunk's removals and their events in one transaction.
func Sweep(ctx context.Context, db *memdb.DB, opt Options) (*report.Report, error) {
	start := time.Now()
	if err := opt.Validate(); err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	opt = opt.withDefaults()
	if !opt.DryRun {
		opt.Owner = store.WithRunID(opt.Owner)
	}
	if !opt.DryRun && db.ReadOnly {
		return nil, fmt.Errorf("sweep: %w", ErrReadOnly)
	}
	if db.Rqlite && opt.DryRun {
		return dryRunCopy(ctx, db, opt)
	}
	opt.Bulk = opt.Bulk && !opt.DryRun // a dry run writes nothing, in one transaction already
	if opt.Bulk && (db.Rqlite || opt.replicated) {
		return nil, fmt.Errorf("sweep: %w", store.ErrBulkReplica)
	}
	mapped, err := adapter.AdaptMapping(ctx, db, db.Rqlite || opt.replicated)
	if err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	if mapped != nil {
		opt.tables = mapped.Tables
	}
	var st store.Store
	if db.Rqlite || opt.replicated {
		st, err = store.OpenReplica(ctx, db, opt.forStore())
	} else {
		stOpt := opt.forStore()
		stOpt.BigTempPages = copiesEveryRow(ctx, db.SQL, opt, mapped)
		if opt.signals.TempPages != nil {
			opt.signals.TempPages(stOpt.BigTempPages)
		}
		st, err = store.OpenFile(ctx, db, stOpt)
	}
	if err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	defer st.Close()
	s := &sweep{db: st, opt: opt, start: start, mapped: mapped, guarded: opt.Bulk || db.Rqlite || opt.replicated}
	st.Bind(s.args)
	// A real sweep takes the lease first, then reads the settings and the
	// clock inside it: a sweep that waited for another sees its result.
	if opt.DryRun {
		err = s.loadClock(ctx)
	} else {
		err = s.acquireLease(ctx)
	}
	if errors.Is(err, memdb.ErrSweepRunning) || errors.Is(err, settings.ErrClockBehind) {
		return nil, err
	} else if err != nil {
		return nil, store.TryLater(fmt.Errorf("sweep: %w", err))
	}
	if opt.Bulk {
		// The lease is taken and committed first, so it is seen; the rest
		// is one transaction.
		err = st.Bulk(ctx, func() error { return s.run(ctx) })
	} else {
		err = s.run(ctx)
	}
	s.report.DurationMS = time.Since(start).Milliseconds()
	s.report.Summary = s.report.BuildSummary()
	if !opt.DryRun {
		s.letGo(context.WithoutCancel(ctx), err, ctx.Err() != nil)
	}
	if err != nil {
		return nil, store.TryLater(err)
	}
	return &s.report, nil
}

// letGo ends a sweep's hold on the database: while it still holds the
// lease, it drops its working state and records how it ended (failed,
// interrupted), or lets go of a done one. Were a write here to fail, the
// lease would run out within its duration.
func (s *sweep) letGo(ctx context.Context, err error, stopped bool) {
	if !s.held {
		s.db.Hold(nil) // another sweep has the database: nothing more is written
		return
	}
	s.db.DropWorking(ctx)
	if err == nil {
		s.release(ctx)
		return
	}
	status := "failed"
	if stopped {
		status = "interrupted"
	}
	s.finishLease(ctx, status)
}

// run is the sweep, phase by phase.
func (s *sweep) run(ctx context.Context) error {
	if s.opt.DryRun {
		return s.dryRun(ctx)
	}
	if err := s.prepare(ctx); err != nil {
		return err
	}
	if err := s.discardStalePlan(ctx); err != nil {
		return err
	}
	// A sweep cut off mid-apply left the degrees its removals logged.
	if err := s.foldDegrees(ctx); err != nil {
		return fmt.Errorf("sweep: folding the degrees a sweep cut off logged: %w", err)
	}
	switch {
	case s.resume:
		if err := s.restorePlan(ctx); err != nil {
			return fmt.Errorf("sweep: resuming sweep %d: %w", s.report.SweepID, err)
		}
	case s.opt.Full || s.storedFingerprint != s.fingerprint:
		s.report.Full = true
		if err := s.planAll(ctx); err != nil {
			return err
		}
	default:
		if err := s.planChanged(ctx); err != nil {
			return err
		}
	}
	// A bulk sweep cut off rolls back whole: it has no plan to save.
	if !s.resume && !s.opt.Bulk {
		done := store.Phase("save plan")
		if err := s.savePlan(ctx); err != nil {
			return fmt.Errorf("sweep: saving the plan: %w", err)
		}
		done()
	}
	if err := s.apply(ctx); err != nil {
		return err
	}
	done := store.Phase("finish")
	if err := s.finish(ctx); err != nil {
		return fmt.Errorf("sweep: rank bounds, reinforce and record: %w", err)
	}
	done()
	// The sweep is done and recorded; what follows tidies up, and a stop
	// now leaves it to the next sweep.
	if err := s.settle(ctx); err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}

// dryRun refreshes everything into temp tables and plans, inside one read
// transaction it rolls back: even a write it should never make could not
// reach the file.
func (s *sweep) dryRun(ctx context.Context) error {
	return s.db.InRead(ctx, "ROLLBACK", func() (err error) {
		if err := s.prepare(ctx); err != nil {
			return err
		}
		if err := s.planFull(ctx); err != nil {
			return err
		}
		if err := s.planHolds(ctx); err != nil {
			return err
		}
		if err := s.replanOrphans(ctx); err != nil {
			return err
		}
		if s.cfg.EventRetentionDays > 0 {
			// As the sweep would, once its own row is the newest.
			err = s.db.Querier().QueryRowContext(ctx, s.opt.sql().Stmts("count_expired")[0], sql.Named("cutoff", s.retentionCutoff()),
				sql.Named("sweep", math.MaxInt64)).Scan(&s.report.EventsExpired, &s.report.SweepsExpired)
			for _, a := range s.archives {
				var n int64
				if err == nil {
					err = s.db.Querier().QueryRowContext(ctx, sweepsql.CountExpiredArchive(a.Name), sql.Named("cutoff", s.retentionCutoff())).Scan(&n)
				}
				s.report.EventsExpired += n
			}
		}
		if err == nil && s.opt.List {
			s.report.Planned, err = s.listPlan(ctx)
		}
		return err
	})
}

// planAll plans a full sweep. On a file every row's derived state is
// computed into temp tables at the plan's snapshot, then the rows that
// changed are copied over; on a replica, which holds no snapshot across
// requests, it is refreshed in place (planInPlace).
func (s *sweep) planAll(ctx context.Context) error {
	if err := s.forgetDueSoon(ctx); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	aside := s.db.Snapshots()
	done := store.Phase("refresh and plan")
	plan := func() error { return s.db.InRead(ctx, "COMMIT", func() error { return s.planFull(ctx) }) }
	if !aside {
		plan = func() error { return s.planInPlace(ctx) }
	}
	if err := plan(); err != nil {
		return err
	}
	done()
	// From temp tables only: the app's writes meanwhile are already being
	// copied into the file. In place, the derived rows of rows that are
	// gone go too (a file's sync drops them).
	done = store.Phase("plan order and due times")
	if err := s.storeEdgeDue(ctx); err != nil {
		return fmt.Errorf("sweep: storing due times: %w", err)
	}
	done()
	if aside {
		done = store.Phase("sync derived state")
		if err := s.syncDerived(ctx); err != nil {
			return fmt.Errorf("sweep: storing derived state: %w", err)
		}
		done()
	}
	// The due rows are all written: the list of edges due soon is built
	// from them for the sweeps to come.
	if err := s.coverDueSoon(ctx); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	// Every queued row is now refreshed: the queues are emptied before the
	// apply, so the events it writes reuse their pages (a file an app just
	// filled holds a queue entry per row it wrote).
	done = store.Phase("clear queues")
	if err := s.clearQueues(ctx, true); err != nil {
		return fmt.Errorf("sweep: clearing queues: %w", err)
	}
	done()
	return nil
}

// storeEdgeDue orders the plan, then writes every usable edge's due time
// from the plan's evaluation straight into the main table, in key order,
// in bounded transactions; in place, the derived rows of rows that are
// gone go too (a file's sync drops them).
func (s *sweep) storeEdgeDue(ctx context.Context) error {
	if !s.planInKeyOrder {
		if _, err := s.db.Exec(ctx, "plan_order"); err != nil {
			return err
		}
	}
	if err := s.derivedChunks(ctx, "sweep_edges", "refresh_edges_all"); err != nil {
		return err
	}
	names := []string{"refresh_edges_tail"}
	if !s.db.Snapshots() {
		names = append(names, "forget_gone")
	}
	return s.db.InTx(ctx, func() error {
		for _, name := range names {
			if _, err := s.db.Exec(ctx, name); err != nil {
				return err
			}
		}
		return nil
	})
}

// derivedChunks runs the statement name over table's rows a chunk at a
// time, each in its own transaction: worker-owned rows only, so while no
// app writes, syncChunkFactor chunks' worth at once.
func (s *sweep) derivedChunks(ctx context.Context, table, name string) error {
	return s.chunks(ctx, table, store.SyncChunkFactor*s.opt.ChunkSize, true, func(lo, hi int64) error {
		_, err := s.db.Exec(ctx, name, chunkArgs(lo, hi)...)
		return err
	})
}

// planChanged plans an incremental sweep: the rows queued as changed and
// those whose due time has come.
func (s *sweep) planChanged(ctx context.Context) error {
	// A list of edges due soon that no longer covers the clock is built
	// again first, from the due rows as they stand: the refresh then keeps
	// it for the edges it refreshes, as for a list that covers. (Built
	// after the refresh, the list's transaction would wait for the copy
	// of the refresh's pages; built before, that copy runs beside the plan.)
	done := store.Phase("refresh")
	if err := s.coverDueSoon(ctx); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	if err := s.keepEdgesBefore(ctx); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	if err := s.refresh(ctx, false); err != nil {
		return fmt.Errorf("sweep: refreshing derived state: %w", err)
	}
	done()
	done = store.Phase("plan")
	if err := s.db.InRead(ctx, "COMMIT", func() error { return s.plan(ctx, false) }); err != nil {
		return err
	}
	if !s.planInKeyOrder {
		if _, err := s.db.Exec(ctx, "plan_order"); err != nil { // temp tables only
			return fmt.Errorf("sweep: %w", err)
		}
	}
	done()
	return nil
}

// applySteps are the plan's steps, in the order they are applied: each
// step's statement lists run once per chunk of its plan table, in one
// transaction. holdStep is where the rows the app's foreign keys hold
// leave the chunk (refused.go).
var applySteps = []struct {
	what, table string
	stmts       []string
}{
	{"archive faded blocks", "plan_blocks", []string{"pick_blocks", holdStep, "apply_blocks", "remove_edges", "archive_blocks", "forget_saved"}},
	{"prune and decay edges", "plan_edges", []string{"pick_edges", holdStep, "apply_edges", "remove_edges", "orphan_blocks", "forget_saved"}},
	{"exclude and readmit edges", "plan_flags", []string{"apply_flags", "forget_saved"}},
	{"archive and prune facts", "plan_facts", []string{"pick_facts", holdStep, "apply_facts", "forget_saved"}},
}

// apply carries out the plan in bounded transactions, each chunk's changes
// with their events.
func (s *sweep) apply(ctx context.Context) error {
	holds, err := s.appHolds(ctx)
	if err != nil {
		return fmt.Errorf("sweep: reading the app's foreign keys: %w", err)
	}
	s.holds = holds
	for _, st := range applySteps {
		done := store.Phase(st.stmts[0])
		stmts := st.stmts
		if s.opt.Bulk && !s.resume {
			stmts = slices.DeleteFunc(slices.Clone(stmts), func(n string) bool { return n == "forget_saved" }) // no saved plan
		}
		var asPlanned []string
		if s.planStands && stmts[0] == "pick_edges" {
			asPlanned = append([]string{"pick_edges_planned"}, stmts[1:]...)
		}
		rebuild, err := s.dropEdgesToIndex(ctx, st.table)
		if err != nil {
			return fmt.Errorf("sweep: %s: dropping %s to build it again: %w", st.what, edgesToIndex, err)
		}
		if err := s.chunks(ctx, st.table, s.opt.ChunkSize, true, func(lo, hi int64) error {
			if asPlanned != nil && s.untouchedSincePlan(ctx) {
				return s.applyChunk(ctx, st.table, asPlanned, lo, hi)
			}
			return s.applyChunk(ctx, st.table, stmts, lo, hi)
		}); err != nil {
			return fmt.Errorf("sweep: %s: %w", st.what, err)
		}
		done()
		if rebuild != nil {
			if err := s.rebuildEdgesToIndex(ctx, rebuild); err != nil {
				return fmt.Errorf("sweep: %s: building %s again: %w", st.what, edgesToIndex, err)
			}
		}
	}
	return nil
}

// untouchedSincePlan says, inside a transaction of the apply, whether the
// plan's edges are as it read them: in a bulk sweep, which holds the plan
// and the apply in one transaction; in a default one, while no other
// connection has committed since the plan's snapshot (CommitsMark), so
// that only the sweep's own writes, which standingPlan vouches for, came
// in between.
func (s *sweep) untouchedSincePlan(ctx context.Context) bool {
	if s.opt.Bulk {
		return true
	}
	mark, ok := s.db.CommitsMark(ctx)
	untouched := ok && mark == s.planMark
	if s.opt.signals.ChunkAsPlanned != nil {
		s.opt.signals.ChunkAsPlanned(untouched)
	}
	return untouched
}

// foldDegrees takes the strengths the removals logged (remove_edges) off
// the stored degrees, in one transaction (fold_degrees); with none
// logged, it writes nothing.
func (s *sweep) foldDegrees(ctx context.Context) error {
	logged, err := s.db.Count(ctx, "SELECT EXISTS (SELECT 1 FROM main.mem_degree_log)")
	if err != nil || logged == 0 {
		return err
	}
	return s.db.InTx(ctx, func() error {
		_, err := s.db.Exec(ctx, "fold_degrees")
		return err
	})
}

// chunks calls f for consecutive seq ranges of a temp table, size rows at
// ChunkSize, in write transactions when withTx is set (sized by the pacer
// once it holds the lock: a step's first may call f more than once).
func (s *sweep) chunks(ctx context.Context, table string, size int, withTx bool, f func(lo, hi int64) error) error {
	maxSeq, err := s.lastRow(ctx, table)
	if err != nil {
		return err
	}
	rows := s.db.TxRows(size)
	for lo, step := int64(1), int64(size); lo <= maxSeq; lo += step {
		if err := ctx.Err(); err != nil {
			return err
		}
		s.tell(table, lo-1, maxSeq)
		if !withTx {
			if err := f(lo, lo+step-1); err != nil {
				return err
			}
			continue
		}
		var hi int64
		err := s.db.InTx(ctx, func() (err error) {
			hi, err = rows.Take(lo, maxSeq, f)
			return err
		})
		if errors.Is(err, errRefusedUnguarded) {
			// Rolled back whole: the same rows again, under savepoints.
			s.guard()
			err = s.db.InTx(ctx, func() error { return f(lo, hi) })
		}
		if err != nil {
			return err
		}
		step = hi - lo + 1
		rows.Took(step)
	}
	if maxSeq > 0 {
		s.tell(table, maxSeq, maxSeq)
	}
	return nil
}

// lastRow is the largest rowid of one of the sweep's temp tables, 0 when
// it is empty: its rows are numbered from 1 in the order a step takes them.
func (s *sweep) lastRow(ctx context.Context, table string) (int64, error) {
	return s.db.Count(ctx, "SELECT coalesce(max(rowid), 0) FROM temp."+table)
}

// tell reports a step's progress to the progress hook and the test signal.
func (s *sweep) tell(step string, done, total int64) {
	if s.opt.Progress != nil {
		s.opt.Progress(step, done, total)
	}
	if s.opt.signals.Chunk != nil {
		s.opt.signals.Chunk(step, done, total)
	}
}

// loadClock reads mem_config and fixes the sweep's clock and report.
func (s *sweep) loadClock(ctx context.Context) (err error) {
	if s.cfg, err = settings.LoadConfig(ctx, s.db.Querier()); err != nil {
		return err
	}
	if s.clock, err = settings.PickClock(s.cfg, s.opt.Now, s.opt.WallNow); err != nil {
		return err
	}
	if s.cfg.LastCurateAt, err = s.mapped.LastCurate(ctx, s.db.Querier(), s.cfg.LastCurateAt); err != nil {
		return err
	}
	if s.opt.Now == nil {
		h, ok, err := s.mapped.Hours(ctx, s.db.Querier(), s.clock.Wall)
		if err != nil {
			return err
		}
		if ok {
			s.clock.Hours = h
		}
	}
	if s.clock, err = s.clock.ForSweep(s.cfg, s.opt.Now != nil, s.opt.Force); err != nil {
		return err
	}
	s.report = report.Report{DryRun: s.opt.DryRun, ClockHours: s.clock.Hours, WallTime: s.clock.Wall.Unix(),
		ClockOnWall: s.mapped != nil && s.mapped.WallHours}
	return nil
}

// retentionCutoff is the wall time before which events expire.
func (s *sweep) retentionCutoff() int64 {
	return s.clock.Wall.Unix() - int64(s.cfg.EventRetentionDays*86400)
}
