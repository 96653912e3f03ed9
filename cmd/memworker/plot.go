package main

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/memdecay/memdecay/worker"
)

// plotCommand draws what a person would rather look at than read: the
// curves in use, the time left of the live edges, removals per sweep.
func plotCommand() *cli.Command {
	return withFlags(&cli.Command{
		Name:  "plot",
		Usage: "draw the decay curves in use, the time left before decay of the live edges, and removals per sweep",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Value: ".", Usage: "`DIR` to write the images into"},
			&cli.StringFlag{Name: "format", Value: "png", Usage: "png or svg"},
			&cli.BoolFlag{Name: "json", Usage: "print the plotted data as JSON instead of drawing it"},
		},
		Action: func(c *cli.Context) error {
			format := c.String("format")
			if format != "png" && format != "svg" {
				return usagef("plot", "--format %q: want png or svg", format)
			}
			db, err := openMemory(c, true)
			if err != nil {
				return err
			}
			defer db.Close()
			data, err := worker.Plot(c.Context, db)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(c.App.Writer, data)
			}
			if err := os.MkdirAll(c.String("out"), 0o755); err != nil {
				return fmt.Errorf("plot: --out: %w", err)
			}
			// One image per kind and clock in use: hours and days share no axis.
			type image struct {
				name string
				draw func(clock string) (*plot.Plot, bool)
			}
			for _, im := range []image{
				{"curves", func(clock string) (*plot.Plot, bool) { return curvesPlot(data.Curves, clock) }},
				{"time-left", func(clock string) (*plot.Plot, bool) { return timeLeftPlot(data.TimeLeft, clock) }},
			} {
				for _, clock := range []string{"active_hours", "wall"} {
					if p, ok := im.draw(clock); ok {
						if err := savePlot(c, p, im.name+"-"+clock+"."+format); err != nil {
							return err
						}
					}
				}
			}
			return savePlot(c, sweepsPlot(data.Sweeps), "removals."+format)
		},
	})
}

func savePlot(c *cli.Context, p *plot.Plot, name string) error {
	path := filepath.Join(c.String("out"), name)
	if err := p.Save(8*vg.Inch, 5*vg.Inch, path); err != nil {
		return fmt.Errorf("plot: writing %s: %w", path, err)
	}
	fmt.Fprintln(c.App.Writer, path)
	return nil
}

// clockUnit names a clock's time unit on an axis.
func clockUnit(clock string) string {
	if clock == "wall" {
		return "days (wall clock)"
	}
	return "active hours (h)"
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	return p
}

func curvesPlot(curves []worker.Curve, clock string) (*plot.Plot, bool) {
	p := newPlot("Decay curves in use: weight left of an edge of weight 1", clockUnit(clock)+", log scale", "weight left (fraction of 1)")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Y.Min, p.Y.Max = 0, 1.05
	n := 0
	for i, cv := range curves {
		if cv.Clock != clock {
			continue
		}
		xys := make(plotter.XYs, len(cv.Points))
		for j, pt := range cv.Points {
			xys[j] = plotter.XY{X: pt[0], Y: pt[1]}
		}
		line, err := plotter.NewLine(xys)
		if err != nil {
			continue
		}
		line.Color = plotColor(i)
		line.Width = vg.Points(1.5)
		name := cv.Name
		if cv.Crossing != nil {
			name += fmt.Sprintf(" (below %.2g at %s)", cv.Threshold, span(*cv.Crossing, clock))
			cross, _ := plotter.NewScatter(plotter.XYs{{X: math.Max(*cv.Crossing, xys[0].X), Y: math.Min(cv.Threshold, 1)}})
			cross.GlyphStyle.Shape = draw.CrossGlyph{}
			cross.GlyphStyle.Color = line.Color
			cross.GlyphStyle.Radius = vg.Points(5)
			p.Add(cross)
		}
		p.Add(line)
		p.Legend.Add(name, line)
		// The threshold line, dashed, in the curve's colour.
		th, _ := plotter.NewLine(plotter.XYs{{X: xys[0].X, Y: cv.Threshold}, {X: xys[len(xys)-1].X, Y: cv.Threshold}})
		th.Color = line.Color
		th.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(th)
		n++
	}
	return p, n > 0
}

// span renders a time on a clock with its unit.
func span(v float64, clock string) string {
	if clock == "wall" {
		return fmt.Sprintf("%.4g d", v)
	}
	return fmt.Sprintf("%.4g h", v)
}

func timeLeftPlot(groups []worker.TimeLeft, clock string) (*plot.Plot, bool) {
	p := newPlot("Time left before decay, live edges", "time left, "+clockUnit(clock), "edges")
	const bins = 20
	top := 0.0
	for _, g := range groups {
		if g.Clock == clock && len(g.Values) > 0 {
			top = math.Max(top, g.Values[len(g.Values)-1]) // sorted ascending
		}
	}
	width := math.Max(top, 1) / bins
	n := 0
	for i, g := range groups {
		if g.Clock != clock || len(g.Values) == 0 {
			continue
		}
		// The same bins for every group, so their bars line up.
		h := &plotter.Histogram{Width: width, LineStyle: plotter.DefaultLineStyle}
		for b := 0; b < bins; b++ {
			h.Bins = append(h.Bins, plotter.HistogramBin{Min: float64(b) * width, Max: float64(b+1) * width})
		}
		for _, v := range g.Values {
			h.Bins[min(int(v/width), bins-1)].Weight++
		}
		c := plotColor(i).(color.RGBA)
		h.FillColor = color.NRGBA{R: c.R, G: c.G, B: c.B, A: 110}
		h.LineStyle.Color = c
		p.Add(h)
		p.Legend.Add(fmt.Sprintf("%s (%d edges)", g.Group, len(g.Values)), h)
		n++
	}
	p.Y.Min = 0
	return p, n > 0
}

func sweepsPlot(sweeps []worker.SweepRemovals) *plot.Plot {
	p := newPlot("Removals per sweep", "sweep start (UTC)", "rows removed or archived")
	p.X.Tick.Marker = plot.TimeTicks{Format: "2006-01-02\n15:04", Time: plot.UTCUnixTime}
	series := []struct {
		name string
		v    func(worker.SweepRemovals) int64
	}{
		{"blocks archived", func(s worker.SweepRemovals) int64 { return s.Archived }},
		{"edges removed with blocks", func(s worker.SweepRemovals) int64 { return s.EdgesRemovedWithBlocks }},
		{"edges pruned", func(s worker.SweepRemovals) int64 { return s.EdgesPruned }},
		{"edges decayed", func(s worker.SweepRemovals) int64 { return s.EdgesDecayed }},
		{"edges decayed by policy", func(s worker.SweepRemovals) int64 { return s.EdgesPolicy }},
		{"facts archived or pruned", func(s worker.SweepRemovals) int64 { return s.FactsRemoved }},
	}
	if len(sweeps) == 0 {
		p.Title.Text += " (no sweep recorded yet)"
		now := float64(time.Now().Unix())
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = now-86400, now, 0, 1
		return p
	}
	for i, s := range series {
		xys := make(plotter.XYs, len(sweeps))
		for j, sw := range sweeps {
			xys[j] = plotter.XY{X: float64(sw.StartedAt), Y: float64(s.v(sw))}
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			continue
		}
		line.Color, points.Color = plotColor(i), plotColor(i)
		p.Add(line, points)
		p.Legend.Add(s.name, line, points)
	}
	p.Y.Min = 0
	return p
}

// plotColor is a palette readable on white and by most colour-blind readers.
func plotColor(i int) color.Color {
	palette := []color.RGBA{
		{0, 114, 178, 255}, {213, 94, 0, 255}, {0, 158, 115, 255}, {204, 121, 167, 255},
		{230, 159, 0, 255}, {86, 180, 233, 255}, {0, 0, 0, 255},
	}
	return palette[i%len(palette)]
}

// sketchPlot draws one row's curve for explain --plot: the curve, "now",
// each threshold dashed with its crossing marked.
func sketchPlot(s *worker.Sketch) *plot.Plot {
	p := newPlot(s.Title, "time since the last anchor, "+clockUnit(s.Clock), s.YLabel)
	xys := make(plotter.XYs, len(s.Points))
	top := 0.0
	for i, pt := range s.Points {
		xys[i] = plotter.XY{X: pt[0], Y: pt[1]}
		top = math.Max(top, pt[1])
	}
	end := xys[len(xys)-1].X
	if line, err := plotter.NewLine(xys); err == nil {
		line.Color, line.Width = plotColor(0), vg.Points(1.5)
		p.Add(line)
		p.Legend.Add(s.YLabel, line)
	}
	for i, l := range s.Lines {
		th, _ := plotter.NewLine(plotter.XYs{{X: 0, Y: l.Value}, {X: end, Y: l.Value}})
		th.Color, th.Dashes = plotColor(i+1), []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(th)
		name := fmt.Sprintf("%s %.3g", l.Name, l.Value)
		if l.Crossing != nil {
			name += " at " + span(*l.Crossing, s.Clock)
			cross, _ := plotter.NewScatter(plotter.XYs{{X: *l.Crossing, Y: l.Value}})
			cross.GlyphStyle.Shape, cross.GlyphStyle.Color, cross.GlyphStyle.Radius = draw.CrossGlyph{}, plotColor(i+1), vg.Points(5)
			p.Add(cross)
		} else {
			name += ", never crossed"
		}
		p.Legend.Add(name, th)
	}
	now, _ := plotter.NewLine(plotter.XYs{{X: s.Now, Y: 0}, {X: s.Now, Y: math.Max(top, 1e-9) * 1.05}})
	now.Color, now.Width = color.Black, vg.Points(1)
	p.Add(now)
	p.Legend.Add("now: "+span(s.Now, s.Clock), now)
	p.X.Min, p.Y.Min = 0, 0
	return p
}
