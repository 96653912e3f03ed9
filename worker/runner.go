package worker

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/memdecay/memdecay/sqlfuncs"
	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/internal/sweepsql"
)

// store is what a sweep needs of the database it runs on: a statement
// runner and a transaction pacer. The phases and their SQL are written once
// against it; fileStore (a SQLite file: runner.go, pacer.go) and
// replicaStore (every write replicated: rqstore.go) implement it.
type store interface {
	statementRunner
	transactions
	// bind gives the store the sweep's bound parameters (:now, :wall, …).
	bind(args func(extra ...any) []any)
	close() error
}

// statementRunner runs the named statements of the phase files, counts
// and queries.
type statementRunner interface {
	// exec runs every statement of a named section of the phase files,
	// binding the sweep's arguments and extra, and returns the rows changed.
	exec(ctx context.Context, name string, extra ...any) (int64, error)
	// execList is exec of a statement list built at run time (label
	// names it in errors), in the tables' dialect.
	execList(ctx context.Context, label string, list []string, extra ...any) (int64, error)
	// count runs a query that returns one integer.
	count(ctx context.Context, query string, args ...any) (int64, error)
	// querier reads and writes outside the named statements.
	querier() memdb.Querier
	// changed is the rows exec's statements changed in the last committed
	// transaction (a replica knows them only once it has committed).
	changed() int64
	// snapshots: derived state can be computed aside at one read snapshot
	// and compared (temp tables); otherwise it is refreshed in place.
	snapshots() bool
	// dropWorking drops the working tables a replica keeps in main, while
	// the sweep holds the lease (a file's temp tables go with its
	// connection).
	dropWorking(ctx context.Context) error
}

// transactions paces the sweep's writes: bounded write transactions, read
// snapshots, the lock left free for an app's writes, the lease's fence.
type transactions interface {
	// inTx runs f in one bounded write transaction, fenced by the lease
	// and with its heartbeat in it (see hold).
	inTx(ctx context.Context, f func() error) error
	// inRead runs f at one read snapshot, ended by end (COMMIT or ROLLBACK).
	inRead(ctx context.Context, end string, f func() error) error
	// txRows sizes the transactions of one step of size rows at ChunkSize.
	txRows(size int) *txRows
	// othersWriting reports whether another connection wrote lately.
	othersWriting() bool
	// hold fences every write from now on with the sweep's lease (nil:
	// the sweep holds none, and writes no working state).
	hold(f fence)
	// savepoints: a chunk a constraint refuses can be rolled back to a
	// savepoint and retried by halves (refused.go); on a replica the
	// driver keeps the savepoints, and a refused transaction is tried again
	// with each RELEASE checked by a request that rolls back.
	savepoints() bool
}

var (
	_ store = (*fileStore)(nil)
	_ store = (*replicaStore)(nil)
)

// fence is the lease as a store writes it. Only the sweep that holds the
// database writes to it: the writes of a sweep that lost its lease (paused
// past it) must fail, not land beside those of the sweep that took over.
type fence interface {
	// beat runs inside each write transaction: a guard that fails the
	// transaction once the lease is another sweep's, and the heartbeat.
	beat(ctx context.Context, q memdb.Querier) error
	// guard is the guard alone, one statement and its arguments, for a
	// write a replica sends outside a transaction.
	guard() (query string, args []any)
	// lost turns the error of a write that failed into ErrLeaseLost when
	// the lease is gone; other errors it returns as they are.
	lost(ctx context.Context, q memdb.Querier, err error) error
}

// fileStore runs a sweep on one pinned connection to a SQLite file: its
// temp tables live per connection. runner.go holds its statement runner,
// pacer.go its transactions.
type fileStore struct {
	conn   *sql.Conn
	opt    storeOptions
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
}

// storeOptions is what a store takes of the sweep's options: the pacing
// of its transactions, and the dialect of the tables it runs the phase
// files on.
type storeOptions struct {
	DryRun        bool
	ChunkSize     int
	SoloChunkSize int
	SoloHold      time.Duration
	Pause         time.Duration
	tables        *sweepsql.Dialect // nil: memworker's own tables
}

// sql is the dialect of the tables the sweep decides on.
func (o storeOptions) sql() *sweepsql.Dialect {
	if o.tables == nil {
		return sweepsql.MemTables
	}
	return o.tables
}

// WALSizeLimit is the size a sweep cuts a file's WAL back to when it
// restarts it: SQLite reuses a WAL from its start but never shrinks it by
// itself, so one that a long read transaction let grow would stay that big.
const WALSizeLimit = 64 << 20

// openFileStore pins a connection and sets it up for a sweep.
func openFileStore(ctx context.Context, db *DB, opt storeOptions) (*fileStore, error) {
	conn, err := db.SQL.Conn(ctx)
	if err != nil {
		return nil, err
	}
	// A bigger page cache than SQLite's 2 MB default: a sweep touches the
	// edge indexes all over a big file. The sweep checkpoints after each of
	// its commits itself (see checkpoint). A WAL an app's long read kept
	// from restarting has grown past what the sweep needs: once it restarts,
	// it is cut back to WALSizeLimit.
	for _, pragma := range []string{fmt.Sprintf("PRAGMA cache_size = -%d", SweepCacheKiB),
		fmt.Sprintf("PRAGMA temp.cache_size = -%d", SweepCacheKiB), "PRAGMA wal_autocheckpoint = 0",
		fmt.Sprintf("PRAGMA journal_size_limit = %d", WALSizeLimit)} {
		if _, err := conn.ExecContext(ctx, pragma); err != nil {
			conn.Close()
			return nil, err
		}
	}
	st := &fileStore{conn: conn, opt: opt, args: func(extra ...any) []any { return extra }}
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
	return st, nil
}

// bind sets the sweep's parameters, bound to every named statement.
func (st *fileStore) bind(args func(extra ...any) []any) { st.args = args }

func (st *fileStore) hold(f fence)                          { st.fence = f }
func (st *fileStore) dropWorking(ctx context.Context) error { return nil }

func (st *fileStore) close() error {
	st.discardIfQuiet()
	for _, drop := range st.opt.sql().Teardown { // a mapping's temp views: the connection goes back to the pool
		st.conn.ExecContext(context.Background(), drop)
	}
	st.conn.ExecContext(context.Background(), fmt.Sprintf("PRAGMA foreign_keys = %d", st.foreignKeys))
	return st.conn.Close()
}

func (st *fileStore) querier() memdb.Querier { return st.conn }

func (st *fileStore) changed() int64 { return st.lastChanged }

// exec runs every statement of a named section of the phase files.
func (st *fileStore) exec(ctx context.Context, name string, extra ...any) (_ int64, err error) {
	if quietLists[name] && st.opt.tables == nil && st.quietAllowed(ctx) {
		if err := st.withTriggers(ctx, false); err != nil {
			return 0, fmt.Errorf("%s: %w", name, err)
		}
		defer func() {
			if onErr := st.withTriggers(context.WithoutCancel(ctx), true); onErr != nil && err == nil {
				err = fmt.Errorf("%s: %w", name, onErr)
			}
		}()
	}
	return st.execList(ctx, name, st.opt.sql().Stmts(name), extra...)
}

func (st *fileStore) execList(ctx context.Context, name string, list []string, extra ...any) (int64, error) {
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

func (st *fileStore) count(ctx context.Context, query string, args ...any) (int64, error) {
	var n int64
	began := time.Now()
	err := st.conn.QueryRowContext(ctx, query, args...).Scan(&n)
	st.afterRead(ctx, began)
	return n, err
}

// chunkArgs binds a chunk's seq range to the :lo and :hi of a statement.
func chunkArgs(lo, hi int64) []any { return []any{sql.Named("lo", lo), sql.Named("hi", hi)} }

// args binds every parameter the sweep's statements use; each statement
// takes the ones it names.
func (s *sweep) args(extra ...any) []any {
	return append([]any{
		sql.Named("now", s.clock.Hours),
		sql.Named("wall", s.clock.Wall.Unix()),
		sql.Named("sweep", s.report.SweepID),
		sql.Named("block_threshold", s.cfg.BlockPruneThreshold),
		sql.Named("prune_threshold", s.cfg.EdgePruneThreshold),
		sql.Named("decay_threshold", s.cfg.EdgeDecayThreshold),
		sql.Named("established", s.cfg.EstablishedEdgeThreshold),
		sql.Named("archive_score", sqlfuncs.ArchiveScore),
		sql.Named("prune_score", sqlfuncs.PruneScore),
		sql.Named("top_n", s.cfg.ReinforceTopN),
		sql.Named("slack", dueSlack),
		sql.Named("block_from", s.marks.blockFrom),
		sql.Named("edge_from", s.marks.edgeFrom),
		sql.Named("fact_from", s.marks.factFrom),
		sql.Named("block_mark", s.marks.block),
		sql.Named("edge_mark", s.marks.edge),
		sql.Named("fact_mark", s.marks.fact),
		sql.Named("counted", s.plannedCounted()),
	}, extra...)
}

// plannedCounted is the share of a planned edge's strength that the stored
// degrees still count: 0 once the sync left the plan's removals out.
func (s *sweep) plannedCounted() int {
	if s.netDegrees {
		return 0
	}
	return 1
}

// dueSlack widens "due by now" a little, so rounding between a stored due
// time and the exact check never leaves a row out; the exact check decides.
const dueSlack = 1e-6
