package restore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/memdecay/memdecay/worker/internal/adapter"
	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/internal/settings"
	"github.com/memdecay/memdecay/worker/internal/sweepsql"
	"github.com/memdecay/memdecay/worker/mapping"
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
	// Dependents: the app's rows that went with an archived node (a
	// mapping's dependents) put back; DependentsSkipped: those that wait
	// for another node they name, archived or gone.
	Dependents        int64  `json:"dependents_restored,omitempty"`
	DependentsSkipped int64  `json:"dependents_skipped,omitempty"`
	Warning           string `json:"warning,omitempty"`
}

// A restore refreshes anchors (last_reinforced_hours, last_active_hours,
// last_observed_at, last_accessed_at) to now, so the next sweep does not
// decay the row again at once; everything else comes back as it was, and
// the event keeps the original snapshot. An edge whose weight alone is
// below the static prune goes again unless the app raises it or pins it:
// the restore says so.
//
// A restore reads everything it decides on first, then writes in one
// transaction of statements that each repeat the condition they rely on,
// and learns after COMMIT which of them applied (readThenWrite): the same
// code runs on a file and on rqlite, whose transaction is one request
// whose reads cannot see its own writes. Each event is written before the
// row it records, under the same condition, so both or neither happen.

// restoreTx reads what a restore needs (plan) and runs the writes it
// returns, with the clock readings bound as :now and :wall.
func restoreTx(ctx context.Context, db *memdb.DB, wall time.Time, what string,
	plan func(q memdb.Querier, args func(...any) []any, cfg settings.Config) ([]memdb.Step, error)) ([]int64, error) {
	return restoreAt(ctx, db, wall, what, nil, plan)
}

// restoreAt is restoreTx through a mapping (mapped; nil for memworker's
// own tables), whose sweeps may run on the wall clock in hours or on the
// app's own clock: a restored row is anchored at that clock.
func restoreAt(ctx context.Context, db *memdb.DB, wall time.Time, what string, mapped *adapter.Adapted,
	plan func(q memdb.Querier, args func(...any) []any, cfg settings.Config) ([]memdb.Step, error)) ([]int64, error) {
	cfg, err := settings.LoadConfig(ctx, db.SQL)
	if err != nil {
		return nil, err
	}
	// The clock is active_hours, or the last sweep's clock when sweeps ran
	// ahead of it with --now.
	clock, err := settings.CommandClock(cfg, wall)
	if err != nil {
		return nil, err
	}
	now := clock.RestoreAnchor(cfg)
	if h, ok, err := mapped.Hours(ctx, db.SQL, clock.Wall); err != nil {
		return nil, err
	} else if ok {
		now = max(h, now)
	}
	args := func(extra ...any) []any {
		return append([]any{sql.Named("now", now), sql.Named("wall", clock.Wall.Unix())}, extra...)
	}
	return memdb.ReadThenWrite(ctx, db, what, func(q memdb.Querier) ([]memdb.Step, error) { return plan(q, args, cfg) })
}

// edgeCanReturn holds while the edge :from — :to is missing and each of
// its ends is an active block or the block :block restored with it.
const edgeCanReturn = `NOT EXISTS (SELECT 1 FROM mem_edges x WHERE x.from_id = :from AND x.to_id = :to)
	AND (SELECT count(*) FROM mem_blocks k WHERE k.id IN (:from, :to) AND (k.status != 'archived' OR k.id = :block)) = 2`

// RestoreEdge brings back the edge between a and b from its last removal.
//
// Through a mapping an edge is named by its key: a, or a and b for a key
// of two columns (then in the key's order).
func RestoreEdge(ctx context.Context, db *memdb.DB, a, b string, wall time.Time) (*Restored, error) {
	if mapped, err := adapter.AdaptMapping(ctx, db, false); err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	} else if mapped != nil {
		return mappedRestore{mapped}.restoreEdge(ctx, db, a, b, wall)
	}
	if a > b {
		a, b = b, a
	}
	r := &Restored{Kind: "edge", ID: fmt.Sprintf("%s %s", a, b), EdgesSkipped: []string{}}
	var pruneThreshold float64
	what := fmt.Sprintf("restore: edge %s — %s", a, b)
	applied, err := restoreTx(ctx, db, wall, what, func(q memdb.Querier, args func(...any) []any, cfg settings.Config) ([]memdb.Step, error) {
		pruneThreshold = cfg.EdgePruneThreshold
		err := q.QueryRowContext(ctx, `SELECT id FROM (`+sweepsql.LastRemoval(sweepsql.ArchiveOf(nil, "edge"), "edge", "json_array(?, ?)",
			"'decay', 'prune', 'delete'")+`)`, a, b).Scan(&r.FromEvent)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("%s: %w (no removal in mem_events)", what, ErrNothingToRestore)
		}
		if err != nil {
			return nil, err
		}
		if err := edgeRestorable(ctx, q, a, b); err != nil {
			return nil, err
		}
		if err := edgeSnapshotOf(ctx, q, what, r.FromEvent, a, b); err != nil {
			return nil, err
		}
		subject, err := jsonPair(ctx, q, a, b)
		if err != nil {
			return nil, err
		}
		back := args(sql.Named("from", a), sql.Named("to", b), sql.Named("block", nil), sql.Named("event", r.FromEvent),
			sql.Named("kind", "edge"), sql.Named("subject", subject))
		return []memdb.Step{
			{Query: sweepsql.RestoreEvent + ` WHERE ` + edgeCanReturn + ` AND ` + sweepsql.EdgeSnapshotIsSubject, Args: back},
			{Query: sweepsql.EdgeFromSnapshot + ` AND ` + edgeCanReturn, Args: back},
		}, nil
	})
	if err != nil {
		return nil, err
	}
	if applied[1] == 0 {
		// The edge came back, or an end was archived, after the reads.
		if err := edgeRestorable(ctx, db.SQL, a, b); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%s: the memory changed while restoring; nothing was restored (try again)", what)
	}
	r.Edges = 1
	var weak bool
	err = db.SQL.QueryRowContext(ctx, sweepsql.MemSQL(`SELECT STATIC_PRUNE AND NOT pinned
		FROM mem_edges WHERE from_id = :a AND to_id = :b`), sql.Named("prune_threshold", pruneThreshold), sql.Named("a", a), sql.Named("b", b)).Scan(&weak)
	if err != nil && !errors.Is(err, sql.ErrNoRows) { // gone again: removed since by someone else
		return nil, err
	}
	if weak {
		r.Warning = fmt.Sprintf("its weight is below edge_prune_threshold %v and it was never reinforced: "+
			"the next sweep prunes it again unless the app raises its weight, reinforces or pins it", pruneThreshold)
	}
	return r, nil
}

// edgeRestorable fails when the edge a — b exists or an end is not an
// active block.
func edgeRestorable(ctx context.Context, q memdb.Querier, a, b string) error {
	var exists, inactive int
	if err := q.QueryRowContext(ctx, `SELECT
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
	return nil
}

// ErrEditedEvent means an event's snapshot names another row than the
// event's subject: its record was edited, and a restore will not trust it.
var ErrEditedEvent = errors.New("the event's snapshot is of another row than its subject (edited?); nothing was restored")

// edgeSnapshotOf fails unless the snapshot of the event is of the edge
// a — b: a restore takes back only the edge it names, never ids, weights
// or flags from a record that does not match its subject.
func edgeSnapshotOf(ctx context.Context, q memdb.Querier, what string, event int64, a, b string) error {
	var from, to sql.NullString
	var ok bool
	err := q.QueryRowContext(ctx, `SELECT `+sweepsql.SnapshotRead("detail", "'$.edge.from_id'")+`, `+sweepsql.SnapshotRead("detail", "'$.edge.to_id'")+`,
		`+sweepsql.EdgeSnapshotIsSubject+` FROM mem_events WHERE id = :event`,
		sql.Named("event", event), sql.Named("from", a), sql.Named("to", b)).Scan(&from, &to, &ok)
	if err != nil {
		return fmt.Errorf("%s: event #%d: %w", what, event, err)
	}
	if !ok {
		return fmt.Errorf("%s: event #%d records the edge %s — %s: %w", what, event, snapshotID(from), snapshotID(to), ErrEditedEvent)
	}
	return nil
}

// snapshotOf fails unless the snapshot at path ('$.block' or '$.fact') of
// the event is of the row id.
func snapshotOf(ctx context.Context, q memdb.Querier, what string, event int64, path, id string) error {
	var got sql.NullString
	var ok bool
	err := q.QueryRowContext(ctx, `SELECT `+sweepsql.SnapshotRead("detail", "'"+path+".id'")+`, `+sweepsql.SnapshotRead("detail", "'"+path+".id'")+` IS :id
		FROM mem_events WHERE id = :event`, sql.Named("event", event), sql.Named("id", id)).Scan(&got, &ok)
	if err != nil {
		return fmt.Errorf("%s: event #%d: %w", what, event, err)
	}
	if !ok {
		return fmt.Errorf("%s: event #%d records %s %s: %w", what, event, strings.TrimPrefix(path, "$."), snapshotID(got), ErrEditedEvent)
	}
	return nil
}

// snapshotID quotes an id read from a snapshot for an error message.
func snapshotID(id sql.NullString) string {
	if !id.Valid {
		return "(none)"
	}
	return strconv.Quote(id.String)
}

// jsonPair is an edge's subject_id in mem_events, built by SQLite's own
// json_array so it matches the sweep's byte for byte.
func jsonPair(ctx context.Context, q memdb.Querier, a, b string) (string, error) {
	var s string
	err := q.QueryRowContext(ctx, `SELECT json_array(?, ?)`, a, b).Scan(&s)
	return s, err
}

// blockArchived holds while the block :block is archived: every write of a
// block's restore repeats it, and the block's own update comes last.
const blockArchived = `EXISTS (SELECT 1 FROM mem_blocks k WHERE k.id = :block AND k.status = 'archived')`

// RestoreBlock brings back an archived block with its tags and the edges
// removed with it (those whose other end is active).
func RestoreBlock(ctx context.Context, db *memdb.DB, id string, wall time.Time) (*Restored, error) {
	if mapped, err := adapter.AdaptMapping(ctx, db, false); err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	} else if mapped != nil {
		return mappedRestore{mapped}.restoreBlock(ctx, db, id, wall)
	}
	r := &Restored{Kind: "block", ID: id, EdgesSkipped: []string{}}
	type edgeEvent struct {
		event             int64
		from, to, subject string
	}
	var edges []edgeEvent
	what := fmt.Sprintf("restore: block %q", id)
	applied, err := restoreTx(ctx, db, wall, what, func(q memdb.Querier, args func(...any) []any, _ settings.Config) ([]memdb.Step, error) {
		sweepID, err := archivedBlock(ctx, q, id, &r.FromEvent)
		if err != nil {
			return nil, err
		}
		if err := snapshotOf(ctx, q, what, r.FromEvent, "$.block", id); err != nil {
			return nil, err
		}
		// The edges removed with the block in the same sweep, by their
		// subjects; each snapshot must be of its subject.
		rows, err := q.QueryContext(ctx, `SELECT id, from_id, to_id, subject_id FROM (
			SELECT e.id, e.subject_id, CASE WHEN json_valid(e.subject_id) THEN e.subject_id ->> '$[0]' END AS from_id,
			       CASE WHEN json_valid(e.subject_id) THEN e.subject_id ->> '$[1]' END AS to_id
			FROM mem_events e WHERE e.sweep_id IS ? AND e.subject_kind = 'edge' AND e.reason = 'block_archived')
			WHERE ? IN (from_id, to_id) ORDER BY id`, sweepID, id)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var e edgeEvent
			if err := rows.Scan(&e.event, &e.from, &e.to, &e.subject); err != nil {
				rows.Close()
				return nil, err
			}
			edges = append(edges, e)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		for _, e := range edges {
			if err := edgeSnapshotOf(ctx, q, what, e.event, e.from, e.to); err != nil {
				return nil, err
			}
		}
		block := args(sql.Named("block", id), sql.Named("id", id), sql.Named("event", r.FromEvent),
			sql.Named("kind", "block"), sql.Named("subject", id))
		steps := []memdb.Step{
			{Query: sweepsql.RestoreEvent + ` WHERE ` + blockArchived + ` AND ` + sweepsql.BlockSnapshotIsSubject, Args: block},
			{Query: sweepsql.BlockTagsFromSnapshot + ` AND ` + blockArchived, Args: block},
		}
		for _, e := range edges {
			edge := args(sql.Named("block", id), sql.Named("from", e.from), sql.Named("to", e.to), sql.Named("event", e.event),
				sql.Named("kind", "edge"), sql.Named("subject", e.subject))
			when := blockArchived + ` AND ` + edgeCanReturn
			steps = append(steps, memdb.Step{Query: sweepsql.RestoreEvent + ` WHERE ` + when + ` AND ` + sweepsql.EdgeSnapshotIsSubject, Args: edge},
				memdb.Step{Query: sweepsql.EdgeFromSnapshot + ` AND ` + when, Args: edge})
		}
		return append(steps, memdb.Step{Query: `UPDATE mem_blocks SET status = 'active', archive_reason = NULL, last_reinforced_hours = :now
			WHERE id = :id AND status = 'archived' AND ` + sweepsql.BlockSnapshotIsSubject, Args: block}), nil
	})
	if err != nil {
		return nil, err
	}
	if applied[len(applied)-1] == 0 {
		// Restored or removed by someone else after the reads.
		if _, err := archivedBlock(ctx, db.SQL, id, new(int64)); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%s: the memory changed while restoring; nothing was restored (try again)", what)
	}
	for i, e := range edges {
		if applied[2+2*i+1] == 0 {
			r.EdgesSkipped = append(r.EdgesSkipped, e.from+" — "+e.to)
			continue
		}
		r.Edges++
	}
	return r, nil
}

// archivedBlock finds the archive event of the archived block id (into
// event) and the sweep that archived it, or fails when there is nothing
// to restore.
func archivedBlock(ctx context.Context, q memdb.Querier, id string, event *int64) (sql.NullInt64, error) {
	return archivedBlockIn(ctx, q, id, event, "mem_blocks b", "b.status", "b.id", sweepsql.ArchiveOf(nil, "block"))
}

// ownSweepEvents holds for the event id of a removal in the sweep :sweep
// from the table that now plays role kind (its archive: a mapping's table,
// or memworker's own), or of the log (events written before the typed
// archives): a row goes back only to the table it left, whatever the
// mapping named since. Each is read by its index of sweeps.
func ownSweepEvents(m *mapping.Mapping, kind, id string) string {
	return id + ` IN (SELECT mem_event_id FROM ` + sweepsql.ArchiveOf(m, kind) + ` WHERE mem_sweep_id IS :sweep
		UNION ALL SELECT id FROM main.mem_event_log WHERE sweep_id IS :sweep)`
}

// archivedBlockIn is archivedBlock for the node table (aliased b) whose
// status and id, as the sweep reads them, are the expressions given, and
// whose removals are in archive (a row goes back only to the table it
// left: LastRemoval).
func archivedBlockIn(ctx context.Context, q memdb.Querier, id string, event *int64, table, statusOf, key, archive string) (sql.NullInt64, error) {
	var status string
	var sweepID sql.NullInt64
	err := q.QueryRowContext(ctx, `SELECT `+statusOf+`, e.id, e.sweep_id FROM `+table+`
		JOIN (`+sweepsql.LastRemoval(archive, "block", ":id", "'archive'")+`) e ON e.subject = `+key+`
		WHERE `+key+` = :id`, sql.Named("id", id)).Scan(&status, event, &sweepID)
	if errors.Is(err, sql.ErrNoRows) {
		return sweepID, fmt.Errorf("restore: block %q: %w (no archive event)", id, ErrNothingToRestore)
	}
	if err != nil {
		return sweepID, err
	}
	if status != "archived" {
		return sweepID, fmt.Errorf("restore: block %q is %s: %w", id, status, ErrNothingToRestore)
	}
	return sweepID, nil
}

// RestoreFact brings back an archived or pruned fact as active.
func RestoreFact(ctx context.Context, db *memdb.DB, id string, wall time.Time) (*Restored, error) {
	if mapped, err := adapter.AdaptMapping(ctx, db, false); err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	} else if mapped != nil {
		return mappedRestore{mapped}.restoreFact(ctx, db, id, wall)
	}
	r := &Restored{Kind: "fact", ID: id, EdgesSkipped: []string{}}
	what := fmt.Sprintf("restore: fact %q", id)
	applied, err := restoreTx(ctx, db, wall, what, func(q memdb.Querier, args func(...any) []any, _ settings.Config) ([]memdb.Step, error) {
		pruned, err := restorableFact(ctx, q, id, &r.FromEvent)
		if err != nil {
			return nil, err
		}
		fact := args(sql.Named("id", id), sql.Named("event", r.FromEvent), sql.Named("kind", "fact"), sql.Named("subject", id))
		if pruned {
			if err := snapshotOf(ctx, q, what, r.FromEvent, "$.fact", id); err != nil {
				return nil, err
			}
			const missing = `NOT EXISTS (SELECT 1 FROM mem_facts f WHERE f.id = :id)`
			return []memdb.Step{{Query: sweepsql.RestoreEvent + ` WHERE ` + missing + ` AND ` + sweepsql.FactSnapshotIsSubject, Args: fact},
				{Query: sweepsql.FactFromSnapshot + ` AND ` + missing, Args: fact}}, nil
		}
		const archived = `EXISTS (SELECT 1 FROM mem_facts f WHERE f.id = :id AND f.status = 'archived')`
		return []memdb.Step{{Query: sweepsql.RestoreEvent + ` WHERE ` + archived, Args: fact},
			{Query: `UPDATE mem_facts SET status = 'active', last_accessed_at = :wall WHERE id = :id AND status = 'archived'`, Args: fact}}, nil
	})
	if err != nil {
		return nil, err
	}
	if applied[1] == 0 {
		if _, err := restorableFact(ctx, db.SQL, id, new(int64)); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%s: the memory changed while restoring; nothing was restored (try again)", what)
	}
	return r, nil
}

// restorableFact finds the last archive or prune event of fact id (into
// event) and reports whether the fact was pruned (its row is gone), or
// fails when there is nothing to restore.
func restorableFact(ctx context.Context, q memdb.Querier, id string, event *int64) (pruned bool, err error) {
	var action string
	err = q.QueryRowContext(ctx, `SELECT id, action FROM (`+sweepsql.LastRemoval(sweepsql.ArchiveOf(nil, "fact"), "fact", "?",
		"'archive', 'prune'")+`)`, id).Scan(event, &action)
	if errors.Is(err, sql.ErrNoRows) {
		return false, fmt.Errorf("restore: fact %q: %w (no archive or prune event)", id, ErrNothingToRestore)
	}
	if err != nil {
		return false, err
	}
	var status sql.NullString
	err = q.QueryRowContext(ctx, `SELECT status FROM mem_facts WHERE id = ?`, id).Scan(&status)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("restore: fact %q: %w", id, err)
	case status.String != "archived":
		return false, fmt.Errorf("restore: fact %q is %s: %w", id, status.String, ErrNothingToRestore)
	}
	return false, nil
}
