package main

// What each picture shows, as text: legends, tick labels, stacked bars and
// the explain sketch's axis, from the demo with a second sweep and a
// policy whose curve is a tier's. Compared with a golden file.

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot"

	"github.com/memdecay/memdecay/worker"
)

func TestPlotFiguresGolden(t *testing.T) {
	path := goldenDB(t, t.TempDir(), "m.db")
	exec1(t, path, `UPDATE mem_config SET value = ? WHERE key = 'wall_clock'`, goldenWall.Unix())
	exec1(t, path, `INSERT INTO mem_edge_policies (relation_type, model, params, clock, threshold, action, orphans)
		VALUES ('linked', 'exponential', '{"lambda":0.005}', 'active_hours', NULL, 'delete', 'keep')`)
	exec1(t, path, `INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, relation_type, last_active_hours)
		VALUES ('db-index', 'goal-ship', 0.9, 0, 'linked', 500), ('db-wal', 'goal-ship', 0.9, 0, 'linked', 100)`)
	ok(t, "clock", "advance", "100", "--db", path)
	ok(t, "sweep", "--db", path)
	db, err := worker.OpenMemory(path, true)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	d, err := worker.Plot(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	ticks := func(name string, labels []string) {
		fmt.Fprintf(&b, "  %s ticks: %s\n", name, strings.Join(labels, " | "))
	}
	for _, clock := range []string{"active_hours", "wall"} {
		fmt.Fprintf(&b, "curves-%s legend:\n", clock)
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, cv := range d.Curves {
			if cv.Clock == clock {
				fmt.Fprintf(&b, "  %s\n", curveLabel(cv))
				lo, hi = math.Min(lo, cv.Points[0][0]), math.Max(hi, cv.Points[len(cv.Points)-1][0])
			}
		}
		ticks("x", tickLabels(logTimeTicks{clock}, lo, hi))
		bins := binTimeLeft(d.TimeLeft, clock)
		fmt.Fprintf(&b, "time-left-%s (bin width %.4g):\n", clock, bins.width)
		for i, g := range bins.groups {
			fmt.Fprintf(&b, "  %s:", g.Group)
			for k, n := range bins.counts[i] {
				if n > 0 {
					fmt.Fprintf(&b, " bin %d ×%d", k, n)
				}
			}
			b.WriteString("\n")
		}
		ticks("x", tickLabels(linearTimeTicks{clock}, 0, bins.width*timeLeftBinCount))
	}
	b.WriteString("removals (stacked, bottom up):\n")
	for _, s := range d.Sweeps {
		fmt.Fprintf(&b, "  %s:", strings.SplitN(sweepLabel(s), "\n", 2)[0])
		for _, k := range removalKinds {
			fmt.Fprintf(&b, " %s %d;", k.name, k.v(s))
		}
		b.WriteString("\n")
	}
	for _, e := range [][2]string{{"db-index", "py-async"}, {"db-index", "goal-ship"}, {"alex", "project-alpha"}} {
		s, err := worker.EdgeSketch(ctx, db, e[0], e[1])
		if err != nil {
			t.Fatal(err)
		}
		sketchText(&b, s)
	}
	f, err := worker.ExplainFact(ctx, db, "f-meeting", goldenWall)
	if err != nil {
		t.Fatal(err)
	}
	s, err := worker.FactSketch(ctx, db, f)
	if err != nil {
		t.Fatal(err)
	}
	sketchText(&b, s)

	golden := filepath.Join("testdata", "plot-figures.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if b.String() != string(want) {
		t.Errorf("figures differ from %s (rerun with -update after checking):\n%s", golden, b.String())
	}
}

// sketchText is what explain --plot draws of a sketch: its axis (from now)
// and its legend.
func sketchText(b *strings.Builder, s *worker.Sketch) {
	fmt.Fprintf(b, "explain %s:\n  axis: %s\n", s.Title, sketchAxis(s))
	for _, l := range s.Lines {
		fmt.Fprintf(b, "  %s\n", sketchLineLabel(s, l))
	}
	first, last := s.Points[0][0]-s.Now, s.Points[len(s.Points)-1][0]-s.Now
	fmt.Fprintf(b, "  x from %.4g to %.4g; ticks: %s\n", first, last, strings.Join(tickLabels(linearTimeTicks{s.Clock}, first, last), " | "))
}

// tickLabels are the labelled ticks of a ticker over [lo, hi].
func tickLabels(t plot.Ticker, lo, hi float64) []string {
	var out []string
	for _, tk := range t.Ticks(lo, hi) {
		if tk.Label != "" {
			out = append(out, strings.ReplaceAll(tk.Label, "\n", " "))
		}
	}
	return out
}

// TestRqlitePlot: plot on an rqlite node, whose SQLite has no math
// functions (no pow): the data are those of a file, and every image is
// drawn.
func TestRqlitePlot(t *testing.T) {
	_, u := demoCluster(t, 1)
	r := ok(t, "--db", u, "plot", "--json")
	if !strings.Contains(r.stdout, `"name": "tier permanent"`) || !strings.Contains(r.stdout, `"edges_policy_decayed": 1`) {
		t.Errorf("plot --json on rqlite:\n%.600s", r.stdout)
	}
	out := t.TempDir()
	if r := ok(t, "--db", u, "plot", "--out", out); strings.Count(r.stdout, "\n") != 5 {
		t.Errorf("plot on rqlite wrote:\n%s", r.stdout)
	}
}
