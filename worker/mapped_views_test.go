package worker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker"
	"github.com/memdecay/memdecay/worker/mapping"
)

// TestMappedDecayed: through a mapping, decayed lists the app's removals
// (read from its tables' archives) and its links closest to decay, with
// the numbers memworker's own views give the same links in mem_edges:
// each link's ends, weight, effective weight and time left, on the clock
// a sweep through the mapping runs on.
func TestMappedDecayed(t *testing.T) {
	ctx := context.Background()
	for i, s := range []*shape{appShape, elfmemShape} {
		t.Run(s.name, func(t *testing.T) {
			g := randomGraph(int64(40+i), 200, 1000, s.gen)
			c := s.base
			app, _ := shapedMemory(t, s, g, c)
			mem, _ := shapedMemory(t, memShape, g, c)
			ra := sweepShape(t, s, app, c, worker.SweepOptions{})
			sweepShape(t, memShape, mem, c, worker.SweepOptions{})
			// Both read at the sweep's clock: the wall pinned, mem's hours set.
			for _, db := range []*worker.DB{app, mem} {
				setConfig(t, db, "wall_clock", strconv.FormatInt(c.wall.Unix(), 10))
			}
			setConfig(t, mem, "active_hours", strconv.FormatFloat(c.hours, 'g', -1, 64))

			outlook := func(db *worker.DB, padded bool) ([]string, []worker.DecayEvent) {
				events, soon, err := worker.Decayed(ctx, db, 100000)
				if err != nil {
					t.Fatal(err)
				}
				var out []string
				for _, o := range soon {
					a, b := o.From, o.To
					if !padded {
						x, _ := strconv.Atoi(a)
						y, _ := strconv.Atoi(b)
						a, b = fmt.Sprintf("%04d", x), fmt.Sprintf("%04d", y)
					}
					if a > b {
						a, b = b, a
					}
					out = append(out, fmt.Sprintf("%s-%s w=%v eff=%v %s left=%v", a, b, o.Weight, o.EffectiveWeight, o.Clock, o.TimeLeft))
				}
				sort.Strings(out)
				return out, events
			}
			got, events := outlook(app, s.name == "elfmem")
			want, memEvents := outlook(mem, true)
			if len(want) < 100 {
				t.Fatalf("only %d edges with a horizon: the test needs more", len(want))
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("closest to decay through the mapping differs from mem's:\n%s only:\n%s\nmem only:\n%s", s.name,
					diffLines(strings.Join(got, "\n"), strings.Join(want, "\n")), diffLines(strings.Join(want, "\n"), strings.Join(got, "\n")))
			}
			removals := scalar[int64](t, app, `SELECT count(*) FROM mem_events WHERE sweep_id = ?
				AND action IN ('archive', 'prune', 'decay', 'delete', 'exclude')`, ra.SweepID)
			if int64(len(events)) != removals || len(memEvents) != len(events) || removals < ra.EdgesPruned+ra.EdgesDecayed {
				t.Errorf("decayed lists %d removals through the mapping (mem: %d), the sweep made %d (%s)", len(events), len(memEvents), removals, ra.Summary)
			}
			for _, e := range events {
				if e.SweepID == nil || *e.SweepID != ra.SweepID {
					t.Errorf("event %+v is not of the sweep %d", e, ra.SweepID)
				}
			}
		})
	}
}

// TestMappedExplainEdge: explain --edge KEY through a mapping explains the
// app's link with the numbers and verdict explain gives the same link in
// mem_edges (named by its ends there).
func TestMappedExplainEdge(t *testing.T) {
	ctx := context.Background()
	for i, s := range []*shape{appShape, elfmemShape} {
		t.Run(s.name, func(t *testing.T) {
			g := randomGraph(int64(60+i), 150, 600, s.gen)
			c := s.base
			app, _ := shapedMemory(t, s, g, c)
			mem, _ := shapedMemory(t, memShape, g, c)
			sweepShape(t, s, app, c, worker.SweepOptions{})
			sweepShape(t, memShape, mem, c, worker.SweepOptions{})
			for _, db := range []*worker.DB{app, mem} {
				setConfig(t, db, "wall_clock", strconv.FormatInt(c.wall.Unix(), 10))
			}
			setConfig(t, mem, "active_hours", strconv.FormatFloat(c.hours, 'g', -1, 64))
			explained := 0
			for _, l := range g.Links {
				if !s.hasLink(t, app, l) {
					continue
				}
				k1, k2 := s.restoreKey(l)
				got, err := worker.ExplainEdge(ctx, app, k1, k2)
				if err != nil {
					t.Fatalf("explain link %d (key %q %q): %v", l.ID, k1, k2, err)
				}
				a, b := ends(l)
				want, err := worker.ExplainEdge(ctx, mem, a, b)
				if err != nil {
					t.Fatalf("explain %s — %s in mem: %v", a, b, err)
				}
				if got.Key == "" {
					t.Errorf("link %d: no key in %+v", l.ID, got)
				}
				// The same link, named otherwise: its ends (integer ids
				// in the app), their order (directed there) and its key.
				got.From, got.To, got.Key, want.From, want.To = "", "", "", "", ""
				if s == appShape { // memory.toml maps no origin, and its times are wall times
					want.Origin = ""
					want.HoursOnWall = true
					// Wall-clock hours are said as dates and days.
					if strings.Contains(got.Verdict, "active hours") ||
						(strings.Contains(got.Verdict, "falls below the threshold") != strings.Contains(got.Verdict, " UTC (")) {
						t.Errorf("link %d: verdict %q, want a date on the wall clock", l.ID, got.Verdict)
					}
					before, _, _ := strings.Cut(strings.ReplaceAll(want.Verdict, "active hours", "wall-clock hours"), "falls below")
					if !strings.HasPrefix(got.Verdict, before) {
						t.Errorf("link %d: verdict %q, want it to start %q", l.ID, got.Verdict, before)
					}
					got.Verdict, want.Verdict = "", ""
				}
				if got.TierFrom > got.TierTo {
					got.TierFrom, got.TierTo = got.TierTo, got.TierFrom
				}
				if want.TierFrom > want.TierTo {
					want.TierFrom, want.TierTo = want.TierTo, want.TierFrom
				}
				gj, _ := json.Marshal(got)
				wj, _ := json.Marshal(want)
				if g, w := string(gj), string(wj); g != w {
					t.Errorf("link %d explained through the mapping:\n%s\nin mem:\n%s", l.ID, g, w)
				}
				explained++
			}
			if explained < 100 {
				t.Fatalf("only %d links explained", explained)
			}
			if _, err := worker.ExplainEdge(ctx, app, "no such key", ""); err == nil || !strings.Contains(err.Error(), `no edge of key "no such key"`) {
				t.Errorf("explaining a key no link has: %v", err)
			}
		})
	}
}

// TestMappedExcludePolicy: a relation policy whose action is exclude works
// through a mapping that names an edges.excluded column: the sweep sets
// and clears the app's column on the links mem's sweep excludes and
// readmits on the same graph, with the same events; without the column
// the policy is refused before anything changes.
func TestMappedExcludePolicy(t *testing.T) {
	ctx := context.Background()
	g := randomGraph(77, 300, 1500, appShape.gen)
	c := appShape.base
	app, _ := shapedMemory(t, appShape, g, c)
	mem, _ := shapedMemory(t, memShape, g, c)
	for _, db := range []*worker.DB{app, mem} {
		mustExec(t, db, `UPDATE mem_edge_policies SET action = 'exclude' WHERE relation_type = 'works_on'`)
	}
	before := dumpTables(t, app)
	if _, err := worker.Sweep(ctx, app, appShape.opt(c, worker.SweepOptions{})); err == nil || !strings.Contains(err.Error(), "edges.excluded") {
		t.Fatalf("a sweep with an exclude policy and no edges.excluded: %v, want a refusal naming edges.excluded", err)
	}
	if after := dumpTables(t, app); after != before {
		t.Fatalf("the refused sweep changed the memory:\n%s", diffLines(before, after))
	}
	mustExec(t, app, `ALTER TABLE links ADD COLUMN hidden INTEGER NOT NULL DEFAULT 0`)
	m := memoryTOML(t)
	m.Edges.Excluded = "hidden"
	if err := worker.DeclareMapping(ctx, app, m, "memory.toml", c.wall); err != nil {
		t.Fatal(err)
	}
	excluded := func(db *worker.DB, query string) string {
		rows, err := db.SQL.Query(query)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var a, b int
			if err := rows.Scan(&a, &b); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%04d-%04d", min(a, b), max(a, b)))
		}
		sort.Strings(out)
		return strings.Join(out, " ")
	}
	rng := rand.New(rand.NewSource(77))
	var everExcluded, everReadmitted int64
	for step, hours := range []float64{0, 150, 150, 300} {
		if step > 0 {
			c = c.after(hours)
			twinWrites(t, rng, g, c, 150, []*shape{appShape, memShape}, []*worker.DB{app, mem})
		}
		ra := sweepShape(t, appShape, app, c, worker.SweepOptions{})
		rm := sweepShape(t, memShape, mem, c, worker.SweepOptions{})
		if got, want := mappedCounts(ra), mappedCounts(rm); got != want {
			t.Errorf("step %d: reports differ\napp %s\nmem %s", step, got, want)
		}
		got := excluded(app, `SELECT src, dst FROM links WHERE hidden`)
		want := excluded(mem, `SELECT CAST(from_id AS INTEGER), CAST(to_id AS INTEGER) FROM mem_edges WHERE excluded`)
		if got != want {
			t.Errorf("step %d: excluded links differ\napp: %s\nmem: %s", step, got, want)
		}
		for _, p := range ra.Policies {
			everExcluded += p.Excluded
			everReadmitted += p.Readmitted
		}
	}
	if everExcluded == 0 || everReadmitted == 0 {
		t.Errorf("the sweeps excluded %d and readmitted %d links: the test needs both", everExcluded, everReadmitted)
	}
	for _, q := range []string{`SELECT action, count(*) FROM mem_events WHERE action IN ('exclude', 'readmit') GROUP BY action`} {
		if g, w := dumpRows2(t, app, q), dumpRows2(t, mem, q); g != w {
			t.Errorf("events differ:\napp %s\nmem %s", g, w)
		}
	}
}

// TestMappedFactFeedbackRqlite: fact feedback through a mapping on an
// rqlite cluster (recall, up, down) writes the app's note on every node as
// the same feedback writes it in a local file: importance, access count,
// time of last access in the column's own form, and the events.
func TestMappedFactFeedbackRqlite(t *testing.T) {
	ctx := context.Background()
	wall := mappedWall
	path := filepath.Join(t.TempDir(), "app.db")
	db := createMemory(t, path, `CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT, segment TEXT, importance REAL,
		access_count INTEGER, last_access TEXT, created_at TEXT, status TEXT);
		INSERT INTO notes VALUES (1, 'a', 'context', 0.5, 2, '2027-02-01T00:00:00Z', '2027-01-01T00:00:00Z', 'live'),
			(2, 'b', 'knowledge', 0.4, NULL, NULL, '2027-01-01T00:00:00Z', 'live')`)
	m, err := mapping.Parse("notes.toml", []byte(notesMapping))
	if err != nil {
		t.Fatal(err)
	}
	if err := worker.DeclareMapping(ctx, db, m, "notes.toml", wall); err != nil {
		t.Fatal(err)
	}
	db.Close()
	cl := startCluster(t, 2, path)
	local := openAsWorker(t, copyMemory(t, path))
	cluster := openNode(t, cl.Nodes()[1])
	for _, d := range []*worker.DB{local, cluster} {
		if _, err := worker.Recall(ctx, d, "1", false, wall); err != nil {
			t.Fatalf("recall: %v", err)
		}
		if _, err := worker.Feedback(ctx, d, "2", true, wall); err != nil {
			t.Fatalf("feedback up: %v", err)
		}
		if _, err := worker.Feedback(ctx, d, "1", false, wall); err != nil {
			t.Fatalf("feedback down: %v", err)
		}
	}
	want := dumpRows2(t, local, `SELECT * FROM notes ORDER BY id`)
	if !strings.Contains(want, "2027-03-01T12:00:00Z") {
		t.Fatalf("the local feedback wrote no access time:\n%s", want)
	}
	events := `SELECT id, subject_id, action, reason, detail FROM mem_events ORDER BY id`
	wantEvents := dumpRows2(t, local, events)
	for _, n := range cl.Nodes() {
		nodeDB := openNode(t, n)
		deadline := time.Now().Add(10 * time.Second)
		for {
			got, gotEvents := dumpRows2(t, nodeDB, `SELECT * FROM notes ORDER BY id`), dumpRows2(t, nodeDB, events)
			if got == want && gotEvents == wantEvents {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %s holds\n%s\n%s\nthe file\n%s\n%s", n.ID, got, gotEvents, want, wantEvents)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}
