package worker

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
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
	steps := []struct {
		what, table, stmts string
	}{
		{"archive faded blocks", "plan_blocks", "apply_blocks"},
		{"prune and decay edges", "plan_edges", "apply_edges"},
		{"exclude and readmit edges", "plan_flags", "apply_flags"},
		{"archive and prune facts", "plan_facts", "apply_facts"},
	}
	for _, st := range steps {
		if err := s.chunks(ctx, st.table, func(lo, hi int64) error {
			_, err := s.exec(ctx, st.stmts, sql.Named("lo", lo), sql.Named("hi", hi))
			return err
		}); err != nil {
			return fmt.Errorf("sweep: %s: %w", st.what, err)
		}
	}
	if err := s.finish(ctx); err != nil {
		return fmt.Errorf("sweep: reinforce and record: %w", err)
	}
	if err := s.expireEvents(ctx); err != nil {
		return fmt.Errorf("sweep: expire old events: %w", err)
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
		// A dry run rolls its plan back: even a write the plan should never
		// make could not reach the file.
		end := "COMMIT"
		if s.opt.DryRun {
			end = "ROLLBACK"
		}
		if _, cerr := s.conn.ExecContext(context.WithoutCancel(ctx), end); err == nil {
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
	if err := s.loadPolicies(ctx); err != nil {
		return err
	}
	for _, name := range []string{"plan_policy", "plan_reinforce", "plan_facts"} {
		if _, err := s.exec(ctx, name, sql.Named("top_n", s.cfg.ReinforceTopN)); err != nil {
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
	for _, p := range policies {
		staged, err := p.Resolve(s.cfg.EdgeDecayThreshold)
		if err != nil {
			return err
		}
		_, err = s.conn.ExecContext(ctx, `INSERT INTO temp.sweep_policy
			(relation_type, model, curve, clock, threshold, to_zero, action, orphans) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			p.RelationType, p.Model, staged.Curve, p.Clock, staged.Threshold, staged.ToZero, p.Action, p.Orphans)
		if err != nil {
			return err
		}
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
		{&r.Facts.Processed, "SELECT count(*) FROM temp.plan_facts"},
		{&r.Facts.Immune, "SELECT count(*) FROM temp.plan_facts WHERE tier = 'permanent' OR status = 'confirmed'"},
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
		WHERE phase IN ('temporal', 'policy') ORDER BY phase DESC, seq LIMIT 5`,
		func(rows *sql.Rows, v *EdgeSample) error {
			return rows.Scan(&v.From, &v.To, &v.Weight, &v.EffectiveWeight)
		})
	return err
}

// policyReport tallies each relation policy from the plan.
func (s *sweep) policyReport(ctx context.Context) error {
	var err error
	s.report.Policies, err = queryAll(ctx, s.conn, `
		SELECT p.relation_type,
		       (SELECT count(*) FROM temp.plan_policy_eval v WHERE v.relation_type = p.relation_type AND NOT v.pinned AND v.elapsed IS NOT NULL),
		       (SELECT count(*) FROM temp.plan_edges e WHERE e.relation_type = p.relation_type AND e.phase = 'policy'),
		       (SELECT count(*) FROM temp.plan_policy_eval v WHERE v.relation_type = p.relation_type AND v.below AND v.action = 'exclude'),
		       (SELECT count(*) FROM temp.plan_policy_eval v WHERE v.relation_type = p.relation_type AND v.pinned),
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
	planned := r.Archived + r.OrphansArchived + r.EdgesRemovedWithBlocks + r.EdgesPruned + r.EdgesDecayed + r.Facts.Archived + r.Facts.Pruned
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
	var applied int64
	for rows.Next() {
		var kind, action, reason string
		var n int64
		if err := rows.Scan(&kind, &action, &reason, &n); err != nil {
			return err
		}
		applied += n
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

// finish reinforces, advances last_curate_at and records the sweep, in one
// transaction.
func (s *sweep) finish(ctx context.Context) error {
	r := &s.report
	return s.inTx(ctx, func() error {
		if _, err := s.exec(ctx, "apply_reinforce"); err != nil {
			return err
		}
		if err := s.appliedReport(ctx); err != nil {
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

// expireEvents removes events older than event_retention_days (0 keeps
// them forever), in bounded chunks, and counts them in the stored report.
func (s *sweep) expireEvents(ctx context.Context) error {
	if s.cfg.EventRetentionDays <= 0 {
		return nil
	}
	cutoff := s.wall.Unix() - int64(s.cfg.EventRetentionDays*86400)
	for {
		var n int64
		err := s.inTx(ctx, func() error {
			var err error
			n, err = s.exec(ctx, "expire_events", sql.Named("cutoff", cutoff), sql.Named("limit", s.opt.ChunkSize))
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
