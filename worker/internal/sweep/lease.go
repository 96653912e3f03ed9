package sweep

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/internal/store"
)

// acquireLease claims the database for this sweep, or fails with
// ErrSweepRunning while another worker's lease is live. When the last
// sweep at this clock was cut off after saving its plan, this sweep takes
// its place and finishes that plan. Everything it decides it reads first
// and writes as conditional statements, so the claim holds on a replica,
// where a transaction's reads cannot see its own writes: a sweep that
// claimed the database between the reads and the writes wins, and this one
// finds its claim missing.
func (s *sweep) acquireLease(ctx context.Context) error {
	var claim store.LeaseClaim
	err := s.db.InTx(ctx, func() error {
		q := s.db.Querier()
		dead, err := store.DeadSweeps(ctx, q)
		if err != nil {
			return err
		}
		if err := s.loadClock(ctx); err != nil {
			return err
		}
		if err := s.findResumable(ctx, q, dead); err != nil {
			return err
		}
		if !s.resume {
			if s.report.SweepID, err = store.NextSweepID(ctx, q); err != nil {
				return err
			}
		}
		// The dead: a running sweep is interrupted, a settling one let go.
		if _, err := q.ExecContext(ctx, `UPDATE mem_sweeps
			SET status = CASE status WHEN 'running' THEN 'interrupted' ELSE status END, finished_at = ?
			WHERE `+store.HeldSQL+` AND id IN (SELECT value FROM json_each(?))`, time.Now().Unix(), store.JSONIDs(dead)); err != nil {
			return err
		}
		claim = store.LeaseClaim{ID: s.report.SweepID, Owner: s.opt.Owner, Until: s.leaseUntil()}
		if s.resume {
			_, err = q.ExecContext(ctx, `UPDATE mem_sweeps SET status = 'running', finished_at = NULL, lease_until = ?, owner = ?
				WHERE id = ? AND NOT EXISTS (SELECT 1 FROM mem_sweeps WHERE `+store.HeldSQL+`)`, claim.Until, claim.Owner, claim.ID)
			return err
		}
		return s.recordNew(ctx, q, claim, true)
	})
	if err != nil {
		return err
	}
	if err := claim.Check(ctx, s.db.Querier()); err != nil {
		return err
	}
	s.claim, s.held = claim, true
	s.db.Hold(s)
	return nil
}

// leaseUntil is when a lease extended now expires.
func (s *sweep) leaseUntil() int64 {
	return time.Now().Add(cmp.Or(s.opt.lease, LeaseDuration)).Unix()
}

// findResumable finds the saved plan of a sweep cut off at this clock (one
// interrupted, failed, or among the dead), to take it over.
func (s *sweep) findResumable(ctx context.Context, q memdb.Querier, dead []int64) error {
	var plan string
	err := q.QueryRowContext(ctx, `SELECT id, plan FROM mem_sweeps
		WHERE (status IN ('interrupted', 'failed') OR id IN (SELECT value FROM json_each(?)))
		  AND plan IS NOT NULL AND clock_hours = ? AND NOT dry_run
		  AND id > coalesce((SELECT max(id) FROM mem_sweeps WHERE status = 'done'), 0)
		ORDER BY id DESC LIMIT 1`, store.JSONIDs(dead), s.clock.Hours).Scan(&s.report.SweepID, &plan)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return err
	}
	if err := json.Unmarshal([]byte(plan), &s.saved); err != nil {
		return fmt.Errorf("reading the saved plan of sweep %d: %w", s.report.SweepID, err)
	}
	s.resume = true
	return nil
}

// recordNew records a new sweep holding the lease, with the id the claim
// chose: guarded, only while no other sweep holds the database; otherwise
// (a sweep starting over under another id) in place of the claim this
// sweep holds, only while it still holds it, and the claim moves to it.
func (s *sweep) recordNew(ctx context.Context, q memdb.Querier, c store.LeaseClaim, guarded bool) error {
	guard, args := ` WHERE NOT EXISTS (SELECT 1 FROM mem_sweeps WHERE `+store.HeldSQL+`)`, []any(nil)
	if !guarded {
		// The old row may be marked interrupted already, in this transaction.
		guard = ` WHERE EXISTS (SELECT 1 FROM mem_sweeps WHERE id = ? AND owner = ?)
			AND NOT EXISTS (SELECT 1 FROM mem_sweeps WHERE id > ? AND id != ?)`
		args = []any{s.claim.ID, s.claim.Owner, s.claim.ID, c.ID}
		c.Owner = s.claim.Owner
	}
	_, err := q.ExecContext(ctx, `INSERT INTO mem_sweeps (id, started_at, clock_hours, dry_run, status, lease_until, owner)
		SELECT ?, ?, ?, 0, 'running', ?, ?`+guard, append([]any{c.ID, time.Now().Unix(), s.clock.Hours, c.Until, c.Owner}, args...)...)
	if err == nil && !guarded {
		s.claim = c
	}
	return err
}

// Guard is the fence as one statement, for a write a replica sends
// outside a transaction.
func (s *sweep) Guard() (string, []any) {
	return store.GuardSQL, []any{s.claim.ID, s.claim.Owner, s.claim.ID}
}

// Beat fences a write transaction and extends the lease in it.
func (s *sweep) Beat(ctx context.Context, q memdb.Querier) error {
	query, args := s.Guard()
	if _, err := q.ExecContext(ctx, query, args...); err != nil {
		return err
	}
	_, err := q.ExecContext(ctx, `UPDATE mem_sweeps SET lease_until = ? WHERE id = ? AND owner = ?`,
		s.leaseUntil(), s.claim.ID, s.claim.Owner)
	return err
}

// Lost makes err, from a write that failed, ErrLeaseLost when the sweep no
// longer holds the database (the guard failed it, or a statement before
// it met a working table the sweep that took over rebuilt).
func (s *sweep) Lost(ctx context.Context, q memdb.Querier, err error) error {
	if err == nil || ctx.Err() != nil || errors.Is(err, store.ErrLeaseLost) {
		return err
	}
	var n int64
	if qerr := q.QueryRowContext(ctx, `SELECT count(*) FROM mem_sweeps WHERE id = ? AND owner = ? AND status IN ('running', 'done')
		AND NOT EXISTS (SELECT 1 FROM mem_sweeps WHERE id > ?)`, s.claim.ID, s.claim.Owner, s.claim.ID).Scan(&n); qerr != nil || n == 1 {
		return err
	}
	s.held = false
	var other int64
	var owner string
	if q.QueryRowContext(ctx, `SELECT id, coalesce(owner, '?') FROM mem_sweeps WHERE id >= ? ORDER BY id DESC LIMIT 1`,
		s.claim.ID).Scan(&other, &owner) != nil {
		other, owner = s.claim.ID, "?"
	}
	took := fmt.Sprintf("sweep %d was taken over by %s", other, owner)
	if other != s.claim.ID {
		took = fmt.Sprintf("sweep %d by %s took its place", other, owner)
	}
	// Another sweep has the database: like ErrSweepRunning, try later.
	return &store.LaterError{Errs: []error{store.ErrLeaseLost}, Msg: fmt.Sprintf(
		"%v: sweep %d went more than its lease (%v) without a heartbeat, and %s; it stopped without writing more",
		store.ErrLeaseLost, s.claim.ID, cmp.Or(s.opt.lease, LeaseDuration), took)}
}

// finishLease records how a sweep that failed or was stopped ended, when
// it still holds the database.
func (s *sweep) finishLease(ctx context.Context, status string) {
	if !s.held {
		return
	}
	q := s.db.Querier()
	q.ExecContext(ctx, "ROLLBACK") // harmless when no transaction is open
	s.recordSweep(ctx, q, status)
}

// release lets go of the database once a done sweep has settled.
func (s *sweep) release(ctx context.Context) error {
	if !s.held {
		return nil
	}
	_, err := s.db.Querier().ExecContext(ctx, `UPDATE mem_sweeps SET finished_at = ? WHERE id = ? AND owner = ? AND status = 'done'`,
		time.Now().Unix(), s.claim.ID, s.claim.Owner)
	return err
}

// recordSweep stores the sweep's status and report in its mem_sweeps row,
// while the sweep holds it. A failed or interrupted sweep lets go of the
// database; a done one keeps it until it has settled (release), and never
// goes back to failed: its work is recorded.
func (s *sweep) recordSweep(ctx context.Context, q memdb.Querier, status string) error {
	s.report.DurationMS = time.Since(s.start).Milliseconds()
	result, err := json.Marshal(s.report)
	if err != nil {
		return err
	}
	var finished any = time.Now().Unix()
	if status == "done" {
		finished = nil
	}
	_, err = q.ExecContext(ctx, `UPDATE mem_sweeps SET status = ?, finished_at = ?, result = ?
		WHERE id = ? AND owner = ? AND status IN ('running', ?)`,
		status, finished, string(result), s.claim.ID, s.claim.Owner, status)
	return err
}
