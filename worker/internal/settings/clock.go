package settings

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/memdecay/memdecay/worker/internal/memdb"
)

// Clock is the "now" every decision is taken at: the active-hours clock
// (edges, blocks, policies on active hours) and the wall clock (facts,
// policies on the wall clock, event times). Sweeps, explain, restore and
// feedback all take it from pickClock, so they can never disagree on it.
type Clock struct {
	Hours float64   // active hours
	Wall  time.Time // wall time
}

// PickClock chooses the clock: the hours given (a sweep's --now) or else
// mem_config's active_hours, and the wall time given (--wall-now) or else
// mem_config's wall_clock when set, or else the machine's (the views'
// mem_clock picks it the same way).
func PickClock(cfg Config, hours *float64, wall *time.Time) (Clock, error) {
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
	return c, FiniteHours(c.Hours)
}

// FiniteHours refuses an active-hours reading no formula takes.
func FiniteHours(h float64) error {
	if math.IsNaN(h) || math.IsInf(h, 0) {
		return fmt.Errorf("clock %v is not a finite number", h)
	}
	return nil
}

// RestoreAnchor is the active hour a restored row is anchored at: the
// clock, or the last sweep's when sweeps ran ahead of it (--now), so the
// next sweep does not decay the row again at once.
func (c Clock) RestoreAnchor(cfg Config) float64 {
	if cfg.LastCurateAt != nil {
		return max(c.Hours, *cfg.LastCurateAt)
	}
	return c.Hours
}

// ErrClockBehind: a sweep was asked at an active hour behind the last
// sweep's (last_curate_at).
var ErrClockBehind = errors.New("the clock is behind the last sweep's")

// ForSweep is the clock a sweep runs at. A clock already swept, or behind
// the last sweep's, changes nothing (docs/sweep.md): a sweep there would
// otherwise reinforce again and set last_curate_at back, and the next
// sweep ahead would archive and reinforce anew. So a clock read from
// mem_config that is behind the last sweep's (a sweep ran ahead of it,
// with --now) is taken as the last sweep's: the sweep repeats that one.
// A clock given (given: --now) behind it is refused with ErrClockBehind,
// unless forced: a forced sweep runs at it as at a new clock, archival,
// the decay cap and reinforcement included, and sets last_curate_at back
// to it, so that the next sweep at a later clock is a new one again.
func (c Clock) ForSweep(cfg Config, given, force bool) (Clock, error) {
	last := cfg.LastCurateAt
	if last == nil || c.Hours >= *last || force {
		return c, nil
	}
	if given {
		return c, fmt.Errorf("%w: active hour %s, last sweep at %s (last_curate_at); "+
			"a sweep there would reinforce again and set that clock back", ErrClockBehind, hours(c.Hours), hours(*last))
	}
	c.Hours = *last
	return c, nil
}

// hours formats an active-hours reading as it was given.
func hours(h float64) string { return strconv.FormatFloat(h, 'f', -1, 64) }

// CommandClock is the clock of a command that takes no clock of its own
// (explain, fact feedback and recall, restore): pickClock's choice, with
// machine as the machine's reading (a test stops it). A wall_clock pinned
// in mem_config wins over the machine, as it does for sweeps and views.
func CommandClock(cfg Config, machine time.Time) (Clock, error) {
	if cfg.WallClock != nil {
		return PickClock(cfg, nil, nil)
	}
	return PickClock(cfg, nil, &machine)
}

// CommandWall is commandClock's wall time, read from db's settings.
func CommandWall(ctx context.Context, db *memdb.DB, machine time.Time) (time.Time, error) {
	cfg, err := LoadConfig(ctx, db.SQL)
	if err != nil {
		return time.Time{}, err
	}
	c, err := CommandClock(cfg, machine)
	return c.Wall, err
}
