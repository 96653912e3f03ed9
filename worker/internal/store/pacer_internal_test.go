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
	return newFileStoreWith(t, Options{})
}

// newFileStoreWith is newFileStore with opt, its pacing the defaults.
func newFileStoreWith(t *testing.T, opt Options) (st *fileStore, path string) {
	t.Helper()
	path = t.TempDir() + "/m.db"
	db, err := memdb.Open(path, memdb.OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	opt.ChunkSize, opt.SoloChunkSize, opt.SoloHold, opt.Pause = DefaultChunkSize, DefaultSoloChunkSize, DefaultSoloHold, DefaultPause
	st, err = OpenFile(context.Background(), db, opt)
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

// TestTempTablesTakeBigPagesWhenAsked: a sweep's temp tables keep SQLite's
// default pages unless its options ask for big ones (BigTempPages), set
// before its first transaction opens the temp database.
func TestTempTablesTakeBigPagesWhenAsked(t *testing.T) {
	ctx := context.Background()
	for _, big := range []bool{false, true} {
		st, _ := newFileStoreWith(t, Options{BigTempPages: big})
		if err := st.InTx(ctx, func() error {
			_, err := st.conn.ExecContext(ctx, "CREATE TEMP TABLE t AS SELECT 1 AS x")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		want := 4096
		if big {
			want = TempPageSize
		}
		var size int
		if err := st.conn.QueryRowContext(ctx, "PRAGMA temp.page_size").Scan(&size); err != nil || size != want {
			t.Errorf("big %v: temp.page_size %d (%v), want %d", big, size, err, want)
		}
	}
}
