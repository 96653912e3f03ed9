package worker_test

// One sweep at a time: two workers racing on one file, and the lease that
// refuses a second sweep or lets an expired one be taken over.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker"
)

// TestConcurrentSweepsEndLikeOne: two workers sweep the same file at the
// same clock at once, each with its own handle. Either one is refused
// (ErrSweepRunning) and the file ends as after one sweep, or they run one
// after the other and it ends as after two sweeps at one clock, which
// remove exactly what one does (only reinforcement runs twice, docs/sweep.md).
// Every removal has exactly one event either way.
func TestConcurrentSweepsEndLikeOne(t *testing.T) {
	orig := bigMemory(t, 11, 150, 1500)
	clock, wall := bigClock+120, bigWall.Add(20*24*time.Hour)
	refDB := openAsWorker(t, copyMemory(t, orig))
	sweepChunked(t, refDB, clock, wall, worker.SweepOptions{})
	once := memoryState(t, refDB)
	sweepChunked(t, refDB, clock, wall, worker.SweepOptions{})
	twice := memoryState(t, refDB)
	removals := func(state string) string { // the rows and events, without reinforcement
		var keep []string
		for _, l := range strings.Split(state, "\n") {
			if !strings.HasPrefix(l, "[block ") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	if removals(once) != removals(twice) {
		t.Fatalf("a second sweep at the same clock changed rows or events:\n%s", diffLines(twice, once))
	}
	outcomes := map[string]int{}
	for i := range 6 {
		path := copyMemory(t, orig)
		dbs := [2]*worker.DB{openAsWorker(t, path), openAsWorker(t, path)}
		var errs [2]error
		start := make(chan struct{})
		var wg sync.WaitGroup
		for k := range dbs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				now, w := clock, wall
				_, errs[k] = worker.Sweep(context.Background(), dbs[k], worker.SweepOptions{Now: &now, WallNow: &w, ChunkSize: 20,
					Owner: fmt.Sprintf("worker %d", k)})
			}()
		}
		close(start)
		wg.Wait()
		busy := 0
		for k, err := range errs {
			switch {
			case errors.Is(err, worker.ErrSweepRunning):
				busy++
				if !strings.Contains(err.Error(), fmt.Sprintf("worker %d", 1-k)) {
					t.Errorf("iteration %d: refusal %q does not name the other worker", i, err)
				}
			case err != nil:
				t.Fatalf("iteration %d: worker %d: %v", i, k, err)
			}
		}
		got := memoryState(t, dbs[0])
		var want string
		switch busy {
		case 1:
			outcomes["one refused"]++
			want = once
		case 0:
			outcomes["one after the other"]++
			want = twice
		default:
			t.Fatalf("iteration %d: both refused: %v", i, errs)
		}
		if got != want {
			t.Fatalf("iteration %d (%d refused): state differs from the reference\nhere, not there:\n%s\nthere, not here:\n%s",
				i, busy, diffLines(got, want), diffLines(want, got))
		}
		if n := scalar[int](t, dbs[0], `SELECT count(*) FROM mem_sweeps WHERE status = 'running'`); n != 0 {
			t.Errorf("iteration %d: %d sweeps left running", i, n)
		}
		checkRemovalsLogged(t, dbs[0].SQL, orig, 0)
	}
	t.Logf("outcomes: %v", outcomes)
}

// TestSweepLease: one sweep at a time; a live lease refuses a second one,
// an expired lease is taken over and marked interrupted.
func TestSweepLease(t *testing.T) {
	db, _ := newMemory(t, richFixture)
	edges := edgeSet(t, db)
	mustExec(t, db, `INSERT INTO mem_sweeps (id, started_at, clock_hours, status, lease_until, owner)
		VALUES (41, ?, 480, 'running', ?, 'worker on host-b')`, time.Now().Unix(), time.Now().Add(time.Hour).Unix())
	now := 500.0
	_, err := worker.Sweep(context.Background(), db, worker.SweepOptions{Now: &now})
	if !errors.Is(err, worker.ErrSweepRunning) {
		t.Fatalf("sweep beside a live lease: %v, want ErrSweepRunning", err)
	}
	if !strings.Contains(err.Error(), "host-b") {
		t.Errorf("message %q does not say who holds the lease", err)
	}
	if fmt.Sprint(edgeSet(t, db)) != fmt.Sprint(edges) || scalar[int](t, db, `SELECT count(*) FROM mem_events`) != 0 {
		t.Error("the refused sweep changed the database")
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM mem_sweeps`); n != 1 {
		t.Errorf("%d sweep rows, want 1", n)
	}
	// The other worker died: its lease runs out.
	mustExec(t, db, `UPDATE mem_sweeps SET lease_until = ? WHERE id = 41`, time.Now().Add(-time.Second).Unix())
	r := sweepAt(t, db, 500)
	if got := scalar[string](t, db, `SELECT status FROM mem_sweeps WHERE id = 41`); got != "interrupted" {
		t.Errorf("expired sweep status %s, want interrupted", got)
	}
	if got := scalar[string](t, db, `SELECT status FROM mem_sweeps WHERE id = ?`, r.SweepID); got != "done" || r.SweepID == 41 {
		t.Errorf("new sweep %d status %s", r.SweepID, got)
	}
	if r.EdgesDecayed != 2 {
		t.Errorf("takeover sweep %+v", r)
	}
}
