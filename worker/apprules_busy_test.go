package worker_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker"
)

// TestAppRulesBusyAppDoesNotStarveSweep: an app that commits short
// transactions back to back, never holding the write lock for long, does
// not starve a sweep beside it: the sweep finds the lock free between
// them and finishes; were it ever to give up, its error would not blame
// a lock held longer than the busy timeout that no one held.
func TestAppRulesBusyAppDoesNotStarveSweep(t *testing.T) {
	const appHold = 2 * time.Millisecond
	db, path := newMemory(t, refusalFixture()+`CREATE TABLE app_counter (n INTEGER); INSERT INTO app_counter VALUES (0);`)
	app := openAsApp(t, path)
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var commits int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		conn, err := app.Conn(context.Background())
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		for ctx.Err() == nil {
			// Short transactions back to back: the lock is free only
			// between a COMMIT and the next BEGIN.
			if _, err := conn.ExecContext(context.Background(), `BEGIN IMMEDIATE`); err != nil {
				continue
			}
			_, err := conn.ExecContext(context.Background(), `UPDATE app_counter SET n = n + 1`)
			time.Sleep(appHold) // the app's own work inside its transaction
			if err == nil {
				_, err = conn.ExecContext(context.Background(), `COMMIT`)
			}
			if err != nil {
				conn.ExecContext(context.Background(), `ROLLBACK`)
				continue
			}
			commits++
		}
	}()
	began := time.Now()
	now, wall := 1000.0, fixedWall
	r, err := worker.Sweep(context.Background(), db, worker.SweepOptions{Now: &now, WallNow: &wall, ChunkSize: 8})
	took := time.Since(began)
	stop()
	wg.Wait()
	if err != nil {
		if strings.Contains(err.Error(), "for more than") && errors.Is(err, worker.ErrDatabaseBusy) {
			t.Fatalf("after %v (the app committed %d times): %v", took, commits, err)
		}
		t.Fatalf("after %v: %v", took, err)
	}
	if r.EdgesDecayed != 60 {
		t.Errorf("%s", r.Summary)
	}
	t.Logf("sweep in %v beside an app that committed %d times", took, commits)
}

// TestAppRulesLockHeldAllAlong: an app that holds the write lock longer
// than the busy timeout makes the sweep give up, saying so (and "try again
// later": ErrSweepRunning), not blaming commits one after the other.
func TestAppRulesLockHeldAllAlong(t *testing.T) {
	db, path := newMemory(t, refusalFixture())
	app := openAsApp(t, path)
	conn, err := app.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(context.Background(), `ROLLBACK`)
	now, wall := 1000.0, fixedWall
	_, err = worker.Sweep(context.Background(), db, worker.SweepOptions{Now: &now, WallNow: &wall})
	if err == nil || !errors.Is(err, worker.ErrDatabaseBusy) || !errors.Is(err, worker.ErrSweepRunning) ||
		!strings.Contains(err.Error(), "held the database's write lock for more than 5000 ms") {
		t.Fatalf("sweep beside a lock held all along: %v", err)
	}
}
