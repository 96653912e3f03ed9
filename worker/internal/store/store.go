package store

import (
	"context"
	"database/sql"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/memdecay/memdecay/worker/internal/memdb"
)

// Store is what a sweep needs of the database it runs on: a statement
// runner and a transaction pacer. The phases and their SQL are written once
// against it; fileStore (a SQLite file: runner.go, pacer.go) and
// replicaStore (every write replicated: rqstore.go) implement it.
type Store interface {
	statementRunner
	transactions
	// Bind gives the store the sweep's bound parameters (:now, :wall, …).
	Bind(args func(extra ...any) []any)
	Close() error
}

// statementRunner runs the named statements of the phase files, counts
// and queries.
type statementRunner interface {
	// Exec runs every statement of a named section of the phase files,
	// binding the sweep's arguments and extra, and returns the rows changed.
	Exec(ctx context.Context, name string, extra ...any) (int64, error)
	// ExecList is exec of a statement list built at run time (label
	// names it in errors), in the tables' dialect.
	ExecList(ctx context.Context, label string, list []string, extra ...any) (int64, error)
	// Count runs a query that returns one integer.
	Count(ctx context.Context, query string, args ...any) (int64, error)
	// Querier reads and writes outside the named statements.
	Querier() memdb.Querier
	// Changed is the rows exec's statements changed in the last committed
	// transaction (a replica knows them only once it has committed).
	Changed() int64
	// Snapshots: derived state can be computed aside at one read snapshot
	// and compared (temp tables); otherwise it is refreshed in place.
	Snapshots() bool
	// DropWorking drops the working tables a replica keeps in main, while
	// the sweep holds the lease (a file's temp tables go with its
	// connection).
	DropWorking(ctx context.Context) error
}

// transactions paces the sweep's writes: bounded write transactions, read
// snapshots, the lock left free for an app's writes, the lease's fence.
type transactions interface {
	// InTx runs f in one bounded write transaction, fenced by the lease
	// and with its heartbeat in it (see hold).
	InTx(ctx context.Context, f func() error) error
	// InRead runs f at one read snapshot, ended by end (COMMIT or ROLLBACK).
	InRead(ctx context.Context, end string, f func() error) error
	// TxRows sizes the transactions of one step of size rows at ChunkSize.
	TxRows(size int) *txRows
	// OthersWriting reports whether another connection wrote lately.
	OthersWriting() bool
	// Hold fences every write from now on with the sweep's lease (nil:
	// the sweep holds none, and writes no working state).
	Hold(f fence)
	// Bulk runs f, a whole sweep, in one write transaction: every InTx
	// and InRead inside it runs in that transaction, with no pause, pacing
	// or checkpoint between them; an error (or a cancellation, even once f
	// has returned) rolls it all back. A replica refuses it
	// (ErrBulkReplica).
	Bulk(ctx context.Context, f func() error) error
	// CommitsMark marks where the other connections' commits to the file
	// stand, read in a transaction: two marks are equal only when no other
	// connection committed between their transactions (the sweep's own
	// commits leave it). ok is false where the store cannot tell (a
	// replica).
	CommitsMark(ctx context.Context) (mark int64, ok bool)
	// Savepoints: a chunk a constraint refuses can be rolled back to a
	// savepoint and retried by halves (refused.go); on a replica the
	// driver keeps the savepoints, and a refused transaction is tried again
	// with each RELEASE checked by a request that rolls back.
	Savepoints() bool
}

var (
	_ Store = (*fileStore)(nil)
	_ Store = (*replicaStore)(nil)
)

// fence is the lease as a store writes it. Only the sweep that holds the
// database writes to it: the writes of a sweep that lost its lease (paused
// past it) must fail, not land beside those of the sweep that took over.
type fence interface {
	// Beat runs inside each write transaction: a guard that fails the
	// transaction once the lease is another sweep's, and the heartbeat.
	Beat(ctx context.Context, q memdb.Querier) error
	// Guard is the guard alone, one statement and its arguments, for a
	// write a replica sends outside a transaction.
	Guard() (query string, args []any)
	// Lost turns the error of a write that failed into ErrLeaseLost when
	// the lease is gone; other errors it returns as they are.
	Lost(ctx context.Context, q memdb.Querier, err error) error
}

// fileStore runs a sweep on one pinned connection to a SQLite file: its
// temp tables live per connection. runner.go holds its statement runner,
// pacer.go its transactions.
type fileStore struct {
	conn   *sql.Conn
	opt    Options
	args   func(extra ...any) []any // the sweep's bound parameters
	fence  fence                    // the lease, once the sweep holds it
	pacing pacing
	// Rows exec changed in the transaction under way, and in the last
	// committed one.
	execRows, lastChanged int64
	// quiet: whether the linked build's memdecay_connection_triggers is
	// there (owntriggers.go); triggersOff: the triggers might still be off.
	quiet       int
	triggersOff bool
	// foreignKeys: PRAGMA foreign_keys as the connection came (the sweep
	// turns it on).
	foreignKeys int
	// bulk: inside Bulk's one transaction.
	bulk bool
	// copier: checkpoints beside the sweep (none in a dry run); walFrames:
	// the WAL's length at the last checkpoint, by either connection.
	copier    *copier
	walFrames atomic.Int64
	walPath   string // the file's WAL (endWAL)
	shmPath   string // the file's wal-index (turnsNeeded)
}

// WALSizeLimit is the size a sweep leaves a file's WAL at: SQLite reuses
// a WAL from its start but never shrinks it by itself, so one that a
// sweep's transactions or a long read transaction let grow would stay
// that big. While it sweeps, the WAL keeps the size it grew to (cutting it
// back at each restart only to grow it again costs the next commit tens of
// milliseconds); the sweep's end cuts it back (endWAL).
const WALSizeLimit = 64 << 20

// OpenFile pins a connection and sets it up for a sweep.
func OpenFile(ctx context.Context, db *memdb.DB, opt Options) (*fileStore, error) {
	conn, err := db.SQL.Conn(ctx)
	if err != nil {
		return nil, err
	}
	// A bigger page cache than SQLite's 2 MB default: a sweep touches the
	// edge indexes all over a big file; and a thread to help sort
	// (options.go). The sweep checkpoints after each of its commits itself
	// (see checkpoint). The WAL is not cut back at each restart
	// (WALSizeLimit). A full sweep's temp tables get bigger pages
	// (BigTempPages), set before anything opens the temp database (the
	// first transaction does).
	pragmas := []string{fmt.Sprintf("PRAGMA cache_size = -%d", SweepCacheKiB),
		fmt.Sprintf("PRAGMA temp.cache_size = -%d", TempCacheKiB), fmt.Sprintf("PRAGMA threads = %d", SorterThreads),
		"PRAGMA wal_autocheckpoint = 0", "PRAGMA journal_size_limit = -1"}
	if opt.BigTempPages {
		pragmas = append([]string{fmt.Sprintf("PRAGMA temp.page_size = %d", TempPageSize)}, pragmas...)
	}
	for _, pragma := range pragmas {
		if _, err := conn.ExecContext(ctx, pragma); err != nil {
			conn.Close()
			return nil, err
		}
	}
	st := &fileStore{conn: conn, opt: opt, args: func(extra ...any) []any { return extra }, walPath: db.Path + "-wal",
		shmPath: db.Path + "-shm"}
	// The app's foreign keys are enforced while the sweep writes its
	// tables, as an app that turns them on expects (refused.go); the
	// connection goes back to the pool as it came.
	if err := conn.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&st.foreignKeys); err != nil {
		conn.Close()
		return nil, err
	}
	if _, err := conn.ExecContext(ctx, "PRAGMA foreign_keys = ON"); err != nil {
		conn.Close()
		return nil, err
	}
	// The baseline for seeing other connections' commits (see checkpoint).
	if err := conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&st.pacing.dataVersion); err != nil {
		conn.Close()
		return nil, err
	}
	if !opt.DryRun {
		st.copier = startCopier(db, &st.walFrames)
	}
	return st, nil
}

// Bind sets the sweep's parameters, bound to every named statement.
func (st *fileStore) Bind(args func(extra ...any) []any) { st.args = args }

func (st *fileStore) Hold(f fence)                          { st.fence = f }
func (st *fileStore) DropWorking(ctx context.Context) error { return nil }

func (st *fileStore) Close() error {
	if st.copier != nil {
		st.copier.stop()
	}
	st.endWAL(context.Background())
	st.discardIfQuiet()
	for _, drop := range st.opt.sql().Teardown { // a mapping's temp views: the connection goes back to the pool
		st.conn.ExecContext(context.Background(), drop)
	}
	st.conn.ExecContext(context.Background(), fmt.Sprintf("PRAGMA foreign_keys = %d", st.foreignKeys))
	return st.conn.Close()
}

func (st *fileStore) Querier() memdb.Querier { return st.conn }

func (st *fileStore) Changed() int64 { return st.lastChanged }

// Exec runs every statement of a named section of the phase files.
func (st *fileStore) Exec(ctx context.Context, name string, extra ...any) (_ int64, err error) {
	if quietLists[name] && st.QuietAllowed(ctx) {
		if err := st.withTriggers(ctx, false); err != nil {
			return 0, fmt.Errorf("%s: %w", name, err)
		}
		defer func() {
			if onErr := st.withTriggers(context.WithoutCancel(ctx), true); onErr != nil && err == nil {
				err = fmt.Errorf("%s: %w", name, onErr)
			}
		}()
	}
	return st.ExecList(ctx, name, st.opt.sql().Stmts(name), extra...)
}

func (st *fileStore) ExecList(ctx context.Context, name string, list []string, extra ...any) (int64, error) {
	var total int64
	for i, q := range list {
		began := time.Now()
		res, err := st.conn.ExecContext(ctx, q, st.args(extra...)...)
		if err != nil {
			return total, fmt.Errorf("%s: %w", name, err)
		}
		st.afterRead(ctx, began)
		if traceSQL && time.Since(began) > traceMin {
			trace(ctx, st.conn, fmt.Sprintf("%s[%d]", name, i), time.Since(began), q, st.args(extra...))
		}
		n, _ := res.RowsAffected()
		total += n
	}
	st.execRows += total
	return total, nil
}

func (st *fileStore) Count(ctx context.Context, query string, args ...any) (int64, error) {
	var n int64
	began := time.Now()
	err := st.conn.QueryRowContext(ctx, query, args...).Scan(&n)
	TraceTook("count", began)
	st.afterRead(ctx, began)
	return n, err
}
