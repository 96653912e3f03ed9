package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"
)

// While the copier copies a commit's pages into the file, the sweep's next
// write transaction leaves the lock free for an app that began waiting for
// it during the last one (turnGap), and no longer: an app's write made
// meanwhile, through SQLite's busy handler, goes through before the next
// transaction, which begins while the copy still goes on.
func TestNextTransactionLeavesAnAppItsTurn(t *testing.T) {
	ctx := context.Background()
	st, path := newFileStore(t)
	if st.copier == nil {
		t.Fatal("no copier on a file opened to write")
	}
	execInTx(t, st, "CREATE TABLE t (x)")
	st.copier.awaitCopy()
	copying, release := make(chan struct{}), make(chan struct{})
	var held sync.Once
	beforeCopy = func() {
		held.Do(func() { // the next copy; later ones run
			close(copying)
			<-release
		})
	}
	var released sync.Once
	let := func() { released.Do(func() { close(release) }) }
	defer func() { let(); beforeCopy = func() {} }() // before the cleanup's st.Close, which waits for the copy

	app, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	appWrote := make(chan error, 1)
	if err := st.InTx(ctx, func() error {
		if _, err := st.conn.ExecContext(ctx, "INSERT INTO t VALUES ('sweep')"); err != nil {
			return err
		}
		time.Sleep(250 * time.Millisecond)
		go func() { // waits in its busy handler until the sweep commits
			_, err := app.Exec("INSERT INTO t VALUES ('app')")
			appWrote <- err
		}()
		time.Sleep(30 * time.Millisecond)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	turnEnds := st.pacing.committed.Add(turnGap(st.pacing.committed.Sub(st.pacing.turnSince)))
	select {
	case <-copying: // the copier holds that commit's copy
	case <-time.After(10 * time.Second):
		t.Fatal("no checkpoint beside the sweep after its commit")
	}
	began := make(chan time.Time, 1)
	ended := make(chan error, 1)
	var seen int
	go func() {
		ended <- st.InTx(ctx, func() error {
			began <- time.Now()
			if err := st.conn.QueryRowContext(ctx, "SELECT count(*) FROM t WHERE x = 'app'").Scan(&seen); err != nil {
				return err
			}
			_, err := st.conn.ExecContext(ctx, "INSERT INTO t VALUES ('sweep')")
			return err
		})
	}()
	select {
	case at := <-began:
		if at.Before(turnEnds) {
			t.Errorf("the next transaction began %v after the commit, before the app's turn ended (%v)",
				at.Sub(st.pacing.committed), turnEnds.Sub(st.pacing.committed))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the next transaction waited for the whole copy")
	}
	let()
	if err := <-ended; err != nil {
		t.Fatal(err)
	}
	if err := <-appWrote; err != nil {
		t.Errorf("the app's write: %v, want its turn between the sweep's transactions", err)
	}
	if seen != 1 {
		t.Errorf("the next transaction saw %d app rows, want the app's write before it", seen)
	}
}

// turnGap covers the longest sleep of SQLite's default busy handler an
// app that waited so long can be in, and a little more.
func TestTurnGap(t *testing.T) {
	for _, c := range []struct{ waited, want time.Duration }{
		{0, 6 * time.Millisecond},
		{8 * time.Millisecond, 15 * time.Millisecond},
		{40 * time.Millisecond, 25 * time.Millisecond},
		{130 * time.Millisecond, 55 * time.Millisecond},
		{300 * time.Millisecond, 105 * time.Millisecond},
		{10 * time.Second, 105 * time.Millisecond},
	} {
		if got := turnGap(c.waited); got != c.want {
			t.Errorf("turnGap(%v) = %v, want %v", c.waited, got, c.want)
		}
	}
}

// A commit's checkpoint goes to the copier while no app writes and the WAL
// is shorter than copierFrames; at copierFrames, or once an app has
// written, the sweep's own connection does it.
func TestCheckpointBesideOrHere(t *testing.T) {
	st, path := newFileStore(t)
	commit := func(sql string) { t.Helper(); execInTx(t, st, sql) }
	asked := func() uint64 {
		st.copier.mu.Lock()
		defer st.copier.mu.Unlock()
		return st.copier.asked
	}
	commit("CREATE TABLE t (x)")
	for _, c := range []struct {
		walFrames int64
		beside    bool
	}{{copierFrames - 1, true}, {copierFrames, false}} {
		st.copier.awaitCopy()
		st.walFrames.Store(c.walFrames)
		before := asked()
		commit("INSERT INTO t VALUES (1)")
		if got := asked() > before; got != c.beside {
			t.Errorf("a WAL of %d frames: checkpoint beside the sweep %v, want %v", c.walFrames, got, c.beside)
		}
	}
	app, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	if _, err := app.Exec("INSERT INTO t VALUES (2)"); err != nil {
		t.Fatal(err)
	}
	st.copier.awaitCopy()
	st.walFrames.Store(0)
	before := asked()
	commit("INSERT INTO t VALUES (3)")
	if asked() != before {
		t.Error("after an app's write, the checkpoint went beside the sweep")
	}
}

// At the sweep's end, a WAL of checkpointFrames or more is truncated, and
// so is a WAL file grown past WALSizeLimit by an earlier transaction and
// restarted since (the sweep leaves it its size while it runs); a shorter
// one is left as it is. Restarts in between do not cut it back.
func TestEndWALTruncatesALongWAL(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		grown     bool // a transaction wrote more than WALSizeLimit, and the WAL restarted since
		walFrames int64
		truncated bool
	}{{false, checkpointFrames - 1, false}, {false, checkpointFrames, true}, {true, 1, true}} {
		st, path := newFileStore(t)
		commit := func(sql string) {
			t.Helper()
			execInTx(t, st, sql)
			st.copier.awaitCopy()
		}
		commit("CREATE TABLE t (x)")
		walSize := func() int64 {
			t.Helper()
			fi, err := os.Stat(path + "-wal")
			if err != nil {
				t.Fatal(err)
			}
			return fi.Size()
		}
		if c.grown {
			commit(fmt.Sprintf(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %d)
				INSERT INTO t SELECT zeroblob(4000) FROM n`, WALSizeLimit/4000+1000))
			commit("DELETE FROM t") // starts the WAL over
			if size := walSize(); size <= WALSizeLimit {
				t.Fatalf("the WAL was cut back to %d bytes at a restart in the sweep", size)
			}
		}
		st.walFrames.Store(c.walFrames)
		st.copier.stop()
		st.copier = nil // stopped: the cleanup's Close has none to stop
		st.endWAL(ctx)
		if got := walSize() == 0; got != c.truncated {
			t.Errorf("grown %v, %d frames at the end: truncated %v (%d bytes), want %v", c.grown, c.walFrames, got, walSize(), c.truncated)
		}
	}
}

// execInTx runs one statement in a write transaction of the sweep's store.
func execInTx(t *testing.T, st *fileStore, sql string) {
	t.Helper()
	ctx := context.Background()
	if err := st.InTx(ctx, func() error {
		_, err := st.conn.ExecContext(ctx, sql)
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// awaitCopy waits for the checkpoints asked for so far, however long
// they take.
func (c *copier) awaitCopy() {
	c.mu.Lock()
	for c.copied < c.asked {
		c.copiedCond.Wait()
	}
	c.mu.Unlock()
}
