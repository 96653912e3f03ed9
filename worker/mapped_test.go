package worker_test

// Sweeping an app's own tables in place through a declared mapping
// (docs/mapping.md): the app of memory.toml (memories and links, integer
// ids, ISO-8601 times, directed links of several kinds) and elfmem's
// schema (the preset elfmem) are swept as the same graph in memworker's
// own tables is, with every guarantee of docs/sweep.md: an event per
// removal, restore, dry runs, one sweep per clock, interrupted sweeps
// finished, an app writing beside the sweep, rqlite. A mapping that does
// not fit the schema is refused before anything changes.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker"
	"github.com/memdecay/memdecay/worker/mapping"
)

// TestMappedMatchesMem: a generated graph of 300 nodes and 1500 links,
// written into an app's tables and, the same, into memworker's own, is
// swept three times at later clocks, with the same app writes between
// sweeps; after each sweep both hold the same links, the same archived and
// reinforced nodes (counts and times of last use), the same events by
// kind, action and reason, and report the same counts. The app of
// memory.toml sweeps on wall hours, elfmem on its own total_active_hours.
func TestMappedMatchesMem(t *testing.T) {
	settings := []struct {
		name string
		set  [][2]string
	}{
		{"defaults", nil},
		{"max_decay_fraction 0.5", [][2]string{{"max_decay_fraction", "0.5"}}},
		{"block_archival off", [][2]string{{"block_archival", "off"}}},
	}
	for i, s := range []*shape{appShape, elfmemShape} {
		for j, st := range settings {
			t.Run(s.name+"/"+st.name, func(t *testing.T) {
				seed := int64(100*i + j + 1)
				g := randomGraph(seed, 300, 1500, s.gen)
				app, _ := shapedMemory(t, s, g, s.base)
				mem, _ := shapedMemory(t, memShape, g, s.base)
				if s.ownNow {
					mustExec(t, mem, `UPDATE mem_config SET value = ? WHERE key = 'last_curate_at'`,
						scalar[string](t, app, `SELECT value FROM system_config WHERE key = 'last_curate_at'`))
				}
				for _, kv := range st.set {
					setConfig(t, app, kv[0], kv[1])
					setConfig(t, mem, kv[0], kv[1])
				}
				rng := rand.New(rand.NewSource(seed))
				c := s.base
				for step, hours := range []float64{0, 60, 200} {
					if step > 0 {
						c = c.after(hours)
						twinWrites(t, rng, g, c, 40, []*shape{s, memShape}, []*worker.DB{app, mem})
						s.setClock(t, app, c)
					}
					ra := sweepShape(t, s, app, c, worker.SweepOptions{})
					rm := sweepShape(t, memShape, mem, c, worker.SweepOptions{})
					if step == 0 && (rm.EdgesPruned == 0 || rm.EdgesDecayed == 0 || policyDecayed(rm) == 0 || rm.Reinforced == 0 ||
						rm.TotalEdgesAfter == 0 || (rm.Archived == 0) != (st.name == "block_archival off")) {
						t.Fatalf("the graph does not have the work the test needs: %s", mappedCounts(rm))
					}
					if ra.ClockHours != c.hours {
						t.Errorf("step %d: the sweep ran at hour %v, want %v", step, ra.ClockHours, c.hours)
					}
					if got, want := mappedCounts(ra), mappedCounts(rm); got != want {
						t.Errorf("step %d: reports differ\n%-6s %s\nmem    %s", step, s.name, got, want)
					}
					got, want := commonState(t, app, s, true), commonState(t, mem, memShape, s.tagTable != "")
					if got != want {
						t.Fatalf("step %d: the sweeps decided differently\n%s only:\n%s\nmem only:\n%s",
							step, s.name, diffLines(got, want), diffLines(want, got))
					}
					if s.ownNow {
						if got := scalar[float64](t, app, `SELECT CAST(value AS REAL) FROM system_config WHERE key = 'last_curate_at'`); got != c.hours {
							t.Errorf("step %d: system_config last_curate_at = %v, want the sweep's clock %v", step, got, c.hours)
						}
					}
					appIntact(t, app)
				}
			})
		}
	}
}

// TestMappedKindsAndDirections: links of memory.toml are directed and
// typed, so two links between one pair with different kinds, and a→b
// beside b→a, are separate edges, each decayed by its own kind's policy.
func TestMappedKindsAndDirections(t *testing.T) {
	s := appShape
	g := &graph{Policies: `INSERT INTO mem_edge_policies (relation_type, model, params, clock, threshold, action, orphans) VALUES
		('chat', 'linear', '{"rate":0.01,"hold":"10h"}', 'active_hours', NULL, 'delete', 'keep'),
		('cites', 'half_life', '{"half_life":"1000h"}', 'active_hours', 0.1, 'delete', 'keep')`}
	for id := 1; id <= 3; id++ {
		g.Nodes = append(g.Nodes, gNode{ID: id, Kind: "knowledge", Status: "active", Confidence: 0.5, Ago: hoursAgo(0)})
	}
	cases := []struct {
		link gLink
		gone bool
		why  string
	}{
		{gLink{Src: 1, Dst: 2, Kind: "chat", Weight: 0.5, Ago: hoursAgo(100)}, true, "chat: 0.5 − 0.01 × 90 < 0"},
		{gLink{Src: 1, Dst: 2, Kind: "cites", Weight: 0.5, Ago: hoursAgo(100)}, false, "the same pair and times, cites: 0.5 × 2^−0.1 = 0.47"},
		{gLink{Src: 2, Dst: 1, Kind: "similar", Weight: 0.5, Hits: 2, Ago: hoursAgo(10)}, false, "the pair's third kind, tiered: 0.5 e^−0.05"},
		{gLink{Src: 2, Dst: 3, Kind: "chat", Weight: 0.3, Ago: hoursAgo(5)}, false, "chat, within its 10 hours' hold"},
		{gLink{Src: 3, Dst: 2, Kind: "chat", Weight: 0.3, Ago: hoursAgo(50)}, true, "the other direction, chat: 0.3 − 0.01 × 40 < 0"},
		{gLink{Src: 1, Dst: 3, Kind: "cites", Weight: 0.5, Ago: hoursAgo(5000)}, true, "cites: 0.5 × 2^−5 < 0.1"},
		{gLink{Src: 3, Dst: 1, Kind: "cites", Weight: 0.9, Hits: 3, Ago: hoursAgo(5)}, false, "the other direction, cites: recent"},
	}
	for i := range cases {
		cases[i].link.Origin = "similarity"
		cases[i].link = g.add(cases[i].link)
	}
	db, _ := shapedMemory(t, s, g, s.base)
	r := sweepShape(t, s, db, s.base, worker.SweepOptions{})
	gone := 0
	for _, c := range cases {
		l := c.link
		if s.hasLink(t, db, l) == c.gone {
			t.Errorf("link %d (%d→%d %s): removed %v, want %v: %s", l.ID, l.Src, l.Dst, l.Kind, !c.gone, c.gone, c.why)
		}
		want := 0
		if c.gone {
			want, gone = 1, gone+1
		}
		if ev := removals(s.eventsOfLink(t, db, l)); len(ev) != want {
			t.Errorf("link %d: removal events %+v, want %d", l.ID, ev, want)
		}
	}
	if got := [3]int64{policyCount(t, r, "chat").Decayed, policyCount(t, r, "cites").Decayed, r.EdgesPruned + r.EdgesDecayed + r.Archived}; got != [3]int64{2, 1, 0} {
		t.Errorf("report: chat decayed %d, cites %d, others removed %d; want 2, 1, 0 (%s)", got[0], got[1], got[2], r.Summary)
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM link_audit`); n != gone {
		t.Errorf("the app's trigger logged %d deleted links, want %d", n, gone)
	}
	appIntact(t, db)
}

// restoreGraph: at its clock the observations 5 and 6 have faded (recency
// e^−5, below 0.05) and are not bridges; the other nodes are fresh. A
// sweep archives 5 and 6 with their four links (1005–1008), prunes 1009
// (weight 0.05, never reinforced) and decays 1010 (0.3 e^−2 between
// standard nodes, below 0.1).
func restoreGraph() *graph {
	g := &graph{}
	for _, n := range []gNode{
		{ID: 1, Kind: "knowledge", Tags: []string{"python"}, Ago: hoursAgo(0)},
		{ID: 2, Kind: "knowledge", Ago: hoursAgo(0)}, {ID: 3, Kind: "knowledge", Ago: hoursAgo(0)},
		{ID: 4, Kind: "knowledge", Ago: hoursAgo(0)},
		{ID: 5, Kind: "observation", Tags: []string{"meeting", "standup"}, Ago: hoursAgo(100)},
		{ID: 6, Kind: "observation", Tags: []string{"food"}, Ago: hoursAgo(100)},
		{ID: 7, Kind: "knowledge", Ago: hoursAgo(0)}, {ID: 8, Kind: "knowledge", Ago: hoursAgo(0)},
		{ID: 9, Kind: "knowledge", Ago: hoursAgo(0)},
	} {
		n.Status, n.Confidence = "active", 0.5
		g.Nodes = append(g.Nodes, n)
	}
	for _, l := range []gLink{
		{Src: 1, Dst: 2, Weight: 0.9, Hits: 15, Ago: hoursAgo(0)},
		{Src: 1, Dst: 3, Weight: 0.9, Hits: 15, Ago: hoursAgo(0)},
		{Src: 3, Dst: 2, Weight: 0.9, Hits: 15, Ago: hoursAgo(0)},
		{Src: 3, Dst: 4, Weight: 0.9, Hits: 15, Ago: hoursAgo(0)},
		{Src: 1, Dst: 5, Weight: 0.3, Hits: 2, Ago: hoursAgo(10)},
		{Src: 5, Dst: 2, Weight: 0.35, Ago: hoursAgo(5)},
		{Src: 5, Dst: 6, Weight: 0.3, Ago: hoursAgo(1)},
		{Src: 4, Dst: 6, Weight: 0.3, Hits: 1, Ago: hoursAgo(2)},
		{Src: 7, Dst: 8, Weight: 0.05, Ago: hoursAgo(0)},
		{Src: 9, Dst: 7, Weight: 0.3, Ago: hoursAgo(400)},
		{Src: 8, Dst: 9, Weight: 0.9, Hits: 3, Ago: hoursAgo(0)},
	} {
		l.Kind, l.Origin = "similar", "similarity"
		g.add(l)
	}
	return g
}

// TestMappedEventsAndRestore: every link and node a sweep removes or
// archives has one event naming it by its key (memory.toml's link id,
// elfmem's two ends), and the app's own trigger sees each delete. Restore
// brings a pruned and a decayed link back byte for byte, every column and
// its type (its time of last activity may be anchored at the restore's
// clock instead), refuses a link whose end is archived, brings an archived
// node back active with its links whose other end is active, and then
// has nothing left to restore. The mem shape is the baseline.
func TestMappedEventsAndRestore(t *testing.T) {
	ctx := context.Background()
	for _, s := range allShapes {
		t.Run(s.name, func(t *testing.T) {
			g := restoreGraph()
			link := func(id int) gLink { return g.Links[id-1001] }
			c := s.base
			db, _ := shapedMemory(t, s, g, c)
			links, nodes, tags := map[int]map[string]string{}, map[int]map[string]string{}, map[int]string{}
			for _, l := range g.Links {
				links[l.ID] = s.linkRow(t, db, l)
			}
			for _, n := range g.Nodes {
				nodes[n.ID], tags[n.ID] = s.nodeRow(t, db, n.ID), s.tagsOf(t, db, n.ID)
			}

			r := sweepShape(t, s, db, c, worker.SweepOptions{})
			if r.Archived != 2 || r.EdgesRemovedWithBlocks != 4 || r.EdgesPruned != 1 || r.EdgesDecayed != 1 {
				t.Fatalf("the sweep archived %d nodes with %d links, pruned %d and decayed %d; want 2, 4, 1, 1 (%s)",
					r.Archived, r.EdgesRemovedWithBlocks, r.EdgesPruned, r.EdgesDecayed, r.Summary)
			}
			removed := map[int]string{1005: "block_archived", 1006: "block_archived", 1007: "block_archived", 1008: "block_archived",
				1009: "prune", 1010: "decay"}
			for _, l := range g.Links {
				why, gone := removed[l.ID]
				if s.hasLink(t, db, l) == gone {
					t.Errorf("link %d: removed %v, want %v", l.ID, !gone, gone)
				}
				ev := removals(s.eventsOfLink(t, db, l))
				switch {
				case !gone && len(ev) != 0:
					t.Errorf("kept link %d has events %+v", l.ID, ev)
				case gone && len(ev) != 1:
					t.Errorf("removed link %d has %d events, want 1: %+v", l.ID, len(ev), ev)
				case gone && (ev[0].SweepID.Int64 != r.SweepID || (ev[0].Action != why && ev[0].Reason != why)):
					t.Errorf("removed link %d: event %+v, want one of sweep %d, %s", l.ID, ev[0], r.SweepID, why)
				}
			}
			for _, id := range []int{5, 6} {
				if st := s.statusOf(t, db, id); st != "archived" {
					t.Errorf("node %d is %s, want archived", id, st)
				}
				if ev := removals(eventsFor(t, db, "block", s.nodeSubject(id))); len(ev) != 1 || ev[0].Action != "archive" {
					t.Errorf("node %d: events %+v, want one archive", id, ev)
				}
			}
			if s.audit != "" {
				if n := scalar[int](t, db, `SELECT count(*) FROM `+s.audit); n != 6 {
					t.Errorf("the app's trigger logged %d deleted links, want 6", n)
				}
			}

			// A link cannot come back while an end is archived.
			a, b := s.restoreKey(link(1005))
			if _, err := worker.RestoreEdge(ctx, db, a, b, c.wall); err == nil || errors.Is(err, worker.ErrNothingToRestore) {
				t.Errorf("restoring a link to an archived node: %v, want a 'restore the node first' error", err)
			}
			for _, id := range []int{1009, 1010} {
				a, b := s.restoreKey(link(id))
				res, err := worker.RestoreEdge(ctx, db, a, b, c.wall)
				if err != nil {
					t.Fatalf("restore link %d: %v", id, err)
				}
				if res.Edges != 1 || (id == 1009) != (res.Warning != "") {
					t.Errorf("restore link %d: %+v, want 1 edge and a warning only for the weak one", id, res)
				}
				s.expectRestoredRow(t, db, fmt.Sprint("link ", id), links[id], s.linkRow(t, db, link(id)), s.lastActive, c)
			}
			for _, step := range []struct {
				node          int
				back, waiting []int
			}{{5, []int{1005, 1006}, []int{1007}}, {6, []int{1007, 1008}, nil}} {
				res, err := worker.RestoreBlock(ctx, db, s.nodeSubject(step.node), c.wall)
				if err != nil {
					t.Fatalf("restore node %d: %v", step.node, err)
				}
				if res.Edges != int64(len(step.back)) || len(res.EdgesSkipped) != len(step.waiting) {
					t.Errorf("restore node %d: %+v, want %d links back and %d waiting", step.node, res, len(step.back), len(step.waiting))
				}
				if st := s.statusOf(t, db, step.node); st != "active" {
					t.Errorf("restored node %d is %s, want active", step.node, st)
				}
				s.expectRestoredRow(t, db, fmt.Sprint("node ", step.node), nodes[step.node], s.nodeRow(t, db, step.node), s.lastUsed, c,
					s.status, "archive_reason")
				if got := s.tagsOf(t, db, step.node); got != tags[step.node] {
					t.Errorf("restored node %d has tags %s, had %s", step.node, got, tags[step.node])
				}
				for _, id := range step.back {
					s.expectRestoredRow(t, db, fmt.Sprint("link ", id), links[id], s.linkRow(t, db, link(id)), s.lastActive, c)
				}
				for _, id := range step.waiting {
					if s.hasLink(t, db, link(id)) {
						t.Errorf("link %d came back while its other end is archived", id)
					}
				}
			}

			// Nothing is left to restore.
			if _, err := worker.RestoreBlock(ctx, db, s.nodeSubject(5), c.wall); !errors.Is(err, worker.ErrNothingToRestore) {
				t.Errorf("restore node 5 again: %v, want ErrNothingToRestore", err)
			}
			a, b = s.restoreKey(link(1009))
			if _, err := worker.RestoreEdge(ctx, db, a, b, c.wall); !errors.Is(err, worker.ErrNothingToRestore) {
				t.Errorf("restore link 1009 again: %v, want ErrNothingToRestore", err)
			}
			if n := scalar[int](t, db, `SELECT count(*) FROM mem_events WHERE action = 'restore'`); n != 8 {
				t.Errorf("%d restore events, want 8 (6 links, 2 nodes)", n)
			}
			if s.audit != "" {
				if n := scalar[int](t, db, `SELECT count(*) FROM `+s.audit); n != 6 {
					t.Errorf("the app's trigger logged %d deleted links after the restores, want 6", n)
				}
			}
			appIntact(t, db)
		})
	}
}

// TestMappedDryRun: a dry run through a mapping, on a read-only open,
// changes no byte of the file (nor its WAL) and predicts the report of
// the real sweep that follows.
func TestMappedDryRun(t *testing.T) {
	for _, s := range allShapes {
		t.Run(s.name, func(t *testing.T) {
			db, path := shapedMemory(t, s, randomGraph(7, 120, 600, s.gen), s.base)
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			before := fileHashes(t, path)
			ro, err := worker.OpenMemory(path, true)
			if err != nil {
				t.Fatal(err)
			}
			dry := sweepShape(t, s, ro, s.base, worker.SweepOptions{DryRun: true})
			if err := ro.Close(); err != nil {
				t.Fatal(err)
			}
			sameFiles(t, before, fileHashes(t, path))
			if !dry.DryRun || dry.SweepID != 0 {
				t.Errorf("dry run report %+v", dry)
			}
			rw := openAsWorker(t, path)
			if n := scalar[int](t, rw, `SELECT count(*) FROM mem_events`) + scalar[int](t, rw, `SELECT count(*) FROM mem_sweeps`); n != 0 {
				t.Errorf("the dry run wrote %d events and sweeps", n)
			}
			real := sweepShape(t, s, rw, s.base, worker.SweepOptions{})
			if removedAny(real) == 0 {
				t.Fatalf("the sweep removed nothing: %s", real.Summary)
			}
			if d, r := reportCounts(dry), reportCounts(real); d != r {
				t.Errorf("the dry run predicted\n  %s\nthe sweep did\n  %s", d, r)
			}
			if dry.Summary != real.Summary {
				t.Errorf("summaries differ:\n  %q\n  %q", dry.Summary, real.Summary)
			}
		})
	}
}

// TestMappedSecondSweepSameClock: a second sweep at the clock of the
// first changes nothing in the app's tables, reinforcement included.
func TestMappedSecondSweepSameClock(t *testing.T) {
	for _, s := range allShapes {
		t.Run(s.name, func(t *testing.T) {
			db, _ := shapedMemory(t, s, randomGraph(11, 150, 700, s.gen), s.base)
			first := sweepShape(t, s, db, s.base, worker.SweepOptions{})
			if removedAny(first) == 0 || first.Reinforced == 0 {
				t.Fatalf("the first sweep removed or reinforced nothing: %s", first.Summary)
			}
			before := shapeState(t, db, s)
			second := sweepShape(t, s, db, s.base, worker.SweepOptions{})
			if removedAny(second) != 0 || second.Reinforced+second.ConstitutionalReinforced != 0 {
				t.Errorf("the second sweep at the same clock changed rows: %s", mappedCounts(second))
			}
			if after := shapeState(t, db, s); after != before {
				t.Errorf("the second sweep changed the tables\nbefore only:\n%s\nafter only:\n%s", diffLines(before, after), diffLines(after, before))
			}
		})
	}
}

// TestMappedCutSweepResumes: a sweep of memory.toml's tables cancelled
// while it applies its plan, between two of its transactions, leaves every
// removal so far with its event; the next sweep at the same clock ends
// where an uninterrupted sweep does.
func TestMappedCutSweepResumes(t *testing.T) {
	s := appShape
	db, orig := shapedMemory(t, s, randomGraph(13, 300, 1500, s.gen), s.base)
	db.Close()
	ref := openAsWorker(t, copyMemory(t, orig))
	sweepShape(t, s, ref, s.base, worker.SweepOptions{ChunkSize: 20})
	want, all := shapeState(t, ref, s), scalar[int](t, ref, `SELECT count(*) FROM mem_events`)

	db = openAsWorker(t, copyMemory(t, orig))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var cut string
	opt := worker.SweepOptions{ChunkSize: 20, SoloChunkSize: 20}.WithChunk(func(step string, done, total int64) {
		if cut == "" && strings.HasPrefix(step, "plan_") && done > 0 && done < total {
			cut = fmt.Sprintf("%s after %d of %d rows", step, done, total)
			cancel()
		}
	})
	_, err := worker.Sweep(ctx, db, s.opt(s.base, opt))
	if err == nil || cut == "" {
		t.Fatalf("the sweep was not cut while it applied its plan (cut %q): %v", cut, err)
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM mem_events`); n == 0 || n >= all {
		t.Fatalf("cut at %s: %d events, want some of the %d", cut, n, all)
	}
	integrityOK(t, db.SQL)
	checkLinksLogged(t, db.SQL, orig, 0)
	sweepShape(t, s, db, s.base, worker.SweepOptions{ChunkSize: 20})
	if got := shapeState(t, db, s); got != want {
		t.Errorf("cut at %s, the finished sweep differs from an uninterrupted one\nhere only:\n%s\nthere only:\n%s",
			cut, diffLines(got, want), diffLines(want, got))
	}
	checkLinksLogged(t, db.SQL, orig, 0)
}

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
	r, err := worker.Sweep(context.Background(), db, s.opt(c, worker.SweepOptions{ChunkSize: 20, Pause: worker.DefaultPause}.WithChunk(chunk)))
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

// TestMappedBadMappingRefused: a mapping that does not fit the schema is
// refused when declared, with one line naming the table and the column,
// and the file is left byte for byte as it was.
func TestMappedBadMappingRefused(t *testing.T) {
	cases := []struct {
		name   string
		schema func(string) string // the app's schema, changed
		mutate func(m *mapping.Mapping)
		want   []string
	}{
		{"missing table", nil, func(m *mapping.Mapping) { m.Edges.Table = "linkz" }, []string{"edges.table", "linkz"}},
		{"missing column", nil, func(m *mapping.Mapping) { m.Edges.Weight = "strenght" }, []string{"links", "strenght"}},
		{"missing key column", nil, func(m *mapping.Mapping) { m.Nodes.Key = mapping.Key{"uid"} }, []string{"memories", "uid"}},
		{"key not unique", nil, func(m *mapping.Mapping) { m.Edges.Key = mapping.Key{"src"} }, []string{"links", "src", "not unique"}},
		{"composite key not unique", nil, func(m *mapping.Mapping) { m.Edges.Key = mapping.Key{"src", "dst"} }, []string{"links", "src, dst", "not unique"}},
		{"rowid of a WITHOUT ROWID table", func(s string) string {
			return strings.Replace(s, "UNIQUE (src, dst, kind));", "UNIQUE (src, dst, kind)) WITHOUT ROWID;", 1)
		}, func(m *mapping.Mapping) { m.Edges.Key = mapping.Key{"rowid"} }, []string{"links", "WITHOUT ROWID"}},
		{"a view", func(s string) string { return s + "\nCREATE VIEW recent_links AS SELECT * FROM links;" },
			func(m *mapping.Mapping) { m.Edges.Table = "recent_links" }, []string{"recent_links", "view"}},
		{"weights in a text column", nil, func(m *mapping.Mapping) { m.Edges.Weight = "kind" }, []string{"links.kind", "TEXT"}},
		{"active hours in a text column", nil, func(m *mapping.Mapping) { m.Nodes.LastUsedClock = mapping.ClockActiveHours },
			[]string{"memories.last_used_at", "TEXT"}},
		{"ids of two kinds", func(s string) string { return strings.Replace(s, "src INTEGER NOT NULL", "src TEXT NOT NULL", 1) },
			nil, []string{"links.src", "memories.id"}},
		{"a generated column written", func(s string) string {
			return strings.Replace(s, "created_at TEXT);", "created_at TEXT, uses_total INTEGER GENERATED ALWAYS AS (uses + 0) VIRTUAL);", 1)
		}, func(m *mapping.Mapping) { m.Nodes.Reinforcement = "uses_total" }, []string{"memories.uses_total", "generated"}},
		{"one column in two written parts", nil, func(m *mapping.Mapping) { m.Nodes.ArchiveReason = "state" }, []string{"memories.state"}},
		{"memworker's own table", nil, func(m *mapping.Mapping) { m.Edges.Table = "mem_edges" }, []string{"mem_edges"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			schema := appSchema
			if c.schema != nil {
				schema = c.schema(schema)
			}
			path := filepath.Join(t.TempDir(), "memory.db")
			db := createMemory(t, path, schema)
			tx, err := db.SQL.Begin()
			if err != nil {
				t.Fatal(err)
			}
			appShape.write(t, tx, restoreGraph(), appShape.base)
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			db.Close()
			m := memoryTOML(t)
			if c.mutate != nil {
				c.mutate(m)
			}
			before := fileHashes(t, path)
			db = openAsWorker(t, path)
			err = worker.DeclareMapping(context.Background(), db, m, "memory.toml", appShape.base.wall)
			expectMappingError(t, err, c.want)
			if n := scalar[int](t, db, `SELECT count(*) FROM mem_mapping`); n != 0 {
				t.Errorf("%d mappings stored", n)
			}
			db.Close()
			sameFiles(t, before, fileHashes(t, path))
		})
	}
}

// TestMappedSchemaDriftRefused: a mapping is checked again before every
// use. Once the app's schema no longer fits the mapping it declared, a
// sweep, a dry run and a restore are each refused with one line naming
// the table and column, and the file is left byte for byte as it was.
func TestMappedSchemaDriftRefused(t *testing.T) {
	cases := []struct {
		name, ddl string
		want      []string
	}{
		{"a column renamed", `ALTER TABLE links RENAME COLUMN strength TO weight`, []string{"links", "strength"}},
		{"a column dropped", `ALTER TABLE memories DROP COLUMN uses`, []string{"memories", "uses"}},
		{"a table dropped", `DROP TABLE links`, []string{"links"}},
		{"a column retyped", `CREATE TABLE links_new (id INTEGER PRIMARY KEY,
				src INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
				dst INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
				kind TEXT NOT NULL, strength TEXT, hits INTEGER DEFAULT 0, touched_at TEXT, UNIQUE (src, dst, kind));
			INSERT INTO links_new SELECT * FROM links;
			DROP TABLE links;
			ALTER TABLE links_new RENAME TO links;`, []string{"links.strength", "TEXT"}},
	}
	ctx := context.Background()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := appShape
			g := restoreGraph()
			db, path := shapedMemory(t, s, g, s.base)
			mustExec(t, db, c.ddl)
			db.Close()
			before := fileHashes(t, path)
			db = openAsWorker(t, path)
			a, b := s.restoreKey(g.Links[8])
			for _, op := range []struct {
				name string
				run  func() error
			}{
				{"sweep", func() error { _, err := worker.Sweep(ctx, db, s.opt(s.base, worker.SweepOptions{})); return err }},
				{"dry run", func() error {
					_, err := worker.Sweep(ctx, db, s.opt(s.base, worker.SweepOptions{DryRun: true}))
					return err
				}},
				{"restore edge", func() error { _, err := worker.RestoreEdge(ctx, db, a, b, s.base.wall); return err }},
				{"restore block", func() error { _, err := worker.RestoreBlock(ctx, db, s.nodeSubject(5), s.base.wall); return err }},
			} {
				t.Run(op.name, func(t *testing.T) { expectMappingError(t, op.run(), c.want) })
			}
			db.Close()
			sameFiles(t, before, fileHashes(t, path))
		})
	}
}

// expectMappingError checks err is a mapping's refusal: ErrBadMapping, one
// line, naming each of want.
func expectMappingError(t *testing.T, err error, want []string) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted, want an error naming %q", want)
	}
	if !errors.Is(err, mapping.ErrBadMapping) {
		t.Errorf("not mapping.ErrBadMapping: %v", err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("more than one line: %q", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q does not name %q", err, w)
		}
	}
}

// TestMappedChangeCaptureRestored: a mapping whose change capture is not
// on the app's tables (declared by an older memworker, or dropped by the
// app) would let incremental sweeps miss the app's writes. A sweep finds
// it missing, reads every row and puts it back; a dry run only reads.
func TestMappedChangeCaptureRestored(t *testing.T) {
	s := appShape
	db, _ := shapedMemory(t, s, randomGraph(11, 60, 300, s.gen), s.base)
	sweepShape(t, s, db, s.base, worker.SweepOptions{})
	const captured = `SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'mem_map_%_queue_%'`
	want := scalar[int](t, db, captured)
	if want != 6 {
		t.Fatalf("%d change-capture triggers on memories and links, want 6", want)
	}
	for _, name := range []string{"mem_map_links_queue_update", "mem_map_links_queue_insert"} {
		mustExec(t, db, `DROP TRIGGER "`+name+`"`)
	}
	// Unseen by any queue: a link weakened below the prune threshold.
	id := scalar[int64](t, db, `SELECT min(id) FROM links`)
	mustExec(t, db, `UPDATE links SET strength = 0.01, hits = 0 WHERE id = ?`, id)

	c := s.base.after(1)
	dry := sweepShape(t, s, db, c, worker.SweepOptions{DryRun: true})
	if dry.EdgesPruned == 0 { // a dry run reads every row
		t.Error("the dry run does not prune the weakened link")
	}
	if got := scalar[int](t, db, captured); got != want-2 {
		t.Errorf("the dry run changed the triggers: %d, want %d", got, want-2)
	}
	r := sweepShape(t, s, db, c, worker.SweepOptions{})
	if !r.Full {
		t.Error("the sweep was not full though the change capture was missing")
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM links WHERE id = ?`, id); n != 0 {
		t.Error("the weakened link the queues never saw is still there")
	}
	if got := scalar[int](t, db, captured); got != want {
		t.Errorf("%d change-capture triggers after the sweep, want %d", got, want)
	}
	// From now on the app's writes are queued again.
	mustExec(t, db, `UPDATE links SET strength = 0.01, hits = 0 WHERE id = (SELECT min(id) FROM links)`)
	if r := sweepShape(t, s, db, c.after(1), worker.SweepOptions{}); r.Full || r.EdgesPruned != 1 {
		t.Errorf("the next sweep: full %v, %d pruned; want an incremental sweep pruning the link weakened since", r.Full, r.EdgesPruned)
	}
}

// TestMappedFacts: an app's own notes table as the facts (ISO-8601 times,
// integer ids, statuses of its own) is swept in place as the same facts
// in mem_facts are, each on both sides of the lifecycle thresholds, and
// restore brings a pruned and an archived note back.
func TestMappedFacts(t *testing.T) {
	ctx := context.Background()
	wall := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	type note struct {
		id                 int
		segment            string
		importance         float64
		accesses           int
		lastAccess, status string // lastAccess "" is NULL
	}
	notes := []note{
		{1, "context", 0.2, 0, "2026-01-01T00:00:00Z", "live"},        // short, long idle: pruned
		{2, "context", 0.9, 5, "2026-02-28T12:00:00Z", "live"},        // short, fresh: kept
		{3, "knowledge", 0.3, 0, "", "live"},                          // long, never accessed, created long ago: archived
		{4, "knowledge", 0.3, 0, "", "pinned"},                        // confirmed: immune
		{5, "identity", 0.85, 0, "2020-01-01T00:00:00Z", "live"},      // permanent: immune
		{6, "knowledge", 0.6, 3, "2026-02-20T00:00:00+00:00", "live"}, // long, recent: kept
		{7, "nonsense", 0.5, 0, "2026-02-20T00:00:00Z", "live"},       // no tier: an invalid row, named
	}
	appDB := createMemory(t, filepath.Join(t.TempDir(), "app.db"), `CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT,
		segment TEXT, importance REAL, access_count INTEGER NOT NULL DEFAULT 0, last_access TEXT, created_at TEXT, status TEXT)`)
	memDB := createMemory(t, filepath.Join(t.TempDir(), "mem.db"), "")
	memStatus := map[string]string{"live": "active", "pinned": "confirmed"}
	for _, n := range notes {
		var last any
		if n.lastAccess != "" {
			last = n.lastAccess
		}
		mustExec(t, appDB, `INSERT INTO notes VALUES (?, 'n', ?, ?, ?, ?, '2025-06-01T00:00:00Z', ?)`,
			n.id, n.segment, n.importance, n.accesses, last, n.status)
		mustExec(t, memDB, `INSERT INTO mem_facts (id, content, segment, importance, access_count, last_accessed_at, created_at, status)
			VALUES (?, 'n', ?, ?, ?, ?, '2025-06-01T00:00:00Z', ?)`, strconv.Itoa(n.id), n.segment, n.importance, n.accesses, last, memStatus[n.status])
	}
	m, err := mapping.Parse("notes.toml", []byte(notesMapping))
	if err != nil {
		t.Fatal(err)
	}
	if err := worker.DeclareMapping(ctx, appDB, m, "notes.toml", wall); err != nil {
		t.Fatal(err)
	}
	ra, err := worker.Sweep(ctx, appDB, worker.SweepOptions{WallNow: &wall})
	if err != nil {
		t.Fatal(err)
	}
	rm, err := worker.Sweep(ctx, memDB, worker.SweepOptions{WallNow: &wall})
	if err != nil {
		t.Fatal(err)
	}
	if ra.Facts != rm.Facts || ra.Facts.Archived != 1 || ra.Facts.Pruned != 1 || ra.InvalidRows.Count != 1 || rm.InvalidRows.Count != 1 {
		t.Fatalf("facts: app %+v (%d invalid), mem %+v (%d invalid); want one archived, one pruned, one invalid alike",
			ra.Facts, ra.InvalidRows.Count, rm.Facts, rm.InvalidRows.Count)
	}
	states := func(db *worker.DB, query string) string {
		rows, err := db.SQL.Query(query)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for rows.Next() {
			var v string
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			out = append(out, v)
		}
		if err := errorsOf(rows); err != nil {
			t.Fatal(err)
		}
		return strings.Join(out, " ")
	}
	app := states(appDB, `SELECT id || ':' || CASE status WHEN 'live' THEN 'active' WHEN 'pinned' THEN 'confirmed' ELSE status END FROM notes ORDER BY id`)
	mem := states(memDB, `SELECT id || ':' || status FROM mem_facts ORDER BY CAST(id AS INTEGER)`)
	if app != mem || app != "2:active 3:archived 4:confirmed 5:active 6:active 7:active" {
		t.Fatalf("after the sweep\napp %s\nmem %s", app, mem)
	}
	if got := states(appDB, `SELECT subject_id || ':' || action FROM mem_events ORDER BY id`); got != "1:prune 3:archive" {
		t.Errorf("events %s", got)
	}
	// explain --fact reads the note through the mapping as the sweep does.
	x, err := worker.ExplainFact(ctx, appDB, "2", wall)
	if err != nil {
		t.Fatal(err)
	}
	if x.Tier != "short" || x.Status != "active" || x.AccessCount != 5 || x.Invalid || x.Action != "keep" {
		t.Errorf("explain fact 2: %+v", x)
	}
	if x, err := worker.ExplainFact(ctx, appDB, "7", wall); err != nil || !x.Invalid {
		t.Errorf("explain fact 7 (no tier): %+v, %v; want an invalid row", x, err)
	}
	before := quotedRow(t, appDB, "notes", "id = 2")
	for _, id := range []string{"1", "3"} {
		if _, err := worker.RestoreFact(ctx, appDB, id, wall); err != nil {
			t.Fatalf("restore fact %s: %v", id, err)
		}
	}
	if _, err := worker.RestoreFact(ctx, appDB, "3", wall); !errors.Is(err, worker.ErrNothingToRestore) {
		t.Errorf("restoring fact 3 twice: %v, want ErrNothingToRestore", err)
	}
	row := quotedRow(t, appDB, "notes", "id = 1")
	want := map[string]string{"id": "1", "body": "'n'", "segment": "'context'", "importance": "0.2", "access_count": "0",
		"last_access": "'2026-03-01T00:00:00Z'", "created_at": "'2025-06-01T00:00:00Z'", "status": "'live'"}
	for k, v := range want {
		if row[k] != v {
			t.Errorf("restored note 1: %s = %s, want %s", k, row[k], v)
		}
	}
	if got := quotedRow(t, appDB, "notes", "id = 3")["status"]; got != "'live'" {
		t.Errorf("restored note 3 is %s", got)
	}
	if after := quotedRow(t, appDB, "notes", "id = 2"); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("a restore changed note 2: %v, was %v", after, before)
	}

	// Fact feedback writes the app's own columns, each in its own form.
	later := wall.Add(time.Hour)
	c, err := worker.Recall(ctx, appDB, "2", false, later)
	if err != nil {
		t.Fatal(err)
	}
	row = quotedRow(t, appDB, "notes", "id = 2")
	if c.AccessCountAfter != 6 || row["access_count"] != "6" || row["last_access"] != "'2026-03-01T01:00:00Z'" || row["status"] != "'live'" {
		t.Errorf("recall of note 2: %+v; row %v", c, row)
	}
	c, err = worker.Feedback(ctx, appDB, "6", true, later)
	if err != nil {
		t.Fatal(err)
	}
	if got := quotedRow(t, appDB, "notes", "id = 6")["importance"]; c.ImportanceAfter <= 0.6 || got != strconv.FormatFloat(c.ImportanceAfter, 'g', 17, 64) && got != fmt.Sprint(c.ImportanceAfter) {
		t.Errorf("feedback up on note 6: importance %v → %v, the row holds %s", c.ImportanceBefore, c.ImportanceAfter, got)
	}
	if got := states(appDB, `SELECT subject_id || ':' || action FROM mem_events WHERE action IN ('recall', 'feedback') ORDER BY id`); got != "2:recall 6:feedback" {
		t.Errorf("feedback events %s", got)
	}
	if _, err := worker.Recall(ctx, appDB, "3", false, later); err != nil {
		t.Errorf("recall of the restored note 3: %v", err)
	}
}

// TestMappedBadRowsNamed: a bad row of the app's tables is skipped and
// named by the app's own table and column, and the sweep goes on.
func TestMappedBadRowsNamed(t *testing.T) {
	s := appShape
	db, _ := shapedMemory(t, s, randomGraph(21, 40, 120, s.gen), s.base)
	first := scalar[int64](t, db, `SELECT min(id) FROM links`)
	mustExec(t, db, `UPDATE links SET strength = 'strong' WHERE id = ?`, first)
	mustExec(t, db, `UPDATE links SET touched_at = 'yesterday' WHERE id = ?`, first+1)
	mustExec(t, db, `UPDATE memories SET uses = -3 WHERE id = (SELECT min(id) FROM memories)`)
	r := sweepShape(t, s, db, s.base, worker.SweepOptions{})
	var got []string
	for _, v := range r.InvalidRows.Sample {
		got = append(got, v.Kind+" "+v.ID+": "+v.Problem)
	}
	want := []string{
		"block " + strconv.FormatInt(scalar[int64](t, db, `SELECT min(id) FROM memories`), 10) + ": memories.uses is negative",
		"edge " + strconv.FormatInt(first, 10) + ": links.strength is text",
		"edge " + strconv.FormatInt(first+1, 10) + ": links.touched_at is text",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("bad rows named\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM links WHERE id IN (?, ?)`, first, first+1); n != 2 {
		t.Errorf("%d of the 2 bad links are left: a sweep never touches a bad row", n)
	}
}

// TestMappedSweepDue: through a mapping "a sweep is due" reads the clock the
// sweeps run on (elfmem's own total_active_hours), as status and run
// --when-due both do.
func TestMappedSweepDue(t *testing.T) {
	s := elfmemShape
	db, _ := shapedMemory(t, s, randomGraph(31, 30, 60, s.gen), s.base)
	sweepShape(t, s, db, s.base, worker.SweepOptions{})
	for _, c := range []struct {
		later float64
		due   bool
	}{{0, false}, {10, false}, {40, true}, {55, true}} {
		s.setClock(t, db, s.base.after(c.later))
		st, err := worker.GetStatus(context.Background(), db)
		if err != nil {
			t.Fatal(err)
		}
		if st.CurateDue != c.due || st.ActiveHours != s.base.hours+c.later || *st.HoursSinceCurate != c.later {
			t.Errorf("%v h after the sweep: due %v (want %v), clock %v (want %v), %v h since",
				c.later, st.CurateDue, c.due, st.ActiveHours, s.base.hours+c.later, *st.HoursSinceCurate)
		}
	}
}

// TestMappedNullCountsAreZero: counts and flags an app leaves NULL (columns
// with no default) read as 0, as memworker's own rows start: the rows are
// swept, and a reinforcement writes the count it reaches.
func TestMappedNullCountsAreZero(t *testing.T) {
	s := appShape
	db, _ := shapedMemory(t, s, randomGraph(41, 40, 120, s.gen), s.base)
	mustExec(t, db, `UPDATE links SET hits = NULL`)
	mustExec(t, db, `UPDATE memories SET uses = NULL`)
	r := sweepShape(t, s, db, s.base, worker.SweepOptions{})
	if r.InvalidRows.Count != 0 || r.Reinforced == 0 {
		t.Fatalf("with NULL counts: %d invalid rows (want 0), %d reinforced; %s", r.InvalidRows.Count, r.Reinforced, r.Summary)
	}
	// Each reinforcement adds 1 (a block both constitutional and in the top
	// N gets 2); the others keep their NULL.
	if n := scalar[int](t, db, `SELECT coalesce(sum(uses), 0) FROM memories`); n != int(r.Reinforced+r.ConstitutionalReinforced) {
		t.Errorf("the memories' uses add up to %d, want the %d reinforcements", n, r.Reinforced+r.ConstitutionalReinforced)
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM memories WHERE uses = 0`); n != 0 {
		t.Errorf("the sweep wrote 0 into %d memories' NULL uses", n)
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM links WHERE hits IS NOT NULL`); n != 0 {
		t.Errorf("the sweep wrote %d links' NULL hits", n)
	}
}
