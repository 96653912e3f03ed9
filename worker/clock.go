package worker

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"

	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/internal/sweepsql"
)

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
