package memdb

import (
	"context"
	"database/sql"
)

// QueryAll scans every row of a query into a slice (never nil, so JSON
// shows [] rather than null).
func QueryAll[T any](ctx context.Context, q Querier, query string, scan func(*sql.Rows, *T) error) ([]T, error) {
	rows, err := q.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		var v T
		if err := scan(rows, &v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
