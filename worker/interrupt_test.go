package worker_test

// Sweeps that do not finish: a worker killed with SIGKILL at random
// points, and a sweep cancelled mid-step; the next sweep at the same clock
// must end where an uninterrupted one does.

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker"
)

// TestKillNineConverges kills `memworker sweep` with SIGKILL at random
// moments (before it starts, while it refreshes, plans or applies, after it
// finished) and checks that the file is intact, every removal so far has
// exactly one event, and one more sweep at the same clock finishes the job
// as an uninterrupted sweep does. Half the iterations run with block
// archival off, half with it on (where bridge protection, decided on the
// graph before the sweep, must not be decided again on a graph a killed
// sweep already thinned).
func TestKillNineConverges(t *testing.T) {
	iterations := 15
	if testing.Short() {
		iterations = 4
	}
	bin := buildMemworker(t)
	const nBlocks = 250
	clock, wall := bigClock+400, bigWall.Add(30*24*time.Hour)
	args := func(path string) []string {
		return []string{"sweep", "--db", path, "--now", fmt.Sprint(clock), "--wall-now", fmt.Sprint(wall.Unix()), "--chunk", "20", "--pause", "0"}
	}
	type variant struct {
		archival    string
		orig        string
		base        int64  // the sweep before the killed ones
		once, twice string // states after one and two uninterrupted sweeps at clock
	}
	var variants []*variant
	for _, archival := range []string{"off", "auto"} {
		v := &variant{archival: archival, orig: bigMemory(t, 9, nBlocks, 3000)}
		// A first sweep leaves derived state behind, then the app writes:
		// the killed sweeps are incremental, as in production.
		db := openAsWorker(t, v.orig)
		setConfig(t, db, "block_archival", archival)
		v.base = sweepChunked(t, db, bigClock, bigWall, worker.SweepOptions{ChunkSize: 500}).SweepID
		appWrites(t, db.SQL, rand.New(rand.NewSource(9)), nBlocks, 300, bigClock+40, bigWall.Add(48*time.Hour).Unix())
		db.Close()

		// The references sweep in big chunks, the binary in chunks of 20:
		// chunking must not change the result.
		ref := openAsWorker(t, copyMemory(t, v.orig))
		big := worker.SweepOptions{ChunkSize: worker.DefaultChunkSize}
		r := sweepChunked(t, ref, clock, wall, big)
		if r.EdgesBefore-r.TotalEdgesAfter < 200 || (archival == "auto") != (r.Archived > 0) || r.Full {
			t.Fatalf("archival %s: the reference sweep does not have the work the test needs: %s (full %v)", archival, r.Summary, r.Full)
		}
		v.once = memoryState(t, ref)
		sweepChunked(t, ref, clock, wall, big)
		v.twice = memoryState(t, ref) // for kills that land after the sweep finished
		ref.Close()
		variants = append(variants, v)
	}

	// The binary's own sweep: the same result, and how long one takes here,
	// to spread the kills over.
	whole := copyMemory(t, variants[0].orig)
	start := time.Now()
	if out, err := exec.Command(bin, args(whole)...).CombinedOutput(); err != nil {
		t.Fatalf("memworker sweep: %v\n%s", err, out)
	}
	span := time.Since(start)
	if got := memoryState(t, openAsWorker(t, whole)); got != variants[0].once {
		t.Fatalf("the binary's sweep differs from the in-process one:\n%s", diffLines(got, variants[0].once))
	}

	rng := rand.New(rand.NewSource(15))
	landed := map[string]int{}
	leaseBlocked := 0
	for i := range iterations {
		v := variants[i%2]
		path := copyMemory(t, v.orig)
		var delay time.Duration
		switch i % 3 {
		case 0: // microseconds: mostly before the sweep starts
			delay = time.Duration(rng.Intn(2000)) * time.Microsecond
		case 1: // anywhere in a sweep's time, process start included
			delay = time.Duration(rng.Int63n(int64(span)))
		case 2: // late: mostly while it applies its plan, sometimes after
			delay = span/2 + time.Duration(rng.Int63n(int64(span/2+span/10)))
		}
		cmd := exec.Command(bin, args(path)...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		<-time.After(delay) // the random moment of the kill, not a wait for anything
		cmd.Process.Signal(syscall.SIGKILL)
		err := cmd.Wait()
		killed := false
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			ws, _ := ee.Sys().(syscall.WaitStatus)
			killed = ws.Signaled() && ws.Signal() == syscall.SIGKILL
			if !killed {
				t.Fatalf("iteration %d: memworker failed on its own: %v", i, err)
			}
		} else if err != nil {
			t.Fatal(err)
		}

		db := openAsWorker(t, path)
		integrityOK(t, db.SQL)
		checkRemovalsLogged(t, db.SQL, v.orig, v.base)
		status := scalar[string](t, db, `SELECT coalesce((SELECT status FROM mem_sweeps WHERE id > ? ORDER BY id DESC LIMIT 1), 'none')`, v.base)
		if !killed {
			status = "exited"
		}
		applied := scalar[int](t, db, `SELECT count(*) FROM mem_events WHERE sweep_id > ?`, v.base)
		switch {
		case status == "running" && applied > 0:
			landed[v.archival+" applying"]++
		case status == "running":
			landed[v.archival+" refreshing or planning"]++
		default:
			landed[v.archival+" "+status]++
		}
		want := v.once
		if status == "done" || status == "exited" {
			want = v.twice
		}
		// A SIGKILLed worker cannot release its lease. The next sweep takes
		// over when the owner is a dead process on this host; were it
		// refused, expire the lease by hand (LeaseDuration is a minute).
		now, w := clock, wall
		_, err = worker.Sweep(context.Background(), db, worker.SweepOptions{Now: &now, WallNow: &w})
		if errors.Is(err, worker.ErrSweepRunning) {
			leaseBlocked++
			mustExec(t, db, `UPDATE mem_sweeps SET lease_until = 0 WHERE status = 'running'`)
			_, err = worker.Sweep(context.Background(), db, worker.SweepOptions{Now: &now, WallNow: &w})
		}
		if err != nil {
			t.Fatalf("iteration %d: the sweep after the kill: %v", i, err)
		}
		if n := scalar[int](t, db, `SELECT count(*) FROM mem_sweeps WHERE status = 'running'`); n != 0 {
			t.Errorf("iteration %d: %d sweeps still marked running", i, n)
		}
		checkRemovalsLogged(t, db.SQL, v.orig, v.base)
		if got := memoryState(t, db); got != want {
			t.Fatalf("iteration %d (archival %s, killed after %v, sweep %s, %d events): the finishing sweep did not converge\n"+
				"here, not in the reference:\n%s\nin the reference, not here:\n%s",
				i, v.archival, delay, status, applied, diffLines(got, want), diffLines(want, got))
		}
		// Finished means finished: nothing is left to remove at this clock.
		r := sweepChunked(t, db, clock, wall, worker.SweepOptions{ChunkSize: worker.DefaultChunkSize})
		if n := r.Archived + r.EdgesPruned + r.EdgesDecayed + r.Facts.Archived + r.Facts.Pruned; n != 0 {
			t.Errorf("iteration %d: another sweep at the same clock still removed %d rows: %s", i, n, r.Summary)
		}
		db.Close()
	}
	t.Logf("a sweep takes %v here; kills landed (archival, where): %v; leases that refused the next sweep: %d",
		span, landed, leaseBlocked)
}

// TestCutSweepKeepsBridgeDecision: a faded hub is a bridge on the graph
// before the sweep (degree 3.6 ≥ d[4] = 3.0), so the sweep keeps it while
// decaying its four edges. Cut after two of them, the sweep is finished by
// the next one at the same clock, which must keep the hub too, although on
// the thinned graph (degree 1.8 < 1.9) it would no longer be a bridge.
func TestCutSweepKeepsBridgeDecision(t *testing.T) {
	const fixture = `
		INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES
			('hub','observation',0), ('a','knowledge',495), ('b','knowledge',495), ('c','knowledge',495),
			('d','knowledge',495), ('e','knowledge',495);
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES
			('a','hub',0.9,0,0), ('b','hub',0.9,0,0), ('c','hub',0.9,0,0), ('d','hub',0.9,0,0),
			('a','e',1.0,0,495), ('b','e',1.0,0,495), ('c','e',1.0,0,495);`
	now := 500.0
	ref, _ := newMemory(t, fixture)
	if r := sweepWith(t, ref, worker.SweepOptions{Now: &now, ChunkSize: 1}); r.Archived != 0 || r.EdgesDecayed != 4 {
		t.Fatalf("uninterrupted sweep: %s", r.Summary)
	}
	db, _ := newMemory(t, fixture)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cut := func(step string, done, _ int64) {
		if step == "plan_edges" && done == 2 {
			cancel()
		}
	}
	// One edge per transaction, alone on the file too (SoloChunkSize not
	// above ChunkSize), so that the cut lands after exactly two.
	_, err := worker.Sweep(ctx, db, worker.WithChunk(worker.SweepOptions{Now: &now, ChunkSize: 1, SoloChunkSize: 1}, cut))
	if err == nil {
		t.Fatal("the sweep was not cut")
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM mem_events`); n == 0 || n == 4 {
		t.Fatalf("%d edges decayed before the cut, want some but not all", n)
	}
	sweepWith(t, db, worker.SweepOptions{Now: &now, ChunkSize: 1})
	if got, want := memoryState(t, db), memoryState(t, ref); got != want {
		t.Errorf("the finished sweep differs from an uninterrupted one\nhere, not there:\n%s\nthere, not here:\n%s",
			diffLines(got, want), diffLines(want, got))
	}
}
