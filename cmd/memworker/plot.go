package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
				for _, clock := range []string{"active_hours", worker.ClockWallHours, "wall"} {
					if p, ok := im.draw(clock); ok {
						if err := savePlot(c, p, im.name+"-"+clock+"."+format); err != nil {
							return err
						}
					}
				}
			}
			return savePlot(c, sweepsPlot(data.Sweeps, time.Now()), "removals."+format)
		},
	})
}

func savePlot(c *cli.Context, p *plot.Plot, name string) error {
	path := filepath.Join(c.String("out"), name)
	if err := saveFigure(p, path); err != nil {
		return fmt.Errorf("plot: writing %s: %w", path, err)
	}
	fmt.Fprintln(c.App.Writer, path)
	return nil
}

// Figure size: the plot area, and the legend's strip below it.
const (
	figureWidth  = 8 * vg.Inch
	figureHeight = 5 * vg.Inch
)

// saveFigure writes p to file (its name says the format) with its legend
// below the plot, outside its data area: no entry covers a curve or a bar
// and none is clipped, however long; the image grows by the legend's
// height.
func saveFigure(p *plot.Plot, file string) error {
	legend := p.Legend
	p.Legend = plot.NewLegend()
	legend.Top, legend.Left = true, true
	pad := vg.Points(10)
	strip := legend.Rectangle(draw.Canvas{}).Size().Y
	if strip > 0 {
		strip += 2 * pad
	}
	c, err := draw.NewFormattedCanvas(figureWidth, figureHeight+strip, strings.TrimPrefix(filepath.Ext(file), "."))
	if err != nil {
		return err
	}
	dc := draw.New(c)
	p.Draw(draw.Crop(dc, 0, 0, strip, 0))
	if strip > 0 {
		legend.Draw(draw.Crop(dc, 4*pad, -pad, pad, -(figureHeight + pad)))
	}
	return writeCanvas(c, file)
}

// writeCanvas writes a drawn canvas to file.
func writeCanvas(c io.WriterTo, file string) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := c.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// clockUnit names the clock a time axis runs on (its ticks say the unit).
func clockUnit(clock string) string {
	switch clock {
	case "wall":
		return "on the wall clock"
	case worker.ClockWallHours:
		return "in wall-clock hours (the mapping's times are wall times)"
	}
	return "on the active-hours clock (24 active hours make a day)"
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Add(plotter.NewGrid())
	return p
}

// hoursPer is how many hours one unit of a clock's time is.
func hoursPer(clock string) float64 {
	if clock == "wall" {
		return 24
	}
	return 1
}

// logTimeTicks labels a log-scaled time axis at times a person knows (an
// hour, a day, a week, a year), with a minor tick at each power of ten.
type logTimeTicks struct{ clock string }

func (t logTimeTicks) Ticks(lo, hi float64) []plot.Tick {
	marks := []struct {
		hours float64
		label string
	}{{1.0 / 60, "1 min"}, {10.0 / 60, "10 min"}, {1, "1 h"}, {6, "6 h"}, {24, "1 day"}, {168, "1 week"}, {720, "30 days"},
		{8760, "1 year"}, {87600, "10 years"}, {876000, "100 years"}, {8760000, "1000 years"}}
	var ticks []plot.Tick
	for _, m := range marks {
		if v := m.hours / hoursPer(t.clock); v >= lo && v <= hi {
			ticks = append(ticks, plot.Tick{Value: v, Label: m.label})
		}
	}
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		if v := math.Pow(10, e); v >= lo && v <= hi {
			ticks = append(ticks, plot.Tick{Value: v})
		}
	}
	return ticks
}

// linearTimeTicks labels a linear time axis in the unit that suits its
// span (minutes, hours, days or years), each label with its unit.
type linearTimeTicks struct{ clock string }

func (t linearTimeTicks) Ticks(lo, hi float64) []plot.Tick {
	per := hoursPer(t.clock)
	unit, size := "min", 1.0/60
	for _, u := range []struct {
		name  string
		hours float64
	}{{"h", 1}, {"days", 24}, {"years", 8760}} {
		if (hi-lo)*per >= 3*u.hours {
			unit, size = u.name, u.hours
		}
	}
	scale := size / per // clock units per label unit
	ticks := niceTicks(lo/scale, hi/scale)
	for i := range ticks {
		ticks[i].Value *= scale
		if ticks[i].Label != "" {
			ticks[i].Label = strings.Replace(ticks[i].Label, "-", "−", 1) + " " + unit
		}
	}
	return ticks
}

// niceTicks labels [lo, hi] at the multiples of one round step (1, 2 or 5
// times a power of ten) that give 3 to 7 labels, with a minor tick between
// each two.
func niceTicks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return []plot.Tick{{Value: lo, Label: strconv.FormatFloat(lo, 'g', 4, 64)}}
	}
	mag := math.Pow(10, math.Floor(math.Log10((hi-lo)/3)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if (hi-lo)/(m*mag) <= 7 {
			step = m * mag
			break
		}
	}
	var ticks []plot.Tick
	for k := math.Ceil(lo / step * 2); k/2*step <= hi; k++ {
		v := k / 2 * step
		if v == 0 {
			v = 0 // not −0
		}
		if math.Mod(k, 2) != 0 {
			ticks = append(ticks, plot.Tick{Value: v})
			continue
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(math.Round(v/step)*step+0, 'g', 6, 64)})
	}
	return ticks
}

// countTicks labels a count axis with whole numbers only.
type countTicks struct{}

func (countTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := niceTicks(lo, hi)
	for i := range ticks {
		if ticks[i].Value != math.Trunc(ticks[i].Value) {
			ticks[i].Label = ""
		}
	}
	return ticks
}
