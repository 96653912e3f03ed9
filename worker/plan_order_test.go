package worker_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/worker"
)

// TestRemovalsInKeyOrder: a sweep removes its edges, and numbers their
// events, in key order, static prunes and decays interleaved: whether the
// plan comes out of the evaluation in that order (a first sweep of the
// file's own tables, no cap), or is sorted into it (a decay cap, a block
// archived with its edges, a bulk sweep's, a later sweep's).
func TestRemovalsInKeyOrder(t *testing.T) {
	// At clock 1000 a standard edge of weight 0.5 from hour 0 decays
	// (0.0034); one of weight 0.05 never reinforced is a static prune;
	// one of weight 0.9 active at 1000 stays. Block h faded long ago and
	// has no pinned edge: with archival on, it goes with its edges.
	const fx = `
		INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES
			('a','knowledge',1000), ('b','knowledge',1000), ('c','knowledge',1000), ('d','knowledge',1000),
			('e','knowledge',1000), ('f','knowledge',1000), ('g','knowledge',1000), ('h','observation',0);
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES
			('a','b',0.05,0,1000), ('a','c',0.5,0,0), ('a','d',0.9,0,1000), ('a','h',0.9,0,1000),
			('b','c',0.5,0,0), ('b','d',0.05,0,1000), ('c','d',0.5,1,0), ('c','e',0.9,0,1000),
			('d','e',0.05,0,0), ('d','f',0.5,0,0), ('e','f',0.9,0,1000), ('e','g',0.5,0,0), ('f','g',0.05,0,1000);`
	removed := []string{"a-b", "a-c", "b-c", "b-d", "c-d", "d-e", "d-f", "e-g", "f-g"}
	for _, c := range []struct {
		name     string
		config   map[string]string
		opt      worker.SweepOptions
		archived bool
		later    bool // removed by a second sweep: the decays come due, the static prunes are queued
	}{
		{name: "one pass, in key order", config: map[string]string{"block_archival": "off"}},
		{name: "chunks of 2", config: map[string]string{"block_archival": "off"}, opt: worker.SweepOptions{ChunkSize: 2}},
		{name: "bulk", config: map[string]string{"block_archival": "off"}, opt: worker.SweepOptions{Bulk: true}},
		{name: "decay cap", config: map[string]string{"block_archival": "off", "max_decay_fraction": "0.99"}},
		{name: "block archived first", config: map[string]string{}, archived: true},
		{name: "a later sweep", config: map[string]string{"block_archival": "off"}, later: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			db, _ := newMemory(t, fx)
			for k, v := range c.config {
				setConfig(t, db, k, v)
			}
			if c.later {
				// At clock 0 nothing decays yet, and the prunes weigh 0.5
				// until the app writes their weights after the sweep.
				mustExec(t, db, `UPDATE mem_edges SET weight = 0.5 WHERE weight = 0.05`)
				sweepChunked(t, db, 0, fixedWall, c.opt)
				mustExec(t, db, `UPDATE mem_edges SET weight = 0.05 WHERE (from_id, to_id) IN (VALUES ('a','b'), ('b','d'), ('d','e'), ('f','g'))`)
				if n := scalar[int64](t, db, `SELECT count(*) FROM mem_archive_mem_edges`); n != 0 {
					t.Fatalf("the sweep at clock 0 removed %d edges", n)
				}
			}
			if r := sweepChunked(t, db, 1000, fixedWall, c.opt); r.Full == c.later {
				t.Errorf("full sweep: %v, want %v", r.Full, !c.later)
			}
			want := removed
			if c.name == "decay cap" { // floor(0.99 × 5) = 4 decays: of equal weights, the last edge stays
				want = slices.DeleteFunc(slices.Clone(removed), func(k string) bool { return k == "e-g" })
			}
			got := column(t, db, `SELECT from_id || '-' || to_id FROM mem_archive_mem_edges
				WHERE mem_archived_block IS NULL ORDER BY mem_event_id`)
			if !slices.Equal(got, want) {
				t.Errorf("removals in event order %v, want %v", got, want)
			}
			actions := column(t, db, `SELECT mem_action FROM mem_archive_mem_edges WHERE mem_archived_block IS NULL ORDER BY mem_event_id`)
			if n := strings.Count(strings.Join(actions, " "), "prune"); n != 4 {
				t.Errorf("%d prunes among %v, want 4", n, actions)
			}
			withBlock := column(t, db, `SELECT from_id || '-' || to_id FROM mem_archive_mem_edges
				WHERE mem_archived_block IS NOT NULL ORDER BY mem_event_id`)
			if c.archived != (len(withBlock) == 1) {
				t.Errorf("edges archived with a block: %v (archival on: %v)", withBlock, c.archived)
			}
		})
	}
}
