package store

import (
	"bytes"
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

// HeldSQL is the rows that hold the database while their lease lasts: a
// running sweep, or a done one still settling.
const HeldSQL = `(status = 'running' OR status = 'done' AND finished_at IS NULL)`

// LeaseClaim is the mem_sweeps row a sweep wrote to claim the database.
type LeaseClaim struct {
	ID, Until int64
	Owner     string
}

// Check fails with ErrSweepRunning when another sweep's claim won.
func (c LeaseClaim) Check(ctx context.Context, q memdb.Querier) error {
	var n int64
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM mem_sweeps WHERE id = ? AND status = 'running' AND owner = ? AND lease_until = ?`,
		c.ID, c.Owner, c.Until).Scan(&n)
	if err != nil || n == 1 {
		return err
	}
	if err := RefuseLiveSweep(ctx, q); err != nil {
		return err
	}
	return fmt.Errorf("%w: another sweep claimed it at the same moment; try again when it finishes", memdb.ErrSweepRunning)
}

// DeadSweeps lists the sweeps still holding the database whose worker is
// gone (lease expired, or a process on this machine that died), or fails
// with ErrSweepRunning while another worker's lease is live.
func DeadSweeps(ctx context.Context, q memdb.Querier) ([]int64, error) {
	if err := RefuseLiveSweep(ctx, q); err != nil {
		return nil, err
	}
	return memdb.QueryAll(ctx, q, `SELECT id FROM mem_sweeps WHERE `+HeldSQL, func(r *sql.Rows, id *int64) error { return r.Scan(id) })
}

// JSONIDs is ids as a JSON array, for json_each.
func JSONIDs(ids []int64) string {
	b, _ := json.Marshal(ids)
	return string(b)
}

// NextSweepID is the id the next sweep row takes: chosen before the write,
// so a replica's transaction need not read it back.
func NextSweepID(ctx context.Context, q memdb.Querier) (int64, error) {
	var id int64
	err := q.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) + 1 FROM mem_sweeps`).Scan(&id)
	return id, err
}

// RefuseLiveSweep fails with ErrSweepRunning while another worker's lease
// is live. A worker on this machine that died (kill -9) holds no lease.
func RefuseLiveSweep(ctx context.Context, q memdb.Querier) error {
	rows, err := q.QueryContext(ctx, `SELECT id, coalesce(owner, '?'), started_at, status FROM mem_sweeps
		WHERE `+HeldSQL+` AND lease_until > ? ORDER BY id DESC`, time.Now().Unix())
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
			memdb.ErrSweepRunning, other, owner, time.Unix(started, 0).UTC().Format(time.RFC3339), what)
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
	return RefuseLiveSweep(ctx, conn)
}

// GuardSQL fails (mem_sweeps.started_at is NOT NULL) unless the sweep's
// row still holds its owner and is running or done, and no later sweep
// was recorded: a sweep that took over either rewrote the owner (resuming
// this sweep's plan) or recorded a new sweep. Its arguments: id, owner, id.
const GuardSQL = `INSERT INTO mem_sweeps (id, started_at, status) SELECT NULL, NULL, 'running'
	WHERE NOT EXISTS (SELECT 1 FROM mem_sweeps WHERE id = ? AND owner = ? AND status IN ('running', 'done'))
	   OR EXISTS (SELECT 1 FROM mem_sweeps WHERE id > ?)`

// ThisProcess names this worker in a lease: its pid and host for people,
// then what tells a process of this machine apart from any other: this
// boot's random id, the pid namespace and the process's start time
// (ownerGone reads them back).
func ThisProcess() string {
	host, _ := os.Hostname()
	pid := os.Getpid()
	boot, ns := Machine()
	return OwnerName(pid, host, boot, ns, ProcessStart(pid))
}

// OwnerName is the owner thisProcess writes for a process.
func OwnerName(pid int, host, boot, ns, start string) string {
	return fmt.Sprintf("pid %d on %s (boot %s, %s, start %s)", pid, host, boot, ns, start)
}

// WithRunID makes an owner unique to one claim: the random id of this run.
func WithRunID(owner string) string {
	var b [8]byte
	rand.Read(b[:])
	return owner + " run " + hex.EncodeToString(b[:])
}

// Machine is this boot's random id and this process's pid namespace: the
// pid of an owner with both is a process here. Empty when unknown (not
// Linux): no owner is then provably local.
func Machine() (boot, ns string) {
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

// ProcessStart is when process pid started, in clock ticks since boot
// (/proc/PID/stat, field 22), or "" when there is no such process.
func ProcessStart(pid int) string {
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
	boot, ns := Machine()
	if boot == "" || m[2] != boot || m[3] != ns || m[4] == "" {
		return false
	}
	pid, err := strconv.Atoi(m[1])
	if err != nil || pid <= 0 {
		return false
	}
	return ProcessStart(pid) != m[4]
}
