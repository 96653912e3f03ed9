package worker_test

// memworker on a 3-node rqlite cluster on loopback: the sweep through any
// node leaves on every node exactly what the same sweep leaves in a local
// copy; a leader killed mid-sweep is survived; a node without memdecay is
// refused before anything changes.

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdecay/memdecay/internal/rqcluster"
	"github.com/memdecay/memdecay/worker"
)

// startCluster starts nodes with memdecay and loads the memory file orig
// into them.
func startCluster(t *testing.T, nodes int, orig string) *rqcluster.Cluster {
	t.Helper()
	return startClusterFrom(t, rqcluster.Options{Nodes: nodes}, orig, true)
}

// startClusterFrom starts opt's nodes with memdecay and loads the file orig
// into them: a memory the worker opens (checked), or any file as it is.
func startClusterFrom(t *testing.T, opt rqcluster.Options, orig string, checked bool) *rqcluster.Cluster {
	t.Helper()
	so, err := rqcluster.Extension()
	if err != nil {
		t.Fatal(err)
	}
	opt.Extension = so
	c := rqcluster.StartT(t, opt)
	// rqlite loads a SQLite file that is not in WAL mode.
	plain := filepath.Join(t.TempDir(), "load.db")
	if checked {
		src := openAsWorker(t, orig)
		mustExec(t, src, `VACUUM INTO ?`, plain)
		src.Close()
	} else {
		src := openAsApp(t, orig)
		if _, err := src.Exec(`VACUUM INTO ?`, plain); err != nil {
			t.Fatal(err)
		}
		src.Close()
	}
	body, err := os.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	leader, err := c.Leader(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(leader.URL+"/db/load", "application/octet-stream", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("loading the memory into rqlite: %s", resp.Status)
	}
	return c
}

// nodeDB opens one node for reading its own copy of the data.
func nodeDB(t *testing.T, n *rqcluster.Node) *worker.DB {
	t.Helper()
	db, err := worker.OpenRqlite(context.Background(), n.URL+"?level=none&disableClusterDiscovery=true")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// openNode opens the cluster through node n, as memworker --db does.
func openNode(t *testing.T, n *rqcluster.Node) *worker.DB {
	t.Helper()
	db, err := worker.OpenMemory(n.URL, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// expectEveryNode waits until every running node holds want. A node that
// cannot answer yet (restarting, replaying its log) is asked again.
func expectEveryNode(t *testing.T, c *rqcluster.Cluster, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for _, n := range c.Running() {
		for {
			got, err := nodeState(n)
			if err == nil && got == want {
				break
			}
			if time.Now().After(deadline) {
				if err != nil {
					t.Fatalf("node %s: %v", n.ID, err)
				}
				t.Fatalf("node %s differs from the local sweep\nlocal only:\n%s\nnode only:\n%s", n.ID, diffLines(want, got), diffLines(got, want))
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}

// nodeState reads node n's own copy (readMemoryState).
func nodeState(n *rqcluster.Node) (string, error) {
	db, err := worker.OpenRqlite(context.Background(), n.URL+"?level=none&disableClusterDiscovery=true")
	if err != nil {
		return "", err
	}
	defer db.Close()
	return readMemoryState(db)
}

func TestRqliteSweepMatchesLocalCopy(t *testing.T) {
	orig := bigMemory(t, 5, 80, 900)
	c := startCluster(t, 3, orig)
	local := openAsWorker(t, copyMemory(t, orig))
	followers, err := c.Followers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cluster := openNode(t, followers[0])
	clock, wall := 500.0, time.Unix(1_800_000_000, 0)
	opt := worker.SweepOptions{Now: &clock, WallNow: &wall, ChunkSize: 50}
	rl, err := worker.Sweep(context.Background(), local, opt)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := worker.Sweep(context.Background(), cluster, opt)
	if err != nil {
		t.Fatal(err)
	}
	if reportCounts(rl) != reportCounts(rc) {
		t.Fatalf("reports differ\nlocal   %s\ncluster %s", reportCounts(rl), reportCounts(rc))
	}
	if rc.EdgesPruned+rc.EdgesDecayed == 0 || rc.Archived == 0 {
		t.Fatalf("the sweep removed nothing: %s", reportCounts(rc))
	}
	expectEveryNode(t, c, memoryState(t, local))
	// One event per removal, on the cluster as locally.
	events := scalar[int64](t, cluster, `SELECT count(*) FROM mem_events WHERE sweep_id = ?`, rc.SweepID)
	if want := scalar[int64](t, local, `SELECT count(*) FROM mem_events WHERE sweep_id = ?`, rl.SweepID); events != want {
		t.Fatalf("%d events on the cluster, %d locally", events, want)
	}
	// A second sweep at the same clock, through another node, removes nothing.
	again, err := worker.Sweep(context.Background(), openNode(t, followers[1]), opt)
	if err != nil {
		t.Fatal(err)
	}
	if again.EdgesPruned+again.EdgesDecayed+again.Archived+again.Facts.Archived+again.Facts.Pruned != 0 {
		t.Fatalf("a second sweep at the same clock removed rows: %s", reportCounts(again))
	}
	expectEveryNode(t, c, memoryState(t, local))
	// A dry run changes nothing on the cluster and predicts the next sweep.
	later := clock + 150
	dry, err := worker.Sweep(context.Background(), cluster, worker.SweepOptions{DryRun: true, Now: &later, WallNow: &wall})
	if err != nil {
		t.Fatal(err)
	}
	expectEveryNode(t, c, memoryState(t, local))
	real, err := worker.Sweep(context.Background(), cluster, worker.SweepOptions{Now: &later, WallNow: &wall})
	if err != nil {
		t.Fatal(err)
	}
	if dry.EdgesDecayed != real.EdgesDecayed || dry.EdgesPruned != real.EdgesPruned || dry.Archived != real.Archived {
		t.Fatalf("the dry run did not predict the sweep\ndry  %s\nreal %s", reportCounts(dry), reportCounts(real))
	}
}

// TestRqliteLeaderKilledMidSweep: the leader dies (kill -9) while the sweep
// applies its plan; a sweep through a surviving node finishes the work,
// both survivors hold what the local sweep leaves, and the killed node,
// restarted, catches up to the same rows.
func TestRqliteLeaderKilledMidSweep(t *testing.T) {
	orig := bigMemory(t, 9, 80, 900)
	c := startCluster(t, 3, orig)
	local := openAsWorker(t, copyMemory(t, orig))
	clock, wall := 500.0, time.Unix(1_800_000_000, 0)
	if _, err := worker.Sweep(context.Background(), local, worker.SweepOptions{Now: &clock, WallNow: &wall}); err != nil {
		t.Fatal(err)
	}
	leader, err := c.Leader(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	followers, err := c.Followers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	killed := false
	opt := worker.WithChunk(worker.SweepOptions{Now: &clock, WallNow: &wall, ChunkSize: 10, SoloChunkSize: 10}, func(step string, done, total int64) {
		if step == "plan_edges" && done > 0 && !killed {
			killed = true
			if err := leader.Kill(); err != nil {
				t.Error(err)
			}
		}
	})

	_, err = worker.Sweep(context.Background(), openNode(t, followers[0]), opt)
	if !killed {
		t.Fatalf("the sweep never reached its edge removals (err %v)", err)
	}
	t.Logf("the sweep the kill cut into ended with: %v", err)
	// The next sweep through the other survivor finishes it (a sweep that
	// did survive the election leaves nothing to do).
	next := openNode(t, followers[1])
	for deadline := time.Now().Add(60 * time.Second); ; {
		_, err = worker.Sweep(context.Background(), next, worker.SweepOptions{Now: &clock, WallNow: &wall})
		if err == nil {
			break
		}
		if !errors.Is(err, worker.ErrSweepRunning) || time.Now().After(deadline) {
			t.Fatalf("the sweep after the kill: %v", err)
		}
		time.Sleep(time.Second) // the cut-off sweep's lease expires
	}
	want := memoryState(t, local)
	expectEveryNode(t, c, want)
	if err := leader.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	expectEveryNode(t, c, want)
}

// TestRqliteNodeWithoutExtension: a node that has not loaded memdecay is
// refused with the missing function and the flag, before anything changes.
func TestRqliteNodeWithoutExtension(t *testing.T) {
	c := rqcluster.StartT(t, rqcluster.Options{Nodes: 1})
	n := c.Nodes()[0]
	_, err := worker.OpenMemory(n.URL, false)
	if err == nil || !errors.Is(err, worker.ErrNoExtension) {
		t.Fatalf("got %v, want %v", err, worker.ErrNoExtension)
	}
	for _, want := range []string{"no such function: effective_weight", "-extensions-path", "nothing was changed"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	rows, err := n.Query(context.Background(), `SELECT count(*) FROM sqlite_master`)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0][0] != int64(0) {
		t.Fatalf("the node's schema changed: %v", rows)
	}
}
