package worker_test

// One sweep means one sweep. A second sweep refused while the first runs
// leaves it alone (on rqlite its working tables are main tables any
// connection could drop); a sweep paused past its lease, whose place
// another sweep took, stops at its next transaction without writing.

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker"
)

// sweepFn runs one sweep of the database under test: on a file, on a file
// as on rqlite, or through a node of a cluster.
type sweepFn func(ctx context.Context, opt worker.SweepOptions) (*worker.Report, error)

// leaseFixture is a generated memory and the sweep an uninterrupted run
// makes of it, at one clock.
type leaseFixture struct {
	orig  string
	clock float64
	wall  time.Time
	want  *worker.Report
	state string
}

func newLeaseFixture(t *testing.T) *leaseFixture {
	t.Helper()
	f := &leaseFixture{orig: bigMemory(t, 9, 80, 900), clock: 500, wall: time.Unix(1_800_000_000, 0)}
	ref := openAsWorker(t, copyMemory(t, f.orig))
	f.want = sweepWith(t, ref, worker.SweepOptions{Now: &f.clock, WallNow: &f.wall})
	f.state = memoryState(t, ref)
	if f.want.EdgesPruned+f.want.EdgesDecayed < 40 || f.want.Reinforced == 0 {
		t.Fatalf("the sweep has too little to do for a pause among its edge removals: %s", reportCounts(f.want))
	}
	return f
}

// opt is the sweep at the fixture's clock, in transactions of 10 rows.
func (f *leaseFixture) opt() worker.SweepOptions {
	return worker.SweepOptions{Now: &f.clock, WallNow: &f.wall, ChunkSize: 10, SoloChunkSize: 10}
}

// pausedAt calls pause once, when the sweep has removed 20 edges.
func pausedAt(opt worker.SweepOptions, pause func()) worker.SweepOptions {
	paused := false
	opt = worker.WithChunk(opt, func(step string, done, _ int64) {
		if step == "plan_edges" && done >= 20 && !paused {
			paused = true
			pause()
		}
	})

	return opt
}

// checkRefusedLeavesFirst: while first is paused among its edge removals,
// second sweeps are refused (three of them, as sweep --wait tries again),
// and first then finishes as an uninterrupted sweep does.
func (f *leaseFixture) checkRefusedLeavesFirst(t *testing.T, first, second sweepFn, state func() string) {
	t.Helper()
	ctx := context.Background()
	refused := 0
	r, err := first(ctx, pausedAt(f.opt(), func() {
		for range 3 {
			_, err := second(ctx, worker.SweepOptions{Now: &f.clock, WallNow: &f.wall})
			if !errors.Is(err, worker.ErrSweepRunning) {
				t.Errorf("a second sweep beside a running one: %v, want ErrSweepRunning", err)
				continue
			}
			refused++
		}
	}))
	if refused == 0 {
		t.Fatal("no second sweep was refused")
	}
	if err != nil {
		t.Fatalf("the running sweep failed after a second one was refused: %v", err)
	}
	if reportCounts(r) != reportCounts(f.want) {
		t.Errorf("the running sweep's report differs from an uninterrupted one\nuninterrupted %s\nhere          %s", reportCounts(f.want), reportCounts(r))
	}
	if got := state(); got != f.state {
		t.Errorf("the running sweep left other rows\nhere, not there:\n%s\nthere, not here:\n%s", diffLines(got, f.state), diffLines(f.state, got))
	}
}

// checkFenced: first, with a lease of a second, is paused among its edge
// removals until its lease has run out and second has taken its place and
// finished; resumed, first stops with ErrLeaseLost and writes nothing, and
// the database holds exactly one sweep's work: reinforcement counted once.
func (f *leaseFixture) checkFenced(t *testing.T, first, second sweepFn, state func() string) {
	t.Helper()
	ctx := context.Background()
	var took *worker.Report
	var after string
	_, err := first(ctx, pausedAt(worker.WithLease(f.opt(), time.Second), func() {
		deadline := time.Now().Add(30 * time.Second)
		for {
			r, err := second(ctx, worker.SweepOptions{Now: &f.clock, WallNow: &f.wall})
			if err == nil {
				took = r
				break
			}
			if !errors.Is(err, worker.ErrSweepRunning) || time.Now().After(deadline) {
				t.Errorf("the sweep taking over: %v", err)
				return
			}
			time.Sleep(100 * time.Millisecond) // the first sweep's lease runs out
		}
		after = state()
	}))
	if took == nil {
		t.Fatal("no sweep took over")
	}
	if !errors.Is(err, worker.ErrLeaseLost) {
		t.Fatalf("the paused sweep, resumed after another took its place: %v, want ErrLeaseLost", err)
	}
	t.Logf("the paused sweep stopped with: %v", err)
	if got := state(); got != after {
		t.Errorf("the paused sweep wrote after losing its lease\nwritten:\n%s\ngone:\n%s", diffLines(got, after), diffLines(after, got))
	}
	if got := state(); got != f.state {
		t.Errorf("the database holds other rows than one sweep leaves\nhere, not there:\n%s\nthere, not here:\n%s", diffLines(got, f.state), diffLines(f.state, got))
	}
}

// TestRefusedSweepLeavesRunningOne: on a file, and on a file swept as on
// rqlite (working tables in main), a refused second sweep leaves the first
// alone.
func TestRefusedSweepLeavesRunningOne(t *testing.T) {
	f := newLeaseFixture(t)
	for _, replicated := range []bool{false, true} {
		path := copyMemory(t, f.orig)
		db, other := openAsWorker(t, path), openAsWorker(t, path)
		sweep := worker.Sweep
		if replicated {
			sweep = worker.SweepReplicated
		}
		f.checkRefusedLeavesFirst(t,
			func(ctx context.Context, opt worker.SweepOptions) (*worker.Report, error) { return sweep(ctx, db, opt) },
			func(ctx context.Context, opt worker.SweepOptions) (*worker.Report, error) {
				return sweep(ctx, other, opt)
			},
			func() string { return memoryState(t, db) })
		if n := scalar[int64](t, db, `SELECT count(*) FROM sqlite_master WHERE name LIKE 'mem\_work\_%' ESCAPE '\'`); n != 0 {
			t.Errorf("replicated %v: %d working tables left", replicated, n)
		}
	}
}

// TestLeaseFencing: on a file, and on a file swept as on rqlite, a sweep
// paused past its lease stops without writing once another took over.
func TestLeaseFencing(t *testing.T) {
	f := newLeaseFixture(t)
	for _, replicated := range []bool{false, true} {
		path := copyMemory(t, f.orig)
		db, other := openAsWorker(t, path), openAsWorker(t, path)
		sweep := worker.Sweep
		if replicated {
			sweep = worker.SweepReplicated
		}
		f.checkFenced(t,
			func(ctx context.Context, opt worker.SweepOptions) (*worker.Report, error) { return sweep(ctx, db, opt) },
			func(ctx context.Context, opt worker.SweepOptions) (*worker.Report, error) {
				return sweep(ctx, other, opt)
			},
			func() string { return memoryState(t, db) })
		if n := scalar[int64](t, db, `SELECT count(*) FROM mem_sweeps WHERE status = 'done'`); n != 1 {
			t.Errorf("replicated %v: %d sweeps done, want 1", replicated, n)
		}
	}
}

// TestRqliteRefusedSweepLeavesRunningOne: through two nodes of a cluster,
// a second sweep refused while the first runs leaves the first's working
// tables alone; then a sweep paused past its lease is fenced.
func TestRqliteRefusedSweepLeavesRunningOne(t *testing.T) {
	f := newLeaseFixture(t)
	c := startCluster(t, 3, f.orig)
	followers, err := c.Followers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	a, b := openNode(t, followers[0]), openNode(t, followers[1])
	through := func(db *worker.DB) sweepFn {
		return func(ctx context.Context, opt worker.SweepOptions) (*worker.Report, error) {
			return worker.Sweep(ctx, db, opt)
		}
	}
	leaderState := func() string { return memoryState(t, a) }
	f.checkRefusedLeavesFirst(t, through(a), through(b), leaderState)
	expectEveryNode(t, c, f.state)
	if n := scalar[int64](t, a, `SELECT count(*) FROM sqlite_master WHERE name LIKE 'mem\_work\_%' ESCAPE '\'`); n != 0 {
		t.Errorf("%d working tables left", n)
	}
}

// TestRqliteLeaseFencing: through two nodes of a cluster, a sweep paused
// past its lease stops without writing once another took over.
func TestRqliteLeaseFencing(t *testing.T) {
	f := newLeaseFixture(t)
	c := startCluster(t, 3, f.orig)
	followers, err := c.Followers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	a, b := openNode(t, followers[0]), openNode(t, followers[1])
	through := func(db *worker.DB) sweepFn {
		return func(ctx context.Context, opt worker.SweepOptions) (*worker.Report, error) {
			return worker.Sweep(ctx, db, opt)
		}
	}
	f.checkFenced(t, through(a), through(b), func() string { return memoryState(t, a) })
	expectEveryNode(t, c, f.state)
}
