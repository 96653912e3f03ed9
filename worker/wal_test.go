package worker_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker"
)

// An app's read transaction held open beside writes keeps the WAL from
// restarting, so it grows; status shows it, and once the reader lets go
// the next sweep cuts it back to WALSizeLimit.
func TestLongReaderGrowsWALAndSweepCutsItBack(t *testing.T) {
	db, path := newMemory(t, richFixture)
	sweepAt(t, db, 100)
	reader := openAsApp(t, path)
	tx, err := reader.Begin()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := tx.QueryRow(`SELECT count(*) FROM mem_edges`).Scan(&n); err != nil { // holds its snapshot
		t.Fatal(err)
	}
	writer := openAsApp(t, path)
	if _, err := writer.Exec(`CREATE TABLE app_blobs (b BLOB)`); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 80; i++ { // 80 MB, each MB its own commit
		if _, err := writer.Exec(`INSERT INTO app_blobs VALUES (zeroblob(1 << 20))`); err != nil {
			t.Fatal(err)
		}
		if _, err := writer.Exec(`DELETE FROM app_blobs`); err != nil {
			t.Fatal(err)
		}
	}
	walSize := func() int64 {
		fi, err := os.Stat(path + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	if got := walSize(); got <= worker.WALSizeLimit {
		t.Fatalf("the WAL is %d bytes beside a reader: the test would prove nothing", got)
	}
	st, err := worker.GetStatus(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	if !st.LargeWAL() || *st.WALBytes != walSize() {
		t.Errorf("status: wal %v bytes, large %v; the file's WAL is %d", st.WALBytes, st.LargeWAL(), walSize())
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	wall := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	sweepAtWall(t, db, 500, wall)
	if got := walSize(); got > worker.WALSizeLimit {
		t.Errorf("after the reader let go, a sweep left the WAL at %d bytes, over %d", got, worker.WALSizeLimit)
	}
}
