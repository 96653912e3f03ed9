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
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/worker"
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
	opt := worker.WithChunk(worker.SweepOptions{ChunkSize: 20, SoloChunkSize: 20}, func(step string, done, total int64) {
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

// TestMappedCutSweepFoldsDegrees: through the app's own tables (integer
// ids), a later, incremental sweep cut between two transactions of its
// link removals has logged the degrees they took; the next sweep folds
// them, finishes the plan, and leaves the app's rows and every derived
// number as the same sweep uncut does.
func TestMappedCutSweepFoldsDegrees(t *testing.T) {
	s := appShape
	db, orig := shapedMemory(t, s, randomGraph(13, 300, 1500, s.gen), s.base)
	db.Close()
	ref, cut := openAsWorker(t, copyMemory(t, orig)), openAsWorker(t, copyMemory(t, orig))
	later := s.base.after(200)
	for _, d := range []*worker.DB{ref, cut} {
		sweepShape(t, s, d, s.base, worker.SweepOptions{ChunkSize: 20})
	}
	sweepShape(t, s, ref, later, worker.SweepOptions{ChunkSize: 20})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opt := worker.WithChunk(worker.SweepOptions{ChunkSize: 20, SoloChunkSize: 20}, func(step string, done, total int64) {
		if step == "plan_edges" && done > 0 && done < total {
			cancel()
		}
	})
	if _, err := worker.Sweep(ctx, cut, s.opt(later, opt)); !errors.Is(err, context.Canceled) {
		t.Fatalf("the later sweep was not cut between its link removals: %v", err)
	}
	if n := scalar[int](t, cut, `SELECT count(*) FROM mem_degree_log`); n == 0 {
		t.Fatal("cut after removing links, the sweep logged no degree")
	}
	checkDueSoon(t, cut, "through the app's tables, cut")
	if r := sweepShape(t, s, cut, later, worker.SweepOptions{ChunkSize: 20}); !r.Resumed {
		t.Fatal("the sweep after the cut did not resume its plan")
	}
	if n := scalar[int](t, cut, `SELECT count(*) FROM mem_degree_log`); n != 0 {
		t.Fatalf("%d strengths left unfolded after the resumed sweep", n)
	}
	if got, want := shapeState(t, cut, s), shapeState(t, ref, s); got != want {
		t.Errorf("the app's rows after the resumed sweep differ\nhere only:\n%s\nthere only:\n%s", diffLines(got, want), diffLines(want, got))
	}
	if got, want := derivedState(t, cut), derivedState(t, ref); got != want {
		t.Errorf("derived state after the resumed sweep differs\nhere only:\n%s\nthere only:\n%s", diffLines(got, want), diffLines(want, got))
	}
	checkDueSoon(t, cut, "through the app's tables, resumed")
	if scalar[int](t, cut, `SELECT count(*) FROM mem_config WHERE key = 'due_soon'`) == 0 {
		t.Error("no list of edges due soon through the app's tables")
	}
	integrityOK(t, cut.SQL)
}
