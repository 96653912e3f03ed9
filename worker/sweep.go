package worker

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"time"
)

// DefaultChunkSize bounds the rows one apply transaction touches, so an app
// writing to the same file never waits long for the lock.
const DefaultChunkSize = 500

// LeaseDuration is how long a sweep's claim on a database lasts without a
// heartbeat; a crashed worker's lease expires and the next sweep takes over.
const LeaseDuration = 60 * time.Second

// SweepOptions controls one sweep.
type SweepOptions struct {
	DryRun    bool       // plan and report only; the file is not written
	Now       *float64   // active-hours clock; nil reads mem_config active_hours
	WallNow   *time.Time // wall clock; nil is time.Now()
	ChunkSize int        // rows per apply transaction; 0 is DefaultChunkSize
	Owner     string     // who holds the lease, for the "already running" message
}

// sweep is one run in progress on a pinned connection (temp tables live
// per connection).
type sweep struct {
	conn   *sql.Conn
	opt    SweepOptions
	start  time.Time
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
	if opt.Owner == "" {
		host, _ := os.Hostname()
		opt.Owner = fmt.Sprintf("pid %d on %s", os.Getpid(), host)
	}
	if !opt.DryRun && db.ReadOnly {
		return nil, errors.New("sweep: the database is open read-only; use --dry-run")
	}
	conn, err := db.SQL.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	defer conn.Close()
	s := &sweep{conn: conn, opt: opt, start: start, wall: time.Now()}
	if opt.WallNow != nil {
		s.wall = *opt.WallNow
	}
	if _, err := conn.ExecContext(ctx, "PRAGMA temp_store = MEMORY"); err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	if s.cfg, err = LoadConfig(ctx, conn); err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	s.now = s.cfg.ActiveHours
	if opt.Now != nil {
		s.now = *opt.Now
	}
	if math.IsNaN(s.now) || math.IsInf(s.now, 0) {
		return nil, fmt.Errorf("sweep: clock %v is not a finite number", s.now)
	}
	s.report = Report{DryRun: opt.DryRun, ClockHours: s.now, WallTime: s.wall.Unix()}

	if !opt.DryRun {
		if s.report.SweepID, err = s.acquireLease(ctx); err != nil {
			return nil, err
		}
	}
	err = s.run(ctx)
	s.report.DurationMS = time.Since(start).Milliseconds()
	s.report.Summary = s.report.BuildSummary()
	if err != nil {
		if !opt.DryRun {
			s.finishLease(context.WithoutCancel(ctx), "failed")
		}
		return nil, err
	}
	return &s.report, nil
}

func (s *sweep) run(ctx context.Context) error {
	if err := s.plan(ctx); err != nil {
		return fmt.Errorf("sweep: planning: %w", err)
	}
	if s.opt.DryRun {
		return nil
	}
	if err := s.applyBlocks(ctx); err != nil {
		return fmt.Errorf("sweep: archive faded blocks: %w", err)
	}
	if err := s.applyEdges(ctx); err != nil {
		return fmt.Errorf("sweep: prune and decay edges: %w", err)
	}
	if err := s.finish(ctx); err != nil {
		return fmt.Errorf("sweep: reinforce and record: %w", err)
	}
	return nil
}

func (s *sweep) args(extra ...any) []any {
	return append([]any{
		sql.Named("now", s.now),
		sql.Named("wall", s.wall.Unix()),
		sql.Named("sweep", s.report.SweepID),
	}, extra...)
}

func (s *sweep) exec(ctx context.Context, name string, extra ...any) (int64, error) {
	var total int64
	for _, q := range stmts(name) {
		res, err := s.conn.ExecContext(ctx, q, s.args(extra...)...)
		if err != nil {
			return total, fmt.Errorf("%s: %w", name, err)
		}
		n, _ := res.RowsAffected()
		total += n
	}
	return total, nil
}

func (s *sweep) count(ctx context.Context, query string, args ...any) (int64, error) {
	var n int64
	err := s.conn.QueryRowContext(ctx, query, args...).Scan(&n)
	return n, err
}

// plan computes every phase's decisions at one read snapshot.
func (s *sweep) plan(ctx context.Context) (err error) {
	if _, err := s.conn.ExecContext(ctx, "BEGIN"); err != nil {
		return err
	}
	defer func() {
		if _, cerr := s.conn.ExecContext(context.WithoutCancel(ctx), "COMMIT"); err == nil {
			err = cerr
		}
	}()
	for _, name := range []string{"plan_reset", "plan_invalid", "plan_tiers", "plan_degree"} {
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
		if _, err := s.exec(ctx, "plan_archive",
			sql.Named("block_threshold", s.cfg.BlockPruneThreshold), sql.Named("bridge", bridge)); err != nil {
			return err
		}
	}
	if _, err := s.exec(ctx, "plan_static", sql.Named("prune_threshold", s.cfg.EdgePruneThreshold)); err != nil {
		return err
	}
	if _, err := s.exec(ctx, "plan_decay_candidates",
		sql.Named("established", s.cfg.EstablishedEdgeThreshold), sql.Named("decay_threshold", s.cfg.EdgeDecayThreshold)); err != nil {
		return err
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
	if _, err := s.exec(ctx, "plan_decay", sql.Named("budget", budget)); err != nil {
		return err
	}
	if _, err := s.exec(ctx, "plan_reinforce", sql.Named("top_n", s.cfg.ReinforceTopN)); err != nil {
		return err
	}
	return s.planReport(ctx, candidates-budget)
}

// planReport fills the report from the plan; apply overwrites the counts
// with what it actually changed (the same, unless an app wrote meanwhile).
func (s *sweep) planReport(ctx context.Context, deferred int64) error {
	r := &s.report
	r.EdgesDeferred = deferred
	counts := []struct {
		dst   *int64
		query string
	}{
		{&r.Archived, "SELECT count(*) FROM temp.plan_blocks"},
		{&r.EdgesRemovedWithBlocks, "SELECT count(*) FROM temp.plan_edges WHERE phase = 'block_archived'"},
		{&r.EdgesPruned, "SELECT count(*) FROM temp.plan_edges WHERE phase = 'static'"},
		{&r.EdgesDecayed, "SELECT count(*) FROM temp.plan_edges WHERE phase = 'temporal'"},
		{&r.ConstitutionalReinforced, "SELECT count(*) FROM temp.plan_reinforce WHERE kind = 'constitutional'"},
		{&r.Reinforced, "SELECT count(*) FROM temp.plan_reinforce WHERE kind = 'top'"},
		{&r.InvalidRows.Count, "SELECT count(*) FROM temp.sweep_invalid"},
	}
	for _, c := range counts {
		n, err := s.count(ctx, c.query)
		if err != nil {
			return err
		}
		*c.dst = n
	}
	r.TotalEdgesAfter = r.EdgesBefore - r.EdgesRemovedWithBlocks - r.EdgesPruned - r.EdgesDecayed
	r.InvalidRows.Sample = []InvalidRow{}
	rows, err := s.conn.QueryContext(ctx, "SELECT kind, id, problem FROM temp.sweep_invalid ORDER BY kind, id LIMIT 10")
	if err != nil {
		return err
	}
	for rows.Next() {
		var v InvalidRow
		if err := rows.Scan(&v.Kind, &v.ID, &v.Problem); err != nil {
			rows.Close()
			return err
		}
		r.InvalidRows.Sample = append(r.InvalidRows.Sample, v)
	}
	rows.Close()
	r.DecayedSample = []EdgeSample{}
	rows, err = s.conn.QueryContext(ctx, `SELECT from_id, to_id, weight, effective FROM temp.plan_edges
		WHERE phase = 'temporal' ORDER BY seq LIMIT 5`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var v EdgeSample
		if err := rows.Scan(&v.From, &v.To, &v.Weight, &v.EffectiveWeight); err != nil {
			return err
		}
		r.DecayedSample = append(r.DecayedSample, v)
	}
	if r.Policies == nil {
		r.Policies = []PolicyCount{}
	}
	return rows.Err()
}

// inTx runs f in one BEGIN IMMEDIATE transaction on the sweep's connection,
// extending the lease in the same transaction.
func (s *sweep) inTx(ctx context.Context, f func() error) (err error) {
	if _, err := s.conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			s.conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
			return
		}
		_, err = s.conn.ExecContext(context.WithoutCancel(ctx), "COMMIT")
	}()
	if err := f(); err != nil {
		return err
	}
	_, err = s.conn.ExecContext(ctx, `UPDATE mem_sweeps SET lease_until = ? WHERE id = ?`,
		time.Now().Add(LeaseDuration).Unix(), s.report.SweepID)
	return err
}

// chunks calls f for consecutive seq ranges of a plan table.
func (s *sweep) chunks(ctx context.Context, table string, f func(lo, hi int64) error) error {
	maxSeq, err := s.count(ctx, "SELECT coalesce(max(seq), 0) FROM temp."+table)
	if err != nil {
		return err
	}
	step := int64(s.opt.ChunkSize)
	for lo := int64(1); lo <= maxSeq; lo += step {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := s.inTx(ctx, func() error { return f(lo, lo+step-1) }); err != nil {
			return err
		}
	}
	return nil
}

func (s *sweep) applyBlocks(ctx context.Context) error {
	r := &s.report
	r.Archived, r.EdgesRemovedWithBlocks = 0, 0
	return s.chunks(ctx, "plan_blocks", func(lo, hi int64) error {
		q := stmts("apply_blocks")
		for i, stmt := range q {
			res, err := s.conn.ExecContext(ctx, stmt, s.args(sql.Named("lo", lo), sql.Named("hi", hi))...)
			if err != nil {
				return err
			}
			n, _ := res.RowsAffected()
			switch i {
			case 4: // DELETE FROM mem_edges
				r.EdgesRemovedWithBlocks += n
			case len(q) - 1: // UPDATE mem_blocks
				r.Archived += n
			}
		}
		return nil
	})
}

func (s *sweep) applyEdges(ctx context.Context) error {
	r := &s.report
	planned := r.EdgesPruned + r.EdgesDecayed
	r.EdgesPruned, r.EdgesDecayed = 0, 0
	err := s.chunks(ctx, "plan_edges", func(lo, hi int64) error {
		q := stmts("apply_edges")
		if _, err := s.conn.ExecContext(ctx, q[0]); err != nil {
			return err
		}
		if _, err := s.conn.ExecContext(ctx, q[1], s.args(sql.Named("lo", lo), sql.Named("hi", hi))...); err != nil {
			return err
		}
		rows, err := s.conn.QueryContext(ctx, `SELECT p.phase, count(*) FROM temp.apply_rows a
			JOIN temp.plan_edges p ON p.seq = a.seq GROUP BY p.phase`)
		if err != nil {
			return err
		}
		var pruned, decayed int64
		for rows.Next() {
			var phase string
			var n int64
			if err := rows.Scan(&phase, &n); err != nil {
				rows.Close()
				return err
			}
			if phase == "static" {
				pruned = n
			} else {
				decayed = n
			}
		}
		rows.Close()
		for _, stmt := range q[2:] {
			if _, err := s.conn.ExecContext(ctx, stmt, s.args()...); err != nil {
				return err
			}
		}
		r.EdgesPruned += pruned
		r.EdgesDecayed += decayed
		return nil
	})
	r.Skipped += planned - r.EdgesPruned - r.EdgesDecayed
	return err
}

// finish reinforces, advances last_curate_at and records the sweep, in one
// transaction.
func (s *sweep) finish(ctx context.Context) error {
	r := &s.report
	return s.inTx(ctx, func() error {
		if _, err := s.exec(ctx, "apply_reinforce"); err != nil {
			return err
		}
		n, err := s.count(ctx, "SELECT count(*) FROM main.mem_edges")
		if err != nil {
			return err
		}
		r.TotalEdgesAfter = n
		if err := SetConfig(ctx, s.conn, "last_curate_at", fmt.Sprint(s.now)); err != nil {
			return err
		}
		_, err = s.conn.ExecContext(ctx, `UPDATE mem_config SET value = value + ? WHERE key = 'edges_decayed_total'`, r.EdgesDecayed)
		if err != nil {
			return err
		}
		r.Summary = r.BuildSummary()
		return s.recordSweep(ctx, s.conn, "done")
	})
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

// acquireLease claims the database for this sweep, or fails with
// ErrSweepRunning while another worker's lease is live.
func (s *sweep) acquireLease(ctx context.Context) (id int64, err error) {
	if _, err := s.conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return 0, fmt.Errorf("sweep: %w", err)
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
	if err == nil {
		return 0, fmt.Errorf("%w: sweep %d by %s since %s; try again when it finishes",
			ErrSweepRunning, other, owner, time.Unix(started, 0).UTC().Format(time.RFC3339))
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("sweep: %w", err)
	}
	if _, err := s.conn.ExecContext(ctx, `UPDATE mem_sweeps SET status = 'interrupted', finished_at = ?
		WHERE status = 'running'`, time.Now().Unix()); err != nil {
		return 0, fmt.Errorf("sweep: %w", err)
	}
	res, err := s.conn.ExecContext(ctx, `INSERT INTO mem_sweeps (started_at, clock_hours, dry_run, status, lease_until, owner)
		VALUES (?, ?, 0, 'running', ?, ?)`, time.Now().Unix(), s.now, time.Now().Add(LeaseDuration).Unix(), s.opt.Owner)
	if err != nil {
		return 0, fmt.Errorf("sweep: %w", err)
	}
	return res.LastInsertId()
}

func (s *sweep) finishLease(ctx context.Context, status string) {
	s.conn.ExecContext(ctx, "ROLLBACK") // harmless when no transaction is open
	s.recordSweep(ctx, s.conn, status)
}
