package worker_test

// How a sweep paces its transactions: the rows each one takes alone on the
// file or beside a writing app, and the WAL it leaves behind each commit.

import (
	"encoding/binary"
	"os"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker"
)

// TestSweepCheckpointsForAWritingApp: SQLite checkpoints inside the commit
// of whichever connection finds the WAL long, so a sweep that left its
// pages in the WAL would make an app's next write copy them. While an app
// commits between its chunks, the sweep copies its own pages into the file
// after each commit: before each chunk, nothing of the chunk before is
// left in the WAL.
func TestSweepCheckpointsForAWritingApp(t *testing.T) {
	orig := bigMemory(t, 41, 200, 2500)
	clock, wall := bigClock+150, bigWall.Add(30*24*time.Hour)
	path := copyMemory(t, orig)
	db := openAsWorker(t, path)
	app := openAsApp(t, path)
	if _, err := app.Exec(`CREATE TABLE app_log (n INTEGER)`); err != nil {
		t.Fatal(err)
	}
	checked, wrote := 0, 0
	sweepChunked(t, db, clock, wall, worker.WithChunk(worker.SweepOptions{}, func(step string, done, total int64) {
		if step != "plan_edges" {
			return
		}
		if wrote > 0 {
			if frames, copied := walProgress(t, path); copied != frames {
				t.Errorf("before the chunk at %d of %d: %d of %d WAL frames not copied into the file",
					done, total, frames-copied, frames)
			}
			checked++
		}
		if _, err := app.Exec(`INSERT INTO app_log (n) VALUES (?)`, wrote); err != nil {
			t.Fatalf("app write between chunks: %v", err)
		}
		wrote++
	}))
	if checked < 10 {
		t.Fatalf("only %d chunks checked", checked)
	}
	integrityOK(t, db.SQL)
}

// TestSoloChunks: alone on the file, a sweep applies SoloChunkSize rows per
// transaction (and stores due times four times that), from each step's
// first; once an app has committed between its chunks, every step takes
// ChunkSize.
func TestSoloChunks(t *testing.T) {
	orig := bigMemory(t, 43, 200, 2500)
	clock, wall := bigClock+150, bigWall.Add(30*24*time.Hour)
	// steps sweeps a fresh copy and returns the rows each transaction of
	// the edge removals and of the due times took, the app writing before each
	// one when app is set; hold is the sweep's SoloHold.
	steps := func(app bool, hold time.Duration) map[string][]int64 {
		path := copyMemory(t, orig)
		db := openAsWorker(t, path)
		conn := openAsApp(t, path)
		if _, err := conn.Exec(`CREATE TABLE app_log (n INTEGER)`); err != nil {
			t.Fatal(err)
		}
		dones := map[string][]int64{}
		chunk := func(step string, done, total int64) {
			if step != "plan_edges" && step != "sweep_edges" {
				return
			}
			dones[step] = append(dones[step], done)
			if app && done < total {
				if _, err := conn.Exec(`INSERT INTO app_log (n) VALUES (?)`, done); err != nil {
					t.Fatalf("app write between chunks: %v", err)
				}
			}
		}
		sweepChunked(t, db, clock, wall, worker.WithChunk(worker.SweepOptions{ChunkSize: 20, SoloChunkSize: 200, SoloHold: hold}, chunk))
		rows := map[string][]int64{}
		for step, d := range dones {
			for i := 1; i+1 < len(d); i++ { // the last chunk may be short
				rows[step] = append(rows[step], d[i]-d[i-1])
			}
		}
		return rows
	}
	check := func(what string, rows []int64, want int64, atLeast int) {
		t.Helper()
		if len(rows) < atLeast {
			t.Fatalf("%s: only %d full chunks (%v)", what, len(rows), rows)
		}
		for i, n := range rows {
			if n != want {
				t.Errorf("%s: transaction %d took %d rows, want %d", what, i+1, n, want)
			}
		}
	}
	// Alone, within an hour's hold, every transaction takes all that
	// SoloChunkSize allows (the due times' syncChunkFactor times as many):
	// the first one too, growing from its rows at ChunkSize while it holds
	// the lock, once their pace shows the rest fits.
	alone := steps(false, time.Hour)
	check("alone, edges", alone["plan_edges"], 200, 4)
	check("alone, due times", alone["sweep_edges"], 800, 2)
	// No transaction fits in a nanosecond's hold: they stay at ChunkSize,
	// the first one as it began.
	held := steps(false, time.Nanosecond)
	check("alone, held, edges", held["plan_edges"], 20, 3)
	check("alone, held, due times", held["sweep_edges"], 80, 3)
	// The app writes before each transaction: each one, the first
	// included, sees that once it holds the lock.
	beside := steps(true, time.Hour)
	check("beside an app, edges", beside["plan_edges"], 20, 3)
	check("beside an app, due times", beside["sweep_edges"], 20, 3)
}

// walProgress reads, without taking part, how many frames the WAL holds and
// how many of them a checkpoint has copied into the file: mxFrame and
// nBackfill of the WAL-index header in the -shm file (sqlite.org/walformat.html,
// native byte order).
func walProgress(t *testing.T, path string) (frames, copied uint32) {
	t.Helper()
	shm, err := os.ReadFile(path + "-shm")
	if err != nil {
		t.Fatal(err)
	}
	if len(shm) < 136 {
		t.Fatalf("-shm file of %d bytes", len(shm))
	}
	return binary.NativeEndian.Uint32(shm[16:]), binary.NativeEndian.Uint32(shm[96:])
}
