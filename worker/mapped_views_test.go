package worker_test

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/worker"
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
