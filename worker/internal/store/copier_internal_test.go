package store

import (
	"context"
	"database/sql"
	"os"
	"sync"
	"testing"
	"time"
)

// While the copier copies a commit's pages into the file, the sweep's next
// write transaction waits with the lock free, as it did while its own
// connection copied: an app's write made meanwhile goes through at once
// (busy timeout 0), and the next transaction begins once the copy ends.
func TestNextTransactionWaitsForTheCopy(t *testing.T) {
	ctx := context.Background()
	st, path := newFileStore(t)
	if st.copier == nil {
		t.Fatal("no copier on a file opened to write")
	}
	copying, release := make(chan struct{}), make(chan struct{})
	var held sync.Once
	beforeCopy = func() {
		held.Do(func() { // the first copy (the table's commit); later ones run
			close(copying)
			<-release
		})
	}
	var released sync.Once
	let := func() { released.Do(func() { close(release) }) }
	defer func() { let(); beforeCopy = func() {} }() // before the cleanup's st.Close, which waits for the copy

	if err := st.InTx(ctx, func() error {
		_, err := st.conn.ExecContext(ctx, "CREATE TABLE t (x)")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-copying: // the copier holds that commit's copy
	case <-time.After(10 * time.Second):
		t.Fatal("no checkpoint beside the sweep after its commit")
	}
	began, finish, ended := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		ended <- st.InTx(ctx, func() error {
			close(began)
			<-finish // holds the write lock until the test lets it go
			_, err := st.conn.ExecContext(ctx, "INSERT INTO t VALUES (1)")
			return err
		})
	}()
	select {
	case <-began:
		close(finish)
		<-ended
		t.Fatal("the next transaction took the lock while the copier was copying the last one")
	case <-time.After(200 * time.Millisecond):
	}
	app, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=0")
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	if _, err := app.Exec("INSERT INTO t VALUES (2)"); err != nil {
		t.Errorf("an app's write while the copier copied: %v, want the lock free", err)
	}
	let()
	<-began
	close(finish)
	if err := <-ended; err != nil {
		t.Fatal(err)
	}
	var n int
	if err := st.conn.QueryRowContext(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != 2 {
		t.Errorf("%d rows (%v), want the app's and the sweep's", n, err)
	}
}

// A commit's checkpoint goes to the copier while no app writes and the WAL
// is shorter than copierFrames; at copierFrames, or once an app has
// written, the sweep's own connection does it.
func TestCheckpointBesideOrHere(t *testing.T) {
	ctx := context.Background()
	st, path := newFileStore(t)
	commit := func(sql string) {
		t.Helper()
		if err := st.InTx(ctx, func() error {
			_, err := st.conn.ExecContext(ctx, sql)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
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
// a shorter one is left as it is.
func TestStopCopierTruncatesALongWAL(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		walFrames int64
		truncated bool
	}{{checkpointFrames - 1, false}, {checkpointFrames, true}} {
		st, path := newFileStore(t)
		if err := st.InTx(ctx, func() error {
			_, err := st.conn.ExecContext(ctx, "CREATE TABLE t (x)")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		st.copier.awaitCopy()
		st.walFrames.Store(c.walFrames)
		st.stopCopier(ctx)
		st.copier = nil // stopped: the cleanup's Close has none to stop
		fi, err := os.Stat(path + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Size() == 0; got != c.truncated {
			t.Errorf("a WAL of %d frames at the end: truncated %v (%d bytes), want %v", c.walFrames, got, fi.Size(), c.truncated)
		}
	}
}
