package worker

import (
	"context"
	"database/sql"
	"encoding/json"

	"github.com/memdecay/memdecay/worker/internal/adapter"
)

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
func edgeOutlook(ctx context.Context, db *DB, limit int) ([]EdgeOutlook, error) {
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
