package worker

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"
)

// The lease: one sweep at a time per database. A sweep's row in mem_sweeps
// holds status 'running', its owner and lease_until, extended in every
// transaction it writes; a crashed worker's lease expires (or, on this
// host, dies with its process) and the next sweep takes over.

// acquireLease claims the database for this sweep, or fails with
// ErrSweepRunning while another worker's lease is live. When the last
// sweep at this clock was cut off after saving its plan, this sweep takes
// its place and finishes that plan. Everything it decides it reads first
// and writes as conditional statements, so the claim holds on a replica,
// where a transaction's reads cannot see its own writes: a sweep that
// claimed the database between the reads and the writes wins, and this one
// finds its claim missing.
func (s *sweep) acquireLease(ctx context.Context) error {
	var claim leaseClaim
	err := s.db.inTx(ctx, func() error {
		q := s.db.querier()
		dead, err := deadSweeps(ctx, q)
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
			if s.report.SweepID, err = nextSweepID(ctx, q); err != nil {
				return err
			}
		}
		if _, err := q.ExecContext(ctx, `UPDATE mem_sweeps SET status = 'interrupted', finished_at = ?
			WHERE status = 'running' AND id IN (SELECT value FROM json_each(?))`, time.Now().Unix(), jsonIDs(dead)); err != nil {
			return err
		}
		claim = leaseClaim{id: s.report.SweepID, owner: s.opt.Owner, until: time.Now().Add(LeaseDuration).Unix()}
		if s.resume {
			_, err = q.ExecContext(ctx, `UPDATE mem_sweeps SET status = 'running', finished_at = NULL, lease_until = ?, owner = ?
				WHERE id = ? AND NOT EXISTS (SELECT 1 FROM mem_sweeps WHERE status = 'running')`, claim.until, claim.owner, claim.id)
			return err
		}
		return s.recordNew(ctx, q, claim, true)
	})
	if err != nil {
		return err
	}
	if err := claim.check(ctx, s.db.querier()); err != nil {
		return err
	}
	s.db.onCommit(s.heartbeat)
	return nil
}

// leaseClaim is the mem_sweeps row a sweep wrote to claim the database.
type leaseClaim struct {
	id, until int64
	owner     string
}

// check fails with ErrSweepRunning when another sweep's claim won.
func (c leaseClaim) check(ctx context.Context, q querier) error {
	var n int64
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM mem_sweeps WHERE id = ? AND status = 'running' AND owner = ? AND lease_until = ?`,
		c.id, c.owner, c.until).Scan(&n)
	if err != nil || n == 1 {
		return err
	}
	return refuseLiveSweep(ctx, q)
}

// deadSweeps lists the sweeps still marked running whose worker is gone
// (lease expired, or a process on this host that died), or fails with
// ErrSweepRunning while another worker's lease is live.
func deadSweeps(ctx context.Context, q querier) ([]int64, error) {
	if err := refuseLiveSweep(ctx, q); err != nil {
		return nil, err
	}
	return queryAll(ctx, q, `SELECT id FROM mem_sweeps WHERE status = 'running'`, func(r *sql.Rows, id *int64) error { return r.Scan(id) })
}

// jsonIDs is ids as a JSON array, for json_each.
func jsonIDs(ids []int64) string {
	b, _ := json.Marshal(ids)
	return string(b)
}

// nextSweepID is the id the next sweep row takes: chosen before the write,
// so a replica's transaction need not read it back.
func nextSweepID(ctx context.Context, q querier) (int64, error) {
	var id int64
	err := q.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) + 1 FROM mem_sweeps`).Scan(&id)
	return id, err
}

// refuseLiveSweep fails with ErrSweepRunning while another worker's lease
// is live. A worker on this machine that died (kill -9) holds no lease.
func refuseLiveSweep(ctx context.Context, q querier) error {
	var other, started int64
	var owner string
	err := q.QueryRowContext(ctx, `SELECT id, coalesce(owner, '?'), started_at FROM mem_sweeps
		WHERE status = 'running' AND lease_until > ? ORDER BY id DESC LIMIT 1`, time.Now().Unix()).Scan(&other, &owner, &started)
	switch {
	case errors.Is(err, sql.ErrNoRows) || err == nil && ownerGone(owner):
		return nil
	case err != nil:
		return err
	}
	return fmt.Errorf("%w: sweep %d by %s since %s; try again when it finishes",
		ErrSweepRunning, other, owner, time.Unix(started, 0).UTC().Format(time.RFC3339))
}

// NoSweepRunning is the migrations' guard: the schema does not change
// under a running sweep. It runs inside the migration's transaction, so no
// sweep can claim the file between the check and the change.
func NoSweepRunning(ctx context.Context, conn *sql.Conn) error {
	var tables int
	err := conn.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'mem_sweeps'`).Scan(&tables)
	if err != nil || tables == 0 {
		return err
	}
	return refuseLiveSweep(ctx, conn)
}

// findResumable finds the saved plan of a sweep cut off at this clock (one
// interrupted, failed, or among the dead), to take it over.
func (s *sweep) findResumable(ctx context.Context, q querier, dead []int64) error {
	var plan string
	err := q.QueryRowContext(ctx, `SELECT id, plan FROM mem_sweeps
		WHERE (status IN ('interrupted', 'failed') OR id IN (SELECT value FROM json_each(?)))
		  AND plan IS NOT NULL AND clock_hours = ? AND NOT dry_run
		  AND id > coalesce((SELECT max(id) FROM mem_sweeps WHERE status = 'done'), 0)
		ORDER BY id DESC LIMIT 1`, jsonIDs(dead), s.clock.Hours).Scan(&s.report.SweepID, &plan)
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
// chose; guarded, only while no other sweep is running.
func (s *sweep) recordNew(ctx context.Context, q querier, c leaseClaim, guarded bool) error {
	guard := ""
	if guarded {
		guard = ` WHERE NOT EXISTS (SELECT 1 FROM mem_sweeps WHERE status = 'running')`
	}
	_, err := q.ExecContext(ctx, `INSERT INTO mem_sweeps (id, started_at, clock_hours, dry_run, status, lease_until, owner)
		SELECT ?, ?, ?, 0, 'running', ?, ?`+guard, c.id, time.Now().Unix(), s.clock.Hours, c.until, c.owner)
	return err
}

// heartbeat extends the lease, inside each of the sweep's transactions.
func (s *sweep) heartbeat(ctx context.Context, q querier) error {
	_, err := q.ExecContext(ctx, `UPDATE mem_sweeps SET lease_until = ? WHERE id = ?`,
		time.Now().Add(LeaseDuration).Unix(), s.report.SweepID)
	return err
}

// finishLease records how a sweep that failed or was stopped ended.
func (s *sweep) finishLease(ctx context.Context, status string) {
	q := s.db.querier()
	q.ExecContext(ctx, "ROLLBACK") // harmless when no transaction is open
	s.recordSweep(ctx, q, status)
}

// recordSweep stores the sweep's status and report in its mem_sweeps row.
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
