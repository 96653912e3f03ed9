package store

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/mattn/go-sqlite3"
	"github.com/memdecay/memdecay/worker/internal/memdb"
)

// pacing is the transaction pacer's state on a file: what it has seen of
// other connections' writes and of its own transactions.
type pacing struct {
	dataVersion   int64         // PRAGMA data_version when last read (see noteOthers)
	inTransaction bool          // inside inTx or inRead
	took          time.Time     // when the inTx under way took the write lock
	held          time.Duration // how long the last inTx held the write lock
	committed     time.Time     // when the last inTx committed
	othersWrote   time.Time     // when another connection's commit was last seen
	// turnSince: when the sweep took the lock after leaving it free long
	// enough for any app waiting for it (turnGap); an app still waiting
	// began no earlier.
	turnSince time.Time
	// alone: a transaction began without a turn left free, as no other
	// process had the file open (turnsNeeded).
	alone bool
	// broken: the connection could not be set back as the sweep needs it
	// (its busy timeout); the next transaction fails with it.
	broken error
}

// Pacing constants. othersQuiet: how long after another connection's
// commit the sweep still takes ChunkSize rows per transaction. longRead: a
// statement of its own longer than this is followed by a checkpoint.
// maxYield: the most time the lock is left free after a commit while an
// app writes. checkpointFrames: 64 MiB of WAL, in 4 KiB pages, past which
// a WAL that keeps growing is restarted, waiting at most checkpointWaitMS.
// copierFrames: how long the WAL may grow while the copier keeps up with
// the sweep's commits (the WAL starts over only at a transaction that
// begins once all of it is copied) before the sweep waits for it.
const (
	othersQuiet      = 2 * time.Second
	longRead         = 100 * time.Millisecond
	maxYield         = 100 * time.Millisecond
	checkpointFrames = 16384
	copierFrames     = 4 * checkpointFrames
	checkpointWaitMS = 50
)

// SyncChunkFactor: a sync writes only worker-owned rows, so while no app
// writes its transactions take a few chunks' worth of rows (see chunkRows).
const SyncChunkFactor = 4

// InTx runs f in one write transaction on the sweep's connection
// (runTx), then checkpoints and leaves the lock free as long as the
// transaction held it.
func (st *fileStore) InTx(ctx context.Context, f func() error) error {
	p := &st.pacing
	if p.broken != nil {
		return p.broken
	}
	if st.bulk {
		return st.inBulk(ctx, f)
	}
	pause, turn := st.opt.Pause, st.turnsNeeded()
	if !turn {
		pause = 0
	}
	return runTx(ctx, txHooks{conn: st.conn, q: st.conn, fence: st.fence, pause: pause, last: p.committed,
		begin: func() error { return st.beginImmediate(ctx, turn) },
		begun: func() {
			p.inTransaction, p.took, st.execRows = true, time.Now(), 0
			if p.turnSince.IsZero() || p.took.Sub(p.committed) >= turnGap(p.committed.Sub(p.turnSince)) {
				p.turnSince = p.took
			}
			st.noteOthers(ctx)
		},
		ended: func() { p.inTransaction, p.took = false, time.Time{} },
		committed: func(began time.Time) error {
			committed := time.Now()
			p.held, p.committed = committed.Sub(began), committed
			st.lastChanged = st.execRows
			st.checkpoint(context.WithoutCancel(ctx))
			st.yieldLock(ctx, committed, p.held)
			return nil
		},
	}, f)
}

// lockPoll is how often a sweep waiting for the write lock tries to take
// it while no other connection commits (one holds it all along);
// lockSpin is how long, after it sees another connection commit, it tries
// without sleeping (beginImmediate).
const (
	lockPoll = time.Millisecond
	lockSpin = 20 * time.Millisecond
)

// beginImmediate takes the write lock, waiting at most BusyTimeoutMS. An
// app that commits short transactions back to back leaves the lock free
// only for moments between them; SQLite's busy handler retries at growing
// intervals, up to 100 ms apart, and lands in one of those moments seldom
// enough to give up after BusyTimeoutMS with the lock never held that
// long. So the sweep tries itself, without the busy handler: every
// lockPoll while the lock stays held, and without sleeping for lockSpin
// after each commit it sees (PRAGMA data_version), so that it takes the
// lock in the moment after one. If it still gives up, its error says
// which it was: a lock held all along, or others' commits one after the
// other.
//
// turn: an app may be waiting for the lock, and is left it for as long as
// it needs (turnGap) while the copier copies the last commit; otherwise
// the copy goes on beside the transaction.
func (st *fileStore) beginImmediate(ctx context.Context, turn bool) (err error) {
	if p := &st.pacing; turn && st.copier != nil && !p.committed.IsZero() {
		st.copier.awaitCopyUntil(p.committed.Add(turnGap(p.committed.Sub(p.turnSince))))
	}
	if err := st.setBusyTimeout(ctx, 0); err != nil {
		return err
	}
	defer func() {
		if restoreErr := st.setBusyTimeout(context.WithoutCancel(ctx), memdb.BusyTimeoutMS); restoreErr != nil {
			if err == nil {
				st.conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
			}
			err = restoreErr
		}
	}()
	began := time.Now()
	var first, version int64
	st.conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&first)
	version = first
	var spinUntil time.Time
	tries := 0
	for {
		_, err := st.conn.ExecContext(ctx, "BEGIN IMMEDIATE")
		var se sqlite3.Error
		if err == nil || !errors.As(err, &se) || se.Code != sqlite3.ErrBusy {
			return err
		}
		tries++
		now := time.Now()
		if now.Sub(began) >= memdb.BusyTimeoutMS*time.Millisecond {
			break
		}
		var v int64
		if st.conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v) == nil && v != version {
			version, spinUntil = v, now.Add(lockSpin)
		}
		if now.Before(spinUntil) {
			if err := ctx.Err(); err != nil {
				return err
			}
			runtime.Gosched()
			continue
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(lockPoll):
		}
	}
	if version != first {
		st.pacing.othersWrote = time.Now()
		return &LaterError{Msg: fmt.Sprintf("%v at none of %d tries in %d ms: other connections committed one transaction after another, "+
			"leaving it free too briefly between them; try again later, or leave the lock free a moment between the app's writes",
			errNoTurn, tries, memdb.BusyTimeoutMS), Errs: []error{ErrDatabaseBusy}}
	}
	return &LaterError{Msg: fmt.Sprintf("%v for more than %d ms (it was free at none of %d tries); try again later", ErrDatabaseBusy, memdb.BusyTimeoutMS, tries),
		Errs: []error{ErrDatabaseBusy}}
}

// turnsNeeded says whether the sweep leaves the write lock free between
// its transactions (Pause, turnGap): only for an app that might be
// waiting for it. None can be when the sweep has its process to itself
// (OwnProcess) and no other process has the file open (othersHaveOpen).
func (st *fileStore) turnsNeeded() bool {
	if !st.opt.OwnProcess || othersHaveOpen(st.shmPath) {
		return true
	}
	if !st.pacing.alone {
		st.pacing.alone = true
		Tracef("no other process has the file open: transactions back to back")
	}
	return false
}

// busyHandlerSleeps are the sleeps between the tries of SQLite's default
// busy handler (sqliteDefaultBusyCallback), which sqlite3_busy_timeout
// installs: so an app waits for the lock through Go's drivers, Python's
// sqlite3 and the sqlite3 shell. After the last, it sleeps as long again.
var busyHandlerSleeps = [...]time.Duration{1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100}

// turnSlack is the time an app woken from its busy handler's sleep takes
// to be scheduled and try the lock, on a loaded machine.
const turnSlack = 5 * time.Millisecond

// turnGap is how long the write lock must stay free after the sweep
// commits for an app that has waited at most waited for it to take it:
// the longest sleep its busy handler can have begun by then (each retry
// then lands inside the gap), and turnSlack. An app that waited through a
// transaction of 300 ms needs 100 ms; one that arrived 40 ms before a
// commit, 20 ms.
func turnGap(waited time.Duration) time.Duration {
	var slept, gap time.Duration
	for _, sleep := range busyHandlerSleeps {
		if slept > waited {
			break
		}
		gap, slept = sleep*time.Millisecond, slept+sleep*time.Millisecond
	}
	return gap + turnSlack
}

// errNoTurn begins the error of a sweep that found the write lock taken
// at every try while others committed.
var errNoTurn = errors.New("the sweep found the database's write lock free")

// pauseAfter waits until pause has passed since the last commit (none
// before the first), so a writer waiting for the lock gets it.
func pauseAfter(ctx context.Context, committed time.Time, pause time.Duration) error {
	wait := pause - time.Since(committed)
	if committed.IsZero() || wait <= 0 {
		return nil
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(wait):
		return nil
	}
}

// InRead runs f in one deferred transaction: a consistent snapshot of the
// file; temp tables are written freely. The WAL could not be copied past
// that snapshot meanwhile, so a real sweep checkpoints as soon as it ends.
func (st *fileStore) InRead(ctx context.Context, end string, f func() error) (err error) {
	if st.bulk {
		return f() // Bulk's transaction is the snapshot
	}
	if _, err := st.conn.ExecContext(ctx, "BEGIN"); err != nil {
		return err
	}
	st.pacing.inTransaction = true
	defer func() {
		st.pacing.inTransaction = false
		if err != nil {
			end = "ROLLBACK"
		}
		if _, cerr := st.conn.ExecContext(context.WithoutCancel(ctx), end); err == nil {
			err = cerr
		}
		if !st.opt.DryRun {
			st.checkpoint(context.WithoutCancel(ctx))
		}
	}()
	return f()
}

// yieldLock leaves an app that writes beside the sweep as long without the
// write lock as the sweep just held it (at most maxYield), counting from
// the commit: SQLite's busy handler retries at growing intervals, up to
// 100 ms apart, and with only short gaps between the sweep's transactions
// an app's retries could keep landing inside the next one.
func (st *fileStore) yieldLock(ctx context.Context, committed time.Time, held time.Duration) {
	if !st.OthersWriting() {
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
// hold up that app's write. While no app writes, the copier does it beside
// the reads that follow the commit, and the next transaction waits for it
// as long as an app's turn needs (copier.go). While one does, or once the copier has let the WAL grow
// past copierFrames, it runs here, while the lock is free (an app's writer
// waiting for its turn gets it), and the next transaction starts the WAL
// over. With an app writing all the time, a passive checkpoint can end a
// step behind its commits, so that the WAL never restarts; the sign is a
// WAL past checkpointFrames and longer than at the checkpoint before, and
// the sweep then restarts it, waiting at most checkpointWaitMS for the
// app's readers. Failing to checkpoint is not an error: a later commit
// tries again. (bench/README.md has the trials.)
func (st *fileStore) checkpoint(ctx context.Context) {
	st.noteOthers(ctx)
	c := st.copier
	if c == nil {
		st.checkpointHere(ctx)
		return
	}
	if !st.OthersWriting() && st.walFrames.Load() < copierFrames {
		c.request()
		return
	}
	c.ckpt.Lock()
	defer c.ckpt.Unlock()
	st.checkpointHere(ctx)
}

// checkpointHere checkpoints on the sweep's connection (checkpoint).
func (st *fileStore) checkpointHere(ctx context.Context) {
	began := time.Now()
	var busy, frames, copied int64
	if st.conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied) != nil {
		return
	}
	TraceTook(fmt.Sprintf("checkpoint (WAL %d frames, %d copied)", frames, copied), began)
	stuck := frames >= checkpointFrames && frames > st.walFrames.Load()
	st.walFrames.Store(frames)
	if !stuck {
		return
	}
	if st.restartWAL(ctx, "RESTART") {
		st.walFrames.Store(0)
	}
}

// restartWAL runs a RESTART or TRUNCATE checkpoint, which waits briefly
// for readers; the sweep's own statements then wait BusyTimeoutMS again.
// A timeout that could not be restored would leave the rest of the sweep
// failing fast beside an app's writes: the sweep stops at its next
// transaction instead (a later sweep resumes it).
func (st *fileStore) restartWAL(ctx context.Context, mode string) (done bool) {
	if err := st.setBusyTimeout(ctx, checkpointWaitMS); err != nil {
		st.pacing.broken = err
		return false
	}
	var busy, frames, copied int64
	done = st.conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint("+mode+")").Scan(&busy, &frames, &copied) == nil && busy == 0
	if err := st.setBusyTimeout(ctx, memdb.BusyTimeoutMS); err != nil {
		st.pacing.broken = err
	}
	return done
}

// setBusyTimeout sets the connection's busy timeout and checks it took.
func (st *fileStore) setBusyTimeout(ctx context.Context, ms int) error {
	var got int
	if err := st.conn.QueryRowContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", ms)).Scan(&got); err != nil {
		return fmt.Errorf("setting busy_timeout: %w", err)
	}
	if got != ms {
		return fmt.Errorf("setting busy_timeout: %d ms asked, %d ms set", ms, got)
	}
	return nil
}

// afterRead checkpoints after a long statement of its own (outside a
// transaction): its read snapshot held the WAL back meanwhile.
func (st *fileStore) afterRead(ctx context.Context, began time.Time) {
	if !st.pacing.inTransaction && !st.opt.DryRun && time.Since(began) > longRead {
		st.checkpoint(context.WithoutCancel(ctx))
	}
}

// noteOthers reads the commits mark (CommitsMark), which changes when
// another connection commits: after the sweep's commits, and once each
// transaction holds the lock, so that its size takes an app's write made
// meanwhile into account.
func (st *fileStore) noteOthers(ctx context.Context) {
	if version, ok := st.CommitsMark(ctx); ok {
		if version != st.pacing.dataVersion {
			st.pacing.othersWrote = time.Now()
		}
		st.pacing.dataVersion = version
	}
}

// OthersWriting reports whether another connection's commit was seen in
// the last othersQuiet.
// No other connection writes inside a bulk sweep's transaction.
func (st *fileStore) OthersWriting() bool {
	return !st.bulk && time.Since(st.pacing.othersWrote) < othersQuiet
}

// chunkRows is the most rows the next transaction of a step takes (see
// txRows), size being its rows per transaction at ChunkSize: scaled by
// SoloChunkSize ÷ ChunkSize while no other connection writes to the file,
// and ChunkSize whatever the step while one does (so an app's write never
// waits through more than its busy handler's first sleeps).
func (st *fileStore) chunkRows(size int) int64 {
	if st.OthersWriting() {
		return int64(min(size, st.opt.ChunkSize))
	}
	if st.opt.SoloChunkSize > st.opt.ChunkSize {
		return int64(size) * int64(st.opt.SoloChunkSize) / int64(st.opt.ChunkSize)
	}
	return int64(size)
}

// txRows sizes the transactions of one step (size: its rows at
// ChunkSize). Beside an app's writes each takes chunkRows; alone, the
// first takes size rows and then, while it still holds the lock, as many
// more as its pace so far fits in SoloHold (Take), and each next one as
// many as the last one's pace fits in SoloHold, up to chunkRows: however
// slow the machine or the rows, no transaction keeps an app that starts
// writing mid-sweep waiting much longer than SoloHold. The first one
// grows in place rather than committing its size rows alone, since each
// commit writes the pages a step's rows share (an index's leaves, the
// block states) once more.
type txRows struct {
	p    txPacer
	size int
	pace float64 // rows per second the last transaction held the lock; 0 before the first
	// whole: inside a bulk sweep's one transaction, a step takes all its
	// rows at once.
	whole bool
}

// txPacer is what txRows needs of a store.
type txPacer interface {
	chunkRows(size int) int64
	OthersWriting() bool
	lastHeld() time.Duration // how long the last transaction held the write lock
	soloHold() time.Duration
	// holding is how long the transaction under way has held the write
	// lock; 0 where its statements' time does not say (a replica sends
	// them in one request).
	holding() time.Duration
}

func (st *fileStore) TxRows(size int) *txRows { return &txRows{p: st, size: size, whole: st.bulk} }
func (st *fileStore) lastHeld() time.Duration { return st.pacing.held }
func (st *fileStore) soloHold() time.Duration { return st.opt.SoloHold }
func (st *fileStore) Snapshots() bool         { return true }
func (st *fileStore) Savepoints() bool        { return true }

// CommitsMark is PRAGMA data_version, which another connection's commit
// changes and the connection's own do not. Read in a transaction, it is
// the version of that transaction's snapshot; one it cannot read is not
// known (ok false).
func (st *fileStore) CommitsMark(ctx context.Context) (int64, bool) {
	var version int64
	if err := st.conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&version); err != nil {
		return 0, false
	}
	return version, true
}

func (st *fileStore) holding() time.Duration {
	if st.pacing.took.IsZero() {
		return 0
	}
	return time.Since(st.pacing.took)
}

// Next is the rows of the transaction that now holds the lock.
func (t *txRows) Next() int64 {
	if t.whole {
		return bulkRows
	}
	bound := t.p.chunkRows(t.size)
	if t.p.OthersWriting() {
		return bound
	}
	return max(int64(t.size), rowsUpTo(bound, t.pace*t.p.soloHold().Seconds()))
}

// more is how many rows past the n it has taken the transaction that
// holds the lock may still take: in a step's first transaction, alone on
// the file, what its pace since it took the lock fits in the rest of
// SoloHold (up to chunkRows), when that is at least a chunk; else none.
func (t *txRows) more(n int64) int64 {
	if t.whole || t.pace > 0 || t.p.OthersWriting() {
		return 0
	}
	held := t.p.holding()
	if held <= 0 {
		return 0
	}
	fit := rowsUpTo(t.p.chunkRows(t.size), float64(n)*t.p.soloHold().Seconds()/held.Seconds())
	if fit-n < int64(t.size) {
		return 0
	}
	return fit - n
}

// Take runs f over the rows of the transaction that holds the lock, from
// lo to at most last: Next of them, then in a step's first transaction
// each further range its pace fits (more), one call of f per range. It
// returns the last row it took, or on an error the last row of the range
// that failed (the transaction then rolls back every range).
func (t *txRows) Take(lo, last int64, f func(lo, hi int64) error) (int64, error) {
	hi := min(lo+t.Next()-1, last)
	if err := f(lo, hi); err != nil {
		return hi, err
	}
	for hi < last {
		more := t.more(hi - lo + 1)
		if more == 0 {
			break
		}
		from := hi + 1
		hi = min(hi+more, last)
		if err := f(from, hi); err != nil {
			return hi, err
		}
	}
	return hi, nil
}

// rowsUpTo is rows as a count, at most bound (compared before converting:
// a pace measured over a very short hold can exceed what an int64 holds).
func rowsUpTo(bound int64, rows float64) int64 {
	if rows >= float64(bound) {
		return bound
	}
	return int64(rows)
}

// Took records the pace of the transaction just committed with n rows.
func (t *txRows) Took(n int64) {
	if held := t.p.lastHeld(); held > 0 {
		t.pace = float64(n) / held.Seconds()
	}
}
