package main

import (
	"fmt"
	"image/color"
	"math"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/memdecay/memdecay/worker"
)

// curveLabel is a curve's legend entry: its name, when it falls below its
// threshold as a person reads a time, and the curve it is the same as.
func curveLabel(cv worker.Curve) string {
	s := cv.Name
	switch {
	case cv.Crossing == nil:
		s += fmt.Sprintf(": never below %.2g", cv.Threshold)
	case cv.Threshold == 0:
		s += ": reaches 0 after " + worker.HumanSpan(*cv.Crossing, cv.Clock)
	default:
		s += fmt.Sprintf(": below %.2g after %s", cv.Threshold, worker.HumanSpan(*cv.Crossing, cv.Clock))
	}
	if cv.SameAs != "" {
		s += " (same as " + cv.SameAs + ", drawn dashed over it)"
	}
	return s
}

// crossGlyphs tell the curves' crossings apart besides their colours.
var crossGlyphs = []draw.GlyphDrawer{draw.CrossGlyph{}, draw.RingGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{},
	draw.PlusGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}, draw.CircleGlyph{}}

func curvesPlot(curves []worker.Curve, clock string) (*plot.Plot, bool) {
	p := newPlot("Decay curves in use: weight left of an edge of weight 1", "time "+clockUnit(clock)+", log scale", "weight left (fraction of 1)")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = logTimeTicks{clock}
	p.Y.Min, p.Y.Max = 0, 1.05
	n := 0
	thresholds := map[float64]bool{}
	xmin, xmax := math.Inf(1), math.Inf(-1)
	for i, cv := range curves {
		if cv.Clock != clock || len(cv.Points) == 0 {
			continue
		}
		xys := make(plotter.XYs, len(cv.Points))
		for j, pt := range cv.Points {
			xys[j] = plotter.XY{X: pt[0], Y: pt[1]}
		}
		xmin, xmax = math.Min(xmin, xys[0].X), math.Max(xmax, xys[len(xys)-1].X)
		line, err := plotter.NewLine(xys)
		if err != nil {
			continue
		}
		line.Color = plotColor(i)
		line.Width = vg.Points(2)
		if cv.SameAs != "" {
			// Over the curve it repeats, dashed, so both colours show.
			line.Dashes = []vg.Length{vg.Points(6), vg.Points(6)}
		}
		p.Add(line)
		thumbs := []plot.Thumbnailer{line}
		if cv.Crossing != nil {
			cross, _ := plotter.NewScatter(plotter.XYs{{X: math.Max(*cv.Crossing, xys[0].X), Y: math.Min(cv.Threshold, 1)}})
			cross.GlyphStyle.Shape = crossGlyphs[i%len(crossGlyphs)]
			cross.GlyphStyle.Color = line.Color
			cross.GlyphStyle.Radius = vg.Points(4)
			p.Add(cross)
			thumbs = append(thumbs, cross)
		}
		p.Legend.Add(curveLabel(cv), thumbs...)
		thresholds[cv.Threshold] = true
		n++
	}
	// One grey line per threshold in use, under the curves' marks.
	for th := range thresholds {
		if th <= 0 || n == 0 {
			continue // a curve that dies at 0 meets the axis
		}
		l, _ := plotter.NewLine(plotter.XYs{{X: xmin, Y: th}, {X: xmax, Y: th}})
		l.Color, l.Dashes = color.Gray{Y: 110}, []vg.Length{vg.Points(2), vg.Points(3)}
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("threshold %.2g (each curve's mark: where it falls below its own)", th), l)
	}
	return p, n > 0
}

// timeLeftBins are the shared bins of one clock's time-left histogram:
// the bin width and, per group, the count of edges in each bin.
type timeLeftBins struct {
	width  float64
	groups []worker.TimeLeft
	counts [][]int
}

const timeLeftBinCount = 20

func binTimeLeft(groups []worker.TimeLeft, clock string) timeLeftBins {
	top := 0.0
	var b timeLeftBins
	for _, g := range groups {
		if g.Clock == clock && len(g.Values) > 0 {
			top = math.Max(top, g.Values[len(g.Values)-1]) // sorted ascending
			b.groups = append(b.groups, g)
		}
	}
	b.width = math.Max(top, 1e-9) / timeLeftBinCount
	for _, g := range b.groups {
		counts := make([]int, timeLeftBinCount)
		for _, v := range g.Values {
			counts[min(int(v/b.width), timeLeftBinCount-1)]++
		}
		b.counts = append(b.counts, counts)
	}
	return b
}

func timeLeftPlot(groups []worker.TimeLeft, clock string) (*plot.Plot, bool) {
	p := newPlot("Time left before decay, live edges (stacked by group)", "time left "+clockUnit(clock), "edges")
	p.X.Tick.Marker = linearTimeTicks{clock}
	p.Y.Tick.Marker = countTicks{}
	b := binTimeLeft(groups, clock)
	base := make([]int, timeLeftBinCount)
	for i, g := range b.groups {
		c := plotColor(i).(color.RGBA)
		var thumb plot.Thumbnailer
		for k, n := range b.counts[i] {
			if n == 0 {
				continue
			}
			x0, x1 := float64(k)*b.width, float64(k+1)*b.width
			y0, y1 := float64(base[k]), float64(base[k]+n)
			bar, err := plotter.NewPolygon(plotter.XYs{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}})
			if err != nil {
				continue
			}
			bar.Color = c
			bar.LineStyle.Color, bar.LineStyle.Width = color.White, vg.Points(0.75)
			p.Add(bar)
			thumb = bar
			base[k] += n
		}
		if thumb != nil {
			edges := "edges"
			if len(g.Values) == 1 {
				edges = "edge"
			}
			p.Legend.Add(fmt.Sprintf("%s (%d %s)", g.Group, len(g.Values), edges), thumb)
		}
	}
	top := 0
	for _, n := range base {
		top = max(top, n)
	}
	p.X.Min, p.X.Max = 0, b.width*timeLeftBinCount*1.02 // the last bar clear of the frame
	p.Y.Min, p.Y.Max = 0, float64(top)+0.5
	return p, len(b.groups) > 0
}

// removalKinds are the kinds of removal a sweep makes, stacked in this
// order in the removals chart.
var removalKinds = []struct {
	name string
	v    func(worker.SweepRemovals) int64
}{
	{"blocks archived (orphans included)", func(s worker.SweepRemovals) int64 { return s.Archived }},
	{"edges removed with their blocks", func(s worker.SweepRemovals) int64 { return s.EdgesRemovedWithBlocks }},
	{"edges pruned (static)", func(s worker.SweepRemovals) int64 { return s.EdgesPruned }},
	{"edges decayed (tiered)", func(s worker.SweepRemovals) int64 { return s.EdgesDecayed }},
	{"edges decayed by a policy", func(s worker.SweepRemovals) int64 { return s.EdgesPolicy }},
	{"facts archived or pruned", func(s worker.SweepRemovals) int64 { return s.FactsRemoved }},
}

// sweepLabel names a sweep on the removals chart's axis: its id, so no two
// are alike, and when it started.
func sweepLabel(s worker.SweepRemovals) string {
	return fmt.Sprintf("sweep %d\n%s", s.ID, time.Unix(s.StartedAt, 0).UTC().Format("2006-01-02 15:04"))
}

func sweepsPlot(sweeps []worker.SweepRemovals, now time.Time) *plot.Plot {
	p := newPlot("Removals per sweep, stacked by kind", "sweep (start, UTC)", "rows removed or archived")
	p.Y.Tick.Marker = countTicks{}
	if len(sweeps) == 0 {
		p.Title.Text += " (no sweep recorded yet)"
		p.X.Tick.Marker = plot.TimeTicks{Format: "2006-01-02", Time: plot.UTCUnixTime}
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = float64(now.Unix()-86400), float64(now.Unix()), 0, 1
		return p
	}
	// Wide bars for a few sweeps, narrower for many, never overlapping.
	width := vg.Length(math.Min(60, 400/float64(len(sweeps)))) * vg.Points(1)
	var below *plotter.BarChart
	top := 0.0
	for i, kind := range removalKinds {
		vs := make(plotter.Values, len(sweeps))
		for j, s := range sweeps {
			vs[j] = float64(kind.v(s))
		}
		bars, err := plotter.NewBarChart(vs, width)
		if err != nil {
			continue
		}
		bars.Color = plotColor(i)
		bars.LineStyle.Color, bars.LineStyle.Width = color.White, vg.Points(0.75)
		if below != nil {
			bars.StackOn(below)
		}
		p.Add(bars)
		p.Legend.Add(kind.name, bars)
		below = bars
	}
	labels := make([]string, len(sweeps))
	for j, s := range sweeps {
		labels[j] = sweepLabel(s)
		top = math.Max(top, below.BarHeight(j))
	}
	p.NominalX(labels...)
	p.Y.Min, p.Y.Max = 0, math.Max(top*1.08, 1)
	return p
}

// plotColor is the Okabe–Ito palette, readable on white and by readers with
// any common colour-vision deficiency (its yellow, too pale on white, left
// out).
func plotColor(i int) color.Color {
	palette := []color.RGBA{
		{0, 114, 178, 255}, {213, 94, 0, 255}, {0, 158, 115, 255}, {204, 121, 167, 255},
		{230, 159, 0, 255}, {86, 180, 233, 255}, {0, 0, 0, 255},
	}
	return palette[i%len(palette)]
}

// sketchAxis is explain --plot's time axis: time from now, with now stated.
func sketchAxis(s *worker.Sketch) string {
	switch s.Clock {
	case "wall":
		return fmt.Sprintf("days from now (0 = now, %s on the wall clock)", time.Unix(int64(s.At), 0).UTC().Format("2006-01-02 15:04 UTC"))
	case worker.ClockWallHours:
		return fmt.Sprintf("wall-clock hours from now (0 = now, %s)", time.Unix(int64(s.At*3600), 0).UTC().Format("2006-01-02 15:04 UTC"))
	}
	return fmt.Sprintf("active hours from now (0 = now, the clock at %.1f h)", s.At)
}

// sketchLineLabel is a threshold's legend entry: its value and when the
// curve crosses it, from now.
func sketchLineLabel(s *worker.Sketch, l worker.SketchLine) string {
	name := fmt.Sprintf("%s %.3g", l.Name, l.Value)
	switch {
	case l.Crossing == nil:
		return name + ": never crossed"
	case *l.Crossing-s.Now < 0:
		return name + ": crossed " + worker.HumanSpan(s.Now-*l.Crossing, s.Clock) + " ago"
	default:
		return name + ": crossed in " + worker.HumanSpan(*l.Crossing-s.Now, s.Clock)
	}
}

// sketchPlot draws one row's curve for explain --plot on one time axis,
// from now: the curve, now at 0, each threshold dashed with its crossing
// marked.
func sketchPlot(s *worker.Sketch) *plot.Plot {
	p := newPlot(s.Title, sketchAxis(s), s.YLabel)
	p.X.Tick.Marker = linearTimeTicks{s.Clock}
	xys := make(plotter.XYs, len(s.Points))
	top := 0.0
	for i, pt := range s.Points {
		xys[i] = plotter.XY{X: pt[0] - s.Now, Y: pt[1]}
		top = math.Max(top, pt[1])
	}
	start, end := xys[0].X, xys[len(xys)-1].X
	if line, err := plotter.NewLine(xys); err == nil {
		line.Color, line.Width = plotColor(0), vg.Points(2)
		p.Add(line)
		p.Legend.Add(s.YLabel+" (its last anchor at the left end)", line)
	}
	for i, l := range s.Lines {
		th, _ := plotter.NewLine(plotter.XYs{{X: start, Y: l.Value}, {X: end, Y: l.Value}})
		th.Color, th.Dashes = plotColor(i+1), []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(th)
		thumbs := []plot.Thumbnailer{th}
		if l.Crossing != nil {
			cross, _ := plotter.NewScatter(plotter.XYs{{X: *l.Crossing - s.Now, Y: l.Value}})
			cross.GlyphStyle.Shape, cross.GlyphStyle.Color, cross.GlyphStyle.Radius = crossGlyphs[i%len(crossGlyphs)], plotColor(i+1), vg.Points(5)
			p.Add(cross)
			thumbs = append(thumbs, cross)
		}
		p.Legend.Add(sketchLineLabel(s, l), thumbs...)
	}
	now, _ := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 0, Y: math.Max(top, 1e-9) * 1.05}})
	now.Color, now.Width = color.Black, vg.Points(1)
	p.Add(now)
	p.Legend.Add("now", now)
	p.X.Min, p.X.Max, p.Y.Min = start, end, 0
	return p
}
