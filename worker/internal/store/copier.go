package store

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memdecay/memdecay/worker/internal/memdb"
)

// copier checkpoints the sweep's commits on a connection of its own while
// no app writes beside the sweep. A passive checkpoint never blocks a
// writer, so copying one transaction's pages into the file, and the
// file's fsync, run beside the sweep's next transaction, on another core,
// instead of between the two (bench/RESULTS.md has the figures). The
// sweep's own connection checkpoints instead while an app writes, and once
// the WAL has grown past copierFrames: it waits for the copier, then
// copies what is left, so that its next transaction starts the WAL over
// (fileStore.checkpoint).
type copier struct {
	conn   *sql.DB       // a pool of one, of its own (memdb.OpenBeside)
	wake   chan struct{} // a commit to copy; one pending request covers every commit before it
	done   chan struct{}
	mu     sync.Mutex   // held while either connection checkpoints
	frames atomic.Int64 // the WAL's length at the last checkpoint, by either connection
}

// startCopier starts a copier on a connection of its own; none (nil) when
// it cannot open one, and the sweep checkpoints on its own connection.
func startCopier(db *memdb.DB) *copier {
	conn, err := db.OpenBeside()
	if err != nil {
		return nil
	}
	c := &copier{conn: conn, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go c.run()
	return c
}

func (c *copier) run() {
	defer close(c.done)
	for range c.wake {
		c.mu.Lock()
		began := time.Now()
		var busy, frames, copied int64
		// Failing to checkpoint is not an error: the next commit asks again.
		if c.conn.QueryRowContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied) == nil {
			c.frames.Store(frames)
			TraceTook(fmt.Sprintf("checkpoint beside the sweep (WAL %d frames, %d copied)", frames, copied), began)
		}
		c.mu.Unlock()
	}
}

// request asks for a checkpoint of everything committed so far, without
// waiting for it.
func (c *copier) request() {
	select {
	case c.wake <- struct{}{}:
	default: // one is pending: it starts after this commit, so it covers it
	}
}

// stop lets the pending checkpoint finish and closes the connection.
func (c *copier) stop() {
	close(c.wake)
	<-c.done
	c.conn.Close()
}

// stopCopier ends the copier at the sweep's end. Its last checkpoint
// leaves the WAL copied but as long as it grew, as no transaction of the
// sweep began after it to start the WAL over: a WAL past WALSizeLimit is
// cut back here, as a transaction would have cut it back.
func (st *fileStore) stopCopier(ctx context.Context) {
	st.copier.stop()
	if st.copier.frames.Load() >= checkpointFrames {
		st.restartWAL(ctx, "TRUNCATE")
	}
}
