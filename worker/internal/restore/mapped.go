package restore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/memdecay/memdecay/worker/internal/adapter"
	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/internal/settings"
	"github.com/memdecay/memdecay/worker/internal/sweepsql"
)

// Restore through a mapping: the removed row goes back into the app's own
// table from the snapshot its event keeps (every column as it was, the
// time of last activity set to now in the column's own form, as a restore
// of memworker's rows re-anchors them), and an archived node gets its
// active status back, reinforced now. Its statements name the app's
// tables themselves (not the sweep's views), so a restore is one
// transaction on a file and one request on rqlite.

// mappedRestore is a restore through the adapter of a mapping.
type mappedRestore struct{ *adapter.Adapted }

// restoreTx runs a restore through this mapping (restoreAt).
func (a mappedRestore) restoreTx(ctx context.Context, db *memdb.DB, wall time.Time, what string,
	plan func(q memdb.Querier, args func(...any) []any) ([]memdb.Step, error)) ([]int64, error) {
	return restoreAt(ctx, db, wall, what, a.Adapted, func(q memdb.Querier, args func(...any) []any, _ settings.Config) ([]memdb.Step, error) {
		return plan(q, args)
	})
}

// edgeSubject is how events name the edge of key a (and b, for a key of
// two columns).
func (a mappedRestore) edgeSubject(k1, k2 string) (string, []any) {
	if a.SingleKey {
		return "?", []any{k1}
	}
	return "json_array(?, ?)", []any{k1, k2}
}

// edgeBack is the INSERT that puts the edge of the event :event back into
// the app's table, when no row has its key and both ends are there, not
// archived (but the node :block, restored with it): no link dangles. A
// column NOT NULL with a default takes it where the snapshot holds NULL
// (orDefault); a restore appends AND ….
func (a mappedRestore) edgeBack() string {
	e := a.Map.Edges
	read := func(col string) string { return snapColumn("d", "edge", col) }
	cols, vals := []string{}, []string{}
	for _, c := range a.EdgeColumns {
		cols = append(cols, sweepsql.Ident(c))
		v := read(c)
		if strings.EqualFold(c, e.LastActive) {
			// Anchored now, in the column's own form; a link the app never
			// stamped comes back unstamped, as memworker's own do.
			v = `CASE WHEN ` + read(c) + ` IS NULL THEN NULL ELSE ` + adapter.TimeFrom(":now", read(c), e.LastActiveClock) + ` END`
		}
		vals = append(vals, orDefault(v, c, a.EdgeCols.Defaults))
	}
	insert := `INSERT INTO main.` + sweepsql.Ident(e.Table) + ` (` + strings.Join(cols, ", ") + `)
SELECT ` + strings.Join(vals, ",\n       ") + `
FROM (SELECT detail AS d FROM mem_events WHERE id = :event)
WHERE NOT EXISTS (SELECT 1 FROM main.` + sweepsql.Ident(e.Table) + ` x WHERE ` + a.keyOfSnapshot() + `)`
	if a.Map.Nodes == nil {
		return insert
	}
	ends := "CAST(" + read(e.From) + " AS TEXT), CAST(" + read(e.To) + " AS TEXT)"
	present := func(end string) string {
		return `EXISTS (SELECT 1 FROM ` + a.NodeTable() + ` k WHERE ` + a.NodeCols.AsText("k", a.NodeKey0()) + ` = CAST(` + read(end) + ` AS TEXT))`
	}
	return insert + `
  AND ` + present(e.From) + ` AND ` + present(e.To) + `
  AND NOT EXISTS (SELECT 1 FROM ` + a.NodeTable() + ` k WHERE ` + a.NodeCols.AsText("k", a.NodeKey0()) + ` IN (` + ends + `) AND ` + a.NodeArchived("k") + `
                  AND ` + a.NodeCols.AsText("k", a.NodeKey0()) + ` IS NOT :block)`
}

// restoreEdge brings back the edge of key k1 (k2) from its last removal.
func (a mappedRestore) restoreEdge(ctx context.Context, db *memdb.DB, k1, k2 string, wall time.Time) (*Restored, error) {
	if a.Map.Edges == nil {
		return nil, fmt.Errorf("restore: the mapping has no edges")
	}
	name := k1
	if !a.SingleKey {
		name = k1 + " " + k2
	}
	r := &Restored{Kind: "edge", ID: name, EdgesSkipped: []string{}}
	what := fmt.Sprintf("restore: edge %s", name)
	subject, subjectArgs := a.edgeSubject(k1, k2)
	applied, err := a.restoreTx(ctx, db, wall, what, func(q memdb.Querier, args func(...any) []any) ([]memdb.Step, error) {
		var named string
		err := q.QueryRowContext(ctx, `SELECT id, subject FROM (`+sweepsql.LastRemoval(sweepsql.ArchiveOf(a.Map, "edge"), "edge", subject,
			"'decay', 'prune', 'delete'")+`)`, subjectArgs...).Scan(&r.FromEvent, &named)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("%s: %w (no removal from %s in mem_events)", what, ErrNothingToRestore, a.Map.Edges.Table)
		}
		if err != nil {
			return nil, err
		}
		back := args(sql.Named("event", r.FromEvent), sql.Named("block", nil), sql.Named("kind", "edge"), sql.Named("subject", named))
		return []memdb.Step{{Query: a.edgeBack(), Args: back}, {Query: sweepsql.RestoreEvent + ` WHERE changes() = 1`, Args: back}}, nil
	})
	if err != nil {
		return nil, err
	}
	if applied[0] == 0 {
		var there bool
		if err := db.SQL.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM main.`+sweepsql.Ident(a.Map.Edges.Table)+` x WHERE `+a.keyOfSnapshot()+`)
			FROM (SELECT detail AS d FROM mem_events WHERE id = ?)`, r.FromEvent).Scan(&there); err != nil {
			return nil, err
		}
		if there {
			return nil, fmt.Errorf("%s exists already: %w", what, ErrNothingToRestore)
		}
		if missing, err := a.missingEnd(ctx, db, r.FromEvent); err != nil {
			return nil, err
		} else if missing != "" {
			return nil, fmt.Errorf("%s: its end %s is no longer in %s; nothing was restored (a link without its node would dangle)", what, missing, a.Map.Nodes.Table)
		}
		return nil, fmt.Errorf("%s: an end is archived; restore the node first (memworker restore --block ID)", what)
	}
	r.Edges = 1
	if r.Warning, err = a.weakWarning(ctx, db, r.FromEvent); err != nil {
		return nil, err
	}
	return r, nil
}

// weakWarning says, as a restore of memworker's own edges does, when the
// edge restored from event is one the next sweep prunes again: a weight
// below edge_prune_threshold, never reinforced, not pinned.
func (a mappedRestore) weakWarning(ctx context.Context, db *memdb.DB, event int64) (string, error) {
	cfg, err := settings.LoadConfig(ctx, db.SQL)
	if err != nil {
		return "", err
	}
	e := a.Map.Edges
	part := func(col, def string) string {
		if col == "" {
			return def
		}
		return snapColumn("detail", "edge", col)
	}
	weight := adapter.EdgeWeight(e, func(col string) string { return part(col, "") })
	var weak bool
	err = db.SQL.QueryRowContext(ctx, `SELECT coalesce(`+weight+` < ? AND `+part(e.Reinforcement, "0")+` = 0 AND NOT `+part(e.Pinned, "0")+`, 0)
		FROM mem_events WHERE id = ?`, cfg.EdgePruneThreshold, event).Scan(&weak)
	if err != nil || !weak {
		return "", err
	}
	return fmt.Sprintf("its weight is below edge_prune_threshold %v and it was never reinforced: "+
		"the next sweep prunes it again unless the app raises its weight, reinforces or pins it", cfg.EdgePruneThreshold), nil
}

// keyOfSnapshot holds for the row x of the edge table whose key is the
// key in the snapshot of the event detail d.
func (a mappedRestore) keyOfSnapshot() string {
	var same []string
	for _, k := range a.Map.Edges.Key {
		same = append(same, "x."+sweepsql.Ident(k)+" IS "+snapColumn("d", "edge", k))
	}
	return strings.Join(same, " AND ")
}

// restoreFact brings back the fact id from its last archive or prune:
// an archived fact active again, a pruned one inserted back from its
// snapshot, every column as it was, active, its last access now.
func (a mappedRestore) restoreFact(ctx context.Context, db *memdb.DB, id string, wall time.Time) (*Restored, error) {
	f := a.Map.Facts
	if f == nil {
		return nil, fmt.Errorf("restore: the mapping has no facts")
	}
	r := &Restored{Kind: "fact", ID: id, EdgesSkipped: []string{}}
	what := fmt.Sprintf("restore: fact %q", id)
	table := "main." + sweepsql.Ident(f.Table)
	keyText := func(alias string) string { return a.FactCols.AsText(alias, f.Key[0]) }
	active := activeAsBefore("fact", f.Status, f.StatusActive)
	accessed := func(old string) string { return adapter.TimeFrom(":wall / 3600.0", old, f.LastAccessClock) }
	applied, err := a.restoreTx(ctx, db, wall, what, func(q memdb.Querier, args func(...any) []any) ([]memdb.Step, error) {
		var action string
		err := q.QueryRowContext(ctx, `SELECT id, action FROM (`+sweepsql.LastRemoval(sweepsql.ArchiveOf(a.Map, "fact"), "fact", "?",
			"'archive', 'prune'")+`)`, id).Scan(&r.FromEvent, &action)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("%s: %w (no archive or prune event)", what, ErrNothingToRestore)
		}
		if err != nil {
			return nil, err
		}
		var status sql.NullString
		err = q.QueryRowContext(ctx, `SELECT `+a.FactStatus("f")+` FROM `+table+` f WHERE `+keyText("f")+` = ?`, id).Scan(&status)
		fact := args(sql.Named("id", id), sql.Named("event", r.FromEvent), sql.Named("kind", "fact"), sql.Named("subject", id))
		switch {
		case errors.Is(err, sql.ErrNoRows): // pruned: back from its snapshot
			read := func(col string) string { return snapColumn("d", "fact", col) }
			cols, vals := []string{}, []string{}
			for _, c := range a.FactColumns {
				v := read(c)
				switch {
				case strings.EqualFold(c, f.Status):
					v = active
				case strings.EqualFold(c, f.LastAccess):
					v = accessed(read(c))
				}
				cols, vals = append(cols, sweepsql.Ident(c)), append(vals, orDefault(v, c, a.FactCols.Defaults))
			}
			back := `INSERT INTO ` + table + ` (` + strings.Join(cols, ", ") + `)
SELECT ` + strings.Join(vals, ",\n       ") + `
FROM (SELECT detail AS d FROM mem_events WHERE id = :event)
WHERE NOT EXISTS (SELECT 1 FROM ` + table + ` x WHERE ` + keyText("x") + ` = :id)`
			return []memdb.Step{{Query: back, Args: fact}, {Query: sweepsql.RestoreEvent + ` WHERE changes() = 1`, Args: fact}}, nil
		case err != nil:
			return nil, err
		case status.String != "archived":
			return nil, fmt.Errorf("%s is %s: %w", what, status.String, ErrNothingToRestore)
		}
		set := sweepsql.Ident(f.Status) + ` = ` + active
		if f.LastAccess != "" {
			set += `, ` + sweepsql.Ident(f.LastAccess) + ` = ` + accessed(sweepsql.Ident(f.LastAccess))
		}
		return []memdb.Step{{Query: `UPDATE ` + table + ` SET ` + set + ` WHERE ` + keyText("") + ` = :id AND ` + sweepsql.Ident(f.Status) + ` = ` + sweepsql.Literal(f.StatusArchived), Args: fact},
			{Query: sweepsql.RestoreEvent + ` WHERE changes() = 1`, Args: fact}}, nil
	})
	if err != nil {
		return nil, err
	}
	if applied[0] == 0 {
		return nil, fmt.Errorf("%s: the memory changed while restoring; nothing was restored (try again)", what)
	}
	return r, nil
}

// snapPath is the JSON path of column col in the snapshot of an event's
// role ("edge", "block", "fact"), its name quoted: a column may be named
// a.b or x[0].
func snapPath(role, col string) string {
	return sweepsql.Literal(`$.` + role + `."` + col + `"`)
}

// snapColumn is the value of column col in the snapshot of an event's role
// in the event detail doc, as the row held it. A JSON path cannot name a
// key that holds a double quote, so such a column is found by its key.
func snapColumn(doc, role, col string) string {
	if !strings.Contains(col, `"`) {
		return sweepsql.SnapshotRead(doc, snapPath(role, col))
	}
	one := `(SELECT json_object('v', json(CASE WHEN type IN ('object', 'array') THEN value ELSE json_quote(value) END))
	  FROM json_each(` + doc + `, '$.` + role + `') WHERE key = ` + sweepsql.Literal(col) + `)`
	return sweepsql.SnapshotRead(one, `'$.v'`)
}

// orDefault is v, or the default of the column col where it is NOT NULL
// with a default (defaults: readColumns') and v is NULL: a column the app
// added after the row was removed.
func orDefault(v, col string, defaults map[string]string) string {
	if def, ok := defaults[strings.ToLower(col)]; ok {
		return "coalesce(" + v + ", (" + def + "))"
	}
	return v
}

// activeAsBefore is the active status a restore writes: the one the row
// had when it was removed (its event :event's snapshot), when that is one
// of the values meaning active, else the first of them.
func activeAsBefore(role, status string, active []string) string {
	active = sweepsql.StatusValues(active, "active")
	return `coalesce((SELECT v FROM (SELECT ` + snapColumn("detail", role, status) + ` AS v FROM mem_events WHERE id = :event)
	WHERE v IN (` + sweepsql.SQLList(active) + `)), ` + sweepsql.Literal(active[0]) + `)`
}
