package adapter

import (
	"context"
	"strings"

	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/internal/sweepsql"
)

// FactStatus is the fact row alias's status as a sweep reads it: active,
// confirmed, archived or other.
func (a *Adapted) FactStatus(alias string) string {
	f := a.Map.Facts
	st := alias + "." + sweepsql.Ident(f.Status)
	return `CASE WHEN ` + st + ` IN (` + sweepsql.SQLList(sweepsql.StatusValues(f.StatusActive, "active")) + `) THEN 'active' WHEN ` + st + ` IN (` +
		sweepsql.SQLList(sweepsql.StatusValues(f.StatusConfirmed, "confirmed")) +
		`) THEN 'confirmed' WHEN ` + st + ` = ` + sweepsql.Literal(f.StatusArchived) + ` THEN 'archived' ELSE 'other' END`
}

// StatusCounts are status's queries of the app's rows: each role's rows
// by status (into blocks and facts), and the edges' count.
func (a *Adapted) StatusCounts(blocks, facts map[string]int) (map[string]map[string]int, string) {
	counts := map[string]map[string]int{}
	if a.Map.Nodes != nil {
		counts[`SELECT `+a.NodeStatus("b")+`, count(*) FROM `+a.NodeTable()+` b GROUP BY 1`] = blocks
	}
	if a.Map.Facts != nil {
		counts[`SELECT `+a.FactStatus("f")+`, count(*) FROM main.`+sweepsql.Ident(a.Map.Facts.Table)+` f GROUP BY 1`] = facts
	}
	edges := "SELECT 0"
	if a.Map.Edges != nil {
		edges = "SELECT count(*) FROM main." + sweepsql.Ident(a.Map.Edges.Table)
	}
	return counts, edges
}

// NodeTable, nodeKey and nodeKey0 name the app's node table and key
// column (quoted, and as the mapping has it).
func (a *Adapted) NodeTable() string { return "main." + sweepsql.Ident(a.Map.Nodes.Table) }
func (a *Adapted) NodeKey() string   { return sweepsql.Ident(a.Map.Nodes.Key[0]) }
func (a *Adapted) NodeKey0() string  { return a.Map.Nodes.Key[0] }

// NodeStatus is the node row alias's status as a sweep reads it: active,
// archived or inbox (any other value).
func (a *Adapted) NodeStatus(alias string) string {
	n := a.Map.Nodes
	col := alias + "." + sweepsql.Ident(n.Status)
	return `CASE WHEN ` + col + ` IN (` + sweepsql.SQLList(sweepsql.StatusValues(n.StatusActive, "active")) + `) THEN 'active' WHEN ` + col + ` = ` +
		sweepsql.Literal(n.StatusArchived) + ` THEN 'archived' ELSE 'inbox' END`
}

// NodeArchived holds for a node row alias the mapping calls archived.
func (a *Adapted) NodeArchived(alias string) string {
	return alias + "." + sweepsql.Ident(a.Map.Nodes.Status) + " = " + sweepsql.Literal(a.Map.Nodes.StatusArchived)
}

// AppNames names, in a bad row's problem, the app's own table and column
// where the sweep's rules name memworker's (weight is text → links.strength
// is text); the problem as it is for memworker's own tables.
func (a *Adapted) AppNames(kind, problem string) string {
	if a == nil {
		return problem
	}
	var table string
	var parts [][2]string
	switch m := a.Map; {
	case kind == "edge" && m.Edges != nil:
		e := m.Edges
		table = e.Table
		parts = [][2]string{{"from", e.From}, {"to", e.To}, {"weight", e.Weight}, {"reinforcement_count", e.Reinforcement}, {"relation_type", e.Kind},
			{"last_active_hours", e.LastActive}, {"last_observed_at", e.LastObserved}, {"pinned", e.Pinned}, {"excluded", e.Excluded}}
	case kind == "block" && m.Nodes != nil:
		n := m.Nodes
		table = n.Table
		parts = [][2]string{{"last_reinforced_hours", n.LastUsed}, {"confidence", n.Confidence}, {"reinforcement_count", n.Reinforcement},
			{"id", n.Key[0]}}
	case kind == "fact" && m.Facts != nil:
		f := m.Facts
		table = f.Table
		parts = [][2]string{{"importance", f.Importance}, {"decay_rate", f.DecayRate}, {"access_count", f.AccessCount},
			{"last_accessed_at", f.LastAccess}, {"created_at", f.CreatedAt}, {"tier", f.Tier}, {"id", f.Key[0]}}
	}
	for _, p := range parts {
		if rest, ok := strings.CutPrefix(problem, p[0]+" is "); ok && p[1] != "" {
			return table + "." + p[1] + " is " + rest
		}
	}
	return problem
}

// TableOf is the app's table a row of kind (block, edge or fact) is in;
// "" for memworker's own tables.
func (a *Adapted) TableOf(kind string) string {
	switch m := a.mapping(); {
	case m == nil:
	case kind == "block" && m.Nodes != nil:
		return m.Nodes.Table
	case kind == "edge" && m.Edges != nil:
		return m.Edges.Table
	case kind == "fact" && m.Facts != nil:
		return m.Facts.Table
	}
	return ""
}

// ThroughMapping runs read with the tables named as the database's mapping
// names them: memworker's own, or the app's through the adapter's temp
// views, made on the connection read is given and dropped after (on a
// file; on rqlite, which keeps no temp view across requests, read's
// queries carry the views as common table expressions: readOnly).
func ThroughMapping(ctx context.Context, db *memdb.DB, read func(q memdb.Querier, tables *sweepsql.Dialect) error) error {
	a, err := AdaptMapping(ctx, db, false)
	if err != nil || a == nil {
		if err != nil {
			return err
		}
		return read(db.SQL, sweepsql.MemTables)
	}
	return a.readThrough(ctx, db, nil, nil, func(q memdb.Querier) error { return read(q, a.Tables) })
}

// factWrites are the SET clauses of the facts view's UPDATE trigger: the
// status a sweep archives by, and what fact feedback writes (importance,
// access count, time of last access, each where the app has the column;
// the time in the column's own form).
// factUpdate is fact feedback's change written to the app's facts table
// itself, not through the view's trigger (on rqlite, which keeps no
// view's trigger across requests): importance :after, and when reset the
// access count up by one and the time of last access :now (unix seconds)
// in the column's own form, on the row of key :id; the caller appends its
// condition (AND …).
func (a *Adapted) FactUpdate(reset bool) string {
	f := a.Map.Facts
	var set []string
	if f.Importance != "" {
		set = append(set, sweepsql.Ident(f.Importance)+` = :after`)
	}
	if reset && f.AccessCount != "" {
		set = append(set, sweepsql.Ident(f.AccessCount)+` = coalesce(`+sweepsql.Ident(f.AccessCount)+`, 0) + 1`)
	}
	if reset && f.LastAccess != "" {
		set = append(set, sweepsql.Ident(f.LastAccess)+` = `+timeLike(":now / 3600.0", sweepsql.Ident(f.LastAccess), a.lastAccessForm, f.LastAccessClock))
	}
	if len(set) == 0 { // a recall with nothing to write: the event alone
		set = append(set, sweepsql.Ident(f.Key[0])+` = `+sweepsql.Ident(f.Key[0]))
	}
	return `UPDATE ` + a.table(f.Table) + ` SET ` + strings.Join(set, ", ") + ` WHERE ` + a.FactCols.ByText("", f.Key[0]) + ` = :id`
}
