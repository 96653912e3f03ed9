package store

import (
	"context"
	"errors"
	"math"
	"strings"
	"time"
)

// ErrBulkReplica refuses a bulk sweep of a replica: rqlite applies each
// transaction as one Raft entry, and a whole sweep's would be far beyond
// what a cluster takes in one request.
var ErrBulkReplica = errors.New("a bulk sweep (--bulk) runs only on a SQLite file: on rqlite every " +
	"transaction is one request and one Raft entry, and a whole sweep's is too big for one; sweep without --bulk")

// bulkRows is a step's transaction size in a bulk sweep: all its rows.
const bulkRows = math.MaxInt32

// Bulk runs f in one write transaction, taken as InTx takes the lock
// (beginImmediate): an app writing meanwhile waits for the whole of it,
// up to its busy timeout. The WAL is checkpointed once it has committed.
func (st *fileStore) Bulk(ctx context.Context, f func() error) (err error) {
	if st.bulk {
		return errors.New("bulk sweep: already in one")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := st.beginImmediate(ctx, st.turnsNeeded()); err != nil {
		return err
	}
	st.bulk, st.pacing.inTransaction = true, true
	defer func() {
		st.bulk, st.pacing.inTransaction = false, false
		end := "COMMIT"
		if err == nil {
			err = ctx.Err() // a sweep cut after its last statement still rolls back whole
		}
		if err != nil {
			end = "ROLLBACK"
		}
		ended := time.Now()
		_, endErr := st.conn.ExecContext(context.WithoutCancel(ctx), end)
		TraceTook(strings.ToLower(end), ended)
		if endErr != nil && err == nil {
			err = endErr
			st.conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		}
		if err == nil {
			st.checkpoint(context.WithoutCancel(ctx))
		}
	}()
	return f()
}

// inBulk is InTx inside Bulk's transaction: f and the lease's heartbeat,
// with nothing to begin or commit; an error is left to Bulk, which rolls
// everything back.
func (st *fileStore) inBulk(ctx context.Context, f func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	st.execRows = 0
	if err := f(); err != nil {
		return err
	}
	if st.fence != nil {
		if err := st.fence.Beat(ctx, st.conn); err != nil {
			return err
		}
	}
	st.lastChanged = st.execRows
	return nil
}

// Bulk on a replica is refused (ErrBulkReplica).
func (st *replicaStore) Bulk(ctx context.Context, f func() error) error { return ErrBulkReplica }
