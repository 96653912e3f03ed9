package worker

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/memdecay/memdecay/sqlfuncs"
)

// DefaultChunkSize bounds the rows one apply transaction touches, so an app
// writing to the same file never waits long for the lock.
const DefaultChunkSize = 500

// DefaultSoloChunkSize is the CLI's rows per apply transaction while no
// other connection writes to the file: fewer, bigger commits copy each
// index page into the WAL fewer times. Once an app has written, the sweep
// takes ChunkSize rows at a time (see SoloHold).
const DefaultSoloChunkSize = 5000

// DefaultSoloHold bounds how long one of those bigger transactions holds
// the write lock, on any machine: an app that starts writing waits at
// least for the one under way. 5,000 removals held it for about 0.45 s on
// this project's 2-core VM. At 300 ms, with a checkpoint after every
// commit, an app's first writes after a pause waited at most 0.33-0.63 s
// there, and a first sweep of 1M edges alone took 95-97 s against 92 s.
const DefaultSoloHold = 300 * time.Millisecond

// SweepCacheKiB is the page cache of a sweep's connection, in KiB, for the
// file and again for its temp tables; SQLite's sorter takes as much again.
// A sweep reads the edge tables in storage order and touches their indexes
// all over, so a bigger cache buys little: a first sweep of 1M edges took
// 83 s with 32 MB caches and 91 s with 8 MB ones, at a peak RSS of 141 MB
// against 53 MB.
const SweepCacheKiB = 8 << 10

// DefaultPause is the least time the lock stays free between two of the
// sweep's transactions: enough for a writer already retrying to take it.
const DefaultPause = time.Millisecond

// LeaseDuration is how long a sweep's claim on a database lasts without a
// heartbeat; a crashed worker's lease expires and the next sweep takes over.
const LeaseDuration = 60 * time.Second

// SweepOptions controls one sweep.
type SweepOptions struct {
	DryRun    bool       // plan and report only; the file is not written
	Full      bool       // evaluate every row, not only the changed and due ones
	Now       *float64   // active-hours clock; nil reads mem_config active_hours
	WallNow   *time.Time // wall clock; nil is time.Now()
	ChunkSize int        // rows per transaction while another connection writes; 0 is DefaultChunkSize
	// SoloChunkSize: rows per apply transaction while no other connection
	// has written to the file for othersQuiet (the sync of derived state
	// takes syncChunkFactor times as many); 0 (or not above ChunkSize)
	// keeps ChunkSize throughout.
	SoloChunkSize int
	// SoloHold: while no other connection writes, a step's transactions
	// grow from its ChunkSize rows to its SoloChunkSize rows only as far
	// as the last one's pace fits in SoloHold; 0 is DefaultSoloHold.
	SoloHold time.Duration
	Owner    string // who holds the lease, for the "already running" message
	// Pause: the least time the write lock stays free between two of the
	// sweep's transactions, so an app writing to the same file gets it.
	// SQLite's default busy handler retries at most 100 ms apart, so 100 ms
	// bounds an app's wait to about one transaction, alone or not.
	Pause time.Duration
	// Progress, when set, is told after each chunk how far a step is.
	Progress func(step string, done, total int64)
}

// sweep is one run in progress on a pinned connection (temp tables live
// per connection).
type sweep struct {
	conn  *sql.Conn
	opt   SweepOptions
	start time.Time
	// Queue marks: the rows queued after the first three seqs and up to the
	// last three are refreshed by this sweep's next refresh; everything up
	// to the marks is cleared when it finishes.
	blockFrom, edgeFrom, factFrom int64
	blockMark, edgeMark, factMark int64
	// What derived state was computed under, and what it must be now.
	fingerprint, storedFingerprint string
	walFrames                      int64         // its length at the last checkpoint
	dataVersion                    int64         // PRAGMA data_version when last read (see noteOthers)
	inTransaction                  bool          // inside inTx or inRead
	held                           time.Duration // how long the last inTx held the write lock
	committed                      time.Time     // when the last inTx committed
	othersWrote                    time.Time     // when another connection's commit was last seen
	// resume: finish the saved plan of a sweep cut off at this clock.
	resume bool
	saved  savedPlan
	cfg    Config
	now    float64
	wall   time.Time
	report Report
}

// Sweep runs the edge curate sweep (SPEC §4.1): plan every phase at one
// snapshot into temp tables, then (unless DryRun) apply the plan in chunks,
// each chunk's removals and their events in one transaction.
func Sweep(ctx context.Context, db *DB, opt SweepOptions) (*Report, error) {
	start := time.Now()
	if opt.ChunkSize <= 0 {
		opt.ChunkSize = DefaultChunkSize
	}
	if opt.SoloHold <= 0 {
		opt.SoloHold = DefaultSoloHold
	}
	if opt.Owner == "" {
		opt.Owner = thisProcess()
	}
	if !opt.DryRun && db.ReadOnly {
		return nil, errors.New("sweep: the database is open read-only; use --dry-run")
	}
	conn, err := db.SQL.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	defer conn.Close()
	// A bigger page cache than SQLite's 2 MB default: a sweep touches the
	// edge indexes all over a big file. The sweep checkpoints after each of
	// its commits itself (see checkpoint).
	for _, pragma := range []string{fmt.Sprintf("PRAGMA cache_size = -%d", SweepCacheKiB), fmt.Sprintf("PRAGMA temp.cache_size = -%d", SweepCacheKiB), "PRAGMA wal_autocheckpoint = 0"} {
		if _, err := conn.ExecContext(ctx, pragma); err != nil {
			return nil, fmt.Errorf("sweep: %w", err)
		}
	}
	s := &sweep{conn: conn, opt: opt, start: start, wall: time.Now()}
	// The baseline for seeing other connections' commits (see checkpoint).
	if err := conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&s.dataVersion); err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	if opt.WallNow != nil {
		s.wall = *opt.WallNow
	}
	// A real sweep takes the lease first, then reads the settings and the
	// clock inside it: a sweep that waited for another sees its result.
	if !opt.DryRun {
		if err := s.acquireLease(ctx); err != nil {
			return nil, err
		}
	} else if err := s.loadClock(ctx); err != nil {
		return nil, err
	}
	err = s.run(ctx)
	s.report.DurationMS = time.Since(start).Milliseconds()
	s.report.Summary = s.report.BuildSummary()
	if err != nil {
		if !opt.DryRun {
			status := "failed"
			if ctx.Err() != nil {
				status = "interrupted"
			}
			s.finishLease(context.WithoutCancel(ctx), status)
		}
		return nil, err
	}
	return &s.report, nil
}

func (s *sweep) run(ctx context.Context) error {
	if s.opt.DryRun {
		// A dry run refreshes everything into temp tables and rolls its plan
		// back: even a write it should never make could not reach the file.
		return s.inRead(ctx, "ROLLBACK", func() (err error) {
			if err := s.prepare(ctx); err != nil {
				return err
			}
			if err := s.planFull(ctx); err != nil {
				return err
			}
			if s.cfg.EventRetentionDays > 0 {
				s.report.EventsExpired, err = s.count(ctx, `SELECT count(*) FROM main.mem_events WHERE at < ?`, s.retentionCutoff())
			}
			return err
		})
	}
	if err := s.prepare(ctx); err != nil {
		return err
	}
	if s.resume {
		if err := s.restorePlan(ctx); err != nil {
			return fmt.Errorf("sweep: resuming sweep %d: %w", s.report.SweepID, err)
		}
	} else {
		full := s.opt.Full || s.storedFingerprint != s.fingerprint
		s.report.Full = full
		if full {
			// Every row's derived state is computed into temp tables at the
			// plan's snapshot, then the rows that changed are copied over.
			done := phase("refresh and plan")
			if err := s.inRead(ctx, "COMMIT", func() error { return s.planFull(ctx) }); err != nil {
				return err
			}
			done()
			// From temp tables only: the app's writes meanwhile are
			// already being copied into the file.
			done = phase("plan order and due times")
			for _, name := range []string{"plan_order", "refresh_edges_all"} {
				if _, err := s.exec(ctx, name); err != nil {
					return fmt.Errorf("sweep: %w", err)
				}
			}
			done()
			done = phase("sync derived state")
			if err := s.syncDerived(ctx); err != nil {
				return fmt.Errorf("sweep: storing derived state: %w", err)
			}
			done()
		} else {
			done := phase("refresh")
			if err := s.refresh(ctx, false); err != nil {
				return fmt.Errorf("sweep: refreshing derived state: %w", err)
			}
			done()
			done = phase("plan")
			if err := s.inRead(ctx, "COMMIT", func() error { return s.plan(ctx, false) }); err != nil {
				return err
			}
			if _, err := s.exec(ctx, "plan_order"); err != nil { // temp tables only
				return fmt.Errorf("sweep: %w", err)
			}
			done()
		}
		done := phase("save plan")
		if err := s.savePlan(ctx); err != nil {
			return fmt.Errorf("sweep: saving the plan: %w", err)
		}
		done()
	}
	steps := []struct {
		what, table, stmts string
	}{
		{"archive faded blocks", "plan_blocks", "apply_blocks"},
		{"prune and decay edges", "plan_edges", "apply_edges"},
		{"exclude and readmit edges", "plan_flags", "apply_flags"},
		{"archive and prune facts", "plan_facts", "apply_facts"},
	}
	for _, st := range steps {
		done := phase(st.stmts)
		if err := s.chunks(ctx, st.table, true, func(lo, hi int64) error {
			_, err := s.exec(ctx, st.stmts, sql.Named("lo", lo), sql.Named("hi", hi))
			return err
		}); err != nil {
			return fmt.Errorf("sweep: %s: %w", st.what, err)
		}
		done()
	}
	done := phase("finish")
	if err := s.finish(ctx); err != nil {
		return fmt.Errorf("sweep: reinforce and record: %w", err)
	}
	done()
	// The sweep is done and recorded; what follows tidies up, and a stop
	// now leaves it to the next sweep.
	if err := s.settle(ctx); err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}

// settle refreshes what this sweep changed itself (degrees of blocks that
// lost edges, reinforced blocks, archived rows), so the next sweep starts
// with nothing queued by this one, then clears the queues and expires old
// events.
func (s *sweep) settle(ctx context.Context) error {
	done := phase("settle")
	s.blockFrom, s.edgeFrom, s.factFrom = s.blockMark, s.edgeMark, s.factMark
	if err := s.refresh(ctx, false); err != nil {
		return fmt.Errorf("sweep: refreshing derived state: %w", err)
	}
	done()
	done = phase("clear queues")
	if err := s.clearQueues(ctx); err != nil {
		return fmt.Errorf("sweep: clearing queues: %w", err)
	}
	done()
	if err := s.expireEvents(ctx); err != nil {
		return fmt.Errorf("sweep: expire old events: %w", err)
	}
	return nil
}

// planFull computes every row's derived state into temp tables that shadow
// the main ones, then plans from them, all in the caller's read snapshot;
// only the usable edges' due times are left to refresh_edges_all, which
// takes them from the plan's evaluation once the snapshot has ended.
func (s *sweep) planFull(ctx context.Context) error {
	if _, err := s.exec(ctx, "shadow_state"); err != nil {
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
	if _, err := s.exec(ctx, "sync_collect"); err != nil {
		return err
	}
	err := s.inTx(ctx, func() error {
		_, err := s.conn.ExecContext(ctx, `DELETE FROM main.mem_config WHERE key = 'derived_fingerprint'`)
		return err
	})
	if err != nil {
		return err
	}
	err = s.chunksOf(ctx, "sync_rows", syncChunkFactor*s.opt.ChunkSize, true, func(lo, hi int64) error {
		_, err := s.exec(ctx, "sync_apply", sql.Named("lo", lo), sql.Named("hi", hi))
		return err
	})
	if err != nil {
		return err
	}
	_, err = s.exec(ctx, "drop_shadow_state")
	return err
}

// clearQueues drops the queue entries this sweep refreshed and the saved
// plans of this and earlier sweeps, in bounded transactions. Entries left by an interrupted sweep are refreshed again
// next time, which is harmless.
func (s *sweep) clearQueues(ctx context.Context) error {
	// A table is emptied whole, which SQLite does by freeing its pages
	// rather than row by row (much the cheapest for the big queue a first
	// sweep leaves), keeping the few rows queued after the mark; one table
	// per transaction, and only while no other connection writes.
	tables := []struct {
		table, newer string
		mark         int64
	}{
		{"mem_dirty_blocks", "seq > ?", s.blockMark},
		{"mem_dirty_edges", "seq > ?", s.edgeMark},
		{"mem_dirty_facts", "seq > ?", s.factMark},
		{"mem_sweep_plans", "sweep_id > ?", s.report.SweepID},
	}
	for _, t := range tables {
		if s.othersWriting() {
			break // beside an app's writes, short batches below
		}
		err := s.inTx(ctx, func() error {
			newer, err := s.count(ctx, "SELECT count(*) FROM (SELECT 1 FROM main."+t.table+" WHERE "+t.newer+" LIMIT ?)",
				t.mark, keepRowsMax+1)
			if err != nil || newer > keepRowsMax {
				return err // too many: left to the batches below
			}
			for _, q := range []struct {
				query string
				args  []any
			}{
				{"DROP TABLE IF EXISTS temp.keep_rows", nil},
				{"CREATE TEMP TABLE keep_rows AS SELECT * FROM main." + t.table + " WHERE " + t.newer, []any{t.mark}},
				{"DELETE FROM main." + t.table, nil},
				{"INSERT INTO main." + t.table + " SELECT * FROM temp.keep_rows", nil},
				{"DROP TABLE temp.keep_rows", nil},
			} {
				if _, err := s.conn.ExecContext(ctx, q.query, q.args...); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	// Otherwise a bounded batch at a time (queue rows go in runs of seq).
	limit := int64(10 * s.opt.ChunkSize)
	for {
		var n int64
		err := s.inTx(ctx, func() error {
			var err error
			n, err = s.exec(ctx, "clear_queues", sql.Named("limit", limit))
			if err == nil {
				var m int64
				m, err = s.exec(ctx, "clear_plan", sql.Named("limit", limit))
				n += m
			}
			return err
		})
		if err != nil || n == 0 {
			return err
		}
	}
}

// phase times a step of the sweep for MEMWORKER_TRACE.
func phase(name string) func() {
	if !traceSQL {
		return func() {}
	}
	began := time.Now()
	return func() {
		fmt.Fprintf(os.Stderr, "memworker trace: phase %s %v (%s to %s)\n", name, time.Since(began),
			began.Format("15:04:05.000"), time.Now().Format("15:04:05.000"))
	}
}

// inRead runs f in one deferred transaction: a consistent snapshot of the
// file; temp tables are written freely. The WAL could not be copied past
// that snapshot meanwhile, so a real sweep checkpoints as soon as it ends.
func (s *sweep) inRead(ctx context.Context, end string, f func() error) (err error) {
	if _, err := s.conn.ExecContext(ctx, "BEGIN"); err != nil {
		return err
	}
	s.inTransaction = true
	defer func() {
		s.inTransaction = false
		if err != nil {
			end = "ROLLBACK"
		}
		if _, cerr := s.conn.ExecContext(context.WithoutCancel(ctx), end); err == nil {
			err = cerr
		}
		if !s.opt.DryRun {
			s.checkpoint(context.WithoutCancel(ctx))
		}
	}()
	return f()
}

// prepare resets the temp tables and stages the relation policies.
func (s *sweep) prepare(ctx context.Context) error {
	if _, err := s.exec(ctx, "plan_reset"); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	return s.loadPolicies(ctx)
}

// refresh recomputes the derived state of the rows queued after the from
// marks (or, full, of every row, into the temp shadow tables): blocks first
// (an edge's due time depends on its ends' tiers), then edges, then facts.
// Queue marks are taken before each part, so rows queued meanwhile wait.
func (s *sweep) refresh(ctx context.Context, full bool) error {
	withTx := !full
	parts := []struct {
		queue, ids, fill, chunk string
		mark                    *int64
	}{
		{"mem_dirty_blocks", "refresh_ids", "refresh_blocks", "refresh_blocks", &s.blockMark},
		{"mem_dirty_edges", "refresh_edges", "refresh_edges", "refresh_edges", &s.edgeMark},
		{"mem_dirty_facts", "refresh_ids", "refresh_facts", "refresh_facts", &s.factMark},
	}
	for _, p := range parts {
		var err error
		if *p.mark, err = s.count(ctx, "SELECT coalesce(max(seq), 0) FROM main."+p.queue); err != nil {
			return err
		}
		if full && p.chunk == "refresh_edges" {
			// Every edge in one pass, in table order, evaluated for the
			// plan (refresh_edges_all takes their due times from that
			// later), and the unusable ones into the temp shadow.
			for _, name := range []string{"evaluate_edges_all", "refresh_edges_invalid"} {
				if _, err := s.exec(ctx, name); err != nil {
					return err
				}
			}
			continue
		}
		if _, err := s.conn.ExecContext(ctx, "DELETE FROM temp."+p.ids); err != nil {
			return err
		}
		fill := p.fill + "_queued"
		if full {
			fill = p.fill + "_all"
		}
		if _, err := s.exec(ctx, fill); err != nil {
			return err
		}
		names := []string{p.chunk}
		if p.chunk == "refresh_blocks" {
			names = []string{"refresh_blocks", "refresh_blocks_store"}
			if !full {
				names = []string{"refresh_blocks", "refresh_blocks_retier", "refresh_blocks_store"}
			}
			// Many blocks' degrees are summed faster in one pass over the
			// edges than through the indexes, block by block.
			bulk, err := s.count(ctx, `SELECT (SELECT count(*) FROM temp.refresh_ids) * ? >= (SELECT count(*) FROM main.mem_blocks)`,
				bulkDegreeShare)
			if err != nil {
				return err
			}
			if full || bulk == 1 {
				if _, err := s.exec(ctx, "degrees_all"); err != nil {
					return err
				}
			} else {
				names = append([]string{"degrees_chunk"}, names...)
			}
		}
		size := s.opt.ChunkSize
		if full {
			size = math.MaxInt32 // temp tables only, in the caller's snapshot
		}
		err = s.chunksOf(ctx, p.ids, size, withTx, func(lo, hi int64) error {
			for _, n := range names {
				if _, err := s.exec(ctx, n, sql.Named("lo", lo), sql.Named("hi", hi)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// plan computes every phase's decisions at one read snapshot, over every
// row (full) or the rows due or changed.
func (s *sweep) plan(ctx context.Context, full bool) (err error) {
	scope := "scope_incremental"
	if full {
		scope = "scope_full"
	}
	names := []string{scope, "evaluate_edges", "plan_invalid"}
	if full {
		names = []string{scope, "plan_invalid"} // every edge was evaluated by the full refresh
	}
	for _, name := range names {
		if _, err := s.exec(ctx, name); err != nil {
			return err
		}
	}
	r := &s.report
	if r.EdgesBefore, err = s.count(ctx, "SELECT count(*) FROM main.mem_edges"); err != nil {
		return err
	}
	var bridge sql.NullFloat64
	if err := s.conn.QueryRowContext(ctx, stmts("bridge_threshold")[0]).Scan(&bridge); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("bridge threshold: %w", err)
	}
	if bridge.Valid {
		r.BridgeThreshold = &bridge.Float64
	}
	// Archival and the decay cap are decided once per clock value, so a
	// second sweep at the same clock removes nothing new.
	sameClock := s.cfg.LastCurateAt != nil && *s.cfg.LastCurateAt == s.now
	if s.cfg.BlockArchival && !sameClock {
		if _, err := s.exec(ctx, "plan_archive", sql.Named("bridge", bridge)); err != nil {
			return err
		}
	}
	for _, name := range []string{"plan_static", "plan_decay_candidates"} {
		if _, err := s.exec(ctx, name); err != nil {
			return err
		}
	}
	candidates, err := s.count(ctx, "SELECT count(*) FROM temp.plan_decay")
	if err != nil {
		return err
	}
	budget := candidates
	if s.cfg.MaxDecayFraction < 1 {
		budget = int64(math.Floor(s.cfg.MaxDecayFraction * float64(candidates)))
		if sameClock {
			budget = 0
		}
	}
	// Sorting the candidates is needed only when the cap leaves some.
	if budget < candidates {
		if _, err := s.exec(ctx, "plan_decay_cap", sql.Named("budget", budget)); err != nil {
			return err
		}
	}
	if _, err := s.exec(ctx, "plan_decay"); err != nil {
		return err
	}
	names = []string{"plan_policy", "plan_reinforce", "plan_facts"}
	if policies, err := s.count(ctx, "SELECT count(*) FROM temp.sweep_policy"); err != nil {
		return err
	} else if policies == 0 {
		names = names[1:]
	}
	for _, name := range names {
		if _, err := s.exec(ctx, name); err != nil {
			return err
		}
	}
	return s.planReport(ctx, candidates-budget)
}

// loadPolicies validates every relation policy row and stages it, with
// its durations in the clock's unit, in temp.sweep_policy. A broken row
// fails the sweep before anything changes.
func (s *sweep) loadPolicies(ctx context.Context) error {
	rows, err := s.conn.QueryContext(ctx, `SELECT relation_type, model, CAST(params AS TEXT), clock, threshold, action, orphans
		FROM main.mem_edge_policies ORDER BY relation_type`)
	if err != nil {
		return fmt.Errorf("reading mem_edge_policies: %w", err)
	}
	var policies []Policy
	for rows.Next() {
		var p Policy
		if err := rows.Scan(&p.RelationType, &p.Model, &p.Params, &p.Clock, &p.Threshold, &p.Action, &p.Orphans); err != nil {
			rows.Close()
			return fmt.Errorf("reading mem_edge_policies: %w", err)
		}
		policies = append(policies, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	// Derived state depends on these settings and policies: when they change,
	// the next sweep recomputes it for every row.
	h := sha256.New()
	fmt.Fprintf(h, "schema 3; thresholds %v %v %v %v;", s.cfg.BlockPruneThreshold, s.cfg.EdgePruneThreshold,
		s.cfg.EdgeDecayThreshold, s.cfg.EstablishedEdgeThreshold)
	for _, p := range policies {
		staged, err := p.Resolve(s.cfg.EdgeDecayThreshold)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%q %q %v %v %q %q;", p.RelationType, staged.Curve, staged.Threshold, staged.ToZero, p.Clock, p.Action)
		_, err = s.conn.ExecContext(ctx, `INSERT INTO temp.sweep_policy
			(relation_type, model, curve, clock, threshold, to_zero, action, orphans) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			p.RelationType, p.Model, staged.Curve, p.Clock, staged.Threshold, staged.ToZero, p.Action, p.Orphans)
		if err != nil {
			return err
		}
	}
	s.fingerprint = hex.EncodeToString(h.Sum(nil))
	err = s.conn.QueryRowContext(ctx, `SELECT coalesce((SELECT CAST(value AS TEXT) FROM main.mem_config WHERE key = 'derived_fingerprint'), '')`).
		Scan(&s.storedFingerprint)
	if err != nil {
		return err
	}
	return nil
}

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
		{&r.EdgesRemovedWithBlocks, "SELECT count(*) FROM temp.plan_edges WHERE phase = 'block_archived'"},
		{&r.EdgesPruned, "SELECT count(*) FROM temp.plan_edges WHERE phase = 'static'"},
		{&r.EdgesDecayed, "SELECT count(*) FROM temp.plan_edges WHERE phase = 'temporal'"},
		{&r.ConstitutionalReinforced, "SELECT count(*) FROM temp.plan_reinforce WHERE kind = 'constitutional'"},
		{&r.Reinforced, "SELECT count(*) FROM temp.plan_reinforce WHERE kind = 'top'"},
		{&r.InvalidRows.Count, "SELECT count(*) FROM temp.sweep_invalid"},
		// Processed and immune count every usable fact, whichever the sweep
		// had to look at, so full and incremental sweeps report alike.
		{&r.Facts.Processed, `SELECT count(*) FROM main.mem_facts f WHERE f.status IN ('active', 'confirmed')
			AND NOT EXISTS (SELECT 1 FROM mem_fact_due d WHERE d.id = f.id AND d.problem IS NOT NULL)`},
		{&r.Facts.Immune, `SELECT count(*) FROM main.mem_facts f WHERE f.status IN ('active', 'confirmed')
			AND (f.tier = 'permanent' OR f.status = 'confirmed')
			AND NOT EXISTS (SELECT 1 FROM mem_fact_due d WHERE d.id = f.id AND d.problem IS NOT NULL)`},
		{&r.Facts.Archived, "SELECT count(*) FROM temp.plan_facts WHERE action = 'archive'"},
		{&r.Facts.Pruned, "SELECT count(*) FROM temp.plan_facts WHERE action = 'prune'"},
	}
	for _, c := range counts {
		n, err := s.count(ctx, c.query)
		if err != nil {
			return err
		}
		*c.dst = n
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
	if r.InvalidRows.Sample, err = queryAll(ctx, s.conn, `SELECT kind, id, problem FROM temp.sweep_invalid ORDER BY kind, id LIMIT 10`,
		func(rows *sql.Rows, v *InvalidRow) error { return rows.Scan(&v.Kind, &v.ID, &v.Problem) }); err != nil {
		return err
	}
	r.DecayedSample, err = queryAll(ctx, s.conn, `SELECT from_id, to_id, weight, effective FROM temp.plan_edges
		WHERE phase IN ('temporal', 'policy') ORDER BY phase DESC, effective, from_id, to_id LIMIT 5`,
		func(rows *sql.Rows, v *EdgeSample) error {
			return rows.Scan(&v.From, &v.To, &v.Weight, &v.EffectiveWeight)
		})
	return err
}

// policyReport tallies each relation policy: removals and flag changes
// from the plan, the other counts over all the policy's edges, so full and
// incremental sweeps report alike. below_minimum is after this sweep.
func (s *sweep) policyReport(ctx context.Context) error {
	var err error
	s.report.Policies, err = queryAll(ctx, s.conn, `
		SELECT p.relation_type,
		       (SELECT count(*) FROM valid_edges e WHERE e.relation_type = p.relation_type AND NOT e.pinned
		           AND (CASE p.clock WHEN 'wall' THEN e.last_observed_at ELSE e.last_active_hours END) IS NOT NULL
		           AND NOT EXISTS (SELECT 1 FROM temp.plan_edges x WHERE x.from_id = e.from_id AND x.to_id = e.to_id
		                           AND x.phase = 'block_archived')),
		       (SELECT count(*) FROM temp.plan_edges e WHERE e.relation_type = p.relation_type AND e.phase = 'policy'),
		       (SELECT count(*) FROM main.mem_edges e WHERE e.relation_type = p.relation_type AND e.excluded AND NOT e.pinned)
		         + (SELECT count(*) FROM temp.plan_flags f WHERE f.relation_type = p.relation_type AND f.excluded_to)
		         - (SELECT count(*) FROM temp.plan_flags f WHERE f.relation_type = p.relation_type AND NOT f.excluded_to),
		       (SELECT count(*) FROM main.mem_edges e WHERE e.relation_type = p.relation_type AND e.pinned),
		       (SELECT count(*) FROM temp.plan_flags f WHERE f.relation_type = p.relation_type AND f.excluded_to),
		       (SELECT count(*) FROM temp.plan_flags f WHERE f.relation_type = p.relation_type AND NOT f.excluded_to)
		FROM temp.sweep_policy p ORDER BY p.relation_type`,
		func(rows *sql.Rows, c *PolicyCount) error {
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
	byPolicy := map[string]*PolicyCount{}
	for i := range r.Policies {
		p := &r.Policies[i]
		planned += p.Decayed + p.Excluded + p.Readmitted
		p.Decayed, p.Excluded, p.Readmitted = 0, 0, 0
		byPolicy[p.RelationType] = p
	}
	r.Archived, r.OrphansArchived, r.EdgesRemovedWithBlocks, r.EdgesPruned, r.EdgesDecayed = 0, 0, 0, 0, 0
	r.Facts.Archived, r.Facts.Pruned = 0, 0
	rows, err := s.conn.QueryContext(ctx, `SELECT subject_kind, action, coalesce(reason, ''), count(*) FROM main.mem_events
		WHERE sweep_id = ? GROUP BY 1, 2, 3`, r.SweepID)
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
		_, relation, _ := strings.Cut(reason, ":")
		switch {
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
	r.Facts.Kept = r.Facts.Processed - r.Facts.Immune - r.Facts.Archived - r.Facts.Pruned
	applied := r.Archived + r.EdgesPruned + r.EdgesDecayed + r.Facts.Archived + r.Facts.Pruned
	for _, p := range r.Policies {
		applied += p.Decayed + p.Excluded + p.Readmitted
	}
	r.Skipped = planned - applied
	return rows.Err()
}

// queryAll scans every row of a query into a slice (never nil, so JSON
// shows [] rather than null).
func queryAll[T any](ctx context.Context, q querier, query string, scan func(*sql.Rows, *T) error) ([]T, error) {
	rows, err := q.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		var v T
		if err := scan(rows, &v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// inTx runs f in one BEGIN IMMEDIATE transaction on the sweep's connection,
// extending the lease in the same transaction.
func (s *sweep) inTx(ctx context.Context, f func() error) (err error) {
	// The lock stays free for at least Pause between two transactions
	// (a checkpoint after the commit counts), so a writer waiting on it
	// gets it: SQLite's busy handler retries at most 100 ms apart.
	if wait := s.opt.Pause - time.Since(s.committed); !s.committed.IsZero() && wait > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
	began := time.Now()
	if _, err := s.conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return err
	}
	s.inTransaction = true
	s.noteOthers(ctx)
	defer func() {
		s.inTransaction = false
		if err != nil {
			s.conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
			return
		}
		if _, err = s.conn.ExecContext(context.WithoutCancel(ctx), "COMMIT"); err == nil {
			committed := time.Now()
			s.held, s.committed = committed.Sub(began), committed
			s.checkpoint(context.WithoutCancel(ctx))
			s.yieldLock(ctx, committed, s.held)
		}
	}()
	if err := f(); err != nil {
		return err
	}
	_, err = s.conn.ExecContext(ctx, `UPDATE mem_sweeps SET lease_until = ? WHERE id = ?`,
		time.Now().Add(LeaseDuration).Unix(), s.report.SweepID)
	return err
}

// yieldLock leaves an app that writes beside the sweep as long without the
// write lock as the sweep just held it (at most maxYield), counting from
// the commit: SQLite's busy handler retries at growing intervals, up to
// 100 ms apart, and with only short gaps between the sweep's transactions
// an app's retries could keep landing inside the next one.
func (s *sweep) yieldLock(ctx context.Context, committed time.Time, held time.Duration) {
	if !s.othersWriting() {
		return
	}
	wait := time.Until(committed.Add(min(held, maxYield)))
	if wait <= 0 {
		return
	}
	select {
	case <-ctx.Done():
	case <-time.After(wait):
	}
}

// checkpoint copies the WAL's pages into the database file after each of
// the sweep's commits and long reads, so neither the WAL nor the cost of
// every page read grows, and so an app writing beside the sweep is not the
// one to do it: SQLite checkpoints inside the commit of whichever
// connection finds the WAL long, and copying the sweep's pages there would
// hold up that app's write. It runs while the lock is free, when an app's
// writer waiting for its turn gets it (that app's own checkpoint then finds
// the checkpoint lock taken, or little to copy). Checkpointing at most once
// a second while alone was a few per cent faster, but an app that began
// writing then could pay for a second of the sweep's pages in its first
// write (0.84 s in a trial). With an app writing all the time, a passive
// checkpoint can also end a step behind its commits, so that the WAL never
// restarts; the sign is a WAL past checkpointFrames and longer than at the
// checkpoint before (one that restarted in between is shorter, however big
// a transaction made it), and the sweep then restarts it, waiting at most
// checkpointWaitMS for the app's readers. Failing to checkpoint is not an
// error: a later commit tries again.
func (s *sweep) checkpoint(ctx context.Context) {
	s.noteOthers(ctx)
	var busy, frames, copied int64
	if s.conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied) != nil {
		return
	}
	stuck := frames >= checkpointFrames && frames > s.walFrames
	s.walFrames = frames
	if !stuck {
		return
	}
	s.conn.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", checkpointWaitMS))
	if s.conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(RESTART)").Scan(&busy, &frames, &copied) == nil && busy == 0 {
		s.walFrames = 0
	}
	s.conn.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", BusyTimeoutMS))
}

// checkpointFrames is 64 MiB of WAL, in 4 KiB pages.
const (
	othersQuiet      = 2 * time.Second
	longRead         = 100 * time.Millisecond
	maxYield         = 100 * time.Millisecond
	checkpointFrames = 16384
	checkpointWaitMS = 50
)

// keepRowsMax: a queue with more rows than this after its mark is cleared
// a batch at a time instead of emptied whole.
const keepRowsMax = 10000

// syncChunkFactor: a sync writes only worker-owned rows, so while no app
// writes its transactions take a few chunks' worth of rows (see chunkRows).
const syncChunkFactor = 4

// bulkDegreeShare: when at least 1/bulkDegreeShare of the blocks are to be
// refreshed, their degrees are summed in one pass over every edge rather
// than through the indexes, block by block.
const bulkDegreeShare = 2

// chunks calls f for consecutive seq ranges of a temp table, each in its
// own write transaction when withTx is set.
func (s *sweep) chunks(ctx context.Context, table string, withTx bool, f func(lo, hi int64) error) error {
	return s.chunksOf(ctx, table, s.opt.ChunkSize, withTx, f)
}

func (s *sweep) chunksOf(ctx context.Context, table string, size int, withTx bool, f func(lo, hi int64) error) error {
	maxSeq, err := s.count(ctx, "SELECT coalesce(max(seq), 0) FROM temp."+table)
	if err != nil {
		return err
	}
	rows := s.txRows(size)
	for lo, step := int64(1), int64(size); lo <= maxSeq; lo += step {
		if err := ctx.Err(); err != nil {
			return err
		}
		if s.opt.Progress != nil {
			s.opt.Progress(table, lo-1, maxSeq)
		}
		if !withTx {
			if err := f(lo, lo+step-1); err != nil {
				return err
			}
			continue
		}
		// Sized once the lock is held: an app that wrote while the sweep
		// waited for it makes this one short.
		err := s.inTx(ctx, func() error {
			step = rows.next()
			return f(lo, lo+step-1)
		})
		if err != nil {
			return err
		}
		rows.took(step)
	}
	if s.opt.Progress != nil && maxSeq > 0 {
		s.opt.Progress(table, maxSeq, maxSeq)
	}
	return nil
}

// noteOthers reads PRAGMA data_version, which changes when another
// connection commits: after the sweep's commits, and once each
// transaction holds the lock, so that its size takes an app's write made
// meanwhile into account.
func (s *sweep) noteOthers(ctx context.Context) {
	var version int64
	if s.conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&version) == nil {
		if version != s.dataVersion {
			s.othersWrote = time.Now()
		}
		s.dataVersion = version
	}
}

// othersWriting reports whether another connection's commit was seen in
// the last othersQuiet (see checkpoint).
func (s *sweep) othersWriting() bool { return time.Since(s.othersWrote) < othersQuiet }

// chunkRows is the most rows the next transaction of a step takes (see
// txRows), size being its rows per transaction at ChunkSize: scaled by
// SoloChunkSize ÷ ChunkSize while no other connection writes to the file,
// and ChunkSize whatever the step while one does (a sync's 2,000 rows held the lock for
// 60-90 ms, long enough for an app's write to wait through its busy
// handler's first sleeps, 78 ms in all).
func (s *sweep) chunkRows(size int) int64 {
	if s.othersWriting() {
		return int64(min(size, s.opt.ChunkSize))
	}
	if s.opt.SoloChunkSize > s.opt.ChunkSize {
		return int64(size) * int64(s.opt.SoloChunkSize) / int64(s.opt.ChunkSize)
	}
	return int64(size)
}

// txRows sizes the transactions of one step (size: its rows at
// ChunkSize). Beside an app's writes each takes chunkRows; alone, the
// first takes size rows and each next one as many as the last one's pace
// fits in SoloHold, up to chunkRows: however slow the machine or the rows,
// no transaction keeps an app that starts writing mid-sweep waiting much
// longer than SoloHold.
type txRows struct {
	s    *sweep
	size int
	pace float64 // rows per second the last transaction held the lock; 0 before the first
}

func (s *sweep) txRows(size int) *txRows { return &txRows{s: s, size: size} }

func (t *txRows) next() int64 {
	bound := t.s.chunkRows(t.size)
	if t.s.othersWriting() {
		return bound
	}
	fit := max(int64(t.size), int64(t.pace*t.s.opt.SoloHold.Seconds()))
	return min(bound, fit)
}

// took records the pace of the transaction just committed with n rows.
func (t *txRows) took(n int64) {
	if t.s.held > 0 {
		t.pace = float64(n) / t.s.held.Seconds()
	}
}

// finish reinforces, advances last_curate_at and records the sweep, in one
// transaction.
func (s *sweep) finish(ctx context.Context) error {
	r := &s.report
	// The counting reads many rows: done before the write transaction, so
	// an app's writer never waits on it. The events counted are all
	// committed, and only this sweep writes them.
	if err := s.appliedReport(ctx); err != nil {
		return err
	}
	n, err := s.count(ctx, "SELECT count(*) FROM main.mem_edges")
	if err != nil {
		return err
	}
	r.TotalEdgesAfter = n
	return s.inTx(ctx, func() error {
		if _, err := s.exec(ctx, "apply_reinforce"); err != nil {
			return err
		}
		if err := SetConfig(ctx, s.conn, "last_curate_at", fmt.Sprint(s.now)); err != nil {
			return err
		}
		_, err = s.conn.ExecContext(ctx, `UPDATE mem_config SET value = value + ? WHERE key = 'edges_decayed_total'`, r.EdgesDecayed)
		if err != nil {
			return err
		}
		_, err = s.conn.ExecContext(ctx, `INSERT INTO mem_config (key, value) VALUES ('derived_fingerprint', ?)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, s.fingerprint)
		if err != nil {
			return err
		}
		r.Summary = r.BuildSummary()
		return s.recordSweep(ctx, s.conn, "done")
	})
}

// expireEvents removes events older than event_retention_days (0 keeps
// them forever), in bounded chunks, and counts them in the stored report.
func (s *sweep) expireEvents(ctx context.Context) error {
	if s.cfg.EventRetentionDays <= 0 {
		return nil
	}
	cutoff := s.retentionCutoff()
	for {
		var n int64
		err := s.inTx(ctx, func() error {
			var err error
			n, err = s.exec(ctx, "expire_events", sql.Named("cutoff", cutoff), sql.Named("limit", int64(s.opt.ChunkSize)))
			return err
		})
		if err != nil {
			return err
		}
		s.report.EventsExpired += n
		if n < int64(s.opt.ChunkSize) {
			break
		}
	}
	if s.report.EventsExpired == 0 {
		return nil
	}
	return s.inTx(ctx, func() error { return s.recordSweep(ctx, s.conn, "done") })
}

// retentionCutoff is the wall time before which events expire.
func (s *sweep) retentionCutoff() int64 {
	return s.wall.Unix() - int64(s.cfg.EventRetentionDays*86400)
}

func (s *sweep) recordSweep(ctx context.Context, q querier, status string) error {
	s.report.DurationMS = time.Since(s.start).Milliseconds()
	result, err := json.Marshal(s.report)
	if err != nil {
		return err
	}
	_, err = q.ExecContext(ctx, `UPDATE mem_sweeps SET status = ?, finished_at = ?, result = ? WHERE id = ?`,
		status, time.Now().Unix(), string(result), s.report.SweepID)
	return err
}

// loadClock reads mem_config and fixes the sweep's clock and report.
func (s *sweep) loadClock(ctx context.Context) (err error) {
	if s.cfg, err = LoadConfig(ctx, s.conn); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	s.now = s.cfg.ActiveHours
	if s.opt.Now != nil {
		s.now = *s.opt.Now
	}
	if math.IsNaN(s.now) || math.IsInf(s.now, 0) {
		return fmt.Errorf("sweep: clock %v is not a finite number", s.now)
	}
	s.report = Report{DryRun: s.opt.DryRun, ClockHours: s.now, WallTime: s.wall.Unix()}
	return nil
}

// acquireLease claims the database for this sweep, or fails with
// ErrSweepRunning while another worker's lease is live. When the last
// sweep at this clock was cut off after saving its plan, this sweep takes
// its place and finishes that plan.
func (s *sweep) acquireLease(ctx context.Context) (err error) {
	if _, err := s.conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	defer func() {
		if err != nil {
			s.conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
			return
		}
		if _, cerr := s.conn.ExecContext(ctx, "COMMIT"); cerr != nil {
			err = fmt.Errorf("sweep: %w", cerr)
		}
	}()
	var other int64
	var owner string
	var started int64
	err = s.conn.QueryRowContext(ctx, `SELECT id, coalesce(owner, '?'), started_at FROM mem_sweeps
		WHERE status = 'running' AND lease_until > ? ORDER BY id DESC LIMIT 1`, time.Now().Unix()).Scan(&other, &owner, &started)
	if err == nil && ownerGone(owner) {
		err = sql.ErrNoRows // a worker on this machine that died (kill -9): its lease is void
	}
	if err == nil {
		return fmt.Errorf("%w: sweep %d by %s since %s; try again when it finishes",
			ErrSweepRunning, other, owner, time.Unix(started, 0).UTC().Format(time.RFC3339))
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("sweep: %w", err)
	}
	if err := s.loadClock(ctx); err != nil {
		return err
	}
	if _, err := s.conn.ExecContext(ctx, `UPDATE mem_sweeps SET status = 'interrupted', finished_at = ?
		WHERE status = 'running'`, time.Now().Unix()); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	lease := time.Now().Add(LeaseDuration).Unix()
	var plan string
	err = s.conn.QueryRowContext(ctx, `SELECT id, plan FROM mem_sweeps
		WHERE status IN ('interrupted', 'failed') AND plan IS NOT NULL AND clock_hours = ? AND NOT dry_run
		  AND id > coalesce((SELECT max(id) FROM mem_sweeps WHERE status = 'done'), 0)
		ORDER BY id DESC LIMIT 1`, s.now).Scan(&s.report.SweepID, &plan)
	switch {
	case err == nil:
		if err := json.Unmarshal([]byte(plan), &s.saved); err != nil {
			return fmt.Errorf("sweep: reading the saved plan of sweep %d: %w", s.report.SweepID, err)
		}
		s.resume = true
		_, err = s.conn.ExecContext(ctx, `UPDATE mem_sweeps SET status = 'running', finished_at = NULL, lease_until = ?, owner = ?
			WHERE id = ?`, lease, s.opt.Owner, s.report.SweepID)
		return err
	case !errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("sweep: %w", err)
	}
	res, err := s.conn.ExecContext(ctx, `INSERT INTO mem_sweeps (started_at, clock_hours, dry_run, status, lease_until, owner)
		VALUES (?, ?, 0, 'running', ?, ?)`, time.Now().Unix(), s.now, lease, s.opt.Owner)
	if err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	s.report.SweepID, err = res.LastInsertId()
	return err
}

// thisProcess names this worker in a lease: pid, host and pid namespace,
// so a lease from another container sharing the hostname is not mistaken
// for one of ours.
func thisProcess() string {
	host, _ := os.Hostname()
	ns, _ := os.Readlink("/proc/self/ns/pid")
	return fmt.Sprintf("pid %d on %s %s", os.Getpid(), host, ns)
}

// ownerGone reports whether a lease's owner was a process in this host's
// pid namespace that no longer runs (a kill -9): its lease is void. Owners
// elsewhere keep their lease until it expires.
func ownerGone(owner string) bool {
	var pid int
	if _, err := fmt.Sscanf(owner, "pid %d on ", &pid); err != nil || pid <= 0 {
		return false
	}
	if owner != strings.Replace(thisProcess(), fmt.Sprintf("pid %d ", os.Getpid()), fmt.Sprintf("pid %d ", pid), 1) {
		return false
	}
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

func (s *sweep) finishLease(ctx context.Context, status string) {
	s.conn.ExecContext(ctx, "ROLLBACK") // harmless when no transaction is open
	s.recordSweep(ctx, s.conn, status)
}

// args binds every parameter the sweep's statements use; each statement
// takes the ones it names.
func (s *sweep) args(extra ...any) []any {
	return append([]any{
		sql.Named("now", s.now),
		sql.Named("wall", s.wall.Unix()),
		sql.Named("sweep", s.report.SweepID),
		sql.Named("full", s.report.Full),
		sql.Named("block_threshold", s.cfg.BlockPruneThreshold),
		sql.Named("prune_threshold", s.cfg.EdgePruneThreshold),
		sql.Named("decay_threshold", s.cfg.EdgeDecayThreshold),
		sql.Named("established", s.cfg.EstablishedEdgeThreshold),
		sql.Named("archive_score", sqlfuncs.ArchiveScore),
		sql.Named("prune_score", sqlfuncs.PruneScore),
		sql.Named("top_n", s.cfg.ReinforceTopN),
		sql.Named("slack", dueSlack),
		sql.Named("block_from", s.blockFrom),
		sql.Named("edge_from", s.edgeFrom),
		sql.Named("fact_from", s.factFrom),
		sql.Named("block_mark", s.blockMark),
		sql.Named("edge_mark", s.edgeMark),
		sql.Named("fact_mark", s.factMark),
	}, extra...)
}

// traceSQL (MEMWORKER_TRACE=1) prints each sweep statement slower than
// traceMin to stderr, to find where a big sweep spends its time.
var traceSQL = os.Getenv("MEMWORKER_TRACE") != ""

// traceMin is the slowest statement not traced; MEMWORKER_TRACE=5ms lowers it.
var traceMin = func() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("MEMWORKER_TRACE")); err == nil {
		return d
	}
	return 20 * time.Millisecond
}()

// trace prints a slow statement's time and query plan.
func (s *sweep) trace(ctx context.Context, name string, took time.Duration, query string, extra []any) {
	plan := ""
	if rows, err := s.conn.QueryContext(ctx, "EXPLAIN QUERY PLAN "+query, s.args(extra...)...); err == nil {
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if rows.Scan(&id, &parent, &unused, &detail) == nil {
				plan += "\n    " + detail
			}
		}
		rows.Close()
	}
	fmt.Fprintf(os.Stderr, "memworker trace: %s %v%s\n", name, took, plan)
}

// dueSlack widens "due by now" a little, so rounding between a stored due
// time and the exact check never leaves a row out; the exact check decides.
const dueSlack = 1e-6

// exec runs every statement of a named section of sweep.sql.
func (s *sweep) exec(ctx context.Context, name string, extra ...any) (int64, error) {
	var total int64
	for i, q := range stmts(name) {
		began := time.Now()
		res, err := s.conn.ExecContext(ctx, q, s.args(extra...)...)
		if err != nil {
			return total, fmt.Errorf("%s: %w", name, err)
		}
		s.afterRead(ctx, began)
		if traceSQL && time.Since(began) > traceMin {
			s.trace(ctx, fmt.Sprintf("%s[%d]", name, i), time.Since(began), q, extra)
		}
		n, _ := res.RowsAffected()
		total += n
	}
	return total, nil
}

func (s *sweep) count(ctx context.Context, query string, args ...any) (int64, error) {
	var n int64
	began := time.Now()
	err := s.conn.QueryRowContext(ctx, query, args...).Scan(&n)
	s.afterRead(ctx, began)
	return n, err
}

// afterRead checkpoints after a long statement of its own (outside a
// transaction): its read snapshot held the WAL back meanwhile.
func (s *sweep) afterRead(ctx context.Context, began time.Time) {
	if !s.inTransaction && !s.opt.DryRun && time.Since(began) > longRead {
		s.checkpoint(context.WithoutCancel(ctx))
	}
}
