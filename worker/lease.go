package worker

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/memdecay/memdecay/worker/internal/memdb"
)

// The lease: one sweep at a time per database. A sweep's row in mem_sweeps
// holds its owner (unique to the sweep: a random id per claim) and
// lease_until, extended in every transaction it writes. It holds the
// database while its status is 'running', and after it is done while it
// settles (finished_at is set when it lets go). A lease whose heartbeat
// stopped expires and the next sweep takes over; so does one whose owner
// is provably a dead process on this machine. Every write of a sweep is
// fenced: a guard in the same transaction fails it once another sweep has
// taken the sweep's place (see guardSQL), so a worker paused past its
// lease cannot write beside the one that took over.

// ErrLeaseLost: the sweep stopped because another sweep took its place
// (it was paused or cut off past its lease); it wrote nothing more.
var ErrLeaseLost = errors.New("this sweep lost its lease")

// heldSQL is the rows that hold the database while their lease lasts: a
// running sweep, or a done one still settling.
const heldSQL = `(status = 'running' OR status = 'done' AND finished_at IS NULL)`

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
		// The dead: a running sweep is interrupted, a settling one let go.
		if _, err := q.ExecContext(ctx, `UPDATE mem_sweeps
			SET status = CASE status WHEN 'running' THEN 'interrupted' ELSE status END, finished_at = ?
			WHERE `+heldSQL+` AND id IN (SELECT value FROM json_each(?))`, time.Now().Unix(), jsonIDs(dead)); err != nil {
			return err
		}
		claim = leaseClaim{id: s.report.SweepID, owner: s.opt.Owner, until: s.leaseUntil()}
		if s.resume {
			_, err = q.ExecContext(ctx, `UPDATE mem_sweeps SET status = 'running', finished_at = NULL, lease_until = ?, owner = ?
				WHERE id = ? AND NOT EXISTS (SELECT 1 FROM mem_sweeps WHERE `+heldSQL+`)`, claim.until, claim.owner, claim.id)
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
	s.claim, s.held = claim, true
	s.db.hold(s)
	return nil
}

// leaseUntil is when a lease extended now expires.
func (s *sweep) leaseUntil() int64 {
	return time.Now().Add(cmp.Or(s.opt.lease, LeaseDuration)).Unix()
}

// leaseClaim is the mem_sweeps row a sweep wrote to claim the database.
type leaseClaim struct {
	id, until int64
	owner     string
}

// check fails with ErrSweepRunning when another sweep's claim won.
func (c leaseClaim) check(ctx context.Context, q memdb.Querier) error {
	var n int64
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM mem_sweeps WHERE id = ? AND status = 'running' AND owner = ? AND lease_until = ?`,
		c.id, c.owner, c.until).Scan(&n)
	if err != nil || n == 1 {
		return err
	}
	if err := refuseLiveSweep(ctx, q); err != nil {
		return err
	}
	return fmt.Errorf("%w: another sweep claimed it at the same moment; try again when it finishes", ErrSweepRunning)
}

// deadSweeps lists the sweeps still holding the database whose worker is
// gone (lease expired, or a process on this machine that died), or fails
// with ErrSweepRunning while another worker's lease is live.
func deadSweeps(ctx context.Context, q memdb.Querier) ([]int64, error) {
	if err := refuseLiveSweep(ctx, q); err != nil {
		return nil, err
	}
	return memdb.QueryAll(ctx, q, `SELECT id FROM mem_sweeps WHERE `+heldSQL, func(r *sql.Rows, id *int64) error { return r.Scan(id) })
}

// jsonIDs is ids as a JSON array, for json_each.
func jsonIDs(ids []int64) string {
	b, _ := json.Marshal(ids)
	return string(b)
}

// nextSweepID is the id the next sweep row takes: chosen before the write,
// so a replica's transaction need not read it back.
func nextSweepID(ctx context.Context, q memdb.Querier) (int64, error) {
	var id int64
	err := q.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) + 1 FROM mem_sweeps`).Scan(&id)
	return id, err
}

// refuseLiveSweep fails with ErrSweepRunning while another worker's lease
// is live. A worker on this machine that died (kill -9) holds no lease.
func refuseLiveSweep(ctx context.Context, q memdb.Querier) error {
	rows, err := q.QueryContext(ctx, `SELECT id, coalesce(owner, '?'), started_at, status FROM mem_sweeps
		WHERE `+heldSQL+` AND lease_until > ? ORDER BY id DESC`, time.Now().Unix())
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var other, started int64
		var owner, status string
		if err := rows.Scan(&other, &owner, &started, &status); err != nil {
			return err
		}
		if ownerGone(owner) {
			continue
		}
		what := "running"
		if status == "done" {
			what = "done and settling"
		}
		return fmt.Errorf("%w: sweep %d by %s since %s (%s); try again when it finishes",
			ErrSweepRunning, other, owner, time.Unix(started, 0).UTC().Format(time.RFC3339), what)
	}
	return rows.Err()
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
func (s *sweep) findResumable(ctx context.Context, q memdb.Querier, dead []int64) error {
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
// chose: guarded, only while no other sweep holds the database; otherwise
// (a sweep starting over under another id) in place of the claim this
// sweep holds, only while it still holds it, and the claim moves to it.
func (s *sweep) recordNew(ctx context.Context, q memdb.Querier, c leaseClaim, guarded bool) error {
	guard, args := ` WHERE NOT EXISTS (SELECT 1 FROM mem_sweeps WHERE `+heldSQL+`)`, []any(nil)
	if !guarded {
		// The old row may be marked interrupted already, in this transaction.
		guard = ` WHERE EXISTS (SELECT 1 FROM mem_sweeps WHERE id = ? AND owner = ?)
			AND NOT EXISTS (SELECT 1 FROM mem_sweeps WHERE id > ? AND id != ?)`
		args = []any{s.claim.id, s.claim.owner, s.claim.id, c.id}
		c.owner = s.claim.owner
	}
	_, err := q.ExecContext(ctx, `INSERT INTO mem_sweeps (id, started_at, clock_hours, dry_run, status, lease_until, owner)
		SELECT ?, ?, ?, 0, 'running', ?, ?`+guard, append([]any{c.id, time.Now().Unix(), s.clock.Hours, c.until, c.owner}, args...)...)
	if err == nil && !guarded {
		s.claim = c
	}
	return err
}

// guardSQL fails (mem_sweeps.started_at is NOT NULL) unless the sweep's
// row still holds its owner and is running or done, and no later sweep
// was recorded: a sweep that took over either rewrote the owner (resuming
// this sweep's plan) or recorded a new sweep. Its arguments: id, owner, id.
const guardSQL = `INSERT INTO mem_sweeps (id, started_at, status) SELECT NULL, NULL, 'running'
	WHERE NOT EXISTS (SELECT 1 FROM mem_sweeps WHERE id = ? AND owner = ? AND status IN ('running', 'done'))
	   OR EXISTS (SELECT 1 FROM mem_sweeps WHERE id > ?)`

// guard is the fence as one statement, for a write a replica sends
// outside a transaction.
func (s *sweep) guard() (string, []any) {
	return guardSQL, []any{s.claim.id, s.claim.owner, s.claim.id}
}

// beat fences a write transaction and extends the lease in it.
func (s *sweep) beat(ctx context.Context, q memdb.Querier) error {
	query, args := s.guard()
	if _, err := q.ExecContext(ctx, query, args...); err != nil {
		return err
	}
	_, err := q.ExecContext(ctx, `UPDATE mem_sweeps SET lease_until = ? WHERE id = ? AND owner = ?`,
		s.leaseUntil(), s.claim.id, s.claim.owner)
	return err
}

// lost makes err, from a write that failed, ErrLeaseLost when the sweep no
// longer holds the database (the guard failed it, or a statement before
// it met a working table the sweep that took over rebuilt).
func (s *sweep) lost(ctx context.Context, q memdb.Querier, err error) error {
	if err == nil || ctx.Err() != nil || errors.Is(err, ErrLeaseLost) {
		return err
	}
	var n int64
	if qerr := q.QueryRowContext(ctx, `SELECT count(*) FROM mem_sweeps WHERE id = ? AND owner = ? AND status IN ('running', 'done')
		AND NOT EXISTS (SELECT 1 FROM mem_sweeps WHERE id > ?)`, s.claim.id, s.claim.owner, s.claim.id).Scan(&n); qerr != nil || n == 1 {
		return err
	}
	s.held = false
	var other int64
	var owner string
	if q.QueryRowContext(ctx, `SELECT id, coalesce(owner, '?') FROM mem_sweeps WHERE id >= ? ORDER BY id DESC LIMIT 1`,
		s.claim.id).Scan(&other, &owner) != nil {
		other, owner = s.claim.id, "?"
	}
	took := fmt.Sprintf("sweep %d was taken over by %s", other, owner)
	if other != s.claim.id {
		took = fmt.Sprintf("sweep %d by %s took its place", other, owner)
	}
	// Another sweep has the database: like ErrSweepRunning, try later.
	return &laterError{errs: []error{ErrLeaseLost}, msg: fmt.Sprintf(
		"%v: sweep %d went more than its lease (%v) without a heartbeat, and %s; it stopped without writing more",
		ErrLeaseLost, s.claim.id, cmp.Or(s.opt.lease, LeaseDuration), took)}
}

// finishLease records how a sweep that failed or was stopped ended, when
// it still holds the database.
func (s *sweep) finishLease(ctx context.Context, status string) {
	if !s.held {
		return
	}
	q := s.db.querier()
	q.ExecContext(ctx, "ROLLBACK") // harmless when no transaction is open
	s.recordSweep(ctx, q, status)
}

// release lets go of the database once a done sweep has settled.
func (s *sweep) release(ctx context.Context) error {
	if !s.held {
		return nil
	}
	_, err := s.db.querier().ExecContext(ctx, `UPDATE mem_sweeps SET finished_at = ? WHERE id = ? AND owner = ? AND status = 'done'`,
		time.Now().Unix(), s.claim.id, s.claim.owner)
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
		status, finished, string(result), s.claim.id, s.claim.owner, status)
	return err
}

// thisProcess names this worker in a lease: its pid and host for people,
// then what tells a process of this machine apart from any other: this
// boot's random id, the pid namespace and the process's start time
// (ownerGone reads them back).
func thisProcess() string {
	host, _ := os.Hostname()
	pid := os.Getpid()
	boot, ns := machine()
	return ownerName(pid, host, boot, ns, processStart(pid))
}

// ownerName is the owner thisProcess writes for a process.
func ownerName(pid int, host, boot, ns, start string) string {
	return fmt.Sprintf("pid %d on %s (boot %s, %s, start %s)", pid, host, boot, ns, start)
}

// withRunID makes an owner unique to one claim: the random id of this run.
func withRunID(owner string) string {
	var b [8]byte
	rand.Read(b[:])
	return owner + " run " + hex.EncodeToString(b[:])
}

// machine is this boot's random id and this process's pid namespace: the
// pid of an owner with both is a process here. Empty when unknown (not
// Linux): no owner is then provably local.
func machine() (boot, ns string) {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", ""
	}
	ns, err = os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return "", ""
	}
	return strings.TrimSpace(string(b)), ns
}

// processStart is when process pid started, in clock ticks since boot
// (/proc/PID/stat, field 22), or "" when there is no such process.
func processStart(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	// The command name, in parentheses, may hold spaces: fields count
	// from the last ')'; the start time is the 20th after it.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return ""
	}
	return f[19]
}

// localOwner reads an owner thisProcess wrote: its pid and start time,
// when it names this boot and this pid namespace.
var localOwner = regexp.MustCompile(`^pid (\d+) on .* \(boot (\S+), (\S+), start (\d*)\)( run [0-9a-f]+)?$`)

// ownerGone reports whether a lease's owner was provably a process of
// this machine (same boot id and pid namespace) that no longer runs: no
// process has its pid, or one started at another time does (the pid was
// reused). Its lease is void. Any other owner — another machine, even
// under the same host name, or an owner this cannot read — keeps its
// lease until its heartbeat is older than the lease.
func ownerGone(owner string) bool {
	m := localOwner.FindStringSubmatch(owner)
	if m == nil {
		return false
	}
	boot, ns := machine()
	if boot == "" || m[2] != boot || m[3] != ns || m[4] == "" {
		return false
	}
	pid, err := strconv.Atoi(m[1])
	if err != nil || pid <= 0 {
		return false
	}
	return processStart(pid) != m[4]
}
