package store

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/memdecay/memdecay/worker/internal/memdb"
)

// txHooks are what a store adds to the one write-transaction skeleton
// (runTx) that both stores share.
type txHooks struct {
	conn  *sql.Conn
	q     memdb.Querier // what the fence writes its guard and heartbeat through
	fence fence         // nil while the sweep holds no lease
	// pause is the least time since last, the last commit, before BEGIN.
	pause time.Duration
	last  time.Time
	// begin takes the write lock (BEGIN IMMEDIATE when nil).
	begin func() error
	begun func() // after BEGIN, before f
	ended func() // before COMMIT or ROLLBACK
	// committed runs after a COMMIT that held, with when BEGIN ran.
	committed func(began time.Time) error
}

// runTx is a sweep's write transaction on any store: the lock left free
// for pause since the last commit (so a writer waiting on it gets it:
// SQLite's busy handler retries at most 100 ms apart), BEGIN IMMEDIATE, f
// and the lease's heartbeat in the same transaction, then COMMIT; or
// ROLLBACK, and an error that the fence turns into ErrLeaseLost when the
// lease is gone.
func runTx(ctx context.Context, h txHooks, f func() error) error {
	// A sweep cancelled before its transaction starts none: SQLite hears
	// of a cancellation only through an interrupt, which a short
	// transaction can finish before.
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := pauseAfter(ctx, h.last, h.pause); err != nil {
		return err
	}
	began := time.Now()
	begin := h.begin
	if begin == nil {
		begin = func() error {
			_, err := h.conn.ExecContext(ctx, "BEGIN IMMEDIATE")
			return err
		}
	}
	if err := begin(); err != nil {
		return err
	}
	if h.begun != nil {
		h.begun()
	}
	err := f()
	if err == nil && h.fence != nil {
		err = h.fence.Beat(ctx, h.q)
	}
	if h.ended != nil {
		h.ended()
	}
	end := "COMMIT"
	if err != nil {
		end = "ROLLBACK"
	}
	ended := time.Now()
	_, endErr := h.conn.ExecContext(context.WithoutCancel(ctx), end)
	TraceTook(strings.ToLower(end), ended)
	if err == nil && endErr != nil {
		// A COMMIT refused (a deferred foreign key) leaves the transaction
		// open: it is rolled back, so the connection is never left in it.
		err = endErr
		h.conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
	}
	if err != nil {
		if h.fence != nil {
			return h.fence.Lost(ctx, h.q, err)
		}
		return err
	}
	if h.committed != nil {
		return h.committed(began)
	}
	return nil
}
