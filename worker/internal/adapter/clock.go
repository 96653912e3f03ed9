package adapter

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/internal/settings"
	"github.com/memdecay/memdecay/worker/internal/sweepsql"
	"github.com/memdecay/memdecay/worker/mapping"
)

// Hours is the sweep's hour clock through a mapping when no --now is
// given: unix time in hours for a mapping of wall times, the app's own
// active-hours clock where it keeps one; ok is false for neither (the
// clock in mem_config).
func (a *Adapted) Hours(ctx context.Context, q memdb.Querier, wall time.Time) (h float64, ok bool, err error) {
	switch {
	case a == nil:
		return 0, false, nil
	case a.WallHours:
		return float64(wall.Unix()) / 3600, true, nil
	case a.Map.Clock != nil:
		c := a.Map.Clock
		var v sql.NullFloat64
		err := q.QueryRowContext(ctx, appClockValue(c, "?"), c.ActiveHoursKey).Scan(&v)
		if errors.Is(err, sql.ErrNoRows) || (err == nil && !v.Valid) {
			return 0, false, fmt.Errorf("mapping: clock: %s has no %s = %q row holding the active hours", c.Table, c.KeyColumn, c.ActiveHoursKey)
		}
		return v.Float64, err == nil, err
	}
	return 0, false, nil
}

// appClockValue is the query of the value of key (an SQL expression) in
// the app's own clock table, as a number.
func appClockValue(c *mapping.Clock, key string) string {
	return `SELECT CAST(` + sweepsql.Ident(c.ValueColumn) + ` AS REAL) FROM main.` + sweepsql.Ident(c.Table) + ` WHERE ` + sweepsql.Ident(c.KeyColumn) + ` = ` + key
}

// RecordCurate writes the sweep's clock where the app keeps the time of
// its last sweep (elfmem's last_curate_at), in the sweep's last
// transaction.
func (a *Adapted) RecordCurate(ctx context.Context, q memdb.Querier, hours float64) error {
	if a == nil || a.Map.Clock == nil || a.Map.Clock.LastCurateKey == "" {
		return nil
	}
	c := a.Map.Clock
	// One statement (a replica's transaction cannot read its own writes);
	// the key column is unique (checked with the mapping).
	_, err := q.ExecContext(ctx, `INSERT INTO `+a.table(c.Table)+` (`+sweepsql.Ident(c.KeyColumn)+`, `+sweepsql.Ident(c.ValueColumn)+`) VALUES (?, ?)
		ON CONFLICT (`+sweepsql.Ident(c.KeyColumn)+`) DO UPDATE SET `+sweepsql.Ident(c.ValueColumn)+` = excluded.`+sweepsql.Ident(c.ValueColumn),
		c.LastCurateKey, strconv.FormatFloat(hours, 'f', -1, 64))
	return err
}

// SweepConfig is mem_config with the clock a sweep through the database's
// mapping runs on (the wall clock in hours, at wall or the pinned
// wall_clock, or the app's own clock), so "a sweep is due" and "hours
// since the last sweep" read alike for status, run --when-due and the
// sweep; mapped is nil for memworker's own tables.
func SweepConfig(ctx context.Context, db *memdb.DB, wall time.Time) (cfg settings.Config, mapped *Adapted, err error) {
	if cfg, err = settings.LoadConfig(ctx, db.SQL); err != nil {
		return cfg, nil, err
	}
	if mapped, err = AdaptMapping(ctx, db, db.Rqlite); err != nil {
		return cfg, nil, err
	}
	clock, err := settings.CommandClock(cfg, wall) // a pinned wall_clock wins over wall
	if err != nil {
		return cfg, nil, err
	}
	if h, ok, err := mapped.Hours(ctx, db.SQL, clock.Wall); err != nil {
		return cfg, nil, err
	} else if ok {
		cfg.ActiveHours = h
	}
	return cfg, mapped, nil
}

// LastCurate is the clock of the last sweep: ours (last), or the app's
// own where the mapping keeps one (elfmem's last_curate_at) and it is
// later, as when the app curated by itself since: a sweep behind it would
// reinforce again and set the app's clocks back.
func (a *Adapted) LastCurate(ctx context.Context, q memdb.Querier, last *float64) (*float64, error) {
	if a == nil || a.Map.Clock == nil || a.Map.Clock.LastCurateKey == "" {
		return last, nil
	}
	c := a.Map.Clock
	var app sql.NullFloat64
	err := q.QueryRowContext(ctx, appClockValue(c, "?")+` AND trim(`+sweepsql.Ident(c.ValueColumn)+`) != '' AND typeof(`+sweepsql.Ident(c.ValueColumn)+`) != 'blob'`,
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
