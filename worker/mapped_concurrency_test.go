package worker_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker"
)

// TestMappedKillNineConverges kills `memworker sweep` of memory.toml's
// tables with SIGKILL at random moments, and checks that the file is
// intact, every removal so far has exactly one event, and one more sweep
// at the same clock ends as an uninterrupted sweep does.
func TestMappedKillNineConverges(t *testing.T) {
	iterations := 8
	if testing.Short() {
		iterations = 3
	}
	s := appShape
	bin := buildMemworker(t)
	db, orig := shapedMemory(t, s, randomGraph(9, 300, 2000, s.gen), s.base)
	db.Close()
	c := s.base.after(40)
	ref := openAsWorker(t, copyMemory(t, orig))
	r := sweepShape(t, s, ref, c, worker.SweepOptions{})
	if r.EdgesRemoved < 200 || r.Archived == 0 {
		t.Fatalf("the reference sweep does not have the work the test needs: %s", r.Summary)
	}
	once := shapeState(t, ref, s)
	sweepShape(t, s, ref, c, worker.SweepOptions{})
	twice := shapeState(t, ref, s) // for kills that land after the sweep finished
	ref.Close()

	args := func(path string) []string {
		return []string{"sweep", "--db", path, "--wall-now", fmt.Sprint(c.wall.Unix()), "--chunk", "20", "--pause", "0"}
	}
	whole := copyMemory(t, orig)
	start := time.Now()
	if out, err := exec.Command(bin, args(whole)...).CombinedOutput(); err != nil {
		t.Fatalf("memworker sweep: %v\n%s", err, out)
	}
	span := time.Since(start)
	if got := shapeState(t, openAsWorker(t, whole), s); got != once {
		t.Fatalf("the binary's sweep differs from the in-process one:\n%s", diffLines(got, once))
	}

	rng := rand.New(rand.NewSource(15))
	landed := map[string]int{}
	for i := range iterations {
		path := copyMemory(t, orig)
		delay := time.Duration(rng.Int63n(int64(span + span/10)))
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
			if killed = ws.Signaled() && ws.Signal() == syscall.SIGKILL; !killed {
				t.Fatalf("iteration %d: memworker failed on its own: %v", i, err)
			}
		} else if err != nil {
			t.Fatal(err)
		}

		db := openAsWorker(t, path)
		integrityOK(t, db.SQL)
		checkLinksLogged(t, db.SQL, orig, 0)
		status := scalar[string](t, db, `SELECT coalesce((SELECT status FROM mem_sweeps ORDER BY id DESC LIMIT 1), 'none')`)
		if !killed {
			status = "exited"
		}
		landed[status]++
		want := once
		if status == "done" || status == "exited" {
			want = twice
		}
		// A SIGKILLed worker cannot release its lease; were the next sweep
		// refused, expire it by hand (LeaseDuration is a minute).
		_, err = worker.Sweep(context.Background(), db, s.opt(c, worker.SweepOptions{}))
		if errors.Is(err, worker.ErrSweepRunning) {
			mustExec(t, db, `UPDATE mem_sweeps SET lease_until = 0 WHERE status = 'running'`)
			_, err = worker.Sweep(context.Background(), db, s.opt(c, worker.SweepOptions{}))
		}
		if err != nil {
			t.Fatalf("iteration %d: the sweep after the kill: %v", i, err)
		}
		checkLinksLogged(t, db.SQL, orig, 0)
		appIntact(t, db)
		if got := shapeState(t, db, s); got != want {
			t.Fatalf("iteration %d (killed after %v, sweep %s): the finishing sweep did not converge\nhere only:\n%s\nreference only:\n%s",
				i, delay, status, diffLines(got, want), diffLines(want, got))
		}
		db.Close()
	}
	t.Logf("a sweep takes %v here; kills landed (last sweep's status): %v", span, landed)
}

// TestMappedWriterBesideSweep: while a sweep of memory.toml's tables
// applies its plan in chunks of 20, the app, on a connection of its own
// with its foreign keys on, links memories, co-retrieves links and uses
// memories every ~2 ms. None of its writes fails, no link it wrote and no
// memory it used is removed or archived (a link goes only with a node
// archived), and every removal has exactly one event. The app acts from
// the sweep's Chunk signal, as in TestWriterBesideSweep.
func TestMappedWriterBesideSweep(t *testing.T) {
	const minWrites = 100
	const nNodes = 250
	s := appShape
	g := randomGraph(21, nNodes, 3000, s.gen)
	g.Policies = `INSERT INTO mem_edge_policies (relation_type, model, params, clock, threshold, action, orphans)
		VALUES ('works_on', 'half_life', '{"half_life":"150h"}', 'active_hours', 0.2, 'delete', 'keep')`
	db, orig := shapedMemory(t, s, g, s.base)
	db.Close()
	path := copyMemory(t, orig)
	db = openAsWorker(t, path)
	app := openAppFK(t, path)
	c := s.base.after(150)
	now := isoTime(c.wall, 0)
	var targets []int64
	rows, err := db.SQL.Query(`SELECT id FROM links WHERE kind = 'similar' AND strength >= 0.5 ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		targets = append(targets, id)
	}
	rows.Close()

	stop := make(chan struct{})
	var attempts, committed atomic.Int64
	wrote := make(chan struct{}, 1)
	var touched, used []int64
	var writes, failed int
	var firstErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewSource(21))
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			var res sql.Result
			var err error
			var id int64
			op := rng.Intn(3)
			switch op {
			case 0:
				a, b := 1+rng.Intn(nNodes), 1+rng.Intn(nNodes)
				if a == b {
					continue
				}
				res, err = app.Exec(`INSERT OR IGNORE INTO links (src, dst, kind, strength, hits, touched_at) VALUES (?, ?, 'similar', ?, 0, ?)`,
					a, b, 0.5+rng.Float64()/2, now)
				if err == nil {
					id, _ = res.LastInsertId()
				}
			case 1:
				id = targets[rng.Intn(len(targets))]
				res, err = app.Exec(`UPDATE links SET hits = hits + 1, touched_at = ? WHERE id = ?`, now, id)
			case 2:
				id = int64(1 + rng.Intn(nNodes))
				res, err = app.Exec(`UPDATE memories SET uses = uses + 1, last_used_at = ? WHERE id = ? AND state = 'active'`, now, id)
			}
			writes++
			if err == nil {
				committed.Add(1)
			}
			attempts.Add(1)
			select {
			case wrote <- struct{}{}:
			default:
			}
			if err != nil {
				failed++
				if firstErr == nil {
					firstErr = err
				}
				continue
			}
			if n, _ := res.RowsAffected(); n == 1 {
				if op == 2 {
					used = append(used, id)
				} else {
					touched = append(touched, id)
				}
			}
		}
	}()
	// Before each transaction of the apply steps but the first, the app has
	// finished a write since the one before, or the sweep waits for it.
	var transactions int
	var tried int64
	first, last := int64(-1), int64(0)
	chunk := func(step string, done, total int64) {
		if !strings.HasPrefix(step, "plan_") {
			return
		}
		if done < total {
			if first >= 0 {
				for attempts.Load() == tried {
					<-wrote
				}
			}
			transactions++
			tried = attempts.Load()
		}
		last = committed.Load()
		if first < 0 {
			first = last
		}
	}
	r, err := worker.Sweep(context.Background(), db, s.opt(c, worker.WithChunk(worker.SweepOptions{ChunkSize: 20, Pause: worker.DefaultPause}, chunk)))
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("sweep: %v", err)
	}
	t.Logf("app writes: %d (%d failed), %d while the sweep applied %d transactions; sweep: %s, %d planned rows skipped",
		writes, failed, last-first, transactions, r.Summary, r.Skipped)
	if failed > 0 {
		t.Errorf("%d of %d app writes failed, first: %v", failed, writes, firstErr)
	}
	if first < 0 || last-first < minWrites {
		t.Errorf("the app wrote %d times while the sweep applied its plan, want at least %d", last-first, minWrites)
	}
	for _, id := range touched {
		if scalar[int](t, db, `SELECT count(*) FROM links WHERE id = ?`, id) == 1 {
			continue
		}
		ev := s.eventsOfLink(t, db, gLink{ID: int(id)})
		if len(ev) == 0 || ev[len(ev)-1].Reason != "block_archived" {
			t.Errorf("link %d, written by the app during the sweep, was removed: %+v", id, ev)
		}
	}
	for _, id := range used {
		if st := s.statusOf(t, db, int(id)); st != "active" {
			t.Errorf("memory %d, used by the app during the sweep, is %s", id, st)
		}
	}
	if a, e := scalar[int](t, db, `SELECT count(*) FROM link_audit`),
		scalar[int](t, db, `SELECT count(*) FROM mem_events WHERE subject_kind = 'edge' AND action IN ('prune', 'decay', 'delete')`); a != e {
		t.Errorf("the app's trigger logged %d deleted links, the sweep %d removals", a, e)
	}
	appIntact(t, db)
	checkLinksLogged(t, db.SQL, orig, 0)
}

// TestMappedRqliteElfmem: an elfmem database on a 3-node rqlite cluster,
// swept through a follower on elfmem's own clock, ends on every node as
// the same file swept locally; a second sweep through another node at the
// same clock removes nothing.
func TestMappedRqliteElfmem(t *testing.T) {
	s := elfmemShape
	db, orig := shapedMemory(t, s, randomGraph(5, 80, 900, s.gen), s.base)
	db.Close()
	cl := startCluster(t, 3, orig)
	local := openAsWorker(t, copyMemory(t, orig))
	followers, err := cl.Followers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cluster := openNode(t, followers[0])
	opt := s.opt(s.base, worker.SweepOptions{ChunkSize: 50})
	rl, err := worker.Sweep(context.Background(), local, opt)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := worker.Sweep(context.Background(), cluster, opt)
	if err != nil {
		t.Fatal(err)
	}
	if mappedCounts(rl) != mappedCounts(rc) {
		t.Fatalf("reports differ\nlocal   %s\ncluster %s", mappedCounts(rl), mappedCounts(rc))
	}
	if rc.EdgesPruned+rc.EdgesDecayed == 0 || rc.Archived == 0 || rc.ClockHours != s.base.hours {
		t.Fatalf("the sweep at hour %v removed too little: %s", rc.ClockHours, mappedCounts(rc))
	}
	want := shapeState(t, local, s)
	expectEveryNodeHolds(t, cl, s, want)
	again, err := worker.Sweep(context.Background(), openNode(t, followers[1]), opt)
	if err != nil {
		t.Fatal(err)
	}
	if removedAny(again) != 0 || again.Reinforced != 0 {
		t.Fatalf("a second sweep at the same clock changed rows: %s", mappedCounts(again))
	}
	expectEveryNodeHolds(t, cl, s, want)

	// A restore through the cluster gives every node the same rows as the
	// same restore of the local file.
	var archived string
	if err := local.SQL.QueryRow(`SELECT subject_id FROM mem_events WHERE subject_kind = 'block' AND action = 'archive'
		ORDER BY id LIMIT 1`).Scan(&archived); err != nil {
		t.Fatal(err)
	}
	restoredLocal, err := worker.RestoreBlock(context.Background(), local, archived, s.base.wall)
	if err != nil {
		t.Fatal(err)
	}
	restoredCluster, err := worker.RestoreBlock(context.Background(), cluster, archived, s.base.wall)
	if err != nil {
		t.Fatal(err)
	}
	if restoredLocal.Edges != restoredCluster.Edges || restoredCluster.Edges == 0 {
		t.Fatalf("restore of block %s: %d edges locally, %d on the cluster", archived, restoredLocal.Edges, restoredCluster.Edges)
	}
	expectEveryNodeHolds(t, cl, s, shapeState(t, local, s))

	// The readers through the mapping read on the cluster what they read
	// in the local file: the removals and the links closest to decay, a
	// link explained, the plot's data.
	ctx := context.Background()
	for _, db := range []*worker.DB{local, cluster} {
		setConfig(t, db, "wall_clock", strconv.FormatInt(s.base.wall.Unix(), 10))
	}
	read := func(db *worker.DB) string {
		events, soon, err := worker.Decayed(ctx, db, 50)
		if err != nil {
			t.Fatalf("decayed: %v", err)
		}
		if len(soon) == 0 || len(events) == 0 {
			t.Fatalf("decayed found %d removals and %d links with a horizon", len(events), len(soon))
		}
		a, b := soon[0].Key, ""
		var pair []string
		if json.Unmarshal([]byte(soon[0].Key), &pair) == nil && len(pair) == 2 {
			a, b = pair[0], pair[1]
		}
		x, err := worker.ExplainEdge(ctx, db, a, b)
		if err != nil {
			t.Fatalf("explain %s: %v", soon[0].Key, err)
		}
		plot, err := worker.Plot(ctx, db)
		if err != nil {
			t.Fatalf("plot: %v", err)
		}
		out, _ := json.Marshal([]any{events, soon, x, plot.TimeLeft})
		return string(out)
	}
	if l, c := read(local), read(cluster); l != c {
		t.Errorf("read through the mapping, the cluster and the file differ:\nfile    %s\ncluster %s", l, c)
	}
}
