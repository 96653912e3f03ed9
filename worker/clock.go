package worker

import (
	"context"
	"database/sql"
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

// ErrClockBehind: a sweep was asked at an active hour behind the last
// sweep's (last_curate_at).
var ErrClockBehind = errors.New("the clock is behind the last sweep's")

// forSweep is the clock a sweep runs at. A clock already swept, or behind
// the last sweep's, changes nothing (docs/sweep.md): a sweep there would
// otherwise reinforce again and set last_curate_at back, and the next
// sweep ahead would archive and reinforce anew. So a clock read from
// mem_config that is behind the last sweep's (a sweep ran ahead of it,
// with --now) is taken as the last sweep's: the sweep repeats that one.
// A clock given (given: --now) behind it is refused with ErrClockBehind,
// unless forced: a forced sweep runs at it as at a new clock, archival,
// the decay cap and reinforcement included, and sets last_curate_at back
// to it, so that the next sweep at a later clock is a new one again.
func (c Clock) forSweep(cfg Config, given, force bool) (Clock, error) {
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

// lastCurate is the clock of the last sweep: ours (last), or the app's
// own where the mapping keeps one (elfmem's last_curate_at) and it is
// later, as when the app curated by itself since: a sweep behind it would
// reinforce again and set the app's clocks back.
func (a *adapted) lastCurate(ctx context.Context, q memdb.Querier, last *float64) (*float64, error) {
	if a == nil || a.m.Clock == nil || a.m.Clock.LastCurateKey == "" {
		return last, nil
	}
	c := a.m.Clock
	var app sql.NullFloat64
	err := q.QueryRowContext(ctx, appClockValue(c, "?")+` AND trim(`+ident(c.ValueColumn)+`) != '' AND typeof(`+ident(c.ValueColumn)+`) != 'blob'`,
		c.LastCurateKey).Scan(&app)
	switch {
	case errors.Is(err, sql.ErrNoRows) || (err == nil && (!app.Valid || math.IsNaN(app.Float64) || math.IsInf(app.Float64, 0))):
		return last, nil
	case err != nil:
		return nil, fmt.Errorf("mapping: clock: reading %s's %s: %w", c.Table, c.LastCurateKey, err)
	case last == nil || app.Float64 > *last:
		return &app.Float64, nil
	}
	return last, nil
}

// hours formats an active-hours reading as it was given.
func hours(h float64) string { return strconv.FormatFloat(h, 'f', -1, 64) }
