package store

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/worker/internal/memdb"
)

// newFileStore opens a sweep's store with the default pacing on a new
// file (path), both closed at cleanup.
func newFileStore(t *testing.T) (st *fileStore, path string) {
	t.Helper()
	path = t.TempDir() + "/m.db"
	db, err := memdb.Open(path, memdb.OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	st, err = OpenFile(context.Background(), db, Options{ChunkSize: DefaultChunkSize, SoloChunkSize: DefaultSoloChunkSize,
		SoloHold: DefaultSoloHold, Pause: DefaultPause})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, path
}

// The busy timeout a sweep sets is checked, and a sweep whose timeout could
// not be restored stops at its next transaction instead of running on.
func TestSweepBusyTimeout(t *testing.T) {
	ctx := context.Background()
	st, _ := newFileStore(t)
	if err := st.setBusyTimeout(ctx, checkpointWaitMS); err != nil {
		t.Fatal(err)
	}
	var ms int
	if err := st.conn.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&ms); err != nil || ms != checkpointWaitMS {
		t.Fatalf("busy_timeout %d (%v), want %d", ms, err, checkpointWaitMS)
	}
	if err := st.setBusyTimeout(ctx, -5); err == nil {
		t.Error("a timeout SQLite did not take was accepted")
	}
	st.pacing.broken = fmt.Errorf("setting busy_timeout: lost")
	if err := st.InTx(ctx, func() error { return nil }); err == nil || !strings.Contains(err.Error(), "busy_timeout") {
		t.Errorf("a transaction after a lost busy timeout: %v, want the error", err)
	}
}

// The sweep's temp tables are made with TempPageSize pages.
func TestTempTablesTakeBigPages(t *testing.T) {
	ctx := context.Background()
	st, _ := newFileStore(t)
	if _, err := st.conn.ExecContext(ctx, "CREATE TEMP TABLE t AS SELECT 1 AS x"); err != nil {
		t.Fatal(err)
	}
	var size int
	if err := st.conn.QueryRowContext(ctx, "PRAGMA temp.page_size").Scan(&size); err != nil || size != TempPageSize {
		t.Fatalf("temp.page_size %d (%v), want %d", size, err, TempPageSize)
	}
}
