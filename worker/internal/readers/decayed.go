package readers

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/memdecay/memdecay/worker/internal/adapter"
	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/internal/sweepsql"
)

// DecayEvent is one removal from mem_events.
type DecayEvent struct {
	ID         int64   `json:"id"`
	SweepID    *int64  `json:"sweep_id"`
	At         int64   `json:"at"`
	ClockHours float64 `json:"clock_hours"`
	Kind       string  `json:"subject_kind"`
	Subject    string  `json:"subject_id"`
	Action     string  `json:"action"`
	Reason     string  `json:"reason"`
}

// MarshalJSON writes an edge's subject_id as the JSON array of its two
// block ids it is stored as, so a reader need not decode a string again.
func (e DecayEvent) MarshalJSON() ([]byte, error) {
	type plain DecayEvent
	from, to, ok := e.EdgeEnds()
	if !ok {
		return json.Marshal(plain(e))
	}
	return json.Marshal(struct {
		plain
		Subject []string `json:"subject_id"`
	}{plain(e), []string{from, to}})
}

// EdgeEnds are the two block ids of an edge event's subject (stored as a
// JSON array); ok is false for any other event.
func (e DecayEvent) EdgeEnds() (from, to string, ok bool) {
	var ids []string
	if e.Kind != "edge" || json.Unmarshal([]byte(e.Subject), &ids) != nil || len(ids) != 2 {
		return "", "", false
	}
	return ids[0], ids[1], true
}

// EdgeOutlook is an edge close to its decay horizon, as
// mem_edges_effective has it: the time left on its own clock (active hours,
// or days on the wall clock), and in hours either way.
type EdgeOutlook struct {
	From            string  `json:"from"`
	To              string  `json:"to"`
	Weight          float64 `json:"weight"`
	EffectiveWeight float64 `json:"effective_weight"`
	Clock           string  `json:"clock"`
	TimeLeft        float64 `json:"time_left"`
	HoursLeft       float64 `json:"hours_left"` // active hours, or the wall clock's days × 24
	// Key: through a mapping, the app's key of the link (From and To are
	// its ends).
	Key string `json:"key,omitempty"`
}

// Decayed lists recent removals and the edges nearest their horizon, every
// model and clock together (a wall-clock day counted as 24 hours); through
// a mapping, the app's removals and links.
func Decayed(ctx context.Context, db *memdb.DB, limit int) ([]DecayEvent, []EdgeOutlook, error) {
	events := []DecayEvent{}
	archives, err := sweepsql.ReadArchives(ctx, db.SQL)
	if err != nil {
		return nil, nil, fmt.Errorf("decayed: %w", err)
	}
	rows, err := db.SQL.QueryContext(ctx, sweepsql.LatestRemovals(archives), sql.Named("limit", limit))
	if err != nil {
		return nil, nil, err
	}
	for rows.Next() {
		var e DecayEvent
		var sweep sql.NullInt64
		if err := rows.Scan(&e.ID, &sweep, &e.At, &e.ClockHours, &e.Kind, &e.Subject, &e.Action, &e.Reason); err != nil {
			rows.Close()
			return nil, nil, err
		}
		if sweep.Valid {
			e.SweepID = &sweep.Int64
		}
		events = append(events, e)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	soon, err := edgeOutlook(ctx, db, limit)
	if err != nil {
		return nil, nil, fmt.Errorf("decayed: %w", err)
	}
	return events, soon, nil
}

// linkKey is a link's key as the app holds it, to name it to a person: the
// column's value, or the JSON array of a key of two columns (k2 not "").
func linkKey(k1, k2 string) string {
	if k2 == "" {
		return k1
	}
	pair, _ := json.Marshal([]string{k1, k2}) // strings always marshal
	return string(pair)
}

// edgeOutlook is the edges closest to their decay horizon, as the
// effective view has them (excluded edges have decayed already, softly:
// not "closest to decay"); through a mapping an edge is named by its ends
// and its key.
func edgeOutlook(ctx context.Context, db *memdb.DB, limit int) ([]EdgeOutlook, error) {
	soon := []EdgeOutlook{}
	err := adapter.WithEffectiveViews(ctx, db, func(r adapter.ViewsReader) error {
		q, view, mapped := r.Q, r.Effective, r.Mapped
		ends, key := "from_id, to_id, '', ''", ""
		if mapped {
			ends, key = "end_a, end_b, from_id, to_id", ", from_id, to_id"
		}
		rows, err := q.QueryContext(ctx, `SELECT `+ends+`, weight, effective_weight, clock, time_left,
		       CASE clock WHEN 'wall' THEN time_left * 24 ELSE time_left END AS hours
		FROM `+view+` WHERE time_left IS NOT NULL AND NOT excluded ORDER BY hours`+key+`, 1, 2 LIMIT ?`, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var o EdgeOutlook
			var k1, k2 sql.NullString
			if err := rows.Scan(&o.From, &o.To, &k1, &k2, &o.Weight, &o.EffectiveWeight, &o.Clock, &o.TimeLeft, &o.HoursLeft); err != nil {
				return err
			}
			if mapped {
				o.Key = linkKey(k1.String, k2.String)
			}
			soon = append(soon, o)
		}
		return rows.Err()
	})
	return soon, err
}
