package worker_test

// An app writing beside a sweep, on a connection of its own: its writes
// never fail, what it refreshes or links is not removed, and what it
// queues is settled. The app acts from the sweep's Chunk signal, not after
// a sleep.

import (
	"cmp"
	"context"
	"database/sql"
	"math/rand"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker"
)

// TestWriterBesideSweep: while a sweep of a few thousand edges applies in
// chunks of 20, an app with its own connection (WAL, busy_timeout 5000)
// inserts and co-retrieves edges every ~2 ms. No write may fail, no
// refreshed or new edge may be removed (unless its block was archived with
// everything touching it), and every removal has exactly one event.
//
// To prove anything the app must write while the sweep applies its plan:
// at least minWrites writes between the first and the last transaction of
// the apply steps. On a loaded machine the app may be slower than the
// sweep, so before each apply transaction the sweep waits, at its Chunk
// signal, until the app has finished a write since the last one.
func TestWriterBesideSweep(t *testing.T) {
	const minWrites = 100
	const nBlocks = 250
	orig := bigMemory(t, 21, nBlocks, 3000)
	path := copyMemory(t, orig)
	db := openAsWorker(t, path)
	app := openAsApp(t, path)
	clock, wall := bigClock+150, bigWall.Add(30*24*time.Hour)
	// Co-retrieval targets: heavy enough that a refreshed edge never decays.
	var targets [][2]string
	rows, err := db.SQL.Query(`SELECT from_id, to_id FROM mem_edges WHERE relation_type = 'similar' AND typeof(weight) = 'real'
		AND weight >= 0.5 ORDER BY from_id, to_id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var p [2]string
		if err := rows.Scan(&p[0], &p[1]); err != nil {
			t.Fatal(err)
		}
		targets = append(targets, p)
	}
	rows.Close()

	stop := make(chan struct{})
	var attempts, committed atomic.Int64 // the app's writes finished, and those that succeeded
	wrote := make(chan struct{}, 1)      // the app finished a write
	var touched, inserted [][2]string
	var writes, failed int
	var worst time.Duration
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
			var pair [2]string
			began := time.Now()
			insert := rng.Intn(3) == 0
			if insert {
				a, b := rng.Intn(nBlocks), rng.Intn(nBlocks)
				if a == b {
					continue
				}
				pair = [2]string{bigBlock(min(a, b)), bigBlock(max(a, b))}
				res, err = app.Exec(`INSERT OR IGNORE INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours,
					last_observed_at) VALUES (?, ?, ?, 0, ?, ?)`, pair[0], pair[1], 0.5+rng.Float64()/2, clock, wall.Unix())
			} else {
				pair = targets[rng.Intn(len(targets))]
				res, err = app.Exec(`UPDATE mem_edges SET reinforcement_count = reinforcement_count + 1, last_active_hours = ?
					WHERE from_id = ? AND to_id = ?`, clock, pair[0], pair[1])
			}
			worst = max(worst, time.Since(began))
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
				firstErr = cmp.Or(firstErr, err)
				continue
			}
			if n, _ := res.RowsAffected(); n == 1 {
				touched = append(touched, pair)
				if insert {
					inserted = append(inserted, pair)
				}
			}
		}
	}()
	// Before each transaction of the apply steps but the first, the app has
	// finished a write since the transaction before, or the sweep waits.
	applySteps := map[string]bool{"plan_blocks": true, "plan_edges": true, "plan_flags": true, "plan_facts": true}
	var transactions, waited int       // apply transactions, and those the sweep waited for the app before
	var tried int64                    // the app's writes finished when the latest apply transaction began
	first, last := int64(-1), int64(0) // the app's committed writes at the first and the latest apply signal
	chunk := func(step string, done, total int64) {
		if !applySteps[step] {
			return
		}
		if done < total {
			if first >= 0 && attempts.Load() == tried {
				waited++
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
	r, err := worker.Sweep(context.Background(), db, worker.WithChunk(worker.SweepOptions{Now: &clock, WallNow: &wall, ChunkSize: 20,
		Pause: worker.DefaultPause}, chunk))
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("sweep: %v", err)
	}
	during := last - first
	t.Logf("app writes during the sweep: %d (%d failed), %d of them while it applied %d transactions (it waited for the app before %d); "+
		"worst latency %v; sweep: %s, %d planned rows skipped",
		writes, failed, during, transactions, waited, worst, r.Summary, r.Skipped)
	if failed > 0 {
		t.Errorf("%d of %d app writes failed, first: %v", failed, writes, firstErr)
	}
	if first < 0 || during < minWrites {
		t.Errorf("the app wrote %d times while the sweep applied its plan in %d transactions, want at least %d",
			during, transactions, minWrites)
	}
	if r.Skipped < 0 || r.Skipped > int64(len(touched)) {
		t.Errorf("report skipped %d planned rows; the app wrote %d rows", r.Skipped, len(touched))
	}
	for _, p := range touched {
		present := scalar[int](t, db, `SELECT count(*) FROM mem_edges WHERE from_id = ? AND to_id = ?`, p[0], p[1])
		if present == 1 {
			continue
		}
		ev := eventsFor(t, db, "edge", edgeSubject(p[0], p[1]))
		if len(ev) == 0 || ev[len(ev)-1].Reason != "block_archived" {
			t.Errorf("edge %s-%s, written by the app during the sweep, was removed: %+v", p[0], p[1], ev)
		}
	}
	relinked := 0
	for _, p := range inserted {
		if len(eventsFor(t, db, "edge", edgeSubject(p[0], p[1]))) > 0 {
			relinked++
		}
	}
	t.Logf("the app linked %d new edges, %d of them pairs the sweep removed or then removed with their block", len(inserted), relinked)
	integrityOK(t, db.SQL)
	checkRemovalsLogged(t, db.SQL, orig, 0, inserted...)
}

// TestRefreshDuringSweepWins: an app refreshes edges the sweep planned to
// decay, between its chunks (from the Chunk signal, on a connection of its
// own): those edges stay, with no event, and the sweep counts them as
// skipped; everything else ends exactly as without the app.
func TestRefreshDuringSweepWins(t *testing.T) {
	orig := bigMemory(t, 31, 200, 2500)
	clock, wall := bigClock+150, bigWall.Add(30*24*time.Hour)
	ref := openAsWorker(t, copyMemory(t, orig))
	sweepChunked(t, ref, clock, wall, worker.SweepOptions{})
	var decayed [][2]string
	rows, err := ref.SQL.Query(`SELECT json_extract(subject_id, '$[0]'), json_extract(subject_id, '$[1]') FROM mem_events
		WHERE subject_kind = 'edge' AND action = 'decay' AND reason = 'temporal' ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var p [2]string
		if err := rows.Scan(&p[0], &p[1]); err != nil {
			t.Fatal(err)
		}
		decayed = append(decayed, p)
	}
	rows.Close()
	if len(decayed) < 100 {
		t.Fatalf("only %d temporal decays in the reference", len(decayed))
	}
	rng := rand.New(rand.NewSource(31))
	rng.Shuffle(len(decayed), func(i, j int) { decayed[i], decayed[j] = decayed[j], decayed[i] })
	early, late := decayed[:20], decayed[20:60]
	// A link the app makes onto a block the sweep is about to archive goes
	// with the block (recorded), and is no planned decision overtaken.
	fading := scalar[string](t, ref, `SELECT subject_id FROM mem_events WHERE subject_kind = 'block' AND action = 'archive' ORDER BY id DESC LIMIT 1`)
	partner := scalar[string](t, ref, `SELECT id FROM mem_blocks b WHERE id != ?1
		AND NOT EXISTS (SELECT 1 FROM mem_edges e WHERE e.from_id = min(b.id, ?1) AND e.to_id = max(b.id, ?1))
		AND NOT EXISTS (SELECT 1 FROM mem_events v WHERE v.subject_kind = 'edge' AND v.subject_id = json_array(min(b.id, ?1), max(b.id, ?1)))
		ORDER BY id LIMIT 1`, fading)
	link := [2]string{min(partner, fading), max(partner, fading)}

	path := copyMemory(t, orig)
	db := openAsWorker(t, path)
	app := openAsApp(t, path)
	refreshed := map[[2]string]bool{}
	refresh := func(pairs [][2]string) {
		for _, p := range pairs {
			res, err := app.Exec(`UPDATE mem_edges SET reinforcement_count = reinforcement_count + 1, last_active_hours = ?
				WHERE from_id = ? AND to_id = ?`, clock, p[0], p[1])
			if err != nil {
				t.Errorf("app write between chunks: %v", err)
				continue
			}
			if n, _ := res.RowsAffected(); n == 1 {
				refreshed[p] = true
			}
		}
	}
	r := sweepChunked(t, db, clock, wall, worker.WithChunk(worker.SweepOptions{}, func(step string, done, total int64) {
		if step == "plan_blocks" && done == 0 {
			if _, err := app.Exec(`INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours)
				VALUES (?, ?, 0.9, 0, ?)`, link[0], link[1], clock); err != nil {
				t.Errorf("app link between chunks: %v", err)
			}
		}
		if step != "plan_edges" {
			return
		}
		switch {
		case done == 0:
			refresh(early)
		case done >= total/2 && late != nil:
			refresh(late)
			late = nil
		}
	}))
	if late != nil {
		t.Fatal("the edge step never reached its middle")
	}
	if len(refreshed) < 30 {
		t.Fatalf("only %d planned edges were still there to refresh", len(refreshed))
	}
	if r.Skipped != int64(len(refreshed)) {
		t.Errorf("report skipped %d, want %d (the refreshed edges)", r.Skipped, len(refreshed))
	}
	for p := range refreshed {
		if n := scalar[int](t, db, `SELECT count(*) FROM mem_edges WHERE from_id = ? AND to_id = ? AND last_active_hours = ?`,
			p[0], p[1], clock); n != 1 {
			t.Errorf("refreshed edge %s-%s was removed", p[0], p[1])
		}
		if ev := eventsFor(t, db, "edge", edgeSubject(p[0], p[1])); len(ev) != 0 {
			t.Errorf("refreshed edge %s-%s has events %+v", p[0], p[1], ev)
		}
		// The plan gave it no due time (it was to go); the app's write
		// queued it, so the sweep's settling stored one.
		if n := scalar[int](t, db, `SELECT count(*) FROM mem_edge_due WHERE from_id = ? AND to_id = ?`, p[0], p[1]); n != 1 {
			t.Errorf("refreshed edge %s-%s has %d due rows, want 1", p[0], p[1], n)
		}
	}
	if ev := eventsFor(t, db, "edge", edgeSubject(link[0], link[1])); len(ev) != 1 || ev[0].Reason != "block_archived" {
		t.Errorf("the app's link %s-%s onto archived block %s: events %+v, want one block_archived", link[0], link[1], fading, ev)
	}
	// Apart from the refreshed edges and the link, the rows and events are
	// the reference's.
	needles := []string{" " + edgeSubject(link[0], link[1]) + " "} // how memoryState names an edge: its row, its events
	for p := range refreshed {
		needles = append(needles, "[edge "+p[0]+" "+p[1]+" ", " "+edgeSubject(p[0], p[1])+" ")
	}
	without := func(state string) string {
		var keep []string
		for _, l := range strings.Split(state, "\n") {
			if !slices.ContainsFunc(needles, func(n string) bool { return strings.Contains(l, n) }) {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	if got, want := without(memoryState(t, db)), without(memoryState(t, ref)); got != want {
		t.Errorf("beyond the refreshed edges, the sweep differs from the reference\nhere, not there:\n%s\nthere, not here:\n%s",
			diffLines(got, want), diffLines(want, got))
	}
	checkRemovalsLogged(t, db.SQL, orig, 0)
}

// TestSweepSettlesItsQueue: before it ends, a sweep refreshes what was
// queued while it ran (its own removals and reinforcements, and an app's
// write made meanwhile) and leaves the queues empty; the app's write is not
// lost: its due time is stored, and the next sweep acts on it.
func TestSweepSettlesItsQueue(t *testing.T) {
	path := bigMemory(t, 41, 200, 2500)
	clock, wall := bigClock+150, bigWall.Add(30*24*time.Hour)
	db := openAsWorker(t, path)
	app := openAsApp(t, path)
	pair := [2]string{}
	if err := app.QueryRow(`SELECT min(a.id, b.id), max(a.id, b.id) FROM mem_blocks a, mem_blocks b
		WHERE a.id < b.id AND a.status = 'active' AND b.status = 'active'
		  AND NOT EXISTS (SELECT 1 FROM mem_edges e WHERE e.from_id = a.id AND e.to_id = b.id)
		ORDER BY a.id, b.id LIMIT 1`).Scan(&pair[0], &pair[1]); err != nil {
		t.Fatal(err)
	}
	written := false
	r := sweepChunked(t, db, clock, wall, worker.WithChunk(worker.SweepOptions{}, func(step string, done, total int64) {
		if step == "plan_edges" && done >= total/2 && !written {

			if _, err := app.Exec(`INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours)
				VALUES (?, ?, 0.01, 0, ?)`, pair[0], pair[1], clock); err != nil {
				t.Errorf("app write during the sweep: %v", err)
			}
			written = true
		}
	}))
	if !written || r.EdgesDecayed+r.EdgesPruned == 0 {
		t.Fatalf("the sweep removed nothing or never reached its middle: %+v", r)
	}
	for _, q := range []string{"mem_dirty_edges", "mem_dirty_blocks", "mem_dirty_facts", "mem_sweep_plans"} {
		if n := scalar[int64](t, db, "SELECT count(*) FROM "+q); n != 0 {
			t.Fatalf("%d rows left in %s after the sweep", n, q)
		}
	}
	if due := scalar[float64](t, db, `SELECT due_hours FROM mem_edge_due WHERE from_id = ? AND to_id = ?`, pair[0], pair[1]); due > clock {
		t.Fatalf("the app's weak edge is due at %v, after the clock %v", due, clock)
	}
	if n := scalar[int64](t, db, `SELECT count(*) FROM mem_edge_due d
		WHERE NOT EXISTS (SELECT 1 FROM mem_edges e WHERE e.from_id = d.from_id AND e.to_id = d.to_id)`); n != 0 {
		t.Fatalf("%d due rows of edges that are gone", n)
	}
	next := sweepChunked(t, db, clock, wall, worker.SweepOptions{})
	if next.EdgesPruned != 1 || scalar[int64](t, db, `SELECT count(*) FROM mem_edges WHERE from_id = ? AND to_id = ?`, pair[0], pair[1]) != 0 {
		t.Fatalf("the next sweep pruned %d edges; want the app's weak edge", next.EdgesPruned)
	}
}
