package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/memdecay/memdecay/worker"
)

// saveTunePlot draws tune --plot: misses (above) and clutter (below)
// against the half-life, one line per tier, on the earlier reads where the
// best was chosen; each tier's declared half-life is a hollow mark, its
// best a filled one.
func saveTunePlot(rep *worker.TuneReport, file string) error {
	clock := "active-hours"
	unit := "active days"
	if rep.WallClock {
		clock, unit = worker.ClockWallHours, "days"
	}
	misses := newPlot("Misses on the earlier reads: a read of a node already archived", "half-life, log scale", "misses")
	clutter := newPlot("Clutter on the earlier reads: time kept after a node's last read", "half-life, log scale", "node-"+unit)
	for _, p := range []*plot.Plot{misses, clutter} {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = logTimeTicks{clock}
		p.Legend.Top, p.Legend.Left = true, true
	}
	for i, t := range rep.Tiers {
		if len(t.Curve) == 0 || t.Reads == 0 {
			continue
		}
		mx, cx := make(plotter.XYs, len(t.Curve)), make(plotter.XYs, len(t.Curve))
		for j, pt := range t.Curve {
			mx[j] = plotter.XY{X: pt.HalfLife, Y: float64(pt.Misses)}
			cx[j] = plotter.XY{X: pt.HalfLife, Y: pt.ClutterHours / 24}
		}
		at := func(xys plotter.XYs, h float64) plotter.XY {
			for _, p := range xys {
				if p.X >= h {
					return plotter.XY{X: h, Y: p.Y}
				}
			}
			return plotter.XY{X: h, Y: xys[len(xys)-1].Y}
		}
		for _, panel := range []struct {
			p   *plot.Plot
			xys plotter.XYs
		}{{misses, mx}, {clutter, cx}} {
			line, err := plotter.NewLine(panel.xys)
			if err != nil {
				return err
			}
			line.Color, line.Width = plotColor(i), vg.Points(2)
			declared, _ := plotter.NewScatter(plotter.XYs{at(panel.xys, t.Declared)})
			declared.GlyphStyle = draw.GlyphStyle{Color: plotColor(i), Radius: vg.Points(5), Shape: draw.RingGlyph{}}
			best, _ := plotter.NewScatter(plotter.XYs{at(panel.xys, t.Best)})
			best.GlyphStyle = draw.GlyphStyle{Color: plotColor(i), Radius: vg.Points(4), Shape: draw.CircleGlyph{}}
			panel.p.Add(line, declared, best)
			panel.p.Legend.Add(fmt.Sprintf("%s: declared %s (ring), best %s (dot)", t.Tier, rep.Declared[t.Tier], bestText(rep, t)), line, best)
		}
	}
	c, err := draw.NewFormattedCanvas(figureWidth, 2*figureHeight, strings.TrimPrefix(filepath.Ext(file), "."))
	if err != nil {
		return err
	}
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadTop: vg.Points(8), PadBottom: vg.Points(8), PadLeft: vg.Points(8), PadRight: vg.Points(8), PadY: vg.Points(16)}
	canvases := plot.Align([][]*plot.Plot{{misses}, {clutter}}, tiles, draw.New(c))
	misses.Draw(canvases[0][0])
	clutter.Draw(canvases[1][0])
	return writeCanvas(c, file)
}
