package worker

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// ErrNothingToRestore means the event log holds no removal to undo.
var ErrNothingToRestore = errors.New("nothing to restore")

// Restored says what a restore brought back.
type Restored struct {
	Kind         string   `json:"kind"`
	ID           string   `json:"id"`
	FromEvent    int64    `json:"from_event"`
	Edges        int64    `json:"edges_restored"`
	EdgesSkipped []string `json:"edges_skipped"`
	Warning      string   `json:"warning,omitempty"`
}

// A restore refreshes anchors (last_reinforced_hours, last_active_hours,
// last_observed_at, last_accessed_at) to now, so the next sweep does not
// decay the row again at once; everything else comes back as it was, and
// the event keeps the original snapshot. An edge whose weight alone is
// below the static prune goes again unless the app raises it or pins it:
// the restore says so.

// restoreTx runs f in a write transaction with the clock readings bound.
func restoreTx(ctx context.Context, db *DB, wall time.Time, f func(tx *sql.Tx, args func(...any) []any, cfg Config) error) error {
	cfg, err := LoadConfig(ctx, db.SQL)
	if err != nil {
		return err
	}
	tx, err := db.SQL.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// The clock is active_hours, or the last sweep's clock when sweeps ran
	// ahead of it with --now.
	clock, err := pickClock(cfg, nil, &wall)
	if err != nil {
		return err
	}
	now := clock.restoreAnchor(cfg)
	args := func(extra ...any) []any {
		return append([]any{sql.Named("now", now), sql.Named("wall", clock.Wall.Unix())}, extra...)
	}
	if err := f(tx, args, cfg); err != nil {
		return err
	}
	return tx.Commit()
}

// RestoreEdge brings back the edge between a and b from its last removal.
func RestoreEdge(ctx context.Context, db *DB, a, b string, wall time.Time) (*Restored, error) {
	if a > b {
		a, b = b, a
	}
	r := &Restored{Kind: "edge", ID: fmt.Sprintf("%s %s", a, b), EdgesSkipped: []string{}}
	err := restoreTx(ctx, db, wall, func(tx *sql.Tx, args func(...any) []any, cfg Config) error {
		pruneThreshold := cfg.EdgePruneThreshold
		err := tx.QueryRowContext(ctx, `SELECT id FROM mem_events WHERE subject_kind = 'edge' AND subject_id = json_array(?, ?)
			AND action IN ('decay', 'prune', 'delete') ORDER BY id DESC LIMIT 1`, a, b).Scan(&r.FromEvent)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("restore: edge %s — %s: %w (no removal in mem_events)", a, b, ErrNothingToRestore)
		}
		if err != nil {
			return err
		}
		var exists, inactive int
		if err := tx.QueryRowContext(ctx, `SELECT
			(SELECT count(*) FROM mem_edges WHERE from_id = ? AND to_id = ?),
			(SELECT count(*) FROM (SELECT ? AS id UNION SELECT ?) x WHERE NOT EXISTS
				(SELECT 1 FROM mem_blocks k WHERE k.id = x.id AND k.status != 'archived'))`, a, b, a, b).Scan(&exists, &inactive); err != nil {
			return err
		}
		switch {
		case exists > 0:
			return fmt.Errorf("restore: edge %s — %s exists already: %w", a, b, ErrNothingToRestore)
		case inactive > 0:
			return fmt.Errorf("restore: edge %s — %s: an end is archived or missing; restore the block first (memworker restore --block ID)", a, b)
		}
		if _, err := tx.ExecContext(ctx, edgeFromSnapshot, args(sql.Named("event", r.FromEvent))...); err != nil {
			return fmt.Errorf("restore: edge %s — %s: %w", a, b, err)
		}
		r.Edges = 1
		var weak bool
		if err := tx.QueryRowContext(ctx, macros.Replace(`SELECT STATIC_PRUNE AND NOT pinned
			FROM mem_edges WHERE from_id = :a AND to_id = :b`), sql.Named("prune_threshold", pruneThreshold), sql.Named("a", a), sql.Named("b", b)).Scan(&weak); err != nil {
			return err
		}
		if weak {
			r.Warning = fmt.Sprintf("its weight is below edge_prune_threshold %v and it was never reinforced: "+
				"the next sweep prunes it again unless the app raises its weight, reinforces or pins it", pruneThreshold)
		}
		subject, err := jsonPair(ctx, tx, a, b)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, restoreEvent, args(sql.Named("kind", "edge"), sql.Named("subject", subject), sql.Named("event", r.FromEvent))...)
		return err
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// jsonPair is an edge's subject_id in mem_events, built by SQLite's own
// json_array so it matches the sweep's byte for byte.
func jsonPair(ctx context.Context, tx *sql.Tx, a, b string) (string, error) {
	var s string
	err := tx.QueryRowContext(ctx, `SELECT json_array(?, ?)`, a, b).Scan(&s)
	return s, err
}

// RestoreBlock brings back an archived block with its tags and the edges
// removed with it (those whose other end is active).
func RestoreBlock(ctx context.Context, db *DB, id string, wall time.Time) (*Restored, error) {
	r := &Restored{Kind: "block", ID: id, EdgesSkipped: []string{}}
	err := restoreTx(ctx, db, wall, func(tx *sql.Tx, args func(...any) []any, _ Config) error {
		var status string
		var sweepID sql.NullInt64
		err := tx.QueryRowContext(ctx, `SELECT b.status, e.id, e.sweep_id FROM mem_blocks b
			JOIN mem_events e ON e.subject_kind = 'block' AND e.subject_id = b.id AND e.action = 'archive'
			WHERE b.id = ? ORDER BY e.id DESC LIMIT 1`, id).Scan(&status, &r.FromEvent, &sweepID)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("restore: block %q: %w (no archive event)", id, ErrNothingToRestore)
		}
		if err != nil {
			return err
		}
		if status != "archived" {
			return fmt.Errorf("restore: block %q is %s: %w", id, status, ErrNothingToRestore)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE mem_blocks SET status = 'active', archive_reason = NULL, last_reinforced_hours = :now
			WHERE id = :id`, args(sql.Named("id", id))...); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, blockTagsFromSnapshot, sql.Named("id", id), sql.Named("event", r.FromEvent)); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, restoreEvent, args(sql.Named("kind", "block"), sql.Named("subject", id), sql.Named("event", r.FromEvent))...); err != nil {
			return err
		}
		// The edges removed with the block in the same sweep.
		rows, err := tx.QueryContext(ctx, `SELECT e.id, json_extract(e.detail, '$.edge.from_id'), json_extract(e.detail, '$.edge.to_id')
			FROM mem_events e WHERE e.sweep_id IS ? AND e.subject_kind = 'edge' AND e.reason = 'block_archived'
			AND ? IN (json_extract(e.detail, '$.edge.from_id'), json_extract(e.detail, '$.edge.to_id')) ORDER BY e.id`, sweepID, id)
		if err != nil {
			return err
		}
		type edgeEvent struct {
			event    int64
			from, to string
		}
		var edges []edgeEvent
		for rows.Next() {
			var e edgeEvent
			if err := rows.Scan(&e.event, &e.from, &e.to); err != nil {
				rows.Close()
				return err
			}
			edges = append(edges, e)
		}
		rows.Close()
		for _, e := range edges {
			res, err := tx.ExecContext(ctx, edgeFromSnapshot+`
				WHERE NOT EXISTS (SELECT 1 FROM mem_edges WHERE from_id = :from AND to_id = :to)
				AND (SELECT count(*) FROM mem_blocks WHERE id IN (:from, :to) AND status != 'archived') = 2`,
				args(sql.Named("event", e.event), sql.Named("from", e.from), sql.Named("to", e.to))...)
			if err != nil {
				return err
			}
			n, err := res.RowsAffected()
			if err != nil {
				return err // rqlite: known only at COMMIT, too late to decide on
			}
			if n == 0 {
				r.EdgesSkipped = append(r.EdgesSkipped, e.from+" — "+e.to)
				continue
			}
			r.Edges++
			subject, err := jsonPair(ctx, tx, e.from, e.to)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, restoreEvent, args(sql.Named("kind", "edge"), sql.Named("subject", subject),
				sql.Named("event", e.event))...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// RestoreFact brings back an archived or pruned fact as active.
func RestoreFact(ctx context.Context, db *DB, id string, wall time.Time) (*Restored, error) {
	r := &Restored{Kind: "fact", ID: id, EdgesSkipped: []string{}}
	err := restoreTx(ctx, db, wall, func(tx *sql.Tx, args func(...any) []any, _ Config) error {
		var action string
		err := tx.QueryRowContext(ctx, `SELECT id, action FROM mem_events WHERE subject_kind = 'fact' AND subject_id = ?
			AND action IN ('archive', 'prune') ORDER BY id DESC LIMIT 1`, id).Scan(&r.FromEvent, &action)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("restore: fact %q: %w (no archive or prune event)", id, ErrNothingToRestore)
		}
		if err != nil {
			return err
		}
		var status sql.NullString
		err = tx.QueryRowContext(ctx, `SELECT status FROM mem_facts WHERE id = ?`, id).Scan(&status)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			_, err = tx.ExecContext(ctx, factFromSnapshot, args(sql.Named("event", r.FromEvent))...)
		case err != nil:
		case status.String == "archived":
			_, err = tx.ExecContext(ctx, `UPDATE mem_facts SET status = 'active', last_accessed_at = :wall WHERE id = :id`,
				args(sql.Named("id", id))...)
		default:
			return fmt.Errorf("restore: fact %q is %s: %w", id, status.String, ErrNothingToRestore)
		}
		if err != nil {
			return fmt.Errorf("restore: fact %q: %w", id, err)
		}
		_, err = tx.ExecContext(ctx, restoreEvent, args(sql.Named("kind", "fact"), sql.Named("subject", id), sql.Named("event", r.FromEvent))...)
		return err
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}
