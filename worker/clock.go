package worker

import (
	"fmt"
	"math"
	"time"
)

// Clock is the "now" every decision is taken at: the active-hours clock
// (edges, blocks, policies on active hours) and the wall clock (facts,
// policies on the wall clock, event times). Sweeps, explain, restore and
// feedback all take it from pickClock, so they can never disagree on it.
type Clock struct {
	Hours float64   // active hours
	Wall  time.Time // wall time
}

// pickClock chooses the clock: the hours given (a sweep's --now) or else
// mem_config's active_hours, and the wall time given (--wall-now) or else
// mem_config's wall_clock when set, or else the machine's (the views'
// mem_clock picks it the same way).
func pickClock(cfg Config, hours *float64, wall *time.Time) (Clock, error) {
	c := Clock{Hours: cfg.ActiveHours, Wall: time.Now()}
	if cfg.WallClock != nil {
		c.Wall = *cfg.WallClock
	}
	if hours != nil {
		c.Hours = *hours
	}
	if wall != nil {
		c.Wall = *wall
	}
	return c, finiteHours(c.Hours)
}

// finiteHours refuses an active-hours reading no formula takes.
func finiteHours(h float64) error {
	if math.IsNaN(h) || math.IsInf(h, 0) {
		return fmt.Errorf("clock %v is not a finite number", h)
	}
	return nil
}

// restoreAnchor is the active hour a restored row is anchored at: the
// clock, or the last sweep's when sweeps ran ahead of it (--now), so the
// next sweep does not decay the row again at once.
func (c Clock) restoreAnchor(cfg Config) float64 {
	if cfg.LastCurateAt != nil {
		return max(c.Hours, *cfg.LastCurateAt)
	}
	return c.Hours
}
