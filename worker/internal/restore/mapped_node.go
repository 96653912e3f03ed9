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
	"github.com/memdecay/memdecay/worker/internal/sweepsql"
)

// tagsBack is the INSERT that puts the tag rows of the node :block back
// into the app's tag table from its archive event :event (the sweep
// removed them with it), or "" when the mapping keeps no tag table.
func (a mappedRestore) tagsBack() string {
	tg := a.Map.Nodes.Tags
	if tg == nil || tg.Table == "" {
		return ""
	}
	table := "main." + sweepsql.Ident(tg.Table)
	tag := sweepsql.SnapshotRead("json_extract(detail, '$.tags')", "fullkey")
	return `INSERT INTO ` + table + ` (` + sweepsql.Ident(tg.NodeID) + `, ` + sweepsql.Ident(tg.Tag) + `)
SELECT (SELECT k.` + a.NodeKey() + ` FROM ` + a.NodeTable() + ` k WHERE ` + a.NodeCols.AsText("k", a.NodeKey0()) + ` = :block), ` + tag + `
FROM mem_events, json_each(json_extract(detail, '$.tags'))
WHERE mem_events.id = :event
  AND NOT EXISTS (SELECT 1 FROM ` + table + ` t WHERE CAST(t.` + sweepsql.Ident(tg.NodeID) + ` AS TEXT) = :block AND t.` + sweepsql.Ident(tg.Tag) + ` IS ` + tag + `)`
}

// missingEnd is the end of the edge removed by event that the node table
// no longer holds, or "".
func (a mappedRestore) missingEnd(ctx context.Context, db *memdb.DB, event int64) (string, error) {
	if a.Map.Nodes == nil {
		return "", nil
	}
	e := a.Map.Edges
	var missing sql.NullString
	err := db.SQL.QueryRowContext(ctx, `SELECT v FROM (SELECT CAST(`+snapColumn("detail", "edge", e.From)+` AS TEXT) AS v FROM mem_events WHERE id = ?1
		UNION ALL SELECT CAST(`+snapColumn("detail", "edge", e.To)+` AS TEXT) FROM mem_events WHERE id = ?1) w
		WHERE NOT EXISTS (SELECT 1 FROM `+a.NodeTable()+` k WHERE `+a.NodeCols.AsText("k", a.NodeKey0())+` = w.v) LIMIT 1`, event).Scan(&missing)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return missing.String, err
}

// restoreBlock brings back the archived node id, and the edges removed
// with it whose other end is not archived.
func (a mappedRestore) restoreBlock(ctx context.Context, db *memdb.DB, id string, wall time.Time) (*Restored, error) {
	if a.Map.Nodes == nil {
		return nil, fmt.Errorf("restore: the mapping has no nodes")
	}
	r := &Restored{Kind: "block", ID: id, EdgesSkipped: []string{}}
	what := fmt.Sprintf("restore: block %q", id)
	var edges []int64
	var names []string
	var dependents int      // the steps that put back dependent rows
	var dependentRows int64 // the rows that went with the node
	applied, err := a.restoreTx(ctx, db, wall, what, func(q memdb.Querier, args func(...any) []any) ([]memdb.Step, error) {
		sweepID, err := archivedBlockIn(ctx, q, id, &r.FromEvent, a.NodeTable()+" b", a.NodeStatus("b"), a.NodeCols.AsText("b", a.NodeKey0()),
			sweepsql.ArchiveOf(a.Map, "block"))
		if err != nil {
			return nil, err
		}
		if a.Map.Edges != nil {
			e := a.Map.Edges
			rows, err := q.QueryContext(ctx, `SELECT id, subject_id FROM mem_events WHERE sweep_id IS :sweep AND subject_kind = 'edge'
				AND reason = 'block_archived' AND `+ownSweepEvents(a.Map, "edge", "id")+` AND :block IN (CAST(`+snapColumn("detail", "edge", e.From)+` AS TEXT),
				                                         CAST(`+snapColumn("detail", "edge", e.To)+` AS TEXT)) ORDER BY id`,
				sql.Named("sweep", sweepID), sql.Named("block", id))
			if err != nil {
				return nil, err
			}
			for rows.Next() {
				var ev int64
				var name string
				if err := rows.Scan(&ev, &name); err != nil {
					rows.Close()
					return nil, err
				}
				edges, names = append(edges, ev), append(names, name)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return nil, err
			}
		}
		block := args(sql.Named("block", id), sql.Named("id", id), sql.Named("event", r.FromEvent),
			sql.Named("kind", "block"), sql.Named("subject", id))
		archived := `EXISTS (SELECT 1 FROM ` + a.NodeTable() + ` k WHERE ` + a.NodeCols.AsText("k", a.NodeKey0()) + ` = :block AND ` + a.NodeArchived("k") + `)`
		steps := []memdb.Step{{Query: sweepsql.RestoreEvent + ` WHERE ` + archived, Args: block}}
		if tags := a.tagsBack(); tags != "" {
			steps = append(steps, memdb.Step{Query: tags + ` AND ` + archived, Args: block})
		}
		for i, ev := range edges {
			edge := args(sql.Named("block", id), sql.Named("event", ev), sql.Named("kind", "edge"), sql.Named("subject", names[i]))
			steps = append(steps, memdb.Step{Query: a.edgeBack() + ` AND ` + archived, Args: edge},
				memdb.Step{Query: sweepsql.RestoreEvent + ` WHERE changes() = 1 AND ` + archived, Args: edge})
		}
		back, gone, err := a.dependentsBack(ctx, q, sweepID, id)
		if err != nil {
			return nil, err
		}
		dependents, dependentRows = len(back), gone
		for _, insert := range back {
			steps = append(steps, memdb.Step{Query: insert + ` AND ` + archived, Args: args(sql.Named("block", id), sql.Named("sweep", sweepID))})
		}
		// The node's time of use moved by memworker, not by the app: the
		// read log (record_accesses) takes no read from it.
		return append(steps, memdb.Step{Query: ownWriteBegins}, memdb.Step{Query: a.nodeBack(), Args: block}, memdb.Step{Query: ownWriteEnds}), nil
	})
	if err != nil {
		return nil, err
	}
	if applied[len(applied)-2] == 0 {
		return nil, fmt.Errorf("%s: the memory changed while restoring; nothing was restored (try again)", what)
	}
	first := 1 // the first edge's step: after the event's, and the tags'
	if a.tagsBack() != "" {
		first = 2
	}
	for i, name := range names {
		if applied[first+2*i] == 0 {
			r.EdgesSkipped = append(r.EdgesSkipped, name)
			continue
		}
		r.Edges++
	}
	for _, n := range applied[first+2*len(names) : first+2*len(names)+dependents] {
		r.Dependents += n
	}
	r.DependentsSkipped = dependentRows - r.Dependents
	return r, nil
}

// dependentsBack are the INSERTs that put back the dependent rows that
// went with the node :block in the sweep :sweep, one per dependent table
// of the mapping, each from all that table's rows in the event log; and
// how many rows went with the node in all. A row comes back if no row
// holds its node columns already and every node they name is there and
// not archived (but the node :block, restored with it): as an edge, it
// never dangles. A row of a table no longer the mapping's stays in the log.
func (a mappedRestore) dependentsBack(ctx context.Context, q memdb.Querier, sweepID any, id string) ([]string, int64, error) {
	if len(a.Map.Nodes.Dependents) == 0 {
		return nil, 0, nil
	}
	const removed = `FROM mem_event_log WHERE sweep_id IS :sweep AND subject_kind = 'block' AND subject_id = :block AND action = 'remove_row'`
	var gone int64
	err := q.QueryRowContext(ctx, `SELECT count(*) `+removed, sql.Named("sweep", sweepID), sql.Named("block", id)).Scan(&gone)
	if err != nil || gone == 0 {
		return nil, gone, err
	}
	read := func(c string) string { return snapColumn("d", "row", c) }
	var inserts []string
	for _, d := range a.Map.Nodes.Dependents {
		cols, err := sweepsql.ReadColumns(ctx, q, d.Table)
		if err != nil {
			return nil, 0, err
		}
		names, vals := make([]string, len(cols.Names)), make([]string, len(cols.Names))
		for j, c := range cols.Names {
			names[j], vals[j] = sweepsql.Ident(c), orDefault(read(c), c, cols.Defaults)
		}
		same, linked := make([]string, len(d.Columns)), make([]string, len(d.Columns))
		for j, c := range d.Columns {
			same[j] = `x.` + sweepsql.Ident(c) + ` IS ` + read(c)
			node := `CAST(` + read(c) + ` AS TEXT)`
			linked[j] = `(` + read(c) + ` IS NULL OR ` + node + ` = :block OR EXISTS (SELECT 1 FROM ` + a.NodeTable() + ` k
      WHERE ` + a.NodeCols.AsText("k", a.NodeKey0()) + ` = ` + node + ` AND NOT ` + a.NodeArchived("k") + `))`
		}
		table := "main." + sweepsql.Ident(d.Table)
		inserts = append(inserts, `INSERT INTO `+table+` (`+strings.Join(names, ", ")+`)
SELECT `+strings.Join(vals, ",\n       ")+`
FROM (SELECT detail AS d `+removed+` AND json_extract(detail, '$.table') = `+sweepsql.Literal(d.Table)+` COLLATE NOCASE)
WHERE NOT EXISTS (SELECT 1 FROM `+table+` x WHERE `+strings.Join(same, " AND ")+`)
  AND `+strings.Join(linked, "\n  AND "))
	}
	return inserts, gone, nil
}

// ownWriteBegins and ownWriteEnds mark the writes between them as
// memworker's own, as a sweep's reinforcement marks its own.
var (
	ownWriteBegins = `INSERT OR REPLACE INTO main.mem_config (key, value) VALUES ('` + adapter.SweepReinforcing + `', 1)`
	ownWriteEnds   = `DELETE FROM main.mem_config WHERE key = '` + adapter.SweepReinforcing + `'`
)

// nodeBack makes the archived node :id active again, its archive reason
// cleared and its time of last use now, each in the column's own form.
func (a mappedRestore) nodeBack() string {
	n := a.Map.Nodes
	set := []string{sweepsql.Ident(n.Status) + " = " + activeAsBefore("block", n.Status, n.StatusActive)}
	if n.ArchiveReason != "" {
		set = append(set, sweepsql.Ident(n.ArchiveReason)+" = NULL")
	}
	if n.LastUsed != "" {
		set = append(set, sweepsql.Ident(n.LastUsed)+" = "+adapter.TimeFrom(":now", sweepsql.Ident(n.LastUsed), n.LastUsedClock))
	}
	return `UPDATE ` + a.NodeTable() + ` SET ` + strings.Join(set, ", ") + `
WHERE ` + a.NodeCols.AsText("", a.NodeKey0()) + ` = :id AND ` + sweepsql.Ident(n.Status) + ` = ` + sweepsql.Literal(n.StatusArchived)
}
