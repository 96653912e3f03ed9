package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memdecay/memdecay/worker/internal/memdb"
)

// copier checkpoints the sweep's commits on a connection of its own while
// no app writes beside the sweep. A passive checkpoint never blocks a
// writer or a reader, so copying a transaction's pages into the file, and
// the file's fsync, run beside the sweep's reads that follow it (its plan,
// a step's own reads), on another core, instead of before them. The next
// write transaction waits for the copy, but no longer than an app that
// began waiting for the lock meanwhile needs to take it (turnGap): its
// write gets its turn, and its commit finds nothing of the sweep's left to
// copy (the copy ended, or the copier holds the checkpoint, so the app's
// own checkpoint skips). A copy longer than that gap goes on beside the
// sweep's next transaction, and the WAL starts over at a later one that
// begins once all of it is copied. While an app writes, the sweep's own connection
// checkpoints (fileStore.checkpoint), and so it does once the WAL has grown
// past copierFrames, so that its next transaction starts the WAL over.
type copier struct {
	conn *sql.DB       // a pool of one, of its own (memdb.OpenBeside)
	wake chan struct{} // a checkpoint asked for; one pending covers every commit before it
	done chan struct{}
	ckpt sync.Mutex // held while either connection checkpoints

	mu            sync.Mutex
	copiedCond    *sync.Cond // signalled as copied grows
	asked, copied uint64     // checkpoints asked for, and the last one done
	stopped       bool       // no more asked for (stop)

	walFrames *atomic.Int64 // the store's: the WAL's length at the last checkpoint, by either connection
}

// beforeCopy runs as each of the copier's checkpoints starts: tests hold
// a copy there.
var beforeCopy = func() {}

// startCopier starts a copier on a connection of its own; none (nil) when
// it cannot open one, and the sweep checkpoints on its own connection.
func startCopier(db *memdb.DB, walFrames *atomic.Int64) *copier {
	conn, err := db.OpenBeside()
	if err != nil {
		return nil
	}
	c := &copier{conn: conn, wake: make(chan struct{}, 1), done: make(chan struct{}), walFrames: walFrames}
	c.copiedCond = sync.NewCond(&c.mu)
	go c.run()
	return c
}

func (c *copier) run() {
	defer close(c.done)
	for range c.wake {
		c.mu.Lock()
		target := c.asked
		c.mu.Unlock()
		c.ckpt.Lock()
		beforeCopy()
		began := time.Now()
		var busy, frames, copied int64
		// Failing to checkpoint is not an error: the next commit asks again.
		if c.conn.QueryRowContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied) == nil {
			c.walFrames.Store(frames)
			TraceTook(fmt.Sprintf("checkpoint beside the sweep (WAL %d frames, %d copied)", frames, copied), began)
		}
		c.ckpt.Unlock()
		c.mu.Lock()
		c.copied = max(c.copied, target)
		c.copiedCond.Broadcast()
		c.mu.Unlock()
	}
}

// request asks for a checkpoint of everything committed so far, without
// waiting for it.
func (c *copier) request() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return
	}
	c.asked++
	select {
	case c.wake <- struct{}{}:
	default: // one is pending: it reads asked when it starts, after this
	}
}

// awaitCopyUntil waits for the checkpoints asked for so far, but not past
// until.
func (c *copier) awaitCopyUntil(until time.Time) {
	wait := time.Until(until)
	if wait <= 0 {
		return
	}
	timer := time.AfterFunc(wait, func() {
		c.mu.Lock()
		c.copiedCond.Broadcast()
		c.mu.Unlock()
	})
	defer timer.Stop()
	c.mu.Lock()
	for c.copied < c.asked && time.Now().Before(until) {
		c.copiedCond.Wait()
	}
	c.mu.Unlock()
}

// stop lets the pending checkpoint finish and closes the connection.
func (c *copier) stop() {
	c.mu.Lock()
	c.stopped = true
	close(c.wake)
	c.mu.Unlock()
	<-c.done
	c.conn.Close()
}

// endWAL cuts the WAL back at the sweep's end, once the copier has
// stopped: the WAL file keeps the size the sweep's transactions grew it to
// (WALSizeLimit), and the last checkpoint leaves the WAL copied but as
// long as it grew, as no transaction began after it to start it over. A
// WAL past WALSizeLimit, or with checkpointFrames in use, is truncated,
// and the connection goes back to the pool cutting the WAL back to
// WALSizeLimit at each restart. A dry run wrote nothing, and leaves it.
func (st *fileStore) endWAL(ctx context.Context) {
	if fi, err := os.Stat(st.walPath); !st.opt.DryRun &&
		(st.walFrames.Load() >= checkpointFrames || (err == nil && fi.Size() > WALSizeLimit)) {
		st.restartWAL(ctx, "TRUNCATE")
	}
	st.conn.ExecContext(ctx, fmt.Sprintf("PRAGMA journal_size_limit = %d", WALSizeLimit))
}
