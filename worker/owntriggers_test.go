package worker_test

// A sweep's own removals run with its connection's triggers off while the
// tables they write carry only memworker's triggers. An app's own trigger
// keeps firing for them, the result is the same either way, and the
// connection goes back to the pool with its triggers on.

import (
	"context"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker"
)

func TestSweepRemovalsQuietOrWithAppTriggers(t *testing.T) {
	orig := bigMemory(t, 53, 80, 900)
	clock, wall := bigClock+150, bigWall.Add(30*24*time.Hour)
	// The app's trigger, on the table named as SQLite stores it, which
	// keeps the case the app wrote it in.
	appTrigger := func(table string) string {
		return `CREATE TABLE app_removed (from_id TEXT, to_id TEXT);
		CREATE TRIGGER app_log_removed AFTER DELETE ON ` + table + ` BEGIN
		    INSERT INTO app_removed VALUES (OLD.from_id, OLD.to_id);
		END`
	}
	derived := func(db *worker.DB) string {
		_, rows := dumpRows(t, db, `SELECT 'state', id, degree, archive_at, problem FROM mem_block_state
			UNION ALL SELECT 'due', from_id || '>' || to_id, due_hours, due_wall, problem FROM mem_edge_due
			UNION ALL SELECT 'queued', count(*), NULL, NULL, NULL FROM mem_dirty_edges
			UNION ALL SELECT 'queued blocks', count(*), NULL, NULL, NULL FROM mem_dirty_blocks ORDER BY 1, 2`)
		return rows
	}
	var states, derivedStates [3]string
	for i, table := range []string{"", "mem_edges", "Main.MEM_EDGES"} {
		withApp := table != ""
		db := openAsWorker(t, copyMemory(t, orig))
		if withApp {
			mustExec(t, db, appTrigger(table))
		}
		if quiet, err := worker.QuietRemovals(context.Background(), db); err != nil || quiet == withApp {
			t.Fatalf("app trigger on %q: removals with the triggers off %v (%v)", table, quiet, err)
		}
		// One connection: the pool hands the sweep's back afterwards.
		db.SQL.SetMaxOpenConns(1)
		for _, full := range []bool{false, true} {
			at := clock
			if full {
				at += 400
			}
			r := incSweep(t, db, at, wall, full)
			if r.EdgesDecayed+r.EdgesPruned == 0 {
				t.Fatalf("app trigger %v, full %v: the sweep removed no edge", withApp, full)
			}
		}
		removed := scalar[int64](t, db, `SELECT count(*) FROM mem_events WHERE subject_kind = 'edge' AND action IN ('prune', 'decay', 'delete')`)
		if withApp {
			if n := scalar[int64](t, db, `SELECT count(*) FROM app_removed`); n != removed {
				t.Errorf("the app's trigger logged %d removals, the events %d", n, removed)
			}
		}
		if on := scalar[int64](t, db, `SELECT memdecay_connection_triggers(NULL)`); on != 1 {
			t.Errorf("app trigger %v: the sweep's connection came back with its triggers off", withApp)
		}
		// Triggers work on it: an app's edge is queued.
		mustExec(t, db, `INSERT INTO mem_blocks (id) VALUES ('zz-a'), ('zz-b')`)
		mustExec(t, db, `INSERT INTO mem_edges (from_id, to_id, weight) VALUES ('zz-a', 'zz-b', 0.5)`)
		if n := scalar[int64](t, db, `SELECT count(*) FROM mem_dirty_edges WHERE from_id = 'zz-a'`); n != 1 {
			t.Errorf("app trigger %v: the app's edge queued %d times, want once", withApp, n)
		}
		states[i], derivedStates[i] = memoryState(t, db), derived(db)
	}
	for i := 1; i < len(states); i++ {
		if states[0] != states[i] {
			t.Errorf("rows differ with and without an app trigger (%d):\n%s", i, diffLines(states[0], states[i]))
		}
		if derivedStates[0] != derivedStates[i] {
			t.Errorf("derived state differs with and without an app trigger (%d):\n%s", i, diffLines(derivedStates[0], derivedStates[i]))
		}
	}
}

// The function refuses what is not 0, 1 or NULL, and no trigger or view of
// a file can call it.
func TestConnectionTriggersFunction(t *testing.T) {
	db, _ := newMemory(t, "")
	db.SQL.SetMaxOpenConns(1)
	for _, bad := range []string{"2", "'0'", "0.5", "x'00'"} {
		if _, err := db.SQL.Exec(`SELECT memdecay_connection_triggers(` + bad + `)`); err == nil {
			t.Errorf("memdecay_connection_triggers(%s): no error", bad)
		}
	}
	if off := scalar[int64](t, db, `SELECT memdecay_connection_triggers(0)`); off != 0 {
		t.Fatalf("turning triggers off: %d", off)
	}
	mustExec(t, db, `INSERT INTO mem_blocks (id) VALUES ('quiet')`)
	if on := scalar[int64](t, db, `SELECT memdecay_connection_triggers(1)`); on != 1 {
		t.Fatalf("turning triggers on: %d", on)
	}
	mustExec(t, db, `INSERT INTO mem_blocks (id) VALUES ('loud')`)
	if got := scalar[string](t, db, `SELECT group_concat(id) FROM mem_dirty_blocks WHERE id IN ('quiet', 'loud')`); got != "loud" {
		t.Errorf("queued blocks %q, want only the one inserted with triggers on", got)
	}
	mustExec(t, db, `CREATE TABLE app_t (x)`)
	mustExec(t, db, `CREATE TRIGGER app_sneaky AFTER INSERT ON app_t BEGIN SELECT memdecay_connection_triggers(0); END`)
	if _, err := db.SQL.Exec(`INSERT INTO app_t VALUES (1)`); err == nil {
		t.Errorf("a trigger could call memdecay_connection_triggers")
	}
}

// An app that adds a trigger on mem_edges while a sweep runs: every removal
// after that fires it.
func TestAppTriggerAddedMidSweep(t *testing.T) {
	path := copyMemory(t, bigMemory(t, 59, 80, 900))
	db, app := openAsWorker(t, path), openAsApp(t, path)
	clock, wall := bigClock+150, bigWall.Add(30*24*time.Hour)
	var since int64 = -1
	opt := worker.SweepOptions{Now: &clock, WallNow: &wall, ChunkSize: 7, SoloChunkSize: 7}
	opt = worker.WithChunk(opt, func(step string, done, total int64) {
		if step != "plan_edges" || done == 0 || since >= 0 {
			return
		}
		for _, q := range []string{`CREATE TABLE app_removed (from_id TEXT, to_id TEXT)`,
			`CREATE TRIGGER app_log_removed AFTER DELETE ON mem_edges BEGIN INSERT INTO app_removed VALUES (OLD.from_id, OLD.to_id); END`} {
			if _, err := app.Exec(q); err != nil {
				t.Errorf("%s: %v", q, err)
			}
		}
		if err := app.QueryRow(`SELECT coalesce(max(id), 0) FROM mem_events`).Scan(&since); err != nil {
			t.Error(err)
		}
	})

	if _, err := worker.Sweep(context.Background(), db, opt); err != nil {
		t.Fatal(err)
	}
	if since < 0 {
		t.Fatal("the sweep removed no edge in a second chunk")
	}
	after := scalar[int64](t, db, `SELECT count(*) FROM mem_events WHERE id > ? AND subject_kind = 'edge'
		AND action IN ('prune', 'decay', 'delete')`, since)
	if logged := scalar[int64](t, db, `SELECT count(*) FROM app_removed`); logged != after || after == 0 {
		t.Errorf("the app's trigger logged %d removals, the events after it was made %d", logged, after)
	}
}

// TestMappedRemovalsQuietOrWithAppTriggers: through a mapping, the
// removals from the app's edge table run with the connection's triggers off
// while that table carries only memworker's queue triggers, and with them
// on once the app has a trigger of its own there (named in any case): the
// app's trigger logs every removal, and the app's rows and memworker's
// events come out the same either way.
func TestMappedRemovalsQuietOrWithAppTriggers(t *testing.T) {
	s := elfmemShape
	g := randomGraph(17, 200, 1000, s.gen)
	var states [3]string
	for i, table := range []string{"", "edges", "Main.EDGES"} {
		withApp := table != ""
		db, _ := shapedMemory(t, s, g, s.base)
		mustExec(t, db, `DROP TRIGGER edges_audit`) // the app of the fixture has one: this one starts with none
		if withApp {
			mustExec(t, db, `CREATE TABLE app_removed (from_id TEXT, to_id TEXT);
				CREATE TRIGGER app_log_removed AFTER DELETE ON `+table+` BEGIN
				    INSERT INTO app_removed VALUES (OLD.from_id, OLD.to_id);
				END`)
		}
		if quiet, err := worker.QuietRemovals(context.Background(), db); err != nil || quiet == withApp {
			t.Fatalf("app trigger on %q: removals with the triggers off %v (%v)", table, quiet, err)
		}
		db.SQL.SetMaxOpenConns(1)
		c := s.base
		for step, hours := range []float64{0, 200} {
			if step > 0 {
				c = c.after(hours)
				s.setClock(t, db, c)
			}
			if r := sweepShape(t, s, db, c, worker.SweepOptions{}); removedAny(r) == 0 {
				t.Fatalf("app trigger on %q, step %d: the sweep removed nothing", table, step)
			}
		}
		removed := scalar[int64](t, db, `SELECT count(*) FROM mem_events WHERE subject_kind = 'edge' AND action IN ('prune', 'decay', 'delete')`)
		if withApp {
			if n := scalar[int64](t, db, `SELECT count(*) FROM app_removed`); n != removed {
				t.Errorf("app trigger on %q: it logged %d removals, the events %d", table, n, removed)
			}
		}
		if on := scalar[int64](t, db, `SELECT memdecay_connection_triggers(NULL)`); on != 1 {
			t.Errorf("app trigger on %q: the sweep's connection came back with its triggers off", table)
		}
		_, events := dumpRows(t, db, `SELECT action, subject_kind, subject_id, reason FROM mem_events ORDER BY id`)
		states[i] = shapeState(t, db, s) + events
	}
	for i := 1; i < len(states); i++ {
		if states[0] != states[i] {
			t.Errorf("rows differ with and without an app trigger (%d):\n%s", i, diffLines(states[0], states[i]))
		}
	}
}
