package sweep

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
)

// The list of edges due soon (mem_edge_soon) holds every due row whose
// due time falls at or before its horizon, so an incremental sweep whose
// clock the horizon covers reads the edges due now from a few pages, not
// from a pass over every due row (scope_due_soon, scope_due). The refresh
// and the removals keep it. A full sweep forgets it before it rewrites the
// due rows and builds it again once they are written; an incremental sweep
// past its horizon builds it again before it plans. Each build reaches
// dueSoonHours and dueSoonSeconds past the sweep's clock.

// dueSoon is the list's horizon, mem_config's due_soon.
type dueSoon struct {
	Hours float64 `json:"hours"` // active hours
	Wall  float64 `json:"wall"`  // unix seconds
}

// How far past the clock of the sweep that builds it the list reaches: a
// day of active hours and a day of wall time, so an hourly sweep builds it
// once a day. (The longer, the more rows each sweep reads from it.)
const (
	dueSoonHours   = 24
	dueSoonSeconds = 24 * 60 * 60
)

// covers says whether the list holds every edge due by the sweep's clock.
func (d *dueSoon) covers(hours, wall float64) bool {
	return d != nil && hours+dueSlack <= d.Hours && wall+dueSlack <= d.Wall
}

// soonArgs binds the horizon to :soon_hours and :soon_wall, NULL while
// there is no list (so the refresh adds nothing to it).
func (s *sweep) soonArgs() []any {
	if s.soon == nil {
		return []any{sql.Named("soon_hours", nil), sql.Named("soon_wall", nil)}
	}
	return []any{sql.Named("soon_hours", s.soon.Hours), sql.Named("soon_wall", s.soon.Wall)}
}

// loadDueSoon reads the stored horizon; one that does not parse is none.
func (s *sweep) loadDueSoon(ctx context.Context) error {
	var text sql.NullString
	err := s.db.Querier().QueryRowContext(ctx, `SELECT value FROM main.mem_config WHERE key = 'due_soon'`).Scan(&text)
	if err == sql.ErrNoRows || (err == nil && !text.Valid) {
		s.soon = nil
		return nil
	}
	if err != nil {
		return err
	}
	var d dueSoon
	if json.Unmarshal([]byte(text.String), &d) != nil {
		s.soon = nil
		return nil
	}
	s.soon = &d
	return nil
}

// forgetDueSoon drops the list and its horizon, before a full sweep
// rewrites the due rows.
func (s *sweep) forgetDueSoon(ctx context.Context) error {
	err := s.db.InTx(ctx, func() error {
		_, err := s.db.Exec(ctx, "due_soon_forget")
		return err
	})
	if err == nil {
		s.soon = nil
	}
	return err
}

// coverDueSoon builds the list again when its horizon does not cover the
// sweep's clock, in a transaction of its own before the plan's snapshot.
func (s *sweep) coverDueSoon(ctx context.Context) error {
	hours, wall := s.clock.Hours, float64(s.clock.Wall.Unix())
	if s.soon.covers(hours, wall) {
		return nil
	}
	next := &dueSoon{Hours: hours + dueSoonHours, Wall: wall + dueSoonSeconds}
	text, err := json.Marshal(next)
	if err != nil {
		return err
	}
	old := s.soon
	s.soon = next // due_soon_build reads it (soonArgs)
	err = s.db.InTx(ctx, func() error {
		if _, err := s.db.Exec(ctx, "due_soon_build"); err != nil {
			return err
		}
		_, err := s.db.Querier().ExecContext(ctx, `INSERT INTO main.mem_config (key, value) VALUES ('due_soon', ?)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, string(text))
		return err
	})
	if err != nil {
		s.soon = old // rolled back
		return fmt.Errorf("building the list of edges due soon: %w", err)
	}
	return nil
}
