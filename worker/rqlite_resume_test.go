package worker_test

// A sweep on rqlite cut off by a node failure: the leader is killed
// (SIGKILL) while the sweep removes edges, and the worker stops at the same
// moment, so the sweep ends unfinished with its plan saved. The next sweep
// at the same clock, pointed at a surviving node, takes it over and leaves
// on every node exactly what the same sweep leaves uninterrupted on a local
// copy; the killed node, restarted, catches up to the same rows. The last
// test makes the same cut on a file swept as on rqlite, without a cluster.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memdecay/memdecay/internal/rqcluster"
	"github.com/memdecay/memdecay/worker"
)

// TestRqliteCutSweepFinishedThroughSurvivor: the worker is stopped (its
// context cancelled) as the leader dies. It records its sweep as
// interrupted once the survivors have elected a new leader (a request no
// node took is retried), and the next sweep, through the other survivor,
// resumes the saved plan.
func TestRqliteCutSweepFinishedThroughSurvivor(t *testing.T) {
	f := newCutCluster(t)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	killed := false
	opt := worker.WithChunk(worker.SweepOptions{Now: &f.clock, WallNow: &f.wall, ChunkSize: 10, SoloChunkSize: 10}, func(step string, done, total int64) {
		if step == "plan_edges" && done >= 20 && !killed {
			killed = true
			stop()
			if err := f.leader.Kill(); err != nil {
				t.Error(err)
			}
		}
	})

	_, err := worker.Sweep(ctx, openNode(t, f.followers[0]), opt)
	if !killed {
		t.Fatalf("the sweep never reached its edge removals (err %v)", err)
	}
	if err == nil {
		t.Fatal("the cut sweep reported success")
	}
	t.Logf("the cut sweep ended with: %v", err)
	cut := f.cutSweep(t, "interrupted")
	f.finish(t, f.followers[1], cut)
}

// TestRqliteKilledWorkerSweepFinishedThroughSurvivor: memworker and the
// leader are both killed (SIGKILL) while the sweep removes edges, so the
// sweep's lease is still held when the next sweep comes. Its owner was a
// process on this host that is gone, so the next sweep, through a
// survivor, takes over at once (a lease held from another host lasts
// LeaseDuration).
func TestRqliteKilledWorkerSweepFinishedThroughSurvivor(t *testing.T) {
	bin := buildMemworker(t)
	f := newCutCluster(t)
	ctx := context.Background()
	// Transactions of 10 rows at least 100ms apart: the edge removals take
	// over half a second, and the kill lands among them.
	cmd := exec.Command(bin, "sweep", "--db", f.followers[0].URL, "--now", fmt.Sprint(f.clock),
		"--wall-now", fmt.Sprint(f.wall.Unix()), "--chunk", "10", "--solo-chunk", "10", "--pause", "100ms", "--json")
	out, err := os.Create(filepath.Join(t.TempDir(), "memworker.out"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var waitErr error
	exited := make(chan struct{})
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-exited }) // when the test ends early
	output := func() string { b, _ := os.ReadFile(out.Name()); return string(b) }
	deadline := time.Now().Add(30 * time.Second)
	for {
		rows, err := f.leader.Query(ctx, `SELECT count(*) FROM mem_events`)
		if err == nil && rows[0][0].(int64) > f.blockEvents {
			break
		}
		select {
		case <-exited:
			t.Fatalf("memworker ended before its edge removals: %v\n%s", waitErr, output())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("memworker never reached its edge removals (last: %v)\n%s", err, output())
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	if waitErr == nil {
		t.Fatalf("memworker finished before it was killed\n%s", output())
	}
	if err := f.leader.Kill(); err != nil {
		t.Fatal(err)
	}
	cut := f.cutSweep(t, "running")
	f.finish(t, f.followers[0], cut)
}

// cutCluster is a 3-node cluster holding a generated memory, and the same
// sweep done uninterrupted on a local copy.
type cutCluster struct {
	orig      string
	c         *rqcluster.Cluster
	local     *worker.DB
	want      *worker.Report
	clock     float64
	wall      time.Time
	leader    *rqcluster.Node
	followers []*rqcluster.Node
	// Events of the local sweep: after its block archivals, and after its
	// edge removals too. A cut among the edge removals leaves between the two.
	blockEvents, edgeEvents int64
	localEvents             int64
}

func newCutCluster(t *testing.T) *cutCluster {
	t.Helper()
	ctx := context.Background()
	f := &cutCluster{orig: bigMemory(t, 9, 80, 900), clock: 500, wall: time.Unix(1_800_000_000, 0)}
	f.c = startCluster(t, 3, f.orig)
	f.local = openAsWorker(t, copyMemory(t, f.orig))
	events := func() int64 { return scalar[int64](t, f.local, `SELECT count(*) FROM mem_events`) }
	var err error
	f.want, err = worker.Sweep(ctx, f.local, worker.WithChunk(worker.SweepOptions{Now: &f.clock, WallNow: &f.wall}, func(step string, done, total int64) {
		switch {
		case step == "plan_edges" && done == 0:
			f.blockEvents = events()
		case step == "plan_edges" && done == total:
			f.edgeEvents = events()
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	f.localEvents = events()
	if f.want.EdgesPruned+f.want.EdgesDecayed < 40 || f.edgeEvents-f.blockEvents < 40 || f.localEvents == f.edgeEvents {
		t.Fatalf("the local sweep has too little work for a cut among its edge removals: %s (events %d, %d, %d)",
			reportCounts(f.want), f.blockEvents, f.edgeEvents, f.localEvents)
	}
	if f.leader, err = f.c.Leader(ctx); err != nil {
		t.Fatal(err)
	}
	if f.followers, err = f.c.Followers(ctx); err != nil {
		t.Fatal(err)
	}
	return f
}

// cutSweep waits for the survivors to elect a leader and returns the id of
// the cut sweep, checking that it is recorded with status, its plan saved,
// and that it was cut among its edge removals.
func (f *cutCluster) cutSweep(t *testing.T, status string) int64 {
	t.Helper()
	leader, err := f.c.Leader(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// A strong read goes through the log: it sees every write the old
	// leader had committed, which the new one may not have applied yet.
	db, err := worker.OpenRqlite(context.Background(), leader.URL+"?level=strong")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var id, leaseUntil int64
	var got string
	var planned bool
	if err := db.SQL.QueryRow(`SELECT id, status, lease_until, plan IS NOT NULL FROM mem_sweeps ORDER BY id DESC LIMIT 1`).
		Scan(&id, &got, &leaseUntil, &planned); err != nil {
		t.Fatal(err)
	}
	events := scalar[int64](t, db, `SELECT count(*) FROM mem_events`)
	t.Logf("cut sweep %d: %s, lease until %s, plan saved %v, %d of %d events", id, got,
		time.Unix(leaseUntil, 0).Format(time.TimeOnly), planned, events, f.localEvents)
	if got != status || !planned {
		t.Fatalf("the cut sweep %d is %s with plan saved %v; want %s with its plan", id, got, planned, status)
	}
	if status == "running" && time.Unix(leaseUntil, 0).Before(time.Now()) {
		t.Fatalf("the cut sweep's lease has already expired; the takeover would not show the dead owner's lease is void")
	}
	if events <= f.blockEvents || events >= f.edgeEvents {
		t.Fatalf("the cut landed outside the edge removals: %d events, want between %d and %d", events, f.blockEvents, f.edgeEvents)
	}
	return id
}

// finish runs the next sweep at the same clock through node n, which must
// resume the cut sweep and end where the local sweep did on every running
// node, then on the killed leader once restarted.
func (f *cutCluster) finish(t *testing.T, n *rqcluster.Node, cut int64) {
	t.Helper()
	ctx := context.Background()
	r, err := worker.Sweep(ctx, openNode(t, n), worker.SweepOptions{Now: &f.clock, WallNow: &f.wall})
	if err != nil {
		t.Fatalf("the sweep after the cut, through node %s: %v", n.ID, err)
	}
	if !r.Resumed || r.SweepID != cut {
		t.Errorf("the next sweep did not take over the cut one: resumed %v, sweep %d (cut %d)", r.Resumed, r.SweepID, cut)
	}
	if reportCounts(r) != reportCounts(f.want) {
		t.Errorf("the finished sweep's report differs from the local one\nlocal    %s\nfinished %s", reportCounts(f.want), reportCounts(r))
	}
	want := memoryState(t, f.local)
	expectEveryNode(t, f.c, want)
	for _, node := range f.c.Running() {
		f.checkFinished(t, node, cut)
	}
	if err := f.leader.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	expectEveryNode(t, f.c, want)
	f.checkFinished(t, f.leader, cut)
}

// checkFinished checks a node's own copy: the cut sweep done with as many
// events as the local one and none twice, nothing left running or saved,
// no working table left, and one event for every row removed or archived.
func (f *cutCluster) checkFinished(t *testing.T, n *rqcluster.Node, cut int64) {
	t.Helper()
	db := nodeDB(t, n)
	for _, c := range []struct {
		what, query string
		want        int64
	}{
		{"events of the finished sweep", `SELECT count(*) FROM mem_events WHERE sweep_id = ?`, f.localEvents},
		{"subjects with more than one event", `SELECT count(*) FROM (SELECT 1 FROM mem_events WHERE sweep_id = ?
			GROUP BY subject_kind, subject_id, action HAVING count(*) > 1)`, 0},
		{"events of other sweeps", `SELECT count(*) FROM mem_events WHERE sweep_id != ?`, 0},
		{"sweeps other than the finished one, or not done", `SELECT count(*) FROM mem_sweeps WHERE id != ? OR status != 'done'`, 0},
		{"saved plan rows left", `SELECT count(*) FROM mem_sweep_plans`, 0},
		{"working tables left", `SELECT count(*) FROM sqlite_master WHERE name LIKE 'mem\_work\_%' ESCAPE '\'`, 0},
	} {
		var args []any
		if strings.Contains(c.query, "?") {
			args = append(args, cut)
		}
		if got := scalar[int64](t, db, c.query, args...); got != c.want {
			t.Errorf("node %s: %s: %d, want %d", n.ID, c.what, got, c.want)
		}
	}
	checkRemovalsLogged(t, nodeCopy(t, n).SQL, f.orig, 0)
}

// nodeCopy is a local copy of node n's own database (its backup, not the
// leader's), to check with SQL a node cannot run (ATTACH).
func nodeCopy(t *testing.T, n *rqcluster.Node) *worker.DB {
	t.Helper()
	resp, err := http.Get(n.URL + "/db/backup?noleader")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("backup of node %s: %s %v", n.ID, resp.Status, err)
	}
	path := filepath.Join(t.TempDir(), "node"+n.ID+".db")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return openAsWorker(t, path)
}

// TestReplicaCutSweepFinished is the same cut without a cluster: a file
// swept as a sweep runs on rqlite (replicaStore), stopped among its edge
// removals, then finished by the next sweep at the same clock.
func TestReplicaCutSweepFinished(t *testing.T) {
	orig := bigMemory(t, 9, 80, 900)
	clock, wall := 500.0, time.Unix(1_800_000_000, 0)
	ref := openAsWorker(t, copyMemory(t, orig))
	want := sweepWith(t, ref, worker.SweepOptions{Now: &clock, WallNow: &wall})
	db := openAsWorker(t, copyMemory(t, orig))
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	opt := worker.WithChunk(worker.SweepOptions{Now: &clock, WallNow: &wall, ChunkSize: 10, SoloChunkSize: 10}, func(step string, done, _ int64) {
		if step == "plan_edges" && done >= 20 {
			stop()
		}
	})

	if _, err := worker.SweepReplicated(ctx, db, opt); err == nil {
		t.Fatal("the sweep was not cut")
	}
	r, err := worker.SweepReplicated(context.Background(), db, worker.SweepOptions{Now: &clock, WallNow: &wall})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Resumed || reportCounts(r) != reportCounts(want) {
		t.Errorf("the finishing sweep (resumed %v) differs from an uninterrupted one\nuninterrupted %s\nfinished      %s",
			r.Resumed, reportCounts(want), reportCounts(r))
	}
	if got, w := memoryState(t, db), memoryState(t, ref); got != w {
		t.Errorf("the finished sweep leaves other rows\nhere, not there:\n%s\nthere, not here:\n%s", diffLines(got, w), diffLines(w, got))
	}
	if n := scalar[int64](t, db, `SELECT count(*) FROM mem_sweep_plans`); n != 0 {
		t.Errorf("%d saved plan rows left", n)
	}
}
