package worker_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
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

// A sweep leaves every page it wrote copied into the database file, however
// its checkpoints ran (beside its transactions, on a connection of their
// own, while no app writes): the file alone, without its WAL, reads as the
// sweep left it.
func TestSweepLeavesItsPagesInTheFile(t *testing.T) {
	db, path := newMemory(t, richFixture)
	digest := func(q interface {
		QueryRow(string, ...any) *sql.Row
	}) string {
		var d string
		if err := q.QueryRow(`SELECT (SELECT count(*) || ' ' || total(weight) FROM mem_edges) || ' | ' ||
			(SELECT count(*) FROM mem_events) || ' | ' || (SELECT count(*) FROM mem_dirty_edges) || ' | ' ||
			(SELECT group_concat(key || '=' || value, ',') FROM (SELECT key, value FROM mem_config ORDER BY key))`).Scan(&d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	before := digest(db.SQL)
	for _, hours := range []float64{100, 400} {
		sweepAt(t, db, hours)
		// The worker's pool keeps the file open, so its WAL stays beside it.
		if _, err := os.Stat(path + "-wal"); err != nil {
			t.Fatalf("no WAL after the sweep at %v h, the test would prove nothing: %v", hours, err)
		}
		alone := filepath.Join(t.TempDir(), "alone.db")
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(alone, data, 0o600); err != nil {
			t.Fatal(err)
		}
		file := openAsApp(t, alone)
		got, want := digest(file), digest(db.SQL)
		if want == before {
			t.Fatalf("the sweep at %v h changed nothing the digest covers: the test would prove nothing", hours)
		}
		if got != want {
			t.Errorf("after the sweep at %v h the file alone reads\n%s\nwhere the database reads\n%s", hours, got, want)
		}
		before = want
	}
}
