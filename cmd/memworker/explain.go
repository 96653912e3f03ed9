package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/memdecay/memdecay/worker"
)

func explainCommand(now func() time.Time) *cli.Command {
	return withFlags(&cli.Command{
		Name:      "explain",
		Usage:     "why an edge or a fact will or will not decay, and when",
		ArgsUsage: "--edge A B | --edge KEY | --fact ID",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "edge", Usage: "explain the edge between blocks A and B (through a mapping: the link of key KEY, or A B for a key of two columns)"},
			&cli.StringFlag{Name: "fact", Usage: "explain the fact `ID`"},
			&cli.StringFlag{Name: "plot", Usage: "also draw the curve, now and the crossing into `FILE` (.png or .svg)"},
			&cli.StringFlag{Name: "wall-now", Usage: "explain at wall clock `T` (unix seconds, or ISO-8601 / SQLite datetime text), as sweep --wall-now T decides; wins over a pinned wall_clock"},
			jsonFlag(),
		},
		Action: func(c *cli.Context) error {
			args, err := positional(c)
			if err != nil {
				return err
			}
			if f := c.String("plot"); f != "" && !strings.HasSuffix(f, ".png") && !strings.HasSuffix(f, ".svg") {
				return usagef("explain", "--plot %q: want a file name ending in .png or .svg", f)
			}
			var wall *time.Time
			if s := c.String("wall-now"); s != "" {
				t, err := parseWallTime(s)
				if err != nil {
					return usagef("explain", "--wall-now: %v", err)
				}
				wall = &t
			}
			switch {
			case c.Bool("edge") && (len(args) == 1 || len(args) == 2) && c.String("fact") == "":
				return explainEdge(c, args, wall)
			case c.String("fact") != "" && !c.Bool("edge") && len(args) == 0:
				return explainFact(c, now(), wall)
			}
			return usagef("explain", "want --edge A B (or --edge KEY through a mapping) or --fact ID")
		},
	})
}

// explainEdge explains an edge at the wall clock wall, when given.
func explainEdge(c *cli.Context, args []string, wall *time.Time) error {
	db, err := openMemory(c, true)
	if err != nil {
		return err
	}
	defer db.Close()
	a, b, err := edgeArgs(c, db, args, "explain", "want --edge A B or --fact ID")
	if err != nil {
		return err
	}
	explain, sketch := worker.ExplainEdge, worker.EdgeSketch
	if wall != nil {
		explain = func(ctx context.Context, db *worker.DB, a, b string) (*worker.EdgeExplanation, error) {
			return worker.ExplainEdgeAt(ctx, db, a, b, *wall)
		}
		sketch = func(ctx context.Context, db *worker.DB, a, b string) (*worker.Sketch, error) {
			return worker.EdgeSketchAt(ctx, db, a, b, *wall)
		}
	}
	x, err := explain(c.Context, db, a, b)
	if err != nil {
		return err
	}
	plot := func() error {
		return explainPlot(c, func() (*worker.Sketch, error) { return sketch(c.Context, db, a, b) })
	}
	if c.Bool("json") {
		if err := printJSON(c.App.Writer, x); err != nil {
			return err
		}
		return plot()
	}
	w := c.App.Writer
	about := []string{safe(x.RelationType), "origin " + safe(x.Origin)}
	if x.Key != "" { // through a mapping, which may name no origin
		about = []string{safe(x.RelationType), "link " + safe(x.Key)}
		if x.Origin != "" {
			about = append(about, "origin "+safe(x.Origin))
		}
	}
	fmt.Fprintf(w, "edge %s — %s (%s)\n", safe(x.From), safe(x.To), strings.Join(about, ", "))
	if x.Invalid {
		fmt.Fprintf(w, "  verdict    %s\n", safe(x.Verdict))
		return plot()
	}
	fmt.Fprintf(w, "  tiers      %s / %s\n", safe(x.TierFrom), safe(x.TierTo))
	fmt.Fprintf(w, "  weight     %.4f, reinforced %g times (established: %v)\n", x.Weight, x.ReinforcementCount, x.Established)
	if x.Lambda != nil {
		fmt.Fprintf(w, "  lambda     %g per %s\n", *x.Lambda, strings.TrimSuffix(x.HourUnit(), "s"))
	} else {
		fmt.Fprintf(w, "  policy     %s %s, %s below the threshold\n", safe(x.Model), clockPhrase(x.Clock, x.HoursOnWall), safe(x.Action))
	}
	switch {
	case x.ElapsedHours != nil:
		since := fmt.Sprintf("%.2f", *x.LastActiveHours)
		if x.HoursOnWall {
			since = wallDate(int64(*x.LastActiveHours * 3600))
		}
		fmt.Fprintf(w, "  elapsed    %.2f %s since %s\n", *x.ElapsedHours, x.HourUnit(), since)
	case x.Elapsed != nil && x.LastObservedAt != nil:
		fmt.Fprintf(w, "  elapsed    %.2f days since %s (observed)\n", *x.Elapsed, wallDate(int64(*x.LastObservedAt)))
	}
	fmt.Fprintf(w, "  effective  %.4f (threshold %.4f)\n", x.EffectiveWeight, x.Threshold)
	switch {
	case x.TimeLeft == nil || x.State != "live":
	case x.Clock == "wall":
		left := fmt.Sprintf("%.2f days", *x.TimeLeft)
		if human := worker.HumanSpan(*x.TimeLeft, x.Clock); !strings.HasSuffix(human, " days") {
			left += " (" + human + ")"
		}
		fmt.Fprintf(w, "  time left  %s\n", left)
	case x.HoursOnWall:
		fmt.Fprintf(w, "  time left  %.1f %s (%s)\n", *x.TimeLeft, x.HourUnit(), worker.HumanSpan(*x.TimeLeft, x.Clock))
	default:
		fmt.Fprintf(w, "  time left  %.1f %s\n", *x.TimeLeft, x.HourUnit())
	}
	fmt.Fprintf(w, "  verdict    %s\n", safe(x.Verdict))
	return plot()
}

// explainFact explains a fact at the wall clock wall when given, else at
// the one a sweep would take at now.
func explainFact(c *cli.Context, now time.Time, wall *time.Time) error {
	db, err := openMemory(c, true)
	if err != nil {
		return err
	}
	defer db.Close()
	var x *worker.FactExplanation
	if wall != nil {
		x, err = worker.ExplainFactAt(c.Context, db, c.String("fact"), *wall)
	} else {
		x, err = worker.ExplainFact(c.Context, db, c.String("fact"), now)
	}
	if err != nil {
		return err
	}
	plot := func() error {
		return explainPlot(c, func() (*worker.Sketch, error) { return worker.FactSketch(c.Context, db, x) })
	}
	if c.Bool("json") {
		if err := printJSON(c.App.Writer, x); err != nil {
			return err
		}
		return plot()
	}
	w := c.App.Writer
	fmt.Fprintf(w, "fact %s (%s, tier %s, %s)\n", safe(x.ID), safe(x.Segment), safe(x.Tier), safe(x.Status))
	if x.Invalid {
		fmt.Fprintf(w, "  verdict    %s\n", safe(x.Verdict))
		return plot()
	}
	fmt.Fprintf(w, "  importance %.3f, decay rate %.3f, recalled %g times\n", x.Importance, x.DecayRate, x.AccessCount)
	fmt.Fprintf(w, "  last use   %.1f days ago\n", x.DaysSinceAccess)
	fmt.Fprintf(w, "  score      %.4f → %s\n", x.Score, x.Action)
	if x.ArchiveInDays != nil {
		fmt.Fprintf(w, "  archived   in %.1f days without use\n", *x.ArchiveInDays)
	}
	if x.PruneInDays != nil {
		fmt.Fprintf(w, "  pruned     in %.1f days without use\n", *x.PruneInDays)
	}
	fmt.Fprintf(w, "  verdict    %s\n", safe(x.Verdict))
	return plot()
}

// explainPlot draws the row's sketch into --plot's file, when asked; the
// file's name says its format.
func explainPlot(c *cli.Context, sketch func() (*worker.Sketch, error)) error {
	file := c.String("plot")
	if file == "" {
		return nil
	}
	s, err := sketch()
	if err != nil {
		return err
	}
	if err := saveFigure(sketchPlot(s), file); err != nil {
		return fmt.Errorf("explain --plot: writing %s: %w", file, err)
	}
	return nil
}

// clockPhrase names the clock an edge's policy decays on (its hours are
// wall-clock hours through a mapping of wall times: hoursOnWall).
func clockPhrase(clock string, hoursOnWall bool) string {
	switch {
	case clock == "wall":
		return "on the wall clock"
	case hoursOnWall:
		return "on wall-clock hours"
	}
	return "on active hours"
}
