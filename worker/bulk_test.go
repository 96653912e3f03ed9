package worker_test

// A bulk sweep (SweepOptions.Bulk, `memworker sweep --bulk`) runs the
// whole sweep in one write transaction: it must end exactly where a
// default sweep does, roll back whole when cut off, and leave a dry run
// a dry run.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker"
)

// wholeFile renders every row of every table in the file but mem_sweeps
// (whose rows carry times and durations): the memory, the events and
// their archives, the derived state, the queues and the saved plans;
// mem_config's edges_counted without what it names as counted (of), which
// holds the schema's version number (a bulk sweep's index rebuilt moves it).
// Without ids, the events' ids are left out: they follow the order in
// which a sweep's transactions take the steps' rows (a default sweep's
// chunks, sized by its pace, interleave the archived blocks' events with
// the removed edges'), and nothing else.
func wholeFile(t *testing.T, db *worker.DB, ids bool) string {
	t.Helper()
	rows, err := db.SQL.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\'
		AND name != 'mem_sweeps' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	rows.Close()
	var b strings.Builder
	for _, table := range tables {
		cols, err := columnsOf(db.SQL, table)
		if err != nil {
			t.Fatal(err)
		}
		if !ids {
			cols = slices.DeleteFunc(cols, func(c string) bool {
				return c == "mem_event_id" || (table == "mem_event_log" && c == "id")
			})
		}
		order := make([]string, len(cols))
		for i := range cols {
			order[i] = fmt.Sprint(i + 1)
		}
		list := quoted(cols)
		if table == "mem_config" {
			list = `key, CASE key WHEN 'edges_counted' THEN json_remove(value, '$.of') ELSE value END`
		}
		_, body := dumpRows(t, db, `SELECT `+list+` FROM "`+table+`" ORDER BY `+strings.Join(order, ", "))
		fmt.Fprintf(&b, "%s %v\n%s", table, cols, body)
	}
	return b.String()
}

// bulkSweep sweeps db in one transaction at clock and wall.
func bulkSweep(ctx context.Context, db *worker.DB, clock float64, wall time.Time, opt worker.SweepOptions) (*worker.Report, error) {
	opt.Now, opt.WallNow, opt.Bulk = &clock, &wall, true
	return worker.Sweep(ctx, db, opt)
}

// TestBulkSweepMatchesDefault: on copies of one memory (policies, pinned,
// agent and invalid edges, facts), a first sweep and a later one in bulk
// leave every row, event, archive row, derived row and queue as default
// sweeps do, and report the same: bit for bit as a default sweep that
// takes each step in one transaction, and but for the events' ids as one
// in transactions of 7 rows.
func TestBulkSweepMatchesDefault(t *testing.T) {
	for _, seed := range []int64{3, 5} {
		orig := bigMemory(t, seed, 80, 900)
		small, big := openAsWorker(t, copyMemory(t, orig)), openAsWorker(t, copyMemory(t, orig))
		bulk := openAsWorker(t, copyMemory(t, orig))
		wall := bigWall.Add(20 * 24 * time.Hour)
		for i, clock := range []float64{bigClock + 400, bigClock + 480} {
			rs := incSweep(t, small, clock, wall, false)
			rd, err := worker.Sweep(context.Background(), big, worker.SweepOptions{Now: &clock, WallNow: &wall,
				ChunkSize: 1 << 20, SoloChunkSize: 1 << 20, SoloHold: time.Hour})
			if err != nil {
				t.Fatalf("seed %d sweep %d: default: %v", seed, i, err)
			}
			rb, err := bulkSweep(context.Background(), bulk, clock, wall, worker.SweepOptions{ChunkSize: 7})
			if err != nil {
				t.Fatalf("seed %d sweep %d: bulk: %v", seed, i, err)
			}
			for _, c := range []struct {
				what string
				db   *worker.DB
				r    *worker.Report
				ids  bool
			}{{"in one transaction a step", big, rd, true}, {"in transactions of 7 rows", small, rs, false}} {
				if a, b := wholeFile(t, c.db, c.ids), wholeFile(t, bulk, c.ids); a != b {
					t.Fatalf("seed %d sweep %d: the default sweep %s and the bulk sweep differ\ndefault:\n%s\nbulk:\n%s",
						seed, i, c.what, diffLines(a, b), diffLines(b, a))
				}
				if reportCounts(c.r) != reportCounts(rb) || mappedCounts(c.r) != mappedCounts(rb) || c.r.Full != rb.Full {
					t.Fatalf("seed %d sweep %d: reports differ\ndefault %s\nbulk    %s", seed, i, mappedCounts(c.r), mappedCounts(rb))
				}
			}
			if i == 0 && rb.EdgesPruned+rb.EdgesDecayed == 0 {
				t.Fatalf("seed %d: nothing removed; the memory should have edges to remove", seed)
			}
			wall = wall.Add(72 * time.Hour)
		}
		for _, db := range []*worker.DB{small, big, bulk} {
			if n := scalar[int64](t, db, `SELECT count(*) FROM mem_sweeps WHERE status = 'done' AND finished_at IS NOT NULL`); n != 2 {
				t.Fatalf("seed %d: %d sweeps done and let go, want 2", seed, n)
			}
		}
	}
}

// TestBulkSweepMatchesDefaultMapped: the same through an app's mapping
// (the app of docs/mapping.md), a first sweep and one 100 hours later;
// the app's indexes stay as they were.
func TestBulkSweepMatchesDefaultMapped(t *testing.T) {
	s := appShape
	g := randomGraph(7, 60, 300, s.gen)
	db, orig := shapedMemory(t, s, g, s.base)
	db.Close()
	def, bulk := openAsWorker(t, copyMemory(t, orig)), openAsWorker(t, copyMemory(t, orig))
	// The app's indexes are its own: a bulk sweep neither drops nor builds
	// one again (its root page would move).
	const appIndexes = `SELECT name, tbl_name, rootpage, sql FROM sqlite_master
		WHERE type = 'index' AND tbl_name NOT LIKE 'mem\_%' ESCAPE '\' ORDER BY name`
	_, wantIndexes := dumpRows(t, bulk, appIndexes)
	if !strings.Contains(wantIndexes, "links") {
		t.Fatalf("the app's links table has no index to watch:\n%s", wantIndexes)
	}
	for _, c := range []clock{s.base.after(100), s.base.after(200)} {
		rd := sweepShape(t, s, def, c, worker.SweepOptions{ChunkSize: 7})
		rb := sweepShape(t, s, bulk, c, worker.SweepOptions{ChunkSize: 7, Bulk: true})
		if mappedCounts(rd) != mappedCounts(rb) {
			t.Fatalf("at %v: reports differ\ndefault %s\nbulk    %s", c.hours, mappedCounts(rd), mappedCounts(rb))
		}
		if a, b := shapeState(t, def, s), shapeState(t, bulk, s); a != b {
			t.Fatalf("at %v: the bulk sweep left other rows than the default one\ndefault:\n%s\nbulk:\n%s", c.hours, diffLines(a, b), diffLines(b, a))
		}
		if a, b := wholeFile(t, def, false), wholeFile(t, bulk, false); a != b {
			t.Fatalf("at %v: default and bulk sweeps differ\ndefault:\n%s\nbulk:\n%s", c.hours, diffLines(a, b), diffLines(b, a))
		}
		if removedAny(rb) == 0 && c == s.base.after(100) {
			t.Fatalf("the first sweep removed nothing: %s", rb.Summary)
		}
		if _, got := dumpRows(t, bulk, appIndexes); got != wantIndexes {
			t.Fatalf("at %v: the app's indexes changed\nbefore:\n%s\nafter:\n%s", c.hours, wantIndexes, got)
		}
	}
}

// TestBulkSweepCutRollsBack: a bulk sweep cancelled at a known point (mid
// plan, once its removals are made, while it settles) leaves every table
// as it was, records itself interrupted with no plan to resume, and the
// next sweep at the same clock ends where an uncut one does.
func TestBulkSweepCutRollsBack(t *testing.T) {
	orig := bigMemory(t, 4, 80, 900)
	clock, wall := bigClock+400, bigWall.Add(20*24*time.Hour)
	want := openAsWorker(t, copyMemory(t, orig))
	rw := incSweep(t, want, clock, wall, false)
	for _, cut := range []struct {
		step string
		last bool // at the step's end rather than its start
	}{{"sync_rows", false}, {"plan_edges", true}, {"refresh_ids", true}} {
		t.Run(cut.step, func(t *testing.T) {
			db := openAsWorker(t, copyMemory(t, orig))
			before := wholeFile(t, db, true)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			seen := false
			opt := worker.WithChunk(worker.SweepOptions{}, func(step string, done, total int64) {
				if step == cut.step && (!cut.last || done == total) {
					seen = true
					cancel()
				}
			})
			r, err := bulkSweep(ctx, db, clock, wall, opt)
			if !seen {
				t.Fatalf("the sweep never reached %s", cut.step)
			}
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("cut at %s: sweep returned %v, %v; want it cancelled", cut.step, r, err)
			}
			if after := wholeFile(t, db, true); after != before {
				t.Fatalf("cut at %s: the file changed\nbefore:\n%s\nafter:\n%s", cut.step, diffLines(before, after), diffLines(after, before))
			}
			if got := scalar[string](t, db, `SELECT status || ' ' || (plan IS NULL) FROM mem_sweeps ORDER BY id DESC LIMIT 1`); got != "interrupted 1" {
				t.Fatalf("cut at %s: the sweep is recorded %q, want interrupted with no plan", cut.step, got)
			}
			r, err = bulkSweep(context.Background(), db, clock, wall, worker.SweepOptions{})
			if err != nil {
				t.Fatalf("the sweep after the cut: %v", err)
			}
			if r.Resumed || reportCounts(r) != reportCounts(rw) {
				t.Fatalf("the sweep after the cut (resumed %v): %s\nwant %s", r.Resumed, reportCounts(r), reportCounts(rw))
			}
			if a, b := memoryState(t, want), memoryState(t, db); a != b {
				t.Fatalf("after the cut and the next sweep\nuncut:\n%s\ncut:\n%s", diffLines(a, b), diffLines(b, a))
			}
		})
	}
}

// TestBulkDryRun: --bulk with --dry-run is a dry run: it reports what the
// sweep would do and changes no byte of the file.
func TestBulkDryRun(t *testing.T) {
	path := bigMemory(t, 6, 60, 500)
	clock, wall := bigClock+400, bigWall.Add(20*24*time.Hour)
	plain := openAsWorker(t, copyMemory(t, path))
	want, err := worker.Sweep(context.Background(), plain, worker.SweepOptions{Now: &clock, WallNow: &wall, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	db := openAsWorker(t, path)
	before := fileHashes(t, path)
	r, err := bulkSweep(context.Background(), db, clock, wall, worker.SweepOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if !r.DryRun || reportCounts(r) != reportCounts(want) {
		t.Fatalf("bulk dry run (dry %v): %s\nwant %s", r.DryRun, reportCounts(r), reportCounts(want))
	}
	sameFiles(t, before, fileHashes(t, path))
}

// TestBulkRefusedOnReplica: a sweep as it runs on rqlite refuses --bulk,
// saying why, and writes nothing.
func TestBulkRefusedOnReplica(t *testing.T) {
	db := openAsWorker(t, bigMemory(t, 2, 20, 100))
	before := dumpTables(t, db)
	clock, wall := bigClock+400, bigWall
	_, err := worker.SweepReplicated(context.Background(), db, worker.SweepOptions{Now: &clock, WallNow: &wall, Bulk: true})
	if !errors.Is(err, worker.ErrBulkReplica) || !strings.Contains(err.Error(), "rqlite") {
		t.Fatalf("replicated bulk sweep: %v; want ErrBulkReplica", err)
	}
	if after := dumpTables(t, db); after != before {
		t.Fatalf("the refused sweep changed the file")
	}
}

// TestBulkSweepRebuildsEdgesToIndex: a bulk sweep that removes a fifth of
// the edges or more deletes them with mem_edges_to dropped and builds it
// again (one that removes less keeps it). The file ends as a default sweep leaves it, the index is declared
// as it was, keeps the statistics an ANALYZE gave it, and the file is
// sound. With an app's trigger on mem_edges (which could look edges up by
// their to side while they go), or a plan that deletes edges under a
// policy archiving their orphaned ends (looked up the same way), the index
// stays as it is.
func TestBulkSweepRebuildsEdgesToIndex(t *testing.T) {
	const keepOrphans = `UPDATE mem_edge_policies SET orphans = 'keep'`
	for _, c := range []struct {
		name    string
		setup   []string
		hours   float64 // after bigClock
		rebuilt bool
	}{
		{"rebuilt", []string{keepOrphans}, 700, true},
		// 77 removals of the 398 edges the archived blocks leave.
		{"short of a fifth", []string{keepOrphans}, 400, false},
		{"an app's trigger on mem_edges", []string{keepOrphans,
			`CREATE TABLE app_gone (from_id TEXT, to_id TEXT, to_degree INTEGER)`,
			`CREATE TRIGGER app_edge_gone AFTER DELETE ON mem_edges BEGIN
				INSERT INTO app_gone VALUES (OLD.from_id, OLD.to_id, (SELECT count(*) FROM mem_edges WHERE to_id = OLD.to_id));
			END`}, 700, false},
		{"a policy archiving orphans", nil, 700, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			orig := bigMemory(t, 3, 80, 900)
			setup := openAsWorker(t, orig)
			for _, q := range append(c.setup, "ANALYZE") {
				mustExec(t, setup, q)
			}
			setup.Close()
			def, bulk := openAsWorker(t, copyMemory(t, orig)), openAsWorker(t, copyMemory(t, orig))
			const index = `SELECT sql FROM sqlite_master WHERE name = 'mem_edges_to'`
			const stat = `SELECT tbl || ' ' || stat FROM sqlite_stat1 WHERE idx = 'mem_edges_to'`
			wantIndex, wantStat := scalar[string](t, bulk, index), scalar[string](t, bulk, stat)
			clock, wall := bigClock+c.hours, bigWall.Add(20*24*time.Hour)
			rd, err := worker.Sweep(context.Background(), def, worker.SweepOptions{Now: &clock, WallNow: &wall,
				ChunkSize: 1 << 20, SoloChunkSize: 1 << 20, SoloHold: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			var rebuilt []string
			rb, err := bulkSweep(context.Background(), bulk, clock, wall,
				worker.WithIndexRebuilt(worker.SweepOptions{}, func(index string) { rebuilt = append(rebuilt, index) }))
			if err != nil {
				t.Fatal(err)
			}
			if removed := rb.EdgesPruned + rb.EdgesDecayed + rb.EdgesRemovedWithBlocks; removed*5 < rb.EdgesBefore {
				t.Fatalf("the sweep removed %d of %d edges; the test needs a fifth or more", removed, rb.EdgesBefore)
			}
			if left, removals := rb.EdgesBefore-rb.EdgesRemovedWithBlocks, rb.EdgesPruned+rb.EdgesDecayed+rb.Removals()["edges_policy_decayed"]; c.name == "short of a fifth" && removals*5 >= left {
				t.Fatalf("the edges step removed %d of %d edges; the case needs less than a fifth", removals, left)
			}
			if want := map[bool]int{true: 1, false: 0}[c.rebuilt]; len(rebuilt) != want || (want == 1 && rebuilt[0] != "mem_edges_to") {
				t.Fatalf("indexes rebuilt: %q, want %d (mem_edges_to)", rebuilt, want)
			}
			if a, b := wholeFile(t, def, true), wholeFile(t, bulk, true); a != b {
				t.Fatalf("the default sweep and the bulk sweep differ\ndefault:\n%s\nbulk:\n%s", diffLines(a, b), diffLines(b, a))
			}
			if reportCounts(rd) != reportCounts(rb) {
				t.Fatalf("reports differ\ndefault %s\nbulk    %s", reportCounts(rd), reportCounts(rb))
			}
			if got := scalar[string](t, bulk, index); got != wantIndex {
				t.Fatalf("mem_edges_to is declared %q, want %q", got, wantIndex)
			}
			if got := scalar[string](t, bulk, stat); got != wantStat {
				t.Fatalf("mem_edges_to's statistics: %q, want %q as ANALYZE left them", got, wantStat)
			}
			for _, check := range []string{"PRAGMA integrity_check", "SELECT count(*) || ' rows' FROM pragma_foreign_key_check"} {
				if got := scalar[string](t, bulk, check); got != "ok" && got != "0 rows" {
					t.Fatalf("%s: %s", check, got)
				}
			}
			if _, plan := dumpRows(t, bulk, `EXPLAIN QUERY PLAN SELECT from_id FROM mem_edges WHERE to_id = 'x'`); !strings.Contains(plan, "mem_edges_to") {
				t.Fatalf("a lookup by to_id after the sweep: %s, want it through mem_edges_to", plan)
			}
		})
	}
}

// removalsMemory is a generated memory with edges to prune and to decay at
// clock and wall, with block archival off (so no block is archived before
// its edges go): open makes a copy of it to sweep.
func removalsMemory(t *testing.T) (open func() *worker.DB, clock float64, wall time.Time) {
	orig := bigMemory(t, 11, 80, 900)
	return func() *worker.DB {
		db := openAsWorker(t, copyMemory(t, orig))
		setConfig(t, db, "block_archival", "off")
		return db
	}, bigClock + 400, bigWall.Add(20 * 24 * time.Hour)
}

// TestBulkSweepPlanStands: a bulk sweep that archives no block, on a file
// whose triggers are memworker's own, takes its removals as planned
// (without looking at each edge again) and ends exactly where a default
// sweep does. With an app's trigger that rewrites a planned edge when the
// sweep stores the block states, it looks at each edge again: that edge
// stays, counted as changed since the plan.
func TestBulkSweepPlanStands(t *testing.T) {
	open, clock, wall := removalsMemory(t)
	ref := open()
	rd, err := worker.Sweep(context.Background(), ref, worker.SweepOptions{Now: &clock, WallNow: &wall,
		ChunkSize: 1 << 20, SoloChunkSize: 1 << 20, SoloHold: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if rd.EdgesPruned == 0 || rd.EdgesDecayed == 0 {
		t.Fatalf("pruned %d, decayed %d: the memory should have edges of both to remove", rd.EdgesPruned, rd.EdgesDecayed)
	}
	bulk := func(db *worker.DB) (*worker.Report, bool) {
		t.Helper()
		stands, told := false, false
		r, err := bulkSweep(context.Background(), db, clock, wall, worker.WithPlanStands(worker.SweepOptions{},
			func(s bool) { stands, told = s, true }))
		if err != nil {
			t.Fatal(err)
		}
		if !told {
			t.Fatal("the sweep made no plan")
		}
		return r, stands
	}

	own := open()
	rb, stands := bulk(own)
	if !stands {
		t.Fatal("a bulk sweep archiving no block, on memworker's own triggers, looked at each planned edge again")
	}
	if a, b := wholeFile(t, ref, true), wholeFile(t, own, true); a != b {
		t.Fatalf("the default sweep and the bulk sweep differ\ndefault:\n%s\nbulk:\n%s", diffLines(a, b), diffLines(b, a))
	}
	if reportCounts(rd) != reportCounts(rb) {
		t.Fatalf("reports differ\ndefault %s\nbulk    %s", reportCounts(rd), reportCounts(rb))
	}

	var from, to string
	if err := ref.SQL.QueryRow(`SELECT from_id, to_id FROM mem_archive_mem_edges WHERE mem_action = 'prune'
		ORDER BY from_id, to_id LIMIT 1`).Scan(&from, &to); err != nil {
		t.Fatal(err)
	}
	app := open()
	mustExec(t, app, `CREATE TRIGGER app_touch AFTER INSERT ON mem_block_state BEGIN
		UPDATE mem_edges SET weight = 0.99 WHERE from_id = '`+from+`' AND to_id = '`+to+`'; END`)
	ra, stands := bulk(app)
	if stands {
		t.Fatal("with an app's trigger on the file, the bulk sweep took its removals as planned")
	}
	if w := scalar[float64](t, app, `SELECT weight FROM mem_edges WHERE from_id = ? AND to_id = ?`, from, to); w != 0.99 {
		t.Errorf("the edge the app's trigger rewrote after the plan: weight %v, want it kept at 0.99", w)
	}
	if ra.Skipped != 1 || ra.EdgesPruned != rd.EdgesPruned-1 {
		t.Errorf("skipped %d, pruned %d: want 1 skipped, %d pruned", ra.Skipped, ra.EdgesPruned, rd.EdgesPruned-1)
	}
}
