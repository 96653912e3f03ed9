package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/worker"
)

// The plotted data of the demo (wall clock pinned): the curves with their
// thresholds and crossings, the time left of the live edges per group, the
// removals per sweep. Compared with a golden file, not pixels.
func TestPlotDataGolden(t *testing.T) {
	path := goldenDB(t, t.TempDir(), "m.db")
	ok(t, "config", "set", "wall_clock", fmt.Sprint(goldenWall.Unix()), "--db", path)
	r := ok(t, "plot", "--json", "--db", path)
	var data struct {
		Curves []struct {
			Name      string       `json:"name"`
			Clock     string       `json:"clock"`
			Points    [][2]float64 `json:"points"`
			Threshold float64      `json:"threshold"`
			Crossing  *float64     `json:"crossing"`
			SameAs    string       `json:"same_as"`
		} `json:"curves"`
		TimeLeft []struct {
			Group  string    `json:"group"`
			Clock  string    `json:"clock"`
			Values []float64 `json:"values"`
		} `json:"time_left"`
		Sweeps []map[string]float64 `json:"sweeps"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &data); err != nil {
		t.Fatalf("plot --json: %v\n%s", err, r.stdout)
	}
	// Rendered at 6 significant digits, one line per series.
	var b strings.Builder
	for _, c := range data.Curves {
		cross := "never"
		if c.Crossing != nil {
			cross = fmt.Sprintf("%.6g", *c.Crossing)
		}
		fmt.Fprintf(&b, "curve %s [%s] threshold %.6g crossing %s:", c.Name, c.Clock, c.Threshold, cross)
		if c.SameAs != "" {
			fmt.Fprintf(&b, " same as %s:", c.SameAs)
		}
		for _, p := range c.Points {
			fmt.Fprintf(&b, " %.6g,%.6g", p[0], p[1])
		}
		b.WriteString("\n")
	}
	for _, g := range data.TimeLeft {
		fmt.Fprintf(&b, "time left %s [%s]:", g.Group, g.Clock)
		for _, v := range g.Values {
			fmt.Fprintf(&b, " %.6g", v)
		}
		b.WriteString("\n")
	}
	for _, s := range data.Sweeps {
		fmt.Fprintf(&b, "sweep %v at clock %v: archived %v with %v edges, pruned %v, decayed %v, policy decayed %v, facts %v\n",
			s["id"], s["clock_hours"], s["archived"], s["edges_removed_with_blocks"], s["edges_pruned"], s["edges_decayed"],
			s["edges_policy_decayed"], s["facts_removed"])
	}
	golden := filepath.Join("testdata", "plot-data.golden")
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
		t.Errorf("plotted data differs from %s (rerun with -update after checking):\n%s", golden, b.String())
	}
	// The curves carry what the legend shows: each tier and each policy.
	for _, name := range []string{"tier permanent", "tier durable", "tier standard", "tier ephemeral", "policy works_on", "policy mentioned_with"} {
		if !strings.Contains(b.String(), "curve "+name+" ") {
			t.Errorf("no curve %q", name)
		}
	}
}

// Every plot is written, as a PNG (by its signature) or an SVG, of a size
// a picture has; the read-only plot changes no byte of the file.
func TestPlotImages(t *testing.T) {
	path := demoDB(t)
	before := fileHash(t, path)
	for _, format := range []string{"png", "svg"} {
		out := filepath.Join(t.TempDir(), "plots")
		r := ok(t, "plot", "--out", out, "--format", format, "--db", path)
		names := []string{"curves-active_hours", "curves-wall", "time-left-active_hours", "time-left-wall", "removals"}
		if got := strings.Count(r.stdout, "\n"); got != len(names) {
			t.Errorf("plot printed %d paths, want %d:\n%s", got, len(names), r.stdout)
		}
		for _, n := range names {
			file := filepath.Join(out, n+"."+format)
			img, err := os.ReadFile(file)
			if err != nil {
				t.Error(err)
				continue
			}
			switch {
			case len(img) < 5000:
				t.Errorf("%s is %d bytes: too small for a plot", file, len(img))
			case format == "png" && !bytes.HasPrefix(img, []byte("\x89PNG\r\n\x1a\n")):
				t.Errorf("%s is not a PNG", file)
			case format == "svg" && !bytes.Contains(img[:min(len(img), 400)], []byte("<svg")):
				t.Errorf("%s is not an SVG", file)
			}
		}
	}
	if fileHash(t, path) != before {
		t.Error("plot changed the database file")
	}
	wantUsage(t, mw(t, "plot", "--format", "gif", "--db", path), `"gif"`, "png or svg")
}

// explain --plot draws one row: an edge on the tiered model, an edge with
// a wall-clock policy, a fact. Its data agree with explain: "now" is the
// elapsed time, the curve crosses each threshold where explain says.
func TestExplainPlot(t *testing.T) {
	path := goldenDB(t, t.TempDir(), "m.db")
	ok(t, "config", "set", "wall_clock", fmt.Sprint(goldenWall.Unix()), "--db", path)
	dir := t.TempDir()
	for _, c := range []struct{ args []string }{
		{[]string{"--edge", "db-index", "db-wal"}},
		{[]string{"--edge", "alex", "project-alpha"}},
		{[]string{"--fact", "f-meeting"}},
	} {
		file := filepath.Join(dir, strings.Join(c.args[1:], "-")+".png")
		mwAt(t, goldenWall, append([]string{"explain", "--plot", file, "--db", path}, c.args...)...)
		img, err := os.ReadFile(file)
		if err != nil || !bytes.HasPrefix(img, []byte("\x89PNG\r\n\x1a\n")) || len(img) < 5000 {
			t.Errorf("explain %v --plot: %d bytes, %v", c.args, len(img), err)
		}
	}
	db, err := worker.OpenMemory(path, true)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	x, err := worker.ExplainEdge(ctx, db, "db-index", "db-wal")
	if err != nil || x.DecaysAtHours == nil || x.ElapsedHours == nil {
		t.Fatalf("explain: %+v %v", x, err)
	}
	s, err := worker.EdgeSketch(ctx, db, "db-wal", "db-index") // either order
	if err != nil {
		t.Fatal(err)
	}
	wantCross := *x.DecaysAtHours - *x.LastActiveHours
	if math.Abs(s.Now-*x.ElapsedHours) > 1e-9 || len(s.Lines) != 1 || s.Lines[0].Crossing == nil ||
		math.Abs(*s.Lines[0].Crossing-wantCross) > 1e-6 || s.Lines[0].Value != x.Threshold {
		t.Errorf("edge sketch %+v (crossing %v), want now %v, threshold %v crossed at %v", s, s.Lines[0].Crossing, *x.ElapsedHours, x.Threshold, wantCross)
	}
	// The curve starts at the weight and is below the threshold after the crossing.
	first, last := s.Points[0], s.Points[len(s.Points)-1]
	if first[0] != 0 || math.Abs(first[1]-x.Weight) > 1e-12 || last[0] <= wantCross || last[1] >= x.Threshold {
		t.Errorf("edge sketch runs from %v to %v; want (0, %v) to past %v below %v", first, last, x.Weight, wantCross, x.Threshold)
	}
	f, err := worker.ExplainFact(ctx, db, "f-meeting", goldenWall)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := worker.FactSketch(ctx, db, f)
	if err != nil || len(fs.Lines) != 2 || fs.Lines[0].Crossing == nil || fs.Lines[1].Crossing == nil {
		t.Fatalf("fact sketch %+v %v", fs, err)
	}
	if got, want := *fs.Lines[0].Crossing, f.DaysSinceAccess+*f.ArchiveInDays; math.Abs(got-want) > 1e-9 {
		t.Errorf("fact archive crossing at %v, want %v", got, want)
	}
	if end := fs.Points[len(fs.Points)-1]; fs.Points[0][0] != 0 || fs.Points[0][1] <= f.Score || end[0] <= *fs.Lines[1].Crossing || end[1] >= 0.05 {
		t.Errorf("fact sketch runs from %v to %v; want from 0 above the score now to past the prune crossing", fs.Points[0], end)
	}

	// Rows past a threshold are marked where they crossed it; rows that
	// keep their weight are flat; immune facts say so.
	past, err := worker.EdgeSketch(ctx, db, "alex", "project-beta") // excluded by its half-life policy
	if err != nil || past.Lines[0].Crossing == nil || *past.Lines[0].Crossing >= past.Now {
		t.Errorf("an excluded edge's sketch %+v (%v): want its crossing before now", past, err)
	}
	flat, err := worker.EdgeSketch(ctx, db, "ds-pandas", "ds-plots") // no last_active_hours
	if err != nil || flat.Lines[0].Crossing != nil || flat.Points[0][1] != flat.Points[len(flat.Points)-1][1] {
		t.Errorf("an edge with no anchor: %+v (%v), want a flat line and no crossing", flat, err)
	}
	if r := mw(t, "explain", "--edge", "ds-pandas", "ds-plots", "--plot", filepath.Join(dir, "flat.png"), "--db", path); r.code != exitOK {
		t.Errorf("explain --plot on an edge with no anchor: %v", r)
	}
	rule, err := worker.ExplainFact(ctx, db, "f-rule", goldenWall)
	if err != nil {
		t.Fatal(err)
	}
	if rs, err := worker.FactSketch(ctx, db, rule); err != nil || len(rs.Lines) == 0 || !strings.Contains(rs.Lines[0].Name, "immune") {
		t.Errorf("a confirmed fact's sketch: %+v (%v), want its lines marked immune", rs, err)
	}

	wantUsage(t, mw(t, "explain", "--edge", "db-index", "db-wal", "--plot", filepath.Join(dir, "x.gif"), "--db", path), "png or .svg")
	wantExit(t, mw(t, "explain", "--edge", "db-index", "nowhere", "--plot", filepath.Join(dir, "x.png"), "--db", path), exitFailure)
}
